"""bench/vmbench hotplug (vmharness/hotplug.py): its plan pairs every
repeat, its analysis takes the figures bench/hotplug.sh leaves."""
import json
import os
import subprocess
import sys

import pytest

from vmharness import hotplug, paths


def plan_lines(out):
    with open(os.path.join(out, "plan.txt")) as f:
        return [tuple(map(int, l.split())) for l in f if l.strip()]


def test_plan_pairs_each_repeat_in_a_seeded_order(tmp_path):
    a, b, c = (str(tmp_path / n) for n in "abc")
    for d, seed in ((a, 1), (b, 1), (c, 2)):
        os.makedirs(d)
        hotplug.write_plan(d, 6, 8, seed)
    lines = plan_lines(a)
    assert len(lines) == 12
    for r in range(1, 7):
        assert sorted(s for rr, s in lines if rr == r) == [0, 8]
    assert plan_lines(b) == lines  # the seed decides the order
    orders = {tuple(s for rr, s in plan_lines(d) if rr == r) for d in (a, c) for r in range(1, 7)}
    assert orders == {(0, 8), (8, 0)}  # both orders occur
    hotplug.write_plan(a, 2, 4, 9)  # a plan is kept once written
    assert plan_lines(a) == lines


def console(iops, rc=0):
    doc = {"jobs": [{"read": {"total_ios": int(iops * 5), "iops": iops, "bw_bytes": 1,
                              "runtime": 5000, "clat_ns": {"mean": 1000}}}]}
    return "\n".join(["[    1.0] virtio_blk virtio1: [vda]", "=== FIO-JSON BEGIN randread-4k ===",
                      json.dumps(doc, indent=1), "=== FIO-JSON END randread-4k rc=%d ===" % rc,
                      ""]).replace("\n", "\r\n")


def write_run(out, runs, consoles):
    os.makedirs(os.path.join(out, "datapath"))
    with open(os.path.join(out, "runs.jsonl"), "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    for name, text in consoles.items():
        with open(os.path.join(out, "datapath", name + ".console"), "w") as f:
            f.write(text)


def cycle(i, mode, attach, readable, detach, arc=0):
    return {"part": "cycle", "arch": "arm64", "cycle": i, "mode": mode, "attach_rc": arc,
            "detach_rc": 0, "attach_ctl_ms": attach, "readable_ms": readable, "detach_ms": detach}


def test_analysis_takes_the_times_and_pairs(tmp_path):
    out = str(tmp_path)
    runs = [{"part": "times", "arch": "arm64", "status": 4, "cycles": 1},  # died: run again
            cycle(1, "idle", 11, 99999, 99999),
            {"part": "times", "arch": "arm64", "status": 0, "cycles": 4},
            cycle(1, "idle", 10, 700, 5600), cycle(2, "load", 30, 900, 6100),
            cycle(3, "idle", 20, 500, 5500), cycle(4, "load", 50, 1300, 6300),
            cycle(5, "idle", 99, 99999, 99999, arc=1)]  # a failed attach: left out
    consoles = {}
    for r, (none, eight) in enumerate(((1000, 900), (2000, 1800), (1500, 1350)), 1):
        for s, v in ((0, none), (8, eight)):
            runs.append({"part": "datapath", "arch": "arm64", "repeat": r, "slots": s,
                         "status": 0})
            consoles["%d-%d" % (r, s)] = console(v)
    runs.append({"part": "datapath", "arch": "arm64", "repeat": 4, "slots": 0, "status": 4})
    consoles["4-0"] = console(5000, rc=1)  # fio failed: no figure, no pair
    write_run(out, runs, consoles)
    text = hotplug.analyse(out)
    assert "# Hot-plug, arm64 test host" in text
    assert "| attach to /dev/vdb readable | 600 (500-700), 2 cycles | 1100 (900-1300), 2 cycles |" \
        in text, text
    assert "| detach to slot free | 5550 (5500-5600), 2 cycles | 6200 (6100-6300), 2 cycles |" \
        in text, text
    assert "attach or detach failed in cycles [5]" in text, text
    assert "run again after 1 guest(s) that ended early (status 4)" in text, text
    assert "with 8 empty slots / with none: 0.90x" in text and "3 pairs" in text, text
    assert "0.90x (0.90-0.90), significant, 3 pairs" in text, text
    assert "4-0 (status 4)" in text, text
    assert open(os.path.join(out, "hotplug.md")).read() == text


@pytest.mark.parametrize("args,want", [
    (["--slots", "9"], "invalid choice: 9"),
    (["--cycles", "0"], "at least 1"),
    (["--arch", "riscv"], "invalid choice: 'riscv'")])
def test_bad_arguments_stop_before_any_boot(args, want, tmp_path):
    p = subprocess.run([sys.executable, os.path.join(paths.REPO, "bench", "vmbench"), "hotplug",
                        "-o", str(tmp_path / "o")] + args, capture_output=True, text=True)
    assert p.returncode == 2 and want in p.stderr, p.stderr
    assert not os.path.exists(str(tmp_path / "o"))
