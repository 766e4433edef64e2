#!/usr/bin/env bash
# Builds egk-ec's verifier (JohnLCaron/egk-ec, Kotlin, ElectionGuard "provisional 2.1") with Maven in a
# scratch folder outside the repository, for `make bench-eg2` (issue 44). Nothing of egk-ec enters the
# repository: its src/main and its bundled Verificatum vecj jar are taken from a git directory, and the
# pom below names its Maven Central dependencies at the versions of its gradle/libs.versions.toml.
#
#   EGK_GIT   the git directory of egk-ec (default: the tool library's mirror)
#   EGK_DIR   where to build (default /tmp/votum-egk-ec); prints the classpath RunVerifier runs with
set -euo pipefail
EGK_GIT=${EGK_GIT:-/work/.mirror/JohnLCaron+egk-ec/repo}
OUT=${EGK_DIR:-/tmp/votum-egk-ec}
if [ -f "$OUT/classpath" ] && [ -f "$OUT/target/egk-ec.jar" ]; then
  echo "$OUT/target/egk-ec.jar:$(cat "$OUT/classpath")"; exit 0
fi
for tool in git mvn java; do
  command -v "$tool" >/dev/null || { echo "build-egk-ec: $tool is needed" >&2; exit 2; }
done
rm -rf "$OUT" && mkdir -p "$OUT"
git -C "$EGK_GIT" archive HEAD src/main libs | tar -x -C "$OUT"
cat > "$OUT/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>scratch</groupId><artifactId>egk-ec</artifactId><version>2.0ec</version>
  <properties>
    <kotlin.version>2.1.10</kotlin.version>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>org.jetbrains.kotlin</groupId><artifactId>kotlin-stdlib</artifactId><version>${kotlin.version}</version></dependency>
    <dependency><groupId>com.michael-bull.kotlin-result</groupId><artifactId>kotlin-result-jvm</artifactId><version>1.1.18</version></dependency>
    <dependency><groupId>org.jetbrains.kotlinx</groupId><artifactId>kotlinx-cli-jvm</artifactId><version>0.3.6</version></dependency>
    <dependency><groupId>org.jetbrains.kotlinx</groupId><artifactId>kotlinx-coroutines-core-jvm</artifactId><version>1.9.0</version></dependency>
    <dependency><groupId>org.jetbrains.kotlinx</groupId><artifactId>kotlinx-datetime-jvm</artifactId><version>0.5.0</version></dependency>
    <dependency><groupId>org.jetbrains.kotlinx</groupId><artifactId>kotlinx-serialization-json-jvm</artifactId><version>1.6.2</version></dependency>
    <dependency><groupId>io.github.oshai</groupId><artifactId>kotlin-logging-jvm</artifactId><version>6.0.3</version></dependency>
    <dependency><groupId>ch.qos.logback</groupId><artifactId>logback-classic</artifactId><version>1.4.14</version></dependency>
    <dependency><groupId>com.verificatum</groupId><artifactId>vecj</artifactId><version>2.2.0</version>
      <scope>system</scope><systemPath>${project.basedir}/libs/verificatum-vecj-2.2.0.jar</systemPath></dependency>
  </dependencies>
  <build>
    <sourceDirectory>src/main/kotlin</sourceDirectory>
    <finalName>egk-ec</finalName>
    <plugins>
      <plugin>
        <groupId>org.jetbrains.kotlin</groupId><artifactId>kotlin-maven-plugin</artifactId><version>${kotlin.version}</version>
        <executions><execution><id>compile</id><goals><goal>compile</goal></goals></execution></executions>
        <configuration><jvmTarget>17</jvmTarget><compilerPlugins><plugin>kotlinx-serialization</plugin></compilerPlugins></configuration>
        <dependencies><dependency><groupId>org.jetbrains.kotlin</groupId><artifactId>kotlin-maven-serialization</artifactId><version>${kotlin.version}</version></dependency></dependencies>
      </plugin>
    </plugins>
  </build>
</project>
POM
(cd "$OUT" && mvn -q -B package -DskipTests > build.log 2>&1 &&
  mvn -q -B dependency:build-classpath -Dmdep.outputFile=classpath >> build.log 2>&1) || {
  tail -30 "$OUT/build.log" >&2; exit 1; }
echo "$OUT/target/egk-ec.jar:$(cat "$OUT/classpath"):$OUT/libs/verificatum-vecj-2.2.0.jar"
