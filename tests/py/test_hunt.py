"""bench/vmbench --hunt's pure parts (vmharness/vmbench_hunt.py): the
sample of the job space, its size for a budget, the candidates the
screen picks, and the report, whose verdicts come from the confirmation
alone."""
import os

import pytest

from vmharness import cli, sweep, vmbench, vmbench_hunt as h


def test_sample_is_seeded_distinct_and_inside_the_space():
    a = h.sample_points(7, 16)
    assert a == h.sample_points(7, 16) and a != h.sample_points(8, 16)
    assert len(set(a)) == 16 and all(j == h.TEMPLATE for j, _ in a)
    space = dict(h.SPACE)
    for _, params in a:
        kv = dict(w.split("=") for w in params.split())
        assert sorted(kv) == sorted(space)
        assert all(kv[k] in space[k] for k in kv)
    assert len(h.sample_points(1, 10 ** 6)) == h.space_size() == 4 * 4 * 3 * 5


def test_screen_size_follows_the_budget():
    m, n = h.screen_size(60, 8)
    assert (m, n) == (1, h.CANDIDATES)  # one setting, never fewer than the candidates
    for budget in (2400, 3600, 4800):
        m, n = h.screen_size(budget, 8)
        assert 1 <= m <= 8 and n >= h.MIN_POINTS
        # The screen, a plan per setting of 4 runs each, and the
        # confirmation at its most (4 settings) fit in the budget.
        assert m * h.plan_cost(n, h.SCREEN_REPEATS, h.SCREEN_RUNTIME) + h.confirm_cost() <= budget
    assert h.screen_size(1500, 8)[0] < h.screen_size(2400, 8)[0] <= h.screen_size(4800, 8)[0]
    assert h.screen_size(2400, 8)[1] < h.screen_size(4800, 8)[1]
    assert h.screen_size(10 ** 6, 8) == (8, 64)
    assert h.screen_size(10 ** 6, 1) == (1, 64)


def test_the_machine_settings_swept_unless_the_options_give_them():
    o = {"cfgs": ["vmm", "vmm:batch=on"], "queues": None, "cpus": None}
    assert h.machine_dims(o) == list(h.MACHINE)
    every = h.settings(h.machine_dims(o), 5)
    assert len(every) == 8 and len({h.setting_words(st) for st in every}) == 8
    assert every == h.settings(h.machine_dims(o), 5) != h.settings(h.machine_dims(o), 6)
    assert h.setting_words({"queues": "2", "vcpus": "1", "disk": "ram"}) == "queues=2 vcpus=1 disk=ram"
    assert h.setting_dir({"queues": "2", "vcpus": "1", "disk": None}) == "queues2-vcpus1"
    dims = dict(h.machine_dims(dict(o, queues="2", cpus="1,2,4")))
    assert dims == {"queues": ("2",), "vcpus": ("1", "2", "4"), "disk": ("file", "ram")}
    # The disk as configured: a backend= named, or a VMM that is not ours.
    assert dict(h.machine_dims(dict(o, cfgs=["vmm:backend=ram"], scenario="kernels")))["disk"] == (None,)
    assert dict(h.machine_dims(dict(o, cfgs=["qemu", "vmm"])))["disk"] == (None,)
    assert dict(h.machine_dims({"scenario": "kernels"}))["disk"] == ("file", "ram")
    with pytest.raises(vmbench.Error, match="--cpus"):
        h.machine_dims(dict(o, cpus="0"))
    with pytest.raises(vmbench.Error, match="--queues"):
        h.machine_dims(dict(o, queues=","))
    assert dict(h.machine_dims(dict(o, queues="1,2,1")))["queues"] == ("1", "2")
    # A configuration's own queues= is kept: not swept, and not with --queues.
    qs = dict(o, cfgs=["vmm:queues=1", "vmm:queues=2,name=B"])
    assert dict(h.machine_dims(qs))["queues"] == (None,)
    assert h.setting_words({"queues": None, "vcpus": "2", "disk": "ram"}) == "vcpus=2 disk=ram"
    with pytest.raises(vmbench.Error, match="queues= both"):
        h.machine_dims(dict(qs, queues="2"))


def res(params, d, ratio, lo=None, hi=None, p=None, sig=None, worse=None, b="B"):
    return {"config": b, "baseline": "A", "figure": "iops", "params": params, "dir": d,
            "ratio": ratio, "ratio_ci95": [lo, hi], "p_paired": p, "significant": sig,
            "worse": worse}


