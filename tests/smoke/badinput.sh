# shellcheck shell=bash
# tests/smoke/badinput.sh: checks of `vmm run` on bad input, shared by
# tests/smoke/run.sh (tiny guests) and tests/e2e/py/test_args.py (the real guest
# image).  Sourced; the caller defines ok NAME and ko NAME WHY, and $VMM.
#
#   bad_setup DIR KERNEL   a scratch directory with inputs: k.img (a copy
#                          of KERNEL), noread.img (mode 000), kdir/,
#                          data.img, noperm.img (mode 000), odd.img,
#                          empty.img, truncated.img (KERNEL less its last
#                          quarter); sets $BAD
#   bad NAME PATTERN CMD...
#       run CMD in $BAD with stdin from /dev/null; passes when it exits
#       with status 2, writes one line on stderr that starts "vmm: " and
#       matches the extended regex PATTERN, nothing on stdout, and $BAD
#       is the same afterwards (names, types, sizes, modes, times and the
#       contents of every readable file).  Its output: $BAD.out/NAME.*
#   as_nobody   an array: run as nobody (setpriv) when we are root, for
#               the unreadable-file cases (root reads any file); empty
#               if we are not root; unset if root without setpriv

bad_setup() {
	local k=$2 n
	BAD=$1
	rm -rf "$BAD" "$BAD.out"
	mkdir -p "$BAD/kdir" "$BAD.out"
	cp "$k" "$BAD/k.img"
	cp "$k" "$BAD/noread.img"
	chmod 000 "$BAD/noread.img"
	n=$(stat -c %s "$k")
	head -c $((n - n / 4)) "$k" >"$BAD/truncated.img"
	truncate -s 1M "$BAD/data.img"
	truncate -s 1M "$BAD/noperm.img"
	chmod 000 "$BAD/noperm.img"
	truncate -s 1000 "$BAD/odd.img"
	: >"$BAD/empty.img"
	unset as_nobody
	if [ "$(id -u)" != 0 ]; then
		as_nobody=()
	elif command -v setpriv >/dev/null; then
		as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	fi
}

bad_snap() {
	(cd "$BAD" && find . -printf '%p %y %s %m %T@\n' | sort &&
		find . -type f -perm -u+r -exec cksum {} + | sort)
}

bad() {
	local name=$1 pat=$2 rc=0 before after o=$BAD.out/$1
	shift 2
	before=$(bad_snap)
	(cd "$BAD" && exec "$@") </dev/null >"$o.out" 2>"$o.err" || rc=$?
	after=$(bad_snap)
	if [ $rc != 2 ]; then
		ko "$name" "status $rc, want 2 ($(head -c 300 "$o.err"))"
	elif [ "$(wc -l <"$o.err")" != 1 ]; then
		ko "$name" "want one line, got: $(cat "$o.err")"
	elif ! grep -qE "^vmm: .*($pat)" "$o.err"; then
		ko "$name" "message '$(cat "$o.err")' lacks '$pat'"
	elif [ -s "$o.out" ]; then
		ko "$name" "wrote on stdout: $(head -c 200 "$o.out")"
	elif [ "$before" != "$after" ]; then
		ko "$name" "files changed: $(diff <(echo "$before") \
			<(echo "$after") | grep '^[<>]' | head -n 3 | xargs)"
	else
		ok "$name"
	fi
}

