#!/usr/bin/python3
"""bench/devbench-ab.py OUT NAME=PATH NAME=PATH... [--rounds N] [-- devbench options...]

devbench binaries (a build before a change and builds after it) paired:
in each round every build runs the same rows, in a random order (seeded,
recorded), each into OUT/ROUND-NAME.json.  At the end, per row, the
paired ratio of each build to the first (the baseline) in IOPS and in the
device's CPU time per request (geometric mean, 95% interval on the log
scale, paired t-test), as a table on stdout and OUT/summary.json.  The machine is shared and noisy:
only the paired ratios mean anything.

    bench/devbench-ab.py /tmp/ab old=/tmp/old/devbench \\
        new=build/bench/devbench --rounds 8 -- --no-fio --seconds 2 \\
        --filter loop-randread-qd32-1q-off,loop-randwrite-qd32-1q-off
"""
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
from vmharness import stats  # noqa: E402

METRICS = (("iops", "IOPS"), ("device_cpu_us_per_req", "device CPU us/req"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("builds", nargs="+", metavar="NAME=PATH",
                    help="devbench binaries; the first is the baseline")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    extra = argv[cut + 1:]
    builds = dict(b.split("=", 1) if "=" in b else ("b%d" % i, b)
                  for i, b in enumerate(a.builds))
    names = list(builds)
    if len(names) < 2:
        ap.error("two builds or more")
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    plan = []
    for r in range(a.rounds):
        order = list(names)
        rng.shuffle(order)
        plan.append(order)
    with open(os.path.join(a.out, "plan.json"), "w") as f:
        json.dump({"builds": builds, "args": extra, "seed": a.seed,
                   "order": plan, "argv": sys.argv}, f, indent=1)
    runs = {}
    for r, order in enumerate(plan):
        for which in order:
            path = os.path.join(a.out, "%02d-%s.json" % (r, which))
            p = subprocess.run([builds[which], "--json", path] + extra,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode or not os.path.exists(path):
                print("round %d %s failed: %s" % (r, which, p.stderr.strip()[-300:]), file=sys.stderr)
                continue
            with open(path) as f:
                for pt in json.load(f)["points"]:
                    if pt.get("ok"):
                        runs.setdefault(pt["name"], {}).setdefault(r, {})[which] = pt
    summary = {}
    base = names[0]
    print("| row | metric | build | %s (mean) | build (mean) | build/%s | 95%% interval | p | pairs |"
          % (base, base))
    print("|---|---|---|---:|---:|---:|---|---:|---:|")
    for name, by_round in sorted(runs.items()):
        for key, label in METRICS:
            for other in names[1:]:
                pairs = [(v[base][key], v[other][key]) for v in by_round.values()
                         if base in v and other in v]
                res = stats.paired_ratio(pairs)
                summary.setdefault(name, {}).setdefault(key, {})[other] = dict(res, pairs=pairs)
                if not res["n"]:
                    continue
                mb = sum(b for b, _ in pairs) / len(pairs)
                mn = sum(o for _, o in pairs) / len(pairs)
                ci = "%.2f-%.2f" % (res["lo"], res["hi"]) if res["lo"] else "-"
                pv = "%.3f" % res["p"] if res["p"] is not None else "-"
                print("| %s | %s | %s | %.1f | %.1f | %.3f | %s | %s | %d |"
                      % (name, label, other, mb, mn, res["ratio"], ci, pv, res["n"]))
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
