#!/bin/sh
# Replay the committed corpus with the gcc builds of the fuzz targets:
#   tests/fuzz/replay.sh build/fuzz-replay/fuzz_NAME...
# Each runs on tests/fuzz/corpus/NAME; exits non-zero if any fails.
cd "$(dirname "$0")/../.." || exit 2
fail=0
for bin in "$@"; do
	name=$(basename "$bin")
	"$bin" "tests/fuzz/corpus/${name#fuzz_}" || {
		echo "replay failed: $bin" >&2
		fail=1
	}
done
exit $fail
