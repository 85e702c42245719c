#!/bin/bash
# tests/e2e/run.sh [TEST...]   (make e2e)
#
# End-to-end: boot the guest image (guest/) under a VMM with KVM, let it
# run fio or a command on virtio-blk disks, and check what it prints
# between its "=== FIO-JSON BEGIN/END ===" (or "=== RUN BEGIN/END ===")
# markers, the VMM's exit status and the disks' backing files.
#
# A TEST is VMM:NAME (NAME under that VMM), NAME (under $VMM, default
# qemu), or "args" (bad command lines; no guest).  Without TESTs: the whole
# suite, $E2E_DEFAULT below; with VMM set and no TESTs: the four generic
# tests under $VMM.  Guest tests:
#   verify          fio writes 96 MiB with crc32c on a 1 GiB file, reads
#                   it back ($QUEUES queues)
#   verify-file-q1, verify-file-q2   the same with 1 or 2 queues (and as
#                   many vCPUs)
#   verify-ram-q1,  verify-ram-q2    on a ram:1G disk (VMM=vmm only)
#   vmlinux         verify-ram-q1 with the kernel booted from the ELF
#                   vmlinux guest/build.sh extracts (no decompressor)
#   randread-4k     fio 4k random reads, QD32: reports IOPS
#   ro-disk         the guest sees a read-only disk as such, a write to it
#                   fails, its file is unchanged (checksum)
#   write-pattern   a pattern written and synced in the guest is in the
#                   backing file once the VMM has exited
#   shell-stdin     no action: /init's shell on ttyS0 answers a command
#                   piped into the VMM's stdin; "reboot -f" ends it, 0
#   poweroff        the guest powers off: the VMM exits 0, says nothing
#   panic           the guest panics (sysrq c): the VMM exits with its
#                   panic status (vmm 3, qemu 1) within the timeout
#   seed-virtio-blk seed 004's job (reduced), only when named
#   testhost-panic  only when named: panics the test host once, to check
#                   that the rest runs in a new boot of it
# "args" (tests/smoke/badinput.sh with the real bzImage and initrd, on
# this machine, no KVM needed): every kind of bad command line exits 2
# with one "vmm: ..." line and creates or changes no file.
#
# Where: build/vmm probe times a tiny guest loop on this host's
# /dev/kvm.  Hardware KVM: the guests boot here.  Emulated KVM (kvm_pvm)
# or none: all guest tests run inside ONE boot of the test host
# (tests/testhost/run.sh, under flock /tmp/testhost.lock so that one test
# host runs at a time on this machine).  E2E_WHERE=host|testhost
# overrides the probe.
#
# Environment:
#   VMM=qemu|vmm          the VMM for TESTs without a prefix
#   VMM_BIN=PATH          our VMM's binary (default build/vmm)
#   E2E_MEM=512 E2E_CPUS=2 E2E_QUEUES=2   guest size, virtqueues per disk
#                         (in the test host 1 and 1 by default, see below)
#   E2E_BOOT_TIMEOUT=240  seconds per guest boot (120 for the boots that
#                         run no fio)
#   E2E_OUT=DIR           logs, consoles, JSON (default build/e2e): for
#                         each guest test DIR/VMM/NAME.log (console),
#                         .log.vmm (the VMM's messages), .json, .out
#   E2E_CMDLINE_EXTRA=..  appended to the guest's kernel command line
#                         (e.g. loglevel=7 to see the kernel's messages)
# Prints one PASS/FAIL line per test (details indented below it; the
# console's end when a boot failed) and "N passed, N failed"; exit status
# 0 only if all passed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/../.." && pwd)
cd "$REPO"

VMM_SET=${VMM:+1}
VMM=${VMM:-qemu}
. "$here/lib.sh"

E2E_OUT=${E2E_OUT:-$REPO/build/e2e}
MEM=${E2E_MEM:-512}
CPUS=${E2E_CPUS:-2}
QUEUES=${E2E_QUEUES:-2}
# In the test host, whose emulated AMD-V kills or hangs a fair share of
# 2-vCPU guests (QEMU's too: triple faults, RCU stalls; 3 of 18 boots of
# verify on 2026-11-30), a guest has 1 vCPU and 1 queue unless its test
# is about more (verify-*-q2) or E2E_CPUS / E2E_QUEUES say so.
if [ -n "${TESTHOST:-}" ]; then
	CPUS=${E2E_CPUS:-1}
	QUEUES=${E2E_QUEUES:-1}
