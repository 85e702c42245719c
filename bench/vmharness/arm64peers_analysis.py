"""arm64-peers' analysis (bench/vmbench arm64-peers, arm64peers.py):
its plan as peers.sh read it (OUT/plan.txt), each run's figures (fio's
IOPS and latency per phase, the guest's interrupts, the test host's KVM
exits and the VMM's CPU per request), the paired comparisons with issue
38's and 47's targets, OUT/table.md and OUT/summary.json.  RESULTS.md's
arm64 sections (arm64peers_page.py) read the same."""
import json
import os

from . import config, counters, results
from .plan import load_runs
from .report import cell_value, fio_figures, fmt_p, load_fio, section_title
from .stats import ALPHA, mean_interval, paired_ratio

CONFIGS = config.ARM64_PEERS
JOBS = ("randread-4k", "randwrite-4k", "seed-virtio-blk")
# (baseline, other, like-for-like, target: other/baseline IOPS; issue
# 38's against kvmtool and QEMU 7.2, issue 47's against QEMU 10.0 and
# the test host's own fio)
COMPARISONS = (
    ("kvmtool-file", "vmm-file", True, 1.5),
    ("kvmtool-file", "vmm-ram", False, 1.5),
    ("qemu-file", "vmm-file", True, 1.0),
    ("qemu-file", "vmm-ram", False, 1.0),
    ("vmm-file", "vmm-ram", False, None),
    ("kvmtool-nullb", "vmm-nullb", True, 1.5),
    ("qemu-nullb", "vmm-nullb", True, 1.0),
    ("qemu10-nullb", "vmm-nullb", True, 1.3),
    ("host-nullb", "vmm-nullb", True, 0.8),
    ("qemu10-nullb", "vmm-nullb-poll0", True, None),
    ("vmm-nullb", "vmm-nullb-poll0", True, None),
)
# The VMM process's CPU per request (cpu_split), in the order shown.
CPU_FIGURES = ("vmm_own_us", "vcpu_own_us", "iothread_us", "io-wq_us", "other_us",
               "guest_us", "requests_per_vmm_cpu_s")
# The KVM counters (debugfs, arm64 6.1) reported per request.
KVM_FIGURES = ("exits", "mmio_exit_user", "mmio_exit_kernel", "wfi_exit_stat",
               "hvc_exit_stat", "halt_wakeup", "signal_exits")
# The kinds of exit arm64 KVM counts apart (each is also in "exits").
KINDED_EXITS = ("mmio_exit_user", "mmio_exit_kernel", "wfi_exit_stat", "wfe_exit_stat",
                "hvc_exit_stat", "signal_exits")

def read_plan(out):
    """The plan of OUT/plan.txt: ([(repeat, pos, config, [jobs])], {runtime, disk_mb})."""
    plan, opts = [], {}
    with results.open(os.path.join(out, "plan.txt")) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] in ("runtime", "disk_mb"):
                opts[w[0]] = int(w[1])
                continue
            if w[0] == "nullb":
                opts["nullb"] = {"bs": int(w[1]), "completion_ns": int(w[2])}
                continue
            plan.append((int(w[0]), int(w[1]), w[2], w[3].split(",")))
    return plan, opts


def all_done(out):
    """Whether runs.jsonl holds a line for every job of the plan."""
    return not missing(read_plan(out)[0], load_runs(out))


# ---- one run's figures -----------------------------------------------------------

def irq_total(run):
    """Interrupts the guest took on its data disk's vectors (vdb's virtio
    device: "virtioN-req.Q", "virtioN-config", or "virtioN" with INTx)
    during fio; None without both readings."""
    dev = run.get("vdb")
    before, after = run.get("irq_before") or {}, run.get("irq_after") or {}
    if not dev or not after:
        return None
    mine = [k for k in after if k == dev or k.startswith(dev + "-")]
    if not mine:
        return None
    return sum(after[k] - before.get(k, 0) for k in mine)


