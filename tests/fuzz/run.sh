#!/bin/sh
# Build every libFuzzer target with clang and run each for SECONDS
# (default 60), FUZZ_JOBS at a time (default: one per CPU).
#
#   tests/fuzz/run.sh [SECONDS] [NAME...]     NAME: fuzz_NAME.c's NAME
#
# FUZZ_OUT (default build/fuzz): the clang build and the work, a
# directory of its own.  FUZZ_SMOKE=1: a smoke test (make fuzz-smoke):
# each target runs from the committed corpus only, in a fresh work
# directory, and the corpus is left as it is.
#
# The code under test (virtio/ blk/ hw/ host/ api/ and both machines'
# pure models, arch/*/hw/) is built once into $FUZZ_OUT/libfuzzcore.a
# with clang -fsanitize=fuzzer-no-link,address,undefined; each target
# tests/fuzz/fuzz_NAME.c is linked against it.  Without FUZZ_SMOKE each
# run works in $FUZZ_OUT/work/NAME, reading the committed corpus
# tests/fuzz/corpus/NAME too; afterwards the union is minimised
# (-merge=1, edges only: -use_counters=0) into a fresh directory, which
# replaces the committed corpus, so new interesting inputs land there
# while it stays small; the work directory keeps everything for the next
# run.  Seeds (seed-*) and regression inputs (crash-*) are always kept.
# A crash, leak or timeout leaves its input in $FUZZ_OUT/NAME-crash-* and
# makes the script exit non-zero.
set -u
cd "$(dirname "$0")/../.." || exit 2

secs=${1:-60}
[ $# -gt 0 ] && shift
all=$(for f in tests/fuzz/fuzz_*.c; do
	n=${f#tests/fuzz/fuzz_}; printf '%s ' "${n%.c}"; done)
names=${*:-$all}
CC=${FUZZ_CC:-clang}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
CFLAGS="$SAN -g -O1 -I. -D_GNU_SOURCE -std=gnu11 -pthread ${FUZZ_CFLAGS:-}"
LIBS="-luring -lseccomp -ljson-c -lfdt -lpthread -lm"
out=${FUZZ_OUT:-build/fuzz}
smoke=${FUZZ_SMOKE:-}
# FUZZ_JOBS compilers, and targets, at a time (default: one per CPU).
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
mkdir -p "$out/obj"

max_len() {
	case "$1" in
	virtq) echo 4096 ;;
	req) echo 1024 ;;
	boot) echo 65536 ;;
	*) echo 2048 ;;
	esac
}

# The library, rebuilt when a source or header is newer than it.
lib=$out/libfuzzcore.a
srcs=$(ls virtio/*.c blk/*.c hw/*.c host/*.c api/*.c arch/x86/hw/*.c \
	arch/arm64/hw/*.c tests/support/*.c)
build_lib() {
	if [ -f "$lib" ] && [ -z "$(find virtio blk hw host api arch/x86/hw \
		arch/arm64/hw tests/support -name '*.[ch]' -newer "$lib")" ]
	then
		return 0
	fi
	echo "fuzz: building $lib"
	rm -f "$lib"
	# shellcheck disable=SC2086
	printf '%s\n' $srcs | xargs -P "$jobs" -I{} sh -c '
		o="$1/obj/$(echo "$2" | tr / _).o"
		$3 $4 -fsanitize=fuzzer-no-link -c "$2" -o "$o"' \
		sh "$out" {} "$CC" "$CFLAGS" || return 1
	# shellcheck disable=SC2046
	ar rcs "$lib" $(for s in $srcs; do
		echo "$out/obj/$(echo "$s" | tr / _).o"; done)
}

build() {
	# shellcheck disable=SC2086
	$CC $CFLAGS -fsanitize=fuzzer "tests/fuzz/fuzz_$1.c" "$lib" \
		-o "$out/fuzz_$1" $LIBS
}

# Is file $1 a copy of one of the kept inputs in directory $2?
is_kept() {
	for s in "$2"/seed-* "$2"/crash-*; do
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
	find "$corpus" -type f ! -name 'seed-*' ! -name 'crash-*' -delete
	for f in "$fresh"/*; do
		[ -e "$f" ] && ! is_kept "$f" "$corpus" && cp "$f" "$corpus/"
	done
	echo "fuzz $1: corpus now $(find "$corpus" -type f | wc -l) inputs"
}

# One target: build it, run it, minimise its corpus (not in a smoke
# test); status 1 on a failed build, a finding or a failed merge.
one() {
	n=$1
	echo "fuzz $n: building"
	build "$n" || { echo "fuzz $n: build FAILED"; return 1; }
	work=$out/work/$n
	[ -n "$smoke" ] && work=$out/smoke/$n && rm -rf "$work"
	mkdir -p "$work" "tests/fuzz/corpus/$n"
	echo "fuzz $n: ${secs}s"
	if "$out/fuzz_$n" -max_total_time="$secs" -max_len="$(max_len "$n")" \
		-timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
		-artifact_prefix="$out/$n-" "$work" \
		"tests/fuzz/corpus/$n" >"$out/$n.log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' \
			"$out/$n.log" | tail -2
		if [ -z "$smoke" ]; then
			minimise "$n" || return 1
		fi
	else
		echo "fuzz $n: FINDING, see $out/$n.log and $out/$n-crash-*"
		tail -40 "$out/$n.log"
		return 1
	fi
}

build_lib || { echo "fuzz: cannot build $lib"; exit 1; }
# JOBS targets at a time: each fuzzer is one process on one CPU, and
# each still runs its SECONDS; the targets' outputs are printed whole,
# in order, as each batch ends.
fail=0
batch=
flush() {
	wait
	for b in $batch; do
		cat "$out/$b.out"
		[ "$(cat "$out/$b.status")" = 0 ] || fail=1
	done
	batch=
}
running=0
for n in $names; do
	{ one "$n"; echo $? >"$out/$n.status"; } >"$out/$n.out" 2>&1 &
	batch="$batch $n"
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		flush
		running=0
	fi
done
flush
exit $fail
