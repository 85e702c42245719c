#!/bin/bash
# Build build/testhost/initramfs.img: busybox, tests/testhost/init, and the
# modules the test host needs (virtio-pci, 9p over virtio, kvm-amd; loop
# device-mapper and ext4 for the fault and crash tests), all
# from the same Debian packages as the guest image (guest/lib.sh caches
# them under build/guest/cache).  Prints the kernel image's path.
set -eu
export LOG_TAG=testhost
. "$(dirname "$0")/../../guest/lib.sh"

TBUILD=$REPO/build/testhost
OUT=$TBUILD/initramfs.img
MODULES="virtio_pci 9pnet_virtio 9p kvm-amd loop dm-mod dm-flakey dm-log-writes ext4 crc32c_generic"

ktree=$(kernel_tree)
rel=$(kernel_release "$ktree")
bb=$(busybox_bin)
mkdir -p "$TBUILD"
newest=$(ls -t "$REPO/tests/testhost/init" "$0" "$REPO/guest/lib.sh" "$bb" \
	"$OUT" 2>/dev/null | head -n 1) || true
if [ "$newest" != "$OUT" ] || [ "$(cat "$TBUILD/kernel-release" 2>/dev/null)" != "$rel" ]; then
	t=$(tmp_near "$OUT")
	r=$t/root
	mkdir -p "$r"/{bin,dev,proc,sys,etc,host} "$r/lib/modules/$rel"
	root_busybox "$bb" "$r"
	cp "$REPO/tests/testhost/init" "$r/init"
	chmod 755 "$r/init"
	# shellcheck disable=SC2086
	root_modules "$ktree" "$rel" "$r" "$t/modules" $MODULES ||
		{ rm -rf "$t"; die "kernel $rel lacks a needed module"; }
	root_cpio "$r" "$t/initramfs.img" || { rm -rf "$t"; die "cpio failed"; }
	mv "$t/initramfs.img" "$OUT"
	printf '%s\n' "$rel" >"$TBUILD/kernel-release"
	rm -rf "$t"
fi
printf '%s\n' "$ktree/boot/vmlinuz-$rel"
