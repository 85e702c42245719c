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
#   hotplug          --api (4 hot-plug slots by default), three times:
#                    `vmm ctl attach ram:64M,serial=hpN` gives the guest
#                    /dev/vdb through pciehp, fio writes and verifies it,
#                    `vmm ctl detach vdb` takes it out again; the VMM's
#                    threads and fds as before; bad requests refused
#                    (one line, status 1, disks unchanged); first, in
#                    hotplug/full, --hotplug-slots 1: a second attach
#                    refused (make e2e only)
#   hotplug-io       detach while fio writes to vdb, orderly then
#                    --force: fio ends, vdb goes, no oops or hung task,
#                    the launch disk still verifies (make e2e only)
#   hotplug-rescan   the guest removes the attached disk's PCI function
#                    (info: attached, 0 queues active) and rescans (vdb
#                    back, its queues active), then detach (make e2e
#                    only)
#   hotplug-50       hotplug's cycles fifty times while the launch disk
#                    runs fio verify over and over (make e2e only)
#   sizes            8 vCPUs, 8 disks (RAM, files, a null_blk with
#                    O_DIRECT), one of 16 queues: fio verify on every
#                    disk and queue at once, each queue's interrupts on
#                    its own ITS MSI (make e2e only)
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
. "$REPO/tests/testhost/nullb.sh"
. "$REPO/tests/testhost/wait.sh"

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
	timeout -s TERM "${VM_LIMIT:-$CASE_TIMEOUT}" "$VMM" run -v -k "$K" -i "$I" "$@" \
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


# The hot-plug cases' guest side, ahead of each script: appear waits (at
# most 300 s) for /dev/vdb, vanish for /sys/block/vdb to go and says
# GONE or STILL (with its argument after); verify DEV SIZE is fio's
# crc32c write and check.  HPLOG ends each script: the kernel's lines
# about the slots and disks, and any oops, BUG, warning or hung task.
HPLIB='appear() { n=0; while [ ! -b /dev/vdb ] && [ $n -lt 3000 ]; do sleep 0.1; n=$((n + 1)); done; }
vanish() { n=0; while [ -e /sys/block/vdb ] && [ $n -lt 3000 ]; do sleep 0.1; n=$((n + 1)); done; [ -e /sys/block/vdb ] && echo "STILL$1" || echo "GONE$1"; }
verify() { fio --eta=never --name=v --filename=$1 --ioengine=psync --direct=1 --bs=64k --rw=write --verify=crc32c --do_verify=1 --size=$2 --output=/tmp/v.out; }
'
HPLOG='
dmesg | grep -iE "pciehp|virtio|vdb|oops|BUG|WARNING|hung|blocked" | tail -n 40'

# ctl_out FILE SOCK ARGS: `vmm ctl SOCK ARGS`, its output and status
# into FILE.
ctl_out() {
	local f=$1 sock=$2
	shift 2
	"$VMM" ctl "$sock" "$@" >"$f" 2>&1
	echo "rc=$?" >>"$f"
}

# disks DIR SOCK WHEN: the VMM's disk names (from `info`'s lines, one
# per disk: "vdb  ram  67108864 bytes  2 queues (2 active)") into
# DIR/disks, as "WHEN: vda vdb".
disks() {
	echo "$3: $("$VMM" ctl "$2" info | grep -o '^vd[a-z]*' | tr '\n' ' ')" >>"$1/disks"
}

# refuse DIR SOCK WHEN WANT ARGS: a request the VMM must refuse; its
# status, stderr's line count and first line into DIR/refusals:
# "WHEN ARGS|WANT|rc=N|lines=N|LINE".
refuse() {
	local d=$1 sock=$2 when=$3 want=$4
	shift 4
	"$VMM" ctl "$sock" "$@" >/dev/null 2>"$d/refused"
	echo "$when $*|$want|rc=$?|lines=$(wc -l <"$d/refused")|$(head -n 1 "$d/refused")" \
		>>"$d/refusals"
}

# refusals DIR SOCK WHEN: the bad requests, between two looks at the
# disk list (which they must leave as it was).
refusals() {
	disks "$1" "$2" "$3-before"
	refuse "$@" "No such file" attach /nonexistent/disk.img
	refuse "$@" "bad disk option" attach ram:64M,bogus=1
	refuse "$@" "given at launch" detach vda
	refuse "$@" "no disk 'vdq'" detach vdq
	refuse "$@" "no disk 'vdb'" detach vdb --force
	disks "$1" "$2" "$3-after"
}