fi
BOOT_TIMEOUT=${E2E_BOOT_TIMEOUT:-240}
SHORT_TIMEOUT=${E2E_BOOT_TIMEOUT:-120}
CMDLINE_BASE="console=ttyS0 quiet reboot=k panic=-1${E2E_CMDLINE_EXTRA:+ $E2E_CMDLINE_EXTRA}"
GENERIC_TESTS="verify randread-4k ro-disk write-pattern"
E2E_DEFAULT="args qemu:verify qemu:randread-4k
	vmm:verify-file-q1 vmm:verify-file-q2 vmm:verify-ram-q1 vmm:verify-ram-q2
	vmm:randread-4k vmm:ro-disk vmm:write-pattern vmm:shell-stdin
	vmm:poweroff vmm:panic vmm:vmlinux"
RESULTS=$E2E_OUT/results

say() { printf 'e2e: %s\n' "$*" >&2; }
die() { printf 'e2e: error: %s\n' "$*" >&2; exit 1; }

# ---- guest tests ----------------------------------------------------------
# Each runs in a subshell with $VMM set, prints its detail lines and
# returns 0 on pass.  Disks live in $DISKS: sparse files, O_DIRECT where
# the filesystem allows it (not on the test host's tmpfs).

new_disk() {
	rm -f "$1"
	truncate -s "$2" "$1"
}

# The guest's vda: a small read-only disk; vdb: the data disk.
std_disks() {
	new_disk "$DISKS/sys.img" 64M
	new_disk "$DISKS/data.img" "$1"
}

# check_disk LOG SERIAL SIZE_MIB RO QUEUES: /init's line for that disk.
check_disk() {
	local line
	line=$(grep "^guest: disk vd[a-z]* serial=$2 " "$1" | head -n 1)
	case $line in
	*" size=$3MiB ro=$4 queues=$5") echo "$line" ;;
	'')
		echo "the guest did not list a disk with serial $2"
		return 1
		;;
	*)
		echo "$line"
		echo "want size=$3MiB ro=$4 queues=$5"
		return 1
		;;
	esac
}

# vmm_counters NAME: our VMM's per-disk counters (-v), for the record.
vmm_counters() {
	[ "$VMM" = vmm ] || return 0
	sed -n 's/^.*virtio-blk: /vmm counters: /p' "$E2E_OUT/$1.log.vmm" |
		tail -n 1
}

# verify_on NAME DISK QUEUES: the verify job on DISK (serial data) as vdb,
# with as many vCPUs as queues (unless E2E_CPUS is set).
verify_on() {
	local t=$1 disk=$2 json=$E2E_OUT/$1.json w r size=1024
	QUEUES=$3
	CPUS=${E2E_CPUS:-$3}
	new_disk "$DISKS/sys.img" 64M
	fio_boot "$t" verify "$DISKS/sys.img,serial=sys,ro" "$disk,serial=data" ||
		return 1
	check_disk "$E2E_OUT/$t.log" data "$size" 0 "$QUEUES" || return 1
	w=$(flatj "$json" |
		awk '$1 ~ /^jobs\.[0-9]+\.write\.io_kbytes$/ { s += $2 } END { print s + 0 }')
	r=$(flatj "$json" |
		awk '$1 ~ /^jobs\.[0-9]+\.read\.io_kbytes$/ { s += $2 } END { print s + 0 }')
	echo "wrote $((w / 1024)) MiB, read back and verified $((r / 1024)) MiB"
	vmm_counters "$t"
	[ "$w" -ge $((96 * 1024)) ] && [ "$r" -ge "$w" ] ||
		{ echo "verify did not read back all it wrote (96 MiB)"; return 1; }
}

test_verify() {
	new_disk "$DISKS/data.img" 1G
	verify_on verify "$DISKS/data.img" "$QUEUES"
}
test_verify-file-q1() {
	new_disk "$DISKS/data.img" 1G
	verify_on verify-file-q1 "$DISKS/data.img" 1
}
test_verify-file-q2() {
	new_disk "$DISKS/data.img" 1G
	verify_on verify-file-q2 "$DISKS/data.img" 2
}
test_verify-ram-q1() { verify_on verify-ram-q1 ram:1G 1; }
test_verify-ram-q2() { verify_on verify-ram-q2 ram:1G 2; }
# The same kernel as an uncompressed ELF (guest/build.sh extracts it);
# 1 vCPU: the *-q2 tests cover SMP, and 2-vCPU guests are the test host's
# weak spot.
test_vmlinux() {
	KERNEL=$REPO/build/guest/vmlinux
	verify_on vmlinux ram:1G 1
}

