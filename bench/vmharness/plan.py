"""What every scenario's plan shares: configurations, the data disk, the
rounds of runs in a shuffled (seeded) order, resuming after a test host
that died, and OUT/runs.jsonl."""
import json
import os
import random
import subprocess
import time

from . import cmdlines, nullblk, results, testhost


def guest_extra(cfg):
    """A configuration's append=A+B option: more words for the guest
    kernel's command line (the words joined by '+', since ',' ends an
    option), for experiments such as append=nopv or append=no-kvmapf."""
    return " ".join(w for w in cfg["opts"].get("append", "").split("+") if w)


# The plan's null_blk device (--backing nullb), made in run_plan.
NULLB_NAME = "nullbvmh"


def data_disk(args, name):
    """The data disk every run gets: a file of args.disk_mb in
    args.disk_dir, its blocks allocated (not sparse), made once; with
    --backing nullb[:...], a null_blk device of that size instead, made
    anew and written once, opened with O_DIRECT by every VMM.  A test
    host that cannot make one stops the plan with one line (status 2),
    before any guest boots."""
    backing = nullblk.parse_spec(getattr(args, "backing", None))
    if backing["kind"] == "nullb":
        why = nullblk.unavailable()
        if why:
            print("vmbench: --backing %s: %s" % (args.backing, why), flush=True)
            raise SystemExit(2)
        dev = nullblk.filled(NULLB_NAME, args.disk_mb, backing, submit_queues=args.queues)
        return {"path": dev, "serial": "data", "direct": True, "backing": backing}
    path = os.path.join(args.disk_dir, name)
    if not (os.path.exists(path) and os.path.getsize(path) == args.disk_mb << 20):
        subprocess.run(["fallocate", "-l", "%dM" % args.disk_mb, path], check=True)
    return {"path": path, "serial": "data", "direct": cmdlines.direct_ok(path)}


def _read_lines(path):
    """The JSON objects of a .jsonl file, none if it is not there.  A torn
    last line (a test host that died while writing it) is left out."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [l for l in f if l.strip()]
    out = [json.loads(l) for l in lines[:-1]]
    try:
        out += [json.loads(l) for l in lines[-1:]]
    except ValueError:
        pass
    return out


def _append_line(path, obj):
    with open(path, "a") as f:
        f.write(json.dumps(obj) + "\n")


def load_runs(out_dir):
    """OUT_DIR's runs (runs.jsonl), OUT_DIR packed or not (results.py)."""
    return _read_lines(results.real(os.path.join(out_dir, "runs.jsonl")))


def record(out_dir, rec):
    _append_line(os.path.join(out_dir, "runs.jsonl"), rec)


def load_failures(out_dir):
    """The failed attempts of vmbench's sweep (record_failure)."""
    return _read_lines(results.real(os.path.join(out_dir, "failures.jsonl")))


def record_failure(out_dir, rec):
    """A failed attempt of a run that was tried again (vmbench's sweep)."""
    _append_line(os.path.join(out_dir, "failures.jsonl"), rec)


def set_in_flight(out_dir, run):
    """RUN (a dict: config, job, round) is about to start; None: no run
    is.  Read when a test-host boot ends early: the test host dies under
    one VMM's guest, and that is its VMM's share of the deaths."""
    path = os.path.join(out_dir, "in_flight.json")
    if run is None:
        if os.path.exists(path):
            os.unlink(path)
        return
    with open(path + ".tmp", "w") as f:
        json.dump(run, f)
    os.replace(path + ".tmp", path)


def record_testhost_end(out_dir, status):
    """A test-host boot that ended before its plan did, by STATUS (one of
    run_inside's): a lock-up (no sign of life, stopped), its time limit,
    or a death (a panic ends QEMU).
    The runs recorded so far say where in the plan it happened, and the
    run in flight (set_in_flight), if the plan says, which it was."""
    end = {"status": status, "kind": testhost_end_kind(status), "time": time.time(),
           "runs_before": len(load_runs(out_dir))}
    try:
        with open(os.path.join(out_dir, "in_flight.json")) as f:
            end["in_flight"] = json.load(f)
    except (OSError, ValueError):
        pass
    _append_line(os.path.join(out_dir, "testhost.jsonl"), end)


def testhost_end_kind(status):
    return {testhost.LOCKED_UP: "lock-up", testhost.TIMED_OUT: "time limit"}.get(status, "death")


def load_testhost_ends(out_dir):
    """The ends record_testhost_end wrote.  Those written before it kept a
    kind had status 124 for a lock-up: their boots had no time limit that
    a plan reached."""
    ends = _read_lines(os.path.join(out_dir, "testhost.jsonl"))
    for e in ends:
        e.setdefault("kind", "lock-up" if e["status"] == testhost.TIMED_OUT else "death")
    return ends


def rounds(cfgs, jobs, n, seed, done=()):
    """N rounds; in each, every configuration runs every job (those in its
    jobs=A+B option, if it has one) once, in an order shuffled with SEED.
    Yields (round, position, cfg, job), less the (round, config name,
    job) in DONE; the order is shuffled all the same, so a resumed plan
    keeps the order it started with."""
    rng = random.Random(seed)
    for rnd in range(n):
        order = [(c, j) for c in cfgs for j in jobs
                 if j in c["opts"].get("jobs", j).split("+")]
        rng.shuffle(order)
        for i, (cfg, job) in enumerate(order):
            if (rnd, cfg["name"], job) not in done:
                yield rnd, i, cfg, job
