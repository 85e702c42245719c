#!/bin/sh
# Install what the build and the tests need on Debian 12, if missing.
# As root: apt-get install --no-install-recommends.  Otherwise: print the
# exact command and stop.
PKGS="build-essential gcc make libc6-dev linux-libc-dev pkg-config liburing-dev libcmocka-dev libaio-dev
libjson-c-dev libfdt-dev liblzma-dev clang libclang-rt-14-dev fio qemu-system-x86
busybox-static cpio xz-utils dpkg-dev ca-certificates valgrind gnuplot-nox
python3 python3-pytest python3-scipy procps libseccomp-dev flex bison bc libelf-dev patch
gcc-aarch64-linux-gnu libc6-dev-arm64-cross liburing-dev:arm64
libseccomp-dev:arm64 libaio-dev:arm64 libcmocka-dev:arm64 libjson-c-dev:arm64
qemu-system-arm qemu-user-static"
# The arm64 half (make ARCH=arm64, its guest and test host) takes
# packages of Debian's arm64 architecture; libfdt-dev:arm64 is fetched
# by tests/arm64-libfdt.sh (it cannot sit beside the amd64 one).

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "missing packages:$missing" >&2
	echo "run as root: dpkg --add-architecture arm64 && apt-get update && $cmd" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
apt-get update -q >/dev/null && $cmd -q >/dev/null || {
	echo "deps: apt-get failed: $cmd" >&2
	exit 1
}
