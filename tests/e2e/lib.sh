# shellcheck shell=bash
# tests/e2e/lib.sh: booting the guest image (guest/) under a VMM, shared by
# tests/e2e/run-main.sh.
# Sourced, not executed.
#
# Settings (the caller may change them between boots; `local` works too):
#   VMM=vmm|qemu   CPUS=2  QUEUES=2 (virtqueues per disk)  MEM=512 (MiB)
#   BOOT_TIMEOUT=300 (s per boot)  VMM_BIN (our VMM, default build/vmm)
#   VMM_VERBOSE=1  pass -v to our VMM (it prints its per-disk counters)
#   VMM_DISK_OPTS  appended to each of our VMM's disk specs (",batch=on")
#   CMDLINE_BASE   the guest's kernel command line before the action

E2E_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=${REPO:-$(cd "$E2E_LIB_DIR/../.." && pwd)}
KERNEL=${KERNEL:-$REPO/build/guest/bzImage}
INITRD=${INITRD:-$REPO/build/guest/initrd.img}
VMM=${VMM:-qemu}
VMM_BIN=${VMM_BIN:-$REPO/build/vmm}
MEM=${MEM:-512}
CPUS=${CPUS:-2}
QUEUES=${QUEUES:-2}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
VMM_VERBOSE=${VMM_VERBOSE-1}
CMDLINE_BASE=${CMDLINE_BASE:-console=ttyS0 quiet reboot=k panic=-1}

# ---- VMMs -------------------------------------------------------------------
# vmm_cmd_<name> CMDLINE DISK...: set the array vcmd to the command that
# boots the guest image with CMDLINE.  The VM's serial console must go to
# stdout and the VMM's own messages to stderr; its stdin is the console's
# input.  The VMM must exit when the guest resets (reboot=k).
# DISK is "PATH,serial=S[,ro]" or "ram:SIZE,serial=S"; the first is
# /dev/vda in the guest, the next /dev/vdb, ...

# Split a DISK spec into d_path, d_serial, d_ro.
disk_parse() {
	local IFS=, w
	# shellcheck disable=SC2086
	set -- $1
	d_path=$1 d_serial='' d_ro=''
	shift
	for w in "$@"; do
		case $w in
		serial=*) d_serial=${w#serial=} ;;
		ro) d_ro=1 ;;
		*)
			echo "e2e: bad disk option '$w'" >&2
			return 1
			;;
		esac
	done
}

# O_DIRECT works on the file's filesystem (not on tmpfs in Linux 6.1)?
direct_ok() {
	[ -f "$1" ] &&
		dd if="$1" of=/dev/null bs=4096 count=1 iflag=direct status=none 2>/dev/null
}

# QEMU: -enable-kvm -cpu host, virtio-blk-pci with an iothread per disk,
# $QUEUES queues, aio=io_uring, cache=none where O_DIRECT works (else
# writeback), pvpanic.  With -no-reboot a reset ends it with status 0; a
# panic (pvpanic) with status 1.
vmm_cmd_qemu() {
	local cmdline=$1 i=0 cache d
	shift
	vcmd=(qemu-system-x86_64 -enable-kvm -cpu host -smp "$CPUS" -m "$MEM"
		-nodefaults -display none -no-reboot
		-device pvpanic -action panic=exit-failure
		-kernel "$KERNEL" -initrd "$INITRD" -append "$cmdline"
		-chardev stdio,id=con,signal=off -serial chardev:con)
	for d in "$@"; do
		disk_parse "$d" || return 1
		case $d_path in
		ram:*)
			echo "e2e: VMM=qemu has no ram: disks" >&2
			return 1
			;;
		esac
		cache=none
		direct_ok "$d_path" || cache=writeback
		vcmd+=(-object "iothread,id=io$i"
			-drive "file=$d_path,if=none,id=d$i,format=raw,aio=io_uring,cache=$cache${d_ro:+,readonly=on}"
			-device "virtio-blk-pci,drive=d$i,iothread=io$i,num-queues=$QUEUES${d_serial:+,serial=$d_serial}")
		i=$((i + 1))
	done
}

