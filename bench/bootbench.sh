#!/bin/bash
# bench/bootbench.sh [R]   boot time: our VMM against QEMU
#
# Boots the guest image (guest/) R times under each VMM, interleaved
# (vmm, vmmelf, qemu, qemupvh, vmm, ...; BENCH_VMMS to choose), with
# run=true (/init runs `true` and powers
# off), the same kernel, initrd, vCPUs (2), RAM (512 MiB) and disks (a
# read-only 64 MiB vda, a 1 GiB vdb with 2 queues), and times, from the
# launch of the VMM process:
#   init  the first line /init prints ("guest: disk vda ..."; it comes
#         after /init has loaded the virtio modules and found the disks)
#   exit  the VMM's exit, after /init's power off
# Console lines are timestamped as they reach this side of the pipe from
# the VMM's stdout (tests/e2e/lib.sh: boot with BOOT_TS=1).
#
# Runs here on a hardware KVM, else inside the test host (one boot of it,
# under flock /tmp/testhost.lock); BENCH_WHERE=host|testhost overrides.
# Output: a table on stdout; raw data in $BENCH_OUT (default
# build/bootbench): boot.tsv (vmm, run, init, exit seconds), consoles.
#
# Sourced (by bench/vmm-vs-qemu.sh), it only defines boot_marks and
# bootbench_inner.
set -eu

# boot_marks TSLOG: "INIT" seconds from a console log with timestamps
# (NAME.log.ts): the first line /init prints ("guest: ..."), or "-".
boot_marks() {
	awk '$2 == "guest:" { print $1; found = 1; exit }
		END { if (!found) print "-" }' "$1"
}

# vmmelf, qemupvh: the same kernel uncompressed (build/guest/vmlinux, an
# ELF), which our VMM loads as it is and QEMU boots through its PVH entry
# (the kernel has the Xen PVH note): no decompressor in either guest.
vmm_cmd_vmmelf() { KERNEL=$REPO/build/guest/vmlinux vmm_cmd_vmm "$@"; }
vmm_cmd_qemupvh() { KERNEL=$REPO/build/guest/vmlinux vmm_cmd_qemu "$@"; }

# bootbench_inner R TSV: R interleaved boots per VMM in $BENCH_VMMS;
# appends "vmm run init exit" rows to TSV.  Needs E2E_OUT, DISKS with
# sys.img and data.img.
bootbench_inner() {
	local n=$1 tsv=$2 r v name init rc
	for r in $(seq "$n"); do
		for v in ${BENCH_VMMS:-vmm vmmelf qemu qemupvh}; do
			name=boot-$v-$r
			rc=0
			VMM=$v BOOT_TS=1 VMM_VERBOSE='' boot "$name" "run=true" \
				"$DISKS/sys.img,serial=sys,ro" \
				"$DISKS/data.img,serial=data" || rc=$?
			init=$(boot_marks "$E2E_OUT/$name.log.ts")
			if [ $rc != 0 ] || ! grep -q '^=== RUN END rc=0 ===$' \
				"$E2E_OUT/$name.log"; then
				printf 'bootbench: %s failed (%s)\n' "$name" \
					"$(boot_status_text $rc)" >&2
				show_fail "$name" >&2
				init=- boot_secs=-
			fi
			printf '%s\t%s\t%s\t%s\n' "$v" "$r" "$init" "$boot_secs" >>"$tsv"
			printf 'bootbench: %-5s run %s: /init %ss, exit %ss\n' \
				"$v" "$r" "$init" "$boot_secs" >&2
		done
	done
}

# bench_disks DIR: sys.img (64 MiB) and data.img (1 GiB, allocated: no
# holes, so reads touch real pages) in DIR; sets DISKS.
bench_disks() {
	DISKS=$1
	mkdir -p "$DISKS"
	rm -f "$DISKS/sys.img" "$DISKS/data.img"
	truncate -s 64M "$DISKS/sys.img"
	fallocate -l 1G "$DISKS/data.img" 2>/dev/null ||
		dd if=/dev/zero of="$DISKS/data.img" bs=1M count=1024 status=none
}

# boot_table TSV: per VMM, every run and the mean; then each VMM's ratio
# to qemu.
boot_table() {
	awk -F '\t' '
		$3 != "-" { n[$1]++; si[$1] += $3; se[$1] += $4
			ri[$1] = ri[$1] sprintf(" %.2f", $3)
			re[$1] = re[$1] sprintf(" %.2f", $4)
			if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 } }
		$3 == "-" { bad[$1]++ }
		END {
			print "| VMM | launch to /init, s (runs) | mean | launch to exit, s (runs) | mean |"
			print "|---|---|---|---|---|"
			for (i = 1; i <= m; i++) {
				v = order[i]
				printf "| %s | %s | %.2f | %s | %.2f |\n", v, ri[v],
				       si[v] / n[v], re[v], se[v] / n[v]
			}
			if (n["qemu"]) print ""
			for (i = 1; i <= m; i++) {
				v = order[i]
				if (v == "qemu" || !n["qemu"]) continue
				printf "%s/qemu: launch to /init %.2f, launch to exit %.2f\n", v,
				       (si[v] / n[v]) / (si["qemu"] / n["qemu"]),
				       (se[v] / n[v]) / (se["qemu"] / n["qemu"])
			}
			for (v in bad) printf "%s: %d failed boots\n", v, bad[v]
		}' "$1"
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/.." && pwd)
cd "$REPO"
. "$REPO/tests/e2e/lib.sh"
R=${1:-3}
OUT=${BENCH_OUT:-$REPO/build/bootbench}
CPUS=2 QUEUES=2 MEM=512 BOOT_TIMEOUT=${BENCH_BOOT_TIMEOUT:-240}

if [ -n "${BENCH_INSIDE:-}" ]; then
	E2E_OUT=$OUT/raw
	mkdir -p "$E2E_OUT"
	if [ -n "${TESTHOST:-}" ]; then
		bench_disks /tmp/bootbench
	else
		bench_disks "$OUT/disks"
	fi
	: >"$OUT/boot.tsv"
	bootbench_inner "$R" "$OUT/boot.tsv"
	rm -f "$DISKS"/*.img
	exit 0
fi

[ -x "$VMM_BIN" ] || { echo "bootbench: no $VMM_BIN (make)" >&2; exit 1; }
guest/build.sh
mkdir -p "$OUT"
rm -f "$OUT/boot.tsv"
choose_where bootbench "${BENCH_WHERE:-}"
if [ "$where" = host ]; then
	BENCH_INSIDE=1 BENCH_OUT=$OUT "$0" "$R"
else
	BENCH_INSIDE=1 BENCH_OUT=$OUT TESTHOST_OUT=$OUT \
		TESTHOST_TIMEOUT=${TESTHOST_TIMEOUT:-$((300 + R * 2 * 240))} \
		testhost "$0" "$R" || true
fi
[ -s "$OUT/boot.tsv" ] || { echo "bootbench: no results" >&2; exit 1; }
boot_table "$OUT/boot.tsv"
