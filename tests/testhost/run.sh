#!/bin/bash
# tests/testhost/run.sh CMD [ARG...]
#
# Run CMD inside the test host: a QEMU virtual machine (TCG, emulated AMD-V
# with nested paging) booted from Debian's kernel, whose root is this
# machine's root shared read-only over 9p, and in which /dev/kvm is a
# working KVM that runs standard Linux guests at usable speed.  See
# guest/README.md for why it exists.
#
# CMD runs as root in the host's root (chroot), in the current directory,
# with the caller's exported environment.  The checkout is shared on its own
# (read-only, same path), so it is there even when it lives under /tmp.
# Writable there: /tmp, /run,
# /dev/shm (tmpfs, gone afterwards) and $TESTHOST_OUT (shared read-write at
# the same path as here).  CMD's stdout and stderr come back on ours, and
# its exit status becomes ours.  If the test host fails or times out, its
# console is shown and the status is 124 (timeout) or 125 (other failure).
#
# TESTHOST_ARCH=arm64: the arm64 test host instead, for the arm64 VMM:
# qemu-system-aarch64 -M virt,virtualization=on,gic-version=3 -cpu max
# (TCG, the kernel at EL2 with VHE), Debian's arm64 kernel (KVM built in)
# and an arm64 initramfs (TESTHOST_ARCH=arm64 tests/testhost/mkinitramfs.sh).
# This machine's programs cannot run there, so there is no host root and
# no chroot: the initramfs is the root, with busybox's applets on PATH
# (/bin:/sbin, the caller's PATH is not kept), /tmp, /run, /dev/shm
# (tmpfs), /dev, /proc, /sys, /dev/kvm, the checkout (read-only) and
# $TESTHOST_OUT (read-write) at their paths here.  CMD runs there with
# busybox sh: shell scripts (#!/bin/sh) and static arm64 programs; the
# current directory must be in the checkout or in $TESTHOST_OUT.  Its
# stdout and stderr travel on two virtio-serial ports (the virt machine
# has one UART, the console), written by QEMU into the same FIFOs as on
# x86: they arrive while CMD runs, not at its end.  Everything else is the
# same: environment, exit statuses, files and knobs.
#
# Environment:
#   TESTHOST_ARCH=ARCH    x86_64 (default) or arm64 (aarch64)
#   TESTHOST_OUT=DIR      read-write directory (default build/testhost/out;
#                         arm64: build/testhost/arm64/out)
#   TESTHOST_TIMEOUT=S    limit for the whole run in seconds (default 1800)
#   TESTHOST_MEM=6G TESTHOST_SMP=2   size of the test host (arm64: 3G)
#   TESTHOST_CPU=MODEL    QEMU's -cpu for it (default EPYC,+svm,+npt;
#                         arm64: max,pauth-impdef=on)
#   TESTHOST_QEMU=PROGRAM the emulator (default qemu-system-x86_64;
#                         "$(tests/testhost/emulator.sh)" for QEMU 10.0;
#                         arm64: qemu-system-aarch64)
#   TESTHOST_ACCEL=OPTS   QEMU's -accel for it (default tcg,thread=multi;
#                         tcg,thread=single runs both CPUs on one thread)
#   TESTHOST_VERBOSE=1    also copy the test host's console to stderr
#   TESTHOST_MONITOR=SOCK QEMU's monitor on a Unix socket, to look at a
#                         test host that locked up (`info registers -a`)
set -eu
export LOG_TAG=testhost
here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/../.." && pwd)
. "$REPO/guest/lib.sh"

