"""A guest run that does not stop at the guest's stall warnings
(GuestRun(stop_on_stall=False): a guest with many more vCPUs than the
test host has CPUs) is judged by what it did: its warnings are no death
to retry, and a soft lockup is not taken for an oops instead."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))

from vmharness import guestrun  # noqa: E402

RCU = "[   28.8] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:"
SOFT = "[   40.1] watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [kworker/3:1:77]"


def test_warnings_are_no_death_when_the_run_goes_on():
    for line in (RCU, SOFT):
        assert guestrun.classify([line, "done"], 0, False) == "stall"
        assert guestrun.classify([line, "done"], 0, False, stalls=False) == "clean"
        assert guestrun.classify([line], 2, False, stalls=False) == "exit-2"
        assert guestrun.classify([line], -9, True, stalls=False) == "hang"
    # Real deaths stay deaths.
    assert guestrun.classify([RCU, "BUG: unable to handle page fault"], 0, False,
                             stalls=False) == "oops"
    assert guestrun.classify([SOFT, "traps: double fault"], 4, False,
                             stalls=False) == "double-fault"


def test_a_guest_that_warns_runs_to_its_end(tmp_path):
    script = "echo '%s'; sleep 0.5; echo '%s'; echo finished" % (RCU, SOFT)
    g = guestrun.GuestRun(["sh", "-c", script], timeout=30, stop_on_stall=False,
                          log_path=str(tmp_path / "g.log")).run()
    assert g.outcome == "clean" and g.lines[-1] == "finished", (g.outcome, g.lines)
    g = guestrun.GuestRun(["sh", "-c", script], timeout=30,
                          log_path=str(tmp_path / "h.log")).run()
    assert g.outcome == "stall" and "finished" not in g.lines, (g.outcome, g.lines)
