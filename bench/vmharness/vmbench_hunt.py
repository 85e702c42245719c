"""bench/vmbench --hunt: the counter-example hunt of seed 003 ("find the
jobs where the new kernel loses"), for two configurations, A and B (the
first two: --scenario kernels A B, regress A B, or -c A -c B).

A hunt that measured many jobs once and reported the worst would report
noise: among 16 jobs that do not differ at all, the worst-looking one
looks several percent worse by chance (the winner's curse).  So it runs
in two stages, screen and confirm, each made of whole vmbench plans
(OUT/screen/SETTING, OUT/confirm/SETTING):

1. Screen: the machine settings (queues, vCPUs, the disk: file or RAM),
   in a seeded order, and in each a seeded random sample of the fio job
   space (block size, queue depth, fio jobs, read/write mix, from
   guest/jobs/randread-4k.fio as the template); 2 repeats of short runs,
   only to rank the jobs by B's IOPS over A's.  As many settings as
   the budget allows with a few jobs each, once the confirmation's
   worst case is set aside (one plan per setting: a guest boots per
   run, and a setting is what a boot fixes).
2. Confirm: the K jobs where B looked worst, over all settings, measured
   again on fresh runs (new guests, a new order, --repeats repeats,
   longer runs); only these runs give the figures reported, each with
   its 95% interval and paired t-test, and a job is a counter-example
   only where B is significantly worse there.  The screen's own ratios
   are listed beside them for what they are: the selection.

A setting the options give is not swept: --queues and --cpus (one value
pins it, a list sweeps those), the queues when a configuration names
queues=, and the disk when one names backend= or is not our VMM (QEMU's
disk is a file).  OUT/hunt.md has the
result, its sentences written from the confirmation's figures.
"""
import json
import os
import random
import time

from . import config, paths, results, vmbench
from .vmbench_base import Error, expand_list, positive, say

NAME = "hunt"
HELP = "the counter-example hunt (seed 003): where B loses to A, screened then confirmed"
COMMAND = False  # bench/vmbench --hunt (sweep.py)

# The job space sampled: fio options set on the template job.
SPACE = (
    ("bs", ("512", "4k", "16k", "64k")),
    ("iodepth", ("1", "4", "16", "64")),
    ("numjobs", ("1", "2", "4")),
    ("rw", ("randread", "randwrite", "read", "write", "randrw")),
)
TEMPLATE = "randread-4k"
# The machine settings swept where the options leave them open.
MACHINE = (("queues", ("1", "2")), ("vcpus", ("1", "2")), ("disk", ("file", "ram")))
SCREEN_REPEATS, SCREEN_RUNTIME = 2, 2
CONFIRM_RUNTIME, CONFIRM_REPEATS = 3, 5
CANDIDATES = 4
MIN_POINTS = 3  # jobs per screened setting, at least
# Seconds a plan takes beyond its runs (the test host's boot), a run
# beyond its fio phases (a guest's boot), and a job (fio's start and
# end), for sizing to the budget.  Measured in the test host with the
# small kernel: about 10 s a run; the stock kernel boots slower.
PLAN_OVERHEAD_S, RUN_OVERHEAD_S, JOB_OVERHEAD_S = 20, 20, 3


def space_size():
    n = 1
    for _, vals in SPACE:
        n *= len(vals)
    return n


def sample_points(seed, n):
    """N distinct jobs of SPACE, seeded: [(TEMPLATE, "bs=.. iodepth=.. ...")]."""
    rng = random.Random(seed)
    combos = [()]
    for key, vals in SPACE:
        combos = [c + ("%s=%s" % (key, v),) for c in combos for v in vals]
    return [(TEMPLATE, " ".join(c)) for c in rng.sample(combos, min(n, len(combos)))]


def machine_dims(o):
    """[(key, values)] of MACHINE as the options leave them: --queues and
    --cpus given are their lists; the disk is (None,), as configured, when
    a configuration names backend= or is not ours (Error on bad numbers)."""
    scenario = o.get("scenario")
    specs = o.get("cfgs") or (["vmm"] if scenario in ("kernels", "regress") else ["qemu", "vmm"])
    cfgs = [config.parse(sp, "vmbench") for sp in specs]
    dims = []
    for key, opt in (("queues", "queues"), ("vcpus", "cpus")):
        vals = tuple(dict.fromkeys(expand_list(o[opt]))) if o.get(opt) else dict(MACHINE)[key]
        if not vals or not all(positive(v) for v in vals):
            raise Error("--%s %s: positive numbers" % (opt, o[opt]))
        dims.append((key, vals))
    if any(c["opts"].get("queues") for c in cfgs):
        # A configuration's queues= is its own (the plan's --queues would
        # override it): the hunt does not sweep them.
        if o.get("queues"):
            raise Error("--hunt: --queues and a configuration's queues= both given")
        dims[0] = ("queues", (None,))
    ours = all(c["kind"] == "vmm" for c in cfgs) and not any("backend=" in sp for sp in specs)
    dims.append(("disk", dict(MACHINE)["disk"] if ours else (None,)))
    return dims


