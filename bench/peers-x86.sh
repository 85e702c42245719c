#!/bin/bash
# Build kvmtool (lkvm) for x86-64, static: build/peers/x86/lkvm-static, the
# x86 benchmark peer (`bench/vmbench profile -c kvmtool`), run in the x86
# test host.  Prints its path.
#
#   bench/peers-x86.sh
#   PEERS_DIR=DIR bench/peers-x86.sh   where kvmtool-*.tar.gz is (default
#                                      the shared peers folder,
#                                      /work/shared/peers)
#
# kvmtool's source is never part of this repository: it is unpacked from
# the peers folder's tarball (its README says which commit) into
# build/peers/x86/src.  Static, so that it runs wherever the checkout is
# seen (the x86 test host chroots into this machine's root, so a dynamic
# build would run there too, but a static one does not depend on it).
# It links libaio (libaio-dev: the raw disk's asynchronous path,
# disk/aio.c, as in the dynamic lkvm) and zlib statically (see below); the
# build checks that libaio was taken.  Built once; delete build/peers/x86
# to build again.  Needs gcc, make, libc6-dev, libaio-dev (zlib1g-dev
# where present).
set -eu
export LOG_TAG=peers
. "$(dirname "$0")/../guest/lib.sh"

[ "$(uname -m)" = x86_64 ] || die "bench/peers-x86.sh builds on an x86-64 host only"
PEERS_DIR=${PEERS_DIR:-/work/shared/peers}
PBUILD=$REPO/build/peers/x86
OUT=$PBUILD/lkvm-static

if [ -x "$OUT" ]; then
	printf '%s\n' "$OUT"
	exit 0
fi
tarball=$(ls "$PEERS_DIR"/kvmtool-*.tar.gz 2>/dev/null | head -n 1)
[ -n "$tarball" ] || die "no kvmtool-*.tar.gz in $PEERS_DIR (PEERS_DIR=...)"
command -v gcc >/dev/null || die "gcc not found (apt-get install gcc make libc6-dev)"
mkdir -p "$PBUILD"
rm -rf "$PBUILD"/.tmp.*

t=$(tmp_near "$PBUILD/src")
log "building $(basename "$tarball" .tar.gz) for x86-64 (lkvm-static)"
tar -xzf "$tarball" -C "$t" || { rm -rf "$t"; die "cannot unpack $tarball"; }
src=$(ls -d "$t"/kvmtool-*/ | head -n 1)
# kvmtool's Makefile puts an optional library into the static build only
# when it does not link dynamically: with libaio-dev and zlib1g-dev
# installed, lkvm-static would get neither, and its raw disk would serve
# every request synchronously in its one virtio-blk thread (no io_submit),
# unlike the lkvm that kvmtool's users build.  Its own feature lists are
# read out and the libraries it found for lkvm are given to lkvm-static
# too, where they link statically.
mkvar() {
	# shellcheck disable=SC2016 # make's $(...), not the shell's
	printf 'print-%%:\n\t@echo "$($*)"\n' >"$t/print.mk"
	make -s -C "$src" -f Makefile -f "$t/print.mk" ARCH=x86_64 "print-$1" 2>/dev/null | tail -n 1
}
links_static() {
	printf 'int main(void) { return 0; }\n' | gcc -x c - -static "$@" -o "$t/try" 2>/dev/null
}
cflags=$(mkvar CFLAGS_STATOPT) libs=$(mkvar LIBS_STATOPT) objs=$(mkvar OBJS_STATOPT)
dyn_cflags=" $(mkvar CFLAGS_DYNOPT) "
for f in "CONFIG_HAS_AIO -laio disk/aio.o" "CONFIG_HAS_ZLIB -lz -"; do
	# shellcheck disable=SC2086 # three words
	set -- $f
	case " $cflags " in *" -D$1 "*) continue ;; esac     # there already
	case $dyn_cflags in *" -D$1 "*) ;; *) continue ;; esac # not found
	links_static "$2" || { log "$2 does not link statically: lkvm-static goes without it"; continue; }
	cflags="$cflags -D$1" libs="$libs $2"
	[ "$3" = - ] || objs="$objs $3"
done
log "static options: $cflags"
if ! make -C "$src" -j"$(nproc)" ARCH=x86_64 CFLAGS_STATOPT="$cflags" \
	LIBS_STATOPT="$libs" OBJS_STATOPT="$objs" lkvm-static >"$t/make.log" 2>&1; then
	tail -n 30 "$t/make.log" >&2
	rm -rf "$PBUILD/src.failed"
	mv "$t" "$PBUILD/src.failed"
	die "kvmtool did not build (log above; the tree is in ${PBUILD#"$REPO"/}/src.failed)"
fi
[ "$(readelf -h "$src/lkvm-static" | sed -n 's/^ *Machine: *//p')" = "Advanced Micro Devices X86-64" ] ||
	die "lkvm-static is not an x86-64 program"
case $(readelf -l "$src/lkvm-static") in
*INTERP*) die "lkvm-static is not static" ;;
esac
# The raw disk's libaio path: without it kvmtool serves every request
# synchronously in its virtio-blk thread, another peer than the one run.
[ -f "$src/disk/aio.static.o" ] ||
	die "kvmtool was built without libaio (apt-get install libaio-dev)"
cp "$t/make.log" "$src/make.log"
rm -rf "$PBUILD/src"
mv "$src" "$PBUILD/src"
rm -rf "$t"
cp "$PBUILD/src/lkvm-static" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "built ${OUT#"$REPO"/}"
printf '%s\n' "$OUT"
