#!/usr/bin/env bash
# Builds the container image Lockstep members run in, with no registry: a jlink runtime of the host's JDK 17, the
# host libraries it links against, /etc/passwd and /tmp, imported as lockstep-node:<tag>. The tag is a hash of the
# JDK's version and the module list, so the image is rebuilt only when the JDK changes; application jars are not in
# it (the test kit copies them into each container at creation). Prints the image name. About 45 MB, 5 s.
set -euo pipefail

JDK=${LOCKSTEP_IMAGE_JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
MODULES=java.base,java.compiler,java.logging,java.management,jdk.management,java.naming,jdk.naming.dns,jdk.unsupported,jdk.httpserver

command -v docker >/dev/null || { echo "build-node-image: docker not found" >&2; exit 2; }
[ -x "$JDK/bin/jlink" ] || { echo "build-node-image: no jlink in $JDK (set LOCKSTEP_IMAGE_JDK)" >&2; exit 2; }

tag=$(printf '%s\n%s\n' "$("$JDK/bin/java" -version 2>&1)" "$MODULES" | sha256sum | cut -c1-12)
name="lockstep-node:$tag"
if docker image inspect "$name" >/dev/null 2>&1; then
  echo "$name"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
"$JDK/bin/jlink" --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages --compress=2 \
  --output "$root/opt/jre" >&2
# Every library the runtime's binaries and libraries link against, and the dynamic loader itself.
find "$root/opt/jre" -type f \( -name '*.so' -o -perm -u+x \) -print0 |
  xargs -0 -n 1 ldd 2>/dev/null |
  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u |
  while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
mkdir -p "$root/etc" "$root/tmp" "$root/app/lib" "$root/data"
chmod 1777 "$root/tmp"
echo 'root:x:0:0:root:/root:/bin/false' > "$root/etc/passwd"
echo 'hosts: files dns' > "$root/etc/nsswitch.conf"
tar -C "$root" -c . | docker import --change 'ENTRYPOINT ["/opt/jre/bin/java"]' --change 'LABEL lockstep=node' \
  - "$name" >&2
echo "$name"
