#!/bin/sh
# Install what the build and the tests need on Debian 12, if missing.
# As root: apt-get install --no-install-recommends.  Otherwise: print the
# exact command and stop.
PKGS="build-essential gcc make libc6-dev linux-libc-dev pkg-config liburing-dev libcmocka-dev libaio-dev
libfdt-dev liblzma-dev clang libclang-rt-14-dev fio qemu-system-x86
busybox-static cpio xz-utils dpkg-dev ca-certificates valgrind gnuplot-nox
python3 python3-pytest procps libseccomp-dev flex bison bc libelf-dev"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "missing packages:$missing" >&2
	echo "run as root: apt-get update && $cmd" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null && $cmd -q >/dev/null || {
	echo "deps: apt-get failed: $cmd" >&2
	exit 1
}
