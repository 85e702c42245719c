#!/bin/sh
# tests/arm64-unit.sh LIBDIR BIN...: the unit tests cross-built for arm64
# (make ARCH=arm64 unit), run in the arm64 test host, whose real arm64
# kernel has what QEMU's user mode lacks (io_uring, seccomp, thread
# placement).  The test host has no arm64 libraries of its own: the
# binaries' loader and shared libraries (cmocka has no static library in
# Debian) are copied into LIBDIR, in the checkout, and the tests run
# through that loader (tests/run-unit.sh's UNIT_RUNNER).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lib=$1
shift
mkdir -p "$lib"
# Every library the binaries name, from Debian's arm64 and cross folders.
need=$(for b in "$@"; do
	aarch64-linux-gnu-readelf -d "$b" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'
done | sort -u)
for n in ld-linux-aarch64.so.1 $need; do
	found=
	for d in /usr/aarch64-linux-gnu/lib /usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu; do
		if [ -e "$d/$n" ]; then
			cp -L "$d/$n" "$lib/$n"
			found=1
			break
		fi
	done
	[ -n "$found" ] || { echo "arm64-unit: no arm64 $n here" >&2; exit 1; }
done
exec env TESTHOST_ARCH=arm64 "$here/testhost/run.sh" \
	env UNIT_RUNNER="$lib/ld-linux-aarch64.so.1 --library-path $lib" \
	"$here/run-unit.sh" "$@"
