"""vmharness.exitcost: the EXITCOST guest's lines to ticks per exit, and
the table over runs."""
import json
from types import SimpleNamespace

from vmharness import exitcost

LINE = ("C 0000000000001000 I 0000000000002000 L 0000000000003000 "
        "P 0000000000004000 M 0000000000005000 T 0000000000006000 W 0000000000008000 ")
ROUND = {"C": 1.0, "I": 2.0, "L": 3.0, "P": 4.0, "M": 5.0, "T": 6.0, "W": 8.0}


def test_rounds_skip_the_warm_up_and_lines_cut_short_or_garbled():
    warm = LINE.replace("0000000000001000", "0000000000100000")
    third = LINE.replace("0000000000005000", "000000000000a000")
    text = "smoke guest up\n%s\n%s\n%s\n%s\nC 0000000000001000 I 00000000\n" % (
        warm, LINE, third, LINE)
    text += LINE.replace("I ", "C ") + "\n"  # a letter twice: no round
    assert exitcost.parse_rounds(text) == [ROUND, dict(ROUND, M=10.0), ROUND]


def test_tsc_rate_from_the_kernel_log():
    assert exitcost.tsc_mhz("[0.04] tsc: Detected 2094.294 MHz processor\n") == 2094.294
    assert exitcost.tsc_mhz("nothing\n") is None


def write_runs(path, rows):
    (path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_table_is_each_kinds_median_over_runs_in_ticks_and_microseconds(tmp_path):
    def rnd(c, w=7000.0):
        return {"C": c, "I": 2000.0, "L": 3000.0, "P": 4000.0, "M": 5000.0,
                "T": 6000.0, "W": w}
    write_runs(tmp_path, [
        {"run": 0, "status": 0, "tsc_mhz": 1000.0,
         "rounds": [rnd(2000.0, 9000.0), rnd(4000.0, 10000.0)]},
        {"run": 1, "status": 4, "tsc_mhz": 1000.0, "rounds": [rnd(100000.0, 20000.0)]}])
    out = exitcost.analyse(str(tmp_path))
    assert "| C: cpuid (in KVM, decoded to skip it) | 4,000 | 4.0 | 3 |" in out
    assert "| I: port read, the PIC (in KVM, nothing decoded) | 2,000 | 2.0 | 3 |" in out
    assert "| L: MMIO read, the LAPIC (in KVM, emulated) | 3,000 | 3.0 | 3 |" in out
    assert "| P: port write, out to the VMM | 4,000 | 4.0 | 3 |" in out
    assert "| M: MMIO write, emulated, out to the VMM | 5,000 | 5.0 | 3 |" in out
    assert "| T: 512 page reads, no exit | 6,000 | 6.0 | 3 |" in out
    assert "| W: 512 page reads, then I's port read | 10,000 | 10.0 | 3 |" in out
    assert "| W - T: a port read with 512 pages to touch again | 4,000 | 4.0 | 3 |" in out
    assert "2 runs, TSC 1000 MHz; runs that did not end with status 0: [1]" in out
    assert (tmp_path / "exitcost.md").read_text() == out


def test_no_round_at_all_and_a_test_host_that_ended_early_say_so(tmp_path):
    write_runs(tmp_path, [{"run": 0, "status": 4, "tsc_mhz": None, "rounds": []}])
    (tmp_path / "testhost.jsonl").write_text(json.dumps(
        {"status": 123, "kind": "lock-up", "in_flight": {"run": 1}}) + "\n")
    out = exitcost.analyse(str(tmp_path))
    assert out == ("exitcost: no complete round in 1 runs\n"
                   "Test-host boots that ended early: lock-up (run 1 in flight)\n")
    assert (tmp_path / "exitcost.md").read_text() == out


def test_runs_go_on_after_a_hung_guest_and_resume_where_they_stopped(
        tmp_path, monkeypatch, fake_vmm):
    fake_vmm("echo \"$@\" > \"$0.args\"\necho 'smoke guest up'\n"
             "[ -e \"$0.hang\" ] && exec sleep 5\n"
             "for i in 1 2; do echo '%s'; done\n" % LINE)
    (tmp_path / "vmm.hang").write_text("")
    monkeypatch.setattr(exitcost, "RUN_TIMEOUT_S", 0.3)
    out = tmp_path / "out"
    exitcost.run_plan(SimpleNamespace(out=str(out), n=1))
    (tmp_path / "vmm.hang").unlink()
    exitcost.run_plan(SimpleNamespace(out=str(out), n=2))
    runs = [json.loads(l) for l in (out / "runs.jsonl").read_text().splitlines()]
    assert [(r["run"], r["status"], r["rounds"]) for r in runs] == [
        (0, "timeout", []), (1, 0, [ROUND])]
    assert (tmp_path / "vmm.args").read_text().split() == [
        "run", "-k", exitcost.IMAGES + "/EXITCOST.img", "-m", "32M"]
    assert "| C: cpuid" in (out / "exitcost.md").read_text()


def test_the_first_runs_without_t_and_w_still_make_a_table():
    """The first data (bench/results/2026-12-03/exitcost-s19) has five
    kinds a round, before T and W were added: its table has those five."""
    five = {k: 100.0 for k in "CILPM"}
    text = exitcost.table([five, five], 2000.0)
    assert "| C: " in text and "| M: " in text and "| T: " not in text and "W - T" not in text
    full = dict(five, T=1000.0, W=1300.0)
    assert "| W - T: a port read with 512 pages to touch again | 300 |" in exitcost.table([full], None)
