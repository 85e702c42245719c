#!/bin/bash
# bench/vmm-vs-qemu.sh [R]   our VMM against QEMU, side by side
#
# In ONE boot of the test host (or here, on a hardware KVM), with the same
# kernel and initrd (guest/), vCPUs (2), RAM (512 MiB), virtqueues (2) and
# backing file (a 1 GiB file, allocated, on the test host's tmpfs; no
# O_DIRECT on either side there: tmpfs has none; QEMU cache=writeback):
#   - fio randread-4k and randwrite-4k (guest/jobs/: io_uring, O_DIRECT in
#     the guest, 4 KiB, QD32, 5 s), one boot per job, R repeats
#     interleaved: for each repeat, for each job: vmm, qemu;
#   - the time from the launch of the VMM to the first line /init prints
#     and to the VMM's exit, from those boots (console lines timestamped
#     as they arrive here) and from R more boots per VMM that only run
#     `true` (bench/bootbench.sh).
# Our VMM runs with -v, so its per-disk counters (requests, notifies,
# kicks through a vCPU exit) are in the raw logs and the report.
# QEMU: 7.2 from Debian, -enable-kvm -cpu host, virtio-blk-pci with
# num-queues=2 on an iothread, aio=io_uring (tests/e2e/lib.sh).
#
# Output: the report (markdown) on stdout and in $BENCH_OUT/report.md;
# raw data in $BENCH_OUT (default build/bench-vmm-vs-qemu): fio.tsv,
# boot.tsv, raw/ (consoles, VMM messages, fio JSON).
# Diagnostics in the same interleaving, for the jobs in BENCH_DIAG_JOBS
# (default randread-4k): BENCH_DIAG_VMMS (default "vmmbatch vmmq1": ours
# with batch=on, ours with 1 queue = 1 iothread); set it empty for none.
# The KVM exits of every fio run are counted (debugfs, and by reason with
# an ftrace histogram on kvm_exit) where the kernel allows.
# Environment: BENCH_OUT, BENCH_JOBS (default "randread-4k randwrite-4k"),
# BENCH_BOOTS (plain boots per VMM, default R; 0 for none),
# BENCH_WHERE=host|testhost, VMM_BIN.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/.." && pwd)
cd "$REPO"
. "$REPO/tests/e2e/lib.sh"
. "$here/bootbench.sh"

R=${1:-3}
OUT=${BENCH_OUT:-$REPO/build/bench-vmm-vs-qemu}
JOBS=${BENCH_JOBS:-randread-4k randwrite-4k}
BOOTS=${BENCH_BOOTS:-$R}
CPUS=2 QUEUES=2 MEM=512 BOOT_TIMEOUT=${BENCH_BOOT_TIMEOUT:-240}

say() { printf 'vmm-vs-qemu: %s\n' "$*" >&2; }

# vmmbatch: our VMM with batch=on on every disk (one submit and one
# used-ring publish per drain pass), for BENCH_VMMS="vmm qemu vmmbatch".
vmm_cmd_vmmbatch() { VMM_DISK_OPTS=,batch=on vmm_cmd_vmm "$@"; }
# vmmq1: our VMM with 1 queue per disk, so one iothread, as QEMU serves
# its 2 queues from one iothread (the guest then has 1 queue).
vmm_cmd_vmmq1() { QUEUES=1 vmm_cmd_vmm "$@"; }
# vmmnopoll: our VMM with poll=0 (an idle iothread sleeps at once).
# vmmalt: for experiments, our VMM from another build (BENCH_ALT_VMM_BIN)
# and/or with more disk options (BENCH_ALT_DISK_OPTS, e.g. ",poll=200").
vmm_cmd_vmmalt() {
	VMM_BIN=${BENCH_ALT_VMM_BIN:-$VMM_BIN} \
		VMM_DISK_OPTS=${BENCH_ALT_DISK_OPTS:-} vmm_cmd_vmm "$@"
}
vmm_cmd_vmmnopoll() { VMM_DISK_OPTS=,poll=0 vmm_cmd_vmm "$@"; }