def settings(dims, seed):
    """Every combination of DIMS as a dict, in a seeded order."""
    combos = [{}]
    for key, vals in dims:
        combos = [dict(c, **{key: v}) for c in combos for v in vals]
    random.Random(seed).shuffle(combos)
    return combos


def setting_words(st):
    """"queues=1 vcpus=2 disk=ram" (a disk left as configured says nothing)."""
    return " ".join("%s=%s" % (k, st[k]) for k, _ in MACHINE if st.get(k) is not None)


def setting_dir(st):
    return setting_words(st).replace("=", "").replace(" ", "-") or "as-given"


def plan_cost(n, repeats, runtime, ncfg=2):
    return PLAN_OVERHEAD_S + repeats * ncfg * (RUN_OVERHEAD_S + n * (runtime + JOB_OVERHEAD_S))


def confirm_cost(ncfg=2):
    """The confirmation at its most: CANDIDATES settings, a job each."""
    return CANDIDATES * plan_cost(1, CONFIRM_REPEATS, CONFIRM_RUNTIME, ncfg)


def screen_size(budget_s, nsettings=1, ncfg=2):
    """(settings, jobs per setting) for a screen of what BUDGET_S leaves
    after confirm_cost: as many settings as fit with MIN_POINTS jobs each
    (at least one), then as many jobs as fit (at least CANDIDATES in all,
    at most 64 a setting)."""
    screen_s = budget_s - confirm_cost(ncfg)
    m = max(1, min(nsettings, int(screen_s // plan_cost(MIN_POINTS, SCREEN_REPEATS,
                                                       SCREEN_RUNTIME, ncfg))))
    runs = SCREEN_REPEATS * ncfg
    per_run = (screen_s / m - PLAN_OVERHEAD_S) / runs - RUN_OVERHEAD_S
    n = int(per_run // (SCREEN_RUNTIME + JOB_OVERHEAD_S))
    floor = max(MIN_POINTS if m > 1 else 1, -(-CANDIDATES // m))
    return m, max(floor, min(n, 64, space_size()))


def ratios(summary, a, b, figure="iops"):
    """From a plan's summary.json: {(params, dir): result of B vs A} for
    FIGURE (B's ratio to A, paired by repeat)."""
    out = {}
    for r in summary["results"]:
        if r["config"] == b and r["baseline"] == a and r["figure"] == figure:
            out[(r["params"], r["dir"])] = r
    return out


def candidates(screen, k=CANDIDATES):
    """The K jobs (params) where B's IOPS over A's was lowest in the
    screen (the worse direction of a mixed job counts); [(params,
    ratio)], worst first."""
    worst = {}
    for (params, _), r in screen.items():
        if r["ratio"] is None:
            continue
        if params not in worst or r["ratio"] < worst[params]:
            worst[params] = r["ratio"]
    return sorted(worst.items(), key=lambda x: x[1])[:k]


def sentence(r, a, b):
    """One confirmed job in words, from its ratio and interval."""
    lo, hi = r["ratio_ci95"]
    where = "%s (%s)" % (r["params"], r["dir"])
    if r["ratio"] is None or lo is None:
        return "%s: no interval (fewer than two pairs)" % where
    pct = lambda x: 100.0 * (1.0 - x)
    if r["worse"]:
        return "%s loses %.0f %% (%.0f-%.0f %%) at %s, p=%.3g" % (
            b, pct(r["ratio"]), pct(hi), pct(lo), where, r["p_paired"])
    if r["significant"]:
        return "%s gains %.0f %% (%.0f-%.0f %%) at %s, p=%.3g: not a counter-example" % (
            b, -pct(r["ratio"]), -pct(lo), -pct(hi), where, r["p_paired"])
    return "%s: %.2fx (%.2f-%.2f), not significant (p=%.2g): not confirmed" % (
        where, r["ratio"], lo, hi, r["p_paired"])


def report_md(a, b, screen, cands, confirm, repeats, covered=(), nsettings=1):
    where = ""
    if covered and any(covered):
        where = " in %d of %d settings (%s)" % (len(covered), nsettings, "; ".join(covered))
    lines = ["## Hunt: where %s loses to %s\n" % (b, a),
             "Screen: %d jobs%s, %d repeats of %d s each; confirmation: the %d worst, "
             "%s fresh repeats of %d s (bench/vmharness/vmbench_hunt.py has the method).\n"
             % (len({p for p, _ in screen}), where, SCREEN_REPEATS, SCREEN_RUNTIME,
                len(cands), repeats, CONFIRM_RUNTIME),
             "| job | screen %s/%s IOPS | confirmed %s/%s IOPS, 95%% CI | p | verdict |" % (b, a, b, a),
             "|---|---:|---|---:|---|"]
    losses = []
    for params, sr in cands:
        for (p, d), r in sorted(confirm.items()):
            if p != params:
                continue
            lo, hi = r["ratio_ci95"]
            ci = "%.2fx (%.2f-%.2f)" % (r["ratio"], lo, hi) if lo is not None else "-"
            verdict = ("**%s worse**" % b if r["worse"] else
                       "%s better" % b if r["significant"] else "not significant")
            lines.append("| %s (%s) | %.2fx | %s | %s | %s |" % (
                p, d, sr, ci, "%.3g" % r["p_paired"] if r["p_paired"] is not None else "-",
                verdict))
            if r["worse"]:
                losses.append(r)
    lines.append("")
    lines.append("In words (from the confirmation's figures):\n")
    for params, _ in cands:
        for (p, d), r in sorted(confirm.items()):
            if p == params:
                lines.append("- " + sentence(r, a, b) + ".")
    if not confirm:
        lines.append("- The confirmation gave no figures.")
    lines.append("")
    lines.append("Counter-examples confirmed: %d of %d candidates." % (
        len({r["params"] for r in losses}), len(cands)))
    return "\n".join(lines) + "\n"


def cut_short_md(a, b, screen, elapsed, budget):
    """hunt.md when the screen used the whole budget: what ran, and that
    nothing in it is a result."""
    lines = ["## Hunt: where %s loses to %s: CUT SHORT\n" % (b, a),
             "The screen (%d jobs) took %.0f s of the %d s budget, so no confirmation "
             "ran: the screen's ratios below only rank the jobs (2 short repeats, "
             "the worst of many), and none of them is a result.  Run again with a "
             "larger --budget.\n" % (len({p for p, _ in screen}), elapsed, budget)]
    for params, r in candidates(screen):
        lines.append("- screened, not confirmed: %s %.2fx" % (params, r))
    return "\n".join(lines) + "\n"


def screen_plan(o, budget, seed):
    """(every setting, the screen's [(setting, [params])]) for the options O."""
    every = settings(machine_dims(o), seed)
    m, n = screen_size(budget, len(every))
    return every, [(st, [p for _, p in sample_points(seed + i, n)])
                   for i, st in enumerate(every[:m])]


def job_name(st, params):
    """A job with its setting, as the report names it."""
    return ("%s %s" % (params, setting_words(st))).strip()


def run_stage(o, argv, prepare, run_plan, groups, out, seed, repeats, runtime, labels,
              spent=lambda: False):
    """One plan per setting: GROUPS is [(setting, [params])], until SPENT()
    says the budget is.  Returns {(job, dir): result of B vs A}, each
    result's params its job_name, and updates LABELS (the two
    configurations, the same in every plan)."""
    found = {}
    for i, (st, params) in enumerate(groups):
        if i and spent():
            say("hunt: the budget is spent; %d of %d settings screened" % (i, len(groups)))
            break
        s = dict(o, points=[(TEMPLATE, p) for p in params], repeats=str(repeats),
                 runtime=str(runtime), out=os.path.join(out, setting_dir(st)),
                 seed=str(seed + i), sweeps=[], queues=st.get("queues"), cpus=st["vcpus"],
                 backend=st.get("disk"))
        say("hunt: %s: %d jobs" % (setting_words(st) or "as configured", len(params)))
        d, where = prepare(s, argv)
        with open(os.path.join(d, "plan.json")) as f:
            got = [c["label"] for c in json.load(f)["cfgs"]]
        if len(got) != 2:
            raise Error("--hunt compares two configurations (A and B), not %d" % len(got))
        if labels and labels != got:
            raise Error("hunt: the configurations changed between plans (%s, %s)" % (labels, got))
        labels[:] = got
        run_plan(d, where)
        with open(os.path.join(d, "summary.json")) as f:
            for (params_, dr), r in ratios(json.load(f), *got).items():
                job = job_name(st, params_)
                found[(job, dr)] = dict(r, params=job)
    return found


def hunt(o, argv, prepare, run_plan, clock=time.time):
    """The two stages, each through vmbench's prepare and run_plan (given,
    so that this module stays free of the outer half's imports; the test
    gives its own, with synthetic figures).  Status 0, or 2 when the
    screen used the whole budget (OUT/hunt.md then says so)."""
    t0 = clock()
    base_out = os.path.abspath(o["out"] or os.path.join(
        paths.BUILD, "vmbench", "hunt-%s" % time.strftime("%Y%m%d-%H%M%S")))
    budget = int(o["budget"] or 3600)
    seed = int(o["seed"]) if o["seed"] else int(time.time())
    every, groups = screen_plan(o, budget, seed)
    say("hunt: screening %d of %d settings, %d of %d jobs in each (seed %d), budget %d s"
        % (len(groups), len(every), len(groups[0][1]), space_size(), seed, budget))
    labels = []
    screen = run_stage(o, argv, prepare, run_plan, groups, os.path.join(base_out, "screen"),
                       seed, SCREEN_REPEATS, SCREEN_RUNTIME, labels,
                       spent=lambda: clock() - t0 >= budget)
    a, b = labels
    cands = candidates(screen)
    if not cands:
        raise Error("hunt: the screen gave no ratios (see %s)" % os.path.join(base_out, "screen"))
    covered = [setting_words(st) for st, _ in groups]
    elapsed = clock() - t0
    if elapsed >= budget:
        md = cut_short_md(a, b, screen, elapsed, budget)
        with open(os.path.join(base_out, "hunt.md"), "w") as f:
            f.write(md)
        print(md)
        say("hunt: cut short: the screen took %.0f s of the %d s budget; nothing "
            "confirmed (%s)" % (elapsed, budget, os.path.join(base_out, "hunt.md")))
        return 2
    say("hunt: confirming %s" % "; ".join("%s (%.2fx)" % c for c in cands))
    repeats = (o["repeats"] if o["repeats"] and int(o["repeats"]) >= CONFIRM_REPEATS
               else str(CONFIRM_REPEATS))
    where = {job_name(st, p): (i, p) for i, (st, ps) in enumerate(groups) for p in ps}
    confirm_groups = []
    for job, _ in cands:
        i, p = where[job]
        for st, ps in confirm_groups:
            if st is groups[i][0]:
                ps.append(p)
                break
        else:
            confirm_groups.append((groups[i][0], [p]))
    confirm = run_stage(o, argv, prepare, run_plan, confirm_groups,
                        os.path.join(base_out, "confirm"), seed + 1000, repeats,
                        CONFIRM_RUNTIME, labels)
    md = report_md(a, b, screen, cands, confirm, repeats, covered, len(every))
    with open(os.path.join(base_out, "hunt.md"), "w") as f:
        f.write(md)
    print(md)
    return 0


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    """Its options, on the sweep's parser."""
    p.add_argument("--hunt", action="store_true",
                   help="the counter-example hunt (seed 003) for the first two "
                   "configurations: screen a seeded sample of settings (queues 1,2; vCPUs 1,2; "
                   "disk file, ram; --queues, --cpus or backend= pin them) and of jobs in each "
                   "(bs, iodepth, numjobs, rw) with 2 short repeats, then measure the %d where "
                   "B looked worst again on fresh runs (--repeats, at least %d) and report "
                   "those with their intervals (OUT/screen, OUT/confirm, OUT/hunt.md)"
                   % (CANDIDATES, CONFIRM_REPEATS))
    p.add_argument("--budget", metavar="S",
                   help="the hunt's time, about (default 3600); hw-check's (default 480)")


def check(args):
    """The sweep's options with --hunt (args.o, sweep.options)."""
    o = args.o
    if o["budget"] is not None and not positive(o["budget"]):
        raise Error("--budget %s: seconds, a positive number" % o["budget"])
    machine_dims(o)


def run(args):
    return hunt(args.o, args.argv, vmbench.prepare, vmbench.run_plan)


def is_result(out):
    return results.exists(os.path.join(out, "hunt.md"))


def analyse(out):
    """hunt.md as the hunt wrote it, and its plans (each a sweep's
    directory that `bench/vmbench analyse` redoes)."""
    with results.open(os.path.join(out, "hunt.md")) as f:
        text = f.read()
    plans = sorted(os.path.join(stage, d) for stage in ("screen", "confirm")
                   if results.isdir(os.path.join(out, stage))
                   for d in results.listdir(os.path.join(out, stage)))
    if plans:
        text += "\nIts plans (bench/vmbench analyse %s/PLAN): %s\n" % (out, ", ".join(plans))
    return text


def sections(entries):
    return []  # hunt.md and its JOURNAL entry say what it found
