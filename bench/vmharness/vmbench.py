"""bench/vmbench: fio jobs from guest/jobs/ in Linux guests under a list of
storage configurations, compared with statistics (bench/README.md).

Layout of one invocation:
  options (sweep.py: the sweep scenario, argparse through the registry)
  outer  (this machine, this module): check the options, build the plan
         (configurations x queue counts x guest counts x fio points, R
         interleaved repeats, each repeat in its own shuffled order), write
         it to OUT/plan.json and the fio job files to OUT/jobs/, decide
         where guests can run (vmm probe), then run the inner part here or
         inside the test host (testhost.run_inside: one boot for the whole
         plan, under /tmp/testhost.lock, booted again if it dies), then
         analyse with vmharness/report.py.
  inner  (vmbench_run: where KVM runs standard guests) boots the guests,
         releases the fio points with a barrier, saves every fio JSON.
"""
import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from . import config, kernels, nullblk, paths, testhost
from .vmbench_base import (Error, add_meta, expand_list, git, hms, machine_line, positive,
                           read_meta, rewrite_job, run_order, run_queues, say, self_path,
                           size_mb)

JOBS_DIR = os.path.join(paths.REPO, "guest", "jobs")

# ---- pure helpers (tests/py/test_vmbench.py) --------------------------------


DEFAULTS = {"name": "", "queues": "", "batch": "", "poll": "", "backend": "file",
            "direct": "auto", "bin": "", "iothread": "on", "aio": "io_uring", "cache": "auto",
            "kernel": "", "modules": ""}


def parse_config(spec):
    """vmm[:OPT,...], qemu[:OPT,...] or host[:name=L] (config.parse, its
    "vmbench" table) as the plan's record: kind, every option (DEFAULTS
    filled in) and label; config.ConfigError on a bad spec."""
    p = config.parse(spec, "vmbench")
    c = dict(DEFAULTS, kind=p["kind"], name=p["name"], **p["opts"])
    c["label"] = c["name"] or label_of(c)
    if re.search(r"[\t,;\"]", c["label"]):
        raise config.ConfigError("configuration label '%s': no tabs, commas, semicolons "
                                 "or quotes" % c["label"])
    return c


def label_of(c):
    words = [c["kind"]]
    for k, plain in (("batch", ""), ("poll", "")):
        if c[k] != plain:
            words.append("%s=%s" % (k, c[k]))
    if c["backend"] != "file":
        words.append(c["backend"])
    if c["direct"] != "auto":
        words.append("direct=" + c["direct"])
    if c["queues"]:
        words.append("q" + c["queues"])
    if c["iothread"] != "on":
        words.append("no-iothread")
    for k, plain in (("aio", "io_uring"), ("cache", "auto")):
        if c[k] != plain:
            words.append("%s=%s" % (k, c[k]))
    if c["bin"]:
        words.append(os.path.basename(os.path.dirname(os.path.dirname(c["bin"]))))
    if c["kernel"]:
        words.append("kernel=" + os.path.basename(c["kernel"]))
    return " ".join(words)


def fio_points(jobs, sweeps):
    """jobs x every sweep (cartesian): [(job, "k=v k2=v2")]."""
    points = [(j, []) for j in jobs]
    for sw in sweeps:
        k, eq, vals = sw.partition("=")
        if not eq or not k or not vals:
            raise Error("sweep '%s': KEY=V1,V2,..." % sw)
        points = [(j, ps + ["%s=%s" % (k, v)]) for j, ps in points for v in vals.split(",") if v]
    return [(j, " ".join(ps)) for j, ps in points]


# ---- the presets of --scenario (sweep.py parses the options) ------------------

