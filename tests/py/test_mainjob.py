"""vmharness.mainjob (make run): the summary read from fio's JSON."""
from vmharness import mainjob, paths

DOC = {"jobs": [{"jobname": "randread-4k",
                 "read": {"iops": 12345.6, "bw_bytes": 50567024,
                          "clat_ns": {"mean": 2500.0, "percentile": {"99.000000": 8000}}},
                 "write": {"iops": 0}}]}


def test_one_line_per_job_and_direction_that_did_io():
    lines = mainjob.summary_lines("randread-4k", DOC)
    assert lines == ["randread-4k   read  IOPS   12346  BW    48.2 MiB/s  "
                     "latency mean      2.5 us, p99      8.0 us"]
    assert mainjob.summary_lines("x", {"jobs": [{"read": {}, "write": {}}]}) == []


def test_the_command_is_shown_relative_to_the_checkout():
    argv = [paths.REPO + "/build/vmm", "run", "-p", "console=ttyS0 quiet"]
    assert mainjob.shown(argv) == "build/vmm run -p 'console=ttyS0 quiet'"


def test_an_unknown_job_is_refused_before_anything_runs(tmp_path):
    import os
    import subprocess
    import sys
    cmd = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "vmbench")
    r = subprocess.run([sys.executable, cmd, "run", "-j", "nosuch", "-o", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "guest/jobs/nosuch.fio" in r.stderr
    assert not (tmp_path / "o").exists()