# bad_common: the cases that need no special image, on $BAD/k.img.
# SMALL_MEM: a --mem too small for k.img (and INITRD if set).
bad_common() {
	local K=$BAD/k.img i args=() ini=()
	[ -n "${INITRD_BAD:-}" ] && ini=(-i "$INITRD_BAD")
	bad no-kernel 'missing --kernel' "$VMM" run
	bad missing-kernel 'No such file' "$VMM" run -k "$BAD/nonexistent"
	bad kernel-dir 'not a regular file' "$VMM" run -k "$BAD/kdir"
	[ -n "${as_nobody+set}" ] &&
		bad unreadable-kernel 'Permission denied' "${as_nobody[@]}" \
			"$VMM" run -k "$BAD/noread.img"
	bad empty-kernel 'empty' "$VMM" run -k "$BAD/empty.img"
	bad sandbox-word "--sandbox: 'maybe' is not on or off" "$VMM" run \
		-k "$BAD/k.img" --sandbox maybe
	bad pin-word "--pin: 'yes' is not on, off or follow" "$VMM" run \
		-k "$BAD/k.img" --pin yes
	bad truncated-kernel 'truncated' "$VMM" run -k "$BAD/truncated.img"
	bad missing-initrd 'initrd.*No such file' "$VMM" run -k "$K" -i "$BAD/nope"
	bad bad-mem 'bad size' "$VMM" run -k "$K" -m 12X
	bad zero-mem 'bad size' "$VMM" run -k "$K" -m 0
	bad small-mem 'not enough memory' "$VMM" run -k "$K" "${ini[@]}" \
		-m "${SMALL_MEM:-8M}"
	bad huge-mem 'more than the host' "$VMM" run -k "$K" -m 100000G
	bad bad-cpus 'cpus' "$VMM" run -k "$K" -c 0
	bad many-cpus 'cpus' "$VMM" run -k "$K" -c 65
	bad bad-option 'unknown option' "$VMM" run -k "$K" --frobnicate
	bad extra-arg 'unexpected argument' "$VMM" run -k "$K" extra
	bad long-params 'too long' "$VMM" run -k "$K" -p "$(printf '%5000s' x)"
	bad bad-disk-opt "bad disk option 'wat'" "$VMM" run -k "$K" -d ram:1M,wat
	bad bad-ram-size 'bad RAM disk size' "$VMM" run -k "$K" -d ram:12X
	bad zero-ram-size 'bad RAM disk size' "$VMM" run -k "$K" -d ram:0
	bad bad-queues 'queues=0' "$VMM" run -k "$K" -d ram:1M,queues=0
	bad disk-opt-twice 'given twice' "$VMM" run -k "$K" \
		-d ram:1M,queues=1,queues=2
	bad file-disk-opt-twice "given twice 'queues=4'" "$VMM" run -k "$K" \
		-d "$BAD/data.img,queues=2,queues=4"
	bad long-serial 'serial' "$VMM" run -k "$K" \
		-d "ram:1M,serial=$(printf '%030d' 0)"
	bad missing-disk 'No such file' "$VMM" run -k "$K" \
		-d "$BAD/should-not-exist"
	bad missing-disk-ro 'No such file' "$VMM" run -k "$K" -d "$BAD/nope,ro"
	bad missing-disk-dir 'No such file' "$VMM" run -k "$K" \
		-d "$BAD/nodir/x.img"
	bad disk-dir 'directory' "$VMM" run -k "$K" -d "$BAD/kdir"
	bad empty-disk 'empty' "$VMM" run -k "$K" -d "$BAD/empty.img"
	bad odd-disk 'multiple of 512' "$VMM" run -k "$K" -d "$BAD/odd.img"
	[ -n "${as_nobody+set}" ] &&
		bad unreadable-disk 'Permission denied' "${as_nobody[@]}" \
			"$VMM" run -k "$K" -d "$BAD/noperm.img"
	bad second-disk-bad 'disk vdb' "$VMM" run -k "$K" \
		-d "$BAD/data.img" -d "$BAD/nope"
	for i in $(seq 17); do args+=(-d ram:1M); done
	bad too-many-disks 'too many disks' "$VMM" run -k "$K" "${args[@]}"
	bad bad-command 'unknown command' "$VMM" frobnicate
	bad stats-dir 'is a directory' "$VMM" run -k "$K" --stats "$BAD/kdir"
	bad stats-no-dir "cannot write in '$BAD/nodir/'" "$VMM" run -k "$K" \
		--stats "$BAD/nodir/s.json"
	bad stats-no-name 'not a file name' "$VMM" run -k "$K" --stats "$BAD/"
	bad bad-iops "bad disk option 'iops=0'" "$VMM" run -k "$K" -d ram:1M,iops=0
	bad bad-bw "bad disk option 'bw=1X'" "$VMM" run -k "$K" -d ram:1M,bw=1X
	bad bad-burst "bad disk option 'burst=0'" "$VMM" run -k "$K" \
		-d ram:1M,iops=5,burst=0
	bad api-not-socket 'exists and is not a socket' "$VMM" run -k "$K" \
		--api "$BAD/data.img"
	bad api-no-dir 'No such file' "$VMM" run -k "$K" --api "$BAD/nodir/s"
	# A bad disk with --api: refused before the socket is made.
	bad api-then-bad-disk 'disk vda' "$VMM" run -k "$K" \
		--api "$BAD/api.sock" -d "$BAD/nope"
	return 0
}