def test_candidates_are_the_worst_ratios_by_job():
    summary = {"results": [
        res("bs=4k rw=randread", "read", 0.98), res("bs=512 rw=randrw", "read", 1.05),
        res("bs=512 rw=randrw", "write", 0.70),  # a mixed job's worse direction
        res("bs=64k rw=write", "write", 0.90), res("bs=16k rw=read", "read", None),
        res("bs=4k rw=write", "write", 1.20),
        dict(res("bs=1k rw=read", "read", 0.1), figure="lat_mean_us"),  # not IOPS
        res("bs=2k rw=read", "read", 0.2, b="C")]}                      # not B
    got = h.candidates(h.ratios(summary, "A", "B"), k=3)
    assert got == [("bs=512 rw=randrw", 0.70), ("bs=64k rw=write", 0.90),
                   ("bs=4k rw=randread", 0.98)]


def test_the_verdict_is_the_confirmations_not_the_screens():
    cands = [("bs=512 rw=randwrite", 0.60), ("bs=4k rw=read", 0.80)]
    screen = {("bs=512 rw=randwrite", "write"): None, ("bs=4k rw=read", "read"): None}
    confirm = {
        ("bs=512 rw=randwrite", "write"): res("bs=512 rw=randwrite", "write", 0.88, 0.83, 0.93,
                                             0.002, True, True),
        ("bs=4k rw=read", "read"): res("bs=4k rw=read", "read", 0.97, 0.90, 1.05, 0.31,
                                       False, False)}
    md = h.report_md("A", "B", screen, cands, confirm, "5")
    assert "B loses 12 % (7-17 %) at bs=512 rw=randwrite (write), p=0.002" in md
    assert "bs=4k rw=read (read): 0.97x (0.90-1.05), not significant" in md
    assert "| bs=4k rw=read (read) | 0.80x | 0.97x (0.90-1.05) | 0.31 | not significant |" in md
    assert "Counter-examples confirmed: 1 of 2 candidates." in md
    better = res("x=1", "read", 1.10, 1.05, 1.15, 0.01, True, False)
    assert "B gains 10 % (5-15 %)" in h.sentence(better, "A", "B")
    assert "no interval" in h.sentence(res("x=1", "read", 1.0), "A", "B")


def test_hunt_option_and_its_budget():
    o = sweep.parse_args(["--scenario", "kernels", "a", "b", "--hunt", "--budget", "600"])
    assert o["hunt"] and o["budget"] == "600" and o["kernels"] == ["a", "b"]
    o = sweep.parse_args(["-c", "vmm", "-c", "vmm:batch=on"])
    assert not o["hunt"] and o["points"] is None
    with pytest.raises(SystemExit) as e:
        cli.main(["--scenario", "kernels", "a", "b", "--hunt", "--budget", "x"])
    assert e.value.code == 2


class Synthetic:
    """prepare and run_plan for vmbench_hunt.hunt with made-up figures:
    A's IOPS 1000 and B's 1000 x EFFECT[params] (default 1), each run
    with its own noise (log-normal, 5 %), through report.summarise's real
    statistics into summary.json, as vmbench's analysis writes it."""

    def __init__(self, tmp_path, effect, seed, seconds_per_stage=0.0):
        import random
        self.tmp, self.effect, self.rng = tmp_path, effect, random.Random(seed)
        self.t, self.per_stage, self.stages = 0.0, seconds_per_stage, []

    def clock(self):
        return self.t

    def prepare(self, o, argv):
        import json
        out = o["out"]
        os.makedirs(out, exist_ok=True)
        st = {"queues": o["queues"], "vcpus": o["cpus"], "disk": o["backend"]}
        with open(os.path.join(out, "plan.json"), "w") as f:
            json.dump({"cfgs": [{"label": "A"}, {"label": "B"}], "points": o["points"],
                       "repeats": int(o["repeats"]), "setting": st}, f)
        self.stages.append((o["points"], o["repeats"], st, out))
        return out, "host"

    def run_plan(self, out, where):
        import json
        import math
        from vmharness import report
        with open(os.path.join(out, "plan.json")) as f:
            p = json.load(f)
        samples = []
        for k, (job, params) in enumerate(p["points"]):
            for rep in range(1, p["repeats"] + 1):
                for c, label in enumerate("AB"):
                    effect = self.effect.get(h.job_name(p["setting"], params), 1.0)
                    v = 1000.0 * (effect if label == "B" else 1.0)
                    v *= math.exp(self.rng.gauss(0, 0.05))
                    samples.append({"run": "r%d-c%d" % (rep, c), "repeat": rep, "cfg": c,
                                    "config": label, "kind": "vmm", "queues": "1",
                                    "guests": 1, "point": str(k), "job": job,
                                    "params": params, "phase": job, "dir": "read",
                                    "figure": "iops", "value": v, "probe_ns": "-"})
        results = report.summarise({}, samples)
        with open(os.path.join(out, "summary.json"), "w") as f:
            json.dump({"results": [{k: v for k, v in r.items() if not k.startswith("_")}
                                   for r in results]}, f)
        self.t += self.per_stage
        return 0