# Our VMM: vmm run -k BZIMAGE -i INITRD -p CMDLINE -m SIZE -c N -d SPEC,
# SPEC = PATH[,ro][,direct][,queues=N][,serial=ID] or ram:SIZE[,...]
# (see vmm run --help); set up like QEMU above: O_DIRECT where the
# filesystem allows, same number of queues.
vmm_cmd_vmm() {
	local cmdline=$1 d spec
	shift
	vcmd=("$VMM_BIN" run ${VMM_VERBOSE:+-v} -k "$KERNEL" -i "$INITRD"
		-p "$cmdline" -m "$MEM" -c "$CPUS")
	for d in "$@"; do
		disk_parse "$d" || return 1
		spec=$d_path${d_ro:+,ro},queues=$QUEUES${d_serial:+,serial=$d_serial}${VMM_DISK_OPTS:-}
		direct_ok "$d_path" && spec=$spec,direct
		vcmd+=(-d "$spec")
	done
}

vmm_known() { declare -F "vmm_cmd_$1" >/dev/null; }
vmm_list() { declare -F | sed -n 's/^declare -f vmm_cmd_//p' | xargs; }

# In the test host a failed boot gets this many tries in all: its emulated
# AMD-V kills, hangs or crashes guests now and then (guest/README.md, known
# problems).
TESTHOST_TRIES=4

# ---- booting ------------------------------------------------------------------

