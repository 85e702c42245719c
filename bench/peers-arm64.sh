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
# own builds use the amd64 one.  libaio the same way (libaio-dev:arm64 into
# build/peers/arm64/libaio): kvmtool's raw disk serves requests through
# io_submit (disk/aio.c) when it finds libaio, as a native arm64 build with
# libaio-dev installed does; a cross build finds none on its own and would
# serve every request synchronously in one thread, another peer than the
# one kvmtool's users run (the build checks it was taken).  Built once;
# delete build/peers/arm64 to build again.  Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and
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

# libaio: header and static library in one folder.
if [ ! -f "$PBUILD/libaio/libaio.a" ]; then
	deb=$(fetch_deb libaio-dev) || exit 1
	t=$(tmp_near "$PBUILD/libaio")
	dpkg-deb -x "$deb" "$t/x" || die "dpkg-deb -x $deb failed"
	mkdir -p "$t/libaio"
	cp "$t/x/usr/include/libaio.h" "$t/x/usr/lib/aarch64-linux-gnu/libaio.a" "$t/libaio/" ||
		die "$(basename "$deb") has no libaio.h and usr/lib/aarch64-linux-gnu/libaio.a"
	rm -rf "$PBUILD/libaio"
	mv "$t/libaio" "$PBUILD/libaio"
	rm -rf "$t"
fi

t=$(tmp_near "$PBUILD/src")
log "building $(basename "$tarball" .tar.gz) for arm64 (lkvm-static)"
tar -xzf "$tarball" -C "$t" || { rm -rf "$t"; die "cannot unpack $tarball"; }
src=$(ls -d "$t"/kvmtool-*/ | head -n 1)
# kvmtool's own static options (libfdt's among them), plus libaio.
mkvar() {
	# shellcheck disable=SC2016 # make's $(...), not the shell's
	printf 'print-%%:\n\t@echo "$($*)"\n' >"$t/print.mk"
	make -s -C "$src" -f Makefile -f "$t/print.mk" ARCH=arm64 CROSS_COMPILE="$CROSS" \
		LIBFDT_DIR="$PBUILD/libfdt" "print-$1" 2>/dev/null | tail -n 1
}
cflags="$(mkvar CFLAGS_STATOPT) -DCONFIG_HAS_AIO -I$PBUILD/libaio"
libs="$(mkvar LIBS_STATOPT) -L$PBUILD/libaio -laio"
objs="$(mkvar OBJS_STATOPT) disk/aio.o"
case " $cflags " in *" -DCONFIG_HAS_LIBFDT "*) ;; *) die "kvmtool's make found no libfdt in ${PBUILD#"$REPO"/}/libfdt" ;; esac
log "static options: $cflags"
if ! make -C "$src" -j"$(nproc)" ARCH=arm64 CROSS_COMPILE="$CROSS" \
	LIBFDT_DIR="$PBUILD/libfdt" CFLAGS_STATOPT="$cflags" LIBS_STATOPT="$libs" \
	OBJS_STATOPT="$objs" lkvm-static >"$t/make.log" 2>&1; then
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
[ -f "$src/disk/aio.static.o" ] || die "kvmtool was built without libaio"
cp "$t/make.log" "$src/make.log"
rm -rf "$PBUILD/src"
mv "$src" "$PBUILD/src"
rm -rf "$t"
cp "$PBUILD/src/lkvm-static" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "built ${OUT#"$REPO"/}"
printf '%s\n' "$OUT"
