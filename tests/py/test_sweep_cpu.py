"""The sweep's VMM CPU per request (issue 47 item 3): vmbench_run reads
each guest's VMM threads (counters.threads) just before a point's go and
when the guest says its fio is done, runs.jsonl keeps the deltas
(cpu_run_ns, cpu_guest_ns, cpu_by_kind), and report.py gives the VMM's
own CPU per request ((run - guest) / requests) and the requests per VMM
CPU-second beside IOPS, paired like the other figures; runs without the
fields (the host's fio, older runs) have no such figures."""
import json
import os
import re
import types

import pytest

from test_report import fio
from vmharness import plan, report, vmbench, vmbench_run
from vmharness.vmbench_base import add_meta

CPU = [key for key, _, _, _ in report.CPU_FIGURES]


def thread(kind, run_ns, guest_ns=0):
    return {"comm": kind, "kind": kind, "run_ns": run_ns, "wait_ns": 0,
            "guest_ns": guest_ns, "vcsw": 0, "ivcsw": 0}


def test_cpu_fields_are_the_deltas_over_the_window():
    before = {10: thread("main", 5000), 11: thread("vcpu", 9000, 4000),
              12: thread("iothread", 100)}
    after = {10: thread("main", 6000), 11: thread("vcpu", 19000, 10000),
             12: thread("iothread", 400), 13: thread("io-wq", 70)}  # 13 born in the window
    f = vmbench_run.cpu_fields(before, after)
    assert (f["cpu_run_ns"], f["cpu_guest_ns"]) == (1000 + 10000 + 300 + 70, 6000)
    assert {k: (v["run_ns"], v["guest_ns"], v["threads"]) for k, v in f["cpu_by_kind"].items()} == {
        "main": (1000, 0, 1), "vcpu": (10000, 6000, 1), "iothread": (300, 0, 1), "io-wq": (70, 0, 1)}
    # One end not read (the VMM never started, the guest never said its
    # fio was done): no fields at all, not zeros.
    assert vmbench_run.cpu_fields(None, after) == {} and vmbench_run.cpu_fields(before, {}) == {}


def test_a_guests_line_records_the_fields_of_its_vmm_only(tmp_path):
    """collect writes a guest's CPU fields into its own line; the
    host's fio (no VMM: nothing in run.cpu) gets none."""
    out = str(tmp_path)
    ctx = types.SimpleNamespace(out=out, probe_ns=None, pos=0)
    fields = {"cpu_run_ns": 7, "cpu_guest_ns": 3, "cpu_by_kind": {"vcpu": {"run_ns": 7}}}
    for c, kind in enumerate(("vmm", "host")):
        run = vmbench_run.Run(ctx, {"kind": kind, "label": kind}, c, os.path.join(out, kind),
                              2, "1", [(0, 0)])
        run.kernel = None
        if kind == "vmm":
            run.cpu = {(2, 0): fields, (1, 0): {}}
        vmbench_run.collect(run, "r1-c%d" % c, 1)
    lines = plan.load_runs(out)
    assert [(l["label"], l["guest"]) for l in lines] == [("vmm", 1), ("vmm", 2), ("host", 1), ("host", 2)]
    assert {k: lines[1][k] for k in fields} == fields
    assert not [k for l in (lines[0], lines[2], lines[3]) for k in l if k.startswith("cpu_")]


# A stand-in for the VMM: it plays the guest of vmbench_run's script
# (READY, waits for the go word on the control disk, "fio done", fio's
# JSON), burning its own CPU outside each point's window and inside it,
# and prints its own run time (/proc/$$/schedstat) at the window's ends.
FAKE_GUEST = r'''
for a in "$@"; do case "$a" in *serial=vmbctl*) c=${a%%,*};; esac; done
burn() { i=0; while [ $i -lt $1 ]; do i=$((i+1)); done; }
ran() { cut -d' ' -f1 /proc/$$/schedstat; }
point() {  # STEP POINT IN-WINDOW-ITERATIONS
	burn 200000
	echo "=== VMB READY $1 ==="
	until [ "$(dd if=$c bs=512 skip=2048 count=1 2>/dev/null | tr -d '\000' | head -n 1)" = "go $1" ]; do
		sleep 0.05
	done
	t0=$(ran)
	burn $3
	t1=$(ran)
	n0=$(ls "$READS" | wc -l)
	echo "vmbench: t=1.00 step $1 fio done"
	echo "truth $2 $t0 $t1"
	# until the harness has read the threads at "fio done" (it marks
	# each reading in $READS), at most 30 s
	i=0; while [ "$(ls "$READS" | wc -l)" -le "$n0" ] && [ $i -lt 600 ]; do
		sleep 0.05; i=$((i+1)); done
	burn 200000
	echo "=== FIO-JSON BEGIN p$2 ==="
	echo '{"jobs": [{"jobname": "randread-4k", "read": {"total_ios": 1000, "iops": 500.0, "bw": 2000, "clat_ns": {"mean": 2000.0}}}]}'
	echo "=== FIO-JSON END p$2 rc=0 ==="
}
point 0 2 15000
point 1 0 240000
point 2 1 60000
exit 0
'''