[ $# -gt 0 ] || die "usage: tests/testhost/run.sh CMD [ARG...]"

# What differs between the two test hosts; everything below is shared.
# QEMU_ARCH: QEMU's arguments for the machine, the command's stdout and
# stderr (chardevs out and err) and, on x86, the host root.
case ${TESTHOST_ARCH:-x86_64} in
x86_64 | amd64)
	TH_ARCH=x86_64
	QEMU_DEFAULT=qemu-system-x86_64 QEMU_PKG=qemu-system-x86
	TBUILD=$REPO/build/testhost
	MEM_DEFAULT=6G CPU_DEFAULT=EPYC,+svm,+npt
	CONSOLE=ttyS0 APPEND_ARCH="reboot=k"
	QEMU_ARCH=(-serial chardev:out -serial chardev:err
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap")
	;;
arm64 | aarch64)
	TH_ARCH=arm64
	QEMU_DEFAULT=qemu-system-aarch64 QEMU_PKG=qemu-system-arm
	TBUILD=$REPO/build/testhost/arm64
	# pauth-impdef: QEMU's own pointer-authentication hash instead of
	# the architected QARMA, which TCG computes slowly.
	MEM_DEFAULT=3G CPU_DEFAULT=max,pauth-impdef=on
	CONSOLE=ttyAMA0 APPEND_ARCH=
	# The virt machine has one UART, the console: the command's output
	# travels on virtio-serial ports.
	QEMU_ARCH=(-M "virt,virtualization=on,gic-version=3"
		-device "virtio-serial-pci,id=thser"
		-device "virtserialport,bus=thser.0,chardev=out,name=th.stdout"
		-device "virtserialport,bus=thser.0,chardev=err,name=th.stderr")
	;;
*) die "TESTHOST_ARCH=$TESTHOST_ARCH: x86_64 or arm64" ;;
esac
export TESTHOST_ARCH=$TH_ARCH # for mkinitramfs.sh

if [ -n "${TESTHOST_QEMU:-}" ]; then
	QEMU=$TESTHOST_QEMU
	command -v "$QEMU" >/dev/null || die "TESTHOST_QEMU=$QEMU: not found"
else
	QEMU=$QEMU_DEFAULT
	command -v "$QEMU" >/dev/null ||
		die "$QEMU not found (apt-get install $QEMU_PKG)"
fi

OUT=${TESTHOST_OUT:-$TBUILD/out}
TIMEOUT=${TESTHOST_TIMEOUT:-1800}
MEM=${TESTHOST_MEM:-$MEM_DEFAULT}
SMP=${TESTHOST_SMP:-2}
ACCEL=${TESTHOST_ACCEL:-tcg,thread=multi}

