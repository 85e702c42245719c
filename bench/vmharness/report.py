"""vmbench's report: the analysis half of bench/vmbench (`bench/vmbench
--analyze OUT` redoes it).

Reads OUT/{meta.json,plan.json,runs.jsonl,failures.jsonl} and the fio
JSON files they name; writes OUT/{samples.csv,summary.csv,summary.json,
table.md} and PNG plots (gnuplot) under OUT/plots/, and prints table.md.

One sample = one run (one boot of the configuration): the figures of all
its guests combined (IOPS and bandwidth summed; mean latency weighted by
the I/Os of each guest; p99 latency the largest of the guests').  Per
configuration and figure: mean, sample standard deviation and a 95%
interval taken on the log scale (it cannot go below 0).  Against the
first configuration of the same group, the design is paired: every
repeat runs each configuration once, so each repeat gives one ratio
(configuration / baseline); the report gives their geometric mean, its
95% t interval on the log scale (a change can never reach -100%, and
each ratio carries the baseline's noise as well as its own) and the
paired t-test's p-value; significant when p < 0.05.  Every planned run
without a result is listed.

Where runs.jsonl has the VMM process's CPU over a point (vmbench_run's
cpu_fields), each run also gives, for the whole point (all its phases):
the VMM's own CPU per request (its threads' run time less the vCPUs'
time in guest mode, summed over the guests, over the requests fio
counted in all of them) and the requests per second of that CPU; paired
against the first configuration that has them, like the other figures.

Python 3 standard library only.  The formulas are in stats.py.
"""
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

from . import plan
from . import results as packed
from .stats import ALPHA, mean_interval, paired_ratio

# (key, column title, unit, +1 if higher is better / -1 if lower is)
FIGURES = [
    ("iops", "IOPS", "", +1),
    ("bw_mbs", "MB/s", "MB/s", +1),
    ("lat_mean_us", "mean lat", "us", -1),
    ("lat_p99_us", "p99 lat", "us", -1),
]
# Per point, not per phase: one CPU reading per guest and point.
CPU_FIGURES = [
    ("vmm_cpu_us", "VMM CPU", "us/req", -1),
    ("ios_per_vmm_cpu_s", "req per VMM CPU-s", "", +1),
]
FIGURE_NAME = {k: name for k, name, _, _ in FIGURES + CPU_FIGURES}
# The phase and direction of a figure of the whole point (CPU_FIGURES).
WHOLE_POINT = ("", "")


# ---- reading a run ----------------------------------------------------------

