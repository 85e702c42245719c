#!/bin/bash
# Build the guest image: build/guest/bzImage and build/guest/initrd.img,
# and build/guest/vmlinux (the same kernel, uncompressed ELF); and the
# small kernel, build/guest/small/bzImage and vmlinux (Debian's
# linux-source of the same version, guest/small.config; same initrd).
# With ARCH=arm64: the arm64 guest, build/guest/arm64/Image (Debian's
# arm64 kernel of the x86 guest's version, a raw arm64 Image) and
# build/guest/arm64/initrd.img (arm64 busybox, fio and tools, the same
# /init and jobs), cross-built; no small kernel.
#
#   guest/build.sh            build (cached: seconds once everything is here)
#   ARCH=arm64 guest/build.sh        the arm64 guest (ARCH=x86_64: the default)
#   GUEST_REFRESH=1 guest/build.sh   re-read Debian's indexes: newer kernel,
#                                    busybox or fio source if there is one
#
# From Debian packages only, fetched by name through a private apt
# configuration derived from this machine's apt sources (guest/lib.sh):
#   - the kernel of linux-image-amd64 (its versioned dependency),
#   - busybox-static,
#   - fio, built static from Debian's fio source package,
#   - linux-source-X.Y of the stock kernel's version, for the small kernel.
# Needs: apt, dpkg-dev (dpkg-source), gcc, make, libaio-dev, cpio; for the
# small kernel flex, bison, bc, libelf-dev; for arm64 (after `dpkg
# --add-architecture arm64`) gcc-aarch64-linux-gnu, libc6-dev-arm64-cross,
# libc6-dev:arm64 and libaio-dev:arm64.
set -eu
export LOG_TAG=guest
. "$(dirname "$0")/lib.sh"
guest_arch "${ARCH:-x86_64}"

JOBS_SRC=$REPO/guest/jobs
INIT_SRC=$REPO/guest/init

# The virtio and pvpanic modules the guest loads, and msr for
# cpuid-dump; the load order (with dependencies) is computed from the
# modules themselves.  Small guest tools, built static: name=source.
# ELF_MACHINE: what readelf -h says the guest's programs are built for.
VIRTIO_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
virtio_pci virtio_blk"
case $GARCH in
x86_64)
	GUEST_MODULES="$VIRTIO_MODULES pvpanic pvpanic-mmio pvpanic-pci msr"
	GUEST_TOOLS="cpuid-dump=$REPO/guest/cpuid-dump.c ttydrain=$REPO/guest/ttydrain.c"
	ELF_MACHINE="Advanced Micro Devices X86-64"
	;;
arm64)
	# Debian's arm64 kernel has virtio and virtio_ring built in and no
	# pvpanic at all (CONFIG_PVPANIC is not set); pvpanic-mmio is the
	# ACPI device, msr and cpuid-dump are x86's.
	GUEST_MODULES="$VIRTIO_MODULES pvpanic? pvpanic-pci?"
	GUEST_TOOLS="ttydrain=$REPO/guest/ttydrain.c"
	ELF_MACHINE=AArch64
	;;
esac

FIO_CONFIGURE_FLAGS="--build-static --disable-native
--disable-numa --disable-rdma --disable-rados --disable-rbd --disable-http
--disable-gfapi --disable-pmem --disable-libnfs --disable-dfs --disable-xnvme
--disable-libzbc --disable-tcmalloc --disable-shm --disable-lex"
# A cross build names its compiler (fio's configure asks it what the
# target is, and finds arm64's libaio through its multiarch paths).
[ -z "$CROSS" ] || FIO_CONFIGURE_FLAGS="$FIO_CONFIGURE_FLAGS --cc=${CROSS}gcc"