def kvm_deltas(run):
    """{counter: after - before} of the test host's KVM counters over fio."""
    b, a = run.get("kvm_before") or {}, run.get("kvm_after") or {}
    return {k: a[k] - b[k] for k in a if k in b}


def cpu_split(run, ios):
    """The VMM process's CPU over fio, per request, from its threads'
    readings at the PHASE markers (peers.sh's vmm_threads): guest_us, the
    vCPUs' time in guest mode (the guest's own work, whoever hosts it);
    vmm_own_us, the rest (exits handled in KVM and in user space, the
    iothreads, io_uring's and io-wq's work on the VMM's behalf), and its
    parts by thread kind (counters.thread_kind; a thread born during fio
    counts from 0, one that ended is lost); requests_per_vmm_cpu_s, the
    requests served per second of the VMM's own CPU.  {} without both
    readings (host-nullb: no VMM)."""
    before, after = run.get("threads_before") or {}, run.get("threads_after") or {}
    if not after or not before or not ios:
        return {}
    tck = run.get("clk_tck") or 100
    leader = min(int(t) for t in after)  # the main thread's TID is the PID
    own, guest = {}, 0.0
    for tid, (run_ns, ticks, comm) in after.items():
        b = before.get(tid, [0, 0, comm])
        g = (ticks - b[1]) * 1e9 / tck
        kind = counters.thread_kind(int(tid), leader, comm)
        if kind in ("main", "other"):
            kind = "other"
        own[kind] = own.get(kind, 0.0) + (run_ns - b[0]) - g
        guest += g
    total = sum(own.values())
    out = {"guest_us": guest / 1e3 / ios, "vmm_own_us": total / 1e3 / ios}
    out["vcpu_own_us"] = own.get("vcpu", 0.0) / 1e3 / ios
    for kind in ("iothread", "io-wq", "other"):
        out[kind + "_us"] = own.get(kind, 0.0) / 1e3 / ios
    if total > 0:
        out["requests_per_vmm_cpu_s"] = ios / (total / 1e9)
    return out


def run_figures(out, run):
    """{"phases": {(phase, dir): fio figures}, "ios": I/Os of the whole
    job, "per_req": {name: per I/O}} of one run, or None when it has no
    usable fio result (the reason in "error")."""
    if run.get("rc") != 0 or run.get("fio_rc") != 0 or not run.get("fio"):
        return {"error": "VMM status %s, fio status %s%s" % (
            run.get("rc"), run.get("fio_rc"), "" if run.get("fio") else ", no fio JSON")}
    data = load_fio(results.real(os.path.join(out, run["fio"])))
    if data is None:
        return {"error": "fio's JSON unreadable"}
    try:
        phases = fio_figures(data)
    except ValueError as e:
        return {"error": str(e)}
    ios = sum(p["ios"] for p in phases.values())
    per_req = {}
    if ios:
        irq = irq_total(run)
        if irq is not None:
            per_req["interrupts"] = irq / ios
        kd = kvm_deltas(run)
        for k, v in kd.items():
            if k in KVM_FIGURES:
                per_req[k] = v / ios
        if "exits" in kd:
            # Exits of no kind counted apart: interrupts on the test
            # host's CPU (its timer, the IPIs that kick a vCPU to take an
            # interrupt) and traps KVM handles itself.
            per_req["other_exits"] = (kd["exits"] - sum(kd.get(k, 0) for k in KINDED_EXITS)) / ios
        per_req.update(cpu_split(run, ios))
    return {"phases": phases, "ios": ios, "per_req": per_req}


# ---- analysis ---------------------------------------------------------------------

def collect(out, runs):
    """({(job, phase, dir): {config: {repeat: figures}}}, {job: {config:
    {repeat: per_req}}}, [problems])."""
    rows, per_req, problems = {}, {}, []
    for r in runs:
        f = run_figures(out, r)
        if "error" in f:
            problems.append("repeat %d, %s, %s: %s" % (r["repeat"], r["config"], r["job"], f["error"]))
            continue
        for (phase, d), figs in f["phases"].items():
            rows.setdefault((r["job"], phase, d), {}).setdefault(r["config"], {})[r["repeat"]] = figs
        per_req.setdefault(r["job"], {}).setdefault(r["config"], {})[r["repeat"]] = f["per_req"]
    return rows, per_req, problems


