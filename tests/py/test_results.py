"""bench/results/pack.py and bench/vmharness/results.py: a run directory
packed into DATE/NAME.tar.xz (its summary beside it as DATE/NAME.md)
reads as it did unpacked, through every reader of the data: standing.scan
(vmbench's meta.json and devbench's JSON), plan.load_runs, arm64peers,
report.load and vmbench --analyze (the sweep's records), and
bench/citations.py."""
import gzip
import importlib.util
import io
import json
import os
import tarfile

import pytest

import citations
from test_arm64peers import write_run
from test_citations import make_tree
from test_report import make_run
from test_standing import profile_dir, run
from vmharness import (arm64peers, arm64peers_analysis, arm64peers_page, cli, devbench, plan,
                       profile_page, report, results, standing, sweep, vmbench)
from vmharness.vmbench_base import add_meta

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
spec = importlib.util.spec_from_file_location(
    "pack", os.path.join(REPO, "bench", "results", "pack.py"))
pack = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pack)


def make_results(root):
    """A results folder with one run directory of each kind the readers
    know: {kind: directory}."""
    dirs = {}
    os.makedirs(os.path.join(root, "2026-01-02"))
    d = dirs["profile"] = profile_dir(
        os.path.join(root, "2026-01-02"), "profile-a", "2026-01-02 10:00:00 UTC",
        [run(c, j, k, 1000 * (1.5 + 0.01 * k if c == "vmm" else 1))
         for j in ("randread-4k", "randwrite-4k") for k in range(4) for c in ("qemu", "vmm")])
    os.makedirs(os.path.join(d, "logs"))
    with gzip.open(os.path.join(d, "logs", "n001-qemu-randread-4k.log.gz"), "wt") as f:
        f.write("console of a death\n" * 500)
    with open(os.path.join(d, "table.md"), "w") as f:
        f.write("| a | table |\n")

    d = dirs["arm64"] = os.path.join(root, "arm64-peers-20260103-1000")
    os.makedirs(d)
    p = arm64peers.make_plan(("vmm-file", "kvmtool-file"), ("randread-4k",), 3, 5)
    with open(os.path.join(d, "plan.txt"), "w") as f:
        f.write(arm64peers.plan_text(p, 5, 0, 1024))
    for rep, pos, cfg, _ in p:
        write_run(d, rep, pos, cfg, "randread-4k", 1000.0 * rep * (2 if cfg == "vmm-file" else 1))
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"command": "bench/vmbench arm64-peers -r 3", "date": "2026-01-03 10:00:00 UTC",
                   "configs": ["vmm-file", "kvmtool-file"]}, f)

    d = dirs["vmbench"] = os.path.join(root, "2026-01-01", "vmbench-b")
    os.makedirs(d)
    make_run(d, {(1, 0): 1000, (1, 1): 2000, (2, 0): 4000, (2, 1): 8100, (3, 0): 2000, (3, 1): 3900})
    add_meta(d, command="bench/vmbench -c vmm -c vmm", date="2026-01-01 08:00 UTC")

    d = dirs["devbench"] = os.path.join(root, "2026-01-04", "devbench-c")
    os.makedirs(d)
    for i, ratio in enumerate((2.0, 2.2, 1.8)):
        with open(os.path.join(d, "i%d.json" % i), "w") as f:
            json.dump({"command": "build/bench/devbench --json i%d.json" % i,
                       "date": "2026-01-0%dT00:00:00Z" % (i + 4),
                       "machine": {"nproc": 2, "cpu": "c", "kernel": "k"},
                       "points": [{"name": "ram-x", "ok": True, "iops": 100.0 * ratio,
                                   "baseline": "fio-y", "ratio_iops": ratio}]}, f)
    return dirs


