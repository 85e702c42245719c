"""bench/RESULTS.md: where the VMM stands now, written from bench/results/
by `bench/vmbench report` (issue 41).

For each question the page answers (ours beside QEMU per job on x86-64,
with one queue; ours beside kvmtool and QEMU on arm64; the device alone
beside the host's own fio; boot; how often guests die) it takes the
newest data directory under bench/results/ that answers it (the date in
its meta.json), recomputes the figures from the runs with the harness's
own statistics (bench/vmharness/stats.py) and writes the sentences from
the intervals.  Nothing is typed by hand: a test (tests/py/test_standing.py)
writes the page again and fails when the committed one differs.  The
dated notebook, with the why behind each figure, is bench/JOURNAL.md.
"""
import functools
import json
import math
import os
import re

from . import arm64peers, boot, deaths, hotplug, plan, profile, results
from .stats import mean_interval, paired_ratio

ROOT = "bench/results"
RESULTS = "bench/RESULTS.md"
HEADLINE_SVG = "bench/headline.svg"
README = "README.md"
# README's headline table lies between these lines, written by report.
MARKS = ("<!-- headline: bench/vmbench report writes this table from bench/results -->",
         "<!-- /headline -->")
# x86-64 jobs in the order the page lists them (guest/jobs/ names).
X86_JOBS = ("randread-4k", "randwrite-4k", "seq-read", "seq-write",
            "seed-randread", "seed-randwrite", "seed-seqread", "seed-seqwrite")
# The headline: the standard jobs (bench/README.md).
HEADLINE_JOBS = ("randread-4k", "randwrite-4k")


# ---- finding the data ------------------------------------------------------

def _date(s):
    """"YYYY-MM-DD HH:MM" of a meta.json or devbench date."""
    m = re.match(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d)", s or "")
    return "%s %s" % m.groups() if m else ""


def _kind(command):
    """The vmbench command of a meta.json's command line: its first word,
    "sweep" for the fio sweep's (bench/vmbench [OPTION]...: no command)."""
    m = re.search(r"bench/(?:vmbench|vmh)(?!\S)(.*)", command or "")
    if not m:
        return None
    words = m.group(1).split()
    return words[0] if words and not words[0].startswith("-") else "sweep"


def scan(root=ROOT):
    """Every data directory under ROOT: [{dir, kind, date, meta}], newest
    first.  vmbench's directories have a meta.json; devbench's have its
    --json files (a "points" list).  A directory may be packed
    (bench/results/pack.py): results reads it in place."""
    found = []
    for path in sorted(results.glob(os.path.join(root, "**", "meta.json"), recursive=True)):
        try:
            with results.open(path) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            continue
        kind = _kind(meta.get("command"))
        if kind:
            found.append({"dir": os.path.dirname(path), "kind": kind,
                          "name": os.path.relpath(os.path.dirname(path), root),
                          "date": _date(meta.get("date")), "meta": meta})
    bench = {}
    for path in sorted(results.glob(os.path.join(root, "**", "*.json"), recursive=True)):
        if os.path.basename(path) in ("meta.json", "summary.json"):
            continue
        try:
            with results.open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        # Only invocations beside the host's fio answer the devbench
        # question (a --no-fio run compares builds or settings instead).
        if isinstance(data, dict) and "devbench" in data.get("command", "") and \
                any(p.get("ratio_iops") for p in data.get("points", [])):
            bench.setdefault(os.path.dirname(path), []).append(data)
    for d, invocations in bench.items():
        found.append({"dir": d, "kind": "devbench", "name": os.path.relpath(d, root),
                      "date": max(_date(i.get("date")) for i in invocations),
                      "meta": {"command": invocations[0]["command"],
                               "machine": invocations[0].get("machine")},
                      "invocations": invocations})
    return sorted(found, key=lambda e: (e["date"], e["dir"]), reverse=True)


def _one_queue(entry):
    return "--queues 1" in entry["meta"].get("command", "")


def _backing(entry):
    """The kind of a profile's data disk: file, or nullb (--backing)."""
    m = re.search(r"--backing[ =](\S+)", entry["meta"].get("command", ""))
    return m.group(1).partition(":")[0] if m else "file"


