"""How a VM ends, as the user sees it from our VMM's process: /init's
shell answers on the console through the VMM's stdin and `reboot -f`
ends the VMM with status 0; a guest that powers off ends it with 0 and
not a word; a guest that panics ends it with status 3 (pvpanic).

Stock kernel only: these are about the VMM's process (its stdin, exit
status and messages), the console and pvpanic, not about the block
device; each kernel's boot and disk are covered by the device tests."""
import random

import guestlib as gl
from vmharness import cmdlines

PANIC_STATUS = 3  # our VMM's status for a guest panic (pvpanic)


def test_shell_stdin(tmp_path):
    # No run=/fio=: /init's shell on ttyS0.  The input goes in at once, as
    # `echo ... | vmm run ...` would; $((...)) is for the guest's shell, so
    # its answer differs from the echoed command line.
    n = random.randrange(32768)
    feed = ('echo "hello-$((%d + 1))"\nreboot -f\n' % n).encode()
    g = gl.run(gl.vmm_argv(gl.STOCK.path(), cmdlines.guest_cmdline(),
                           gl.std_disks(tmp_path, 64, gl.QUEUES), gl.CPUS),
               tmp_path, "shell-stdin", timeout=gl.SHORT_TIMEOUT, stdin=feed)
    assert any("shell on ttyS0" in l for l in g.lines), "no shell: /init did not get to it\n" + g.tail()
    assert any("hello-%d" % (n + 1) in l for l in g.lines), (
        "the shell did not answer (no line hello-%d)\n%s" % (n + 1, g.tail()))
    gl.ended_clean(g)


def test_poweroff(tmp_path):
    g = gl.run(gl.vmm_argv(gl.STOCK.path(), cmdlines.guest_cmdline(script="true"),
                           gl.std_disks(tmp_path, 64, gl.QUEUES), gl.CPUS, verbose=False),
               tmp_path, "poweroff", timeout=gl.SHORT_TIMEOUT)
    gl.run_out(g)
    assert g.stderr == "", "the VMM said something on a clean run:\n" + g.tail()


def test_panic(tmp_path, note):
    g = gl.run(gl.vmm_argv(gl.STOCK.path(),
                           cmdlines.guest_cmdline(script="echo c >/proc/sysrq-trigger"),
                           gl.std_disks(tmp_path, 64, gl.QUEUES), gl.CPUS),
               tmp_path, "panic", timeout=gl.SHORT_TIMEOUT)
    assert not g.timed_out and g.rc == PANIC_STATUS, (
        "exit status %s, want %d (guest panic)\n%s" % (g.rc, PANIC_STATUS, g.tail()))
    panics = [l for l in g.lines if "Kernel panic" in l]
    assert panics, "exit status %d, but no 'Kernel panic' on the console\n%s" % (g.rc, g.tail())
    note(panics[0].strip())
    note("; ".join(l[l.index("vmm: "):] for l in g.stderr.splitlines() if "vmm: error" in l))
