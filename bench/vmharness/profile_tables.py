"""profile's analysis (bench/vmbench profile, profile.py): each run's
counters per request (per_request), a table per job, and the paired
IOPS ratios of each of our configurations against every baseline that
ran beside it; RESULTS.md's profile sections (profile_page.py) read the
same per_request."""
import json
import os
import shlex
import statistics

from . import plan
from .stats import paired_log_ratio


def per_request(rec):
    """One run's figures divided by its I/Os."""
    ios = rec["fio"]["ios"] or 1
    if "counters" not in rec:  # the test host's own fio: no VMM to count
        return {"iops": rec["fio"]["iops"], "lat_mean_us": rec["fio"]["lat_mean_us"]}
    c = rec["counters"]
    k = c["kvm"]
    out = {"iops": rec["fio"]["iops"], "lat_mean_us": rec["fio"]["lat_mean_us"],
           "exits": k.get("exits", 0) / ios,
           "irq_injections": k.get("irq_injections", 0) / ios,
           "halt_exits": k.get("halt_exits", 0) / ios,
           "io_exits(userspace)": k.get("io_exits", 0) / ios,
           "mmio_exits(userspace)": k.get("mmio_exits", 0) / ios,
           "host_busy": c.get("host_busy") or 0}
    for reason, n in c["exit_reasons"].items():
        out["exit:" + reason] = n / ios
    for stage, v in (rec.get("device_latency_us") or {}).items():
        out["device_us:" + stage] = v
    # The guest's own count, all CPUs: which interrupts it took (timer,
    # IPIs, each queue's vector), where the host's counters say how many.
    for name, per_cpu in (rec.get("guest_irqs") or {}).items():
        out["guest_irq:" + name] = sum(per_cpu) / ios
    # The VMM process's CPU split: its vCPUs' time in the guest (the
    # guest's own work, whoever hosts it) and the rest, the VMM's own
    # cost (vCPU exits handled in KVM and in user space, iothreads, the
    # kernel's io_uring and io-wq work on its behalf).
    run = sum(t["run_ns"] for t in c["threads"].values())
    guest = sum(t.get("guest_ns", 0) for t in c["threads"].values())
    if any("guest_ns" in t for t in c["threads"].values()):
        out["cpu_us:guest"] = guest / 1e3 / ios
        out["cpu_us:vmm_own"] = (run - guest) / 1e3 / ios
    for kind, t in c["threads"].items():
        out["cpu_us:" + kind] = t["run_ns"] / 1e3 / ios
        out["wait_us:" + kind] = t["wait_ns"] / 1e3 / ios
        out["vcsw:" + kind] = t["vcsw"] / ios
        out["ivcsw:" + kind] = t["ivcsw"] / ios
    return out


def table(runs, configs, job):
    """Markdown: one row per figure, one column per configuration (mean
    over its runs, with the run count), QEMU-relative where it applies."""
    configs = [c for c in configs if any(r["config"] == c and r["job"] == job for r in runs)]
    per = {c: [per_request(r) for r in runs
               if r["config"] == c and r["job"] == job and "fio" in r]
           for c in configs}
    keys = []
    for rows in per.values():
        for row in rows:
            for k in row:
                if k not in keys:
                    keys.append(k)
    order = ["iops", "lat_mean_us", "exits", "irq_injections", "halt_exits",
             "io_exits(userspace)", "mmio_exits(userspace)", "host_busy"]
    keys = [k for k in order if k in keys] + sorted(k for k in keys if k not in order)
    lines = ["| per request (%s) | %s |" % (job, " | ".join(
        "%s (n=%d)" % (c, len(per[c])) for c in configs)),
        "|---|" + "---:|" * len(configs)]
    for k in keys:
        cells = []
        for c in configs:
            if k.startswith("guest_irq:"):
                # The guest lists only the rows that moved: absent is 0.
                vals = [row.get(k, 0.0) for row in per[c]
                        if any(x.startswith("guest_irq:") for x in row)]
            else:
                vals = [row[k] for row in per[c] if k in row]
            if not vals and k.split(":")[0] in ("device_us",):
                cells.append("n/a")
                continue
            vals = vals or [0.0] * len(per[c])
            if not vals:
                cells.append("-")
                continue
            m = statistics.mean(vals)
            fmt = "%.0f" if k == "iops" else ("%.1f" if "_us" in k else "%.3f")
            cells.append(fmt % m)
        lines.append("| %s | %s |" % (k, " | ".join(cells)))
    return "\n".join(lines)