# ---- words from intervals -------------------------------------------------

def fmt_ratio(r):
    """"1.86x (1.14-3.04)" of a paired_ratio, or its point alone."""
    if r["ratio"] is None:
        return "-"
    if r["lo"] is None:
        return "%.2fx (no interval)" % r["ratio"]
    return "%.2fx (%.2f-%.2f)" % (r["ratio"], r["lo"], r["hi"])


def verdict(r, more="higher", less="lower"):
    """Significance of a ratio from its 95% interval, in words."""
    if r["ratio"] is None or r["lo"] is None:
        return "no interval"
    if r["lo"] > 1:
        return "significantly " + more
    if r["hi"] < 1:
        return "significantly " + less
    return "not significant"


def _data_line(entry, what=""):
    m = entry["meta"]
    machine = m.get("machine")
    if isinstance(machine, dict):
        machine = "%s CPUs, %s, host kernel %s" % (machine.get("nproc"), machine.get("cpu"),
                                                   machine.get("kernel"))
    elif not machine:
        machine = "%s-core host (kernel %s), x86-64 test host: QEMU TCG with nested KVM" % (
            m.get("nproc", "?"), m.get("kernel", "?"))
    lines = ["- Data: `%s`%s, %s UTC" % (entry["dir"], what, entry["date"]),
             "- Command: `%s`" % m.get("command", "?"),
             "- Machine: %s" % machine]
    if m.get("git_head"):
        lines.append("- Code: %s%s, vmm sha256 %s..." % (
            m["git_head"][:7], " (with uncommitted changes)" if m.get("git_dirty") in (True, "True") else "",
            m.get("vmm_sha256", "?")[:12]))
    return lines


# ---- x86-64: ours beside QEMU ----------------------------------------------

def _profile_pairs(runs, job, base, other, figure):
    by = {}
    for r in runs:
        if r["job"] == job and r["config"] in (base, other) and "fio" in r:
            by.setdefault(r["repeat"], {})[r["config"]] = profile.per_request(r)[figure]
    return paired_ratio([(v[base], v[other]) for v in by.values() if base in v and other in v])


def _mean(runs, job, config, figure):
    xs = [profile.per_request(r)[figure] for r in runs
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
            r["job"], r["ours"], r["theirs"], fmt_ratio(r["iops"]), verdict(r["iops"]),
            r["iops"]["n"], fmt_ratio(r["exits"]), fmt_ratio(r["irqs"]),
            r["entry"]["name"]))
    out.append("")
    up = [r["job"] for r in rows if verdict(r["iops"]) == "significantly higher"]
    down = [r["job"] for r in rows if verdict(r["iops"]) == "significantly lower"]
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
    for e in _unique(r["entry"] for r in rows):
        out += _data_line(e, " (jobs %s)" % ", ".join(r["job"] for r in rows if r["entry"] is e))
    return out


def _unique(entries):
    seen, out = set(), []
    for e in entries:
        if e["dir"] not in seen:
            seen.add(e["dir"])
            out.append(e)
    return out


# ---- arm64: ours beside kvmtool and QEMU -----------------------------------

def arm64_summary(entry):
    """arm64peers' figures of ENTRY, recomputed from its runs (once per
    state of its runs.jsonl)."""
    runs = results.real(os.path.join(entry["dir"], "runs.jsonl"))
    return _arm64_summary(entry["dir"], os.stat(runs).st_mtime_ns if os.path.exists(runs) else 0,
                          json.dumps(entry["meta"], sort_keys=True))


@functools.lru_cache(maxsize=16)
def _arm64_summary(d, _mtime, meta_json):
    p, opts = arm64peers.read_plan(d)
    meta = json.loads(meta_json)
    meta.setdefault("seed_runtime", opts.get("runtime"))
    return arm64peers.analyse_data(d, p, arm64peers.load_runs(d), meta)[1]