def read_all(root, dirs, capsys):
    """What every reader gives of ROOT's run directories."""
    out = {}
    entries = standing.scan(root)
    out["scan"] = [{k: e.get(k) for k in ("dir", "kind", "name", "date", "meta", "invocations")}
                   for e in entries]
    out["x86"] = profile_page.x86_section(entries, False)
    out["devbench"] = devbench.devbench_section(entries)
    out["load_runs"] = plan.load_runs(dirs["profile"])
    a = dirs["arm64"]
    out["arm64_plan"] = arm64peers_analysis.read_plan(a)
    out["arm64_runs"] = arm64peers_analysis.load_runs(a)
    out["arm64_table"] = arm64peers_analysis.analyse_data(a, out["arm64_plan"][0], out["arm64_runs"])[0]
    out["arm64_summary"] = arm64peers_page.arm64_summary(
        next(e for e in entries if e["kind"] == "arm64-peers"))
    capsys.readouterr()
    assert cli.main(["analyse", a]) == 0
    out["arm64_analyse"] = capsys.readouterr().out
    assert cli.main(["analyse", dirs["profile"]]) == 0
    out["profile_analyse"] = capsys.readouterr().out
    out["vmbench_load"] = report.load(dirs["vmbench"])
    out["sweep_labels"] = [sweep.labels(e) for e in entries if e["kind"] == "sweep"]
    capsys.readouterr()
    assert vmbench.analyse(dirs["vmbench"]) == 0
    out["vmbench_analyse"] = capsys.readouterr().out
    out["glob"] = sorted(os.path.relpath(p, root) for p in
                         results.glob(os.path.join(root, "**", "*.json"), recursive=True))
    return out


def files(d):
    out = {}
    for top, _, names in os.walk(d):
        for n in names:
            with open(os.path.join(top, n), "rb") as f:
                out[os.path.relpath(os.path.join(top, n), d)] = f.read()
    return out


def test_every_reader_reads_a_packed_directory_as_it_was(tmp_path, capsys):
    root = str(tmp_path / "bench" / "results")
    dirs = make_results(root)
    before = read_all(root, dirs, capsys)
    # The readers found each kind (a check of nothing passes for nothing).
    assert {e["kind"] for e in before["scan"]} == {"profile", "arm64-peers", "devbench", "sweep"}
    assert any("**1.5" in line for line in before["x86"])
    assert any("ram-x" in line for line in before["devbench"])
    assert len(before["load_runs"]) == 16 and len(before["arm64_runs"]) == 6
    assert "| randread-4k (read) | 2.00x" in before["arm64_table"]
    assert "| randread-4k (read) | 2.00x" in before["arm64_analyse"]
    assert before["sweep_labels"] == [["base", "new"]]
    assert "significantly better" in before["vmbench_analyse"]
    assert "vmm / qemu IOPS: 1.5" in before["profile_analyse"]

    assert pack.main(["--root", root, "--min-age", "0"]) == 0
    left = sorted(os.path.relpath(os.path.join(t, n), root)
                  for t, _, ns in os.walk(root) for n in ns)
    assert left == ["2026-01-01/vmbench-b.md", "2026-01-01/vmbench-b.tar.xz",
                    "2026-01-02/profile-a.md", "2026-01-02/profile-a.tar.xz",
                    "2026-01-04/devbench-c.md", "2026-01-04/devbench-c.tar.xz",
                    "arm64-peers-20260103-1000.md", "arm64-peers-20260103-1000.tar.xz"]
    summary = open(os.path.join(root, "2026-01-02", "profile-a.md")).read()
    assert "- Command: `bench/vmbench profile -c qemu -c vmm`" in summary
    assert "logs/ (1 files)" in summary and "runs.jsonl" in summary

    after = read_all(root, dirs, capsys)
    assert after == before
    # A FILE.gz is kept as FILE: the same text, read in place.
    with results.open(os.path.join(dirs["profile"], "logs", "n001-qemu-randread-4k.log")) as f:
        assert f.read() == "console of a death\n" * 500
    assert results.isdir(os.path.join(dirs["profile"], "logs"))
    assert not results.exists(os.path.join(dirs["profile"], "logs", "nothing"))
    assert pack.check(root) == []


