#!/bin/bash
# tests/readme-examples.sh [VMM]: README.md's examples, run as written.
#
# Every code block of README.md that follows a line
# `<!-- example: NAME -->` is taken from the file itself (so the test and
# the page cannot drift apart) and run from a directory that looks like
# the checkout's root: build/vmm there is VMM (default build/vmm),
# build/guest the checkout's guest image.  Lines indented deeper than the
# block that do not continue a command (a trailing backslash) are the
# output the page shows, not commands.  What each example must do:
#
#   shell  the guest's shell on the console: the test types a command
#          once /init has listed the disks, then `exit`; the VMM exits 0
#          (the guest powered off) and the command saw /dev/vdb's size
#   run    the guest runs the command (fio) and powers off: status 0,
#          "=== RUN END rc=0 ===" on the console
#   api    each line's status 0, in order; the VMM started with '&' is
#          waited for (its socket, then /init's disk lines) before the
#          next line, as a reader would; `--every` runs 3 s (a reader's
#          Ctrl-C); `quit` ends the VMM with status 143, and `resize`
#          made the file 2 GiB
#
# Real Linux guests: where this host's KVM is too slow for them
# (`vmm probe`), the script runs itself in the test host (Debian 12's
# kernel, /tmp on tmpfs, which has no O_DIRECT there: the README's
# examples must run on it as written).  Prints PASS/FAIL per example and
# "N passed, N failed"; exit status 0 only if all passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/.." && pwd)
cd "$REPO" || exit 1
VMM=$(realpath "${1:-build/vmm}")
# README_EXAMPLES_FILE: another copy of the page (to check that this
# test fails on a broken example).
README=$(realpath "${README_EXAMPLES_FILE:-README.md}")

for f in "$VMM" build/guest/bzImage build/guest/initrd.img; do
	[ -e "$f" ] || { echo "readme-examples: $f missing (make; make guest)"; exit 1; }
done
if [ -z "${TESTHOST:-}" ] && ! "$VMM" probe >/dev/null 2>&1; then
	echo "readme-examples: this host's KVM is too slow for Linux: running in the test host"
	exec "$REPO/bench/vmbench" testhost -o "$REPO/build/readme-examples-testhost" \
		--timeout 1200 -- "$0" "$VMM"
fi

# examples NAME: the commands of README's block NAME, one logical line
# (continuations joined) per output line.
examples() {
	awk -v want="$1" '
	/^<!-- example: / { name = $3; inblk = 0; take = (name == want); next }
	take && !inblk && /^    / { inblk = 1 }
	take && inblk {
		if ($0 !~ /^    / && $0 !~ /^$/) { take = 0; inblk = 0; next }
		if ($0 ~ /^$/) { take = 0; inblk = 0; next }
		line = $0
		if (cont) { sub(/^ +/, "", line); cmd = cmd " " line }
		else if (line ~ /^        /) next        # shown output
		else { sub(/^    /, "", line); cmd = line }
		if (cmd ~ /\\$/) { sub(/\\$/, "", cmd); cont = 1; next }
		cont = 0
		print cmd
	}' "$README"
}

W=/tmp/readme-examples
rm -rf "$W" /tmp/vm.sock /tmp/vm.log /tmp/copy.img
mkdir -p "$W/root/build"
ln -s "$VMM" "$W/root/build/vmm"
ln -s "$REPO/build/guest" "$W/root/build/guest"
cd "$W/root" || exit 1
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); [ -s "${3:-}" ] && tail -n 15 "$3" | sed 's/^/     | /'; }

# wait_for SECONDS CMD...: poll CMD until it succeeds; false at the deadline.
wait_for() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# shell: the block as written, its stdin a FIFO the test writes into.
cmds=$(examples shell)
if [ -z "$cmds" ]; then
	ko shell "no such example in $README"
else
	out=$W/shell.out
	mkfifo "$W/in"
	timeout 300 bash -c "$cmds" <"$W/in" >"$out" 2>&1 &
	pid=$!
	exec 3>"$W/in"
	if wait_for 240 grep -q 'guest: disk vdb' "$out"; then
		printf 'echo "vdb-size=$(cat /sys/block/vdb/size)"\nexit\n' >&3
	fi
	wait $pid
	rc=$?
	exec 3>&-
	if [ $rc = 0 ] && grep -q 'vdb-size=2097152' "$out"; then
		ok "shell (the guest saw a 1 GiB vdb, exit powered it off)"
	else
		ko shell "status $rc, want 0 and vdb-size=2097152 on the console" "$out"
	fi
fi

# run: the block as written.
cmds=$(examples run)
out=$W/run.out
if [ -z "$cmds" ]; then
	ko run "no such example in $README"
else
	timeout 300 bash -c "$cmds" </dev/null >"$out" 2>&1
	rc=$?
	if [ $rc = 0 ] && grep -q '=== RUN END rc=0 ===' "$out"; then
		ok "run (fio in the guest, rc=0)"
	else
		ko run "status $rc, want 0 and '=== RUN END rc=0 ==='" "$out"
	fi
fi

# api: line by line.
out=$W/api.out
vmpid= why=
: >"$out"
while IFS= read -r cmd; do
	[ -n "$why" ] && break
	echo "\$ $cmd" >>"$out"
	case $cmd in
	*'&')
		bash -c "${cmd%&}" </dev/null >>"$out" 2>&1 &
		vmpid=$!
		wait_for 60 test -S /tmp/vm.sock || why="no socket /tmp/vm.sock"
		[ -n "$why" ] || wait_for 240 grep -q 'guest: disk vdb' /tmp/vm.log ||
			why="the guest did not list its disks"
		;;
	*--every*)
		timeout 3 bash -c "$cmd" </dev/null >>"$out" 2>&1
		rc=$?
		[ $rc = 124 ] || why="'$cmd': status $rc, want it running until stopped"
		;;
	*)
		timeout 120 bash -c "$cmd" </dev/null >>"$out" 2>&1 ||
			why="'$cmd': status $?"
		;;
	esac
done < <(examples api)
if [ -z "$vmpid" ]; then
	ko api "no VMM started in the background (README's example changed?)" "$out"
else
	[ -n "$why" ] && kill "$vmpid" 2>/dev/null
	wait "$vmpid"
	rc=$?
	size=$(stat -c %s /tmp/data.img 2>/dev/null)
	if [ -z "$why" ] && [ $rc = 143 ] && [ "$size" = 2147483648 ]; then
		ok "api (every vmm ctl line, quit: 143, the file resized to 2 GiB)"
	else
		ko api "${why:-VMM status $rc (want 143), file $size bytes (want 2147483648)}" "$out"
		tail -n 5 /tmp/vm.log 2>/dev/null | sed 's/^/     | vm.log: /'
	fi
fi

rm -f /tmp/copy.img
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