# Per backing, our configuration and the peers' ones beside it (each like
# for like: the same file, or the same null_blk device with O_DIRECT).
ARM64_BACKINGS = {
    "file": ("vmm-file", (("kvmtool", "kvmtool-file"), ("QEMU 7.2", "qemu-file"))),
    "nullb": ("vmm-nullb", (("kvmtool", "kvmtool-nullb"), ("QEMU 7.2", "qemu-nullb"),
                            ("QEMU 10.0", "qemu10-nullb"),
                            ("the test host's fio", "host-nullb"))),
}


def arm64_entries(entries, backing="file"):
    """Per arm64 peer configuration of BACKING, the newest arm64-peers run
    that has it beside ours on the same disk: {base: entry}.  A run may
    measure one peer only (a rebuilt kvmtool measured again), so each
    peer's figures come from its own newest run."""
    ours, peers = ARM64_BACKINGS[backing]
    out = {}
    for _, base in peers:
        for e in entries:
            configs = e["meta"].get("configs") or ()
            if e["kind"] == "arm64-peers" and base in configs and ours in configs:
                out[base] = e
                break
    return out


def arm64_comparison(entry, base, job, phase=None, ours="vmm-file"):
    """OURS / BASE, IOPS, of JOB (and PHASE) in ENTRY, or None."""
    return next((c for c in arm64_summary(entry)["comparisons"]
                 if c["figure"] == "iops" and c["like_for_like"] and c["base"] == base
                 and c["other"] == ours and c["job"] == job
                 and (phase is None or c["phase"] == phase)), None)


ARM64_DISKS = {
    "file": "the same file (the arm64 test host's tmpfs)",
    "nullb": "the same block device (a memory-backed null_blk in the arm64 test host, "
             "512-byte blocks, 10 us completions, opened with O_DIRECT by every VMM)",
}


def arm64_section(entries, backing="file"):
    ours, peers = ARM64_BACKINGS[backing]
    runs = arm64_entries(entries, backing)
    if not runs:
        return []
    bases = [b for _, b in peers if b in runs]
    out = ["Like for like: our VMM and the peer on %s, paired by repeat, each peer "
           "from its newest run; the target is issue 38's (at least 1.5x kvmtool's "
           "IOPS, at least QEMU 7.2's)%s." % (
               ARM64_DISKS[backing], "" if not {"host-nullb", "qemu10-nullb"} & set(bases)
               else "; against QEMU 10.0 and the test host's own fio on the device (no VM) "
               "issue 47's, at least 1.3x and 0.8x"), "",
           "| job / phase | %s |" % " | ".join("%s / %s, IOPS (95%% CI) | target" % (ours, b)
                                            for b in bases),
           "|---|" + "---|---|" * len(bases)]
    keys = []
    for b in bases:
        for c in arm64_summary(runs[b])["comparisons"]:
            if c["base"] == b and c["other"] == ours and c["figure"] == "iops" \
                    and c["like_for_like"] and (c["job"], c["phase"]) not in keys:
                keys.append((c["job"], c["phase"]))
    for job, phase in keys:
        cells = []
        for b in bases:
            c = arm64_comparison(runs[b], b, job, phase, ours)
            if not c or c["ratio"] is None:
                cells += ["-", "-"]
                continue
            cells += ["**%s** %s, %d pairs" % (fmt_ratio(c), verdict(c), c["n"]),
                      c["target_verdict"]]
        title = job if phase == job else "%s / %s" % (job, phase)
        out.append("| %s | %s |" % (title, " | ".join(cells)))
    out.append("")
    for b in bases:
        words = []
        _, per_req, _ = arm64peers.collect(runs[b]["dir"], arm64peers.load_runs(runs[b]["dir"]))
        for job, by_cfg in per_req.items():
            for fig, name, more, fewer in (("interrupts", "interrupts", "more", "fewer"),
                                           ("exits", "exits", "more", "fewer"),
                                           ("vmm_own_us", "the VMM's own CPU", "more", "less")):
                r = arm64peers.compare(by_cfg, b, ours, fig)
                if r["ratio"] is not None:
                    words.append("%s %s %s (%s)" % (job, name, fmt_ratio(r),
                                                    verdict(r, more, fewer)))
        if words:
            out.append("Per request, %s / %s: %s." % (ours, b, "; ".join(words)))
    for e in _unique(runs[b] for b in bases):
        s = arm64_summary(e)
        if s["problems"]:
            out.append("Runs without a result in %s: %d (%s)." % (
                e["name"], len(s["problems"]), "; ".join(s["problems"][:3])))
    out.append("")
    for e in _unique(runs[b] for b in bases):
        out += _data_line(e, " (%s)" % ", ".join(b for b in bases if runs[b] is e))
    return out