def hunt_opts(tmp_path, budget="1200"):
    return {"out": str(tmp_path / "hunt"), "budget": budget, "seed": "11", "repeats": None,
            "cfgs": ["vmm", "vmm:batch=on"], "queues": None, "cpus": None}


def test_the_hunt_finds_a_planted_counter_example_and_only_it(tmp_path):
    o = hunt_opts(tmp_path, "2400")
    every, groups = h.screen_plan(o, 2400, 11)
    assert len(groups) > 2
    # One job in the third setting screened is worse; the same job in the
    # other settings is not.
    st, params = groups[2][0], groups[2][1][1]
    planted = h.job_name(st, params)
    syn = Synthetic(tmp_path, {planted: 0.8}, seed=1)
    assert h.hunt(o, [], syn.prepare, syn.run_plan, syn.clock) == 0
    md = (tmp_path / "hunt" / "hunt.md").read_text()
    assert "Counter-examples confirmed: 1 of 4 candidates." in md
    assert "B loses" in md and ("at %s (read)" % planted) in md
    assert "in %d of 8 settings" % len(groups) in md
    screens = [x for x in syn.stages if x[1] == "2"]
    confirms = [x for x in syn.stages if x[1] == "5"]
    # A plan per setting screened, each with its own jobs, queues, vCPUs and disk.
    assert [x[2] for x in screens] == [g[0] for g in groups]
    assert [[p for _, p in x[0]] for x in screens] == [g[1] for g in groups]
    assert all(x[3].endswith("/screen/" + h.setting_dir(x[2])) for x in screens)
    # The confirmation measured only the candidates, on fresh runs, in
    # their own settings; 4 jobs in all.
    confirmed = [h.job_name(x[2], p) for x in confirms for _, p in x[0]]
    assert len(confirmed) == 4 and planted in confirmed
    assert set(confirmed) <= {h.job_name(g[0], p) for g in groups for p in g[1]}
    assert all(x[3].endswith("/confirm/" + h.setting_dir(x[2])) for x in confirms)


def test_the_hunt_reports_none_where_there_is_none(tmp_path):
    syn = Synthetic(tmp_path, {}, seed=2)
    assert h.hunt(hunt_opts(tmp_path), [], syn.prepare, syn.run_plan, syn.clock) == 0
    md = (tmp_path / "hunt" / "hunt.md").read_text()
    assert "Counter-examples confirmed: 0 of 4 candidates." in md
    # The screen's worst look worse than they are; the confirmation says so.
    assert md.count("not confirmed") == 4


def test_a_hunt_that_ran_out_of_budget_says_how_far_it_got(tmp_path):
    o = hunt_opts(tmp_path, "2400")
    _, groups = h.screen_plan(o, 2400, 11)
    planted = h.job_name(groups[0][0], groups[0][1][0])
    syn = Synthetic(tmp_path, {planted: 0.8}, seed=3, seconds_per_stage=2500)
    assert h.hunt(o, [], syn.prepare, syn.run_plan, syn.clock) == 2
    md = (tmp_path / "hunt" / "hunt.md").read_text()
    assert "CUT SHORT" in md and "took 2500 s of the 2400 s budget" in md
    assert "none of them is a result" in md and "screened, not confirmed: " + planted in md
    assert len(groups) > 1 and len(syn.stages) == 1  # no more settings, no confirmation
    assert "Counter-examples confirmed" not in md


def test_the_disk_setting_reaches_our_vmms_configurations_only():
    # What the hunt gives check() as backend= (its plans' disk setting).
    o = sweep.parse_args(["-c", "vmm", "-c", "qemu", "-c", "vmm:batch=on", "--queues", "1"])
    o.update(where="auto", backend="ram")
    cfgs = vmbench.check(o)[0]
    assert [(c["kind"], c["backend"]) for c in cfgs] == [("vmm", "ram"), ("qemu", "file"),
                                                         ("vmm", "ram")]
    # Labels stay those of the configurations, the same in every setting.
    assert [c["label"] for c in cfgs] == ["vmm", "qemu", "vmm batch=on"]
