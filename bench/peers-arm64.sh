#!/bin/bash
# Cross-build kvmtool (lkvm) for arm64, static: build/peers/arm64/lkvm-static,
# the arm64 benchmark peer, run in the arm64 test host.  Prints its path.
#
#   bench/peers-arm64.sh
#   PEERS_DIR=DIR bench/peers-arm64.sh   where kvmtool-*.tar.gz is (default
#                                        the shared peers folder,
#                                        /work/shared/peers)
#
# kvmtool's source is never part of this repository: it is unpacked from
# the peers folder's tarball (its README says which commit) into
# build/peers/arm64/src.  Its libfdt comes from Debian's libfdt-dev:arm64,
# fetched by name and unpacked under build/peers/arm64/libfdt (headers and
# libfdt.a in one folder, kvmtool's LIBFDT_DIR) rather than installed:
# libfdt-dev is not co-installable for two architectures, and this host's
# own builds use the amd64 one.  Built once; delete build/peers/arm64 to
# build again.  Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and
# `dpkg --add-architecture arm64` (guest/lib.sh's private apt fetches the
# .deb); 95 s here (2 jobs, the machine busy with other builds).
set -eu
export LOG_TAG=peers
. "$(dirname "$0")/../guest/lib.sh"
guest_arch arm64

PEERS_DIR=${PEERS_DIR:-/work/shared/peers}
PBUILD=$REPO/build/peers/arm64
OUT=$PBUILD/lkvm-static

if [ -x "$OUT" ]; then
	printf '%s\n' "$OUT"
	exit 0
fi
tarball=$(ls "$PEERS_DIR"/kvmtool-*.tar.gz 2>/dev/null | head -n 1)
[ -n "$tarball" ] || die "no kvmtool-*.tar.gz in $PEERS_DIR (PEERS_DIR=...)"
command -v "${CROSS}gcc" >/dev/null ||
	die "${CROSS}gcc not found (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
mkdir -p "$PBUILD"
rm -rf "$PBUILD"/.tmp.*

# libfdt: headers and the static library in one folder.
if [ ! -f "$PBUILD/libfdt/libfdt.a" ]; then
	deb=$(fetch_deb libfdt-dev) || exit 1
	t=$(tmp_near "$PBUILD/libfdt")
	dpkg-deb -x "$deb" "$t/x" || die "dpkg-deb -x $deb failed"
	mkdir -p "$t/libfdt"
	cp "$t"/x/usr/include/*.h "$t/libfdt/"
	cp "$t/x/usr/lib/aarch64-linux-gnu/libfdt.a" "$t/libfdt/" ||
		die "$(basename "$deb") has no usr/lib/aarch64-linux-gnu/libfdt.a"
	rm -rf "$PBUILD/libfdt"
	mv "$t/libfdt" "$PBUILD/libfdt"
	rm -rf "$t"
fi

t=$(tmp_near "$PBUILD/src")
log "building $(basename "$tarball" .tar.gz) for arm64 (lkvm-static)"
tar -xzf "$tarball" -C "$t" || { rm -rf "$t"; die "cannot unpack $tarball"; }
src=$(ls -d "$t"/kvmtool-*/ | head -n 1)
if ! make -C "$src" -j"$(nproc)" ARCH=arm64 CROSS_COMPILE="$CROSS" \
	LIBFDT_DIR="$PBUILD/libfdt" lkvm-static >"$t/make.log" 2>&1; then
	tail -n 30 "$t/make.log" >&2
	rm -rf "$PBUILD/src.failed"
	mv "$t" "$PBUILD/src.failed"
	die "kvmtool did not build (log above; the tree is in ${PBUILD#"$REPO"/}/src.failed)"
fi
[ "$(readelf -h "$src/lkvm-static" | sed -n 's/^ *Machine: *//p')" = AArch64 ] ||
	die "lkvm-static is not an arm64 program"
case $(readelf -l "$src/lkvm-static") in
*INTERP*) die "lkvm-static is not static" ;;
esac
rm -rf "$PBUILD/src"
mv "$src" "$PBUILD/src"
rm -rf "$t"
cp "$PBUILD/src/lkvm-static" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "built ${OUT#"$REPO"/}"
printf '%s\n' "$OUT"
