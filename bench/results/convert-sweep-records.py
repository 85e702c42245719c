#!/usr/bin/python3
"""bench/results/convert-sweep-records.py [DIR ...]: vmbench's sweep
records from their old format (OUT/meta.tsv, runs.tsv, points.tsv,
failures.tsv) to the one every scenario writes (issue 50), run once.

Each plan directory holding a meta.tsv (a --hunt's holds several):
meta.tsv -> meta.json, one value per key, its last line's (what the
report read; an earlier one that differed is in git's history), but
inner_seconds summed; numbers, queues_swept and regress typed.
runs.tsv -> runs.jsonl, the columns' names, numbers as numbers, "none"
and "-" as null (and kernel where the oldest plans had no such column).
failures.tsv -> failures.jsonl.  points.tsv: checked against plan.json's
points, removed.  A packed run directory (DIR.tar.xz) whose archive
holds a meta.tsv is unpacked, converted and packed again (pack.py, which
writes DIR.md anew); any other is left alone.  Default: every run
directory under bench/results.  Python 3's standard library only.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pack  # noqa: E402


def _none_or(conv):
    return lambda v: None if v in ("-", "none") else conv(v)


RUN_FIELDS = {"run": str, "repeat": int, "cfg": int, "label": str, "kind": str,
              "queues": _none_or(int), "guests": int, "point": int, "guest": int,
              "rc": _none_or(int), "json": str, "probe_ns": _none_or(float), "pos": int,
              "kernel": _none_or(str)}
META_FIELDS = {"repeats": int, "inner_nproc": int, "testhost_boots": int,
               "queues_swept": lambda v: v == "1", "regress": lambda v: v.split("\t"),
               "order_seed": lambda v: int(v.split()[0])}


def tsv_rows(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def meta_of(rows):
    meta = {}
    for k, *v in rows:
        v = "\t".join(v)
        meta[k] = (meta.get(k, 0) + int(v) if k == "inner_seconds"
                   else META_FIELDS.get(k, str)(v))
    return meta


def runs_of(rows):
    head = rows[0] + ["kernel"] * (rows[0][-1] != "kernel")
    if any(len(r) != len(rows[0]) for r in rows):
        raise ValueError("runs.tsv: a row of the wrong length")
    return [{k: RUN_FIELDS[k](v) for k, v in zip(head, r + ["-"])} for r in rows[1:]]


def failures_of(rows):
    return [{"run": r[0], "attempt": int(r[1]), "why": "\t".join(r[2:])} for r in rows]


def write_jsonl(path, objs):
    with open(path, "w") as f:
        f.writelines(json.dumps(o) + "\n" for o in objs)


def convert_plan(d):
    p = lambda name: os.path.join(d, name)
    with open(p("plan.json")) as f:
        points = [{"job": j, "params": "" if ps == "-" else ps}
                  for _, j, ps in tsv_rows(p("points.tsv"))]
        if points != json.load(f)["points"]:
            raise ValueError("%s: points.tsv and plan.json differ" % d)
    with open(p("meta.json"), "x") as f:
        json.dump(meta_of(tsv_rows(p("meta.tsv"))), f, indent=1)
    write_jsonl(p("runs.jsonl"), runs_of(tsv_rows(p("runs.tsv"))))
    if os.path.exists(p("failures.tsv")):
        write_jsonl(p("failures.jsonl"), failures_of(tsv_rows(p("failures.tsv"))))
    for name in ("meta.tsv", "runs.tsv", "points.tsv", "failures.tsv"):
        if os.path.exists(p(name)):
            os.unlink(p(name))


def convert(d):
    arch = d + pack.SUFFIX
    if not (os.path.isfile(arch) and any(n.split("/")[-1] == "meta.tsv"
                                         for n in pack.read_archive(arch))):
        return "%s: no meta.tsv, left alone" % d
    pack.unpack(d)
    plans = sorted(top for top, _, files in os.walk(d) if "meta.tsv" in files)
    for p in plans:
        convert_plan(p)
    return "%s: %d plan(s) converted; %s" % (d, len(plans), pack.pack(d))


def main(argv):
    for d in argv or pack.run_dirs():
        print(convert(os.path.normpath(d)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
