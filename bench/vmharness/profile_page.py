"""profile's sections of bench/RESULTS.md (profile.sections): ours
beside QEMU, kvmtool and the test host's own fio on null_blk and on
tmpfs, the control socket's cost, and seed 004's driver change under
each VMM, each from the newest profile directories that answer it
(ENTRIES: standing.scan's, newest first), recomputed from their runs.
The headline (standing.headline_rows) reads x86_rows and nullb_rows."""
import re

from . import config, pages, plan
from .profile_tables import per_request
from .stats import paired_ratio

# x86-64 jobs in the order the page lists them (guest/jobs/ names).
X86_JOBS = ("randread-4k", "randwrite-4k", "seq-read", "seq-write",
            "seed-randread", "seed-randwrite", "seed-seqread", "seed-seqwrite")


def _one_queue(entry):
    return "--queues 1" in entry["meta"].get("command", "")


def _backing(entry):
    """The kind of a profile's data disk: file, or nullb (--backing)."""
    m = re.search(r"--backing[ =](\S+)", entry["meta"].get("command", ""))
    return m.group(1).partition(":")[0] if m else "file"


# ---- x86-64: ours beside QEMU ----------------------------------------------

def _profile_pairs(runs, job, base, other, figure):
    by = {}
    for r in runs:
        if r["job"] == job and r["config"] in (base, other) and "fio" in r:
            by.setdefault(r["repeat"], {})[r["config"]] = per_request(r)[figure]
    return paired_ratio([(v[base], v[other]) for v in by.values() if base in v and other in v])


def _mean(runs, job, config, figure):
    xs = [per_request(r)[figure] for r in runs
          if r["job"] == job and r["config"] == config and "fio" in r]
    return sum(xs) / len(xs) if xs else None


def x86_rows(entries, one_queue=False, base="qemu", other="vmm", jobs=X86_JOBS):
    """Per job, the newest profile directory with both configurations:
    [{job, entry, iops, exits, irqs, ours, theirs, died}]."""
    rows = []
    for job in jobs:
        for e in entries:
            if e["kind"] != "profile" or _one_queue(e) != one_queue or _backing(e) != "file":
                continue
            runs = plan.load_runs(e["dir"])
            r = _profile_pairs(runs, job, base, other, "iops")
            if r["n"] < 2:
                continue
            ran = [x for x in runs if x["job"] == job and x["config"] in (base, other)]
            rows.append({
                "job": job, "entry": e, "iops": r,
                "exits": _profile_pairs(runs, job, base, other, "exits"),
                "irqs": _profile_pairs(runs, job, base, other, "irq_injections"),
                "ours": _mean(runs, job, other, "iops"), "theirs": _mean(runs, job, base, "iops"),
                "died": {c: (sum(1 for x in ran if x["config"] == c and "fio" not in x),
                             sum(1 for x in ran if x["config"] == c)) for c in (base, other)}})
            break
    return rows


def x86_section(entries, one_queue, base="qemu", peer="QEMU"):
    rows = x86_rows(entries, one_queue, base=base)
    if not rows:
        return []
    out = ["| job | ours IOPS | %s IOPS | ours / %s, IOPS (95%% CI) | pairs | "
           "exits per request, ours / %s | interrupts per request, ours / %s | data |"
           % (peer, peer, peer, peer),
           "|---|---:|---:|---|---:|---|---|---|"]
    for r in rows:
        out.append("| %s | %.0f | %.0f | **%s** %s | %d | %s | %s | %s |" % (
            r["job"], r["ours"], r["theirs"], pages.fmt_ratio(r["iops"]), pages.verdict(r["iops"]),
            r["iops"]["n"], pages.fmt_ratio(r["exits"]), pages.fmt_ratio(r["irqs"]),
            r["entry"]["name"]))
    out.append("")
    up = [r["job"] for r in rows if pages.verdict(r["iops"]) == "significantly higher"]
    down = [r["job"] for r in rows if pages.verdict(r["iops"]) == "significantly lower"]
    above = [r["job"] for r in rows if r["iops"]["ratio"] > 1]
    out.append("Ours is above %s by point estimate on %d of %d jobs; significantly "
               "higher on %s; significantly lower on %s; the rest not significant "
               "(95%% intervals of the paired ratio, t on the log scale)." % (
                   peer, len(above), len(rows), ", ".join(up) or "none",
                   ", ".join(down) or "none"))
    died = {}
    for r in rows:
        for c, (k, n) in r["died"].items():
            d = died.setdefault(c, [0, 0])
            d[0] += k
            d[1] += n
    out.append("Runs that died in these directories (and were run again): ours %d of %d, "
               "%s %d of %d (how often and why: the deaths section below)." % (
                   died["vmm"][0], died["vmm"][1], peer, died[base][0], died[base][1]))
    out.append("")
    for e in pages.unique(r["entry"] for r in rows):
        out += pages.data_line(e, " (jobs %s)" % ", ".join(r["job"] for r in rows if r["entry"] is e))
    return out


