"""vmbench's report (vmharness/report.py) on a small made-up run: paired
ratios per repeat, intervals in range, sentences from the figures, and
every planned run without a result listed."""
import json
import os
import types

import pytest

from vmharness import vmbench, vmbench_run
from vmharness.vmbench_base import add_meta


def fio(iops, lat_us):
    return {"jobs": [{"jobname": "randread-4k", "read": {
        "total_ios": int(iops * 3), "iops": iops, "bw": iops * 4,
        "clat_ns": {"mean": lat_us * 1000, "percentile": {"99.000000": lat_us * 3000}}}}]}


def make_run(out, results, repeats=3):
    """RESULTS: {(repeat, cfg): iops}; cfg 0 is "base", 1 is "new".  The
    records written as the sweep writes them (vmbench_base.add_meta,
    vmbench_run.collect)."""
    cfgs = [{"kind": "vmm", "label": "base", "queues": ""},
            {"kind": "vmm", "label": "new", "queues": ""}]
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump({"cfgs": cfgs, "qlist": [""], "glist": ["1"], "repeats": repeats,
                   "seed": 7, "cpus": 2, "points": [{"job": "randread-4k", "params": ""}]}, f)
    add_meta(out, title="t", repeats=repeats)
    ctx = types.SimpleNamespace(out=out, probe_ns=20.0, pos=0)
    for (rep, c), iops in sorted(results.items()):
        run = "r%d-g1-q2-c%d" % (rep, c)
        d = os.path.join(out, "raw", run)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "g1-p0.json"), "w") as f:
            json.dump(fio(iops, 1e6 / iops), f)
        with open(os.path.join(d, "g1-p0.rc"), "w") as f:
            f.write("0\n")
        r = vmbench_run.Run(ctx, cfgs[c], c, d, 1, "2", [(0, 0)])
        r.kernel = None
        vmbench_run.collect(r, run, rep)


def test_paired_ratio_sentences_and_missing_runs(tmp_path, capsys):
    out = str(tmp_path)
    # new = 2x base in each repeat although the repeats differ 4-fold;
    # repeat 3 of "new" never ran
    make_run(out, {(1, 0): 1000, (1, 1): 2000, (2, 0): 4000, (2, 1): 8100,
                   (3, 0): 2000})
    assert vmbench.analyse(out) == 0
    md = open(os.path.join(out, "table.md")).read()
    with open(os.path.join(out, "summary.json")) as f:
        res = [r for r in json.load(f)["results"] if r["config"] == "new" and r["figure"] == "iops"][0]
    assert res["pairs"] == 2 and res["ratio"] == pytest.approx((2.0 * 2.025) ** 0.5)
    assert res["significant"] is True and res["worse"] is False
    assert res["ratio_ci95"][0] > 1.0
    assert "significantly better" in md and "2 paired repeats" in md
    assert "repeat 3, new, 1 guest(s), queues 2: the whole run never ran" in md
    lat = [l for l in md.splitlines() if "mean lat: new / base" in l][0]
    assert "significantly better" in lat  # latency halved: lower is better
    # every interval of a mean stays above 0
    with open(os.path.join(out, "summary.json")) as f:
        for r in json.load(f)["results"]:
            assert r["ci95"][0] is None or r["ci95"][0] > 0


def test_unpaired_noise_is_not_called_significant(tmp_path):
    out = str(tmp_path)
    make_run(out, {(1, 0): 1000, (1, 1): 1100, (2, 0): 1000, (2, 1): 900,
                   (3, 0): 1000, (3, 1): 1050})
    assert vmbench.analyse(out) == 0
    md = open(os.path.join(out, "table.md")).read()
    iops = [l for l in md.splitlines() if "IOPS: new / base" in l][0]
    assert "not significant" in iops and "3 paired repeats" in iops
    assert "never ran" not in md


def test_one_command_line_analyses_a_vmbench_run(tmp_path):
    import subprocess
    import sys
    make_run(str(tmp_path), {(1, 0): 1000, (1, 1): 2000, (2, 0): 1000, (2, 1): 2100,
                             (3, 0): 1000, (3, 1): 1900})
    vmb = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "vmbench")
    r = subprocess.run([sys.executable, vmb, "analyse", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "IOPS: new / base = 2.00x" in r.stdout and "3 paired repeats" in r.stdout
    r = subprocess.run([sys.executable, vmb, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--scenario plug|peers|scaling" in r.stdout
    r = subprocess.run([sys.executable, vmb, "boot", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--kernels" in r.stdout