# On arm64 only the checkout and $TESTHOST_OUT are there.
if [ "$TH_ARCH" = arm64 ]; then
	case $PWD/ in
	"$REPO"/* | "$(realpath -m "$OUT")"/*) ;;
	*) die "the arm64 test host has only the checkout and TESTHOST_OUT: run it from one of them, not $PWD" ;;
	esac
fi
kernel=$("$here/mkinitramfs.sh")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
case $OUT$REPO in
*[[:space:],]*) die "TESTHOST_OUT and the checkout must not contain spaces or commas: $OUT $REPO" ;;
esac
ctl=$OUT/.testhost
rm -rf "$ctl"
mkdir -p "$ctl"

# The command, run by bash in the chroot (arm64: by busybox sh in the
# test host's own root): environment, cwd, argv.
{
	export -p | grep -vE '^(declare -x |export )(BASH[A-Z_]*|SHELLOPTS|SHLVL|PWD|OLDPWD|_|TERM|TESTHOST_[A-Z_]*)(=|$)' |
		sed 's/^declare -x /export /'
	printf 'export TESTHOST=1 TESTHOST_ARCH=%q TESTHOST_OUT=%q\n' "$TH_ARCH" "$OUT"
	[ "$TH_ARCH" = x86_64 ] || printf 'export PATH=/bin:/sbin\n'
	printf 'cd %q || exit 125\n' "$PWD"
	printf 'exec'
	printf ' %q' "$@"
	printf '\n'
} >"$ctl/cmd.sh.tmp"
mv "$ctl/cmd.sh.tmp" "$ctl/cmd.sh"

# The command's stdout and stderr travel on ttyS1 and ttyS2 (arm64: the
# virtio-serial ports th.stdout and th.stderr); QEMU writes them into
# FIFOs that cat copies to ours, so that our own file offsets stay right.
mkfifo "$ctl/stdout" "$ctl/stderr"
cat "$ctl/stdout" &
cat_out=$!
cat "$ctl/stderr" >&2 &
cat_err=$!
con=$ctl/console.log
: >"$con"

qpid=
tail_pid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	[ -n "$tail_pid" ] && kill "$tail_pid" 2>/dev/null
	kill "$cat_out" "$cat_err" 2>/dev/null
	rm -f "$ctl/stdout" "$ctl/stderr"
}
trap 'cleanup; exit 130' INT TERM

# The test host's kernel is not quiet: its console goes to a file, shown
# only when something fails, and costs no measurable time.
# softlockup_panic=1: under nested guests it has locked up for good (soft
# lockup in kvm_ioapic_update_eoi) as well as panicked; a panic ends QEMU
# (-no-reboot) at once, and callers boot it again for what is left.
log "booting $TH_ARCH ($(basename "$kernel"), -accel $ACCEL -smp $SMP -m $MEM, timeout ${TIMEOUT}s)"
start=$(date +%s)
timeout -k 10 "$TIMEOUT" "$QEMU" \
	-accel "$ACCEL" -cpu "${TESTHOST_CPU:-$CPU_DEFAULT}" -smp "$SMP" -m "$MEM" \
	-nodefaults -display none -no-reboot \
	-kernel "$kernel" -initrd "$TBUILD/initramfs.img" \
	-append "console=$CONSOLE $APPEND_ARCH panic=-1 softlockup_panic=1 ${TESTHOST_APPEND:-} th.dir=$OUT th.repo=$REPO" \
	-chardev file,id=con,path="$con" -serial chardev:con \
	-chardev file,id=out,path="$ctl/stdout" \
	-chardev file,id=err,path="$ctl/stderr" \
	"${QEMU_ARCH[@]}" \
	-virtfs local,path="$REPO",mount_tag=repo,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$OUT",mount_tag=results,security_model=none,multidevs=remap \
	${TESTHOST_MONITOR:+-monitor unix:"$TESTHOST_MONITOR",server=on,wait=off} \
	</dev/null 2>"$ctl/qemu.err" &
qpid=$!
# TESTHOST_VERBOSE: the console on our stderr as it is written, to its
# last line (tail ends once QEMU has, after copying what is left).
if [ -n "${TESTHOST_VERBOSE:-}" ]; then
	tail -n +1 -s 0.2 --pid="$qpid" -f "$con" >&2 &
	tail_pid=$!
fi
qrc=0
wait "$qpid" || qrc=$?
qpid=
# QEMU has closed the FIFOs' write ends and the cats see end of file.  If
# QEMU never opened them (it failed early), a cat still waits in open():
# open and close the FIFO once to release it (read-write, which never
# blocks, also when the cat has gone).
for f in stdout stderr; do
	: <>"$ctl/$f"
done
wait "$cat_out" "$cat_err" 2>/dev/null || true
# Dead pipes now: gone, so that nothing reading the results blocks on them.
rm -f "$ctl/stdout" "$ctl/stderr"
[ -z "$tail_pid" ] || wait "$tail_pid"
trap - INT TERM
took=$(($(date +%s) - start))
# TCG lacks some of the EPYC model's features (rdseed, sha-ni, ...): QEMU
# warns once per vCPU; the rest of its stderr is shown.
grep -v "TCG doesn't support requested feature" "$ctl/qemu.err" >&2 || true

if [ -f "$ctl/rc" ]; then
	rc=$(cat "$ctl/rc")
	log "command exited with status $rc (test host ran ${took}s, the command started at its uptime $(cat "$ctl/started" 2>/dev/null || echo ?)s)"
	exit "$rc"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	log "timed out after ${TIMEOUT}s; test host console ($con):"
	rc=124
else
	log "failed (qemu exit status $qrc, no command status); test host console ($con):"
	rc=125
fi
tail -n 60 "$con" | sed 's/^/  | /' >&2
exit $rc