def missing(plan, runs):
    """Sentences for each planned (repeat, configuration, job) without a line."""
    have = {(r["repeat"], r["config"], r["job"]) for r in runs}
    return ["repeat %d, %s, %s: never ran (no line in runs.jsonl)" % (rep, c, j)
            for rep, _, c, js in plan for j in js if (rep, c, j) not in have]


def compare(by_cfg, base, other, key):
    """paired_ratio of OTHER / BASE of figure KEY over the repeats both have."""
    b, o = by_cfg.get(base, {}), by_cfg.get(other, {})
    return paired_ratio([(b[k][key], o[k][key]) for k in sorted(o)
                         if k in b and b[k].get(key) is not None and o[k].get(key) is not None])


def fmt_ratio(r):
    if r["ratio"] is None:
        return "-"
    if r["lo"] is None:
        return "%.2fx (n=%d)" % (r["ratio"], r["n"])
    return "%.2fx [%.2f-%.2f] p%s%s n=%d" % (r["ratio"], r["lo"], r["hi"], fmt_p(r["p"]),
                                            " **sig**" if r["p"] < ALPHA else " ns", r["n"])


def verdict(r, target):
    """Whether a ratio meets TARGET, in words, from its interval."""
    if r["ratio"] is None:
        return "no data"
    if r["lo"] is None:
        return "%s by the one pair (no interval)" % ("met" if r["ratio"] >= target else "not met")
    if r["lo"] >= target:
        return "met (the interval's low end %.2f >= %.2g)" % (r["lo"], target)
    if r["hi"] < target:
        return "not met (the interval's high end %.2f < %.2g)" % (r["hi"], target)
    return "%s by the point estimate only (the interval %.2f-%.2f spans %.2g)" % (
        "met" if r["ratio"] >= target else "not met", r["lo"], r["hi"], target)


def row_title(key):
    """"job / phase (dir)" of a row's KEY (job, phase, dir), as vmbench's
    report titles its sections."""
    job, phase, d = key
    return section_title({"job": job, "phase": phase, "dir": d, "params": ""})


