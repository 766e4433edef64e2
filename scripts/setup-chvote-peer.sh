#!/usr/bin/env bash
# Builds the CHVote proof of concept (Java + GMP through jnagmp) outside the repository, for
# `make bench-chvote` (shared/reference/chvote-peer.md): only its service and arithmetic packages,
# with a throw-away Maven POM, against the Maven Central artifacts it was written for.
#   CHVOTE_POC_SRC    a checkout of republique-et-canton-de-geneve/chvote-protocol-poc (required)
#   CHVOTE_POC_BUILD  where to build (default: $TMPDIR/votum-chvote-poc); never inside the repository
# Prints nothing and exits 0 when the build is there already.
set -euo pipefail
log() { printf '\033[1m[setup-chvote-peer]\033[0m %s\n' "$*" >&2; }
build="${CHVOTE_POC_BUILD:-${TMPDIR:-/tmp}/votum-chvote-poc}"
if [ -f "$build/target/classes/ch/ge/ve/protopoc/service/simulation/Simulation.class" ]; then
  exit 0
fi
src="${CHVOTE_POC_SRC:?set CHVOTE_POC_SRC to a checkout of the CHVote proof of concept}"
[ -d "$src/src/main/java/ch/ge/ve/protopoc/service" ] || { log "$src is not the proof of concept"; exit 2; }
command -v mvn >/dev/null && command -v java >/dev/null || {
  log "installing maven and a JDK"; apt-get update -qq && apt-get install -y -qq maven default-jdk-headless >/dev/null; }
rm -rf "$build"
mkdir -p "$build/src/main/java/ch/ge/ve/protopoc" "$build/src/main/resources"
cp -r "$src/src/main/java/ch/ge/ve/protopoc/service" "$src/src/main/java/ch/ge/ve/protopoc/arithmetic" \
  "$build/src/main/java/ch/ge/ve/protopoc/"
cp "$src/src/main/resources/logback.xml" "$build/src/main/resources/"
cat > "$build/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>scratch</groupId><artifactId>chvote-poc-simulation</artifactId><version>1</version>
  <properties><maven.compiler.source>1.8</maven.compiler.source><maven.compiler.target>1.8</maven.compiler.target>
  <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies>
    <dependency><groupId>com.google.guava</groupId><artifactId>guava</artifactId><version>19.0</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>1.7.21</version></dependency>
    <dependency><groupId>ch.qos.logback</groupId><artifactId>logback-classic</artifactId><version>1.1.7</version></dependency>
    <dependency><groupId>com.squareup.jnagmp</groupId><artifactId>jnagmp</artifactId><version>2.0.0</version></dependency>
    <dependency><groupId>net.java.dev.jna</groupId><artifactId>jna</artifactId><version>4.0.0</version></dependency>
    <dependency><groupId>org.bouncycastle</groupId><artifactId>bcprov-jdk15on</artifactId><version>1.55</version></dependency>
  </dependencies>
</project>
POM
log "building the proof of concept in $build"
(cd "$build" && mvn -q -B package dependency:copy-dependencies -DoutputDirectory=target/lib)
log "ready"
