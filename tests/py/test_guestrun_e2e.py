"""What the end-to-end tests add to vmharness.guestrun and use from
tests/e2e/py/guestlib.py: the RUN block, the console's end for failure
messages, input fed to the console, retries recorded, a missing kernel
failing its test.  No guest: small shell commands stand in for a VMM."""
import os
import sys

import pytest

from vmharness import guestrun, paths

sys.path.insert(0, os.path.join(paths.REPO, "tests", "e2e", "py"))
import guestlib  # noqa: E402


def test_run_block_takes_the_last_complete_block():
    lines = ["guest: x", "=== RUN BEGIN ===", "a", "=== RUN END rc=3 ===",
             "=== RUN BEGIN ===", "b", "c", "=== RUN END rc=0 ===", "after"]
    assert guestrun.run_block(lines) == (0, ["b", "c"])
    assert guestrun.run_block(["=== RUN BEGIN ===", "cut"]) == (None, [])
    assert guestrun.run_block(["=== RUN BEGIN ===", "x", "=== RUN END rc=1 ===",
                               "=== RUN BEGIN ===", "cut"]) == (1, ["x"])


def test_stdin_reaches_the_console_and_tail_shows_its_end(tmp_path):
    g = guestrun.GuestRun(["sh", "-c", "cat; echo oops >&2; exit 3"], timeout=20,
                          log_path=str(tmp_path / "g.log"), stdin=b"one\ntwo\n").run()
    assert g.lines == ["one", "two"] and g.rc == 3 and g.outcome == "exit-3"
    t = g.tail(1)
    assert "exit status 3" in t and "  | two" in t and "  | one" not in t
    assert "  | oops" in t
    # Without input the VMM's stdin is /dev/null, as before.
    g = guestrun.GuestRun(["sh", "-c", "cat; echo end"], timeout=20).run()
    assert g.lines == ["end"]


def test_on_line_answers_a_guest_that_waits_for_the_host(tmp_path):
    # The guest asks twice and waits for each answer (no fixed wait): the
    # console's input stays open until it ends.
    script = 'for i in 1 2; do echo "ASK $i"; read -r x; echo "GOT $x"; done'

    def on_line(line, proc):
        if line.startswith("ASK "):
            guestrun.answer(proc, "yes-" + line[4:])
    g = guestrun.GuestRun(["sh", "-c", script], timeout=20, on_line=on_line,
                          stdin=guestrun.ANSWER).run()
    assert g.lines == ["ASK 1", "GOT yes-1", "ASK 2", "GOT yes-2"] and g.rc == 0
    assert not g.timed_out


def test_retries_are_recorded(tmp_path, monkeypatch):
    monkeypatch.setattr(guestrun, "RETRIED", [])
    # dies twice (a test-host death: a stall), then ends clean
    script = ('n=$(cat %s/n 2>/dev/null || echo 0); echo $((n + 1)) >%s/n; '
              '[ $n -ge 2 ] && exit 0; echo "rcu: INFO: rcu_sched detected stalls"; exec sleep 30'
              % (tmp_path, tmp_path))
    g = guestrun.run_with_retries(["sh", "-c", script], str(tmp_path / "g.log"), timeout=20)
    assert g.outcome == "clean" and [o for _, o in g.earlier] == ["stall", "stall"]
    assert [o for _, o in guestrun.RETRIED] == ["stall", "stall"]
    assert "an earlier try ended in stall" in g.tail()
    # a death on the last try is not "tried again"
    g = guestrun.run_with_retries(["sh", "-c", "echo 'double fault'"], str(tmp_path / "h.log"),
                                  tries=2, timeout=20)
    assert g.outcome == "double-fault" and len(g.earlier) == 1
    assert len(guestrun.RETRIED) == 3


def test_before_try_empties_what_a_dead_try_saw(tmp_path, monkeypatch):
    monkeypatch.setattr(guestrun, "RETRIED", [])
    # The first try sees "STEP" and dies (a stall); the second sees
    # "STEP" and ends clean: only the second's line is left.
    script = ('n=$(cat %s/n 2>/dev/null || echo 0); echo $((n + 1)) >%s/n; echo "STEP $n"; '
              '[ $n -ge 1 ] && exit 0; echo "rcu: INFO: rcu_sched detected stalls"; exec sleep 30'
              % (tmp_path, tmp_path))
    seen, calls = [], []

    def before_try():
        calls.append(len(seen))
        seen.clear()
    g = guestrun.run_with_retries(["sh", "-c", script], str(tmp_path / "g.log"), timeout=20,
                                  on_line=lambda line, proc: seen.append(line),
                                  before_try=before_try)
    assert g.outcome == "clean" and len(g.earlier) == 1
    assert calls == [0, 2] and seen == ["STEP 1"]


def test_a_missing_kernel_fails_and_does_not_skip(monkeypatch, tmp_path):
    monkeypatch.setitem(paths.KERNELS, "small", {"bzImage": str(tmp_path / "nope")})
    with pytest.raises(pytest.fail.Exception, match="small kernel's bzImage is missing"):
        guestlib.Kernel("small").path("bzImage")
    assert guestlib.KERNEL_NAMES[0] == "stock" and set(guestlib.KERNEL_NAMES) == {"stock", "small"}


def test_disk_lines_and_checks():
    class G:
        lines = ["guest: disk vda serial=sys size=64MiB ro=1 queues=1",
                 "guest: disk vdb serial=data size=1024MiB ro=0 queues=2"]
        stderr = ""

        def tail(self):
            return "END"
    assert guestlib.disk_lines(G()) == {"sys": ("vda", 64, 1, 1), "data": ("vdb", 1024, 0, 2)}
    guestlib.check_disk(G(), "data", 1024, 0, 2)
    with pytest.raises(AssertionError, match="want size=1024MiB ro=0 queues=1"):
        guestlib.check_disk(G(), "data", 1024, 0, 1)
    with pytest.raises(AssertionError, match="no.*serial other|did not list a disk with serial other"):
        guestlib.check_disk(G(), "other", 1, 0, 1)