def fake_ctx(out):
    os.makedirs(os.path.join(out, "jobs"))
    for k in (0, 1, 2):
        with open(os.path.join(out, "jobs", "p%d.fio" % k), "w") as f:
            f.write("[randread-4k]\nrw=randread\n")
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump({"boot_timeout": 60, "step_timeout": 60, "mem": "256M", "cpus": 1,
                   "disk": "64M", "points": [{"job": "randread-4k", "params": ""}] * 3}, f)
    ctx = vmbench_run.Ctx(out)
    os.makedirs(ctx.ddir)
    return ctx


def test_the_window_is_from_the_go_to_fio_done(tmp_path, fake_vmm, monkeypatch):
    """The CPU burnt before the go and after "fio done" (200000 loops
    each) is left out; each point gets its own window (the steps run
    points 2, 0 and 1, with 15000, 240000 and 60000 loops)."""
    monkeypatch.delenv("TESTHOST", raising=False)
    reads = tmp_path / "reads"
    reads.mkdir()
    monkeypatch.setenv("READS", str(reads))
    real = vmbench_run.counters.threads

    def marked(pid):  # each reading leaves a file the fake guest waits for
        t = real(pid)
        (reads / str(len(list(reads.iterdir())))).touch()
        return t
    monkeypatch.setattr(vmbench_run.counters, "threads", marked)
    fake_vmm(FAKE_GUEST)
    out = str(tmp_path)
    ctx = fake_ctx(out)
    d = os.path.join(out, "raw", "r1")
    os.makedirs(d)
    run = vmbench_run.Run(ctx, vmbench.parse_config("vmm"), 0, d, 1, "1", [(0, 2), (1, 0), (2, 1)])
    assert vmbench_run.guest_run(run), open(os.path.join(d, "g1.log")).read()
    truth = {int(k): (int(b) - int(a)) for k, a, b in
             re.findall(r"truth (\d) (\d+) (\d+)", open(os.path.join(d, "g1.log")).read())}
    for k in (0, 1, 2):
        got = run.cpu[(1, k)]
        # The window's own burn, with room for the shell's polling and
        # forks at its ends and for a running thread's schedstat lagging
        # by up to a tick; never another point's (twice or half of it).
        assert truth[k] * 0.8 - 10e6 <= got["cpu_run_ns"] <= truth[k] * 1.25 + 5e6, (k, got, truth)
        assert got["cpu_guest_ns"] == 0 and got["cpu_by_kind"]["main"]["threads"] == 1
    assert truth[0] > 2 * truth[1] and truth[1] > 2 * truth[2]  # 4 times, give or take


# ---- the report ---------------------------------------------------------------

def sweep(out, runs, cfgs=("ours", "qemu", "host")):
    """RUNS: {(repeat, cfg): [(iops, cpu_run_ns, cpu_guest_ns) per guest]}
    (cpu None: the line has no CPU fields), written as the sweep writes
    them (vmbench_run.collect).  fio's total_ios is 3 x iops (test_report.fio)."""
    kinds = {"ours": "vmm", "qemu": "qemu", "host": "host"}
    cfgs = [{"kind": kinds[c], "label": c, "queues": ""} for c in cfgs]
    repeats = max(r for r, _ in runs)
    glist = sorted({str(len(g)) for g in runs.values()})
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump({"cfgs": cfgs, "qlist": [""], "glist": glist, "repeats": repeats,
                   "seed": 7, "cpus": 1, "points": [{"job": "randread-4k", "params": ""}]}, f)
    add_meta(out, title="t", repeats=repeats)
    ctx = types.SimpleNamespace(out=out, probe_ns=None, pos=0)
    for (rep, c), guests in sorted(runs.items()):
        ident = "r%d-c%d" % (rep, c)
        d = os.path.join(out, "raw", ident)
        os.makedirs(d)
        q = "-" if cfgs[c]["kind"] == "host" else "1"
        run = vmbench_run.Run(ctx, cfgs[c], c, d, len(guests), q, [(0, 0)])
        run.kernel = None
        for g, (iops, run_ns, guest_ns) in enumerate(guests, 1):
            with open(os.path.join(d, "g%d-p0.json" % g), "w") as f:
                json.dump(fio(iops, 100.0), f)
            with open(os.path.join(d, "g%d-p0.rc" % g), "w") as f:
                f.write("0\n")
            if run_ns is not None:
                run.cpu[(g, 0)] = {"cpu_run_ns": run_ns, "cpu_guest_ns": guest_ns}
        vmbench_run.collect(run, ident, rep)


