"""Bad command lines with the real guest image: every case of
tests/smoke/badinput.sh (missing, unreadable, empty, truncated or
non-bzImage kernel, missing initrd, bad or too small or too large --mem,
bad --cpus, unknown options, bad disk options and sizes, disks that
cannot be opened, more than 16 disks, bad --stats, ...) must exit 2 with
one "vmm: ..." line that names the problem, print nothing on stdout, and
create or change no file.  No guest boots, so it needs no KVM.

The cases stay in badinput.sh, which tests/smoke/run.sh shares with tiny
kernels: its bad_setup makes the scratch files, and its `bad` calls are
recorded (name, pattern, command) instead of run.  Each is run and
checked here as `bad` would, with the scratch directory's snapshot taken
in this process: in the test host every process costs (`bad`'s own
snapshots took 3 s a case there, 3 minutes in all).  The stock bzImage
and initrd only: this is about the VMM's input and loading a real image,
not about the device."""
import os
import re
import shutil
import stat
import subprocess
import tempfile
import zlib

import guestlib as gl
from vmharness import paths

# Sets the cases up (and the not-bzImage case the real image adds), and
# prints each `bad NAME PATTERN CMD...` as NAME, PATTERN, the number of
# words of CMD and CMD, each ended by a NUL.
DRIVER = r"""
set -u
VMM=$1 KERNEL=$2 INITRD=$3
. "$4"
bad_setup "$5" "$KERNEL"
bad() {
	local n=$1 p=$2
	shift 2
	printf '%s\0' "$n" "$p" "$#" "$@"
}
# Not a bzImage: the initrd given as the kernel.
bad not-bzimage 'no boot signature' "$VMM" run -k "$INITRD"
INITRD_BAD=$INITRD SMALL_MEM=64M bad_common
"""

MIN_CASES = 30  # badinput.sh has 37 with the real image; fewer: some were lost


def cases(out):
    words = out.split("\0")[:-1]
    i = 0
    while i < len(words):
        name, pat, n = words[i], words[i + 1], int(words[i + 2])
        yield name, pat, words[i + 3:i + 3 + n]
        i += 3 + n


def snapshot(top):
    """What bad_snap compares: every entry's name, type, size, mode and
    mtime, and the contents (CRC-32) of every file its owner may read."""
    snap = []
    for d, dirs, files in os.walk(top):
        for name in sorted(dirs + files):
            p = os.path.join(d, name)
            st = os.lstat(p)
            entry = (os.path.relpath(p, top), stat.S_IFMT(st.st_mode), st.st_size,
                     stat.S_IMODE(st.st_mode), st.st_mtime_ns)
            if stat.S_ISREG(st.st_mode) and st.st_mode & stat.S_IRUSR:
                with open(p, "rb") as f:
                    entry += (zlib.crc32(f.read()),)
            snap.append(entry)
    return snap


def check(bad, name, pat, argv):
    """None when the command fails as `bad` wants, else why not."""
    before = snapshot(bad)
    r = subprocess.run(argv, cwd=bad, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=60)
    after = snapshot(bad)
    err = r.stderr.decode(errors="replace")
    if r.returncode != 2:
        return "status %d, want 2 (%s)" % (r.returncode, err[:300])
    if err.count("\n") != 1 or not err.endswith("\n"):
        return "want one line, got: %r" % err
    if not re.search("^vmm: .*(%s)" % pat, err):
        return "message %r lacks %r" % (err.strip(), pat)
    if r.stdout:
        return "wrote on stdout: %r" % r.stdout[:200]
    if before != after:
        changed = sorted(set(before) ^ set(after))[:3]
        return "files changed: %s" % (changed,)
    return None


def test_bad_command_lines(note):
    kernel = gl.STOCK.path("bzImage")
    assert os.path.isfile(paths.INITRD), "no initrd %s (`make guest`)" % paths.INITRD
    # Not under pytest's tmp_path, whose parents are mode 0700: the
    # unreadable-file cases run as nobody, who must reach the files.
    work = tempfile.mkdtemp(prefix="e2e-args-")
    os.chmod(work, 0o755)
    bad = os.path.join(work, "bad")
    try:
        r = subprocess.run(["bash", "-c", DRIVER, "driver", paths.VMM_BIN, kernel, paths.INITRD,
                            os.path.join(paths.REPO, "tests", "smoke", "badinput.sh"), bad],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and not r.stderr, (
            "badinput.sh's set-up failed: status %d\n%s" % (r.returncode, r.stderr))
        todo = list(cases(r.stdout))
        failed = []
        for name, pat, argv in todo:
            why = check(bad, name, pat, argv)
            if why:
                failed.append("%s: %s" % (name, why))
    finally:
        for d, dirs, files in os.walk(work):  # mode 000 files and all
            os.chmod(d, 0o755)
        shutil.rmtree(work, ignore_errors=True)
    note("%d bad command lines refused as they should be" % (len(todo) - len(failed)))
    assert not failed, "\n".join(failed)
    assert len(todo) >= MIN_CASES, "only %d cases:\n%s" % (len(todo), [t[0] for t in todo])
