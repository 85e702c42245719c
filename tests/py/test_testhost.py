"""vmharness.testhost: waiting for another test host is not a lock-up."""
import fcntl
import os
import threading
import time

import pytest

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
    assert testhost.run_inside([], str(tmp_path), stall_s=1) == testhost.LOCKED_UP
    assert time.time() - t0 < 10


def test_probe_reads_status_verdict_and_speed(tmp_path, monkeypatch, fake_vmm):
    monkeypatch.delenv("TESTHOST", raising=False)
    fake_vmm("echo 'guest loop: 500000 iterations in 573.034 ms,"
             " 1146.1 ns each'\necho 'verdict: emulated' >&2\necho noise\nexit 6\n")
    rc, text, ns = testhost.probe()
    assert rc == 6 and ns == 1146.1
    assert text == "guest loop: 500000 iterations in 573.034 ms, 1146.1 ns each verdict: emulated "
    assert not testhost.kvm_is_fast()
    fake_vmm("echo 'guest loop: 9 iterations, 2.5 ns each'\n")
    assert testhost.probe()[::2] == (0, 2.5) and testhost.kvm_is_fast()
    fake_vmm("sleep 5\n")
    assert testhost.probe(timeout_s=0.5) == (124, "probe timed out", None)
    monkeypatch.setattr(paths, "VMM_BIN", str(tmp_path / "none"))
    assert testhost.probe()[0] == 127


def test_run_with_reboots_until_finished_three_boots_at_most(monkeypatch, capsys):
    statuses, seen = [124, 125, 0, 0], []
    monkeypatch.setattr(testhost, "run_inside", lambda argv, out, **kw: (seen.append((argv, kw)), statuses[len(seen) - 1])[1])
    n = iter(range(10))
    rc, boots = testhost.run_with_reboots(lambda: ["boot%d" % next(n)], "/o", lambda rc: rc == 0,
                                          stall_s=7)
    assert (rc, boots) == (0, 3)
    assert [a for a, _ in seen] == [["boot0"], ["boot1"], ["boot2"]]  # asked before each boot
    assert all(kw == {"stall_s": 7} for _, kw in seen)
    assert capsys.readouterr().err.count("booting it again") == 2
    seen.clear()
    statuses[:] = [124] * 5
    rc, boots = testhost.run_with_reboots(lambda: [], "/o", lambda rc: rc == 0)
    assert (rc, boots) == (124, 3) and len(seen) == 3
    assert "giving up" in capsys.readouterr().err


def test_a_boot_that_ended_early_keeps_its_console(tmp_path, monkeypatch, capsys):
    boots = []

    def fake_run_inside(argv, out, **kw):
        boots.append(len(boots) + 1)
        (tmp_path / ".testhost").mkdir(exist_ok=True)
        (tmp_path / ".testhost" / "console.log").write_text("boot %d\n" % boots[-1])
        os.mkfifo(tmp_path / ".testhost" / "stdout")  # as a killed run.sh leaves it
        return [125, 123, 0][len(boots) - 1]
    monkeypatch.setattr(testhost, "run_inside", fake_run_inside)
    monkeypatch.setattr(testhost.time, "strftime", lambda fmt: "010203")
    rc, n = testhost.run_with_reboots(lambda: [], str(tmp_path), lambda rc: rc == 0)
    assert (rc, n) == (0, 3)
    kept = {p.name: (p / "console.log").read_text() for p in tmp_path.glob("testhost-failed.*")}
    # Two boots in the same second: the second gets its own name.
    assert kept == {"testhost-failed.010203": "boot 1\n", "testhost-failed.010203.2": "boot 2\n"}
    assert (tmp_path / ".testhost" / "console.log").read_text() == "boot 3\n"
    # The dead boots' pipes are gone: reading a kept directory never blocks.
    assert not list(tmp_path.glob("testhost-failed.*/stdout"))
    assert "console kept in %s" % (tmp_path / "testhost-failed.010203") in capsys.readouterr().err
    assert testhost.keep_console(str(tmp_path / "nothing")) is None


def test_meta_records_the_test_hosts_set_up(tmp_path, monkeypatch):
    import argparse
    import json

    from vmharness import scenario

    monkeypatch.setenv("TESTHOST_ACCEL", "tcg,thread=single")
    monkeypatch.setenv("TESTHOST_APPEND", "irqaffinity=1")
    monkeypatch.setenv("TESTHOST_QEMU", str(tmp_path / "qemu"))
    (tmp_path / "qemu").write_text("#!/bin/sh\necho 'QEMU emulator version 10.0.2'\necho more\n")
    (tmp_path / "qemu").chmod(0o755)
    monkeypatch.delenv("TESTHOST_CPU", raising=False)
    scenario.write_meta(argparse.Namespace(out=str(tmp_path), argv=["deaths"], seed=7))
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["testhost"] == {"TESTHOST_ACCEL": "tcg,thread=single",
                                "TESTHOST_APPEND": "irqaffinity=1",
                                "TESTHOST_QEMU": str(tmp_path / "qemu")}
    assert meta["testhost_qemu"] == "QEMU emulator version 10.0.2"
    assert meta["seed"] == 7 and meta["command"] == "bench/vmbench deaths"