def load_fio(path):
    """fio's JSON (anything before the first '{' line skipped), or None."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r"^\{", text, re.M)
    if not m:
        return None
    # The guest trims fio's JSON (bench/vmharness/fio-trim.awk); before
    # 2026-12-01 the trimmer could leave a comma before a closing brace
    # where it dropped the last member (results made then are still read).
    text = re.sub(r",(\s*[}\]])", r"\1", text[m.start():])
    try:
        obj, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return obj


def fio_figures(data):
    """{(phase, dir): {iops, bw_mbs, lat_mean_us, lat_p99_us, ios}} of one
    fio run; the clones of a job (numjobs without group_reporting)
    combined like guests are."""
    acc = {}
    for job in data.get("jobs", []):
        if job.get("error"):
            raise ValueError("fio job %s: error %s" % (job.get("jobname"), job["error"]))
        for d in ("read", "write", "trim"):
            s = job.get(d) or {}
            ios = s.get("total_ios") or 0
            if not s.get("io_bytes") and not ios:
                continue
            clat = s.get("clat_ns") or {}
            pct = clat.get("percentile") or {}
            p99 = pct.get("99.000000")
            one = {
                "iops": float(s.get("iops", 0.0)),
                "bw_mbs": float(s.get("bw", 0.0)) * 1024 / 1e6,
                "lat_mean_us": float(clat.get("mean", 0.0)) / 1000.0,
                "lat_p99_us": None if p99 is None else float(p99) / 1000.0,
                "ios": float(ios),
            }
            key = (job.get("jobname", "?"), d)
            acc.setdefault(key, []).append(one)
    return {k: combine(v) for k, v in acc.items()}


def combine(parts):
    """Figures of parts running at the same time, as one."""
    ios = sum(p["ios"] for p in parts)
    lat = (sum(p["lat_mean_us"] * p["ios"] for p in parts) / ios if ios
           else sum(p["lat_mean_us"] for p in parts) / len(parts))
    p99s = [p["lat_p99_us"] for p in parts if p["lat_p99_us"] is not None]
    return {
        "iops": sum(p["iops"] for p in parts),
        "bw_mbs": sum(p["bw_mbs"] for p in parts),
        "lat_mean_us": lat,
        "lat_p99_us": max(p99s) if p99s else None,
        "ios": ios,
    }


def load(out):
    out = packed.real(out)  # a packed run directory: its unpacked copy
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(out, "plan.json")) as f:
        points = dict(enumerate(json.load(f)["points"]))  # {k: {job, params}}
    configs = {}   # cfg index -> label, kind
    runs = {}      # (run, point) -> {meta, guests: {g: figures or None}}
    problems = []
    for r in plan.load_runs(out):
        configs[r["cfg"]] = {"label": r["label"], "kind": r["kind"]}
        ent = runs.setdefault((r["run"], r["point"]), {
            "run": r["run"], "repeat": r["repeat"], "cfg": r["cfg"],
            "queues": queues_text(r["queues"]), "guests": r["guests"],
            "point": r["point"], "parts": {}, "cpu": {}, "probe_ns": r["probe_ns"]})
        ent["parts"][r["guest"]] = part_figures(out, r, problems)
        ent["cpu"][r["guest"]] = part_cpu(r)
    return meta, points, configs, runs, problems


def queues_text(q):
    """A run's queue count as the tables show it ("-": the host's fio)."""
    return "-" if q is None else str(q)


def part_figures(out, r, problems):
    """The figures of one guest's point R (a runs.jsonl line), or None
    with what went wrong added to PROBLEMS."""
    who = "%s p%s guest %s" % (r["run"], r["point"], r["guest"])
    if r["rc"] != 0:
        problems.append("%s: fio rc=%s" % (who, "none" if r["rc"] is None else r["rc"]))
        return None
    data = load_fio(os.path.join(out, r["json"]))
    if data is None:
        problems.append("%s: no fio JSON" % who)
        return None
    try:
        return fio_figures(data)
    except ValueError as e:
        problems.append("%s: %s" % (who, e))
        return None


def part_cpu(r):
    """(run ns, guest ns) of one guest's VMM over point R (a runs.jsonl
    line), None where it has no CPU fields (the host's fio, older runs)."""
    if r.get("cpu_run_ns") is None or r.get("cpu_guest_ns") is None:
        return None
    return r["cpu_run_ns"], r["cpu_guest_ns"]


# ---- samples and summary ----------------------------------------------------

def cpu_figures(ent):
    """{vmm_cpu_us, ios_per_vmm_cpu_s} of a run's point ENT: the VMMs'
    own CPU (run - guest) summed over its guests, per request fio
    counted in all of them (every phase and direction); {} unless every
    guest has both.  Requests per CPU-second only where that CPU is > 0
    (guest_time is counted in ticks, so a short point can show none)."""
    parts, cpu = ent["parts"], ent["cpu"]
    if len(parts) != ent["guests"] or any(parts[g] is None or cpu.get(g) is None for g in parts):
        return {}
    own_ns = sum(run - guest for run, guest in cpu.values())
    ios = sum(f["ios"] for p in parts.values() for f in p.values())
    if not ios:
        return {}
    out = {"vmm_cpu_us": own_ns / 1e3 / ios}
    if own_ns > 0:
        out["ios_per_vmm_cpu_s"] = ios / (own_ns / 1e9)
    return out


def sample(ent, configs, points, phase_dir, key, value):
    """One row of samples.csv: figure KEY of run ENT at PHASE_DIR."""
    return {"run": ent["run"], "repeat": ent["repeat"], "cfg": ent["cfg"],
            "config": configs[ent["cfg"]]["label"], "kind": configs[ent["cfg"]]["kind"],
            "queues": ent["queues"], "guests": ent["guests"],
            "point": ent["point"], "job": points[ent["point"]]["job"],
            "params": points[ent["point"]]["params"],
            "phase": phase_dir[0], "dir": phase_dir[1], "figure": key, "value": value,
            "probe_ns": ent["probe_ns"]}


def build_samples(meta, points, configs, runs):
    """One row per run, point, phase, direction and figure; a run counts
    only when every guest of it delivered that phase.  The CPU figures
    (cpu_figures) are the whole point's: phase and dir WHOLE_POINT."""
    samples = []
    for (run, point), ent in sorted(runs.items()):
        parts = list(ent["parts"].values())
        if any(p is None for p in parts) or len(parts) != ent["guests"]:
            continue
        phases = set()
        for p in parts:
            phases |= set(p.keys())
        for ph in sorted(phases):
            if any(ph not in p for p in parts):
                continue
            c = combine([p[ph] for p in parts])
            samples += [sample(ent, configs, points, ph, key, c[key])
                        for key, _, _, _ in FIGURES if c[key] is not None]
        samples += [sample(ent, configs, points, WHOLE_POINT, key, v)
                    for key, v in cpu_figures(ent).items()]
    return samples


def num_key(v):
    """Sort key for option values: numbers and sizes (4k, 1m) by value."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)[iI]?[bB]?", str(v))
    if not m:
        return (1, str(v))
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    return (0, float(m.group(1)) * mult)


def summarise(meta, samples):
    """Per group (point, phase, dir, guests, queues if swept) and config:
    statistics of each figure, and its ratio to the group's first config
    paired by repeat."""
    qswept = meta.get("queues_swept")
    groups = {}
    for s in samples:
        gk = (s["point"], s["phase"], s["dir"], s["guests"],
              num_key(s["queues"]) if qswept else (0, 0))
        row = groups.setdefault(gk, {}).setdefault(s["cfg"], {
            "config": s["config"], "kind": s["kind"], "cfg": s["cfg"],
            "queues": set(), "guests": s["guests"], "job": s["job"],
            "params": s["params"], "phase": s["phase"], "dir": s["dir"],
            "point": s["point"], "values": {}, "by_repeat": {}})
        row["queues"].add(s["queues"])
        row["values"].setdefault(s["figure"], []).append(s["value"])
        row["by_repeat"].setdefault(s["figure"], {}).setdefault(s["repeat"], []).append(s["value"])
    results = []
    for gk in sorted(groups):
        cfgs = groups[gk]
        # The first configuration, or the one meta["_baseline"] names.
        named = [c for c in cfgs if cfgs[c]["config"] == meta.get("_baseline")]
        base_cfg = named[0] if named else min(cfgs)
        base = cfgs[base_cfg]
        for c in sorted(cfgs):
            row = cfgs[c]
            for key, _, _, better in FIGURES + CPU_FIGURES:
                xs = row["values"].get(key)
                if not xs:
                    continue
                n, m, sd, ci = mean_interval(xs)
                r = {
                    "config": row["config"], "kind": row["kind"],
                    "queues": "/".join(sorted(row["queues"], key=num_key)),
                    "guests": row["guests"], "job": row["job"],
                    "params": row["params"], "phase": row["phase"],
                    "dir": row["dir"], "figure": key, "n": n,
                    "values": xs, "mean": m, "sd": sd,
                    "ci95": list(ci), "baseline": base["config"], "pairs": 0,
                    "ratio": None, "ratio_ci95": [None, None],
                    "p_paired": None, "significant": None, "worse": None,
                    "_group": gk, "_cfg": c, "_base": base_cfg,
                }
                if c != base_cfg:
                    mine = row["by_repeat"].get(key, {})
                    theirs = base["by_repeat"].get(key, {})
                    pr = paired_ratio([(statistics.mean(theirs[k]), statistics.mean(mine[k]))
                                       for k in sorted(mine) if k in theirs])
                    r.update(pairs=pr["n"], ratio=pr["ratio"], ratio_ci95=[pr["lo"], pr["hi"]],
                             p_paired=pr["p"])
                    if pr["p"] is not None:
                        r["significant"] = pr["p"] < ALPHA
                        r["worse"] = r["significant"] and (pr["ratio"] - 1) * better < 0
                results.append(r)
    return results


def missing_runs(planned, points, runs):
    """Each planned run [(repeat, guests, queues, cfg, label)] and point
    of which runs.jsonl holds no line at all, as sentences."""
    had = {(e["repeat"], e["guests"], e["queues"], e["cfg"], e["point"]) for e in runs.values()}
    out = []
    for rep, g, q, c, label in planned:
        lost = [p for p in sorted(points) if (rep, g, q, c, p) not in had]
        if lost:
            out.append("repeat %d, %s, %d guest(s), queues %s: %s never ran" % (
                rep, label, g, q, "the whole run" if len(lost) == len(points)
                else "point(s) " + ", ".join("%s (%s)" % (p, points[p]["job"]) for p in lost)))
    return out


# ---- output -----------------------------------------------------------------

def fmt(v, key=None):
    if v is None:
        return "-"
    a = abs(v)
    if key in ("iops", "ios_per_vmm_cpu_s") or a >= 1000:
        return "{:,.0f}".format(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_p(p):
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else "=%.3f" % p


def cell_value(r):
    if r["sd"] is None:
        return "%s (n=%d)" % (fmt(r["mean"], r["figure"]), r["n"])
    return "%s ± %s [%s, %s]" % (fmt(r["mean"], r["figure"]), fmt(r["sd"], r["figure"]),
                                  fmt(r["ci95"][0], r["figure"]), fmt(r["ci95"][1], r["figure"]))


def cell_diff(r):
    if r["_cfg"] == r["_base"]:
        return "baseline"
    if r["ratio"] is None:
        return "no pair"
    out = "%.2fx" % r["ratio"]
    if r["ratio_ci95"][0] is not None:
        out += " [%.2f-%.2f]" % tuple(r["ratio_ci95"])
    if r["p_paired"] is not None:
        out += " p%s%s" % (fmt_p(r["p_paired"]), " **sig**" if r["significant"] else " ns")
    if r["pairs"] != r["n"]:
        out += " (%d pair%s)" % (r["pairs"], "" if r["pairs"] == 1 else "s")
    return out


def sentence(r):
    """One figure of one configuration against its baseline, in words,
    saying only what the numbers show."""
    s = "%s, %s queue(s), %d guest(s), %s: %s / %s = %s" % (
        section_title(r), r["queues"], r["guests"], FIGURE_NAME[r["figure"]], r["config"],
        r["baseline"], "-" if r["ratio"] is None else "%.2fx" % r["ratio"])
    if r["ratio"] is None:
        return s + " (no repeat has both)"
    if r["p_paired"] is None:
        return s + " (%d paired repeat: no interval, no test)" % r["pairs"]
    s += " (95%% CI %.2f-%.2f, %d paired repeats, " % (r["ratio_ci95"][0], r["ratio_ci95"][1], r["pairs"])
    if not r["significant"]:
        return s + "not significant, p%s)" % fmt_p(r["p_paired"])
    return s + "significantly %s, p%s)" % ("worse" if r["worse"] else "better",
                                            fmt_p(r["p_paired"]))


def section_title(r):
    t = r["job"]
    if r["phase"] and r["phase"] != r["job"]:
        t += " / " + r["phase"]
    t += " (%s)" % (r["dir"] or "the whole point")
    if r["params"]:
        t += ", " + r["params"].replace(" ", ", ")
    return t


# The CPU columns (CPU_FIGURES), after IOPS's.
CPU_HEADER = ["VMM CPU (us/req)", "VMM CPU vs baseline", "req per VMM CPU-s"]


def cell_mean_sd(r, n):
    """mean ± sd of R, its n when it is not the row's N."""
    if r["sd"] is None:
        return "%s (n=%d)" % (fmt(r["mean"], r["figure"]), r["n"])
    return "%s ± %s%s" % (fmt(r["mean"], r["figure"]), fmt(r["sd"], r["figure"]),
                          "" if r["n"] == n else " (n=%d)" % r["n"])


def cpu_cells(figs, n):
    """The CPU columns of one row: FIGS {figure: result} of its whole
    point, N the row's run count."""
    cpu, rate = figs.get("vmm_cpu_us"), figs.get("ios_per_vmm_cpu_s")
    return [cell_mean_sd(cpu, n) if cpu else "-", cell_diff(cpu) if cpu else "-",
            cell_mean_sd(rate, n) if rate else "-"]


def whole_point_results(results):
    """{(group, cfg): {figure: result}} of the figures of a whole point
    (CPU_FIGURES), the group's phase and dir WHOLE_POINT."""
    out = {}
    for r in results:
        if (r["phase"], r["dir"]) == WHOLE_POINT:
            out.setdefault((r["_group"], r["_cfg"]), {})[r["figure"]] = r
    return out


def point_group(gk):
    """The whole point's group of a phase's group GK (summarise's key)."""
    return (gk[0],) + WHOLE_POINT + tuple(gk[3:])


def table_md(meta, results, problems, regress):
    out = []
    title = meta.get("title", "vmbench")
    out.append("## %s\n" % title)
    for k, label in (("command", "Command"), ("date", "Date"), ("machine", "Machine"),
                     ("kernel", "Kernel"), ("where", "Guests ran"), ("testhost", "Test host"),
                     ("inner_cpu", "CPU seen there"), ("kvmprobe", "kvmprobe"),
                     ("git", "Tree"), ("vmm_sha256", "VMM binaries (sha256, copied at the start)"),
                     ("guest_sha256", "Guest image (sha256)"), ("guest", "Guests"), ("disk_dir", "Backing files"),
                     ("fio_sets", "fio overrides"), ("qemu", "QEMU"),
                     ("guest_fio", "fio in the guest"), ("host_fio", "fio on the host"),
                     ("repeats", "Repeats per configuration"),
                     ("order_seed", "Order of the runs, shuffled within each repeat, seed"),
                     ("kernels", "Guest kernels (release, sha256)"),
                     ("refused", "Stopped"),
                     ("elapsed", "Took (lock wait, test host boot and analysis included)")):
        if meta.get(k):
            v = meta[k]
            if k == "command":
                v = "`%s`" % v
            out.append("- %s: %s" % (label, v))
    if meta.get("testhost_boots", 1) != 1:
        out.append("- The test host failed and was booted again to finish the runs: %s boots "
                   "in all (the runs of a repeat may then straddle two boots)" % meta["testhost_boots"])
    if meta.get("inner_seconds"):
        t = int(meta["inner_seconds"])
        out.append("- The runs themselves: %dm%02ds" % (t // 60, t % 60))
    probes = meta.get("_probes")
    if probes:
        n, m, sd, _ = mean_interval(probes)
        out.append("- KVM speed during the runs (kvmprobe before each run, ns per guest "
                   "loop iteration): mean %.2f, sd %.2f (%.0f%%), min %.2f, max %.2f, n=%d"
                   % (m, sd or 0.0, 100.0 * (sd or 0.0) / m if m else 0.0,
                      min(probes), max(probes), n))
    if meta.get("load_before"):
        out.append("- Load average of the machine (1, 5, 15 min): %s before, %s after"
                   % (meta["load_before"], meta.get("load_after", "?")))
    out.append("")
    out.append("Each cell: mean ± standard deviation [95% interval, t on the log scale] "
               "over the runs (n); vs baseline: this configuration / the baseline "
               "(first configuration), the geometric mean of the ratios of the "
               "repeats that have both [95% interval, t on the log scale], the "
               "paired t-test's p-value, **sig** when p < 0.05, ns otherwise.  "
               "Latency is fio's completion latency (clat); with several guests "
               "IOPS and MB/s are summed, mean latency is I/O-weighted and p99 the "
               "worst guest's.\n")
    whole = whole_point_results(results)
    if whole:
        out.append("VMM CPU: the VMM process's own CPU per request, mean ± sd over the "
                   "runs: its threads' time on a CPU less its vCPUs' time in the guest "
                   "(guest_time), from the point's go to the guest's \"fio done\", summed "
                   "over the guests, over the requests fio counted in all of them; for "
                   "the whole point (every phase and direction of its job); vs baseline "
                   "against the first configuration that has a VMM.  req per VMM CPU-s: "
                   "those requests per second of that CPU.\n")
    # Group rows into sections by (point, phase, dir).
    sections = {}
    for r in results:
        if (r["phase"], r["dir"]) == WHOLE_POINT:
            continue
        sk = (r["_group"][0], r["phase"], r["dir"])
        sections.setdefault(sk, {}).setdefault((r["_group"], r["_cfg"]), {})[r["figure"]] = r
    for sk in sorted(sections):
        out += section_table(sections[sk], whole)
    words = [sentence(r) for r in results
             if r["_cfg"] != r["_base"] and r["figure"] in ("iops", "lat_mean_us")]
    if words:
        out.append("### In words (written from the figures above)\n")
        out += ["- " + w + "." for w in words]
        out.append("")
    for b in (regress or ())[1:]:
        a = regress[0]
        out.append("### Regressions: where %s is significantly worse than %s\n" % (b, a))
        worse = [r for r in results if r["worse"] and r["config"] == b]
        if not worse:
            out.append("None: no figure where %s is significantly worse than %s "
                       "(paired t-test p < 0.05, n=%s per configuration).\n" % (b, a, meta.get("repeats", "?")))
        for r in worse:
            base = next(x for x in results if x["_group"] == r["_group"]
                        and x["_cfg"] == r["_base"] and x["figure"] == r["figure"])
            out.append("- %s, %s: %s %s, %s %s: %s" % (
                section_title(r), FIGURE_NAME[r["figure"]],
                a, fmt(base["mean"], r["figure"]), b, fmt(r["mean"], r["figure"]), cell_diff(r)))
        better = [r for r in results if r["significant"] and not r["worse"] and r["config"] == b]
        out.append("(%d figure(s) where %s is significantly better.)\n" % (len(better), b))
    retried = meta.get("_failures") or []
    if retried:
        out.append("### Failed attempts (%d; each run is tried at most twice)\n" % len(retried))
        for f in retried:
            out.append("- %s, attempt %d: %s" % (f["run"], f["attempt"], f["why"]))
        out.append("")
    if problems:
        out.append("### Failed or missing runs (%d)\n" % len(problems))
        for p in problems[:40]:
            out.append("- " + p)
        if len(problems) > 40:
            out.append("- ... %d more" % (len(problems) - 40))
        out.append("")
    return "\n".join(out)


def section_table(rows, whole):
    """Markdown lines of one section (point, phase, dir): ROWS {(group,
    cfg): {figure: result}}, with the CPU columns after IOPS's where a
    row's point has them in WHOLE (whole_point_results)."""
    cpu = {key: whole.get((point_group(key[0]), key[1]), {}) for key in rows}
    first = next(iter(next(iter(rows.values())).values()))
    out = ["### %s\n" % section_title(first)]
    hdr = ["config", "q", "guests", "n"]
    for key, name, unit, _ in FIGURES:
        hdr += ["%s%s" % (name, " (%s)" % unit if unit and unit != name else ""), "%s vs baseline" % name]
        if key == "iops" and any(cpu.values()):
            hdr += CPU_HEADER
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "---|" * len(hdr))
    for (gk, c) in sorted(rows):
        figs = rows[(gk, c)]
        any_r = next(iter(figs.values()))
        line = [any_r["config"], any_r["queues"], str(any_r["guests"]), str(any_r["n"])]
        for key, _, _, _ in FIGURES:
            r = figs.get(key)
            line += [cell_value(r), cell_diff(r)] if r else ["-", "-"]
            if key == "iops" and any(cpu.values()):
                line += cpu_cells(cpu[(gk, c)], any_r["n"])
        out.append("| " + " | ".join(line) + " |")
    out.append("")
    return out


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for r in rows:
            w.writerow([r.get(k) for k in fields])


def summary_rows(results):
    rows = []
    for r in results:
        x = {k: v for k, v in r.items() if not k.startswith("_") and k != "values"}
        x["ci95_lo"], x["ci95_hi"] = r["ci95"]
        x["ratio_ci95_lo"], x["ratio_ci95_hi"] = r["ratio_ci95"]
        x["values"] = " ".join("%.6g" % v for v in r["values"])
        rows.append(x)
    return rows


SUMMARY_FIELDS = ["config", "kind", "queues", "guests", "job", "params", "phase", "dir",
                  "figure", "n", "mean", "sd", "ci95_lo", "ci95_hi", "baseline",
                  "pairs", "ratio", "ratio_ci95_lo", "ratio_ci95_hi", "p_paired",
                  "significant", "worse", "values"]
SAMPLE_FIELDS = ["run", "repeat", "config", "kind", "queues", "guests", "job", "params",
                 "phase", "dir", "figure", "value", "probe_ns"]


# ---- plots ------------------------------------------------------------------

def gp_str(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def plots(out, meta, results):
    """For each swept dimension (guests, queues, fio option) with more than
    one value: IOPS (and MB/s for block size) against it, one line per
    configuration (and value of the other swept dimensions), error bars
    one standard deviation."""
    if not shutil.which("gnuplot"):
        print("vmbench report: gnuplot not found: no plots", file=sys.stderr)
        return []
    def params_of(r):
        return dict(w.split("=", 1) for w in r["params"].split() if "=" in w)
    dims = {"guests": set(), "queues": set()}
    for r in results:
        dims["guests"].add(str(r["guests"]))
        dims["queues"].add(r["queues"])
        for k, v in params_of(r).items():
            dims.setdefault(k, set()).add(v)
    if not meta.get("queues_swept"):
        dims["queues"] = set()
    swept = [d for d, vs in dims.items() if len(vs) > 1]
    pdir = os.path.join(out, "plots")
    if not swept:
        return ratio_plots(pdir, meta, results)
    made = []
    for dim in swept:
        figs = ["iops"] + (["bw_mbs"] if dim == "bs" else [])
        for fig in figs:
            # One plot per job/phase/dir.
            by_plot = {}
            for r in results:
                if r["figure"] != fig:
                    continue
                pr = params_of(r)
                xv = str(r["guests"]) if dim == "guests" else r["queues"] if dim == "queues" else pr.get(dim)
                if xv is None:
                    continue
                others = []
                for d in swept:
                    if d == dim:
                        continue
                    ov = str(r["guests"]) if d == "guests" else r["queues"] if d == "queues" else pr.get(d, "")
                    others.append("%s=%s" % ("q" if d == "queues" else d, ov))
                series = r["config"] + ("" if not others else " " + " ".join(others))
                pk = (r["job"], r["phase"], r["dir"])
                by_plot.setdefault(pk, {}).setdefault(series, {})[xv] = (r["mean"], r["sd"] or 0.0, r["_cfg"], others, r["n"])
            for (job, phase, d), series in sorted(by_plot.items()):
                xs = sorted({x for s in series.values() for x in s}, key=num_key)
                names = sorted(series, key=lambda s: (next(iter(series[s].values()))[2],
                                                      [num_key(o) for o in next(iter(series[s].values()))[3]]))
                os.makedirs(pdir, exist_ok=True)
                base = "%s-vs-%s-%s%s-%s" % (fig.replace("_mbs", ""), dim, job,
                                            "" if phase == job else "-" + phase, d)
                base = re.sub(r"[^A-Za-z0-9_.-]", "_", base)
                dat = os.path.join(pdir, base + ".dat")
                with open(dat, "w") as f:
                    f.write("# %s\t%s\n" % (dim, "\t".join("%s mean\tsd" % n for n in names)))
                    for x in xs:
                        cols = [x]
                        for n in names:
                            v = series[n].get(x)
                            cols += ["%.6g" % v[0], "%.6g" % v[1]] if v else ["?", "?"]
                        f.write("\t".join(cols) + "\n")
                ylabel = {"iops": "IOPS", "bw_mbs": "MB/s"}[fig]
                if dim == "guests":
                    ylabel += " (sum over guests)"
                xlabel = {"guests": "guests at once", "queues": "virtqueues per disk",
                          "bs": "block size", "iodepth": "fio iodepth",
                          "numjobs": "fio numjobs"}.get(dim, dim)
                title = "%s: %s%s (%s)" % (meta.get("title", "vmbench"), job,
                                           "" if phase == job else " / " + phase, d)
                ns = sorted({v[4] for s_ in series.values() for v in s_.values()})
                nrun = "%s" % ns[0] if len(ns) == 1 else "%s-%s" % (ns[0], ns[-1])
                sub = "mean of %s runs per point (of %s planned), error bars ±1 sd; guests ran on: %s" % (
                    nrun, meta.get("repeats", "?"), meta.get("where", "?"))
                gp = os.path.join(pdir, base + ".gp")
                with open(gp, "w") as f:
                    f.write("set terminal pngcairo size 960,600 noenhanced font 'sans,10'\n")
                    f.write("set output %s\n" % gp_str(os.path.join(pdir, base + ".png")))
                    f.write("set title %s\n" % gp_str(title + "\n" + sub))
                    f.write("set xlabel %s\nset ylabel %s\n" % (gp_str(xlabel), gp_str(ylabel)))
                    f.write("set datafile missing '?'\nset datafile separator '\\t'\n")
                    f.write("set grid ytics\nset key outside right top\nset yrange [0:*]\n")
                    # Plain numbers on a linear axis ('%.0s%c' would print
                    # 2500 as "2k" next to 2000 as "2k").
                    f.write("set offsets 0.25, 0.25, 0, 0\nset format y '%.0f'\n")
                    means = [v[0] for s_ in series.values() for v in s_.values() if v[0] > 0]
                    if means and max(means) > 8 * min(means):
                        # The host next to guests: a log scale keeps both readable.
                        f.write("set logscale y\nset yrange [*:*]\nset format y '%%.0s%%c'\n"
                                "set ylabel %s\n" % gp_str(ylabel + ", log scale"))
                    f.write("set bars 2\nset pointsize 1.2\n")
                    # The x tick labels, at the integer positions.
                    parts = ["%s using 0:(NaN):xtic(1) notitle" % gp_str(dat)]
                    for i, n in enumerate(names):
                        # Series side by side around each x, so that error
                        # bars do not hide each other.
                        dx = (i - (len(names) - 1) / 2.0) * 0.06
                        parts.append("'' using ($0%+.3f):%d:%d with yerrorlines lw 2 pt %d title %s" % (
                            dx, 2 + 2 * i, 3 + 2 * i, 5 + i, gp_str(n)))
                    f.write("plot " + ", \\\n     ".join(parts) + "\n")
                res = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
                if res.returncode != 0:
                    print("vmbench report: gnuplot %s failed: %s" % (gp, res.stderr.strip()[:500]),
                          file=sys.stderr)
                    continue
                made.append(os.path.join(pdir, base + ".png"))
    return made


def ratio_plots(pdir, meta, results):
    """A plan without a sweep (configurations on the same jobs, such as a
    2x2): per job, each configuration's IOPS over the baseline's, phase by
    phase, with the 95% interval of the paired ratio; a line at 1."""
    made = []
    jobs = {}
    for r in results:
        if r["figure"] == "iops" and r["ratio_ci95"][0] is not None:
            jobs.setdefault(r["job"], []).append(r)  # with an interval (n >= 2)
    for job, rs in sorted(jobs.items()):
        xs = []
        for r in rs:
            x = "%s (%s)" % (r["phase"] or job, r["dir"])
            if x not in xs:
                xs.append(x)
        names = []
        for r in rs:
            if r["config"] not in names:
                names.append(r["config"])
        os.makedirs(pdir, exist_ok=True)
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", "ratio-iops-" + job)
        dat = os.path.join(pdir, base + ".dat")
        with open(dat, "w") as f:
            f.write("# phase\t%s\n" % "\t".join("%s ratio\tlo\thi" % n for n in names))
            for x in xs:
                cols = [x]
                for n in names:
                    r = next((r for r in rs if r["config"] == n and
                              "%s (%s)" % (r["phase"] or job, r["dir"]) == x), None)
                    lo, hi = r["ratio_ci95"] if r else (None, None)
                    cols += (["%.4f" % r["ratio"], "%.4f" % lo, "%.4f" % hi]
                             if r and lo is not None else ["?", "?", "?"])
                f.write("\t".join(cols) + "\n")
        gp = os.path.join(pdir, base + ".gp")
        sub = "IOPS / %s's, paired by repeat (n=%s), error bars: 95%% interval; guests ran on: %s" % (
            rs[0]["baseline"], meta.get("repeats", "?"), meta.get("where", "?"))
        with open(gp, "w") as f:
            f.write("set terminal pngcairo size 960,600 noenhanced font 'sans,10'\n")
            f.write("set output %s\n" % gp_str(os.path.join(pdir, base + ".png")))
            f.write("set title %s\n" % gp_str("%s: %s\n%s" % (meta.get("title", "vmbench"), job, sub)))
            f.write("set ylabel %s\n" % gp_str("IOPS ratio to " + rs[0]["baseline"]))
            f.write("set datafile missing '?'\nset datafile separator '\\t'\n")
            f.write("set grid ytics\nset key outside right top\nset offsets 0.4, 0.4, 0, 0\n")
            f.write("set yrange [0:*]\nset bars 2\nset pointsize 1.2\n")
            parts = ["%s using 0:(NaN):xtic(1) notitle" % gp_str(dat), "1 with lines dt 2 lc 'black' notitle"]
            for i, n in enumerate(names):
                dx = (i - (len(names) - 1) / 2.0) * 0.08
                parts.append("'' using ($0%+.3f):%d:%d:%d with yerrorbars lw 2 pt %d title %s" % (
                    dx, 2 + 3 * i, 3 + 3 * i, 4 + 3 * i, 5 + i, gp_str(n)))
            f.write("plot " + ", \\\n     ".join(parts) + "\n")
        res = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
        if res.returncode != 0:
            print("vmbench report: gnuplot %s failed: %s" % (gp, res.stderr.strip()[:500]),
                  file=sys.stderr)
            continue
        made.append(os.path.join(pdir, base + ".png"))
    return made


# ---- main -------------------------------------------------------------------

def analyse(out, planned=(), baseline=None):
    """Analyse the vmbench run in OUT.  PLANNED: every run the plan asked
    for, [(repeat, guests, queues, cfg index, label)]; those without a
    row are listed with the failed runs.  BASELINE: another
    configuration's label to compare with instead of the first; then only
    OUT/table-vs-BASELINE.md is written (and printed)."""
    meta, points, configs, runs, problems = load(out)
    if baseline is not None:
        if baseline not in [c["label"] for c in configs.values()]:
            print("no configuration %r in %s (%s)" % (
                baseline, out, ", ".join(c["label"] for c in configs.values())))
            return 1
        meta["_baseline"] = baseline
        results = summarise(meta, build_samples(meta, points, configs, runs))
        md = table_md(meta, results, problems, None)
        with open(os.path.join(out, "table-vs-%s.md" % baseline), "w") as f:
            f.write(md)
        print(md)
        return 0
    problems += missing_runs(planned, points, runs)
    probes = {e["run"]: e["probe_ns"] for e in runs.values() if e["probe_ns"] is not None}
    meta["_probes"] = list(probes.values())
    meta["_failures"] = plan.load_failures(out)
    samples = build_samples(meta, points, configs, runs)
    results = summarise(meta, samples)
    # regress: A and B; kernels: every kernel, the first the baseline.
    regress = meta.get("regress")
    write_csv(os.path.join(out, "samples.csv"), samples, SAMPLE_FIELDS)
    srows = summary_rows(results)
    write_csv(os.path.join(out, "summary.csv"), srows, SUMMARY_FIELDS)
    made = plots(out, meta, results)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({
            "meta": {k: v for k, v in meta.items() if not k.startswith("_")},
            "kvmprobe_ns_per_run": probes,
            "method": {"statistic": "paired t-test of the log ratios to the baseline, "
                       "two-sided, paired by repeat", "alpha": ALPHA,
                       "ci": "95%, Student t on the log scale (mean and ratio)",
                       "latency": "fio clat (completion latency)",
                       "guests": "IOPS and MB/s summed, mean latency I/O-weighted, p99 worst guest"},
            "configs": [configs[c]["label"] for c in sorted(configs)],
            "points": [dict(id=k, **v) for k, v in sorted(points.items())],
            "results": [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
            "problems": problems,
            "failed_attempts": meta["_failures"],
            "plots": [os.path.relpath(p, out) for p in made],
        }, f, indent=1)
    md = table_md(meta, results, problems, regress)
    if made:
        md += "\nPlots: " + ", ".join("`%s`" % os.path.relpath(p, out) for p in made) + "\n"
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(md)
    print(md)
    return 0 if results else 1

