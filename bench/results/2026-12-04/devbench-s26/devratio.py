import json, math, statistics as st, sys
d = sys.argv[1]
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}
rows = {}
for i in range(1, 7):
    try:
        a = json.load(open(f"{d}/p{i}-s25base.json")); b = json.load(open(f"{d}/p{i}-s26c.json"))
    except FileNotFoundError:
        continue
    pa = {p["name"]: p for p in a["points"]}; pb = {p["name"]: p for p in b["points"]}
    for n in pa:
        for k in ("iops", "device_cpu_us_per_req"):
            rows.setdefault((n, k), []).append(math.log(pb[n][k] / pa[n][k]))
for (n, k), lr in sorted(rows.items()):
    m = st.mean(lr); h = T[len(lr) - 1] * st.stdev(lr) / math.sqrt(len(lr))
    lo, hi = math.exp(m - h), math.exp(m + h)
    print("%-28s %-22s s26c/s25base %.3fx (%.3f-%.3f) %s n=%d" % (n, k, math.exp(m), lo, hi, "sig" if lo > 1 or hi < 1 else "n.s.", len(lr)))
