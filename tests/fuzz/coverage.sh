#!/bin/sh
# Source-based coverage (clang) of each fuzz target over its committed
# corpus: the target built with replay_main.c (no libFuzzer) and
# -fprofile-instr-generate -fcoverage-mapping, run on
# tests/fuzz/corpus/NAME, then llvm-cov report on the module it fuzzes.
#
#   tests/fuzz/coverage.sh [NAME...]      FUZZ_OUT: as run.sh's
set -u
cd "$(dirname "$0")/../.." || exit 2
out=${FUZZ_OUT:-build/fuzz}/cov
CC=${FUZZ_CC:-clang}
CFLAGS="-fprofile-instr-generate -fcoverage-mapping -g -O0 -I. -D_GNU_SOURCE
	-std=gnu11 -pthread"
LIBS="-luring -lseccomp -ljson-c -lfdt -lpthread -lm"
all=$(for f in tests/fuzz/fuzz_*.c; do
	n=${f#tests/fuzz/fuzz_}; printf '%s ' "${n%.c}"; done)
names=${*:-$all}
mkdir -p "$out/obj"

# The files each target is about (what its figures count).
module() {
	case "$1" in
	virtq) echo virtio/virtq.c ;;
	req) echo blk/req.c ;;
	device) echo virtio/pci.c virtio/vdev.c virtio/virtq.c blk/req.c \
		blk/blk.c blk/queue.c blk/be_ram.c ;;
	api) echo api/commands.c ;;
	opts) echo blk/opts.c ;;
	boot) echo arch/x86/hw/boot.c arch/arm64/hw/image.c ;;
	ports) echo hw/serial.c arch/x86/hw/i8042.c arch/x86/hw/rtc.c \
		arch/x86/hw/pci_cf8.c hw/pci_host.c hw/pvpanic.c hw/bus.c \
		arch/arm64/hw/pci_ecam.c ;;
	fdt) echo arch/arm64/hw/fdt.c ;;
	pcieport) echo hw/pcie_port.c ;;
	esac
}

srcs=$(ls virtio/*.c blk/*.c hw/*.c host/*.c api/*.c arch/x86/hw/*.c \
	arch/arm64/hw/*.c tests/support/*.c)
# Everything again when a header changed (a struct's layout), else each
# object whose source is newer.
stamp=$out/obj/.stamp
[ -f "$stamp" ] && [ -n "$(find virtio blk hw host api arch tests/support \
	-name '*.h' -newer "$stamp")" ] && rm -f "$out"/obj/*.o
objs=""
for s in $srcs; do
	o="$out/obj/$(echo "$s" | tr / _).o"
	objs="$objs $o"
	[ "$o" -nt "$s" ] || $CC $CFLAGS -c "$s" -o "$o" || exit 1
done
touch "$stamp"
for n in $names; do
	# shellcheck disable=SC2086
	$CC $CFLAGS "tests/fuzz/fuzz_$n.c" tests/fuzz/replay_main.c $objs \
		-o "$out/cov_$n" $LIBS || exit 1
	rm -f "$out/$n.profraw"
	LLVM_PROFILE_FILE="$out/$n.profraw" "$out/cov_$n" \
		"tests/fuzz/corpus/$n" >/dev/null 2>&1
	llvm-profdata merge -sparse "$out/$n.profraw" -o "$out/$n.profdata"
	echo "== $n"
	# shellcheck disable=SC2046
	llvm-cov report "$out/cov_$n" -instr-profile="$out/$n.profdata" \
		$(module "$n") | tail -n +3
	echo "-- functions never reached:"
	# shellcheck disable=SC2046
	llvm-cov report -show-functions "$out/cov_$n" \
		-instr-profile="$out/$n.profdata" $(module "$n") |
		awk '$1 !~ /^(File|Name|-|TOTAL)/ && NF > 6 && $3 == $2 { print "   " $1 }'
done