def results_of(out):
    assert vmbench.analyse(out) == 0
    with open(os.path.join(out, "summary.json")) as f:
        res = json.load(f)["results"]
    return {(r["config"], r["figure"]): r for r in res}


def test_the_vmms_own_cpu_per_request_paired_like_iops(tmp_path):
    """ours: 1000 IOPS (3000 requests) in repeat 1, 9 ms on a CPU of
    which 3 ms in the guest: 6 ms own, 2 us a request, 500,000 requests
    per CPU-second, the same per request in repeats 2 and 3 at 2 and 3
    times the rate; qemu: 3, 3.3 and 2.7 times ours per request."""
    out = str(tmp_path)
    ratios = {1: 3.0, 2: 3.3, 3: 2.7}
    sweep(out, {(rep, c): [v] for rep in (1, 2, 3) for c, v in (
        (0, (1000.0 * rep, 9e6 * rep, 3e6 * rep)),
        (1, (1000.0 * rep, (6e6 * ratios[rep] + 3e6) * rep, 3e6 * rep)),
        (2, (5000.0, None, None)))})
    add_meta(out, regress=["ours", "qemu"])
    res = results_of(out)
    ours, qemu = res[("ours", "vmm_cpu_us")], res[("qemu", "vmm_cpu_us")]
    assert ours["values"] == pytest.approx([2.0] * 3) and ours["mean"] == pytest.approx(2.0)
    assert (ours["phase"], ours["dir"]) == ("", "")  # the whole point's
    assert res[("ours", "ios_per_vmm_cpu_s")]["values"] == pytest.approx([500000.0] * 3)
    assert qemu["baseline"] == "ours" and qemu["pairs"] == 3
    assert qemu["values"] == pytest.approx([6.0, 6.6, 5.4])
    assert qemu["ratio"] == pytest.approx((3.0 * 3.3 * 2.7) ** (1 / 3.0)) and qemu["worse"] is True
    assert res[("qemu", "ios_per_vmm_cpu_s")]["ratio"] == pytest.approx(1 / qemu["ratio"])
    assert not [k for k in res if k[0] == "host" and k[1] in CPU]
    md = open(os.path.join(out, "table.md")).read()
    hdr = next(l for l in md.splitlines() if l.startswith("| config |"))
    assert "| IOPS vs baseline | VMM CPU (us/req) | VMM CPU vs baseline | req per VMM CPU-s |" in hdr
    row = next(l for l in md.splitlines() if l.startswith("| qemu |")).split(" | ")
    assert row[6] == "6.00 ± 0.60" and row[7].startswith("2.99x [") and row[7].endswith("**sig**")
    assert row[8] == "167,789 ± 16,863"
    assert next(l for l in md.splitlines() if l.startswith("| host |")).split(" | ")[6:9] == ["-"] * 3
    assert "- randread-4k (the whole point), VMM CPU: ours 2.00, qemu 6.00: 2.99x [" in md
    samples = open(os.path.join(out, "samples.csv")).read()
    assert "r1-c0,1,ours,vmm,1,1,randread-4k,,,,vmm_cpu_us,2.0," in samples


def test_guests_of_a_run_are_summed_before_dividing(tmp_path):
    """Two guests: own CPU summed over both, over both guests' requests
    (not the mean of the guests' figures); a negative own CPU (guest_time
    counts in ticks) gives a CPU per request and no requests per
    CPU-second."""
    out = str(tmp_path)
    sweep(out, {(1, 0): [(1000.0, 4e6, 1e6), (3000.0, 5e6, 0.0)],
                (2, 0): [(1000.0, 1e6, 2e6), (1000.0, 1e6, 1e6)]}, cfgs=("ours",))
    res = results_of(out)
    assert res[("ours", "vmm_cpu_us")]["values"] == pytest.approx([8e3 / 12000, -1e3 / 6000])
    assert res[("ours", "ios_per_vmm_cpu_s")]["values"] == pytest.approx([12000 / 8e-3])


def test_runs_without_the_fields_have_no_cpu_figures(tmp_path):
    """Records made before the fields (and a run where one guest's VMM
    was not read) analyse as before: no CPU figure, no CPU column."""
    out = str(tmp_path)
    none = (1000.0, None, None)
    sweep(out, {(1, 0): [none, none], (1, 1): [none, none],
                (2, 0): [(1000.0, 4e6, 1e6), none], (2, 1): [none, none]}, cfgs=("ours", "qemu"))
    res = results_of(out)
    assert not [k for k in res if k[1] in CPU]
    assert res[("qemu", "iops")]["pairs"] == 2
    md = open(os.path.join(out, "table.md")).read()
    assert "VMM CPU" not in md and "| ours |" in md
    runs = report.load(out)[3]
    assert runs[("r2-c0", 0)]["cpu"] == {1: (4e6, 1e6), 2: None}
