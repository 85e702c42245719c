#!/bin/bash
# guest/kernel-initrd.sh BASE MODDIR REL OUT: the guest's initrd for a
# kernel of one's own (bench/vmbench -c vmm:kernel=PATH,modules=MODDIR):
# BASE (guest/build.sh's initrd) followed by one more newc archive with
# the modules of kernel REL that the guest needs, from MODDIR (the
# INSTALL_MOD_PATH of `make modules_install`), and /etc/modules.load
# saying the order to load them in.  The kernel unpacks both archives,
# the second's files replacing the first's, and guest/init loads what
# /lib/modules/$(uname -r) holds.  A module the kernel has built in
# needs nothing; virtio_blk must be there, built in or a module
# (status 1 and one line on stderr if not).
set -eu
export LOG_TAG=kernel-initrd
. "$(dirname "$0")/lib.sh"

[ $# -eq 4 ] || die "usage: guest/kernel-initrd.sh BASE MODDIR REL OUT"
base=$1 mods=$2 rel=$3 out=$4
[ -f "$base" ] || die "no initrd $base (make guest)"
[ -d "$mods/lib/modules/$rel" ] || die "no $mods/lib/modules/$rel"
# What guest/build.sh loads for Debian's kernel; in a kernel of one's own
# only virtio_blk is a must (the others are built in, modules virtio_blk
# depends on, or absent from its configuration).
MODULES="virtio_ring? virtio? virtio_pci_legacy_dev? virtio_pci_modern_dev?
virtio_pci? virtio_blk pvpanic? pvpanic-pci?"

t=$(mktemp -d "${TMPDIR:-/tmp}/kernel-initrd.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/root/etc" "$t/root/lib/modules/$rel"
# shellcheck disable=SC2086
root_modules "$mods" "$rel" "$t/root" "$t/list" $MODULES ||
	die "kernel $rel has no virtio_blk: neither built in nor a module in $mods/lib/modules/$rel"
printf '%s\n' "$rel" >"$t/root/etc/kernel-release"
printf '%s\n' "$mods" >"$t/root/etc/modules.from"
root_cpio "$t/root" "$t/extra.cpio"
cat "$base" "$t/extra.cpio" >"$t/initrd.img"
mv "$t/initrd.img" "$out"