def analyse_data(out, plan, runs, meta=None):
    """The report (markdown) and its figures (a dict for summary.json)."""
    meta = meta or {}
    rows, per_req, problems = collect(out, runs)
    with_result = len(runs) - len(problems)  # collect: one problem per run without
    problems += missing(plan, runs)
    configs = [c for c in CONFIGS if any(c in v for v in rows.values())]
    comps = [c for c in COMPARISONS if c[0] in configs and c[1] in configs]
    job_order = [j for j in JOBS if any(k[0] == j for k in rows)] + sorted(
        {k[0] for k in rows} - set(JOBS))
    seen = list(rows)  # fio's own order of a job's phases
    keys = sorted(rows, key=lambda k: (job_order.index(k[0]), seen.index(k)))
    md, summary = [], {"rows": [], "per_request": [], "comparisons": [], "problems": problems}
    md.append("## bench/vmbench arm64-peers: %s\n" % os.path.basename(os.path.abspath(out)))
    for k, label in (("command", "Command"), ("date", "Date"), ("machine", "Machine"),
                     ("seed", "Order seed"), ("repeats", "Repeats"), ("seed_runtime", "Seed job runtime override (s per phase, 0 = the job file's)"),
                     ("took_s", "Took (s, test-host boots included)"), ("boots", "Test-host boots")):
        if meta.get(k) is not None:
            md.append("- %s: %s" % (label, meta[k]))
    md.append("- Runs with a result: %d of %d planned (configuration x repeat x job)"
              % (with_result, sum(len(js) for _, _, _, js in plan)))
    md.append("")
    md.append("Each cell: mean ± sd [95% interval, t on the log scale] (n runs).  "
              "Ratios: OTHER / BASE paired by repeat, the geometric mean of the "
              "per-repeat ratios [95% t interval on the log scale], paired t-test "
              "p, **sig** when p < 0.05.  Like-for-like: vmm-file against "
              "kvmtool-file and qemu-file (the same file on the test host's tmpfs), "
              "vmm-nullb against kvmtool-nullb and qemu-nullb (the same null_blk "
              "device, O_DIRECT) and qemu10-nullb, and against host-nullb (the test host's own fio "
              "on it, no VM); vmm-ram is our RAM disk.  Repeat 0 (if any): a check, one boot "
              "outside the paired design, in the means only.\n")
    md.append("### IOPS and mean completion latency\n")
    md.append("| job / phase (dir) | " + " | ".join(
        "%s IOPS | %s lat (us)" % (c, c) for c in configs) + " |")
    md.append("|---|" + "---|---|" * len(configs))
    for key in keys:
        by = rows[key]
        cells = []
        for c in configs:
            for fig in ("iops", "lat_mean_us"):
                xs = [v[fig] for v in by.get(c, {}).values()]
                n, m, sd, ci = mean_interval(xs)
                row = {"job": key[0], "phase": key[1], "dir": key[2], "config": c,
                       "figure": fig, "n": n, "mean": m, "sd": sd, "ci95": list(ci), "values": xs}
                summary["rows"].append(row)
                cells.append("-" if not n else cell_value(row) + ("" if sd is None else " (%d)" % n))
        md.append("| %s | %s |" % (row_title(key), " | ".join(cells)))
    md.append("")
    md.append("### IOPS ratios\n")
    md.append("| job / phase | " + " | ".join("%s / %s%s" % (o, b, " (like-for-like)" if ll else "")
                                             for b, o, ll, _ in comps) + " |")
    md.append("|---|" + "---|" * len(comps))
    words = []
    for key in keys:
        cells = []
        for b, o, ll, target in comps:
            r = compare(rows[key], b, o, "iops")
            lat = compare(rows[key], b, o, "lat_mean_us")
            cells.append(fmt_ratio(r))
            entry = {"job": key[0], "phase": key[1], "dir": key[2], "base": b, "other": o,
                     "like_for_like": ll, "figure": "iops", "target": target, **r}
            if target is not None:
                entry["target_verdict"] = verdict(r, target)
            summary["comparisons"].append(entry)
            summary["comparisons"].append({"job": key[0], "phase": key[1], "dir": key[2], "base": b,
                                           "other": o, "like_for_like": ll,
                                           "figure": "lat_mean_us", **lat})
            if r["ratio"] is not None:
                s = "%s, IOPS %s / %s%s: %s" % (row_title(key), o, b,
                                                  " (like-for-like)" if ll else "", fmt_ratio(r))
                if r["p"] is not None:
                    s += ", %s" % ("not significant" if r["p"] >= ALPHA else "significantly %s" % (
                        "higher" if r["ratio"] > 1 else "lower"))
                if target is not None:
                    s += "; target (>= %gx): %s" % (target, verdict(r, target))
                words.append(s)
        md.append("| %s | %s |" % (row_title(key), " | ".join(cells)))
    md.append("")
    md.append("### Per request (the whole job; interrupts: the guest's, on the data "
              "disk's vectors; exits: this test host's KVM, debugfs)\n")
    figs = ["interrupts"] + list(KVM_FIGURES) + ["other_exits"]
    md.append("| job | config | n | " + " | ".join(figs) + " |")
    md.append("|---|---|---|" + "---|" * len(figs))
    for job in job_order:
        for c in configs:
            reps = per_req.get(job, {}).get(c, {})
            if not reps:
                continue
            cells = []
            for fg in figs:
                xs = [v[fg] for v in reps.values() if fg in v]
                n, m, sd, _ = mean_interval(xs)
                cells.append("-" if not n else "%.3f" % m + ("" if sd is None else " ± %.3f" % sd))
                summary["per_request"].append({"job": job, "config": c, "figure": fg, "n": n,
                                               "mean": m, "sd": sd, "values": xs})
            md.append("| %s | %s | %d | %s |" % (job, c, len(reps), " | ".join(cells)))
    md.append("")
    md.append("| job | ratio | interrupts per request | exits per request |")
    md.append("|---|---|---|---|")
    for job in job_order:
        for b, o, ll, _ in comps:
            by = per_req.get(job, {})
            ri, rx = compare(by, b, o, "interrupts"), compare(by, b, o, "exits")
            if ri["ratio"] is None and rx["ratio"] is None:
                continue
            md.append("| %s | %s / %s | %s | %s |" % (job, o, b, fmt_ratio(ri), fmt_ratio(rx)))
            for fg, r in (("interrupts", ri), ("exits", rx)):
                summary["comparisons"].append({"job": job, "base": b, "other": o, "like_for_like": ll,
                                               "figure": fg + "_per_request", **r})
    md.append("")
    md += cpu_tables(per_req, job_order, configs, comps, summary)
    if words:
        md.append("### In words (written from the figures above)\n")
        md += ["- " + w + "." for w in words]
        md.append("")
    if problems:
        md.append("### Failed or missing runs (%d)\n" % len(problems))
        md += ["- " + p for p in problems]
        md.append("")
    return "\n".join(md), summary


