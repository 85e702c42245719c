"""The sweep's VMM CPU per request (issue 47 item 3): vmbench_run reads
each guest's VMM threads (counters.threads) just before a point's go and
when the guest says its fio is done, and runs.jsonl keeps the deltas
(cpu_run_ns, cpu_guest_ns, cpu_by_kind); the host's fio has none."""
import json
import os
import re
import types

from vmharness import plan, vmbench, vmbench_run


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
	echo "vmbench: t=1.00 step $1 fio done"
	echo "truth $2 $t0 $t1"
	sleep 1  # the harness reads the threads at "fio done" meanwhile
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

