"""arm64-peers' sections of bench/RESULTS.md (arm64peers.sections):
ours beside kvmtool, QEMU and the test host's own fio in the arm64 test
host, on null_blk and on tmpfs, each peer from the newest arm64-peers
directory that measured it beside ours (ENTRIES: standing.scan's),
recomputed through arm64peers_analysis.  The headline
(standing.headline_rows) reads arm64_entries and arm64_comparison."""
import functools
import json
import os

from . import arm64peers_analysis as analysis
from . import pages, results


def arm64_summary(entry):
    """arm64peers' figures of ENTRY, recomputed from its runs (once per
    state of its runs.jsonl)."""
    runs = results.real(os.path.join(entry["dir"], "runs.jsonl"))
    return _arm64_summary(entry["dir"], os.stat(runs).st_mtime_ns if os.path.exists(runs) else 0,
                          json.dumps(entry["meta"], sort_keys=True))


@functools.lru_cache(maxsize=16)
def _arm64_summary(d, _mtime, meta_json):
    p, opts = analysis.read_plan(d)
    meta = json.loads(meta_json)
    meta.setdefault("seed_runtime", opts.get("runtime"))
    return analysis.analyse_data(d, p, analysis.load_runs(d), meta)[1]


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
            cells += ["**%s** %s, %d pairs" % (pages.fmt_ratio(c), pages.verdict(c), c["n"]),
                      c["target_verdict"]]
        title = job if phase == job else "%s / %s" % (job, phase)
        out.append("| %s | %s |" % (title, " | ".join(cells)))
    out.append("")
    for b in bases:
        words = []
        _, per_req, _ = analysis.collect(runs[b]["dir"], analysis.load_runs(runs[b]["dir"]))
        for job, by_cfg in per_req.items():
            for fig, name, more, fewer in (("interrupts", "interrupts", "more", "fewer"),
                                           ("exits", "exits", "more", "fewer"),
                                           ("vmm_own_us", "the VMM's own CPU", "more", "less")):
                r = analysis.compare(by_cfg, b, ours, fig)
                if r["ratio"] is not None:
                    words.append("%s %s %s (%s)" % (job, name, pages.fmt_ratio(r),
                                                    pages.verdict(r, more, fewer)))
        if words:
            out.append("Per request, %s / %s: %s." % (ours, b, "; ".join(words)))
    for e in pages.unique(runs[b] for b in bases):
        s = arm64_summary(e)
        if s["problems"]:
            out.append("Runs without a result in %s: %d (%s)." % (
                e["name"], len(s["problems"]), "; ".join(s["problems"][:3])))
    out.append("")
    for e in pages.unique(runs[b] for b in bases):
        out += pages.data_line(e, " (%s)" % ", ".join(b for b in bases if runs[b] is e))
    return out


def sections(entries):
    """[(key, title, lines)] in the order standing's page has them."""
    return [("nullb", "arm64 on a block device (null_blk, O_DIRECT): ours beside kvmtool and QEMU",
             arm64_section(entries, "nullb")),
            ("file", "arm64: ours beside kvmtool and QEMU", arm64_section(entries))]