# Each preset's defaults: what the options leave open.
PRESETS = {
    "plug": {"cfgs": ["vmm:backend=ram,batch=on,queues=1,name=batch=on",
                      "vmm:backend=ram,batch=off,queues=1,name=batch=off"],
             "jobs": "seed-virtio-blk", "d_sets": ["numjobs=32", "time_based=1"],
             "runtime": "3", "cpus": "1"},
    "peers": {"cfgs": ["qemu", "vmm", "host"], "jobs": "randread-4k,randwrite-4k",
              "queues": "1,2", "runtime": "3"},
    "scaling": {"cfgs": ["qemu", "vmm"], "jobs": "randread-4k", "guests": "1-4",
                "queues": "1", "cpus": "1", "runtime": "3"},
    "regress": {"jobs": "randread-4k,randwrite-4k,seq-read,seq-write", "runtime": "3"},
    "kernels": {"cfgs": ["vmm"], "jobs": "randread-4k,randwrite-4k,seq-read,seq-write",
                "runtime": "3"},
}


def parse_backing(spec):
    """--backing SPEC as the plan's "backing" (nullblk.parse_spec), an
    Error here, before anything boots."""
    try:
        return nullblk.parse_spec(spec)
    except ValueError as e:
        raise Error(str(e))


def apply_defaults(o):
    """The scenario's defaults for what the options left open, then the
    general ones.  Returns the fio overrides every job gets."""
    sc = o["scenario"]
    if sc is not None and sc not in PRESETS:
        raise Error("unknown scenario '%s' (%s, hw-check)" % (sc, ", ".join(PRESETS)))
    d = PRESETS.get(sc, {})
    if not o["cfgs"]:
        o["cfgs"] = list(d.get("cfgs", ["qemu", "vmm"]))
    for k in ("jobs", "queues", "guests", "cpus", "runtime"):
        if o[k] is None:
            o[k] = d.get(k)
    for k, v in (("jobs", "randread-4k"), ("repeats", "3"), ("cpus", "2"), ("mem", "512M"),
                 ("disk", "512M"), ("boot_timeout", "300"), ("kernel", "stock")):
        if o[k] is None:
            o[k] = v
    if o["kernel"] not in paths.KERNELS:
        raise Error("--kernel %s: one of %s" % (o["kernel"], ", ".join(paths.KERNELS)))
    parse_backing(o["backing"])  # refused before anything boots
    for k in ("repeats", "cpus", "boot_timeout"):
        if not positive(o[k]):
            raise Error("--%s %s" % (k.replace("_", "-"), o[k]))
    if o["runtime"] is not None and not positive(o["runtime"]):
        raise Error("--runtime %s" % o["runtime"])
    sets = list(d.get("d_sets", [])) + o["sets"]
    if o["runtime"]:
        sets.append("runtime=" + o["runtime"])
    for w in sets:
        if "=" not in w:
            raise Error("--set %s: KEY=VALUE" % w)
    return sets


# ---- regress ----------------------------------------------------------------


def regress_build(rev):
    """The path of a build of REV's build/vmm, made in a git worktree
    under build/regress/ ("work": this tree's build/vmm)."""
    if rev == "work":
        if not os.access(paths.VMM_BIN, os.X_OK):
            raise Error("regress: no build/vmm in the working tree (make first)")
        return paths.VMM_BIN
    sha = git("rev-parse", "--verify", "-q", rev + "^{commit}")
    if not sha:
        raise Error("regress: unknown revision '%s'" % rev)
    wt = os.path.join(paths.BUILD, "regress", sha[:12])
    if not os.path.exists(os.path.join(wt, ".git")):
        os.makedirs(os.path.dirname(wt), exist_ok=True)
        if subprocess.run(["git", "-C", paths.REPO, "worktree", "add", "--detach", wt, sha],
                          stdout=sys.stderr).returncode:
            raise Error("regress: git worktree add %s failed" % wt)
    say("regress: building %s (%s) in %s" % (rev, sha[:12], os.path.relpath(wt, paths.REPO)))
    with open(wt + ".make.log", "w") as log:
        r = subprocess.run(["make", "-C", wt, "-j%d" % os.cpu_count(), "WERROR=", "build/vmm"],
                           stdout=log, stderr=subprocess.STDOUT)
    if r.returncode:
        with open(wt + ".make.log") as f:
            sys.stderr.write("".join(f.readlines()[-20:]))
        raise Error("regress: build of %s failed (log: %s.make.log)" % (rev, wt))
    return os.path.join(wt, "build", "vmm")


