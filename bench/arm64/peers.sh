#!/bin/sh
# bench/arm64/peers.sh OUT: our arm64 VMM beside kvmtool (and QEMU, where
# OUT/plan.txt names it) in the arm64 test host, one guest boot per
# configuration and repeat, in the order OUT/plan.txt gives.  Run inside
# the arm64 test host (busybox sh: the x86 host's programs do not run
# there) by bench/vmbench arm64-peers (bench/vmharness/arm64peers.py),
# which writes the plan, boots the test host and analyses what this
# leaves:
#   OUT/runs.jsonl          one JSON line per run (configuration, repeat,
#                           job): fio's status, the guest's /proc/interrupts
#                           rows of its virtio devices before and after fio,
#                           this test host's KVM counters (debugfs) before
#                           and after fio, the VMM process's threads' CPU
#                           time before and after fio (schedstat's run
#                           time and stat's guest_time, with CLK_TCK), the
#                           run's position in the plan
#   OUT/fio/rR-CONFIG-JOB.json   fio's JSON (trimmed in the guest)
#   OUT/console/rR-CONFIG.txt.gz the guest's console (gzip)
#
# OUT/plan.txt: "#" lines are comments; "runtime SEED_S" sets the seed
# job's runtime (seconds per phase; 0 keeps the job file's), "disk_mb N"
# the data disk's size, then one line per guest boot, in order:
#   REPEAT POS CONFIG JOB[,JOB...]
# CONFIG is one of
#   vmm-ram      ours, data disk ram:N (our in-process RAM disk)
#   vmm-file     ours, data disk /tmp/disk.img (a file on this tmpfs)
#   kvmtool-file kvmtool (build/peers/arm64/lkvm-static), the same file
#   qemu-file    QEMU 7.2, Debian's arm64 build unpacked with its libraries
#                into build/arm64-sysroot/root by bench/arm64/qemu-sysroot.sh
#                (run through that sysroot's dynamic loader), the same file,
#                an iothread, aio=io_uring (cache=writeback: tmpfs has no
#                O_DIRECT in 6.1), its PL011 console (ttyAMA0)
#   vmm-nullb, kvmtool-nullb, qemu-nullb
#                the same three on a block device: a memory-backed null_blk
#                of disk_mb (the plan's "nullb BS COMPLETION_NS" line: its
#                logical block and completion time; submit_queues=2,
#                hw_queue_depth=64, irqmode=2), made through configfs and
#                written once whole before the first boot, opened with
#                O_DIRECT by every VMM (ours `direct`, kvmtool `direct`,
#                QEMU cache=none with aio=io_uring and an iothread)
#   vmm-nullb-poll0  ours on it without polling (poll=0): the CPU that
#                ours' default 32 us poll costs, and what it buys
#   qemu10-nullb QEMU 10.0 (Debian 12's backports, unpacked by
#                `bench/arm64/qemu-sysroot.sh 10` into
#                build/arm64-sysroot10/root) on the same null_blk,
#                cache=none, aio=io_uring, one IOThread per queue
#                (iothread-vq-mapping, 2 queues): QEMU at its best
#   host-nullb   no VM: this test host's own fio on the same null_blk, the
#                same jobs (the guest image's fio and libraries, unpacked
#                once into /tmp/hostroot and run there through chroot,
#                FIO_DISK the device): the physical limit
# Every guest: 2 vCPUs, 512 MiB, Debian's arm64 kernel and the guest image
# (build/guest/arm64), an 8 MiB boot disk /tmp/boot.img as vda (unused),
# the data disk as vdb, created anew (sparse, zeros) before every boot.
# The guest runs the jobs (guest/jobs/JOB.fio, in the plan's order).
# A run already in OUT/runs.jsonl is not run again (a second boot of the
# test host goes on where the first stopped).
set -u
OUT=$1
REPO=$(cd "$(dirname "$0")/../.." && pwd)
K=$REPO/build/guest/arm64/Image
I=$REPO/build/guest/arm64/initrd.img
VMM=$REPO/build/arm64/vmm
LKVM=$REPO/build/peers/arm64/lkvm-static
SYSROOT=$REPO/build/arm64-sysroot/root
SYSROOT10=$REPO/build/arm64-sysroot10/root
# Each guest boot is bounded: the harness stops a test host that shows no
# sign of life (OUT/heartbeat, OUT/runs.jsonl, its console) for
# arm64peers.STALL_S = 900 s, and a guest may be silent for its whole run.
# This script writes OUT/heartbeat as each boot starts and runs.jsonl as
# it ends, so a boot's limit must stay clearly below 900 s, with room for
# the work around it (the console's parsing, gzip).
RUN_TIMEOUT=${RUN_TIMEOUT:-780}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-300}
mkdir -p "$OUT/fio" "$OUT/console" "$OUT/tmp"

