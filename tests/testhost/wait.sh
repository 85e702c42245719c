# tests/testhost/wait.sh: waits with a deadline for the shell scripts that
# run inside a test host (busybox sh is enough): bench/hotplug.sh and
# tests/e2e/arm64/cases.sh source it.

# wait_vm PID FILE PATTERN S: until FILE has a line matching PATTERN
# (looked at every 20 ms); status 1 after S seconds or once PID (the VMM
# whose console FILE is) has ended.
wait_vm() {
	local n=0
	while ! grep -q "$3" "$2" 2>/dev/null; do
		kill -0 "$1" 2>/dev/null || return 1
		[ $n -ge $(($4 * 50)) ] && return 1
		sleep 0.02
		n=$((n + 1))
	done
}
