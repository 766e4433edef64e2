#!/usr/bin/env bash
# Builds Verificatum's own verifier `vmnv` (VMN 3.1.0, pure Java) from the public sources
# verificatum/verificatum-vcr and verificatum/verificatum-vmn, in a scratch folder outside the
# repository, for `make bench-other-records` (issue 41). Nothing of VMN enters the repository.
#
#   VCR_GIT, VMN_GIT  git directories of the two repositories (default: the tool library's mirrors)
#   VMNV_DIR          where to build (default /tmp/votum-vmnv); prints the command that runs vmnv
set -euo pipefail
VCR_GIT=${VCR_GIT:-/work/.mirror/verificatum+verificatum-vcr/repo}
VMN_GIT=${VMN_GIT:-/work/.mirror/verificatum+verificatum-vmn/repo}
OUT=${VMNV_DIR:-/tmp/votum-vmnv}
if [ -x "$OUT/vmnv" ] && [ -f "$OUT/vmn.jar" ]; then
  echo "$OUT/vmnv"; exit 0
fi
for tool in git javac java m4; do
  command -v "$tool" >/dev/null || { echo "build-vmnv: $tool is needed" >&2; exit 2; }
done
rm -rf "$OUT" && mkdir -p "$OUT/vcr" "$OUT/vmn" "$OUT/classes"
git -C "$VCR_GIT" archive HEAD | tar -x -C "$OUT/vcr"
git -C "$VMN_GIT" archive HEAD | tar -x -C "$OUT/vmn"
# the .magic files are Java run through m4 (pure Java: no native VMGJ/VECJ libraries)
for src in "$OUT"/vcr "$OUT"/vmn; do
  while IFS= read -r magic; do
    cat "$OUT/vcr/src/m4/preprocessing.m4" "$magic" | m4 > "${magic%.magic}.java"
  done < <(find "$src/src/java" -name '*.magic')
done
find "$OUT/vcr/src/java" "$OUT/vmn/src/java" -name '*.java' | grep -v '/tests/' > "$OUT/sources.txt"
javac -nowarn -encoding UTF-8 -d "$OUT/classes" @"$OUT/sources.txt" > "$OUT/javac.log" 2>&1 || {
  tail -20 "$OUT/javac.log" >&2; exit 1; }
find "$OUT/vcr/src/java" "$OUT/vmn/src/java" -name '*.txt' | while IFS= read -r f; do
  rel=${f#"$OUT"/vcr/src/java/}; rel=${rel#"$OUT"/vmn/src/java/}
  mkdir -p "$OUT/classes/$(dirname "$rel")" && cp "$f" "$OUT/classes/$rel"
done
# VMN reads its version from the jar's manifest (main attributes: every package of the jar)
version=$(cd "$OUT/vcr" && printf 'VCR_VERSION_STRING' | cat .macros.m4 - | m4)
printf 'Manifest-Version: 1.0\nSpecification-Version: %s\nImplementation-Version: %s\n' \
  "$version" "$version" > "$OUT/manifest"
jar cfm "$OUT/vmn.jar" "$OUT/manifest" -C "$OUT/classes" .
# VMN's random source (its verifier draws nothing secret from it, but insists on one)
java -cp "$OUT/vmn.jar" com.verificatum.ui.gen.GeneratorTool vog : "$OUT/random" "$OUT/seed" \
  -rndinit RandomDevice /dev/urandom > /dev/null
cat > "$OUT/vmnv" <<SH
#!/bin/sh
# VMN 3.1.0's verifier, built by votum's scripts/build-vmnv.sh
exec java -server -Djava.security.egd=file:/dev/./urandom -cp "$OUT/vmn.jar" \\
  com.verificatum.protocol.mixnet.MixNetElGamalVerifyFiatShamirTool vmnv "$OUT/random" "$OUT/seed" "\$@"
SH
chmod +x "$OUT/vmnv"
echo "$OUT/vmnv"