@pytest.mark.parametrize("arch", ["x86_64", "arm64"])
def test_a_missing_emulator_is_named_before_anything_boots(tmp_path, arch):
    import subprocess

    env = dict(os.environ, TESTHOST_ARCH=arch, TESTHOST_QEMU=str(tmp_path / "no-such-qemu"),
               TESTHOST_OUT=str(tmp_path / "out"))
    p = subprocess.run([paths.TESTHOST_RUN, "true"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1
    assert "TESTHOST_QEMU=%s: not found" % (tmp_path / "no-such-qemu") in p.stderr
    assert not (tmp_path / "out").exists()


# A stand-in for tests/testhost/run.sh: boot N does what the N-th word of
# $PLAN says: "die" (the test host panics: no command status, 125),
# "hang" (its time limit: 124), or "rcS" (the command ended with status
# S).  It counts its boots and records its arguments.
FAKE_RUN = r"""#!/bin/sh
n=$(($(cat "$TESTHOST_OUT/boots" 2>/dev/null || echo 0) + 1))
echo $n >"$TESTHOST_OUT/boots"
rm -rf "$TESTHOST_OUT/.testhost" && mkdir "$TESTHOST_OUT/.testhost"
echo "boot $n" >"$TESTHOST_OUT/.testhost/console.log"
echo "$* $TESTHOST_TIMEOUT" >>"$TESTHOST_OUT/argv"
what=$(echo "$PLAN" | cut -d, -f$n)
case $what in
die) exit 125 ;;
hang) exit 124 ;;
rc*) echo "${what#rc}" >"$TESTHOST_OUT/.testhost/rc"; exit "${what#rc}" ;;
esac
"""


def through_testhost_cli(tmp_path, monkeypatch, plan, *extra):
    from vmharness import cli

    tmp_path.mkdir(exist_ok=True)
    run = tmp_path / "run.sh"
    run.write_text(FAKE_RUN)
    run.chmod(0o755)
    monkeypatch.setattr(testhost, "LOCK", str(tmp_path / "lock"))
    monkeypatch.setattr(paths, "TESTHOST_RUN", str(run))
    monkeypatch.setattr(testhost.time, "sleep", lambda s: REAL_SLEEP(0.05))
    monkeypatch.setenv("PLAN", plan)
    out = tmp_path / "out"
    rc = cli.main(["testhost", "-o", str(out), "--timeout", "77"] + list(extra) +
                  ["--", "tests/smoke/run.sh", "-x"])
    return rc, int((out / "boots").read_text()), out


def test_testhost_command_boots_again_only_when_the_test_host_died(tmp_path, monkeypatch, capsys):
    rc, boots, out = through_testhost_cli(tmp_path, monkeypatch, "die,die,rc1")
    assert (rc, boots) == (1, 3)  # the command's own status, from the third boot
    assert (out / "argv").read_text() == "tests/smoke/run.sh -x 77\n" * 3
    assert sorted(p.read_text() for p in out.glob("testhost-failed.*/console.log")) == [
        "boot 1\n", "boot 2\n"]
    assert capsys.readouterr().err.count("booting it again") == 2


def test_testhost_command_keeps_a_commands_own_status_and_a_timeout(tmp_path, monkeypatch):
    # 125 written by the command is its own failure, not a dead test host.
    assert through_testhost_cli(tmp_path, monkeypatch, "rc125,rc0")[:2] == (125, 1)
    # A time limit is not retried: the hang may be the VMM's.
    assert through_testhost_cli(tmp_path / "b", monkeypatch, "hang,rc0")[:2] == (124, 1)


def test_testhost_command_gives_up_after_its_boots(tmp_path, monkeypatch, capsys):
    rc, boots, _ = through_testhost_cli(tmp_path, monkeypatch, "die,die,rc0", "--boots", "2")
    assert (rc, boots) == (125, 2)
    assert "giving up" in capsys.readouterr().err


def test_a_locked_up_test_host_leaves_its_cpus_and_apics(tmp_path, monkeypatch):
    # A real QEMU, paused before its first instruction, stands in for a
    # test host that has stopped: silent, its monitor at TESTHOST_MONITOR.
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/sh\nmkdir -p \"$TESTHOST_OUT/.testhost\"\n"
                   "exec qemu-system-x86_64 -M q35 -S -nodefaults -display none -smp 2 "
                   "-monitor unix:$TESTHOST_MONITOR,server=on,wait=off\n")
    run.chmod(0o755)
    monkeypatch.setattr(testhost, "LOCK", str(tmp_path / "lock"))
    monkeypatch.setattr(paths, "TESTHOST_RUN", str(run))
    monkeypatch.setattr(testhost.time, "sleep", lambda s: REAL_SLEEP(0.2))
    monkeypatch.delenv("TESTHOST_MONITOR", raising=False)
    monkeypatch.delenv("TESTHOST_SMP", raising=False)
    assert testhost.run_inside([], str(tmp_path), stall_s=3) == testhost.LOCKED_UP
    got = (tmp_path / ".testhost" / "monitor.txt").read_text()
    assert got.count("CPU#") == 2 and "# info lapic 1\n" in got
    assert got.count("dumping local APIC state for CPU") == 2 and "IRR" in got