test_randread-4k() {
	local iops
	std_disks 1G
	fio_boot randread-4k randread-4k "$DISKS/sys.img,serial=sys,ro" \
		"$DISKS/data.img,serial=data" || return 1
	check_disk "$E2E_OUT/randread-4k.log" data 1024 0 "$QUEUES" || return 1
	iops=$(flat "$E2E_OUT/randread-4k.json" jobs.0.read.iops)
	echo "IOPS $iops (4k random read, QD32, $VMM, $CPUS vCPUs, $QUEUES queues)"
	vmm_counters randread-4k
	awk -v x="$iops" 'BEGIN { exit !(x + 0 > 0) }' ||
		{ echo "no read IOPS in the JSON"; return 1; }
}

# Only when named, only in the test host: panics the test host the first
# time (a marker in $E2E_OUT says it did), to check that the harness boots
# it again and runs what had no result yet.  No guest.
test_testhost-panic() {
	[ -n "${TESTHOST:-}" ] || { echo "not in the test host"; return 1; }
	if [ ! -e "$E2E_OUT/testhost-panic.done" ]; then
		: >"$E2E_OUT/testhost-panic.done"
		sync
		echo c >/proc/sysrq-trigger
		sleep 60
	fi
	rm -f "$E2E_OUT/testhost-panic.done"
	echo "the test host was booted again after its panic"
}

test_seed-virtio-blk() {
	# In the test host (1 vCPU there by default), 256 threads on 2 guest
	# vCPUs crashed (double fault) or hung the guest in 3 of 4 runs.
	std_disks 1G
	fio_boot seed-virtio-blk seed-virtio-blk "$DISKS/sys.img,serial=sys,ro" \
		"$DISKS/data.img,serial=data" || return 1
	flatj "$E2E_OUT/seed-virtio-blk.json" | awk '
		$1 ~ /^jobs\.[0-9]+\.jobname$/ { split($1, p, "."); name[p[2]] = $2 }
		$1 ~ /^jobs\.[0-9]+\.(read|write)\.iops$/ && $2 > 0 {
			split($1, p, "."); printf "%s IOPS %d\n", name[p[2]], $2 }'
}

# run_cmd TEST CMD DISK...: boot with run64=CMD (base64, so any shell
# text passes the kernel command line); fails unless the VMM exited 0 and
# the guest printed both RUN markers.  Sets $rc to the RUN END rc=; the
# output between the markers is in $E2E_OUT/TEST.out.
run_cmd() {
	local t=$1 cmd=$2 log=$E2E_OUT/$1.log vrc=0
	shift 2
	boot "$t" "run64=$(printf '%s' "$cmd" | base64 -w0)" "$@" || vrc=$?
	rc=$(marker_block "$log" "=== RUN BEGIN ===" "=== RUN END" "$E2E_OUT/$t.out")
	boot_ended "$t" "$vrc" "$rc" "RUN END marker"
}

# The guest sees its vda read-only, a write to it fails, reading works,
# and the file is byte for byte what it was.
test_ro-disk() {
	local rc sum0 sum1
	std_disks 64M
	printf 'ro-disk-canary' | dd of="$DISKS/sys.img" conv=notrunc status=none
	sum0=$(cksum <"$DISKS/sys.img")
	run_cmd ro-disk 'cat /sys/block/vda/ro
dd if=/dev/zero of=/dev/vda bs=4096 count=1 oflag=direct conv=fsync
echo "dd exit status $?"
head -c 14 /dev/vda; echo' \
		"$DISKS/sys.img,serial=sys,ro" "$DISKS/data.img,serial=data" || return 1
	sed 's/^/guest: /' "$E2E_OUT/ro-disk.out"
	check_disk "$E2E_OUT/ro-disk.log" sys 64 1 "$QUEUES" || return 1
	sum1=$(cksum <"$DISKS/sys.img")
	[ "$rc" = 0 ] || { echo "guest command failed: rc=$rc"; return 1; }
	grep -qx 1 "$E2E_OUT/ro-disk.out" ||
		{ echo "vda is not read-only in the guest"; return 1; }
	grep -q '^dd exit status [1-9]' "$E2E_OUT/ro-disk.out" ||
		{ echo "the write to the read-only disk did not fail"; return 1; }
	grep -qx 'ro-disk-canary' "$E2E_OUT/ro-disk.out" ||
		{ echo "the guest did not read the disk's contents"; return 1; }
	[ "$sum0" = "$sum1" ] || { echo "the read-only disk's file changed"; return 1; }
	echo "file unchanged (cksum $sum1)"
}