# ---- x86-64 on a real block device ------------------------------------------

# The roles of a null_blk profile's configurations, from its command's -c
# options: (role, column title, test of the parsed configuration).
NULLB_ROLES = (
    ("host", "the test host's fio", lambda c: c["kind"] == "host"),
    ("qemu10", "QEMU 10.0", lambda c: c["kind"] == "qemu"
     and c["opts"].get("bin") == profile.QEMU_RELEASES["10"] and c["opts"].get("vqmap") == "on"),
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
            c = profile.parse_config(words[i + 1])
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


def _title(role):
    return next(t for r, t, _ in NULLB_ROLES if r == role)


def nullb_section(entries):
    rows = nullb_rows(entries, X86_JOBS + tuple(j for j in profile.JOBS if j not in X86_JOBS))
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
               " | ".join("ours / %s, IOPS (95%% CI, pairs)" % _title(p) for p in peers),
               ", ".join(_title(r) for r in cpu_roles)),
           "|---|---:|" + "---|" * len(peers) + "---|---|"]
    for row in rows:
        cells = []
        for p in peers:
            r = row["iops"].get(p)
            cells.append("**%s** %s, %d" % (fmt_ratio(r), verdict(r), r["n"]) if r else "-")
        cpu = ", ".join("%.1f" % row["cpu"][r] if r in row["cpu"] else "-" for r in cpu_roles)
        out.append("| %s | %.0f | %s | %s | %s |" % (row["job"], row["ours"], " | ".join(cells),
                                                     cpu or "-", row["entry"]["name"]))
    out.append("")
    for row in rows:
        words = ["ours / %s %s (%s)" % (_title(p), fmt_ratio(r), verdict(r, "more", "less"))
                 for p, r in row["cpu_r"].items()]
        if words:
            out.append("VMM's own CPU per request, %s: %s." % (row["job"], "; ".join(words)))
    died = [sum(r["died"][0] for r in rows), sum(r["died"][1] for r in rows)]
    out.append("Runs without a result in these directories (run again): %d of %d." % tuple(died))
    out.append("")
    for e in _unique(r["entry"] for r in rows):
        out += _data_line(e, " (jobs %s)" % ", ".join(r["job"] for r in rows if r["entry"] is e))
    return out


# ---- the device alone ------------------------------------------------------

def devbench_points(entry):
    """Per devbench point: {name, iops (mean), baseline, r (the geometric
    mean of the per-invocation ratios to the baseline, t interval)}."""
    points = {}
    for inv in entry["invocations"]:
        for p in inv["points"]:
            if p.get("ok") and p.get("ratio_iops"):
                points.setdefault(p["name"], []).append(p)
    out = []
    for name, ps in sorted(points.items()):
        n, _, _, (lo, hi) = mean_interval([p["ratio_iops"] for p in ps])
        out.append({"name": name, "iops": sum(p["iops"] for p in ps) / n,
                    "baseline": ps[0]["baseline"],
                    "r": {"n": n, "lo": lo, "hi": hi,
                          "ratio": math.exp(sum(math.log(p["ratio_iops"]) for p in ps) / n)}})
    return out


def devbench_section(entries):
    entry = next((e for e in entries if e["kind"] == "devbench"), None)
    if not entry:
        return []
    out = ["devbench drives the device from the host (a driver thread plays the "
           "guest, no VM), beside the host's own fio on the same backing in the "
           "same invocation.", "",
           "| point | device IOPS (mean) | baseline | device / baseline, IOPS (95% CI) | invocations |",
           "|---|---:|---|---|---:|"]
    for p in devbench_points(entry):
        out.append("| %s | %.0f | %s | **%s** %s | %d |" % (
            p["name"], p["iops"], p["baseline"], fmt_ratio(p["r"]), verdict(p["r"]), p["r"]["n"]))
    out.append("")
    out += _data_line(entry, " (%d invocations)" % len(entry["invocations"]))
    return out


