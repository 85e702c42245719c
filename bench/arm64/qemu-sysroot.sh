#!/bin/sh
# bench/arm64/qemu-sysroot.sh: Debian's arm64 QEMU (qemu-system-arm:arm64,
# 7.2) and every library it needs, unpacked into build/arm64-sysroot/root,
# so that bench/arm64/peers.sh's qemu-file configuration can run it in the
# arm64 test host (which has no Debian userland: the program runs through
# the sysroot's own dynamic loader, root/lib/ld-linux-aarch64.so.1
# --library-path ..., with -L root/usr/share/qemu).
#
# The packages: qemu-system-arm:arm64 and its recursive Depends (not
# Recommends), fetched by name with apt-get download (arm64 must be a
# dpkg architecture: dpkg --add-architecture arm64), through guest/'s
# private apt configuration where it exists (build/guest/apt/apt.conf,
# which has the arm64 indexes), else the system's.  Nothing is installed
# on this host: dpkg-deb -x only.  Checked here with qemu-aarch64-static:
# `qemu-system-aarch64 --version` answers 7.2.22.
#
# bench/arm64/qemu-sysroot.sh 10: QEMU 10.0 from Debian 12's backports,
# into build/arm64-sysroot10/root, every package at its backports version
# where it has one (APT::Default-Release), through the test host's
# private apt configuration (build/testhost/apt, made by
# tests/testhost/emulator.sh), which lists the backports; its indexes
# are updated first, so that they have arm64's.
set -eu
REPO=$(cd "$(dirname "$0")/../.." && pwd)
S=$REPO/build/arm64-sysroot
REL=
if [ "${1:-}" = 10 ]; then
	S=$REPO/build/arm64-sysroot10
	codename=$(. /etc/os-release && printf '%s' "$VERSION_CODENAME")
	REL="-o APT::Default-Release=$codename-backports"
	[ -f "$REPO/build/testhost/apt/apt.conf" ] || "$REPO/tests/testhost/emulator.sh" >/dev/null
	export APT_CONFIG=$REPO/build/testhost/apt/apt.conf
	apt-get -q update >/dev/null
elif [ -f "$REPO/build/guest/apt/apt.conf" ]; then
	export APT_CONFIG=$REPO/build/guest/apt/apt.conf
fi
mkdir -p "$S/debs" "$S/root"
# shellcheck disable=SC2086 # REL: options, split
apt-cache $REL depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances qemu-system-arm:arm64 |
	grep -v -e '^ ' -e '^<' | sed 's/:arm64$//' | sort -u >"$S/names.txt"
: >"$S/failed.txt"
cd "$S/debs"
for p in $(cat "$S/names.txt"); do
	ls "${p}"_*.deb >/dev/null 2>&1 && continue
	# An arm64 package by name, else (Architecture: all) the plain name.
	# shellcheck disable=SC2086
	apt-get -q $REL download "$p:arm64" >/dev/null 2>&1 ||
		apt-get -q $REL download "$p" >/dev/null 2>&1 ||
		echo "$p" >>"$S/failed.txt"
done
for d in "$S"/debs/*.deb; do
	dpkg-deb -x "$d" "$S/root"
done
echo "qemu-sysroot: $(ls "$S/debs" | wc -l) packages in $S/root; not fetched: $(cat "$S/failed.txt" | xargs)"
if command -v qemu-aarch64-static >/dev/null; then
	qemu-aarch64-static "$S/root/lib/ld-linux-aarch64.so.1" \
		--library-path "$S/root/lib/aarch64-linux-gnu:$S/root/usr/lib/aarch64-linux-gnu" \
		"$S/root/usr/bin/qemu-system-aarch64" --version | head -n 1
fi
