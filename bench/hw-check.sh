#!/bin/bash
# bench/hw-check.sh [OUTDIR]: the `peers` and `scaling` scenarios of
# bench/vmbench on a machine with hardware KVM, in under 8 minutes, with
# every table and plot left in one directory.
#
# For a machine that is not the development machine: hardware
# virtualization (Intel VT-x or AMD-V) behind /dev/kvm, Debian 12 with
# tests/deps.sh's packages, 4 or more cores.  It does, in one run:
#   1. /dev/kvm: present, readable and writable by us;
#   2. its speed: build/vmm probe (a guest loop; exit 0 = fast,
#      i.e. not the emulated kvm_pvm of the development machines); a slow
#      or missing KVM stops here (status 3): use bench/vmbench, which goes
#      through the test host, on such a machine;
#   3. builds what is missing: build/vmm (make), the guest (guest/build.sh);
#   4. bench/vmbench --scenario peers   (qemu, vmm, host; randread-4k and
#      randwrite-4k; 1 and 2 queues; R=3; 4 s per fio point);
#   5. bench/vmbench --scenario scaling (qemu, vmm; randread-4k; 1..4
#      guests at once; R=3; 4 s per point).
# The whole run has 8 minutes (HWCHECK_BUDGET=480 s): what is left after
# the checks and builds is split between the two scenarios as time boxes
# (peers gets half of it, scaling the rest).  A scenario that overruns its
# box is stopped and its finished runs are analysed all the same
# (bench/vmbench --analyze).  Expected on hardware KVM: ~3 min each.
#
# Output: OUTDIR (default build/hw-check-DATE/) with hw-check.md (machine,
# kvmprobe, both tables, the time each took), peers/ and scaling/ (each:
# table.md, summary.csv, summary.json, samples.csv, plots/*.png, raw/).
# Exit status: 0 when both scenarios completed, 1 if one failed or was cut,
# 2 on bad use, 3 when this machine has no fast KVM.
#
# Knobs: HWCHECK_BUDGET=S for the whole run (480); HWCHECK_RUNTIME=S fio
# runtime per point (4); HWCHECK_GUESTS=LIST for scaling (1-4);
# HWCHECK_ALLOW_SLOW=1 goes on without a fast KVM (through the test host;
# only to try the script out on a development machine).
set -u
cd "$(dirname "$0")/.."
REPO=$(pwd)
t_start=$(date +%s)
OUT=${1:-build/hw-check-$(date +%Y%m%d-%H%M%S)}
BUDGET=${HWCHECK_BUDGET:-480}
RUNTIME=${HWCHECK_RUNTIME:-4}
GUESTS=${HWCHECK_GUESTS:-1-4}

say() { printf 'hw-check: %s\n' "$*" >&2; }
mkdir -p "$OUT" || { say "cannot create $OUT"; exit 2; }
OUT=$(cd "$OUT" && pwd)
report=$OUT/hw-check.md

# 1. /dev/kvm.
if [ ! -c /dev/kvm ]; then
	say "no /dev/kvm (is the kvm_intel or kvm_amd module loaded, virtualization on in the firmware?)"
	exit 3
fi
if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
	say "/dev/kvm is not readable and writable by $(id -un) (add yourself to group $(stat -c %G /dev/kvm), or run as root)"
	exit 3
fi

# 2. Its speed.
make -s build/vmm >&2 || { say "cannot build build/vmm"; exit 2; }
prc=0
pout=$(build/vmm probe 2>&1) || prc=$?
pout=$(printf '%s\n' "$pout" | grep -E '^(guest loop|verdict)' | tr '\n' ' ')
say "$pout"
where=host
if [ "$prc" != 0 ]; then
	if [ -z "${HWCHECK_ALLOW_SLOW:-}" ]; then
		say "this KVM is not fast enough for Linux guests (vmm probe status $prc): not a hardware-KVM machine"
		exit 3
	fi
	# Only to try this script out on a development machine: the guests
	# then run in the test host (bench/vmbench decides), much slower.
	say "HWCHECK_ALLOW_SLOW: going on; bench/vmbench will use the test host"
	where=auto
fi
modules=$(lsmod 2>/dev/null | awk '$1 ~ /^kvm/ { printf "%s ", $1 }')

# 3. Build what is missing.
if [ ! -x build/vmm ]; then
	say "building build/vmm"
	make -j"$(nproc)" build/vmm >"$OUT/make.log" 2>&1 || { say "make failed (log: $OUT/make.log)"; exit 1; }
fi
guest/build.sh >&2 || { say "guest/build.sh failed"; exit 1; }

# 4, 5. The scenarios, each in its time box.
status=0
declare -A took rcs
run_scenario() {
	local name=$1 box=$2 t0 rc=0
	shift 2
	t0=$(date +%s)
	[ "$box" -ge 30 ] || box=30
	say "scenario $name (time box ${box}s)"
	VMBENCH_WHERE=$where timeout -k 10 "$box" bench/vmbench --scenario "$name" \
		--runtime "$RUNTIME" --title "hw-check $name" -o "$OUT/$name" "$@" \
		>"$OUT/$name.stdout" 2>"$OUT/$name.log" || rc=$?
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		say "$name: over its time box; analysing the runs that finished"
		bench/vmbench --analyze "$OUT/$name" >"$OUT/$name.stdout" 2>>"$OUT/$name.log" || true
	fi
	took[$name]=$(($(date +%s) - t0))
	rcs[$name]=$rc
	[ "$rc" = 0 ] || status=1
	say "$name: status $rc, ${took[$name]}s"
}
left=$((BUDGET - 15 - ($(date +%s) - t_start)))
run_scenario peers $((left / 2))
run_scenario scaling $((BUDGET - 15 - ($(date +%s) - t_start))) --guests "$GUESTS"

{
	echo "# hw-check: peers and scaling on hardware KVM"
	echo
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- Machine: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "- Kernel: $(uname -sr); KVM modules: ${modules:-?}"
	echo "- vmm probe: $pout"
	echo "- Tree: $(git describe --always --dirty 2>/dev/null || echo unknown)"
	echo "- fio runtime per point: ${RUNTIME}s; budget for the whole check: ${BUDGET}s"
	for s in peers scaling; do
		echo "- $s: status ${rcs[$s]}, ${took[$s]}s"
	done
	echo "- Total: $(($(date +%s) - t_start))s"
	echo
	for s in peers scaling; do
		echo "# $s"
		echo
		if [ -s "$OUT/$s/table.md" ]; then
			sed 's/^## /## /' "$OUT/$s/table.md"
		else
			echo "(no table: see $s.log)"
		fi
		echo
	done
} >"$report"
say "done in $(($(date +%s) - t_start))s: $report"
cat "$report"
exit $status
