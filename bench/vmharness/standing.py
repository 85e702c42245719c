"""bench/RESULTS.md: where the VMM stands now, written from bench/results/
by `bench/vmbench report` (issue 41).

For each question the page answers (ours beside QEMU per job on x86-64,
with one queue; ours beside kvmtool and QEMU on arm64; the device alone
beside the host's own fio; boot; how often guests die) the scenario that
measures it (its sections(), scenarios.PAGE's order) takes the newest
data directory under bench/results/ that answers it (the date in its
meta.json), recomputes the figures from the runs with the harness's own
statistics (bench/vmharness/stats.py) and writes the sentences from the
intervals.  This module finds the data (scan), frames the page, and
writes README's headline table and bench/headline.svg.  Nothing is typed by hand: a test (tests/py/test_standing.py)
writes the page again and fails when the committed one differs.  The
dated notebook, with the why behind each figure, is bench/JOURNAL.md.
"""
import json
import math
import os

from . import arm64peers_page, devbench, pages, profile_page, results, scenarios

ROOT = "bench/results"
RESULTS = "bench/RESULTS.md"
HEADLINE_SVG = "bench/headline.svg"
README = "README.md"
# README's headline table lies between these lines, written by report.
MARKS = ("<!-- headline: bench/vmbench report writes this table from bench/results -->",
         "<!-- /headline -->")
# The headline: the standard jobs (bench/README.md).
HEADLINE_JOBS = ("randread-4k", "randwrite-4k")


# ---- finding the data ------------------------------------------------------

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
        kind = pages.command_kind(meta.get("command"))
        if kind:
            found.append({"dir": os.path.dirname(path), "kind": kind,
                          "name": os.path.relpath(os.path.dirname(path), root),
                          "date": pages.date_of(meta.get("date")), "meta": meta})
    bench = devbench.invocations_under(os.path.join(root, "**", "*.json"), recursive=True)
    for d, invocations in bench.items():
        found.append(devbench.entry(d, invocations, root))
    return sorted(found, key=lambda e: (e["date"], e["dir"]), reverse=True)


# ---- the page ----------------------------------------------------------------

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
    for title, body in scenarios.sections(entries):
        if body:
            out += ["## " + title, ""] + body + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def headline_rows(root=ROOT):
    """The README's figures: ours against each peer on the standard jobs,
    both architectures, and the device alone against the host's fio,
    from the same data as RESULTS.md: [{where, job, peer, r, data}]."""
    entries = scan(root)
    rows = []
    nullb = profile_page.nullb_rows(entries)
    for r in nullb:  # on a block device where there is such data
        for p in profile_page.NULLB_PEERS:
            if p in r["iops"]:
                rows.append({"where": "x86-64, null_blk", "job": r["job"],
                             "peer": profile_page.role_title(p),
                             "r": r["iops"][p], "data": r["entry"]["name"]})
    if not nullb:
        rows += [{"where": "x86-64, tmpfs", "job": r["job"], "peer": "QEMU 7.2", "r": r["iops"],
                  "data": r["entry"]["name"]}
                 for r in profile_page.x86_rows(entries, jobs=HEADLINE_JOBS)]
    for r in profile_page.x86_rows(entries, other="vmm", base="kvmtool", jobs=HEADLINE_JOBS):
        rows.append({"where": "x86-64, tmpfs", "job": r["job"], "peer": "kvmtool", "r": r["iops"],
                     "data": r["entry"]["name"]})
    for backing, where in (("nullb", "arm64, null_blk"), ("file", "arm64")):
        ours, peers = arm64peers_page.ARM64_BACKINGS[backing]
        runs = arm64peers_page.arm64_entries(entries, backing)
        for peer, base in peers[::-1]:
            if base not in runs:
                continue
            for job in HEADLINE_JOBS:
                c = arm64peers_page.arm64_comparison(runs[base], base, job, ours=ours)
                if c and c["ratio"] is not None:
                    rows.append({"where": where, "job": job, "peer": peer, "r": c,
                                 "data": runs[base]["name"]})
    entry = pages.newest(entries, "devbench")
    if entry:
        for p in devbench.devbench_points(entry):
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
            h["where"], h["job"], h["peer"], pages.fmt_ratio(h["r"]), pages.verdict(h["r"]),
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


def write(check=False):
    """bench/vmbench report: write what outputs() gives where it differs
    (CHECK: write nothing); status 1 when CHECK finds a page that differs."""
    differ = []
    for path, text in outputs().items():
        try:
            with open(path) as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same:
            differ.append(path)
            if not check:
                with open(path, "w") as f:
                    f.write(text)
    if check:
        print("report: %s" % ("%s differ from the data (bench/vmbench report writes them)"
                              % ", ".join(differ) if differ else "the pages match the data"))
        return 1 if differ else 0
    print("report: %s" % ("wrote " + ", ".join(differ) if differ else "nothing changed"))
    return 0
