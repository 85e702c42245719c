"""bench/citations.py: every citation of bench/results/ in the notebook,
the pages and the code's comments is there (a cited file may be there
as FILE.gz); and the harness reads the raw files kept gzip'd for an
analysis (the deaths report's kvm traces) as it read them plain."""
import gzip
import json
import os
import subprocess
import sys

import citations
from vmharness import deaths, kvmtrace

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def test_every_citation_in_the_checkout_is_there():
    res = subprocess.run([sys.executable, os.path.join(REPO, "bench", "citations.py")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 missing" in res.stdout
    # It did find the notebook's citations (a check that finds none passes
    # for nothing).
    cites = citations.find(os.path.abspath(REPO))
    assert len([c for c in cites if c.src == "bench/JOURNAL.md"]) > 100


JOURNAL = """# Notebook

## 2026-01-02 10:00 UTC: a series

- Data: bench/results/2026-01-02/deaths-a/ (runs.jsonl, the consoles
  of the deaths), and profile-b/ beside it; the test host's console in
  testhost-failed-console.log.  The panics in
  bench/results/*/*/vmbench-output.log; tables in
  bench/results/2026-01-02/{deaths-a,
  profile-b}/table.md.

## 2026-01-01 09:00 UTC: an older one

- Data: 2026-01-01/profile-c (table.md).
"""


def make_tree(root):
    """A checkout with a notebook whose every citation is there."""
    files = {
        "bench/JOURNAL.md": JOURNAL,
        "bench/results/2026-01-02/deaths-a/table.md": "t\n",
        "bench/results/2026-01-02/deaths-a/runs.jsonl": "\n".join(json.dumps(r) for r in (
            {"outcome": "clean", "log": "/x/logs/n000-vmm-verify.log"},
            {"outcome": "stall", "log": "/x/logs/n001-qemu-verify.log"})) + "\n",
        "bench/results/2026-01-02/deaths-a/logs/n001-qemu-verify.log": "console\n",
        "bench/results/2026-01-02/deaths-a/testhost-failed-console.log": "panic\n",
        "bench/results/2026-01-02/deaths-a/vmbench-output.log": "out\n",
        "bench/results/2026-01-02/profile-b/table.md": "t\n",
        "bench/results/2026-01-01/profile-c/table.md": "t\n",
        # a comment cites, a string does not
        "bench/tool.py": ('"""A tool (data: bench/results/2026-01-01/profile-c/)."""\n'
                          '# see bench/results/2026-01-02/profile-b/table.md\n'
                          'X = "bench/results/2026-09-09/not-a-citation/"\n'),
    }
    for name, text in files.items():
        p = os.path.join(root, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)


def check(root, capsys):
    rc = citations.main(["--root", str(root)])
    return rc, capsys.readouterr().out


def gzip_in_place(path):
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        g.write(f.read())
    os.unlink(path)


def test_a_tree_with_everything_cited_passes(tmp_path, capsys):
    make_tree(tmp_path)
    rc, out = check(tmp_path, capsys)
    assert rc == 0, out
    found = {(c.src, c.text) for c in citations.find(str(tmp_path))}
    assert ("bench/JOURNAL.md", "testhost-failed-console.log") in found
    assert ("bench/tool.py", "bench/results/2026-01-02/profile-b/table.md") in found
    assert not any("not-a-citation" in t for _, t in found)


def test_a_missing_cited_directory_fails(tmp_path, capsys):
    make_tree(tmp_path)
    d = tmp_path / "bench/results/2026-01-01/profile-c"
    for f in d.iterdir():
        f.unlink()
    d.rmdir()
    rc, out = check(tmp_path, capsys)
    assert rc == 1
    assert "MISSING bench/JOURNAL.md:14: 2026-01-01/profile-c" in out
    assert "MISSING bench/tool.py:1:" in out


def test_a_missing_cited_file_fails_and_its_gz_passes(tmp_path, capsys):
    make_tree(tmp_path)
    for name, line in (("deaths-a/logs/n001-qemu-verify.log", 5),   # in words
                       ("deaths-a/testhost-failed-console.log", 7),  # relative name
                       ("profile-b/table.md", 9)):                    # braces, 2 lines
        p = str(tmp_path / "bench/results/2026-01-02" / name)
        with open(p) as f:
            text = f.read()
        os.unlink(p)
        rc, out = check(tmp_path, capsys)
        assert rc == 1, name
        assert "MISSING bench/JOURNAL.md:%d:" % line in out, out
        with open(p + ".gz", "wb") as f:
            f.write(gzip.compress(text.encode()))
        rc, out = check(tmp_path, capsys)
        assert rc == 0, out
        assert "0 present as FILE.gz" not in out
        gz = [c for c in citations.find(str(tmp_path)) if c.how == "FILE.gz"]
        assert [(c.src, c.line) for c in gz if c.src.endswith(".md")] == [
            ("bench/JOURNAL.md", line)]
        os.unlink(p + ".gz")
        with open(p, "w") as f:
            f.write(text)


def test_a_glob_needs_one_match(tmp_path, capsys):
    make_tree(tmp_path)
    p = str(tmp_path / "bench/results/2026-01-02/deaths-a/vmbench-output.log")
    gzip_in_place(p)
    assert check(tmp_path, capsys)[0] == 0
    os.unlink(p + ".gz")
    rc, out = check(tmp_path, capsys)
    assert rc == 1
    assert "bench/results/*/*/vmbench-output.log" in out


EXIT = ("vcpu0-274 [000] ..... {ts:.6f}: kvm_exit: vcpu 0 reason {reason} rip 0x418c1a "
        "info1 0x0 info2 0x0 intr_info 0x80000023 error_code 0x00000000\n")


def test_the_deaths_report_reads_gzipped_traces_and_registers_alike(tmp_path):
    out = tmp_path / "out"
    (out / "logs").mkdir(parents=True)
    run = {"config": "vmm", "job": "verify", "outcome": "stall", "round": 3,
           "log": "/elsewhere/logs/n003-vmm-verify.log"}
    log = out / "logs" / "n003-vmm-verify.log"
    log.with_name(log.name + ".kvmtrace").write_text(
        EXIT.format(ts=1.0, reason="msr") + EXIT.format(ts=1.1, reason="shutdown"))
    log.with_name(log.name + ".vmm").write_text("vmm: vCPU 0: rip=0x1 cr3=0x23c4000\n")
    plain = deaths.death_notes(str(out), [run])
    assert len(plain) == 1 and "triple fault: vCPU 0" in plain[0] and "0x23c4000" in plain[0]
    for suffix in (".kvmtrace", ".vmm"):
        gzip_in_place(str(log) + suffix)
    assert not os.path.exists(str(log) + ".kvmtrace")
    assert kvmtrace.saved(str(log) + ".kvmtrace")
    assert deaths.death_notes(str(out), [run]) == plain
    os.unlink(str(log) + ".kvmtrace.gz")
    os.unlink(str(log) + ".vmm.gz")
    assert deaths.death_notes(str(out), [run]) == []
