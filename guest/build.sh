#!/bin/bash
# Build the guest image: build/guest/bzImage and build/guest/initrd.img,
# and build/guest/vmlinux (the same kernel, uncompressed ELF).
#
#   guest/build.sh            build (cached: seconds once everything is here)
#   GUEST_REFRESH=1 guest/build.sh   re-read Debian's indexes: newer kernel,
#                                    busybox or fio source if there is one
#
# From Debian packages only, fetched by name through a private apt
# configuration derived from this machine's apt sources (guest/lib.sh):
#   - the kernel of linux-image-amd64 (its versioned dependency),
#   - busybox-static,
#   - fio, built static from Debian's fio source package.
# Needs: apt, dpkg-dev (dpkg-source), gcc, make, libaio-dev, cpio.
set -eu
export LOG_TAG=guest
. "$(dirname "$0")/lib.sh"

JOBS_SRC=$REPO/guest/jobs
INIT_SRC=$REPO/guest/init

# The virtio and pvpanic modules the guest loads, and msr for
# cpuid-dump; the load order (with dependencies) is computed from the
# modules themselves.
GUEST_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
virtio_pci virtio_blk pvpanic pvpanic-mmio pvpanic-pci msr"
# Small guest tools, built static: name=source.
GUEST_TOOLS="cpuid-dump=$REPO/guest/cpuid-dump.c ttydrain=$REPO/guest/ttydrain.c"

FIO_CONFIGURE_FLAGS="--build-static --disable-native
--disable-numa --disable-rdma --disable-rados --disable-rbd --disable-http
--disable-gfapi --disable-pmem --disable-libnfs --disable-dfs --disable-xnvme
--disable-libzbc --disable-tcmalloc --disable-shm --disable-lex"

# fio_static: print the path of a static fio built from Debian's source.
fio_static() {
	local out=$GCACHE/fio t v
	if [ -x "$out" ] && [ -z "${GUEST_REFRESH:-}" ]; then
		printf '%s\n' "$out"
		return
	fi
	apt_ready
	mkdir -p "$GCACHE"
	t=$(tmp_near "$out")
	log "fetching Debian's fio source package"
	local o
	if ! o=$(cd "$t" && apt_priv source --download-only fio 2>&1); then
		printf '%s\n' "$o" | grep -E '^(E|W|Err):' >&2 || printf '%s\n' "$o" >&2
		rm -rf "$t"
		die "download of source package 'fio' failed: $(apt_why "$o")"
	fi
	# apt checked the files against the signed index; dpkg-source's
	# complaint that it cannot check the .dsc's own signature is noise.
	if ! o=$(cd "$t" && dpkg-source -x fio_*.dsc src 2>&1); then
		printf '%s\n' "$o" >&2
		rm -rf "$t"
		die "dpkg-source -x of fio failed (is dpkg-dev installed?)"
	fi
	v=$(ls "$t"/fio_*.dsc | sed 's/.*fio_\(.*\)\.dsc/\1/')
	log "building static fio $v"
	# shellcheck disable=SC2086
	if ! (cd "$t/src" && ./configure $FIO_CONFIGURE_FLAGS >"$t/configure.log" 2>&1); then
		tail -n 30 "$t/configure.log" >&2
		rm -rf "$t"
		die "fio configure failed (log above)"
	fi
	if ! grep -q '^Linux AIO support *yes' "$t/configure.log"; then
		rm -rf "$t"
		die "fio configure found no libaio (install libaio-dev): the seed job needs ioengine=libaio"
	fi
	if ! (cd "$t/src" && make -j"$(nproc)" fio >"$t/make.log" 2>&1); then
		tail -n 30 "$t/make.log" >&2
		rm -rf "$t"
		die "fio build failed (log above)"
	fi
	if ! file_is_static "$t/src/fio"; then
		rm -rf "$t"
		die "fio built, but it is not a static binary"
	fi
	strip "$t/src/fio" 2>/dev/null || true
	mv "$t/src/fio" "$out.tmp"
	printf '%s\n' "$v" >"$GCACHE/fio.version"
	mv "$out.tmp" "$out"
	rm -rf "$t"
	printf '%s\n' "$out"
}

# A static ELF has no program interpreter.
file_is_static() {
	! readelf -l "$1" 2>/dev/null | grep -q INTERP
}