# ---- x86-64 on a real block device ------------------------------------------

# The roles of a null_blk profile's configurations, from its command's -c
# options: (role, column title, test of the parsed configuration).
NULLB_ROLES = (
    ("host", "the test host's fio", lambda c: c["kind"] == "host"),
    ("qemu10", "QEMU 10.0", lambda c: c["kind"] == "qemu"
     and c["opts"].get("bin") == config.QEMU_RELEASES["10"] and c["opts"].get("vqmap") == "on"),
    ("qemu", "QEMU 7.2", lambda c: c["kind"] == "qemu" and not c["opts"]),
    ("kvmtool", "kvmtool", lambda c: c["kind"] == "kvmtool" and not c["opts"]),
    ("vmm", "ours", lambda c: c["kind"] == "vmm" and not c["opts"]),
    ("vmm-poll0", "ours with poll=0", lambda c: c["kind"] == "vmm" and c["opts"] == {"poll": "0"}),
)
NULLB_PEERS = ("host", "qemu10", "qemu", "kvmtool")
# The VMMs whose own CPU per request a row shows (the host's fio has none).
NULLB_CPU_ROLES = ("vmm", "vmm-poll0", "qemu10", "qemu", "kvmtool")
# The jobs of the null_blk headline (issue 47's targets).
NULLB_JOBS = ("randread-4k", "randwrite-4k", "seed-randread")


def nullb_roles(entry):
    """{role: configuration name} of a null_blk profile's command."""
    words = entry["meta"].get("command", "").split()
    out = {}
    for i, w in enumerate(words[:-1]):
        if w not in ("-c", "--config"):
            continue
        try:
            c = config.parse(words[i + 1], "profile")
        except ValueError:
            continue
        for role, _, test in NULLB_ROLES:
            if test(c) and role not in out:
                out[role] = c["name"]
    return out


def nullb_rows(entries, jobs=NULLB_JOBS):
    """Per job and peer, the newest null_blk profile with ours and that
    peer paired at least twice (ENTRIES come newest first); one row per
    job and profile, holding the peers it is newest for: [{job, entry,
    roles, iops: {role: ratio of ours to it}, cpu: {role: mean VMM CPU us
    per request of its own}, cpu_r: {role: ours / it, VMM's own CPU per
    request}, ours, died}]."""
    rows = []
    for job in jobs:
        left = set(NULLB_PEERS)
        for e in entries:
            if not left:
                break
            if e["kind"] != "profile" or _backing(e) != "nullb":
                continue
            roles = nullb_roles(e)
            if "vmm" not in roles:
                continue
            runs = plan.load_runs(e["dir"])
            ours = roles["vmm"]
            iops = {r: _profile_pairs(runs, job, roles[r], ours, "iops")
                    for r in NULLB_PEERS if r in roles and r in left}
            iops = {r: v for r, v in iops.items() if v["n"] >= 2}
            if not iops:
                continue
            left -= set(iops)
            cpu = {r: _mean(runs, job, roles[r], "cpu_us:vmm_own")
                   for r in NULLB_CPU_ROLES
                   if r in roles and (r in iops or r.startswith("vmm"))}
            cpu_r = {r: _profile_pairs(runs, job, roles[r], ours, "cpu_us:vmm_own")
                     for r in iops if r != "host"}
            ran = [x for x in runs if x["job"] == job]
            rows.append({"job": job, "entry": e, "roles": roles, "iops": iops,
                         "cpu": {r: v for r, v in cpu.items() if v is not None},
                         "cpu_r": {r: v for r, v in cpu_r.items() if v["n"] >= 2},
                         "ours": _mean(runs, job, ours, "iops"),
                         "died": (sum(1 for x in ran if "fio" not in x), len(ran))})
    return rows


