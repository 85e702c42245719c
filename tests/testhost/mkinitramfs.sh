#!/bin/bash
# Build build/testhost/initramfs.img: busybox, tests/testhost/init, and the
# modules the test host needs (virtio-pci, 9p over virtio, kvm-amd), all
# from the same Debian packages as the guest image (guest/lib.sh caches
# them under build/guest/cache).  Prints the kernel image's path.
set -eu
export LOG_TAG=testhost
. "$(dirname "$0")/../../guest/lib.sh"

TBUILD=$REPO/build/testhost
OUT=$TBUILD/initramfs.img
MODULES="virtio_pci 9pnet_virtio 9p kvm-amd"

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
	cp "$bb" "$r/bin/busybox"
	for a in $("$bb" --list); do
		[ "$a" = busybox ] || ln -s busybox "$r/bin/$a"
	done
	cp "$REPO/tests/testhost/init" "$r/init"
	chmod 755 "$r/init"
	# shellcheck disable=SC2086
	mod_closure "$ktree/lib/modules/$rel" $MODULES >"$t/modules" ||
		{ rm -rf "$t"; die "kernel $rel lacks a needed module"; }
	while read -r ko; do
		mkdir -p "$r/lib/modules/$rel/$(dirname "$ko")"
		cp "$ktree/lib/modules/$rel/$ko" "$r/lib/modules/$rel/$ko"
		printf '/lib/modules/%s/%s\n' "$rel" "$ko"
	done <"$t/modules" >"$r/etc/modules.load"
	(cd "$r" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --reproducible --quiet) >"$t/initramfs.img" ||
		{ rm -rf "$t"; die "cpio failed"; }
	mv "$t/initramfs.img" "$OUT"
	printf '%s\n' "$rel" >"$TBUILD/kernel-release"
	rm -rf "$t"
fi
printf '%s\n' "$ktree/boot/vmlinuz-$rel"