def regress_name(rev):
    if rev == "work":
        return "work@" + (git("describe", "--always", "--dirty") or "?")
    return "%s@%s" % (rev, git("rev-parse", "--short=8", rev + "^{commit}") or "?")


# ---- kernels ----------------------------------------------------------------


def kernel_specs(words):
    """--scenario kernels' words ([NAME=]PATH[,modules=DIR]) as [(name,
    path, modules)]: the name defaults to the file's name."""
    out = []
    for w in words:
        w, _, more = w.partition(",")
        modules = ""
        if more:
            if not more.startswith("modules=") or "," in more or more == "modules=":
                raise Error("kernels: '%s': [NAME=]PATH[,modules=DIR]" % (w + "," + more))
            modules = more[len("modules="):]
        name, eq, path = w.partition("=")
        if not eq or "/" in name:
            name, path = os.path.basename(w), w
        if not name or re.search(r"[\s,;\"=:]", name):
            raise Error("kernels: bad name '%s' (NAME=PATH; no spaces, commas, "
                        "semicolons, quotes, = or :)" % name)
        if name in [n for n, _, _ in out]:
            raise Error("kernels: two kernels named '%s' (NAME=PATH names them)" % name)
        out.append((name, path, modules))
    return out


def kernel_configs(o):
    """--scenario kernels: one configuration per kernel, each the one -c
    (default vmm) with kernel=PATH and the kernel's name."""
    if len(o["cfgs"]) > 1:
        raise Error("kernels: at most one -c: the configuration every kernel runs "
                    "under (default vmm)")
    base = o["cfgs"][0] if o["cfgs"] else "vmm"
    b = parse_config(base)
    if b["kernel"] or b["name"] or b["kind"] == "host":
        raise Error("kernels: -c %s: a vmm or qemu configuration without kernel= "
                    "or name=" % base)
    sep = "," if ":" in base else ":"
    return ["%s%skernel=%s,name=%s%s" % (base, sep, path, name,
                                         ",modules=" + mods if mods else "")
            for name, path, mods in kernel_specs(o["kernels"])]


def check_kernel(c):
    """A configuration's kernel= (and modules=): a bzImage or vmlinux
    that says its release (QEMU boots a vmlinux through its PVH note)."""
    try:
        fmt, rel = kernels.describe(c["kernel"])
        if c["modules"]:
            kernels.modules_dir(c["modules"], rel)
    except kernels.KernelError as e:
        raise Error(str(e))
    return fmt, rel


def copy_kernels(out, cfgs):
    """Each configuration's own kernel, copied to OUT/kernels (as the
    binaries are) with its sha256 and release in the plan, and the initrd
    that carries its modules=.  Returns "label=release sha256" words."""
    words = []
    for i, c in enumerate(cfgs):
        if not c["kernel"]:
            continue
        os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
        dst = os.path.join(out, "kernels", "c%d-%s" % (i, os.path.basename(c["kernel"])))
        shutil.copy2(c["kernel"], dst)
        # check() read the given file; the plan records the copy that runs.
        fmt, rel = check_kernel(dict(c, kernel=dst))
        c.update(kernel=dst, kernel_format=fmt, kernel_release=rel,
                 kernel_sha256=kernels.sha256(dst))
        if c["modules"]:
            try:
                c["initrd"] = kernels.make_initrd(
                    c["modules"], rel, os.path.join(out, "kernels", "c%d-initrd.img" % i))
            except kernels.KernelError as e:
                raise Error(str(e))
        words.append("%s=%s %s" % (c["label"], rel, c["kernel_sha256"][:12]))
    return words


# ---- the outer half ---------------------------------------------------------