# ---- boot and deaths: the analyses' own sentences ---------------------------

def _sentences(text, pattern):
    return [line for line in text.splitlines() if re.search(pattern, line)]


def boot_section(entries):
    entry = next((e for e in entries if e["kind"] == "boot"), None)
    if not entry:
        return []
    out = []
    # boot.analyse writes boot.md beside the runs: a packed directory's
    # unpacked copy takes it.
    for line in boot.analyse(results.real(entry["dir"])).splitlines():
        if line.startswith("## "):
            out.append("%s:" % line[3:].capitalize())
        elif re.match(r"- .*launch to (init|exit):", line):
            out.append(line)
    out.append("")
    out += _data_line(entry)
    return out


def deaths_section(entries):
    entry = next((e for e in entries if e["kind"] == "deaths"
                  and {"qemu", "vmm"} <= {r["config"] for r in plan.load_runs(e["dir"])}), None)
    if not entry:
        return []
    text = deaths.analyse(results.real(entry["dir"]))  # it writes deaths.md there
    out = ["- " + line for line in _sentences(text, r"^(All jobs|Per request):")]
    out.append("")
    out += _data_line(entry)
    return out


# ---- hot-plug: attach and detach times, empty slots' cost ------------------

def hotplug_section(entries):
    """Per architecture, the newest `bench/vmbench hotplug`: its times
    table and the datapath line, as hotplug.analyse writes them."""
    out = []
    for arch, title in (("x86_64", "x86-64"), ("arm64", "arm64")):
        entry = next((e for e in entries if e["kind"] == "hotplug"
                      and e["meta"].get("arch") == arch), None)
        if not entry:
            continue
        text = hotplug.analyse(results.real(entry["dir"]))
        body = [l for l in text.splitlines() if not l.startswith("# ")]
        while body and not body[0]:
            body.pop(0)
        out += ["%s:" % title, ""] + body + [""] + _data_line(entry) + [""]
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
            r["job"], r["theirs"], r["ours"], fmt_ratio(r["iops"]),
            verdict(r["iops"], "faster", "slower"), r["iops"]["n"], r["entry"]["name"]))
    out.append("")
    slower = [r["job"] for r in rows if verdict(r["iops"]) == "significantly lower"]
    out.append("With the socket polled and the limit set, significantly slower on %s; "
               "the other jobs' differences are not significant either way unless "
               "named here: %s faster (95%% intervals of the paired ratio)." % (
                   ", ".join(slower) or "no job",
                   ", ".join(r["job"] for r in rows
                             if verdict(r["iops"]) == "significantly higher") or "none"))
    out.append("")
    for e in _unique(r["entry"] for r in rows):
        out += _data_line(e, " (jobs %s)" % ", ".join(r["job"] for r in rows if r["entry"] is e))
    return out


# ---- seed 004 on today's driver: guest batching x device batching -----------

# Seed 004's own figures (kvmtool, RAM disk, 2012): IOPS change of its
# virtio_blk patch that removed plug/unplug and completion batching.
SEED004 = (("seq-read", 28), ("seq-write", 24), ("rnd-read", 21), ("rnd-write", 16))
SEED004_CFGS = ("stock-nobatch", "stock-batch", "noplug-nobatch", "noplug-batch")


def _sweep_labels(entry):
    """The configurations of a sweep's plan (plan.json), [] if unreadable."""
    try:
        with results.open(os.path.join(entry["dir"], "plan.json")) as f:
            return [c["label"] for c in json.load(f)["cfgs"]]
    except (OSError, ValueError, KeyError):
        return []


