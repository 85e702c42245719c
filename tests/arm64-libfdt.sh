#!/bin/sh
# tests/arm64-libfdt.sh DIR: libfdt's headers and static library for
# arm64 in DIR, for `make ARCH=arm64`.  Debian's libfdt-dev cannot be
# installed for two architectures at once (it is not Multi-Arch: same),
# and the x86 build's unit tests need the amd64 one: so the arm64
# package is fetched by name and unpacked here (apt-get download needs
# `dpkg --add-architecture arm64` and an apt-get update; tests/deps.sh
# does both).
set -eu
dir=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
(cd "$t" && apt-get download -q libfdt-dev:arm64 >/dev/null) || {
	echo "arm64-libfdt: apt-get download libfdt-dev:arm64 failed" >&2
	exit 1
}
dpkg-deb -x "$t"/libfdt-dev_*_arm64.deb "$t/x"
mkdir -p "$dir"
cp "$t"/x/usr/include/*.h "$t"/x/usr/lib/aarch64-linux-gnu/libfdt.a "$dir"/
