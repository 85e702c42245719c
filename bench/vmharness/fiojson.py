"""fio's JSON output: found between guest/init's markers, summarised."""
import json
import re

from . import markers

BEGIN = re.compile(r"^=== FIO-JSON BEGIN (\S+) ===$")
END = re.compile(r"^=== FIO-JSON END (\S+) rc=(\d+) ===$")


def extract(lines):
    """{name: (rc, parsed JSON or None)} for every marked block."""
    out = {}
    for name, end, body in markers.blocks(lines, BEGIN, END):
        text = "\n".join(body)
        try:
            doc = json.loads(text[text.index("{"):]) if "{" in text else None
        except ValueError:
            doc = None
        out[name] = (int(end.group(2)), doc)
    return out


def summary(doc):
    """Totals over all jobs of one fio run: I/Os, IOPS, MB/s, mean and
    p99 completion latency (us, the read side if any, else write)."""
    s = {"ios": 0, "iops": 0.0, "bw_mbs": 0.0, "lat_mean_us": None,
         "lat_p99_us": None, "runtime_s": 0.0}
    for job in doc.get("jobs", []):
        for side in ("read", "write"):
            d = job.get(side, {})
            s["ios"] += d.get("total_ios", 0)
            s["iops"] += d.get("iops", 0.0)
            s["bw_mbs"] += d.get("bw_bytes", 0) / 1e6
            if d.get("total_ios") and s["lat_mean_us"] is None:
                clat = d.get("clat_ns", {})
                s["lat_mean_us"] = clat.get("mean", 0) / 1e3
                pct = clat.get("percentile", {})
                if "99.000000" in pct:
                    s["lat_p99_us"] = pct["99.000000"] / 1e3
            s["runtime_s"] = max(s["runtime_s"], d.get("runtime", 0) / 1e3)
    return s