def _pair(results, phase, config, figure):
    r = next((r for r in results if r["phase"] == phase and r["config"] == config
              and r["figure"] == figure), None)
    if not r or r["ratio"] is None:
        return {"ratio": None, "lo": None, "hi": None, "n": 0}
    return {"ratio": r["ratio"], "lo": r["ratio_ci95"][0], "hi": r["ratio_ci95"][1],
            "n": r["pairs"]}


def _pct(r):
    """A ratio as a change in percent with its interval: "+8 % (-20 to +45 %)"."""
    if r["ratio"] is None:
        return "-"
    if r["lo"] is None:
        return "%+.0f %% (no interval)" % (100 * (r["ratio"] - 1))
    return "%+.0f %% (%+.0f to %+.0f %%)" % (100 * (r["ratio"] - 1), 100 * (r["lo"] - 1),
                                              100 * (r["hi"] - 1))


def seed004_section(entries):
    """The newest plan with the four configurations of seed 004's 2x2:
    the stock small kernel and guest/patches/noplug's, each under our
    device's default and batch=on."""
    from . import report
    found = next((e for e in entries if e["kind"] == "sweep"
                  and sorted(_sweep_labels(e)) == sorted(SEED004_CFGS)), None)
    if not found:
        return []
    d, meta = found["dir"], found["meta"]
    loaded = report.load(d)

    def results(baseline):
        m, points, configs, runs, _ = loaded
        m = dict(m, _baseline=baseline)
        return report.summarise(m, report.build_samples(m, points, configs, runs))
    by_stock, by_stock_batch = results("stock-nobatch"), results("stock-batch")
    cols = (("noplug / stock, device default (no batching)", by_stock, "noplug-nobatch"),
            ("noplug / stock, device batch=on", by_stock_batch, "noplug-batch"),
            ("batch=on / default, stock kernel", by_stock, "stock-batch"))
    out = ["Seed 004 removed plug/unplug and completion batching from the guest's "
           "virtio_blk in 2012 and measured IOPS +28/+24/+21/+16 % (seq-read, seq-write, "
           "rnd-read, rnd-write) under kvmtool on a RAM disk.  Linux 6.1's virtio_blk "
           "batches its kicks instead (`bd->last`, `queue_rqs`); guest/patches/noplug "
           "kicks for every request.  IOPS change, then mean completion latency change, "
           "each with its 95% interval:", "",
           "| phase | seed 004 | " + " | ".join(c[0] for c in cols) + " |",
           "|---|---:|" + "---|" * len(cols)]
    pairs = {}
    for phase, seed in SEED004:
        cells = []
        for title, res, cfg in cols:
            iops, lat = _pair(res, phase, cfg, "iops"), _pair(res, phase, cfg, "lat_mean_us")
            pairs[(phase, cfg)] = iops
            cells.append("IOPS %s; latency %s" % (_pct(iops), _pct(lat)))
        out.append("| %s | +%d %% | %s |" % (phase, seed, " | ".join(cells)))
    out.append("")
    n = max((p["n"] for p in pairs.values()), default=0)

    def said(cfg, what):
        sig = [ph for ph, _ in SEED004 if verdict(pairs[(ph, cfg)]) != "not significant"
               and verdict(pairs[(ph, cfg)]) != "no interval"]
        if not sig:
            return "%s: no phase significantly different (%d pairs each)" % (what, n)
        return "%s: significantly different on %s (%d pairs each)" % (
            what, ", ".join("%s %s" % (ph, _pct(pairs[(ph, cfg)])) for ph in sig), n)
    out.append("- " + said("noplug-nobatch", "The guest kicking for every request, "
                           "under our device's default") + "; the seed measured +16 to +28 %.")
    out.append("- " + said("noplug-batch", "The same under batch=on") + ".")
    out.append("- " + said("stock-batch", "Our device's batch=on with the stock kernel") + ".")
    out.append("")
    out += ["- Data: `%s` (table.md; the plot plots/ratio-iops-seed-virtio-blk.png; "
            "table-vs-stock-batch.md for the second column), %s" % (d, meta.get("date", "?")),
            "- Command: `%s`" % meta.get("command", "?"),
            "- Machine: %s; guests ran in the %s (%s)" % (meta.get("machine", "?"),
                                                        meta.get("where", "?"),
                                                        meta.get("testhost", "?")),
            "- Kernels: %s" % meta.get("kernels", "?"),
            "- Job: guest/jobs/seed-virtio-blk.fio reduced for the emulated test host "
            "(fio overrides: %s), %s" % (meta.get("fio_sets", "?"), meta.get("guest", "?"))]
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
                fmt_ratio(r), verdict(r, "faster", "slower"), r["n"]))
            v = verdict(r, "faster", "slower")
            if v.startswith("significantly"):
                said.append("%s on %s: noplug %s (%s)" % (who, job, v, fmt_ratio(r)))
    out.append("")
    out.append("Significant differences: %s." % ("; ".join(said) + "; every other row's "
                                                 "interval includes no change" if said else
                                                 "none (every interval includes no change)"))
    out.append("")
    out += _data_line(e)
    return out


