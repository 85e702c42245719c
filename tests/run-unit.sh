#!/bin/sh
# Run test binaries; each prints cmocka's own summary.  An argument
# "replay:BIN" replays the fuzz corpus tests/fuzz/corpus/NAME with BIN.
# Ends with one "N passed, N failed" line counting binaries.
# Each binary runs under a timeout (UNIT_TIMEOUT seconds, default 600:
# the sanitizer builds are slow), so a hang fails fast instead of eating
# CI's time; one that takes 5 s or more says how long (where make test's
# minutes go).  See tests/tsan.supp (only TSan builds read it).
export TSAN_OPTIONS="${TSAN_OPTIONS:-suppressions=$(dirname "$0")/tsan.supp halt_on_error=1}"
pass=0
fail=0
failed=""
for t in "$@"; do
	case "$t" in
	replay:*)
		bin=${t#replay:}
		name=$(basename "$bin")
		set -- "$bin" "tests/fuzz/corpus/${name#fuzz_}"
		;;
	*)
		set -- "$t"
		;;
	esac
	# UNIT_RUNNER: a prefix, such as a loader with its library folder
	# for binaries whose libraries are not installed (tests/arm64-unit.sh).
	start=$(date +%s)
	# shellcheck disable=SC2086
	if timeout -k 10 "${UNIT_TIMEOUT:-600}" ${UNIT_RUNNER:-} "$@"; then
		pass=$((pass + 1))
	else
		rc=$?
		[ "$rc" -ne 124 ] || echo "$1: timed out after ${UNIT_TIMEOUT:-600} s"
		fail=$((fail + 1))
		failed="$failed $1"
	fi
	took=$(($(date +%s) - start))
	[ "$took" -lt 5 ] || echo "unit: $(basename "$1") took $took s"
done
[ -z "$failed" ] || echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