def role_title(role):
    """The column title of a null_blk profile's ROLE."""
    return next(t for r, t, _ in NULLB_ROLES if r == role)


def nullb_section(entries, jobs=()):
    """JOBS: profile's jobs, listed after X86_JOBS."""
    rows = nullb_rows(entries, X86_JOBS + tuple(j for j in jobs if j not in X86_JOBS))
    if not rows:
        return []
    peers = [r for r in NULLB_PEERS if any(r in row["iops"] for row in rows)]
    cpu_roles = [r for r in NULLB_CPU_ROLES
                 if any(r in row["cpu"] for row in rows)]
    out = ["The data disk is a null_blk device in the test host (memory-backed, "
           "completion after 10 us by a timer, 512-byte blocks unless the command "
           "says otherwise), opened with O_DIRECT by every VMM: ours through "
           "io_uring, QEMU with cache=none,aio=io_uring; \"the test host's fio\" "
           "is the same job run on the same device without a VM, the physical limit.  "
           "CPU: the VMM process's CPU time over the measured phase less its vCPUs' "
           "time in the guest (guest_time), per request.  Per job and peer, the "
           "newest profile that paired them: a job has one row per such profile.", "",
           "| job | ours IOPS | %s | VMM's own CPU us per request: %s | data |" % (
               " | ".join("ours / %s, IOPS (95%% CI, pairs)" % role_title(p) for p in peers),
               ", ".join(role_title(r) for r in cpu_roles)),
           "|---|---:|" + "---|" * len(peers) + "---|---|"]
    for row in rows:
        cells = []
        for p in peers:
            r = row["iops"].get(p)
            cells.append("**%s** %s, %d" % (pages.fmt_ratio(r), pages.verdict(r), r["n"]) if r else "-")
        cpu = ", ".join("%.1f" % row["cpu"][r] if r in row["cpu"] else "-" for r in cpu_roles)
        out.append("| %s | %.0f | %s | %s | %s |" % (row["job"], row["ours"], " | ".join(cells),
                                                     cpu or "-", row["entry"]["name"]))
    out.append("")
    for row in rows:
        words = ["ours / %s %s (%s)" % (role_title(p), pages.fmt_ratio(r), pages.verdict(r, "more", "less"))
                 for p, r in row["cpu_r"].items()]
        if words:
            out.append("VMM's own CPU per request, %s: %s." % (row["job"], "; ".join(words)))
    died = [sum(r["died"][0] for r in rows), sum(r["died"][1] for r in rows)]
    out.append("Runs without a result in these directories (run again): %d of %d." % tuple(died))
    out.append("")
    for e in pages.unique(r["entry"] for r in rows):
        out += pages.data_line(e, " (jobs %s)" % ", ".join(r["job"] for r in rows if r["entry"] is e))
    return out


# ---- the control socket's cost ---------------------------------------------

API_JOBS = ("randread-4k", "seed-randread", "seed-randwrite", "seed-seqread", "seed-seqwrite")


