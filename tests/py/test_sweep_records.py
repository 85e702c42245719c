"""vmbench's sweep keeps its records as every scenario does (issue 50):
OUT/meta.json, OUT/runs.jsonl (and OUT/failures.jsonl), written by
vmbench_base.add_meta and vmbench_run.collect and read back by
report.load; bench/results/convert-sweep-records.py made them of the old
TSV files, and nothing reads those any more."""
import glob
import importlib.util
import json
import os
import tarfile
import types

import pytest

from test_report import fio
from vmharness import plan, report, vmbench, vmbench_run
from vmharness.vmbench_base import add_meta, read_meta

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OLD = ("meta.tsv", "runs.tsv", "points.tsv", "failures.tsv")


def load_script(name):
    spec = importlib.util.spec_from_file_location(
        name.replace("-", "_"), os.path.join(REPO, "bench", "results", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


convert = load_script("convert-sweep-records")
pack = load_script("pack")


def write_plan(out):
    cfgs = [{"kind": "vmm", "label": "a", "queues": ""}, {"kind": "host", "label": "host"}]
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump({"cfgs": cfgs, "qlist": [""], "glist": ["1"], "repeats": 1, "seed": 7,
                   "cpus": 2, "points": [{"job": "randread-4k", "params": ""}]}, f)
    return cfgs


def test_the_sweeps_records_read_back_as_written(tmp_path):
    out = str(tmp_path)
    cfgs = write_plan(out)
    add_meta(out, command="bench/vmbench -c vmm -c host", repeats=1, queues_swept=False)
    add_meta(out, repeats=2, regress=["a", "b"])  # a field given again: replaced
    assert read_meta(out) == {"command": "bench/vmbench -c vmm -c host", "repeats": 2,
                              "queues_swept": False, "regress": ["a", "b"]}
    assert json.load(open(os.path.join(out, "meta.json"))) == read_meta(out)
    ctx = types.SimpleNamespace(out=out, probe_ns=12.5, pos=3)
    for c, q, ng in ((0, "2", 2), (1, "-", 1)):
        d = os.path.join(out, "raw", "r1-c%d" % c)
        os.makedirs(d)
        with open(os.path.join(d, "g1-p0.json"), "w") as f:
            json.dump(fio(1000.0 * (c + 1), 100), f)
        with open(os.path.join(d, "g1-p0.rc"), "w") as f:
            f.write("0\n")
        run = vmbench_run.Run(ctx, cfgs[c], c, d, ng, q, [(0, 0)])
        run.kernel = "6.1.0 abc" if c == 0 else None
        vmbench_run.collect(run, "r1-c%d" % c, 1)  # guest 2 of c0: no JSON, no status
    plan.record_failure(out, {"run": "r1-c0", "attempt": 1, "why": "guest 1 died"})

    lines = [json.loads(l) for l in open(os.path.join(out, "runs.jsonl"))]
    assert lines[0] == {"run": "r1-c0", "repeat": 1, "cfg": 0, "label": "a", "kind": "vmm",
                        "queues": 2, "guests": 2, "point": 0, "guest": 1, "rc": 0,
                        "json": "raw/r1-c0/g1-p0.json", "probe_ns": 12.5, "pos": 3,
                        "kernel": "6.1.0 abc"}
    assert (lines[1]["guest"], lines[1]["rc"]) == (2, None)
    assert (lines[2]["queues"], lines[2]["kernel"]) == (None, None)

    meta, points, configs, runs, problems = report.load(out)
    assert meta["regress"] == ["a", "b"] and points == {0: {"job": "randread-4k", "params": ""}}
    assert configs == {0: {"label": "a", "kind": "vmm"}, 1: {"label": "host", "kind": "host"}}
    assert runs[("r1-c0", 0)]["parts"][2] is None and runs[("r1-c0", 0)]["queues"] == "2"
    assert runs[("r1-c1", 0)]["queues"] == "-"
    assert runs[("r1-c1", 0)]["parts"][1][("randread-4k", "read")]["iops"] == 2000.0
    assert problems == ["r1-c0 p0 guest 2: fio rc=none"]
    assert vmbench.analyse(out) == 0
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert summary["failed_attempts"] == [{"run": "r1-c0", "attempt": 1, "why": "guest 1 died"}]
    assert "- r1-c0, attempt 1: guest 1 died" in open(os.path.join(out, "table.md")).read()


def test_nothing_reads_or_writes_the_old_records():
    paths = glob.glob(os.path.join(REPO, "bench", "vmharness", "*.py")) + [
        os.path.join(REPO, "bench", "vmbench"), os.path.join(REPO, "bench", "results", "pack.py"),
        os.path.join(REPO, "tests", "bench-smoke.sh")]
    assert len(paths) > 20
    for p in paths:
        with open(p) as f:
            text = f.read()
        assert not [o for o in OLD if o in text], p


def old_plan(d, points="0\trandread-4k\t-\n"):
    """A plan directory as the sweep wrote it before (a test-host boot
    booted again: keys twice; the oldest plans' runs.tsv had no kernel)."""
    os.makedirs(d)
    write_plan(d)
    with open(os.path.join(d, "meta.tsv"), "w") as f:
        f.write("command\tbench/vmbench -c vmm -c host -r 1\ndate\t2026-01-01 08:00 UTC\n"
                "git\tabc1234\nrepeats\t1\nqueues_swept\t0\nregress\ta\tb\n"
                "order_seed\t7 (runs in a shuffled order within each repeat)\n"
                "inner_nproc\t2\ninner_seconds\t100\nelapsed\t1m\ninner_nproc\t2\n"
                "inner_seconds\t50\nelapsed\t2m\ntesthost_boots\t2\n")
    with open(os.path.join(d, "points.tsv"), "w") as f:
        f.write(points)
    head = "run repeat cfg label kind queues guests point guest rc json probe_ns pos"
    rows = [head.split(), ["r1-c0", "1", "0", "a", "vmm", "2", "1", "0", "1", "none",
                           "raw/r1-c0/g1-p0.json", "-", "0"],
            ["r1-c1", "1", "1", "host", "host", "-", "1", "0", "1", "0",
             "raw/r1-c1/g1-p0.json", "6.5", "1"]]
    with open(os.path.join(d, "runs.tsv"), "w") as f:
        f.write("".join("\t".join(r) + "\n" for r in rows))
    with open(os.path.join(d, "failures.tsv"), "w") as f:
        f.write("r1-c0\t1\tguest 1: vmm exit status 4\n")
    os.makedirs(os.path.join(d, "raw", "r1-c1"))
    with open(os.path.join(d, "raw", "r1-c1", "g1-p0.json"), "w") as f:
        json.dump(fio(3000.0, 100), f)


def test_the_converter_rewrites_a_packed_plan_once(tmp_path, capsys):
    root = tmp_path / "bench" / "results"
    d = str(root / "2026-01-01" / "sweep-a")
    old_plan(d)
    pack.pack(d)
    assert convert.main([d]) == 0
    arch = d + ".tar.xz"
    with tarfile.open(arch) as t:
        names = sorted(m.name for m in t.getmembers() if m.isfile())
    assert names == ["sweep-a/failures.jsonl", "sweep-a/meta.json", "sweep-a/plan.json",
                     "sweep-a/raw/r1-c1/g1-p0.json", "sweep-a/runs.jsonl"]
    assert not os.path.exists(d) and pack.check(str(root)) == []
    summary = open(d + ".md").read()
    assert "- Code: abc1234" in summary and "- Command: `bench/vmbench -c vmm" in summary

    meta, points, configs, runs, problems = report.load(d)  # read in the archive
    assert meta["inner_seconds"] == 150 and meta["elapsed"] == "2m"
    assert (meta["repeats"], meta["testhost_boots"], meta["order_seed"]) == (1, 2, 7)
    assert meta["queues_swept"] is False and meta["regress"] == ["a", "b"]
    assert plan.load_runs(d)[1] == {
        "run": "r1-c1", "repeat": 1, "cfg": 1, "label": "host", "kind": "host", "queues": None,
        "guests": 1, "point": 0, "guest": 1, "rc": 0, "json": "raw/r1-c1/g1-p0.json",
        "probe_ns": 6.5, "pos": 1, "kernel": None}
    assert problems == ["r1-c0 p0 guest 1: fio rc=none"]
    assert plan.load_failures(d) == [{"run": "r1-c0", "attempt": 1,
                                      "why": "guest 1: vmm exit status 4"}]
    assert runs[("r1-c1", 0)]["parts"][1][("randread-4k", "read")]["iops"] == 3000.0

    # Once: a second run leaves the archive as it is.
    before = open(arch, "rb").read()
    capsys.readouterr()
    assert convert.main([d]) == 0
    assert "left alone" in capsys.readouterr().out and open(arch, "rb").read() == before


def test_the_converter_keeps_a_plan_whose_points_disagree(tmp_path):
    d = str(tmp_path / "sweep-b")
    old_plan(d, points="0\trandwrite-4k\t-\n")
    with pytest.raises(ValueError):
        convert.convert_plan(d)
    assert os.path.exists(os.path.join(d, "meta.tsv")) and not os.path.exists(
        os.path.join(d, "meta.json"))