# ---- the page ----------------------------------------------------------------

SECTIONS = (
    ("x86-64 on a block device (null_blk, O_DIRECT): ours beside the test host's own fio "
     "and QEMU (2 vCPUs, 2 queues)", nullb_section),
    ("x86-64 on tmpfs: ours beside QEMU, per job (2 queues, one per vCPU; ours serves "
     "a tmpfs file in its iothread, without io_uring)", lambda es: x86_section(es, False)),
    ("x86-64 on tmpfs: ours beside QEMU with one queue", lambda es: x86_section(es, True)),
    ("x86-64 on tmpfs: ours beside kvmtool (ours with one queue per vCPU, kvmtool's one "
     "queue)", lambda es: x86_section(es, False, "kvmtool", "kvmtool")),
    ("arm64 on a block device (null_blk, O_DIRECT): ours beside kvmtool and QEMU",
     lambda es: arm64_section(es, "nullb")),
    ("arm64: ours beside kvmtool and QEMU", arm64_section),
    ("x86-64: the control socket's cost (polled every second, a limit far above the disk)",
     api_section),
    ("Seed 004 on today's driver: guest batching x device batching", seed004_section),
    ("Seed 004's driver change under ours, QEMU and kvmtool", seed004_peers_section),
    ("The device alone beside the host's own fio (devbench)", devbench_section),
    ("Hot-plug: attach and detach times, and empty slots beside the disks given at launch",
     hotplug_section),
    ("Boot: launch to /init", boot_section),
    ("Deaths: how often guests die, ours and QEMU's", deaths_section),
)


def page(root=ROOT):
    """RESULTS.md's text."""
    entries = scan(root)
    out = ["# Results: where the VMM stands", "",
           "Written by `bench/vmbench report` from the data under bench/results/; "
           "do not edit by hand (tests/py/test_standing.py fails when this page and "
           "the data disagree).  Each section is the newest measurement that answers "
           "its question, with its command, machine, date and data directory; ratios "
           "are paired by repeat within one test-host boot, with 95% intervals (t on "
           "the log scale), and \"significantly\" means the interval leaves 1.  "
           "Absolute IOPS in the emulated test hosts mean little; the ratios are the "
           "result.  Why each figure is what it is, and every earlier measurement: "
           "bench/JOURNAL.md.  Method: bench/README.md.", ""]
    for title, section in SECTIONS:
        body = section(entries)
        if body:
            out += ["## " + title, ""] + body + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def headline_rows(root=ROOT):
    """The README's figures: ours against each peer on the standard jobs,
    both architectures, and the device alone against the host's fio,
    from the same data as RESULTS.md: [{where, job, peer, r, data}]."""
    entries = scan(root)
    rows = []
    nullb = nullb_rows(entries)
    for r in nullb:  # on a block device where there is such data
        for p in NULLB_PEERS:
            if p in r["iops"]:
                rows.append({"where": "x86-64, null_blk", "job": r["job"], "peer": _title(p),
                             "r": r["iops"][p], "data": r["entry"]["name"]})
    if not nullb:
        rows += [{"where": "x86-64, tmpfs", "job": r["job"], "peer": "QEMU 7.2", "r": r["iops"],
                  "data": r["entry"]["name"]} for r in x86_rows(entries, jobs=HEADLINE_JOBS)]
    for r in x86_rows(entries, other="vmm", base="kvmtool", jobs=HEADLINE_JOBS):
        rows.append({"where": "x86-64, tmpfs", "job": r["job"], "peer": "kvmtool", "r": r["iops"],
                     "data": r["entry"]["name"]})
    for backing, where in (("nullb", "arm64, null_blk"), ("file", "arm64")):
        ours, peers = ARM64_BACKINGS[backing]
        runs = arm64_entries(entries, backing)
        for peer, base in peers[::-1]:
            if base not in runs:
                continue
            for job in HEADLINE_JOBS:
                c = arm64_comparison(runs[base], base, job, ours=ours)
                if c and c["ratio"] is not None:
                    rows.append({"where": where, "job": job, "peer": peer, "r": c,
                                 "data": runs[base]["name"]})
    entry = next((e for e in entries if e["kind"] == "devbench"), None)
    if entry:
        for p in devbench_points(entry):
            rows.append({"where": "x86-64 host, no VM", "job": p["name"],
                         "peer": "host fio (%s)" % p["baseline"], "r": p["r"],
                         "data": entry["name"]})
    return rows


