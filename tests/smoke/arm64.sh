#!/bin/bash
# tests/smoke/arm64.sh [VMM]   the arm64 VMM's checks that need no KVM,
# on this (x86) host: build/arm64/vmm run by qemu-aarch64-static (user
# mode), on a synthetic EFI-stub arm64 Image.
#   help      `vmm run --help` says the kernel is an arm64 Image
#   bad-*     every bad command line and input of tests/smoke/badinput.sh,
#             and the arm64 kernel's own: an x86 bzImage, no magic, a
#             truncated Image: exit 2, one "vmm: ..." line naming the
#             problem, no file created or changed
#   probe     `vmm probe` without KVM here: exit 1, it says why
# Ends with "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/../.." && pwd)
BIN=${1:-$REPO/build/arm64/vmm}
QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64) || {
	echo "arm64 smoke: no qemu-aarch64-static (apt-get install qemu-user-static)"
	echo "0 passed, 1 failed"
	exit 1
}
W=$REPO/build/smoke-arm64
rm -rf "$W"
mkdir -p "$W"
# The VMM as one command for badinput.sh.  QEMU's user mode has neither
# seccomp nor io_uring: `run` goes with --sandbox off (a later --sandbox
# still counts), and the VMM's line that io_uring is unavailable, which
# a real arm64 host does not print, is left out.
VMM=$W/vmm
cat >"$VMM" <<SH
#!/bin/sh
[ "\$1" = run ] && { shift; set -- run --sandbox off "\$@"; }
e=\$(mktemp)
$QEMU $BIN "\$@" 2>"\$e"
rc=\$?
grep -v 'io_uring unavailable' "\$e" >&2
rm -f "\$e"
exit \$rc
SH
chmod +x "$VMM"

pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

# A 64 KiB arm64 Image with an EFI stub: "MZ", the arm64 header (text_offset
# 0, image_size 1 MiB, magic), a PE header with one section to the end.
python3 - "$W/Image" <<'PY'
import struct, sys
img = bytearray(65536)
img[0:2] = b"MZ"
struct.pack_into("<QQQ", img, 8, 0, 1 << 20, 0xa)
struct.pack_into("<II", img, 56, 0x644D5241, 0x40)
struct.pack_into("<IHH", img, 0x40, 0x4550, 0xaa64, 1)
struct.pack_into("<H", img, 0x54, 0)
struct.pack_into("<II", img, 0x58 + 16, 65536 - 0x1000, 0x1000)
open(sys.argv[1], "wb").write(img)
PY

if "$VMM" run --help | grep -q "arm64 Image"; then
	ok help
else
	ko help "run --help does not say the kernel is an arm64 Image"
fi

. "$here/badinput.sh"
bad_setup "$W/bad" "$W/Image"
# A kernel for another machine, and one with no magic at all.
python3 - "$BAD/x86.img" <<'PY'
import sys
img = bytearray(65536)
img[0x202:0x206] = b"HdrS"
open(sys.argv[1], "wb").write(img)
PY
SMALL_MEM=2M bad_common
bad x86-kernel 'an x86 bzImage' "$VMM" run -k "$BAD/x86.img"
bad no-magic 'magic at offset 56' "$VMM" run -k "$BAD/data.img"

out=$("$VMM" probe 2>&1)
rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q "unusable\|cannot open /dev/kvm"; then
	ok probe
else
	ko probe "status $rc: $out"
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
