"""vmharness.testhost: waiting for another test host is not a lock-up."""
import fcntl
import threading
import time

from vmharness import paths, testhost

REAL_SLEEP = time.sleep


def test_time_spent_waiting_for_the_lock_is_not_taken_for_a_stall(tmp_path, monkeypatch):
    lock = tmp_path / "lock"
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/sh\nsleep 1\necho ran >\"$TESTHOST_OUT/ran\"\n")
    run.chmod(0o755)
    monkeypatch.setattr(testhost, "LOCK", str(lock))
    monkeypatch.setattr(paths, "TESTHOST_RUN", str(run))
    monkeypatch.setattr(testhost.time, "sleep", lambda s: REAL_SLEEP(0.2))
    holder = open(lock, "a")
    fcntl.flock(holder, fcntl.LOCK_EX)  # another test host runs
    threading.Timer(3, holder.close).start()
    t0 = time.time()
    rc = testhost.run_inside([], str(tmp_path), stall_s=2)
    assert time.time() - t0 >= 3  # it waited for the lock...
    assert rc == 0 and (tmp_path / "ran").read_text() == "ran\n"  # ...and ran


def test_a_silent_test_host_is_stopped(tmp_path, monkeypatch):
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/sh\nsleep 30\n")
    run.chmod(0o755)
    monkeypatch.setattr(testhost, "LOCK", str(tmp_path / "lock"))
    monkeypatch.setattr(paths, "TESTHOST_RUN", str(run))
    monkeypatch.setattr(testhost.time, "sleep", lambda s: REAL_SLEEP(0.2))
    t0 = time.time()
    assert testhost.run_inside([], str(tmp_path), stall_s=1) == 124
    assert time.time() - t0 < 10