# A pattern written at 5 MiB of vdb (O_DIRECT, fsync, sync) is in the
# backing file once the VMM has exited.
test_write-pattern() {
	local rc pat=e2e-pattern-$RANDOM-0123456789abcdef
	std_disks 64M
	run_cmd write-pattern "yes $pat | head -c 1048576 >/tmp/p &&
dd if=/tmp/p of=\$DISK bs=1M seek=5 count=1 oflag=direct conv=fsync status=none &&
sync && echo written" \
		"$DISKS/sys.img,serial=sys,ro" "$DISKS/data.img,serial=data" || return 1
	[ "$rc" = 0 ] && grep -qx written "$E2E_OUT/write-pattern.out" || {
		echo "guest command failed: rc=$rc"
		sed 's/^/guest: /' "$E2E_OUT/write-pattern.out"
		return 1
	}
	if ! yes "$pat" | head -c 1048576 |
		cmp -s - <(dd if="$DISKS/data.img" bs=1M skip=5 count=1 status=none); then
		echo "the backing file does not hold the pattern at 5 MiB"
		return 1
	fi
	if [ "$(dd if="$DISKS/data.img" bs=1M count=5 status=none | tr -d '\0' | wc -c)" != 0 ]; then
		echo "the backing file has data before 5 MiB"
		return 1
	fi
	echo "1 MiB pattern found at 5 MiB in the backing file"
}

# What the shell test pipes into the VMM: at once, as a user would
# (`echo ... | vmm run ...`).  $((...)) is for the guest's shell: its
# answer differs from the echoed command line.
shell_feed() {
	printf 'echo "hello-$((%d + 1))"\nreboot -f\n' "$SHELL_N"
}

test_shell-stdin() {
	local t=shell-stdin rc=0 log=$E2E_OUT/shell-stdin.log
	SHELL_N=$RANDOM
	BOOT_TIMEOUT=$SHORT_TIMEOUT
	std_disks 64M
	BOOT_FEED=shell_feed boot "$t" "" "$DISKS/sys.img,serial=sys,ro" \
		"$DISKS/data.img,serial=data" || rc=$?
	if ! grep -q 'shell on ttyS0' "$log"; then
		echo "no shell: /init did not get to it"
		show_fail "$t"
		return 1
	fi
	if ! grep -q "hello-$((SHELL_N + 1))" "$log"; then
		echo "the shell did not answer (no line hello-$((SHELL_N + 1)))"
		show_fail "$t"
		return 1
	fi
	if [ "$rc" != 0 ]; then
		echo "the VMM failed: $(boot_status_text "$rc")"
		show_fail "$t"
		return 1
	fi
	echo "the guest's shell answered hello-$((SHELL_N + 1)); exit status 0"
}

test_poweroff() {
	local rc t0=$SECONDS
	BOOT_TIMEOUT=$SHORT_TIMEOUT
	VMM_VERBOSE=
	std_disks 64M
	run_cmd poweroff 'true' "$DISKS/sys.img,serial=sys,ro" \
		"$DISKS/data.img,serial=data" || return 1
	if [ -s "$E2E_OUT/poweroff.log.vmm" ]; then
		echo "the VMM said something on a clean run:"
		sed 's/^/  | /' "$E2E_OUT/poweroff.log.vmm"
		return 1
	fi
	echo "exit status 0 after $((SECONDS - t0))s, nothing on stderr"
}

test_panic() {
	local rc=0 want t0=$SECONDS log=$E2E_OUT/panic.log
	case $VMM in
	vmm) want=3 ;;
	qemu) want=1 ;; # -action panic=exit-failure
	esac
	BOOT_TIMEOUT=$SHORT_TIMEOUT
	std_disks 64M
	boot panic "run=\"echo c >/proc/sysrq-trigger\"" \
		"$DISKS/sys.img,serial=sys,ro" "$DISKS/data.img,serial=data" || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "$(boot_status_text "$rc"), want $want (guest panic)"
		show_fail panic
		return 1
	fi
	if ! grep -q 'Kernel panic' "$log"; then
		echo "exit status $rc, but no 'Kernel panic' on the console"
		show_fail panic
		return 1
	fi
	grep -m1 'Kernel panic' "$log"
	sed -n 's/^.*vmm: /vmm: /p' "$log.vmm" | head -n 2
	echo "exit status $rc after $((SECONDS - t0))s"
}

