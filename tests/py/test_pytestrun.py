"""vmharness.pytestrun: a test host that dies mid-run is booted again for
the tests without an outcome, and the summary counts each test once."""
import json
import os

from vmharness import pytestrun

A, B, C = "t.py::a", "t.py::b[x]", "t.py::c"


def write(path, objs, tail=""):
    with open(path, "a") as f:
        for o in objs:
            f.write(json.dumps(o) + "\n")
        f.write(tail)


def test_record_outcomes_setup_failures_and_a_cut_line(tmp_path):
    rec = str(tmp_path / "r.jsonl")
    write(rec, [{"collected": [A, B, C]},
                {"nodeid": A, "when": "setup", "outcome": "passed"},
                {"nodeid": A, "when": "call", "outcome": "passed"},
                {"nodeid": A, "when": "teardown", "outcome": "failed"},
                {"nodeid": B, "when": "setup", "outcome": "skipped"},
                {"nodeid": C, "when": "setup", "outcome": "passed"}],
          tail='{"nodeid": "t.py::c", "wh')
    collected, outcome, finished = pytestrun.read_record(rec)
    assert collected == [A, B, C]
    assert outcome == {A: "failed", B: "skipped"}  # C was running
    assert not finished
    write(rec, [{"collected": [C]}, {"nodeid": C, "when": "call", "outcome": "passed"},
                {"finished": 1}])
    collected, outcome, finished = pytestrun.read_record(rec)
    assert collected == [A, B, C] and outcome[C] == "passed" and finished


def test_summary_counts_never_run_as_failed():
    line = pytestrun.summary([A, B, C], {A: "passed", B: "skipped"})
    assert line == "1 skipped, 1 not run, 1 passed, 1 failed"
    assert pytestrun.summary([A], {A: "passed"}).endswith("1 passed, 0 failed")


def fake_boots(monkeypatch, boots):
    """testhost.run_inside replaced: boot i appends boots[i] to the record."""
    calls = []

    def run_inside(argv, out, env=None, **kw):
        calls.append(argv)
        write(env["VMH_PYTEST_RECORD"], boots[len(calls) - 1])
        return 125 if not any("finished" in o for o in boots[len(calls) - 1]) else 0
    monkeypatch.setattr(pytestrun.testhost, "run_inside", run_inside)
    return calls


def done(n, outcome="passed"):
    return {"nodeid": n, "when": "call", "outcome": outcome}


def test_a_death_boots_again_for_the_tests_left(tmp_path, monkeypatch, capsys):
    calls = fake_boots(monkeypatch, [
        [{"collected": [A, B, C]}, done(A)],                  # died in B
        [{"collected": [B, C]}, done(B), done(C), {"finished": 0}]])
    assert pytestrun.run(["pytest"], str(tmp_path)) == 0
    assert calls[0] == ["pytest"]
    assert calls[1] == ["pytest", "--deselect", A]
    assert capsys.readouterr().out.splitlines()[-1].endswith("3 passed, 0 failed")


def test_a_failure_is_not_run_again_and_fails_the_run(tmp_path, monkeypatch):
    calls = fake_boots(monkeypatch, [
        [{"collected": [A, B]}, done(A, "failed"), done(B), {"finished": 1}]])
    assert pytestrun.run(["pytest"], str(tmp_path)) == 1
    assert len(calls) == 1


def test_three_deaths_give_up_with_the_rest_not_run(tmp_path, monkeypatch, capsys):
    calls = fake_boots(monkeypatch, [[{"collected": [A, B]}], [{"collected": [A, B]}],
                                     [{"collected": [A, B]}, done(A)]])
    assert pytestrun.run(["pytest"], str(tmp_path)) == 1
    assert len(calls) == pytestrun.BOOTS
    out = capsys.readouterr().out
    assert "not run: " + B in out
    assert out.splitlines()[-1].endswith("1 not run, 1 passed, 1 failed")


def test_the_heartbeat_is_a_sign_of_life(tmp_path):
    from vmharness import testhost
    assert testhost._last_sign_of_life(str(tmp_path)) == 0.0
    hb = tmp_path / "heartbeat"
    hb.write_text("1\n")
    os.utime(hb, (1000.0, 1234.0))
    assert testhost._last_sign_of_life(str(tmp_path)) == 1234.0
