# tests/testhost/nullb.sh: null_blk devices made through configfs, for
# the shell scripts that run inside a test host (busybox sh is enough):
# bench/arm64/peers.sh and tests/e2e/arm64/cases.sh source it.
# bench/vmharness/nullblk.py does the same from Python.  The test hosts
# load configfs and null_blk with no device (tests/testhost/mkinitramfs.sh).

# nullb_make NAME MIB BS COMPLETION_NS: a memory-backed null_blk of MIB
# with BS-byte logical blocks, 2 hardware queues of 64 tags, each
# request completed by a timer COMPLETION_NS after it arrives; prints
# its /dev path.  One line on stderr and status 1 when it cannot.
nullb_make() {
	local c=/sys/kernel/config/nullb/$1 a dev
	[ -d /sys/kernel/config/nullb ] || {
		echo "nullb: no /sys/kernel/config/nullb (configfs and null_blk loaded?)" >&2
		return 1
	}
	nullb_remove "$1"
	mkdir "$c" || return 1
	for a in "size $2" "blocksize $3" "memory_backed 1" "queue_mode 2" "submit_queues 2" \
		"hw_queue_depth 64" "irqmode 2" "completion_nsec $4" "power 1"; do
		echo "${a#* }" >"$c/${a%% *}" || { nullb_remove "$1"; return 1; }
	done
	# Named after the configfs directory since Linux 5.19 or so; before,
	# nullb<index>.
	dev=/dev/$1
	[ -b "$dev" ] || dev=/dev/nullb$(cat "$c/index")
	[ -b "$dev" ] || { echo "nullb: $1 powered on, but no $dev" >&2; nullb_remove "$1"; return 1; }
	echo "$dev"
}

# nullb_remove NAME: the device gone (nothing if there is none).
nullb_remove() {
	local c=/sys/kernel/config/nullb/$1
	[ -d "$c" ] || return 0
	echo 0 >"$c/power" 2>/dev/null
	rmdir "$c"
}