# ---- the list -----------------------------------------------------------------

# norm TEST: VMM:NAME (bare NAME gets $VMM), or "args".
norm() {
	case $1 in
	args | *:*) echo "$1" ;;
	*) echo "$VMM:$1" ;;
	esac
}

# check_tests TEST...: die unless every VMM and test exists and what it
# needs is there.
check_tests() {
	local t v n
	for t in "$@"; do
		[ "$t" = args ] && continue
		v=${t%%:*} n=${t#*:}
		vmm_known "$v" || die "unknown VMM '$v' in '$t' (have: $(vmm_list))"
		declare -F "test_$n" >/dev/null ||
			die "unknown test '$n' (have: args $(declare -F |
				sed -n 's/^declare -f test_//p' | xargs))"
		case $v:$n in
		qemu:verify-ram-* | qemu:vmlinux) die "$t: QEMU has no ram: disk" ;;
		esac
	done
	case " $* " in
	*" vmm:"* | *" args "*)
		[ -x "$VMM_BIN" ] ||
			die "no $VMM_BIN (build it first: make; or set VMM_BIN)"
		;;
	esac
}

# result LINE: print a PASS/FAIL line and record it.
result() {
	echo "$1"
	echo "$1" >>"$RESULTS"
}

# run_test VMM:NAME: the test, in a subshell, with its logs in
# $E2E_OUT/VMM/.
run_test() {
	(
		VMM=${1%%:*}
		E2E_OUT=$E2E_OUT/$VMM # logs: build/e2e/VMM/NAME.log*
		mkdir -p "$E2E_OUT"
		"test_${1#*:}"
	)
}