# vmms_for JOB: the VMMs to run JOB under: vmm, qemu, then the
# diagnostic variants ($BENCH_DIAG_VMMS) for the jobs in $BENCH_DIAG_JOBS.
vmms_for() {
	local v=${BENCH_VMMS:-vmm qemu}
	case " ${BENCH_DIAG_JOBS-randread-4k} " in
	*" $1 "*) v="$v ${BENCH_DIAG_VMMS-vmmnopoll vmmbatch}" ;;
	esac
	echo $v
}

# KVM's own counters (debugfs, all VMs of this kernel: one runs at a time
# here) and the CPU time of the machine, snapshotted when the guest says
# fio starts ("guest: fio ...") and when it has ended ("=== FIO-JSON
# BEGIN"): exits per request during fio, for both VMMs alike.
KVMDBG=/sys/kernel/debug/kvm
EXIT_HIST=${EXIT_HIST:-/sys/kernel/tracing/events/kvm/kvm_exit/hist}

# exit_hist_on: count KVM exits by reason (an ftrace histogram on the
# kvm_exit tracepoint; needs tracefs and CONFIG_HIST_TRIGGERS).
exit_hist_on() {
	[ -d /sys/kernel/tracing/events ] ||
		mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
	[ -w /sys/kernel/tracing/events/kvm/kvm_exit/trigger ] &&
		echo 'hist:keys=exit_reason:size=256' \
			>/sys/kernel/tracing/events/kvm/kvm_exit/trigger 2>/dev/null || true
}
kvm_snap() {
	{
		grep -H . "$KVMDBG"/* 2>/dev/null | sed 's|^.*/||; s|:| |'
		[ -r "$EXIT_HIST" ] && sed -n 's/^{ exit_reason: *\([0-9]*\) *} hitcount: *\([0-9]*\)$/exit_\1 \2/p' \
			"$EXIT_HIST"
		awk '$1 == "cpu" { print "cpu_busy", $2 + $3 + $4 + $7 + $8;
			print "cpu_idle", $5 + $6 }' /proc/stat
		echo "time ${EPOCHREALTIME//[!0-9]/}"
	} >"$1"
}
fio_hook() {
	case $1 in
	"guest: fio "*) [ -e "$SNAP.a" ] || kvm_snap "$SNAP.a" ;;
	"=== FIO-JSON BEGIN "*) kvm_snap "$SNAP.b" ;;
	esac
}
# kvm_delta NAME: "key delta" for the counters that moved during fio.
kvm_delta() {
	[ -s "$E2E_OUT/$1.snap.a" ] && [ -s "$E2E_OUT/$1.snap.b" ] || return 0
	awk 'NR == FNR { a[$1] = $2; next }
		($1 in a) && $2 != a[$1] { print $1, $2 - a[$1] }' \
		"$E2E_OUT/$1.snap.a" "$E2E_OUT/$1.snap.b"
}

