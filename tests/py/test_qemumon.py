"""Reading a stuck QEMU guest's registers (vmharness.qemumon) and the
hook that does it before a stop (guestrun's before_stop, deaths'
one_run), and deaths' host_thp switch.  A real QEMU, paused before its first instruction (TCG, no
guest), stands in for a stuck guest."""
import os
import subprocess
import time

from vmharness import deaths, guestrun, qemumon

QEMU = ["qemu-system-x86_64", "-M", "q35", "-S", "-nodefaults", "-display", "none",
        "-smp", "2"]


def _wait_for(path, seconds=20):
    end = time.monotonic() + seconds
    while not os.path.exists(path):
        assert time.monotonic() < end, "QEMU made no monitor socket"
        time.sleep(0.05)


def test_ask_answers_without_echo_or_prompt(tmp_path):
    sock = str(tmp_path / "mon")
    q = subprocess.Popen(QEMU + qemumon.argv(sock))
    try:
        _wait_for(sock)
        assert qemumon.ask(sock, "info version").startswith("7.")
        regs = qemumon.ask(sock, "info registers -a")
        # both vCPUs, each with its paging registers, reset values
        assert regs.count("CPU#") == 2 and regs.count("CR3=00000000") == 2
        assert "(qemu)" not in regs and "info registers" not in regs
    finally:
        q.kill()
        q.wait()


def test_a_monitor_that_does_not_answer_leaves_its_error(tmp_path):
    out = tmp_path / "regs"
    qemumon.save_registers(str(tmp_path / "nobody"), str(out))
    assert out.read_text().startswith("no answer from QEMU's monitor")


def test_before_stop_runs_at_a_stall_and_at_the_timeout_only():
    seen = []

    def note(proc):
        seen.append(proc.poll())  # still running when asked
    stall = 'echo "rcu: INFO: rcu_sched detected stalls"; exec sleep 30'
    g = guestrun.GuestRun(["sh", "-c", stall], timeout=20, before_stop=note).run()
    assert g.outcome == "stall" and seen == [None]
    g = guestrun.GuestRun(["sleep", "30"], timeout=1, before_stop=note).run()
    assert g.outcome == "hang" and seen == [None, None]
    g = guestrun.GuestRun(["sh", "-c", "echo done"], timeout=20, before_stop=note).run()
    assert g.outcome == "clean" and len(seen) == 2


class _Recorder:
    def clear(self):
        pass

    def save(self, path):
        return False


def test_deaths_keep_a_stuck_qemu_guests_registers(tmp_path, monkeypatch):
    # "QEMU" prints a stall line once its monitor is up, then waits: the
    # deaths run must ask its monitor before it stops it.  The monitor's
    # options come last, so they reach QEMU through "$@".
    fake = ('(i=0; while [ ! -S "$MON" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; '
            'echo "rcu: INFO: rcu_sched detected stalls") & exec "$@"')

    def argv(cfg, cmdline, disk, args):
        return ["sh", "-c", fake, "sh"] + QEMU

    monkeypatch.setattr(deaths, "guest_argv", argv)
    real_argv = qemumon.argv

    def monitor_argv(sock):
        os.environ["MON"] = sock
        return real_argv(sock)
    monkeypatch.setattr(qemumon, "argv", monitor_argv)
    monkeypatch.setenv("MON", "")

    class Args:
        boot_timeout = 30
    log = str(tmp_path / "n000-qemu-verify.log")
    rec = deaths.one_run({"kind": "qemu", "name": "qemu", "opts": {}}, "verify", {},
                         Args(), log, _Recorder())
    assert rec["outcome"] == "stall"
    with open(log + ".regs") as f:
        assert f.read().count("CR3=") == 2
    # our VMM prints its registers itself (-v): no monitor, no .regs;
    # host_thp= holds for the run (the guest sees it) and is set back
    thp = tmp_path / "enabled"
    thp.write_text("[always] madvise never\n")
    monkeypatch.setattr(deaths, "THP", str(thp))
    fake_vmm = ["sh", "-c", 'echo "thp $(cat %s)"; echo "rcu: INFO: rcu_sched detected stalls"; '
                'exec sleep 30' % thp]
    monkeypatch.setattr(deaths, "guest_argv", lambda *a: list(fake_vmm))
    log = str(tmp_path / "n000-vmm-verify.log")
    rec = deaths.one_run({"kind": "vmm", "name": "vmm", "opts": {"host_thp": "never"}},
                         "verify", {}, Args(), log, _Recorder())
    assert rec["outcome"] == "stall" and not os.path.exists(log + ".regs")
    with open(log) as f:
        assert "thp never" in f.read()
    assert thp.read_text() == "always"


def test_host_thp_is_set_for_the_run_and_set_back(tmp_path):
    # a file laid out like sysfs' transparent_hugepage/enabled
    p = tmp_path / "enabled"
    p.write_text("always [madvise] never\n")
    with deaths.host_thp("never", path=str(p)):
        assert p.read_text() == "never"
    assert p.read_text() == "madvise"
    p.write_text("[always] madvise never\n")
    try:
        with deaths.host_thp("never", path=str(p)):
            raise RuntimeError("the run failed")
    except RuntimeError:
        pass
    assert p.read_text() == "always"
    with deaths.host_thp(None, path=str(p)):
        assert p.read_text() == "always"