# counts PID [LIKE]: the VMM's threads and open files ("T F"); with LIKE,
# given a few seconds to come back to it (a `vmm ctl` that just ended
# may still have its connection open in the VMM for a moment).
counts() {
	local i=0 c
	while c="$(ls /proc/$1/task | wc -l) $(ls /proc/$1/fd | wc -l)"; do
		[ -z "${2:-}" ] || [ "$c" = "$2" ] || [ $i -ge 50 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	echo "$c"
}

# Hot-plug, three times in a row: the guest says READYi:, the host
# attaches ram:64M,serial=hpi; the guest waits for vdb (64 MiB, serial
# hpi), verifies 16 MiB on it and says VERIFYi; the host detaches
# (attention button, pciehp's 5 s, power off), the guest waits for vdb
# to go.  The VMM's threads and fds before the first attach and after
# each detach into counts; the bad requests (refusals) before the first
# attach and after the first detach.
# hp_cycles N: that guest side, N cycles.
hp_cycles() {
	printf '%s' 'i=1; while [ $i -le '"$1"' ]; do
echo "READY$i:"; appear
echo "SEEN$i $(cat /sys/block/vdb/size) $(cat /sys/block/vdb/serial)"
verify /dev/vdb 16M; echo "VERIFY$i rc=$?"
vanish $i; i=$((i + 1)); done'
}
HOTPLUG="$HPLIB$(hp_cycles 3)$HPLOG"
# hotplug-50: fifty cycles while the launch disk (vda) runs fio verify
# over and over, each pass saying BESIDE rc=N.
HOTPLUG_50="$HPLIB"'( while [ ! -e /tmp/stop ]; do verify /dev/vda 8M; echo "BESIDE rc=$?"; done ) & b=$!
'"$(hp_cycles 50)"'
touch /tmp/stop; wait $b'"$HPLOG"

# One slot (--hotplug-slots 1), in use: a second attach is refused; the
# VMM ends on `vmm ctl quit` (143, as on SIGTERM).  Into hotplug/full.
FULL="$HPLIB"'echo ready; appear; echo "SEEN $(cat /sys/block/vdb/size)"; sleep 600'
hotplug_full() {
	local d=$OUT/hotplug/full sock=/tmp/hp.sock bg
	mkdir -p "$d"
	rm -f "$sock"
	vm hotplug/full /dev/null -c 1 -m 512 -d ram:8M --api "$sock" \
		--hotplug-slots 1 -p "$BASE run64=$(b64 "$FULL")" &
	bg=$!
	if wait_vm $bg "$d/console" '^ready' "$CASE_TIMEOUT"; then
		ctl_out "$d/attach" "$sock" attach ram:64M
		if wait_vm $bg "$d/console" '^SEEN' "$CASE_TIMEOUT"; then
			disks "$d" "$sock" full-before
			refuse "$d" "$sock" full "no free hot-plug slot (1, all in use)" attach ram:64M
			disks "$d" "$sock" full-after
		fi
	fi
	ctl_out "$d/quit" "$sock" quit
	wait $bg
	rm -f "$sock"
}

case_hotplug() {
	local d=$OUT/hotplug sock=/tmp/hp.sock
	# Anew if a test host that died runs it again; full first, as the
	# case is done once its (last) VM's rc is there.
	rm -rf "$d"
	hotplug_full
	rm -f "$sock"
	vm hotplug /dev/null -c 2 -m 512 -d ram:8M --api "$sock" \
		-p "$BASE run64=$(b64 "$HOTPLUG")" &
	host_cycles "$d" "$sock" $! 3 refusals
}

# host_cycles DIR SOCK BG N [refusals]: the host's side of N cycles with
# the VM BG: attach at READYi, detach at VERIFYi, the VMM's threads and
# fds into DIR/counts (before the first attach, after each detach); with
# "refusals", the bad requests before the first attach and after the
# first detach.
host_cycles() {
	local d=$1 sock=$2 bg=$3 n=$4 refuse=${5:-} i=1 pid start
	while [ $i -le "$n" ]; do
		wait_vm $bg "$d/console" "^READY$i:" "$CASE_TIMEOUT" || break
		if [ $i = 1 ]; then
			pid=$(pidof vmm)
			start=$(counts "$pid")
			echo "start $start" >"$d/counts"
			[ -n "$refuse" ] && refusals "$d" "$sock" start
		fi
		date +%s >"$OUT/heartbeat"
		ctl_out "$d/attach$i" "$sock" attach "ram:64M,serial=hp$i"
		wait_vm $bg "$d/console" "^VERIFY$i " "$CASE_TIMEOUT" || break
		ctl_out "$d/detach$i" "$sock" detach vdb --timeout 120000
		echo "detach$i $(counts "$pid" "$start")" >>"$d/counts"
		[ $i = 1 ] && [ -n "$refuse" ] && refusals "$d" "$sock" after
		i=$((i + 1))
	done
	wait $bg
	rm -f "$sock"
}

case_hotplug_50() {
	local d=$OUT/hotplug-50 sock=/tmp/hp.sock
	rm -rf "$d"
	mkdir -p "$d"
	rm -f "$sock"
	# Longer than one case's limit: the harness's stall detector sees
	# the heartbeat of every cycle.
	VM_LIMIT=$((2 * CASE_TIMEOUT))
	vm hotplug-50 /dev/null -c 2 -m 512 -d ram:64M --api "$sock" \
		-p "$BASE run64=$(b64 "$HOTPLUG_50")" &
	VM_LIMIT=
	host_cycles "$d" "$sock" $! 50
}

# Detach while fio writes to vdb (libaio, 16 deep, for 30 s), orderly
# (safe) and then forced (force), a fresh attach before each: the guest
# says READY-m, the host attaches; the guest starts fio and, once vdb's
# write count moves (at most 60 s), says WRITING-m; the host detaches.
# fio must end (any status) within 60 s: else the guest says FIO-STUCK-m, shows its blocked tasks (sysrq
# w) and resets at once (sysrq b: `poweroff -f` syncs and shuts devices
# down, which blocks behind the stuck removal).  Then fio verify on the
# launch disk (LAUNCH).
HOTPLUG_IO="$HPLIB"'for m in safe force; do
echo "READY-$m"; appear; echo "SEEN-$m $(cat /sys/block/vdb/size)"
fio --eta=never --name=w --filename=/dev/vdb --ioengine=libaio --iodepth=16 --direct=1 --bs=4k --rw=randwrite --time_based --runtime=30 --output=/tmp/w.out & f=$!
n=0; w=0; while [ "$w" = 0 ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); read -r _ _ _ _ w _ </sys/block/vdb/stat; done
( sleep 60; echo "FIO-STUCK-$m"; echo w >/proc/sysrq-trigger; sleep 5; dmesg | tail -n 60; echo b >/proc/sysrq-trigger ) & w=$!
echo "WRITING-$m"
wait $f; echo "FIO-$m rc=$?"; kill $w
vanish "-$m"; done
verify /dev/vda 8M; echo "LAUNCH rc=$?"'"$HPLOG"

case_hotplug_io() {
	local d=$OUT/hotplug-io sock=/tmp/hp.sock bg m
	rm -rf "$d"
	mkdir -p "$d"
	rm -f "$sock"
	vm hotplug-io /dev/null -c 2 -m 512 -d ram:8M --api "$sock" \
		-p "$BASE run64=$(b64 "$HOTPLUG_IO")" &
	bg=$!
	for m in safe force; do
		wait_vm $bg "$d/console" "^READY-$m" "$CASE_TIMEOUT" || break
		ctl_out "$d/attach-$m" "$sock" attach ram:64M
		wait_vm $bg "$d/console" "^WRITING-$m" "$CASE_TIMEOUT" || break
		if [ $m = safe ]; then
			ctl_out "$d/detach-$m" "$sock" detach vdb --timeout 120000
		else
			ctl_out "$d/detach-$m" "$sock" detach vdb --force
		fi
	done
	wait $bg
	rm -f "$sock"
}

# A launch disk with `hotplug` (vdb, serial boot) sits in a slot of its
# own: the guest's pciehp enables it at boot (SEEN1, VERIFY1); the host
# detaches it while fio writes to it (refusing vda's detach first, with
# the way to make it detachable) and fio ends; the freed slot takes an
# attach (serial again: SEEN2, VERIFY2), which is detached in turn.
HOTPLUG_LAUNCH="$HPLIB"'appear; echo "SEEN1 $(cat /sys/block/vdb/size) $(cat /sys/block/vdb/serial)"
verify /dev/vdb 16M; echo "VERIFY1 rc=$?"
fio --eta=never --name=w --filename=/dev/vdb --ioengine=libaio --iodepth=16 --direct=1 --bs=4k --rw=randwrite --time_based --runtime=30 --output=/tmp/w.out & f=$!
n=0; w=0; while [ "$w" = 0 ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); read -r _ _ _ _ w _ </sys/block/vdb/stat; done
echo WRITING; wait $f; echo "FIO rc=$?"; vanish 1
echo READY2; appear; echo "SEEN2 $(cat /sys/block/vdb/size) $(cat /sys/block/vdb/serial)"
verify /dev/vdb 16M; echo "VERIFY2 rc=$?"; vanish 2
verify /dev/vda 8M; echo "LAUNCH rc=$?"'"$HPLOG"

case_hotplug_launch() {
	local d=$OUT/hotplug-launch sock=/tmp/hp.sock bg
	rm -rf "$d"
	mkdir -p "$d"
	rm -f "$sock"
	vm hotplug-launch /dev/null -c 2 -m 512 -d ram:16M \
		-d ram:64M,hotplug,serial=boot --api "$sock" \
		-p "$BASE run64=$(b64 "$HOTPLUG_LAUNCH")" &
	bg=$!
	if wait_vm $bg "$d/console" '^WRITING' "$CASE_TIMEOUT"; then
		ctl_out "$d/info" "$sock" info
		refuse "$d" "$sock" launch "hotplug" detach vda
		ctl_out "$d/detach1" "$sock" detach vdb --timeout 120000
		if wait_vm $bg "$d/console" '^READY2' "$CASE_TIMEOUT"; then
			ctl_out "$d/attach2" "$sock" attach ram:64M,serial=again
			wait_vm $bg "$d/console" '^VERIFY2 ' "$CASE_TIMEOUT" &&
				ctl_out "$d/detach2" "$sock" detach vdb --timeout 120000
		fi
	fi
	wait $bg
	rm -f "$sock"
}

# The guest lets the attached disk go on its own (sysfs remove of its PCI
# function) and says GONE-removed; the host's `info` then (still
# attached, no queue active) into info-removed, and a line on the
# guest's console (through a FIFO) lets it go on: a PCI rescan, vdb back
# and read, RESCANNED; `info` again into info-rescanned; resize, limit,
# pause and resume on it (info-resized after), and the host detaches.
HOTPLUG_RESCAN="$HPLIB"'echo ready; appear
p=$(readlink -f /sys/block/vdb/device/..); echo "FUNCTION ${p##*/}"
echo 1 >$p/remove; vanish -removed
read -t 300 -r go; echo 1 >/sys/bus/pci/rescan; appear
dd if=/dev/vdb of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null; echo "READ rc=$?"
echo RESCANNED; vanish -detached'"$HPLOG"

case_hotplug_rescan() {
	local d=$OUT/hotplug-rescan sock=/tmp/hp.sock in=/tmp/hp.in bg
	rm -rf "$d"
	mkdir -p "$d"
	rm -f "$sock" "$in"
	mkfifo "$in"
	vm hotplug-rescan "$in" -c 2 -m 512 -d ram:8M --api "$sock" \
		-p "$BASE run64=$(b64 "$HOTPLUG_RESCAN")" &
	bg=$!
	exec 3>"$in"
	if wait_vm $bg "$d/console" '^ready' "$CASE_TIMEOUT"; then
		ctl_out "$d/attach" "$sock" attach ram:64M
		if wait_vm $bg "$d/console" '^[A-Z]*-removed' "$CASE_TIMEOUT"; then
			ctl_out "$d/info-removed" "$sock" info
			echo go >&3
			if wait_vm $bg "$d/console" '^RESCANNED' "$CASE_TIMEOUT"; then
				ctl_out "$d/info-rescanned" "$sock" info
				# The attached disk takes the other commands as
				# a launch disk does.
				ctl_out "$d/resize" "$sock" resize vdb 96M
				ctl_out "$d/limit" "$sock" limit vdb iops=5000
				ctl_out "$d/pause" "$sock" pause vdb
				ctl_out "$d/resume" "$sock" resume vdb
				ctl_out "$d/info-resized" "$sock" info
				ctl_out "$d/detach" "$sock" detach vdb --timeout 120000
			fi
		fi
	fi
	exec 3>&-
	wait $bg
	rm -f "$sock" "$in"
}

# Sizes users run: 8 vCPUs and 8 disks (RAM disks, files on the test
# host's tmpfs, a null_blk opened with O_DIRECT), one with 16 queues, the
# others one per vCPU; fio verify on every disk at once, a job on every
# vCPU (blk-mq sends vCPU i's requests to queue i); then each disk's
# outcome, its queue count and each queue's interrupts ("irq NAME N
# NUMBER CHIP": N summed over the CPUs, CHIP ITS-MSI or nothing).
SIZES='n=$(nproc); pids=
for d in /sys/block/vd*; do
fio --name=v --filename=/dev/${d##*/} --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k --iodepth=8 --size=2m --offset_increment=2m --numjobs=$n --cpus_allowed=0-$((n - 1)) --cpus_allowed_policy=split --verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 --group_reporting --output=/tmp/${d##*/}.out >/dev/null 2>&1 &
pids="$pids $!"; done
bad=0; for p in $pids; do wait $p || bad=$((bad + 1)); done
for d in /sys/block/vd*; do
echo "verify ${d##*/}: $(grep -c "err= 0" /tmp/${d##*/}.out) clean, $(grep -o "err=[ 0-9]*" /tmp/${d##*/}.out | sort -u | tr "\n" " ")"
echo "queues ${d##*/}: $(ls -d $d/mq/* | wc -l)"; done
echo "failed fio runs: $bad"
grep virtio /proc/interrupts | sed "s/^ *//" | while read -r irq rest; do
t=0; for c in $rest; do case $c in *[!0-9]*) break ;; esac; t=$((t + c)); done
echo "irq ${rest##* } $t ${irq%:} $(echo "$rest" | grep -o ITS-MSI)"; done'

case_sizes() {
	local d=$OUT/sizes dev i args="-d ram:64M,queues=16"
	mkdir -p "$d"
	if dev=$(nullb_make nullbsizes 64 512 10000 2>"$d/nullb"); then
		args="$args -d $dev,direct,queues=8"
	else
		args="$args -d ram:24M,queues=8"
	fi
	for i in 2 3 4 5 6 7; do
		if [ $((i % 2)) = 1 ]; then
			args="$args -d ram:24M,queues=8"
		else
			truncate -s 24M /tmp/sizes$i.img
			args="$args -d /tmp/sizes$i.img,queues=8"
		fi
	done
	echo "$args" >"$d/disks"
	vm sizes /dev/null -c 8 -m 1024 $args -p "$BASE run64=$(b64 "$SIZES")"
	rm -f /tmp/sizes*.img
	nullb_remove nullbsizes
}

# sizes_n N: N vCPUs; a RAM disk with the default queue count (one per
# vCPU) and a file with 4 queues (several vCPUs to a queue when N > 4);
# the same fio verify and counts as sizes.
sizes_n() {
	local n=$1 d=$OUT/sizes-$1
	mkdir -p "$d"
	truncate -s 48M /tmp/sizesn.img
	vm "sizes-$n" /dev/null -c "$n" -m 1024 -d ram:64M -d /tmp/sizesn.img,queues=4 \
		-p "$BASE run64=$(b64 "$SIZES")"
	rm -f /tmp/sizesn.img
}
case_sizes_4() { sizes_n 4; }
case_sizes_16() { sizes_n 16; }

ALL="verify-ram-2q verify-file-1q verify-ram-1q verify-file-2q verify-intx readonly console sigterm poweroff reset panic hotplug hotplug-io hotplug-rescan hotplug-launch hotplug-50 sizes sizes-4 sizes-16"
[ $# -gt 0 ] || set -- $ALL
for c in "$@"; do
	f=case_$(echo "$c" | tr - _)
	type "$f" >/dev/null 2>&1 || { echo "arm64 e2e: no case $c" >&2; exit 2; }
	"$f"
done