# console_copy T0 [TSFILE]: copy the console (stdin) to stdout line by
# line as it arrives (no buffering, so that a BOOT_FEED can watch it),
# carriage returns dropped; with TSFILE, also into TSFILE with each line
# prefixed by the seconds since T0 (an $EPOCHREALTIME) at which it reached
# us.  Bash builtins only: no process per line.
console_copy() {
	local t0=${1//[!0-9]/} l t d ts= stalls=0
	if [ -n "${2:-}" ]; then
		exec {ts}>"$2"
	fi
	while IFS= read -r l || [ -n "$l" ]; do
		l=${l//$'\r'/}
		printf '%s\n' "$l"
		case $l in
		*"rcu: INFO: rcu_"*"detected stall"* | *"BUG: soft lockup"*)
			stalls=$((stalls + 1))
			[ "$stalls" != 1 ] || stall_kill
			;;
		esac
		[ -z "${BOOT_HOOK:-}" ] || "$BOOT_HOOK" "$l"
		[ -n "$ts" ] || continue
		t=${EPOCHREALTIME//[!0-9]/}
		d=$((10#$t - 10#$t0))
		printf '%d.%03d %s\n' $((d / 1000000)) $((d % 1000000 / 1000)) \
			"$l" >&"$ts"
	done
}

# stall_kill: the guest reported a stalled CPU (RCU stall or soft
# lockup, about 21 s after the stall began; in the test host a vCPU stops
# this way now and then and the guest never recovers; a sound guest here
# has not reported one): record where each thread of the VMM is
# (state, kernel wait channel, system call) in $log.stall, then end the VMM
# with SIGTERM (SIGKILL 5 s later if need be).  boot() then returns 126.
# Needs $log and the VMM's pid in $log.pid (boot() sets both).
stall_kill() {
	local pid t
	pid=$(cat "$log.pid" 2>/dev/null) || return 0
	{
		echo "the guest reported a stalled CPU; the VMM's threads:"
		for t in /proc/"$pid"/task/*; do
			printf '  %s %s state=%s wchan=%s syscall=%s\n' \
				"${t##*/}" "$(cat "$t/comm" 2>/dev/null)" \
				"$(awk '{ print $3 }' "$t/stat" 2>/dev/null)" \
				"$(cat "$t/wchan" 2>/dev/null)" \
				"$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)"
			sed 's/^/      /' "$t/stack" 2>/dev/null | head -n 12
		done
	} >"$log.stall" 2>&1
	# To timeout, the VMM's parent: it passes SIGTERM on, and sends
	# SIGKILL 5 s later if the VMM is still there (-k 5).
	kill -TERM "$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null)" \
		2>/dev/null || true
}

# boot NAME GUESTARGS DISK...: boot under $VMM with the command line
# "$CMDLINE_BASE GUESTARGS"; return the VMM's exit status (124 or 137:
# timed out after $BOOT_TIMEOUT s; 125: could not start it; 126: stopped
# after the guest reported a stalled CPU, see stall_kill).  The console
# lands in $E2E_OUT/NAME.log (carriage returns removed), the VMM's
# messages in $E2E_OUT/NAME.log.vmm.
#   BOOT_STDIN=FILE   the console's input (default /dev/null)
#   BOOT_FEED=FUNC    instead, the output of "FUNC LOG" is the console's
#                     input; FUNC may watch LOG (the console so far); it
#                     is killed when the VMM has exited
#   BOOT_HOOK=FUNC    FUNC LINE is called for every console line as it
#                     arrives (in a subshell: it can write files)
#   BOOT_TS=1         also write NAME.log.ts: every console line prefixed
#                     with the seconds since the launch at which it
#                     reached us
# Sets boot_secs: seconds from the launch to the VMM's exit.
boot() {
	local name=$1 gargs=$2 log=$E2E_OUT/$1.log rc=0 t0 t1 vcmd=() in fpid=
	shift 2
	# A boot that cannot start leaves no earlier boot's logs behind.
	rm -f "$log" "$log.vmm" "$log.ts" "$log.pid" "$log.stall"
	: >"$log"
	boot_secs=0
	"vmm_cmd_$VMM" "$CMDLINE_BASE${gargs:+ $gargs}" "$@" || return 125
	if [ -n "${BOOT_FEED:-}" ]; then
		exec {in}< <("$BOOT_FEED" "$log")
		fpid=$!
	else
		exec {in}<"${BOOT_STDIN:-/dev/null}"
	fi
	t0=$EPOCHREALTIME
	# The sh writes the VMM's pid (its own, then exec) for stall_kill.
	timeout -k 5 "$BOOT_TIMEOUT" sh -c 'echo $$ >"$0"; exec "$@"' \
		"$log.pid" "${vcmd[@]}" <&"$in" 2>"$log.vmm" |
		console_copy "$t0" ${BOOT_TS:+"$log.ts"} >>"$log"
	rc=${PIPESTATUS[0]}
	[ ! -s "$log.stall" ] || rc=126
	t1=${EPOCHREALTIME//[!0-9]/}
	t0=$((10#$t1 - 10#${t0//[!0-9]/}))
	printf -v boot_secs '%d.%03d' $((t0 / 1000000)) $((t0 % 1000000 / 1000))
	exec {in}<&-
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null
	return "$rc"
}

# show_fail NAME: the end of a boot's console and VMM messages.
show_fail() {
	local log=$E2E_OUT/$1.log
	echo "console (${log#"$REPO"/}), last lines:"
	tail -n 25 "$log" 2>/dev/null | sed 's/^/  | /'
	if [ -s "$log.stall" ]; then
		echo "when it was stopped (${log#"$REPO"/}.stall):"
		sed 's/^/  | /' "$log.stall"
	fi
	if [ -s "$log.vmm" ]; then
		echo "VMM messages (${log#"$REPO"/}.vmm):"
		tail -n 10 "$log.vmm" | sed 's/^/  | /'
	fi
}

# boot_status_text RC: what a VMM exit status means, for messages.
boot_status_text() {
	case $1 in
	124 | 137) echo "timed out after ${BOOT_TIMEOUT}s" ;;
	125) echo "could not be started" ;;
	126) echo "stopped: the guest reported a stalled CPU" ;;
	*) echo "exit status $1" ;;
	esac
}

# marker_block LOG BEGIN END OUT: the lines of LOG between /init's
# marker lines "BEGIN" and "END rc=N ===" into OUT; print N (nothing if
# the end marker is missing).
marker_block() {
	sed -n "/^$2\$/,/^$3 rc=/p" "$1" | sed '1d;$d' >"$4"
	sed -n "s/^$3 rc=\([0-9]*\) ===\$/\1/p" "$1" | tail -n 1
}

# fio_json LOG NAME OUT: fio's JSON for job NAME into OUT; print its rc.
fio_json() {
	marker_block "$1" "=== FIO-JSON BEGIN $2 ===" "=== FIO-JSON END $2" "$3"
}

# flatj JSON: "path value" lines (see jsonflat.awk).
flatj() { awk -f "$E2E_LIB_DIR/jsonflat.awk" "$1"; }

# flat JSON PATH: the value at PATH.
flat() { flatj "$1" | awk -v p="$2" '$1 == p { print $2; exit }'; }

# boot_ended NAME STATUS END WHAT: after boot NAME, the VMM's exit STATUS
# is 0 and the guest's end marker was there (END, the rc= it carries, is
# not empty; WHAT says which marker).  Prints what is wrong, with the
# console, and returns 1 otherwise.
boot_ended() {
	if [ "$2" != 0 ]; then
		echo "the VMM failed: $(boot_status_text "$2")"
	elif [ -z "$3" ]; then
		echo "no $4"
	else
		return 0
	fi
	show_fail "$1"
	return 1
}

# fio_boot NAME JOB DISK...: boot with fio=JOB on the disk with serial
# "data", check that the VMM exited 0, the markers, rc=0, the JSON and no
# job error; the JSON is left in $E2E_OUT/NAME.json.  Prints what is wrong
# (with the console) and returns 1 on failure.
fio_boot() {
	local t=$1 job=$2 rc=0 frc json=$E2E_OUT/$1.json err
	shift 2
	rm -f "$json"
	boot "$t" "fio=$job disk=data" "$@" || rc=$?
	frc=$(fio_json "$E2E_OUT/$t.log" "$job" "$json")
	boot_ended "$t" "$rc" "$frc" "FIO-JSON END marker for $job" || return 1
	grep '^fio: ' "$E2E_OUT/$t.log" | head -n 20
	if [ "$frc" != 0 ]; then
		echo "fio $job failed in the guest: rc=$frc"
		show_fail "$t"
		return 1
	fi
	if ! flatj "$json" >/dev/null; then
		echo "fio $job: output between the markers is not JSON"
		return 1
	fi
	err=$(flatj "$json" |
		awk '$1 ~ /^jobs\.[0-9]+\.error$/ && $2 != 0 { print $1 "=" $2 }')
	if [ -n "$err" ]; then
		echo "fio $job reports errors: $err"
		return 1
	fi
}

# fio_summary JSON: one line per job and direction that moved data:
# name, IOPS, bandwidth, mean and p99 completion latency.
fio_summary() {
	flatj "$1" | awk '
		$1 ~ /^jobs\.[0-9]+\.jobname$/ {
			split($1, p, "."); gsub(/"/, "", $2); name[p[2]] = $2 }
		{
			n = split($1, p, ".")
			if (p[1] != "jobs" || (p[3] != "read" && p[3] != "write"))
				next
			k = p[2] SUBSEP p[3]
			if (n == 4 && p[4] == "iops") iops[k] = $2
			if (n == 4 && p[4] == "bw_bytes") bw[k] = $2
			if (n == 5 && p[4] == "clat_ns" && p[5] == "mean") mean[k] = $2
			if (p[4] == "clat_ns" && p[5] == "percentile" &&
			    p[6] == "99" && p[7] == "000000") p99[k] = $2
			if (!(k in seen)) { seen[k] = 1; order[++m] = k }
		}
		END {
			for (i = 1; i <= m; i++) {
				k = order[i]
				if (!(iops[k] > 0)) continue
				split(k, q, SUBSEP)
				printf "%-13s %-5s IOPS %7.0f  BW %7.1f MiB/s  " \
				       "latency mean %8.1f us, p99 %8.1f us\n",
				       name[q[1]], q[2], iops[k], bw[k] / 1048576,
				       mean[k] / 1000, p99[k] / 1000
			}
		}'
}

# ---- where ------------------------------------------------------------------

# kvm_probe: `vmm probe` times a tiny guest loop; sets probe_out (its
# loop and verdict lines) and probe_rc (0 fast KVM, 1 slow, 2 none).
kvm_probe() {
	local out rc=0
	out=$(timeout -k 2 30 "$REPO/build/vmm" probe 2>&1) || rc=$?
	probe_out=$(printf '%s\n' "$out" | grep -E '^(guest loop|verdict)' |
		tr '\n' ' ')
	case $rc in
	0) probe_rc=0 ;;
	6) probe_rc=1 ;;
	*) probe_rc=2 ;;
	esac
}

# choose_where NAME OVERRIDE: sets where=host|testhost: OVERRIDE when it
# is set, else host if `vmm probe` finds a KVM that runs standard guests
# at speed (its lines go to stderr, prefixed with NAME).
choose_where() {
	where=$2
	[ -z "$where" ] || return 0
	kvm_probe || exit 1
	printf '%s: %s\n' "$1" "$probe_out" >&2
	where=testhost
	[ "$probe_rc" != 0 ] || where=host
}

# testhost CMD [ARG...]: tests/testhost/run.sh CMD, one test host at a time
# on this machine (flock on /tmp/testhost.lock, shared with other users).
testhost() {
	local lock=${TESTHOST_LOCK:-/tmp/testhost.lock}
	flock -n "$lock" true ||
		echo "waiting for $lock: another test host is running" >&2
	flock "$lock" "$REPO/tests/testhost/run.sh" "$@"
}