# fio_static: print the path of a static fio built from Debian's source.
fio_static() {
	local out=$GCACHE/fio t v name
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
	# Built once per source, flags, toolchain and this recipe on the machine.
	name=$(shared_name "fio-$GARCH" "$v $FIO_CONFIGURE_FLAGS $(toolchain) $(declare -f fio_static)")
	if shared_get "$name" "$t" fio; then
		mv "$t/fio" "$out.tmp"
		printf '%s\n' "$v" >"$GCACHE/fio.version"
		mv "$out.tmp" "$out"
		rm -rf "$t"
		printf '%s\n' "$out"
		return
	fi
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
	if ! elf_is_ours "$t/src/fio"; then
		rm -rf "$t"
		die "fio built, but not for $GARCH ($ELF_MACHINE)"
	fi
	"${CROSS}strip" "$t/src/fio" 2>/dev/null || true
	shared_put "$name" "$t/src" fio
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

# elf_is_ours FILE: FILE is an ELF for the architecture built for.
elf_is_ours() {
	[ "$(readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p')" = "$ELF_MACHINE" ]
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
	root_busybox "$bb" "$r" || { rm -rf "$t"; die "no busybox applets"; }
	cp "$fio" "$r/bin/fio"
	for tool in $GUEST_TOOLS; do
		"${CROSS}gcc" -static -O2 -Wall -o "$r/bin/${tool%%=*}" "${tool#*=}" ||
			{ rm -rf "$t"; die "${tool%%=*} did not build (static glibc: libc6-dev${CROSS:+, libc6-dev-arm64-cross})"; }
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

# The small kernel (guest/small.config applied on allnoconfig) is built
# from Debian's linux-source of the stock kernel's version, in
# cache/small-obj (kept: a changed fragment rebuilds only what changed),
# and copied to small/ with the key (source version and fragment
# checksum) it was built from; the same key next time means nothing to do.
SMALL_CONFIG=$REPO/guest/small.config
SMALL=$GBUILD/small

# small_source VERSION SERIES: print the path of Debian's linux-source-SERIES
# (e.g. 6.1) at VERSION, fetched and unpacked once (in the shared cache
# where there is one).
small_source() {
	local ver=$1 series=$2 dir=${GUEST_CACHE:-$GCACHE}/linux-source-$1 t deb
	if [ ! -d "$dir" ]; then
		mkdir -p "$(dirname "$dir")"
		t=$(tmp_near "$dir")
		log "fetching linux-source-$series $ver"
		apt_download "linux-source-$series=$ver" "$t" || { rm -rf "$t"; exit 1; }
		deb=$(ls "$t"/linux-source-"$series"_*.deb 2>/dev/null | head -n 1)
		[ -n "$deb" ] || { rm -rf "$t"; die "linux-source-$series=$ver: no .deb"; }
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$t" --wildcards '*.tar.xz' ||
			{ rm -rf "$t"; die "linux-source-$series: no source tarball in the .deb"; }
		tar -xJf "$t/usr/src/linux-source-$series.tar.xz" -C "$t" ||
			{ rm -rf "$t"; die "linux-source-$series: the tarball did not unpack"; }
		# Another checkout may have put it there meanwhile: keep that one.
		mv -T "$t/linux-source-$series" "$dir" 2>/dev/null || [ -d "$dir" ] ||
			{ rm -rf "$t"; die "linux-source-$series: could not move it to $dir"; }
		rm -rf "$t"
	fi
	printf '%s\n' "$dir"
}

# build_kernel LABEL CONFIG PATCHES OBJ OUT [LOCALVERSION]: Debian's linux-source of the
# stock kernel's version, with PATCHES (a directory of *.patch; empty:
# none) applied to a copy, configured with CONFIG (a fragment applied on
# allnoconfig), built in OBJ (kept: a rebuild redoes only what changed),
# copied to OUT (bzImage, vmlinux, config) with the key it was built
# from: the source version and the checksums of CONFIG and of the
# patches.  The same key next time means nothing to do.  LOCALVERSION
# goes at the end of the kernel's release string.
build_kernel() {
	local label=$1 config=$2 patches=$3 obj=$4 out=$5 lv=${6:-} deb ver series key src name
	deb=$(fetch_deb "$(kernel_pkg)")
	ver=$(dpkg-deb -f "$deb" Version)
	series=$(printf '%s\n' "$ver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
	[ -n "$series" ] || die "cannot read the kernel series from version $ver"
	key=$(kernel_key "$ver" "$config" "$patches" "$lv")
	if [ "$(cat "$out/key" 2>/dev/null)" = "$key" ] &&
		[ -f "$out/bzImage" ] && [ -f "$out/vmlinux" ]; then
		return
	fi
	# Built once per key, toolchain and this recipe on the machine.
	name=$(shared_name "kernel-$label" "$key $(toolchain) $(declare -f build_kernel)")
	if shared_get "$name" "$out" bzImage vmlinux config; then
		printf '%s\n' "$key" >"$out/key"
		return
	fi
	src=$(small_source "$ver" "$series")
	if [ -n "$patches" ]; then
		patched_source "$src" "$patches" "$obj.src"
		src=$obj.src
	fi
	log "building the $label kernel ($ver, ${config#"$REPO"/}${patches:+, ${patches#"$REPO"/}}) in ${obj#"$REPO"/}"
	mkdir -p "$obj"
	# Start from nothing but allnoconfig and the fragment each time.
	rm -f "$obj/.config"
	if ! KCONFIG_ALLCONFIG=$config make -C "$src" O="$obj" allnoconfig \
		>"$obj/config.log" 2>&1; then
		tail -n 20 "$obj/config.log" >&2
		die "$label kernel: make allnoconfig failed (log above)"
	fi
	config_check "$config" "$obj/.config"
	if ! make -C "$src" O="$obj" -j"$(nproc)" LOCALVERSION="$lv" bzImage \
		>"$obj/build.log" 2>&1; then
		grep -E 'error|Error' "$obj/build.log" | head -n 20 >&2
		die "$label kernel: build failed ($obj/build.log; flex, bison, bc, libelf-dev installed?)"
	fi
	mkdir -p "$out"
	cp "$obj/arch/x86/boot/bzImage" "$out/bzImage.tmp"
	cp "$obj/vmlinux" "$out/vmlinux.tmp"
	strip --strip-debug "$out/vmlinux.tmp" 2>/dev/null || true
	cp "$obj/.config" "$out/config"
	mv "$out/bzImage.tmp" "$out/bzImage"
	mv "$out/vmlinux.tmp" "$out/vmlinux"
	printf '%s\n' "$key" >"$out/key"
	shared_put "$name" "$out" bzImage vmlinux config
	log "$label kernel: ${out#"$REPO"/}/bzImage ($(du -k "$out/bzImage" | cut -f1) KiB)"
}

small_kernel() {
	build_kernel small "$SMALL_CONFIG" "" "$GCACHE/small-obj" "$SMALL"
}

# named_kernel NAME PATCHES CONFIG (make guest-kernel): a guest kernel of
# one's own, build/guest/kernels/NAME/{bzImage,vmlinux,config}, for
# bench/vmbench's kernel= and --scenario kernels (with guest/small.config,
# the default CONFIG, virtio is built in: no modules needed); its release
# string ends in -NAME.
named_kernel() {
	local name=${1:-} patches=${2:-} config=${3:-$SMALL_CONFIG}
	[ "$GARCH" = x86_64 ] || die "guest-kernel: x86_64 only"
	printf '%s' "$name" | grep -Eqx '[A-Za-z0-9_.-]+' ||
		die "guest-kernel: NAME='$name': letters, digits, _ . - only"
	[ -z "$patches" ] || [ -d "$patches" ] || die "guest-kernel: PATCHES=$patches: no such directory"
	[ -f "$config" ] || die "guest-kernel: CONFIG=$config: no such file"
	patches=${patches:+$(cd "$patches" && pwd)}
	config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
	kernel_tree >/dev/null # the stock kernel's .deb says which source
	build_kernel "$name" "$config" "$patches" "$GCACHE/kernel-$name-obj" \
		"$GBUILD/kernels/$name" "-$name"
	printf '%s\n' "$GBUILD/kernels/$name/bzImage"
}

# install_kernel VMLINUZ OUT: the kernel package's image as OUT, copied
# only when it changed.  On arm64 it must be the raw Image a VMM loads
# (Debian's vmlinuz is one: the boot protocol's "ARM\x64" at offset 56).
install_kernel() {
	local in=$1 out=$2
	if [ "$GARCH" = arm64 ] && [ "$(od -An -c -j 56 -N 4 "$in" | tr -d ' ')" != ARMd ]; then
		die "$in is not an arm64 Image (no ARM\\x64 magic)"
	fi
	[ -f "$out" ] && cmp -s "$in" "$out" && return 0
	cp "$in" "$out.tmp"
	mv "$out.tmp" "$out"
}

# same_kernel_version: warn when the arm64 kernel's package version is not
# the x86 guest's (its cached .deb), e.g. after GUEST_REFRESH=1 of one only.
same_kernel_version() {
	local pkg ours x86deb theirs
	pkg=$(kernel_pkg)
	ours=$(dpkg-deb -f "$(fetch_deb "$pkg")" Version)
	# No x86 guest built here: ls fails, which set -e must not take as
	# the build's failure.
	x86deb=$(DEBDIR=${GUEST_CACHE:+$GUEST_CACHE/debs-amd64} &&
		DEBDIR=${DEBDIR:-$GBUILD_X86/cache/debs} && GCACHE=$GBUILD_X86/cache &&
		deb_cached "${pkg%-"$DEBARCH"}-amd64") ||
		x86deb=
	[ -n "$x86deb" ] || return 0
	theirs=$(dpkg-deb -f "$x86deb" Version)
	[ "$theirs" = "$ours" ] ||
		log "warning: arm64 kernel $ours, x86 kernel $theirs (GUEST_REFRESH=1 both)"
}

main() {
	local ktree rel bb fio vmlinuz newest kimg
	mkdir -p "$GBUILD"
	# Leftovers of an interrupted run (never taken for results).
	rm -rf "$GBUILD"/.tmp.* "$GCACHE"/.tmp.* "$GCACHE"/debs/.tmp.*
	shared_tmp_clean
	ktree=$(kernel_tree)
	rel=$(kernel_release "$ktree")
	bb=$(busybox_bin)
	fio=$(fio_static)
	vmlinuz=$ktree/boot/vmlinuz-$rel
	[ -f "$vmlinuz" ] || die "no boot/vmlinuz-$rel in $(basename "$ktree")"

	if [ "$GARCH" = arm64 ]; then
		kimg=$GBUILD/Image
		install_kernel "$vmlinuz" "$kimg"
		same_kernel_version
	else
		kimg=$GBUILD/bzImage
		install_kernel "$vmlinuz" "$kimg"
		[ "$GBUILD/vmlinux" -nt "$kimg" ] || extract_vmlinux "$kimg" "$GBUILD/vmlinux"
	fi
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
	log "kernel $rel, fio $(cat "$GCACHE/fio.version"): ${kimg#"$REPO"/} ${GBUILD#"$REPO"/}/initrd.img"
	[ "$GARCH" != x86_64 ] || small_kernel
}

if [ "${1:-}" = kernel ]; then
	shift
	named_kernel "$@"
	exit
fi
main "$@"
