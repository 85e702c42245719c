#!/bin/sh
# tests/smoke/mkguest.sh OUT GUEST...: each GUEST of guest.S (RESET,
# ECHO, IFTRAP, ...) assembled with -DGUEST_<GUEST> into OUT/GUEST.bin
# (the flat code) and OUT/GUEST.img (that code in a minimal bzImage,
# mkimage.py).  Used by the smoke tests and by bench/vmbench lockup.
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=$1
shift
mkdir -p "$out"
for g in "$@"; do
	${CC:-cc} -c -DGUEST_$g -x assembler-with-cpp "$here/guest.S" -o "$out/$g.o" &&
	objcopy -O binary -j .text "$out/$g.o" "$out/$g.bin" &&
	python3 "$here/mkimage.py" "$out/$g.bin" "$out/$g.img" ||
		{ echo "cannot build guest $g" >&2; exit 1; }
done