def api_section(entries):
    """Ours with the control socket polled every second (`vmm ctl stats
    --every 1s`) and a rate limit far above the disk's (configuration
    vmm-api) beside ours without either (vmm), paired in one boot."""
    rows = x86_rows(entries, False, base="vmm", other="vmm-api", jobs=API_JOBS)
    if not rows:
        return []
    out = ["| job | without IOPS | with IOPS | with / without, IOPS (95% CI) | pairs | data |",
           "|---|---:|---:|---|---:|---|"]
    for r in rows:
        out.append("| %s | %.0f | %.0f | **%s** %s | %d | %s |" % (
            r["job"], r["theirs"], r["ours"], pages.fmt_ratio(r["iops"]),
            pages.verdict(r["iops"], "faster", "slower"), r["iops"]["n"], r["entry"]["name"]))
    out.append("")
    slower = [r["job"] for r in rows if pages.verdict(r["iops"]) == "significantly lower"]
    out.append("With the socket polled and the limit set, significantly slower on %s; "
               "the other jobs' differences are not significant either way unless "
               "named here: %s faster (95%% intervals of the paired ratio)." % (
                   ", ".join(slower) or "no job",
                   ", ".join(r["job"] for r in rows
                             if pages.verdict(r["iops"]) == "significantly higher") or "none"))
    out.append("")
    for e in pages.unique(r["entry"] for r in rows):
        out += pages.data_line(e, " (jobs %s)" % ", ".join(r["job"] for r in rows if r["entry"] is e))
    return out


KERNEL_VMMS = (("vmm", "ours"), ("qemu", "QEMU"), ("kvmtool", "kvmtool"))


def seed004_peers_section(entries):
    """The newest profile run of the 2x2's two kernels under each VMM
    (configurations VMM-stock and VMM-noplug): does the driver change
    help or hurt on each device?"""
    for e in entries:
        if e["kind"] != "profile":
            continue
        runs = plan.load_runs(e["dir"])
        names = {r["config"] for r in runs}
        if {"vmm-stock", "vmm-noplug"} <= names:
            break
    else:
        return []
    jobs = []
    for r in runs:
        if r["job"] not in jobs:
            jobs.append(r["job"])
    out = ["The two kernels of the 2x2 above (stock and noplug, the guest kicking for "
           "every request) under each VMM, each on its default device settings "
           "(ours: no batching; the data disk a file on the test host's tmpfs for all "
           "three), IOPS:", "",
           "| job | VMM | stock | noplug | noplug / stock (95% CI) | pairs |",
           "|---|---|---:|---:|---|---:|"]
    said = []
    for job in jobs:
        for vmm, who in KERNEL_VMMS:
            a, b = vmm + "-stock", vmm + "-noplug"
            if not {a, b} <= names:
                continue
            r = _profile_pairs(runs, job, a, b, "iops")
            out.append("| %s | %s | %.0f | %.0f | **%s** %s | %d |" % (
                job, who, _mean(runs, job, a, "iops") or 0, _mean(runs, job, b, "iops") or 0,
                pages.fmt_ratio(r), pages.verdict(r, "faster", "slower"), r["n"]))
            v = pages.verdict(r, "faster", "slower")
            if v.startswith("significantly"):
                said.append("%s on %s: noplug %s (%s)" % (who, job, v, pages.fmt_ratio(r)))
    out.append("")
    out.append("Significant differences: %s." % ("; ".join(said) + "; every other row's "
                                                 "interval includes no change" if said else
                                                 "none (every interval includes no change)"))
    out.append("")
    out += pages.data_line(e)
    return out


def sections(entries, jobs=()):
    """[(key, title, lines)] in the order standing's page has them
    (scenarios.PAGE); JOBS: profile's job names."""
    return [
        ("nullb", "x86-64 on a block device (null_blk, O_DIRECT): ours beside the test host's "
         "own fio and QEMU (2 vCPUs, 2 queues)", nullb_section(entries, jobs)),
        ("tmpfs", "x86-64 on tmpfs: ours beside QEMU, per job (2 queues, one per vCPU; ours "
         "serves a tmpfs file in its iothread, without io_uring)", x86_section(entries, False)),
        ("tmpfs-1q", "x86-64 on tmpfs: ours beside QEMU with one queue",
         x86_section(entries, True)),
        ("tmpfs-kvmtool", "x86-64 on tmpfs: ours beside kvmtool (ours with one queue per vCPU, "
         "kvmtool's one queue)", x86_section(entries, False, "kvmtool", "kvmtool")),
        ("api", "x86-64: the control socket's cost (polled every second, a limit far above "
         "the disk)", api_section(entries)),
        ("seed004-peers", "Seed 004's driver change under ours, QEMU and kvmtool",
         seed004_peers_section(entries)),
    ]
