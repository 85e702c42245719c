#!/bin/bash
# Build the test host's initramfs: busybox, tests/testhost/init, and the
# modules the test host needs, all from the same Debian packages as the
# guest image (guest/lib.sh caches them under build/guest/cache, or
# build/guest/arm64/cache).  Prints the kernel image's path.
#
#   x86_64 (the default): build/testhost/initramfs.img; virtio-pci, 9p over
#     virtio, kvm-amd; loop, device-mapper and ext4 for the fault and crash
#     tests; null_blk (with configfs) for block devices of any geometry,
#     loaded with no device: bench/vmharness/nullblk.py makes them.
#   TESTHOST_ARCH=arm64: build/testhost/arm64/initramfs.img, with arm64's
#     busybox; virtio-pci, 9p, virtio_console (the command's stdout and
#     stderr travel on virtio-serial ports), the same loop, device-mapper
#     and ext4; KVM is built into Debian's arm64 kernel.
set -eu
export LOG_TAG=testhost
. "$(dirname "$0")/../../guest/lib.sh"
guest_arch "${TESTHOST_ARCH:-x86_64}"

case $GARCH in
x86_64) TBUILD=$REPO/build/testhost ARCH_MODULES=kvm-amd ;;
arm64) TBUILD=$REPO/build/testhost/arm64 ARCH_MODULES=virtio_console ;;
esac
MODULES="virtio_pci 9pnet_virtio 9p $ARCH_MODULES loop dm-mod dm-flakey dm-log-writes ext4 crc32c_generic configfs null_blk"
# Arguments of a module's insmod in /init (one line of modules.load:
# the module's path, then its arguments).
NULL_BLK_ARGS="nr_devices=0"
OUT=$TBUILD/initramfs.img

ktree=$(kernel_tree)
rel=$(kernel_release "$ktree")
bb=$(busybox_bin)
mkdir -p "$TBUILD"
newest=$(ls -t "$REPO/tests/testhost/init" "$0" "$REPO/guest/lib.sh" "$bb" \
	"$OUT" 2>/dev/null | head -n 1) || true
if [ "$newest" != "$OUT" ] || [ "$(cat "$TBUILD/kernel-release" 2>/dev/null)" != "$rel" ]; then
	t=$(tmp_near "$OUT")
	r=$t/root
	mkdir -p "$r"/{bin,dev,proc,sys,etc,root} "$r/lib/modules/$rel"
	[ "$GARCH" = arm64 ] || mkdir "$r/host"
	root_busybox "$bb" "$r" || { rm -rf "$t"; die "no busybox applets"; }
	cp "$REPO/tests/testhost/init" "$r/init"
	chmod 755 "$r/init"
	# shellcheck disable=SC2086
	root_modules "$ktree" "$rel" "$r" "$t/modules" $MODULES ||
		{ rm -rf "$t"; die "kernel $rel lacks a needed module"; }
	sed -i "s|/null_blk\.ko\$|/null_blk.ko $NULL_BLK_ARGS|" "$r/etc/modules.load"
	grep -q "null_blk.ko $NULL_BLK_ARGS" "$r/etc/modules.load" ||
		{ rm -rf "$t"; die "null_blk.ko not in modules.load"; }
	root_cpio "$r" "$t/initramfs.img" || { rm -rf "$t"; die "cpio failed"; }
	mv "$t/initramfs.img" "$OUT"
	printf '%s\n' "$rel" >"$TBUILD/kernel-release"
	rm -rf "$t"
fi
printf '%s\n' "$ktree/boot/vmlinuz-$rel"