# run_one VMM:NAME: run it, print its result and details.  In the test
# host a failed test runs again, up to $TESTHOST_TRIES tries, and every failed
# try is shown: its emulation of AMD-V kills guests now and then, under
# QEMU too (triple or double faults at entry_SYSCALL_64; under QEMU the
# VM just ends without a word), or stops a vCPU (RCU stalls from then on,
# never recovered: CI, 2026-11-29; boot() stops such a guest early).
# guest/README.md, known problems.
run_one() {
	local t=$1 t0 out fails= rc=0 try=1 note=
	t0=$(date +%s)
	out=$(run_test "$t" 2>&1) || rc=$?
	while [ $rc != 0 ] && [ -n "${TESTHOST:-}" ] && [ $try -lt $TESTHOST_TRIES ]; do
		try=$((try + 1))
		fails="$fails
try $((try - 1)) failed (in the test host):
$out"
		rc=0
		out=$(run_test "$t" 2>&1) || rc=$?
		note=", try $try of $TESTHOST_TRIES"
	done
	if [ $rc = 0 ]; then
		result "PASS $t ($(($(date +%s) - t0))s$note)"
	else
		result "FAIL $t ($(($(date +%s) - t0))s$note)"
	fi
	out="$out$fails"
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/     /'
	rm -f "$DISKS"/*.img
}

# args_tests: the bad-input cases with the real guest image, here.
args_tests() {
	(
		ok() { result "PASS args:$1"; }
		ko() { result "FAIL args:$1"; echo "     $2"; }
		VMM=$VMM_BIN
		. "$REPO/tests/smoke/badinput.sh"
		bad_setup "$E2E_OUT/args" "$KERNEL"
		# Not a bzImage: the initrd given as the kernel.
		bad not-bzimage 'no boot signature' "$VMM" run -k "$INITRD"
		INITRD_BAD=$INITRD SMALL_MEM=64M bad_common
	)
}

# testhost_watched CMD...: testhost CMD..., stopped when nothing under
# $E2E_OUT has changed for BOOT_TIMEOUT + 120 s (a guest console, a VMM
# log or a result; a boot that hangs is stopped by its own timeout before
# that): the test host has locked up without a panic (seen in bench/
# vmbench's runs, 2026-11-30: both its CPUs busy, nothing written).
testhost_watched() {
	local th quiet=0 stall=$((BOOT_TIMEOUT + 120)) k watch=$E2E_OUT/.watch
	rm -rf "$E2E_OUT/.testhost" # run.sh makes it once it has the lock
	testhost "$@" &
	th=$!
	touch "$watch"
	while kill -0 "$th" 2>/dev/null; do
		sleep 5
		[ -e "$E2E_OUT/.testhost/console.log" ] || continue # waiting for the lock
		if [ -n "$(find "$E2E_OUT" -newer "$watch" -type f -print -quit 2>/dev/null)" ]; then
			touch "$watch"
			quiet=0
			continue
		fi
		quiet=$((quiet + 5))
		[ "$quiet" -ge "$stall" ] || continue
		say "no progress for ${quiet}s: stopping the test host (its console: ${E2E_OUT#"$REPO"/}/.testhost/console.log)"
		# Under this subshell: flock, under it run.sh, which stops
		# QEMU on SIGTERM.
		for k in $(pgrep -P "$th" || true); do
			pkill -TERM -P "$k" 2>/dev/null || true
		done
		break
	done
	wait "$th" || true
	rm -f "$watch"
}

# no_result TEST...: those of the TESTs with no PASS or FAIL line yet.
no_result() {
	local t
	for t in "$@"; do
		grep -qE "^(PASS|FAIL) $t( |\$)" "$RESULTS" 2>/dev/null || echo "$t"
	done
}

# tally: "N passed, N failed" from $RESULTS, with a FAIL line for every
# TEST that has no result (the test host died); status 0 if all passed.
tally() {
	local t pass fail
	for t in $(no_result "$@"); do
		[ "$t" = args ] || result "FAIL $t (no result: the run ended before it)"
	done
	pass=$(grep -c '^PASS ' "$RESULTS" || true)
	fail=$(grep -c '^FAIL ' "$RESULTS" || true)
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
}

# ---- main ---------------------------------------------------------------------
if [ -n "${E2E_INSIDE:-}" ]; then
	# Here is a KVM that runs standard guests: the guest tests, in order.
	if [ -n "${TESTHOST:-}" ]; then
		DISKS=/tmp/e2e-disks # tmpfs in the test host; writeback cache
	else
		DISKS=$E2E_OUT/disks
	fi
	mkdir -p "$E2E_OUT" "$DISKS"
	for t in "$@"; do
		run_one "$t"
	done
	exit 0
fi

if [ $# = 0 ]; then
	if [ -n "$VMM_SET" ]; then
		set -- $GENERIC_TESTS
	else
		set -- $E2E_DEFAULT
	fi
fi
tests=()
for t in "$@"; do tests+=("$(norm "$t")"); done
set -- "${tests[@]}"
check_tests "$@"
t0=$(date +%s)
guest/build.sh
mkdir -p "$E2E_OUT"
rm -f "$RESULTS"
: >"$RESULTS"
guests=()
for t in "$@"; do
	if [ "$t" = args ]; then
		args_tests
	else
		guests+=("$t")
	fi
done
if [ ${#guests[@]} -gt 0 ]; then
	choose_where e2e "${E2E_WHERE:-}"
	case $where in
	host)
		say "running ${#guests[@]} guest tests on this host's KVM"
		E2E_INSIDE=1 "$0" "${guests[@]}" || true
		;;
	testhost)
		# The test host itself has panicked under nested guests now and
		# then (guest/README.md): boot it again, up to 3 boots, for the
		# tests that have no result yet.
		for boot in 1 2 3; do
			say "running ${#guests[@]} guest tests inside one test host boot"
			# A last guard: every boot has its own timeout.
			E2E_INSIDE=1 TESTHOST_OUT=$E2E_OUT \
				TESTHOST_TIMEOUT=${TESTHOST_TIMEOUT:-$((300 + ${#guests[@]} * 120))} \
				testhost_watched "$0" "${guests[@]}"
			mapfile -t guests < <(no_result "${guests[@]}")
			[ ${#guests[@]} -gt 0 ] && [ $boot -lt 3 ] || break
			say "the test host ended before the end of the tests (boot $boot of 3): booting it again"
		done
		;;
	*) die "E2E_WHERE must be host or testhost" ;;
	esac
fi
rc=0
tally "$@" || rc=$?
say "total $(($(date +%s) - t0))s"
exit $rc
