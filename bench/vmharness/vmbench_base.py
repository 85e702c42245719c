"""What the halves of bench/vmbench share (vmbench.py: the options and
the plan; vmbench_run.py: the runs; vmbench_hw.py: hw-check): usage
errors and progress lines, sizes and times, the fio job rewriter, the
order of the runs, the host's facts and OUT/meta.json."""
import json
import os
import re
import subprocess
import sys

from . import paths, plan
from .config import ConfigError


class Error(ConfigError):
    """Bad use: one line on stderr, status 2, nothing created (a
    ConfigError, the one error type of bench/vmbench's refusals)."""


def say(msg):
    print("vmbench: %s" % msg, file=sys.stderr, flush=True)


def hms(s):
    """Seconds as "1m05s"."""
    s = int(s)
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s


def size_mb(v):
    """A size (512M, 1G, 64k, 1024) in MiB."""
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", str(v))
    if not m:
        raise Error("bad size '%s' (N, Nk, NM or NG)" % v)
    n, u = int(m.group(1)), m.group(2).lower()
    return {"k": (n + 1023) // 1024, "m": n, "g": n * 1024, "": n}[u]


def expand_list(s):
    """"1-4" and "1,2,4" as lists of words."""
    out = []
    for w in s.split(","):
        a, dash, b = w.partition("-")
        if dash and a.isdigit() and b.isdigit():
            out += [str(i) for i in range(int(a), int(b) + 1)]
        elif w:
            out.append(w)
    return out


def positive(s):
    return bool(re.fullmatch(r"[0-9]+", s)) and int(s) > 0


def _key(line):
    return re.sub(r"[ \t]*=.*", "", line)


def rewrite_job(text, sets=(), drop=()):
    """A fio job file without its comments and blank lines, with each
    K=V of SETS put into [global] (every other line setting K, in any
    section, removed) and every line setting a key of DROP removed."""
    skip = {_key(s) for s in sets} | set(drop)
    out, seen_global = [], False
    for raw in text.splitlines():
        line = raw.strip(" \t\r")
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            if not seen_global:
                out += ([line] if line == "[global]" else ["[global]"]) + list(sets)
                seen_global = True
                if line == "[global]":
                    continue
            out.append(line)
            continue
        if _key(line) not in skip:
            out.append(line)
    if not seen_global:
        out += ["[global]"] + list(sets)
    return "\n".join(out) + "\n"


def run_order(plan_, repeat):
    """The runs of REPEAT (1-based) in their order: [(guests, queues,
    cfg index)], shuffled with the plan's seed (plan.rounds), the same on
    every resume."""
    cfgs = [{"name": str(i), "opts": {}} for i in range(len(plan_["cfgs"]))]
    units = ["%s|%s" % (g, q) for g in plan_["glist"] for q in plan_["qlist"]]
    out = []
    for rnd, _, cfg, unit in plan.rounds(cfgs, units, plan_["repeats"], plan_["seed"]):
        if rnd == repeat - 1:
            g, q = unit.split("|")
            out.append((int(g), q, int(cfg["name"])))
    return out


def run_queues(plan_, cfg, q):
    """The queue count of a run ("-" for the host: it has none, and runs
    once per queue count swept so that each group has its row)."""
    if cfg["kind"] == "host":
        return q or "-"
    return q or cfg["queues"] or str(plan_["cpus"])


def git(*args, check=False):
    r = subprocess.run(["git", "-C", paths.REPO] + list(args), capture_output=True, text=True)
    if check and r.returncode:
        raise Error("git %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout.strip() if r.returncode == 0 else None


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for l in f:
            if l.startswith("model name"):
                return l.split(":", 1)[1].strip()
    return "?"


def machine_line():
    return "%s, %d cores, %.0f GiB" % (cpu_model(), os.cpu_count(), mem_total_gib())


def mem_total_gib():
    with open("/proc/meminfo") as f:
        for l in f:
            if l.startswith("MemTotal"):
                return int(l.split()[1]) / 1048576
    return 0.0


def read_meta(out):
    """OUT/meta.json ({} before prepare writes it)."""
    path = os.path.join(out, "meta.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def add_meta(out, **fields):
    """FIELDS into OUT/meta.json, written in steps (the plan, each part of
    the runs, each test-host boot); a field given again replaces its
    value."""
    meta = dict(read_meta(out), **fields)
    path = os.path.join(out, "meta.json")
    with open(path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(path + ".tmp", path)


def self_path():
    """This program (bench/vmbench)."""
    return os.path.abspath(sys.argv[0])
