#!/bin/sh
# bench/hotplug.sh OUT ARCH CYCLES: what hot-plug costs, run inside the
# test host of ARCH (x86_64 or arm64; busybox sh is enough) by
# `bench/vmbench hotplug` (bench/vmharness/hotplug.py), which writes
# OUT/plan.txt and reads what this leaves in OUT/runs.jsonl.
#
# Part 1, times: one guest (2 vCPUs, launch disk ram:256M, --api, its 4
# empty slots) and 2 x CYCLES cycles, idle and under load by turns (load:
# fio randread 4 KiB QD16 through io_uring on the launch disk for the
# whole cycle).  Per cycle:
#   attach_ctl_ms  `vmm ctl attach ram:64M` until it answers
#   readable_ms    the same start until the guest, polling every 10 ms,
#                  has read /dev/vdb's first block with O_DIRECT and said so
#   detach_ms      `vmm ctl detach vdb` until it answers: the guest let
#                  the device go (pciehp's 5 s attention-button delay is
#                  in it) and the slot is free again
# Times are the test host's /proc/uptime (10 ms steps); the host looks
# for the guest's console lines every 20 ms.
#
# Part 2, the datapath with empty slots: each line "REPEAT SLOTS" of
# OUT/plan.txt, in its (shuffled) order, is one guest with --hotplug-slots
# SLOTS and a 2-queue ram:512M disk running guest/jobs/randread-4k.fio;
# its console (fio's JSON) goes to OUT/datapath/REPEAT-SLOTS.console.
#
# A test host that dies is booted again: what is recorded is skipped.
set -u
OUT=$1
ARCH=$2
CYCLES=$3
REPO=$(cd "$(dirname "$0")/.." && pwd)
case $ARCH in
x86_64)
	VMM=$REPO/build/vmm K=$REPO/build/guest/vmlinux I=$REPO/build/guest/initrd.img
	BASE="console=ttyS0 quiet reboot=k panic=-1" ;;
arm64)
	VMM=$REPO/build/arm64/vmm K=$REPO/build/guest/arm64/Image
	I=$REPO/build/guest/arm64/initrd.img BASE="console=ttyS0 quiet panic=-1" ;;
*) echo "hotplug.sh: no architecture $ARCH" >&2; exit 2 ;;
esac
RUNS=$OUT/runs.jsonl
mkdir -p "$OUT/datapath"
touch "$RUNS"

now_ms() {
	local up cs
	read -r up _ </proc/uptime
	cs=${up#*.}
	cs=${cs#0}
	echo $((${up%.*} * 1000 + 10 * cs))
}

. "$REPO/tests/testhost/wait.sh"


b64() { printf '%s' "$1" | base64 | tr -d '\n'; }

# The guest's side of part 1: odd cycles idle, even ones with fio on vda.
GUEST='i=1
while [ $i -le $((2 * CYCLES)) ]; do
	mode=idle
	if [ $((i % 2)) -eq 0 ]; then
		mode=load
		read -r r0 _ </sys/block/vda/stat
		fio --name=l --filename=/dev/vda --ioengine=io_uring --direct=1 --iodepth=16 --bs=4k --rw=randread --time_based --runtime=3600 --eta=never --output=/dev/null & f=$!
		n=0; r=$r0
		while [ "$r" = "$r0" ] && [ $n -lt 6000 ]; do sleep 0.01; n=$((n + 1)); read -r r _ </sys/block/vda/stat; done
	fi
	echo "READY $i $mode."
	n=0
	until dd if=/dev/vdb of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; do
		[ $n -ge 6000 ] && break
		sleep 0.01; n=$((n + 1))
	done
	echo "READABLE $i."
	n=0
	while [ -e /sys/block/vdb ] && [ $n -lt 12000 ]; do sleep 0.01; n=$((n + 1)); done
	[ $mode = load ] && { kill $f; wait $f; }
	echo "GONE $i."
	i=$((i + 1))
done'

measure_times() {
	local d=$OUT/times sock=/tmp/hotplug-bench.sock pid i mode t0 t1 t2 t3 t4 arc drc
	# Done once a guest ran every cycle; a guest that died is run again
	# (the analysis takes the last attempt's cycles).
	grep -q '"part": "times", "arch": "[a-z0-9_]*", "status": 0,' "$RUNS" && return 0
	rm -rf "$d"
	mkdir -p "$d"
	rm -f "$sock"
	date +%s >"$OUT/heartbeat"
	timeout -s TERM 900 "$VMM" run -v -c 2 -m 512 -k "$K" -i "$I" -d ram:256M,queues=2 --api "$sock" \
		-p "$BASE run64=$(b64 "CYCLES=$CYCLES; $GUEST")" </dev/null >"$d/console" 2>"$d/stderr" &
	pid=$!
	i=1
	while [ $i -le $((2 * CYCLES)) ]; do
		wait_vm $pid "$d/console" "^READY $i " 600 || break
		date +%s >"$OUT/heartbeat"
		mode=idle
		[ $((i % 2)) -eq 0 ] && mode=load
		t0=$(now_ms)
		"$VMM" ctl "$sock" attach ram:64M >>"$d/ctl" 2>&1
		arc=$?
		t1=$(now_ms)
		wait_vm $pid "$d/console" "^READABLE $i\." 120 || break
		t2=$(now_ms)
		t3=$(now_ms)
		"$VMM" ctl "$sock" detach vdb --timeout 60000 >>"$d/ctl" 2>&1
		drc=$?
		t4=$(now_ms)
		wait_vm $pid "$d/console" "^GONE $i\." 180 || break
		echo "{\"part\": \"cycle\", \"arch\": \"$ARCH\", \"cycle\": $i, \"mode\": \"$mode\", \"attach_rc\": $arc, \"detach_rc\": $drc, \"attach_ctl_ms\": $((t1 - t0)), \"readable_ms\": $((t2 - t0)), \"detach_ms\": $((t4 - t3))}" >>"$d/cycles.jsonl"
		i=$((i + 1))
	done
	[ $i -le $((2 * CYCLES)) ] && kill -TERM $pid 2>/dev/null
	wait $pid
	echo "{\"part\": \"times\", \"arch\": \"$ARCH\", \"status\": $?, \"cycles\": $((i - 1))}" >>"$RUNS"
	cat "$d/cycles.jsonl" >>"$RUNS" 2>/dev/null
	rm -f "$sock"
}

measure_datapath() {
	local r s c
	while read -r r s; do
		c=$OUT/datapath/$r-$s
		[ -e "$c.rc" ] && continue
		date +%s >"$OUT/heartbeat"
		timeout -s TERM 600 "$VMM" run -v -c 2 -m 512 -k "$K" -i "$I" --hotplug-slots "$s" \
			-d ram:512M,queues=2,serial=data -p "$BASE disk=data fio=randread-4k" \
			</dev/null >"$c.console" 2>"$c.stderr"
		echo $? >"$c.rc"
		echo "{\"part\": \"datapath\", \"arch\": \"$ARCH\", \"repeat\": $r, \"slots\": $s, \"status\": $(cat "$c.rc")}" >>"$RUNS"
	done <"$OUT/plan.txt"
}

measure_times
measure_datapath
touch "$OUT/done"