def headline(root=ROOT):
    """README's headline table (markdown)."""
    out = ["| machine | job | ours against | ours / it, IOPS (95% CI) | pairs | data |",
           "|---|---|---|---|---:|---|"]
    for h in headline_rows(root):
        out.append("| %s | %s | %s | **%s** %s | %d | bench/results/%s |" % (
            h["where"], h["job"], h["peer"], fmt_ratio(h["r"]), verdict(h["r"]),
            h["r"]["n"], h["data"]))
    return "\n".join(out) + "\n"


def headline_svg(root=ROOT):
    """The same figures as a plot: one bar per row, the ratio on a log
    scale with its interval, a line at 1 (as fast as the peer)."""
    rows = headline_rows(root)
    lo_x, hi_x, left, width, step = 0.25, 8.0, 330, 500, 26
    top = 56  # two lines of title
    height = top + 20 + step * len(rows)

    def x(v):
        v = min(max(v, lo_x), hi_x)
        return left + width * math.log(v / lo_x) / math.log(hi_x / lo_x)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (left + width + 20, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-weight="bold">ours / peer, IOPS: paired ratios, '
           '95% interval (log scale)</text>',
           '<text x="10" y="34" font-size="11">green: significantly above 1, grey: not '
           'significant, red: significantly below</text>']
    for t in (0.25, 0.5, 1, 2, 4, 8):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>' % (
            x(t), top - 10, x(t), height - 24, "black" if t == 1 else "#ddd"))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%gx</text>' % (
            x(t), height - 8, t))
    for i, h in enumerate(rows):
        y = top + step * i
        r = h["r"]
        color = "#2a7" if r["lo"] is not None and r["lo"] > 1 else (
            "#c33" if r["hi"] is not None and r["hi"] < 1 else "#999")
        out.append('<text x="10" y="%d">%s, %s: vs %s</text>' % (
            y + 12, h["where"], h["job"], h["peer"].split(" (")[0]))
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="14" fill="%s"/>' % (
            min(x(1), x(r["ratio"])), y + 2, abs(x(r["ratio"]) - x(1)), color))
        if r["lo"] is not None:
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>' % (
                x(r["lo"]), y + 9, x(r["hi"]), y + 9))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def outputs(root=ROOT):
    """{path: text} of everything `bench/vmbench report` writes: the page,
    the plot, and README with its headline table replaced."""
    with open(README) as f:
        readme = f.read()
    a, b = readme.find(MARKS[0]), readme.find(MARKS[1])
    if a < 0 or b < a:
        raise ValueError("%s: no headline markers (%s ... %s)" % (README, MARKS[0], MARKS[1]))
    readme = readme[:a + len(MARKS[0])] + "\n" + headline(root) + readme[b:]
    return {RESULTS: page(root), HEADLINE_SVG: headline_svg(root), README: readme}