def paired_ratio(runs, job, base, other, key="iops"):
    """The runs are paired by repeat (both ran in the same repeat of
    the same test-host boot): the geometric mean of other/base over the
    repeats where both have a result, with a t interval on the log scale
    (which cannot leave (0, inf)).  None if fewer than 2 pairs."""
    by = {}
    for r in runs:
        if r["job"] == job and "fio" in r and r["config"] in (base, other):
            by.setdefault(r["repeat"], {})[r["config"]] = r["fio"][key]
    pr = paired_log_ratio(by, base, other)
    if not pr:
        return None
    return dict(zip(("n", "ratio", "lo", "hi"), pr))


def ratio_lines(runs, configs, job):
    """Each of our configurations against every baseline that ran the
    job: vmm-X against qemu-X where there is one (else every QEMU), against
    kvmtool-X (else kvmtool), and against the test host's own fio; and
    kvmtool against QEMU."""
    out = []
    ran = [c for c in configs if any(r["config"] == c and r["job"] == job for r in runs)]
    qemus = [b for b in ran if b.startswith("qemu")]
    for c in ran:
        if c.startswith("kvmtool"):  # the two peers, QEMU the base
            out += [_ratio_line(runs, job, b, c) for b in qemus]
        if not c.startswith("vmm"):
            continue
        bases = ["qemu" + c[3:]] if c[3:] and "qemu" + c[3:] in qemus else list(qemus)
        kt = "kvmtool" + c[3:] if "kvmtool" + c[3:] in ran else "kvmtool"
        bases += [kt] if kt in ran else []
        bases += [b for b in ran if b.startswith("host")]
        for b in bases:
            out.append(_ratio_line(runs, job, b, c))
    return out


def _ratio_line(runs, job, base, c):
    pr = paired_ratio(runs, job, base, c)
    if not pr:
        return "%s / %s IOPS: fewer than 2 paired repeats" % (c, base)
    verdict = ("significantly higher" if pr["lo"] > 1 else
               "significantly lower" if pr["hi"] < 1 else "not significant")
    return "%s / %s IOPS: %.2fx (95%% CI %.2f-%.2f, %d paired repeats, %s)" % (
        c, base, pr["ratio"], pr["lo"], pr["hi"], pr["n"], verdict)


def planned_configs(out_dir):
    """The configurations' names in the order of the command's -c options
    (meta.json), the first the baseline; [] if it does not say."""
    try:
        with open(os.path.join(out_dir, "meta.json")) as f:
            words = shlex.split(json.load(f).get("command", ""))
    except (OSError, ValueError):
        return []
    out = []
    for i, w in enumerate(words[:-1]):
        if w in ("-c", "--config"):
            spec = words[i + 1]  # vmm, qemu or kvmtool[:k=v,...,name=N]
            opts = dict(kv.split("=", 1) for kv in spec.partition(":")[2].split(",")
                        if "=" in kv)
            out.append(opts.get("name", spec))
    return out


def analyse(out_dir):
    runs = plan.load_runs(out_dir)
    configs, jobs = [], []
    # The command's order (the first -c is the baseline), then any other.
    for c in planned_configs(out_dir) + [r["config"] for r in runs]:
        if c not in configs and any(r["config"] == c for r in runs):
            configs.append(c)
    for r in runs:
        if r["job"] not in jobs:
            jobs.append(r["job"])
    parts = []
    base = [c for p in ("host", "qemu", "kvmtool") for c in configs if c.startswith(p)]
    configs = base + [c for c in configs if c not in base]  # baselines first
    for job in jobs:
        parts.append(table(runs, configs, job))
        parts.append("\n".join(ratio_lines(runs, configs, job)))
        bad = [r for r in runs if r["job"] == job and "fio" not in r]
        if bad:
            parts.append("runs without a result: " + ", ".join(
                "%s r%d try%d (%s)" % (r["config"], r["repeat"], r["try"], r["outcome"]) for r in bad))
    text = "\n\n".join(parts) + "\n"
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(text)
    return text
