#!/bin/sh
# tests/e2e/arm64/cases.sh OUT [CASE...]: the arm64 end-to-end cases, run
# inside the arm64 test host (busybox sh; the x86 host's programs do not
# run there) by tests/e2e/arm64/test_arm64.py, which checks what each
# left in OUT/CASE/: console (the guest's), stderr (the VMM's), rc (its
# exit status), and what the case adds.  No CASE: every case.
#
# Each case boots Debian's arm64 kernel and the guest image
# (build/guest/arm64) under build/arm64/vmm with the sandbox on:
#   verify-ram-2q    2 vCPUs, a 2-queue RAM disk: fio verify, then the
#                    guest's /proc/interrupts (each queue on its own MSI);
#                    --stats written by the sandboxed main thread
#   verify-file-1q   1 vCPU, a file on the test host's tmpfs, 1 queue
#   verify-ram-1q    1 vCPU, a 1-queue RAM disk          (make e2e only)
#   verify-file-2q   2 vCPUs, a file with 2 queues       (make e2e only)
#   readonly         a file given with ro: the guest's write fails, the
#                    file is unchanged
#   console          input through the console while every thread of the
#                    VMM is under its seccomp filter; the guest echoes it
#   verify-intx      a guest without MSI-X: INTx on GIC SPIs (make e2e only)
#   sigterm          SIGTERM: a clean stop (143), each vCPU described
#   poweroff, reset  PSCI SYSTEM_OFF and SYSTEM_RESET: status 0 each
#   panic            the guest reports a panic through pvpanic on PCI:
#                    status 3
#   hotplug          --api (4 hot-plug slots by default): `vmm ctl
#                    attach ram:64M` gives the guest /dev/vdb through
#                    pciehp, fio writes and verifies it, `vmm ctl detach
#                    vdb` takes it out again (make e2e only)
set -u
OUT=$1
shift
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
VMM=$REPO/build/arm64/vmm
K=$REPO/build/guest/arm64/Image
I=$REPO/build/guest/arm64/initrd.img
BASE="console=ttyS0 quiet panic=-1"
CASE_TIMEOUT=${CASE_TIMEOUT:-900}
mkdir -p "$OUT"

b64() { printf '%s' "$1" | base64 | tr -d '\n'; }

# vm NAME STDIN ARGS...: run the VMM with ARGS; console, stderr and the
# exit status into OUT/NAME.
vm() {
	local name=$1 in=$2 d=$OUT/$1
	shift 2
	mkdir -p "$d"
	echo "arm64 e2e: $name: $*" >&2
	# A sign of life for the harness's stall detector at each VM's start;
	# a VM lasts CASE_TIMEOUT at most, less than its stall limit.
	date +%s >"$OUT/heartbeat"
	timeout -s TERM "$CASE_TIMEOUT" "$VMM" run -v -k "$K" -i "$I" "$@" \
		<"$in" >"$d/console" 2>"$d/stderr"
	echo $? >"$d/rc"
}

# What the verify cases run in the guest: fio's data check, then the
# interrupt counts.
VERIFY='cd /tmp && fio --eta=never --output=/tmp/fio.txt /jobs/verify.fio; echo "fio rc=$?"; grep -i error /tmp/fio.txt | head -5; cat /proc/interrupts'

verify() {
	local name=$1 cpus=$2
	shift 2
	vm "$name" /dev/null -c "$cpus" -m 512 -d ram:8M "$@" \
		--stats "$OUT/$name/stats.json" -p "$BASE run64=$(b64 "$VERIFY")"
}

case_verify_ram_2q() { verify verify-ram-2q 2 -d ram:128M; }
case_verify_ram_1q() { verify verify-ram-1q 1 -d ram:128M; }
case_verify_file_1q() {
	truncate -s 128M /tmp/disk1.img
	verify verify-file-1q 1 -d /tmp/disk1.img
	rm -f /tmp/disk1.img
}
case_verify_file_2q() {
	truncate -s 128M /tmp/disk2.img
	verify verify-file-2q 2 -d /tmp/disk2.img,queues=2
	rm -f /tmp/disk2.img
}

case_readonly() {
	local d=$OUT/readonly
	mkdir -p "$d"
	dd if=/dev/urandom of=/tmp/ro.img bs=1M count=4 2>/dev/null
	md5sum /tmp/ro.img >"$d/before"
	vm readonly /dev/null -c 1 -m 512 -d ram:8M -d /tmp/ro.img,ro \
		-p "$BASE run64=$(b64 'echo "ro=$(cat /sys/block/vdb/ro)"; dd if=/dev/zero of=/dev/vdb bs=4096 count=1 oflag=direct conv=fsync; echo "dd rc=$?"')"
	md5sum /tmp/ro.img >"$d/after"
	rm -f /tmp/ro.img
}