def test_packing_is_idempotent_and_unpack_gives_the_directory_back(tmp_path, capsys):
    root = str(tmp_path / "results")
    d = make_results(root)["arm64"]
    orig = files(d)
    print(pack.pack(d))
    with open(d + ".tar.xz", "rb") as f:
        first = f.read()
    assert "packed already" in pack.pack(d)
    assert pack.main(["--unpack", d]) == 0
    assert files(d) == orig
    assert "unchanged" in pack.pack(d) and not os.path.exists(d)
    with open(d + ".tar.xz", "rb") as f:
        assert f.read() == first
    # A change made in the unpacked directory is packed anew, and read
    # anew by the same process.
    runs = len(plan.load_runs(d))
    pack.unpack(d)
    write_run(d, 4, 1, "vmm-file", "randread-4k", 5000.0)
    assert "packed anew" in pack.pack(d)
    assert len(plan.load_runs(d)) == runs + 1
    # The members sit under NAME/, so that tar xJf gives the directory.
    with tarfile.open(d + ".tar.xz") as t:
        assert {m.name.split("/")[0] for m in t.getmembers()} == {os.path.basename(d)}


def test_a_directory_still_being_written_is_left(tmp_path, capsys):
    root = str(tmp_path / "results")
    dirs = make_results(root)
    old = os.path.getmtime(dirs["vmbench"]) - 7200
    for top, _, names in os.walk(root):
        for n in names:
            os.utime(os.path.join(top, n), (old, old))
    with open(os.path.join(dirs["profile"], "runs.jsonl"), "a") as f:
        f.write("{}\n")
    assert pack.main(["--root", root]) == 0
    out = capsys.readouterr().out
    assert "%s: left unpacked" % dirs["profile"] in out
    assert os.path.isdir(dirs["profile"]) and not os.path.exists(dirs["profile"] + ".tar.xz")
    assert not os.path.exists(dirs["vmbench"]) and os.path.isfile(dirs["vmbench"] + ".tar.xz")
    assert pack.check(root) == ["%s: not packed" % dirs["profile"]]


def test_citations_resolve_inside_an_archive(tmp_path, capsys):
    make_tree(tmp_path)
    res = str(tmp_path / "bench" / "results")
    # A raw file kept gzip'd and cited as FILE.gz: the archive holds FILE.
    p = os.path.join(res, "2026-01-02", "profile-b", "console.txt")
    with gzip.open(p + ".gz", "wt") as f:
        f.write("boot\n")
    with open(tmp_path / "bench" / "JOURNAL.md", "a") as f:
        f.write("\nThe console: bench/results/2026-01-02/profile-b/console.txt.gz.\n")
    assert citations.main(["--root", str(tmp_path)]) == 0, capsys.readouterr().out
    want = {(c.src, c.line, c.text) for c in citations.find(str(tmp_path))}
    assert len(want) >= 8
    assert pack.main(["--root", res, "--min-age", "0"]) == 0
    assert not os.path.isdir(os.path.join(res, "2026-01-02", "deaths-a"))
    rc = citations.main(["--root", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "0 missing" in out
    cites = citations.find(str(tmp_path))
    assert {(c.src, c.line, c.text) for c in cites} == want
    assert all(c.found for c in cites)
    # One cited file taken out of its archive is missing again.
    d = os.path.join(res, "2026-01-02", "deaths-a")
    pack.unpack(d)
    os.unlink(os.path.join(d, "testhost-failed-console.log"))
    pack.pack(d)
    rc = citations.main(["--root", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1 and "MISSING bench/JOURNAL.md:7: testhost-failed-console.log" in out, out


def test_glob_over_archives_is_globs_over_the_directories(tmp_path):
    root = str(tmp_path / "results")
    make_results(root)
    pats = ["**/*.json", "*/*/runs.jsonl", "*/*/logs/*", "arm64-peers-*/fio/r1-*", "**",
            "*/*", "2026-01-0[12]/*/meta.*", "*/profile-a/"]
    want = {p: sorted(__import__("glob").glob(os.path.join(root, p), recursive=True)) for p in pats}
    pack.main(["--root", root, "--min-age", "0"])
    for p in pats:
        got = sorted(results.glob(os.path.join(root, p), recursive=True))
        # The archives and their summaries are there beside the directories.
        got = [g for g in got if not g.endswith(".tar.xz")
               and not os.path.isfile(g[:-len(".md")] + ".tar.xz")]
        want_p = [w.replace(".log.gz", ".log") for w in want[p]]
        assert got == sorted(want_p), p
