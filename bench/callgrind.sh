#!/bin/sh
# Instructions per request on the device path, under callgrind.
#
# Runs a fixed, deterministic devbench workload (RAM backend, 4 KiB
# random reads, queue depth 32, 1 queue, batch off, fixed seed, no fio)
# with --separate-threads=yes, finds the profile of the iothread (the
# thread that ran blk_queue_thread) and prints its total instructions
# (Ir) divided by the requests, plus the top functions of that thread.
# The iothread's Ir covers everything the device does per request: ring
# walk, parsing, the backend's copy, used ring, notifications and the
# syscall wrappers (not the kernel).
#
#   bench/callgrind.sh [REQUESTS] [FILTER]    defaults: 20000 ram-randread-qd32-1q-off
#   KEEP=1 bench/callgrind.sh                 keep the profiles (path printed)
#   LATENCY=1 bench/callgrind.sh              the disk keeps its latency
#                                             breakdown (as vmm run -v, --stats)
#   LIMIT=1 bench/callgrind.sh                the disk has a rate limit far
#                                             above the rate (every request
#                                             takes the limited path)
set -eu

cd "$(dirname "$0")/.."
REQUESTS=${1:-20000}
FILTER=${2:-ram-randread-qd32-1q-off}
BIN=${DEVBENCH:-build/bench/devbench}
LAT=${LATENCY:+--latency}${LIMIT:+ --limit}

command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not installed" >&2; exit 1; }
[ -x "$BIN" ] || make -s "$BIN"

OUT=$(mktemp -d /tmp/callgrind.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$OUT"' EXIT

valgrind --tool=callgrind --separate-threads=yes \
	--callgrind-out-file="$OUT/cg.out" \
	"$BIN" --filter "$FILTER" --requests "$REQUESTS" --seed 1 \
	--no-fio --no-prefill --size 64M $LAT >"$OUT/devbench.txt" 2>"$OUT/valgrind.txt" || {
	cat "$OUT/valgrind.txt" "$OUT/devbench.txt" >&2
	exit 1
}

# In --requests mode devbench completes exactly REQUESTS requests.
REQS=$REQUESTS

total_ir() {
	awk '/^(totals|summary):/ { print $2; exit }' "$1"
}

# The iothread's profile is the busiest of those whose functions include
# blk_queue_thread: a disk spawns one iothread per queue it offers, and
# the idle ones have profiles of their own.  --no-prefill: valgrind
# reuses the ids of exited threads, so an earlier iothread (the RAM
# disk's prefill) would land in the same profile.  Reads of never-written
# RAM-disk pages cost the same instructions (the page faults are the
# kernel's, not counted).
IOT=""
BEST=-1
for f in "$OUT"/cg.out-*; do
	grep -q 'blk_queue_thread' "$f" || continue
	ir=$(total_ir "$f")
	if [ "$ir" -gt "$BEST" ]; then
		IOT="$f"
		BEST=$ir
	fi
done
[ -n "$IOT" ] || { echo "callgrind.sh: no iothread profile found" >&2; exit 1; }

IR=$(total_ir "$IOT")
ALL=0
for f in "$OUT"/cg.out-*; do
	ALL=$((ALL + $(total_ir "$f")))
done

echo "workload: $BIN --filter $FILTER --requests $REQUESTS --seed 1 --no-fio --no-prefill --size 64M${LAT:+ $LAT}"
echo "iothread profile: $(basename "$IOT")"
echo "iothread instructions (Ir): $IR"
echo "all threads (Ir):           $ALL"
awk -v ir="$IR" -v all="$ALL" -v n="$REQS" 'BEGIN {
	printf "device path: %.0f instructions per request (iothread Ir / %d requests)\n", ir / n, n
	printf "whole process: %.0f instructions per request\n", all / n
}'
echo
echo "top functions of the iothread (self Ir per request; FILE:FUNCTION is"
echo "FILE's code where it runs, inlined into FUNCTION when built with LTO):"
callgrind_annotate --threshold=99.5 --auto=no "$IOT" 2>/dev/null |
	awk -v n="$REQS" '
	/file:function/ { table = 1; next }
	!table || /^-+$/ { next }
	NF == 0 { if (shown) exit; next }
	$1 ~ /^[0-9,]+$/ {
		ir = $1; gsub(",", "", ir)
		for (i = 2; i <= NF && $i !~ /%\)$/; i++)
			;
		name = $(i + 1); sub(/^\.\//, "", name)
		printf "  %8.0f  %s\n", ir / n, name
		shown = 1
	}' | sed -n '1,20p'
[ -z "${KEEP:-}" ] || echo "profiles kept in $OUT"