[ -d /sys/kernel/debug/kvm ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null

b64() { printf '%s' "$1" | base64 | tr -d '\n'; }

# The KVM counters of this test host (the sums over its VMs: one runs at
# a time), "name value" lines; the histograms are left out.  Builtins
# only: no fork between the guest's marker and fio's start.
kvm_counters() {
	local f v
	for f in /sys/kernel/debug/kvm/*; do
		[ -f "$f" ] || continue
		case ${f##*/} in *hist*) continue ;; esac
		read -r v <"$f" 2>/dev/null || continue
		echo "${f##*/} $v"
	done
}

# vmm_threads PID: "TID RUN_NS GUEST_TICKS COMM" per thread of process
# PID: its time on a CPU (schedstat) and the part of it in guest mode
# (stat's field 43, guest_time, in clock ticks).  Builtins only, as
# kvm_counters.
vmm_threads() {
	local t run s g comm
	[ -n "$1" ] || return 0
	for t in /proc/$1/task/*; do
		read -r run _ <"$t/schedstat" 2>/dev/null || continue
		read -r s <"$t/stat" 2>/dev/null || continue
		read -r comm <"$t/comm" 2>/dev/null || continue
		# the fields after the name's ")": state is field 3, so
		# guest_time (43) is the 41st
		set -- ${s##*) }
		shift 40 2>/dev/null || continue
		g=$1
		echo "${t##*/} $run $g $comm"
	done
}