# build_initrd KTREE REL BUSYBOX FIO OUT: the guest's initramfs (newc cpio,
# not compressed: under emulation the kernel would spend longer inflating
# it than a VMM spends copying 8 MB).
build_initrd() {
	local ktree=$1 rel=$2 bb=$3 fio=$4 out=$5 t r
	t=$(tmp_near "$out")
	r=$t/root
	mkdir -p "$r"/{bin,sbin,dev,proc,sys,tmp,run,etc,jobs,root}
	mkdir -p "$r/lib/modules/$rel"
	root_busybox "$bb" "$r"
	cp "$fio" "$r/bin/fio"
	for tool in $GUEST_TOOLS; do
		gcc -static -O2 -Wall -o "$r/bin/${tool%%=*}" "${tool#*=}" ||
			{ rm -rf "$t"; die "${tool%%=*} did not build (static glibc: libc6-dev)"; }
	done
	cp "$INIT_SRC" "$r/init"
	chmod 755 "$r/init"
	cp "$JOBS_SRC"/*.fio "$r/jobs/"
	# shellcheck disable=SC2086
	root_modules "$ktree" "$rel" "$r" "$t/modules" $GUEST_MODULES ||
		{ rm -rf "$t"; die "kernel $rel lacks a needed module"; }
	printf '%s\n' "$rel" >"$r/etc/kernel-release"
	cat "$GCACHE/fio.version" >"$r/etc/fio-version" 2>/dev/null || true
	root_cpio "$r" "$t/initrd.img" || { rm -rf "$t"; die "cpio failed"; }
	mv "$t/initrd.img" "$out"
	cp "$t/modules" "$GBUILD/modules.load"
	rm -rf "$t"
}

# le32 FILE OFFSET: the little-endian 32-bit number at OFFSET.
le32() { od -An -t u4 -j "$2" -N 4 --endian=little "$1" | tr -d ' '; }

# extract_vmlinux BZIMAGE OUT: the uncompressed ELF kernel inside a
# bzImage (its XZ payload; boot protocol 2.08+ says where), for
# `vmm run -k`: a guest booted from it skips the decompressor.
extract_vmlinux() {
	local bz=$1 out=$2 sects off len
	sects=$(od -An -t u1 -j $((0x1f1)) -N 1 "$bz" | tr -d ' ')
	[ "$sects" != 0 ] || sects=4
	off=$(($(le32 "$bz" $((0x248))) + (sects + 1) * 512))
	len=$(le32 "$bz" $((0x24c)))
	[ "$(od -An -c -j "$off" -N 6 "$bz" | tr -d ' ')" = '3757zXZ\0' ] ||
		die "the kernel's payload is not XZ: cannot extract vmlinux"
	dd if="$bz" iflag=skip_bytes,count_bytes skip="$off" count="$len" \
		status=none | xz -dc --single-stream >"$out.tmp" ||
		{ rm -f "$out.tmp"; die "could not decompress the kernel's payload"; }
	mv "$out.tmp" "$out"
}

main() {
	local ktree rel bb fio vmlinuz newest
	mkdir -p "$GBUILD"
	# Leftovers of an interrupted run (never taken for results).
	rm -rf "$GBUILD"/.tmp.* "$GCACHE"/.tmp.* "$GCACHE"/debs/.tmp.*
	ktree=$(kernel_tree)
	rel=$(kernel_release "$ktree")
	bb=$(busybox_bin)
	fio=$(fio_static)
	vmlinuz=$ktree/boot/vmlinuz-$rel
	[ -f "$vmlinuz" ] || die "no boot/vmlinuz-$rel in $(basename "$ktree")"

	if [ ! -f "$GBUILD/bzImage" ] || ! cmp -s "$vmlinuz" "$GBUILD/bzImage"; then
		cp "$vmlinuz" "$GBUILD/bzImage.tmp"
		mv "$GBUILD/bzImage.tmp" "$GBUILD/bzImage"
	fi
	[ "$GBUILD/vmlinux" -nt "$GBUILD/bzImage" ] ||
		extract_vmlinux "$GBUILD/bzImage" "$GBUILD/vmlinux"
	# Rebuild the initrd when any input is newer than it.
	# shellcheck disable=SC2046
	newest=$(ls -t "$INIT_SRC" "$JOBS_SRC"/*.fio "$bb" "$fio" \
		$(for tool in $GUEST_TOOLS; do echo "${tool#*=}"; done) \
		"$REPO/guest/build.sh" "$REPO/guest/lib.sh" \
		"$GBUILD/initrd.img" 2>/dev/null | head -n 1) || true
	if [ "$newest" != "$GBUILD/initrd.img" ] ||
		[ "$(cat "$GBUILD/kernel-release" 2>/dev/null)" != "$rel" ]; then
		build_initrd "$ktree" "$rel" "$bb" "$fio" "$GBUILD/initrd.img"
		printf '%s\n' "$rel" >"$GBUILD/kernel-release"
		log "built ${GBUILD#"$REPO"/}/initrd.img ($(du -k "$GBUILD/initrd.img" | cut -f1) KiB)"
	fi
	log "kernel $rel, fio $(cat "$GCACHE/fio.version"): ${GBUILD#"$REPO"/}/bzImage ${GBUILD#"$REPO"/}/initrd.img"
}

main "$@"
