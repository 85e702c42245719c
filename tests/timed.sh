#!/bin/sh
# tests/timed.sh STEP COMMAND...: run COMMAND; then print, and add to
# build/test-times.txt, how long STEP took, so that every `make test`
# log (CI's too) says where its minutes went.  A step timed inside
# another is listed indented under it and not added to the total.
# Exits with COMMAND's status.  tests/timed.sh --summary prints the
# table and starts it anew.
set -u
times=${TEST_TIMES:-$(cd "$(dirname "$0")/.." && pwd)/build/test-times.txt}
if [ "${1:-}" = --summary ]; then
	[ -f "$times" ] || exit 0
	echo "make test, step by step (seconds; indented: part of the step above):"
	# Lines are "DEPTH SECONDS STEP", written as each step ends: a step's
	# parts come before it.  Print each step, then its parts.
	awk '{ d = $1; s = $2; $1 = ""; $2 = ""; sub(/^  /, "")
	       line = sprintf("%" (6 + 2 * d) "d  %s\n", s, $0) part[d + 1]
	       part[d + 1] = ""
	       if (d == 0) { printf "%s", line; total += s } else part[d] = part[d] line }
	     END { printf "%6d  in all\n", total }' "$times"
	rm -f "$times"
	exit 0
fi
step=$1
shift
depth=${TIMED_DEPTH:-0}
start=$(date +%s)
TIMED_DEPTH=$((depth + 1)) TEST_TIMES=$times "$@"
rc=$?
took=$(($(date +%s) - start))
mkdir -p "$(dirname "$times")"
printf '%d %d %s%s\n' "$depth" "$took" "$step" "$([ "$rc" -eq 0 ] || echo " (status $rc)")" >>"$times"
echo "timed: $step took $took s"
exit "$rc"