# vmm_pid TIMEOUT_PID: the VMM (QEMU through its sysroot's dynamic
# loader is one process too); empty if gone.  The test hosts' timeout is
# busybox's, which becomes the command itself (its watcher is no child of
# it); coreutils' timeout stays and runs the command as its child.
vmm_pid() {
	local parent=$1 c s
	read -r c <"/proc/$parent/comm" 2>/dev/null || return 0
	[ "$c" = timeout ] || { echo "$parent"; return; }
	if read -r c _ <"/proc/$parent/task/$parent/children" 2>/dev/null; then
		echo "$c"
		return
	fi
	for c in /proc/[0-9]*; do
		read -r s <"$c/stat" 2>/dev/null || continue
		set -- ${s##*) }  # state, then the parent's PID
		[ "$2" = "$parent" ] && { echo "${c##*/}"; return; }
	done
}

# What the guest runs (run64): per job, the virtio rows of
# /proc/interrupts, fio between PHASE markers (the host reads its KVM
# counters there), the interrupts again, and fio's JSON less what the
# analysis does not read (each byte through the UART is an exit).
guest_script() {
	local jobs=$1 rt=$2
	cat <<EOF
v=\$(basename \$(readlink /sys/block/vdb/device));echo "vdb=\$v"
i(){ echo "=== IRQ BEGIN \$1 \$2 ===";grep -E 'CPU|virtio' /proc/interrupts;echo "=== IRQ END \$1 \$2 ===";}
for j in $jobs;do f=/jobs/\$j.fio;[ \$j = seed-virtio-blk ]&&[ $rt != 0 ]&&{ sed 's/^runtime=.*/runtime=$rt/' \$f>/tmp/s.fio;f=/tmp/s.fio;}
i \$j before;echo "=== PHASE BEGIN \$j ===";(cd /tmp&&fio --eta=never --output-format=json --output=/tmp/o.json \$f 2>/tmp/e);r=\$?;echo "=== PHASE END \$j ===";i \$j after;head -c 300 /tmp/e
echo "=== FIO-JSON BEGIN \$j ===";sed -n '/^{/,\$p' /tmp/o.json|awk '/[[{] *\$/||/^ *[]}]/||/"(jobname|error|io_bytes|total_ios|iops|bw|mean|runtime|50\\.000000|99\\.000000)"/{sub(/^ */,"");print}';echo "=== FIO-JSON END \$j rc=\$r ===";done
EOF
}

# qemu_libs ROOT: the library path of a QEMU sysroot.
qemu_libs() {
	local d out=
	for d in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu/pulseaudio usr/lib/aarch64-linux-gnu/ceph; do
		[ -d "$1/$d" ] && out=${out:+$out:}$1/$d
	done
	echo "$out"
}

# qemu_argv DATA CACHE [ROOT DEVICE]: QEMU's command line with DATA as
# vdb; by default the 7.2 sysroot's and one IOThread for the disk, else
# ROOT's QEMU and vdb's -device (and its IOThreads) as DEVICE.
qemu_argv() {
	local root=${3:-$SYSROOT}
	local dev=${4:-"-object iothread,id=io0 -device virtio-blk-pci,drive=d1,iothread=io0"}
	echo "$root/lib/ld-linux-aarch64.so.1 --library-path $(qemu_libs "$root") $root/usr/bin/qemu-system-aarch64 -L $root/usr/share/qemu -M virt,gic-version=3 -accel kvm -cpu host -smp 2 -m 512 -name guest,debug-threads=on -nodefaults -nographic -serial stdio -monitor none -kernel $K -initrd $I -drive file=/tmp/boot.img,if=none,id=d0,format=raw -device virtio-blk-pci,drive=d0 -drive file=$1,if=none,id=d1,format=raw,aio=io_uring,cache=$2 $dev"
}
# QEMU 9.0 and later: one IOThread per queue, only in JSON -device syntax
# (no spaces in it: vm_argv's words are split on them).
VQMAP='-object iothread,id=q0 -object iothread,id=q1 -device {"driver":"virtio-blk-pci","drive":"d1","num-queues":2,"iothread-vq-mapping":[{"iothread":"q0"},{"iothread":"q1"}]}'


# NULLB: the null_blk of the *-nullb configurations (made once, by
# tests/testhost/nullb.sh's nullb_make, and written whole: a
# memory-backed null_blk reads a block never written as zeros without a
# copy).
. "$REPO/tests/testhost/nullb.sh"
NULLB=
nullb_peers() {
	NULLB=$(nullb_make nullbpeers "$DISK_MB" "$1" "$2") || return 1
	dd if=/dev/zero of="$NULLB" bs=1M count="$DISK_MB" 2>/dev/null
	echo "peers.sh: $NULLB: $DISK_MB MiB, $1-byte blocks, completion $2 ns" >&2
}

# host-nullb's root: the guest image (busybox, fio and its libraries:
# this test host has no fio of its own) unpacked once, with /dev, /proc
# and /sys.
HOSTROOT=/tmp/hostroot
host_root() {
	[ -x "$HOSTROOT/bin/fio" ] && return 0
	mkdir -p "$HOSTROOT" && (cd "$HOSTROOT" && cpio -id <"$I" 2>/dev/null)
	[ -x "$HOSTROOT/bin/fio" ] || return 1
	mkdir -p "$HOSTROOT/dev" "$HOSTROOT/proc" "$HOSTROOT/sys" "$HOSTROOT/tmp"
	mount --bind /dev "$HOSTROOT/dev" && mount -t proc proc "$HOSTROOT/proc" &&
		mount -t sysfs sys "$HOSTROOT/sys"
}
host_root_gone() {
	[ -d "$HOSTROOT" ] || return 0
	umount "$HOSTROOT/dev" "$HOSTROOT/proc" "$HOSTROOT/sys" 2>/dev/null
	rm -rf "$HOSTROOT"
}

# vm_argv CONFIG: the command line of one guest under CONFIG.
vm_argv() {
	local cfg=$1
	case $cfg in
	vmm-ram)
		echo "$VMM run -c 2 -m 512 -k $K -i $I -d /tmp/boot.img -d ram:${DISK_MB}M" ;;
	vmm-file)
		echo "$VMM run -c 2 -m 512 -k $K -i $I -d /tmp/boot.img -d /tmp/disk.img" ;;
	kvmtool-file)
		echo "$LKVM run -c 2 -m 512 -k $K -i $I --virtio-transport pci --irqchip gicv3-its --network mode=none -d /tmp/boot.img -d /tmp/disk.img" ;;
	qemu-file)
		qemu_argv /tmp/disk.img writeback ;;
	vmm-nullb)
		echo "$VMM run -c 2 -m 512 -k $K -i $I -d /tmp/boot.img -d $NULLB,direct" ;;
	vmm-nullb-poll0)
		echo "$VMM run -c 2 -m 512 -k $K -i $I -d /tmp/boot.img -d $NULLB,direct,poll=0" ;;
	kvmtool-nullb)
		echo "$LKVM run -c 2 -m 512 -k $K -i $I --virtio-transport pci --irqchip gicv3-its --network mode=none -d /tmp/boot.img -d $NULLB,direct" ;;
	qemu-nullb)
		qemu_argv "$NULLB" none ;;
	qemu10-nullb)
		qemu_argv "$NULLB" none "$SYSROOT10" "$VQMAP" ;;
	host-nullb)
		# the guest's script, run here: FIO_DISK as the guest's /init sets it
		echo "chroot $HOSTROOT /bin/sh -c" ;;
	*)
		echo "peers.sh: no configuration $cfg" >&2
		return 1 ;;
	esac
}


