"""devbench's directories (build/bench/devbench, bench/devbench.c:
the device without a guest, beside the host's own fio): not a command
of bench/vmbench, but a scenario all the same for `bench/vmbench
analyse DIR` and RESULTS.md.  A devbench directory holds the --json
file of each invocation (a "points" list); only invocations beside the
host's fio (a ratio_iops in a point) answer the page's question, a
--no-fio run compares builds or settings instead."""
import json
import math
import os

from . import pages, results
from .config import ConfigError
from .stats import mean_interval

NAME = "devbench"
HELP = "the device alone beside the host's own fio (build/bench/devbench; no command here)"
COMMAND = False


def is_invocation(data):
    """Whether a JSON file's DATA is a devbench invocation beside the
    host's fio."""
    return isinstance(data, dict) and "devbench" in data.get("command", "") and \
        any(p.get("ratio_iops") for p in data.get("points", []))


def invocations_under(pattern, recursive=False):
    """The invocations beside the host's fio in the JSON files PATTERN
    matches (results.glob), by directory: {dir: [invocation]}."""
    out = {}
    for path in sorted(results.glob(pattern, recursive=recursive)):
        if os.path.basename(path) in ("meta.json", "summary.json"):
            continue
        try:
            with results.open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if is_invocation(data):
            out.setdefault(os.path.dirname(path), []).append(data)
    return out


def invocations(d):
    """The invocations beside the host's fio in directory D."""
    return [i for invs in invocations_under(os.path.join(d, "*.json")).values() for i in invs]


def entry(d, invs, root):
    """standing.scan's entry for directory D with its invocations INVS."""
    return {"dir": d, "kind": NAME, "name": os.path.relpath(d, root),
            "date": max(pages.date_of(i.get("date")) for i in invs),
            "meta": {"command": invs[0]["command"], "machine": invs[0].get("machine")},
            "invocations": invs}


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


def devbench_lines(entry):
    out = ["devbench drives the device from the host (a driver thread plays the "
           "guest, no VM), beside the host's own fio on the same backing in the "
           "same invocation.", "",
           "| point | device IOPS (mean) | baseline | device / baseline, IOPS (95% CI) | invocations |",
           "|---|---:|---|---|---:|"]
    for p in devbench_points(entry):
        out.append("| %s | %.0f | %s | **%s** %s | %d |" % (
            p["name"], p["iops"], p["baseline"], pages.fmt_ratio(p["r"]), pages.verdict(p["r"]), p["r"]["n"]))
    out.append("")
    out += pages.data_line(entry, " (%d invocations)" % len(entry["invocations"]))
    return out


# ---- the scenario's entry points (scenario.py) ----------------------------------

def add_arguments(p):
    pass  # devbench is a program of its own (make devbench)


def check(args):
    raise ConfigError("devbench is build/bench/devbench, not a command of bench/vmbench")


def run(args):
    raise ConfigError("devbench is build/bench/devbench, not a command of bench/vmbench")


def is_result(out):
    return bool(invocations(out))


def analyse(out):
    """The points of OUT's invocations beside the host's fio, as the page
    gives them."""
    return "\n".join(devbench_lines(entry(out, invocations(out), os.path.dirname(out)))) + "\n"


def devbench_section(entries):
    """The newest devbench directory's points ([] without one)."""
    e = pages.newest(entries, NAME)
    return devbench_lines(e) if e else []


def sections(entries):
    return [("devbench", "The device alone beside the host's own fio (devbench)",
             devbench_section(entries))]