def cpu_tables(per_req, job_order, configs, comps, summary):
    """Markdown lines: the VMM process's CPU per request (cpu_split) per
    job and configuration, then each comparison's ratio of the VMM's own
    CPU per request; nothing when no run has the readings."""
    have = [(job, c) for job in job_order for c in configs
            if any("vmm_own_us" in v for v in per_req.get(job, {}).get(c, {}).values())]
    if not have:
        return []
    md = ["### The VMM's CPU per request (the whole job: the VMM process's threads, "
          "read at the guest's PHASE markers; us, mean ± sd)\n",
          "| job | config | n | " + " | ".join(CPU_FIGURES) + " |",
          "|---|---|---|" + "---|" * len(CPU_FIGURES)]
    for job, c in have:
        reps = [v for v in per_req[job][c].values() if "vmm_own_us" in v]
        cells = []
        for fg in CPU_FIGURES:
            xs = [v[fg] for v in reps if fg in v]
            n, m, sd, _ = mean_interval(xs)
            fmt = "%.0f" if fg == "requests_per_vmm_cpu_s" else "%.1f"
            cells.append("-" if not n else fmt % m + ("" if sd is None else " ± " + fmt % sd))
            summary["per_request"].append({"job": job, "config": c, "figure": fg, "n": n,
                                           "mean": m, "sd": sd, "values": xs})
        md.append("| %s | %s | %d | %s |" % (job, c, len(reps), " | ".join(cells)))
    md += ["", "| job | ratio | the VMM's own CPU per request |", "|---|---|---|"]
    for job in job_order:
        for b, o, ll, _ in comps:
            r = compare(per_req.get(job, {}), b, o, "vmm_own_us")
            if r["ratio"] is None:
                continue
            md.append("| %s | %s / %s | %s |" % (job, o, b, fmt_ratio(r)))
            summary["comparisons"].append({"job": job, "base": b, "other": o, "like_for_like": ll,
                                           "figure": "vmm_own_us_per_request", **r})
    md.append("")
    return md


def analyse(out):
    """Analyse OUT (table.md, summary.json); returns table.md's text.  A
    packed OUT (bench/results/pack.py) is analysed in its unpacked copy
    (the files written there go when the process ends)."""
    out = results.real(out)
    plan, opts = read_plan(out)
    runs = load_runs(out)
    meta = {}
    try:
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    meta.setdefault("seed_runtime", opts.get("runtime"))
    text, summary = analyse_data(out, plan, runs, meta)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return text