# One JSON line per job of a finished boot, from its console and the
# counters the host read at its markers.
emit_runs() {
	local rep=$1 pos=$2 cfg=$3 jobs=$4 rc=$5 secs=$6 con=$7 kd=$8 j fj n=0
	for j in $(echo "$jobs" | tr , ' '); do
		n=$((n + 1))
		fj=fio/r$rep-$cfg-$j.json
		# fio's JSON between its markers.
		awk -v j="$j" '{ sub(/\r$/, "") }
			$0 == "=== FIO-JSON BEGIN " j " ===" { on = 1; next }
			on && index($0, "=== FIO-JSON END " j " rc=") == 1 { on = 0; exit }
			on { print }' "$con" >"$OUT/$fj"
		[ -s "$OUT/$fj" ] || { rm -f "$OUT/$fj"; fj=; }
		awk -v j="$j" -v rep="$rep" -v pos="$pos" -v cfg="$cfg" -v jpos="$n" \
			-v rc="$rc" -v secs="$secs" -v fj="$fj" \
			-v kb="$kd/$j.before" -v ka="$kd/$j.after" -v tck="$CLK_TCK" \
			-v cb="$kd/$j.cpu.before" -v ca="$kd/$j.cpu.after" '
			function irq(line,   f, nf, i, s, name) {
				nf = split(line, f, " ")
				s = 0
				for (i = 2; i <= 1 + ncpu && i <= nf; i++) s += f[i]
				name = f[nf]
				return "\"" name "\":" s
			}
			function kvm(path,   line, f, out) {
				out = ""
				while ((getline line < path) > 0) {
					split(line, f, " ")
					if (f[2] ~ /^[0-9]+$/)
						out = out (out == "" ? "" : ",") "\"" f[1] "\":" f[2]
				}
				close(path)
				return "{" out "}"
			}
			function cpu(path,   line, f, out, comm) {
				out = ""
				while ((getline line < path) > 0) {
					if (split(line, f, " ") < 4) continue
					comm = line
					sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", comm)
					gsub(/["\\]/, "", comm)
					out = out (out == "" ? "" : ",") "\"" f[1] "\":[" f[2] "," f[3] ",\"" comm "\"]"
				}
				close(path)
				return "{" out "}"
			}
			{ sub(/\r$/, "") }
			/^vdb=/ { vdb = substr($0, 5) }
			$0 == "=== IRQ BEGIN " j " before ===" { w = "b"; next }
			$0 == "=== IRQ BEGIN " j " after ===" { w = "a"; next }
			/^=== IRQ END / { w = ""; next }
			w != "" && /CPU0/ { ncpu = NF; next }
			w == "b" && /virtio/ { ib = ib (ib == "" ? "" : ",") irq($0) }
			w == "a" && /virtio/ { ia = ia (ia == "" ? "" : ",") irq($0) }
			index($0, "=== FIO-JSON END " j " rc=") == 1 {
				frc = $0; sub(/.* rc=/, "", frc); sub(/ .*/, "", frc)
			}
			END {
				printf "{\"repeat\":%d,\"pos\":%d,\"config\":\"%s\",\"job\":\"%s\",\"job_pos\":%d,", rep, pos, cfg, j, jpos
				printf "\"rc\":%d,\"fio_rc\":%s,\"fio\":%s,\"boot_s\":%s,\"vdb\":\"%s\",", rc, frc == "" ? "null" : frc, fj == "" ? "null" : "\"" fj "\"", secs, vdb
				printf "\"irq_before\":{%s},\"irq_after\":{%s},", ib, ia
				printf "\"kvm_before\":%s,\"kvm_after\":%s,", kvm(kb), kvm(ka)
				printf "\"clk_tck\":%d,\"threads_before\":%s,\"threads_after\":%s}\n", tck, cpu(cb), cpu(ca)
			}' "$con" >>"$OUT/runs.jsonl"
	done
}

echo "peers.sh: $(uname -r), $(nproc) CPUs, kvm debugfs: $(ls /sys/kernel/debug/kvm 2>/dev/null | grep -vc -- -)" >&2
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
RT=0
DISK_MB=1024
NULLB_ARGS="512 10000"
BROKEN=
while read -r a b c d; do
	case $a in
	'#'* | '') continue ;;
	runtime) RT=$b; continue ;;
	disk_mb) DISK_MB=$b; continue ;;
	nullb) NULLB_ARGS="$b $c"; continue ;;
	esac
	rep=$a pos=$b cfg=$c jobs=$d
	if [ -f "$OUT/runs.jsonl" ] && grep -q "\"repeat\":$rep,\"pos\":$pos,\"config\":\"$cfg\"" "$OUT/runs.jsonl"; then
		continue
	fi
	case " $BROKEN " in
	*" $cfg "*)
		echo "peers.sh: repeat $rep, $cfg: skipped (an earlier boot of it gave no fio result)" >&2
		continue ;;
	esac
	case $cfg in *-nullb)
		if [ -z "$NULLB" ] && ! nullb_peers $NULLB_ARGS; then
			echo "peers.sh: repeat $rep, $cfg: skipped (no null_blk device)" >&2
			BROKEN="$BROKEN $cfg"
			continue
		fi ;;
	esac
	if [ "$cfg" = host-nullb ] && ! host_root; then
		echo "peers.sh: repeat $rep, $cfg: skipped (no fio in $I)" >&2
		BROKEN="$BROKEN $cfg"
		continue
	fi
	argv=$(vm_argv "$cfg") || exit 2
	script=$(guest_script "$(echo "$jobs" | tr , ' ')" "$RT")
	# QEMU's virt machine has a PL011 (ttyAMA0), ours and kvmtool an
	# 8250; QEMU takes its kernel's command line with -append, and has a
	# limit of its own.
	tty=ttyS0 pflag=-p limit=$RUN_TIMEOUT
	case $cfg in qemu*) tty=ttyAMA0 pflag=-append limit=$QEMU_TIMEOUT ;; esac
	params="console=$tty quiet panic=-1 run64=$(b64 "$script")"
	rm -f /tmp/disk.img /tmp/boot.img
	truncate -s 8M /tmp/boot.img
	truncate -s "${DISK_MB}M" /tmp/disk.img
	kd=$OUT/tmp/k-$rep-$cfg
	rm -rf "$kd"
	mkdir -p "$kd"
	con=$OUT/tmp/r$rep-$cfg.txt
	echo "peers.sh: repeat $rep, #$pos: $cfg: $jobs" >&2
	read -r t0 _ </proc/uptime
	# The sign of life for this boot (see RUN_TIMEOUT).
	date +%s >"$OUT/heartbeat"
	# The console through a loop that reads the KVM counters at the
	# guest's PHASE markers (host-nullb: its fio's output, no counters).
	if [ "$cfg" = host-nullb ]; then
		{ timeout -s TERM "$limit" $argv "export FIO_DISK=$NULLB; $script" </dev/null 2>&1
		  echo "=== VM EXIT rc=$? ==="; } >"$con"
	else
	# set -f: no pathname expansion of the words (VQMAP's brackets).
	# timeout's PID in kd/timeout.pid: the VMM is its child.
	{ set -f; timeout -s TERM "$limit" $argv $pflag "$params" </dev/null 2>&1 &
	  echo $! >"$kd/timeout.pid"; wait $!; echo "=== VM EXIT rc=$? ==="; } |
		while IFS= read -r line; do
			case $line in
			"=== PHASE BEGIN "*) j=${line#=== PHASE BEGIN }; j=${j% ===*}; kvm_counters >"$kd/$j.before"
				read -r tpid <"$kd/timeout.pid"; vpid=$(vmm_pid "$tpid")
				vmm_threads "$vpid" >"$kd/$j.cpu.before" ;;
			"=== PHASE END "*) j=${line#=== PHASE END }; j=${j% ===*}; kvm_counters >"$kd/$j.after"
				vmm_threads "$vpid" >"$kd/$j.cpu.after" ;;
			esac
			printf "%s\n" "$line"
		done >"$con"
	fi
	read -r t1 _ </proc/uptime
	rc=$(sed -n 's/^=== VM EXIT rc=\([0-9]*\) ===.*/\1/p' "$con" | tail -n 1)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	echo "peers.sh: repeat $rep, $cfg: status ${rc:-?}, ${secs} s" >&2
	emit_runs "$rep" "$pos" "$cfg" "$jobs" "${rc:-255}" "$secs" "$con" "$kd"
	# A configuration that gave no fio result at all (it does not start
	# here: QEMU's libraries, KVM's refusal) is not tried again in this
	# boot; its runs are listed as missing.
	grep -q '=== FIO-JSON END .* rc=0 ===' "$con" || BROKEN="$BROKEN $cfg"
	# The console, kept small: fio's JSON is in OUT/fio already.
	awk '/=== FIO-JSON BEGIN/ { skip = 1 } !skip { print } /=== FIO-JSON END/ { skip = 0 }' "$con" |
		gzip -c >"$OUT/console/r$rep-$cfg.txt.gz"
	rm -rf "$con" "$kd"
done <"$OUT/plan.txt"
rm -f /tmp/disk.img /tmp/boot.img
host_root_gone
nullb_remove nullbpeers
rmdir "$OUT/tmp" 2>/dev/null
exit 0