def sha12(path):
    import hashlib
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:12]
    except OSError:
        return ""


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def check(o):
    """The options, checked (Error: nothing is created), with the
    scenario's defaults: (configurations, queue list, guest list, fio
    points, fio overrides, regress names or None)."""
    given = bool(o["cfgs"])
    sets = apply_defaults(o)
    qlist = expand_list(o["queues"]) if o["queues"] else [""]
    glist = expand_list(o["guests"]) if o["guests"] else ["1"]
    for w in qlist + glist:
        if w and not positive(w):
            raise Error("bad number '%s' in --queues/--guests" % w)
    jobs = [j for j in o["jobs"].split(",") if j]
    have = sorted(f[:-4] for f in os.listdir(JOBS_DIR) if f.endswith(".fio"))
    for j in jobs:
        if j not in have:
            raise Error("no job guest/jobs/%s.fio (have: %s)" % (j, " ".join(have)))
    # The hunt gives its own jobs (vmbench_hunt.sample_points).
    points = o["points"] or fio_points(jobs, o["sweeps"])
    if o["where"] not in ("auto", "host", "testhost"):
        raise Error("--where must be auto, host or testhost")
    if o["seed"] is not None and not re.fullmatch(r"[0-9]+", o["seed"]):
        raise Error("--seed %s" % o["seed"])
    size_mb(o["mem"]), size_mb(o["disk"])
    # Last: a regress run builds both revisions, which must not happen
    # for options that are wrong anyway.
    for spec in o["cfgs"] if given else ():
        parse_config(spec)
    reg = None
    if o["scenario"] == "kernels":
        o["cfgs"] = kernel_configs(o)
        reg = tuple(n for n, _, _ in kernel_specs(o["kernels"]))
    if o["scenario"] == "regress":
        na, nb = (regress_name(r) for r in o["regress"])
        reg = ("A:" + na, "B:" + nb)
        if na == nb:
            raise Error("regress: A and B are the same build")
        ba, bb = (regress_build(r) for r in o["regress"])
        if not given:
            o["cfgs"] = ["vmm:bin=%s,name=%s" % (ba, reg[0]), "vmm:bin=%s,name=%s" % (bb, reg[1])]
    cfgs = [parse_config(s) for s in o["cfgs"]]
    if o.get("backend"):  # the hunt's disk setting, for our VMM's configurations
        for c in cfgs:
            if c["kind"] == "vmm":
                c["backend"] = o["backend"]
    labels = [c["label"] for c in cfgs]
    for i, l in enumerate(labels):
        if l in labels[:i]:
            raise Error("two configurations named '%s' (add name=...)" % l)
    for c in cfgs:
        b = c["bin"] or paths.VMM_BIN
        if c["kind"] == "vmm" and not os.access(b, os.X_OK):
            raise Error("no VMM binary %s (make it first)" % b)
        if c["kernel"]:
            check_kernel(c)
    return cfgs, qlist, glist, points, sets, reg


def write_jobs(out, points, sets):
    """OUT/jobs/pK.fio: point K of the plan (plan.json's points)."""
    os.makedirs(os.path.join(out, "jobs"))
    for i, (j, ps) in enumerate(points):
        with open(os.path.join(JOBS_DIR, j + ".fio")) as f:
            text = rewrite_job(f.read(), ps.split() + sets)
        with open(os.path.join(out, "jobs", "p%d.fio" % i), "w") as f:
            f.write(text)


def copy_binaries(out, cfgs):
    """Our VMM's binaries, copied to OUT/bin: others may rebuild build/vmm
    while this runs, and every run of a configuration must use the same
    binary.  Returns their "label=sha256" words."""
    os.makedirs(os.path.join(out, "bin"))
    sums = []
    for i, c in enumerate(cfgs):
        if c["kind"] != "vmm":
            continue
        dst = os.path.join(out, "bin", "vmm.%d" % i)
        shutil.copy2(c["bin"] or paths.VMM_BIN, dst)
        c["bin"] = dst
        sums.append("%s=%s" % (c["label"], sha12(dst)))
    return sums