# fio_row NAME JOB VMM REPEAT: one line of fio.tsv for a finished boot.
fio_row() {
	local name=$1 json=$E2E_OUT/$1.json iops bw lat init c ios
	iops=$(flatj "$json" | awk '$1 ~ /^jobs\.0\.(read|write)\.iops$/ { s += $2 }
		END { printf "%.0f", s }')
	bw=$(flatj "$json" | awk '$1 ~ /^jobs\.0\.(read|write)\.bw_bytes$/ { s += $2 }
		END { printf "%.1f", s / 1048576 }')
	lat=$(flatj "$json" | awk '$1 ~ /^jobs\.0\.(read|write)\.clat_ns\.mean$/ && $2 > 0 {
		printf "%.0f", $2 / 1000; exit }')
	init=$(boot_marks "$E2E_OUT/$name.log.ts")
	c=$(sed -n 's/^.*virtio-blk: \([0-9]*\) requests, \([0-9]*\) notifies, \([0-9]*\) kicks.*$/\1\t\2\t\3/p' \
		"$E2E_OUT/$name.log.vmm" | tail -n 1)
	ios=$(flatj "$json" | awk '$1 ~ /^jobs\.0\.(read|write)\.total_ios$/ { s += $2 }
		END { printf "%d", s }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$3" "$2" "$4" "$iops" \
		"$bw" "${lat:--}" "$init" "$boot_secs" "${c:--	-	-}" "$ios"
}

# fio_run JOB VMM REPEAT [retry]: one boot; a row in fio.tsv and
# kvm.tsv on success.  A failed boot (in the test host: its emulation's
# guest crashes and hangs, seen with QEMU and ours alike) is kept as
# NAME-failed.* and listed in failed.tsv.
fio_run() {
	local job=$1 v=$2 r=$3 name=$1-$2-$3 f
	rm -f "$E2E_OUT/$name".*
	if SNAP=$E2E_OUT/$name.snap BOOT_HOOK=fio_hook \
		VMM=$v BOOT_TS=1 fio_boot "$name" "$job" \
		"$DISKS/sys.img,serial=sys,ro" \
		"$DISKS/data.img,serial=data" \
		>"$E2E_OUT/$name.check" 2>&1; then
		fio_row "$name" "$job" "$v" "$r" >>"$OUT/fio.tsv"
		kvm_delta "$name" | sed "s/^/$v	$job	$r	/" >>"$OUT/kvm.tsv"
		say "$(tail -n 1 "$OUT/fio.tsv" | awk -F '\t' '{
			printf "%s %s run %s: IOPS %s, /init at %ss, exit at %ss", $1, $2, $3, $4, $7, $8 }')${4:+ (retry)}"
		return 0
	fi
	say "$v $job run $r FAILED${4:+ again}:"
	sed 's/^/  /' "$E2E_OUT/$name.check" >&2
	printf '%s\t%s\t%s\t%s\n' "$v" "$job" "$r" \
		"$(grep -v '^  ' "$E2E_OUT/$name.check" | head -n 1)" >>"$OUT/failed.tsv"
	for f in "$E2E_OUT/$name".*; do
		mv "$f" "$E2E_OUT/$name-failed${4:+2}.${f##*/"$name".}"
	done
	return 1
}

inside() {
	local r job v name
	E2E_OUT=$OUT/raw
	rm -rf "$E2E_OUT"
	mkdir -p "$E2E_OUT"
	[ -d "$KVMDBG" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
	exit_hist_on
	if [ -n "${TESTHOST:-}" ]; then
		bench_disks /tmp/vmm-vs-qemu
	else
		bench_disks "$OUT/disks"
	fi
	{
		echo "inside: $(uname -r), $(nproc) CPUs," \
			"$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
		echo "qemu: $(qemu-system-x86_64 --version | head -n 1)"
		echo "vmm: $("$VMM_BIN" --version)"
		echo "backing file: $(df -T "$DISKS" | awk 'NR == 2 { print $2 }')," \
			"O_DIRECT $(direct_ok "$DISKS/data.img" && echo yes || echo no)"
	} >"$OUT/inside.txt"
	: >"$OUT/fio.tsv"
	: >"$OUT/boot.tsv"
	: >"$OUT/kvm.tsv"
	: >"$OUT/failed.tsv"
	for r in $(seq "$R"); do
		for job in $JOBS; do
			for v in $(vmms_for "$job"); do
				fio_run "$job" "$v" "$r" ||
					fio_run "$job" "$v" "$r" retry ||
					printf '%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\n' \
						"$v" "$job" "$r" >>"$OUT/fio.tsv"
			done
		done
	done
	[ "$BOOTS" -gt 0 ] && BENCH_VMMS=${BENCH_BOOT_VMMS:-} \
		bootbench_inner "$BOOTS" "$OUT/boot.tsv"
	rm -f "$DISKS"/*.img
}

# fio_table: per job and VMM, the runs, the mean and the ratio to QEMU
# (of the means, and per repeat where both runs exist).
fio_table() {
	awk -F '\t' '
		$4 != "-" {
			k = $2 SUBSEP $1
			n[k]++; s[k] += $4; runs[k] = runs[k] sprintf(" %d", $4)
			lat[k] += $6
			v[$2, $1, $3] = $4
			if (!($2 in sj)) { sj[$2] = 1; jobs[++nj] = $2 }
			if (!($1 in sv)) { sv[$1] = 1; vmms[++nv] = $1 }
			if ($3 > maxr) maxr = $3
		}
		END {
			print "| job | VMM | IOPS (runs) | mean IOPS | mean latency, us | IOPS / QEMU (means) | IOPS / QEMU (per repeat) |"
			print "|---|---|---|---|---|---|---|"
			for (i = 1; i <= nj; i++) {
				j = jobs[i]; q = j SUBSEP "qemu"
				for (w = 1; w <= nv; w++) {
					x = vmms[w]; k = j SUBSEP x
					if (!n[k]) continue
					ratio = "-"; per = ""
					if (x != "qemu" && n[q]) {
						ratio = sprintf("**%.2f**", (s[k] / n[k]) / (s[q] / n[q]))
						for (r = 1; r <= maxr; r++)
							if ((j, x, r) in v && (j, "qemu", r) in v)
								per = per sprintf(" %.2f", v[j, x, r] / v[j, "qemu", r])
					}
					printf "| %s | %s | %s | %.0f | %.0f | %s | %s |\n", j, x,
					       runs[k], s[k] / n[k], lat[k] / n[k], ratio, per
				}
			}
		}' "$1"
}

# counters_table: our VMM's counters per run.
counters_table() {
	awk -F '\t' '
		BEGIN {
			print "| VMM | job | run | IOPS | requests (vdb) | notifies | kicks via vCPU exit | notifies/request |"
			print "|---|---|---|---|---|---|---|---|"
		}
		$1 ~ /^vmm/ && $9 != "-" && $9 > 0 {
			printf "| %s | %s | %s | %s | %s | %s | %s | %.3f |\n", $1, $2, $3, $4, $9, $10, $11, $10 / $9
		}' "$1"
}

# exits_table FIO_TSV KVM_TSV: per VMM and job, the mean per request of
# the KVM counters that matter, over the runs.
exits_table() {
	[ -s "$2" ] || { echo "(no KVM debugfs counters)"; return 0; }
	awk -F '\t' '
		NR == FNR { if ($12 > 0) ios[$1, $2, $3] = $12; next }
		{
			split($4, kv, " "); k = kv[1]; d = kv[2]
			key = $1 SUBSEP $2
			if (!(key in seen)) { seen[key] = 1; order[++m] = key }
			if (!(($1, $2, $3) in ios)) next
			sum[key, k] += d / ios[$1, $2, $3]; cnt[key, k]++
			if (k == "cpu_busy") busy[key, $3] = d
			if (k == "cpu_idle") idle[key, $3] = d
			runs[key, $3] = 1
		}
		function avg(key, k) { return cnt[key, k] ? sum[key, k] / cnt[key, k] : 0 }
		END {
			# SVM exit codes (asm/svm.h) for the kvm_exit histogram.
			nm[96] = "INTR"; nm[97] = "NMI"; nm[98] = "SMI"; nm[100] = "VINTR"
			nm[110] = "RDTSC"; nm[114] = "CPUID"; nm[116] = "IRET"
			nm[119] = "PAUSE"; nm[120] = "HLT"; nm[123] = "IOIO"
			nm[124] = "MSR"; nm[129] = "VMMCALL"; nm[141] = "XSETBV"
			nm[1024] = "NPF"
			have = 0
			for (kk in cnt) { split(kk, q, SUBSEP); if (q[3] ~ /^exit_/) have = 1 }
			print "| VMM | job | exits | io exits | mmio exits | halt exits | irq injections | signal exits | busy CPU |"
			print "|---|---|---|---|---|---|---|---|---|"
			for (i = 1; i <= m; i++) {
				key = order[i]; split(key, p, SUBSEP)
				b = 0; n = 0
				for (r = 1; r <= 100; r++)
					if ((key, r) in runs && busy[key, r] + idle[key, r] > 0) {
						b += busy[key, r] / (busy[key, r] + idle[key, r]); n++ }
				printf "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n",
				       p[1], p[2], avg(key, "exits"), avg(key, "io_exits"),
				       avg(key, "mmio_exits"), avg(key, "halt_exits"),
				       avg(key, "irq_injections"), avg(key, "signal_exits"),
				       n ? sprintf("%.0f%%", 100 * b / n) : "-"
			}
			if (!have) exit
			print ""
			print "KVM exits per request by reason (kvm_exit tracepoint histogram; SVM exit codes; NPF includes the notify writes that KVM turns into ioeventfd signals, MSR the x2APIC EOI and timer writes):"
			print ""
			print "| VMM | job | exits by reason, per request (>= 0.01) |"
			print "|---|---|---|"
			for (i = 1; i <= m; i++) {
				key = order[i]; split(key, p, SUBSEP); line = ""
				for (kk in cnt) {
					split(kk, q, SUBSEP)
					if (q[1] != p[1] || q[2] != p[2] || q[3] !~ /^exit_/) continue
					c = substr(q[3], 6) + 0; a = avg(key, q[3])
					if (a >= 0.01) line = line sprintf("%s %.2f, ", (c in nm) ? nm[c] : c, a)
				}
				printf "| %s | %s | %s |\n", p[1], p[2], line
			}
		}' "$1" "$2"
}

# boots_from_fio: "vmm run init exit" rows from the fio boots.
boots_from_fio() {
	awk -F '\t' '$7 != "-" { printf "%s\t%s-%s\t%s\t%s\n", $1, $2, $3, $7, $8 }' "$1"
}

report() {
	local cmd=$1
	cat <<EOF
# Our VMM against QEMU 7.2, side by side in the test host

- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Command: \`$cmd\` (from the repository root; R=$R)
- Machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), Linux $(uname -r)
- Where the VMs ran: $where$( [ "$where" = testhost ] && echo " (tests/testhost/run.sh: QEMU TCG, -cpu EPYC,+svm,+npt, ${TESTHOST_SMP:-2} vCPUs, ${TESTHOST_MEM:-6G}; one boot of it for everything below)")
$(sed 's/^/- /' "$OUT/inside.txt")
- Guest: build/guest (Debian $(cat build/guest/kernel-release 2>/dev/null || echo '?')), 2 vCPUs, 512 MiB, vda 64 MiB read-only, vdb = the 1 GiB file, 2 queues
- Our VMM: \`vmm run -v -c 2 -m 512 -d FILE,queues=2,serial=data\` (no \`direct\`: tmpfs)
- QEMU: \`-enable-kvm -cpu host -smp 2 -m 512 -object iothread -drive file=FILE,aio=io_uring,cache=writeback -device virtio-blk-pci,num-queues=2,iothread=...\`
- Order: for each repeat, for each job: vmm then qemu (one boot each)

## IOPS (fio in the guest, 4 KiB, QD32, 5 s)

$(fio_table "$OUT/fio.tsv")
$( [ -s "$OUT/failed.tsv" ] && { echo; echo "Failed boots (each retried once; the test host's emulation, see guest/README.md):"; echo; sed 's/^/    /' "$OUT/failed.tsv"; })

## Boot: launch to the first line /init prints, and to the VMM's exit

From the fio boots above (fio's run included in "exit"):

$(boots_from_fio "$OUT/fio.tsv" >"$OUT/boot-fio.tsv"; boot_table "$OUT/boot-fio.tsv")

From plain boots (\`run=true\`), interleaved vmm, vmmelf, qemu, qemupvh:

$( [ -s "$OUT/boot.tsv" ] && boot_table "$OUT/boot.tsv" || echo "(none)")

## Our VMM's counters (vdb, from -v)

$(counters_table "$OUT/fio.tsv")

## KVM exits per request during fio (the test host's KVM, debugfs)

Counters of the KVM that runs the guest, from the line where /init
starts fio to the line where fio has ended, divided by fio's requests
(total_ios); "busy" is the share of the machine's CPU time in use.

$(exits_table "$OUT/fio.tsv" "$OUT/kvm.tsv")
EOF
}

if [ -n "${BENCH_INSIDE:-}" ]; then
	inside
	exit 0
fi

cmd="bench/vmm-vs-qemu.sh $*"
[ -x "$VMM_BIN" ] || { say "no $VMM_BIN (make)"; exit 1; }
guest/build.sh
mkdir -p "$OUT"
rm -f "$OUT/fio.tsv" "$OUT/boot.tsv" "$OUT/kvm.tsv" "$OUT/failed.tsv" "$OUT/inside.txt"
choose_where vmm-vs-qemu "${BENCH_WHERE:-}"
t0=$(date +%s)
if [ "$where" = host ]; then
	BENCH_INSIDE=1 BENCH_OUT=$OUT "$0" "$R"
else
	BENCH_INSIDE=1 BENCH_OUT=$OUT TESTHOST_OUT=$OUT \
		TESTHOST_TIMEOUT=${TESTHOST_TIMEOUT:-$((300 + R * 6 * BOOT_TIMEOUT))} \
		testhost "$0" "$R" || true
fi
say "took $(($(date +%s) - t0))s"
[ -s "$OUT/fio.tsv" ] || { say "no results"; exit 1; }
report "$cmd" | tee "$OUT/report.md"
