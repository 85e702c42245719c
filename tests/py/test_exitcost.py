"""vmharness.exitcost: the EXITCOST guest's lines to ticks per exit, and
the table over runs."""
import json

from vmharness import exitcost

LINE = ("C 0000000000001000 I 0000000000002000 L 0000000000003000 "
        "P 0000000000004000 M 0000000000005000 ")


def test_rounds_skip_the_warm_up_and_lines_cut_short():
    warm = LINE.replace("0000000000001000", "0000000000100000")
    text = "smoke guest up\n%s\n%s\n%s\nC 0000000000001000 I 00000000\n" % (warm, LINE, LINE)
    rounds = exitcost.parse_rounds(text)
    assert rounds == [{"C": 1.0, "I": 2.0, "L": 3.0, "P": 4.0, "M": 5.0}] * 2


def test_tsc_rate_from_the_kernel_log():
    assert exitcost.tsc_mhz("[0.04] tsc: Detected 2094.294 MHz processor\n") == 2094.294
    assert exitcost.tsc_mhz("nothing\n") is None


def test_the_table_is_the_median_over_runs_in_ticks_and_microseconds(tmp_path):
    rows = [{"run": 0, "status": 0, "tsc_mhz": 2000.0,
             "rounds": [{"C": 2000.0, "I": 1.0, "L": 1.0, "P": 1.0, "M": 1.0},
                        {"C": 4000.0, "I": 1.0, "L": 1.0, "P": 1.0, "M": 1.0}]},
            {"run": 1, "status": 4, "tsc_mhz": 2000.0,
             "rounds": [{"C": 100000.0, "I": 1.0, "L": 1.0, "P": 1.0, "M": 1.0}]}]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = exitcost.analyse(str(tmp_path))
    assert "| C: cpuid (in KVM, nothing decoded) | 4,000 | 2.0 | 3 |" in out
    assert "runs that did not end with status 0: [1]" in out
    assert (tmp_path / "exitcost.md").read_text() == out


def test_no_round_at_all_says_so(tmp_path):
    (tmp_path / "runs.jsonl").write_text(json.dumps(
        {"run": 0, "status": 4, "tsc_mhz": None, "rounds": []}) + "\n")
    assert exitcost.analyse(str(tmp_path)) == "exitcost: no complete round in 1 runs\n"


def test_a_hung_guest_is_recorded_and_the_plan_goes_on(tmp_path, monkeypatch):
    from types import SimpleNamespace
    from vmharness import paths
    vmm = tmp_path / "vmm"
    vmm.write_text("#!/bin/sh\necho 'smoke guest up'\nexec sleep 5\n")
    vmm.chmod(0o755)
    monkeypatch.setattr(paths, "VMM_BIN", str(vmm))
    monkeypatch.setattr(exitcost, "RUN_TIMEOUT_S", 0.3)
    exitcost.run_plan(SimpleNamespace(out=str(tmp_path / "out"), n=2))
    runs = [json.loads(l) for l in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    assert [(r["run"], r["status"], r["rounds"]) for r in runs] == [
        (0, "timeout", []), (1, "timeout", [])]