def prepare(o, argv):
    """Everything before the runs: checks (Error, nothing created), then
    OUT with plan.json, jobs/, bin/ and meta.json.  Returns
    (OUT, where)."""
    cfgs, qlist, glist, points, sets, reg = check(o)
    labels = [c["label"] for c in cfgs]
    seed = int(o["seed"]) if o["seed"] else int(time.time())
    name = o["scenario"] or "custom"
    out = os.path.abspath(o["out"] or os.path.join(
        paths.BUILD, "vmbench", "%s-%s" % (name, time.strftime("%Y%m%d-%H%M%S"))))
    if re.search(r"[\s,]", out):
        raise Error("output directory must not contain spaces or commas: %s" % out)
    os.makedirs(out, exist_ok=True)
    for p in ("raw", "jobs", "bin", "kernels", "plots", ".testhost"):
        shutil.rmtree(os.path.join(out, p), ignore_errors=True)
    for p in os.listdir(out):
        if p in ("runs.jsonl", "meta.json", "failures.jsonl", "plan.json",
                 ".inner-done", "heartbeat") or p.startswith("testhost-failed."):
            os.remove(os.path.join(out, p))
    write_jobs(out, points, sets)
    sums = copy_binaries(out, cfgs)
    kwords = copy_kernels(out, cfgs)
    runtime = o["runtime"]
    plan_ = {"cfgs": cfgs, "qlist": qlist, "glist": glist,
             "points": [{"job": j, "params": ps} for j, ps in points],
             "repeats": int(o["repeats"]), "cpus": int(o["cpus"]), "mem": o["mem"],
             "kernel": o["kernel"],
             "disk": o["disk"], "boot_timeout": int(o["boot_timeout"]),
             "backing": parse_backing(o["backing"]),
             "step_timeout": int(runtime or 60) * 8 + 120, "sets": sets, "seed": seed,
             "made": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump(plan_, f, indent=1)

    nruns = plan_["repeats"] * len(glist) * len(qlist) * len(cfgs)
    say("%s: %d configuration(s) [%s], %d fio point(s), queues [%s], guests [%s], R=%s: %d runs"
        % (name, len(cfgs), " ".join(labels), len(points), " ".join(q for q in qlist if q)
           or "per config", " ".join(glist), o["repeats"], nruns))
    say("results: %s" % os.path.relpath(out, paths.REPO))
    guests = any(c["kind"] != "host" for c in cfgs)
    if guests and subprocess.run([os.path.join(paths.REPO, "guest", "build.sh")],
                                 stdout=sys.stderr).returncode:
        raise Error("guest/build.sh failed")
    if not os.access(paths.VMM_BIN, os.X_OK):
        raise Error("build/vmm missing (make)")
    prc, pout, _ = testhost.probe()
    say("vmm probe: %s" % pout)
    where = o["where"]
    if where == "auto":
        where = "host" if prc == 0 or not guests else "testhost"
    fio_ver = os.path.join(paths.GUEST, "cache", "fio.version")
    meta = {
        "command": "bench/vmbench" + "".join(" " + shlex.quote(a) for a in argv),
        "scenario": name, "title": o["title"] or "vmbench " + name,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_line(), "kernel": "%s %s" % (os.uname().sysname, os.uname().release),
        "kvmprobe": pout, "where": where,
        "git": git("describe", "--always", "--dirty") or "unknown",
        "repeats": int(o["repeats"]),
        "guest": "%s vCPU, %s RAM, %s data disk per guest" % (o["cpus"], o["mem"], o["disk"]),
        "backing": o["backing"] or "file",
        "fio_sets": " ".join(sets) or "none",
        "queues_swept": bool(o["queues"]),
        "order_seed": seed}
    if sums:
        meta["vmm_sha256"] = " ".join(sums)
    if kwords:
        meta["kernels"] = "; ".join(kwords)
    meta["guest_sha256"] = guest_image(cfgs, o["kernel"])
    try:
        with open(fio_ver) as f:
            meta["guest_fio"] = f.read().strip()
    except OSError:
        meta["guest_fio"] = "unknown"
    if reg:
        meta["regress"] = list(reg)
    add_meta(out, **meta)
    return out, where


def guest_image(cfgs, kernel):
    """meta's guest_sha256: --kernel's image and the initrd, or only the
    initrd when every guest boots a kernel of its own (meta's kernels)."""
    if all(c["kernel"] for c in cfgs if c["kind"] != "host"):
        return "each configuration's own kernel, initrd=%s" % sha12(paths.INITRD)
    return "%s bzImage=%s initrd=%s" % (kernel, sha12(paths.KERNELS[kernel]["bzImage"]),
                                        sha12(paths.INITRD))


def analyse(out, baseline=None):
    from . import results
    if results.archive_of(out):
        # A packed run directory (bench/results/pack.py): analysed in its
        # unpacked copy, whose tables go when this process ends.
        say("%s is packed: the tables are printed, not kept (bench/results/pack.py "
            "--unpack %s keeps them)" % (out, out))
        out = results.real(out)
    if not os.path.exists(os.path.join(out, "runs.jsonl")):
        raise Error("%s holds no vmbench runs (no runs.jsonl)" % out)
    from . import report
    with open(os.path.join(out, "plan.json")) as f:
        p = json.load(f)
    planned = [(rep, g, run_queues(p, p["cfgs"][c], q), c, p["cfgs"][c]["label"])
               for rep in range(1, p["repeats"] + 1) for g, q, c in run_order(p, rep)]
    return report.analyse(out, planned, baseline)


def run_plan(out, where):
    """Run (the rest of) the plan in OUT, here or in the test host, then
    analyse.  Returns the runs' status."""
    with open(os.path.join(out, "plan.json")) as f:
        p = json.load(f)
    nruns = p["repeats"] * len(p["cfgs"]) * len(p["qlist"]) * len(p["glist"])
    bt, st, np_ = p["boot_timeout"], p["step_timeout"], len(p["points"])
    t0 = time.time()
    add_meta(out, load_before=loadavg())
    rc, boot = 0, 0
    if where == "host":
        say("running here (this host's KVM is fast, or no guest is needed)")
        from . import vmbench_run
        rc = vmbench_run.inner(out)
    elif where == "testhost":
        # Memory: each guest's RAM and disk, plus room for the test host.
        maxg = max(int(g) for g in p["glist"])
        need = max(6, (maxg * (size_mb(p["mem"]) + size_mb(p["disk"])) + 2048 + 1023) // 1024)
        env = dict(os.environ)
        env.setdefault("TESTHOST_MEM", "%dG" % need)
        limit = int(env.get("TESTHOST_TIMEOUT") or 600 + nruns * (bt // 2 + np_ * st))
        add_meta(out, testhost="QEMU TCG, -smp %s -m %s (tests/testhost/run.sh)"
                 % (env.get("TESTHOST_SMP", "2"), env["TESTHOST_MEM"]))
        say("running inside the test host (one boot for all %d runs)" % nruns)
        argv = [sys.executable or "python3", self_path(), "--inner", out]

        def finished(rc):
            return os.path.exists(os.path.join(out, ".inner-done")) or rc not in testhost.ENDED_EARLY
        # Booted again for the runs not yet done if it dies or locks up.
        rc, boot = testhost.run_with_reboots(lambda: argv, out, finished, timeout_s=limit,
                                             env=env, stall_s=max(bt, st) + 120)
        add_meta(out, testhost_boots=boot)
    else:
        raise Error("--where must be auto, host or testhost")
    add_meta(out, elapsed=hms(time.time() - t0), load_after=loadavg())
    if rc:
        say("the runs failed (status %d); analysing what there is" % rc)
    runs = os.path.join(out, "runs.jsonl")
    if not os.path.exists(runs) or os.path.getsize(runs) == 0:
        raise Error("no results")
    if analyse(out):
        say("analysis failed")
        return 1
    say("took %s; results in %s/ (table.md, summary.csv, summary.json, samples.csv, *.png)"
        % (hms(time.time() - t0), os.path.relpath(out, paths.REPO)))
    return rc


def resume(d):
    out = os.path.abspath(d)
    if not os.path.isdir(out):
        raise Error("--resume: no directory %s" % d)
    if not (os.path.exists(os.path.join(out, "plan.json"))
            and os.path.exists(os.path.join(out, "meta.json"))):
        raise Error("--resume: %s holds no vmbench plan" % d)
    if os.path.exists(os.path.join(out, ".inner-done")):
        raise Error("--resume: every run of %s is done (--analyze redoes the analysis)" % d)
    where = read_meta(out).get("where", "host")
    say("resuming the plan in %s" % os.path.relpath(out, paths.REPO))
    return run_plan(out, where)