# Wait (at most S seconds) until FILE has a line matching PATTERN.
wait_for() {
	local i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		[ $i -ge $(($3 * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

case_console() {
	local d=$OUT/console pid t bg
	mkdir -p "$d"
	rm -f /tmp/console.in
	mkfifo /tmp/console.in
	vm console /tmp/console.in -c 2 -m 512 -d ram:8M \
		-p "$BASE run64=$(b64 'echo ready; read -r line; echo "got:$line"')" &
	bg=$!
	exec 3>/tmp/console.in
	pid=
	for t in $(seq 100); do
		pid=$(pidof vmm) && break
		sleep 0.1
	done
	# The guest waits for its line: every thread is set up by now.
	if wait_for "$d/console" '^ready' "$CASE_TIMEOUT"; then
		for t in /proc/$pid/task/*; do
			echo "$(cat "$t/comm") $(grep Seccomp: "$t/status")"
		done >"$d/threads"
	fi
	echo "hello from the host" >&3
	exec 3>&-
	wait $bg
	rm -f /tmp/console.in
}

# SIGTERM while the guest sleeps: a clean stop (143), and -v says what
# each vCPU was doing, read by the main thread under its filter.
case_sigterm() {
	local d=$OUT/sigterm pid t
	mkdir -p "$d"
	vm sigterm /dev/null -c 2 -m 512 -p "$BASE run64=$(b64 'echo sleeping; sleep 600')" &
	bg=$!
	if wait_for "$d/console" '^sleeping' "$CASE_TIMEOUT"; then
		kill -TERM "$(pidof vmm)"
	fi
	wait $bg
}

# A guest without MSI-X (pci=nomsi): the disks' interrupts through INTx,
# GIC SPIs the device tree's interrupt-map names.
case_verify_intx() {
	vm verify-intx /dev/null -c 1 -m 512 -d ram:8M -d ram:128M \
		-p "$BASE pci=nomsi run64=$(b64 "$VERIFY")"
}

case_poweroff() {
	vm poweroff /dev/null -c 2 -m 512 -p "$BASE run=\"poweroff -f\""
}
case_reset() {
	vm reset /dev/null -c 2 -m 512 -p "$BASE run=\"reboot -f\""
}
# Debian's arm64 kernel has no pvpanic driver (CONFIG_PVPANIC is not
# set: its panic becomes a PSCI reset with panic=-1), so the guest does
# what the driver would: it enables the pvpanic function (1b36:0011) and
# writes PANICKED (1) into its BAR.
PANIC='for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor):$(cat $d/device)" = 0x1b36:0x0011 ] && break; done; echo 1 >$d/enable; a=$(cut -d" " -f1 $d/resource | head -n 1); echo "pvpanic at $a"; devmem $a 8 1; sleep 5; echo "still running"'
case_panic() {
	vm panic /dev/null -c 1 -m 512 -p "$BASE run64=$(b64 "$PANIC")"
}

# Hot-plug: the guest says ready, the host attaches; the guest waits for
# vdb (each wait with a deadline), verifies 16 MiB on it and says so;
# the host detaches (attention button, pciehp's 5 s, power off), the
# guest waits for vdb to go, and powers off.
HOTPLUG='echo ready
n=0; while [ ! -b /dev/vdb ] && [ $n -lt 3000 ]; do sleep 0.1; n=$((n + 1)); done
echo "SEEN $(cat /sys/block/vdb/size 2>/dev/null)"
fio --eta=never --name=v --filename=/dev/vdb --ioengine=psync --direct=1 --bs=64k --rw=write --verify=crc32c --do_verify=1 --size=16M --output=/tmp/v.out
echo "VERIFY rc=$?"; grep -i error /tmp/v.out | head -5
n=0; while [ -e /sys/block/vdb ] && [ $n -lt 3000 ]; do sleep 0.1; n=$((n + 1)); done
[ -e /sys/block/vdb ] && echo STILL || echo GONE
dmesg | grep -iE "pciehp|pcieport|virtio|vdb|BAR|oops|BUG|WARNING|hung" | tail -n 40'
# wait_vm PID FILE PATTERN S: wait_for, but no longer than VM PID lives.
wait_vm() {
	local i=0
	while ! grep -q "$3" "$2" 2>/dev/null; do
		kill -0 "$1" 2>/dev/null || return 1
		[ $i -ge $(($4 * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

case_hotplug() {
	local d=$OUT/hotplug sock=/tmp/hp.sock bg
	mkdir -p "$d"
	rm -f "$sock"
	vm hotplug /dev/null -c 2 -m 512 -d ram:8M --api "$sock" \
		-p "$BASE run64=$(b64 "$HOTPLUG")" &
	bg=$!
	if wait_vm $bg "$d/console" '^ready' "$CASE_TIMEOUT"; then
		"$VMM" ctl "$sock" attach ram:64M >"$d/attach" 2>&1
		echo "rc=$?" >>"$d/attach"
		if wait_vm $bg "$d/console" '^VERIFY' "$CASE_TIMEOUT"; then
			"$VMM" ctl "$sock" detach vdb --timeout 120000 \
				>"$d/detach" 2>&1
			echo "rc=$?" >>"$d/detach"
		fi
	fi
	wait $bg
	rm -f "$sock"
}

ALL="verify-ram-2q verify-file-1q verify-ram-1q verify-file-2q verify-intx readonly console sigterm poweroff reset panic hotplug"
[ $# -gt 0 ] || set -- $ALL
for c in "$@"; do
	f=case_$(echo "$c" | tr - _)
	type "$f" >/dev/null 2>&1 || { echo "arm64 e2e: no case $c" >&2; exit 2; }
	"$f"
done
