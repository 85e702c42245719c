#!/bin/sh
# Run each libFuzzer target for SECONDS (default 60), one after another.
#
#   tests/fuzz/run.sh [SECONDS] [NAME...]     NAME: virtq req device
#
# Builds build/fuzz/fuzz_NAME with clang (-fsanitize=fuzzer,address,
# undefined) from tests/fuzz/fuzz_NAME.c, tests/support/*.c, virtio/*.c,
# blk/*.c and host/*.c.  Each run works in
# build/fuzz/work/NAME, reading the committed corpus tests/fuzz/corpus/NAME
# too; afterwards the union is minimised
# (-merge=1, edges only: -use_counters=0) into a fresh directory, which
# replaces the committed corpus, so new interesting inputs land there
# while it stays small; the work directory keeps everything for the next
# run.  Seeds (seed-*) are always kept.  A crash, leak or timeout leaves its input in
# build/fuzz/NAME-crash-* and makes the script exit non-zero.
set -u
cd "$(dirname "$0")/../.." || exit 2

secs=${1:-60}
[ $# -gt 0 ] && shift
names=${*:-virtq req device}
CC=${FUZZ_CC:-clang}
CFLAGS="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1
	-I. -D_GNU_SOURCE -std=gnu11 -pthread"
out=build/fuzz
mkdir -p "$out"

max_len() {
	case "$1" in
	virtq) echo 4096 ;;
	req) echo 1024 ;;
	*) echo 2048 ;;
	esac
}

build() {
	# shellcheck disable=SC2086
	$CC $CFLAGS "tests/fuzz/fuzz_$1.c" tests/support/*.c virtio/*.c \
		blk/*.c host/*.c -o "$out/fuzz_$1" -luring -lseccomp -lpthread
}

# Is file $1 a copy of one of the seeds in directory $2?
is_seed() {
	for s in "$2"/seed-*; do
		[ -e "$s" ] && cmp -s "$1" "$s" && return 0
	done
	return 1
}

# Replace the committed corpus by a minimised union of it and the work dir.
minimise() {
	corpus=tests/fuzz/corpus/$1
	fresh=$out/fresh/$1
	rm -rf "$fresh" && mkdir -p "$fresh"
	"$out/fuzz_$1" -merge=1 -use_counters=0 -max_len="$(max_len "$1")" \
		"$fresh" \
		"$corpus" "$out/work/$1" >"$out/$1-merge.log" 2>&1 || return 1
	find "$corpus" -type f ! -name 'seed-*' -delete
	for f in "$fresh"/*; do
		[ -e "$f" ] && ! is_seed "$f" "$corpus" && cp "$f" "$corpus/"
	done
	echo "fuzz $1: corpus now $(find "$corpus" -type f | wc -l) inputs"
}

fail=0
for n in $names; do
	echo "fuzz $n: building"
	build "$n" || { fail=1; continue; }
	mkdir -p "$out/work/$n" "tests/fuzz/corpus/$n"
	echo "fuzz $n: ${secs}s"
	if "$out/fuzz_$n" -max_total_time="$secs" -max_len="$(max_len "$n")" \
		-timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
		-artifact_prefix="$out/$n-" "$out/work/$n" \
		"tests/fuzz/corpus/$n" >"$out/$n.log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' \
			"$out/$n.log" | tail -2
		minimise "$n" || fail=1
	else
		echo "fuzz $n: FINDING, see $out/$n.log and $out/$n-crash-*"
		tail -40 "$out/$n.log"
		fail=1
	fi
done
exit $fail
