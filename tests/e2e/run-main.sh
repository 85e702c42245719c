#!/bin/bash
# tests/e2e/run-main.sh   (make run)
#
# The job this VMM exists for: a VM with 2 vCPUs and a 1 GiB RAM disk
# (ram:1G, 2 queues) as /dev/vdb, running fio's randread-4k and then
# randwrite-4k (guest/jobs/; io_uring, O_DIRECT, QD32, 5 s each; one boot
# per job), and a short summary at the end: IOPS, bandwidth, mean and p99
# completion latency per job.
#
# Where: build/vmm probe decides, as for tests/e2e/run.sh: on a
# hardware KVM the VM runs here; on an emulated one (kvm_pvm) or none it
# runs inside the test host (one boot of it for both jobs, under flock
# /tmp/testhost.lock), and says so.  RUN_WHERE=host|testhost overrides.
#
# Environment: VMM_BIN (default build/vmm), RUN_OUT (logs, default
# build/run), RUN_JOBS (default "randread-4k randwrite-4k"), RUN_CPUS=2,
# RUN_QUEUES=2, RUN_MEM=512, RUN_DISK=ram:1G; KERNEL=small (`make run
# KERNEL=small`) boots the small kernel guest/build.sh makes, KERNEL=stock
# or a path another one (default: Debian's, build/guest/bzImage).
# Exit status 0 when every job ran and reported.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/../.." && pwd)
cd "$REPO"
VMM=vmm
case ${KERNEL:-} in
stock) KERNEL=$REPO/build/guest/bzImage ;;
small) KERNEL=$REPO/build/guest/small/bzImage ;;
esac
. "$here/lib.sh"
[ -f "$KERNEL" ] || { echo "run: error: no kernel $KERNEL (make guest)" >&2; exit 1; }

E2E_OUT=${RUN_OUT:-$REPO/build/run}
JOBS=${RUN_JOBS:-randread-4k randwrite-4k}
CPUS=${RUN_CPUS:-2}
QUEUES=${RUN_QUEUES:-2}
MEM=${RUN_MEM:-512}
DISK=${RUN_DISK:-ram:1G}
BOOT_TIMEOUT=${RUN_BOOT_TIMEOUT:-240}

say() { printf 'run: %s\n' "$*" >&2; }
die() { printf 'run: error: %s\n' "$*" >&2; exit 1; }

# show_cmd ARG...: the command for people: paths relative to the
# repository, arguments with blanks in single quotes.
show_cmd() {
	local a out=
	for a in "$@"; do
		a=${a#"$REPO"/}
		case $a in
		*[[:space:]]*) a="'$a'" ;;
		esac
		out="$out $a"
	done
	echo "${out# }"
}

# main_boot JOB: boot with fio=JOB; in the test host up to $TESTHOST_TRIES
# tries, as the e2e tests (tests/e2e/lib.sh).
main_boot() {
	local job=$1 try=1
	while ! fio_boot "$job" "$job" "ram:64M,serial=sys" "$DISK,serial=data" \
		>"$E2E_OUT/$job.check" 2>&1; do
		say "fio $job failed (try $try):"
		sed 's/^/  /' "$E2E_OUT/$job.check" >&2
		[ -n "${TESTHOST:-}" ] && [ $try -lt $TESTHOST_TRIES ] || return 1
		try=$((try + 1))
		say "fio $job: trying again (the test host's emulation, not the VMM, is the usual cause)"
	done
}

# Inside a KVM that runs standard guests: boot once per job, then print
# the summary on stdout.
inside() {
	local job rc=0 json
	mkdir -p "$E2E_OUT"
	rm -f "$E2E_OUT/summary"
	for job in $JOBS; do
		vcmd=()
		vmm_cmd_vmm "$CMDLINE_BASE fio=$job disk=data" \
			"ram:64M,serial=sys" "$DISK,serial=data"
		say "fio $job: $(show_cmd "${vcmd[@]}")"
		if ! main_boot "$job"; then
			rc=1
			continue
		fi
		json=$E2E_OUT/$job.json
		say "fio $job: done in ${boot_secs}s (boot included); $(sed -n \
			's/^.*virtio-blk: //p' "$E2E_OUT/$job.log.vmm" | tail -n 1)"
		fio_summary "$json" >>"$E2E_OUT/summary"
	done
	echo
	echo "fio summary: vmm, $CPUS vCPUs, $MEM MiB, /dev/vdb = $DISK" \
		"with $QUEUES queues (io_uring, O_DIRECT, 4 KiB, QD32, 5 s)${TESTHOST:+;}"
	[ -z "${TESTHOST:-}" ] ||
		echo "inside the test host (QEMU TCG, nested AMD-V): slow in absolute terms"
	[ -f "$E2E_OUT/summary" ] && cat "$E2E_OUT/summary"
	return $rc
}

if [ -n "${RUN_INSIDE:-}" ]; then
	inside
	exit $?
fi

[ -x "$VMM_BIN" ] || die "no $VMM_BIN (run make)"
guest/build.sh
choose_where run "${RUN_WHERE:-}"
case $where in
host)
	say "this host's KVM runs guests at hardware speed: the VM runs here"
	RUN_INSIDE=1 "$0"
	;;
testhost)
	say "this host's KVM is too slow for Linux: the VM runs inside the" \
		"test host (tests/testhost/run.sh; QEMU TCG with nested AMD-V)"
	mkdir -p "$E2E_OUT"
	RUN_INSIDE=1 TESTHOST_OUT=$E2E_OUT TESTHOST_TIMEOUT=${TESTHOST_TIMEOUT:-900} \
		testhost "$0"
	;;
*) die "RUN_WHERE must be host or testhost" ;;
esac
