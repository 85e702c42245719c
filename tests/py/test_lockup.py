"""vmharness.lockup: one run's outcome from a VMM's status and output,
and the table of lock-ups per guest."""
import json

from vmharness import lockup


def test_a_run_stopped_by_the_signal_is_clean_and_a_gate_that_ran_is_a_trap(tmp_path, fake_vmm):
    # Like the VMM: SIGTERM ends it with 128 + 15.
    fake_vmm("trap 'exit 143' TERM\necho 'smoke guest up'\n"
             "while :; do sleep 0.05; done\n")
    assert lockup.one_run("x.img", 0.3, str(tmp_path / "a.log")) == {
        "status": 143, "traps": 0, "outcome": "clean"}
    fake_vmm("trap 'exit 143' TERM\necho 'TRAP 0000000000000040 1'\n"
             "echo 'TRAP 0000000000000040 2'\nwhile :; do sleep 0.05; done\n")
    assert lockup.one_run("x.img", 0.3, str(tmp_path / "b.log")) == {
        "status": 143, "traps": 2, "outcome": "trap"}


def test_a_vmm_that_ends_by_itself_or_ignores_the_signal(tmp_path, monkeypatch, fake_vmm):
    fake_vmm("echo 'vmm: error: vCPU 0: triple fault'\nexit 4\n")
    assert lockup.one_run("x.img", 0.3, str(tmp_path / "a.log"))["outcome"] == "triple-fault"
    fake_vmm("exit 0\n")
    assert lockup.one_run("x.img", 0.3, str(tmp_path / "b.log"))["outcome"] == "status 0"
    monkeypatch.setattr(lockup.subprocess.Popen, "wait",
                        _fast_wait(lockup.subprocess.Popen.wait))
    fake_vmm("trap '' TERM\nwhile :; do sleep 0.05; done\n")
    assert lockup.one_run("x.img", 0.2, str(tmp_path / "c.log")) == {
        "status": 137, "traps": 0, "outcome": "status 137"}  # SIGKILL


def _fast_wait(real):
    """Popen.wait with the 10 s grace after SIGTERM cut to 0.3 s."""
    def wait(self, timeout=None):
        return real(self, 0.3 if timeout == 10 else timeout)
    return wait


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_lockups_count_against_the_guest_in_flight(tmp_path):
    runs = [{"control": True, "traps": 5}, {"control": True, "traps": 5},
            {"control": True, "traps": 5}]
    runs += [{"config": "ifpoll", "job": "loop", "round": i, "traps": 0, "outcome": "clean"}
             for i in range(10)]
    runs += [{"config": "iftrap", "job": "loop", "round": i, "traps": 0, "outcome": "clean"}
             for i in range(7)]
    runs.append({"config": "iftrap", "job": "loop", "round": 7, "traps": 1, "outcome": "trap"})
    runs.append({"config": "ifpoll", "job": "loop", "round": 10, "traps": 0,
                 "outcome": "triple-fault"})
    write_jsonl(tmp_path / "runs.jsonl", runs)
    write_jsonl(tmp_path / "testhost.jsonl", [
        {"status": 123, "kind": "lock-up", "in_flight": {"config": "iftrap", "round": 3}},
        {"status": 123, "kind": "lock-up", "in_flight": {"config": "iftrap", "round": 5}},
        {"status": 125, "kind": "death"}])
    out = lockup.analyse(str(tmp_path))
    assert "| ifpoll | 11 | 0 | 0.0% | 0.0-25.9% | triple-fault 1 | 0 |" in out
    assert "| iftrap | 10 | 2 | 20.0% | 5.7-51.0% | - | 1 |" in out
    assert "Test host stopped: ifpoll 0/11, iftrap 2/10; Fisher's exact test p = 0.214 (not significant)" in out
    assert "Test-host boots: 3; 3 ended early (lock-up, lock-up, death); 1 with no run in flight" in out
    assert "Controls (IF set) at each boot's start: 5/5/5 traps" in out
    assert (tmp_path / "lockup.md").read_text() == out
