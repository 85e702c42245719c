#!/bin/bash
# tests/bench-smoke.sh: a short run of bench/vmbench, for `make test`.
#
# One repeat of one tiny job (randread-4k for 1 s, at two block sizes in
# the same boot) under two configurations, our VMM and the host's own fio,
# then checks that every output exists and parses: the markdown table,
# samples.csv, summary.csv, summary.json (figures for both configurations
# and both block sizes, no failed run) and a PNG plot, and that the VMM's
# CPU over each point is in runs.jsonl and the table.  Also checks that
# a bad configuration is refused; README.md's examples run as written
# (tests/readme-examples.sh).  Guests run inside the test host when this host's KVM is slow
# (bench/vmbench decides with `vmm probe`, under flock /tmp/testhost.lock):
# about 40-60 s there.  Needs build/vmm (make), python3 and gnuplot
# (tests/deps.sh installs both).
#
# Prints PASS/FAIL per check and "N passed, N failed"; exit status 0 only
# if all passed.  BENCH_SMOKE_OUT=DIR for the results (build/bench-smoke).
set -u
cd "$(dirname "$0")/.."
OUT=${BENCH_SMOKE_OUT:-build/bench-smoke}
pass=0
fail=0

ok() { echo "PASS $*"; pass=$((pass + 1)); }
nok() { echo "FAIL $*"; fail=$((fail + 1)); }

# 1. Bad input: one clear error, status 2, nothing run.
rc=0
rm -rf "$OUT-bad"
err=$(bench/vmbench -c nosuch -o "$OUT-bad" 2>&1) || rc=$?
if [ "$rc" = 2 ] && [ ! -e "$OUT-bad" ] && printf '%s' "$err" | grep -q 'bad configuration'; then
	ok "bad configuration refused"
else
	nok "bad configuration refused (status $rc: $err)"
fi

# 2. The run itself.
rm -rf "$OUT"
t0=$(date +%s)
rc=0
bench/vmbench -c vmm -c host -r 1 --runtime 1 --bs 4k,16k --disk-size 64M --cpus 1 \
	--title "bench smoke" -o "$OUT" >"$OUT.stdout" 2>"$OUT.stderr" || rc=$?
if [ "$rc" = 0 ]; then
	ok "vmbench run ($(($(date +%s) - t0))s)"
else
	nok "vmbench run: status $rc"
	tail -n 30 "$OUT.stderr" | sed 's/^/     | /'
fi

# 3. Outputs exist.
missing=
for f in table.md samples.csv summary.csv summary.json runs.jsonl meta.json \
	plots/iops-vs-bs-randread-4k-read.png; do
	[ -s "$OUT/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then ok "outputs exist"; else nok "outputs missing:$missing"; fi

# 4. The table on stdout: a row for each configuration with a number.
if grep -Eq '^\| vmm \| [0-9]+ \| 1 \| 1 \| [0-9,]+ ' "$OUT.stdout" 2>/dev/null &&
	grep -Eq '^\| host \| - \| 1 \| 1 \| [0-9,]+ ' "$OUT.stdout"; then
	ok "markdown table on stdout"
else
	nok "markdown table on stdout"
	head -n 40 "$OUT.stdout" 2>/dev/null | sed 's/^/     | /'
fi

# 5. summary.json and the CSVs parse and hold what was asked for.
if out=$(python3 - "$OUT" 2>&1 <<'EOF'
import csv, json, sys
out = sys.argv[1]
s = json.load(open(out + "/summary.json"))
assert s["configs"] == ["vmm", "host"], s["configs"]
assert not s["problems"], s["problems"]
got = {}
for r in s["results"]:
    if r["figure"] == "iops":
        got[(r["config"], r["params"])] = r
for c in ("vmm", "host"):
    for bs in ("4k", "16k"):
        r = got.get((c, "bs=" + bs))
        assert r, "no IOPS for %s bs=%s" % (c, bs)
        assert r["n"] == 1 and r["mean"] > 0, r
        if c == "host":
            assert r["ratio"] is not None and r["pairs"] == 1, r
# fio's figures per phase (the VMM's CPU, a whole point's, has no phase: 6.)
rows = [r for r in csv.DictReader(open(out + "/samples.csv")) if r["phase"]]
assert len(rows) == 2 * 2 * 4, "samples.csv: %d rows of fio's, want 16" % len(rows)
assert all(float(r["value"]) >= 0 for r in rows)
rows = [r for r in csv.DictReader(open(out + "/summary.csv")) if r["phase"]]
assert len(rows) == 2 * 2 * 4, "summary.csv: %d rows of fio's, want 16" % len(rows)
print("vmm 4k IOPS %.0f, host 4k IOPS %.0f" % (got[("vmm", "bs=4k")]["mean"], got[("host", "bs=4k")]["mean"]))
EOF
); then
	ok "summary.json, samples.csv, summary.csv ($out)"
else
	nok "summary.json, samples.csv, summary.csv"
	printf '%s\n' "$out" | tail -n 5 | sed 's/^/     | /'
fi

# 6. The VMM's CPU over each point (vmbench_run.cpu_fields): the vmm
# run's lines in runs.jsonl have it, the host's fio (no VMM) none; the
# report gives the VMM's own CPU per request beside IOPS.
if out=$(python3 - "$OUT" 2>&1 <<'EOF'
import json, sys
out = sys.argv[1]
runs = [json.loads(l) for l in open(out + "/runs.jsonl")]
vmm = [r for r in runs if r["kind"] == "vmm"]
host = [r for r in runs if r["kind"] == "host"]
assert len(vmm) == 2 and len(host) == 2, (len(vmm), len(host))
for r in vmm:
    assert r.get("cpu_run_ns", 0) > 0 and r.get("cpu_guest_ns", -1) >= 0, r
    assert r["cpu_run_ns"] == sum(k["run_ns"] for k in r["cpu_by_kind"].values()), r
assert not [k for r in host for k in r if k.startswith("cpu_")], host
s = json.load(open(out + "/summary.json"))
cpu = {r["params"]: r for r in s["results"] if r["figure"] == "vmm_cpu_us"}
assert sorted(cpu) == ["bs=16k", "bs=4k"] and {r["config"] for r in cpu.values()} == {"vmm"}, cpu
assert "| VMM CPU (us/req) |" in open(out + "/table.md").read()
print("vmm 4k: %.1f us of the VMM's own CPU per request" % cpu["bs=4k"]["mean"])
EOF
); then
	ok "the VMM's CPU in runs.jsonl and the table ($out)"
else
	nok "the VMM's CPU in runs.jsonl and the table"
	printf '%s\n' "$out" | tail -n 5 | sed 's/^/     | /'
fi

# 7. The plot is a PNG.
if [ "$(head -c 8 "$OUT/plots/iops-vs-bs-randread-4k-read.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
	ok "PNG plot"
else
	nok "PNG plot"
fi

# 8. Guest kernels side by side (--scenario kernels): Debian's kernel with
# its modules given as modules=DIR (the initrd then carries a second
# archive, which the guest says it used), and the small kernel, which
# has virtio built in; each run records the kernel's release and sha256,
# and the table lists where the second is significantly worse.
rel=$(cat build/guest/kernel-release 2>/dev/null)
mods=build/guest/cache/linux-image-$rel
KOUT=$OUT-kernels
rm -rf "$KOUT"
rc=0
bench/vmbench --scenario kernels "stock=build/guest/bzImage,modules=$mods" \
	small=build/guest/small/bzImage -j randread-4k -r 1 --runtime 1 --disk-size 64M \
	--cpus 1 -o "$KOUT" >"$KOUT.stdout" 2>"$KOUT.stderr" || rc=$?
if [ "$rc" = 0 ] && out=$(python3 - "$KOUT" "$rel" "$mods" 2>&1 <<'EOF'
import glob, hashlib, json, sys
out, rel, mods = sys.argv[1:]
s = json.load(open(out + "/summary.json"))
assert s["configs"] == ["stock", "small"], s["configs"]
assert not s["problems"], s["problems"]
runs = [json.loads(l) for l in open(out + "/runs.jsonl")]
got = {r["label"]: r["kernel"].split() for r in runs}
for label, path, want in (("stock", "build/guest/bzImage", rel),
                          ("small", "build/guest/small/bzImage", "vmm-small")):
    k = got[label]
    assert want in k[0], (label, k)
    assert k[1] == hashlib.sha256(open(path, "rb").read()).hexdigest(), (label, k)
logs = "".join(open(f).read() for f in glob.glob(out + "/raw/*-c0/g1.log"))
assert "guest: modules from " + mods in logs, "stock's guest did not use the modules= archive"
table = open(out + "/table.md").read()
assert "where small is significantly worse than stock" in table
print("stock %s, small %s" % (got["stock"][0], got["small"][0]))
EOF
); then
	ok "kernels scenario ($out)"
else
	nok "kernels scenario (status $rc)"
	{ printf '%s\n' "${out:-}"; tail -n 20 "$KOUT.stderr"; } | tail -n 25 | sed 's/^/     | /'
fi

# 9. README.md's examples, run as written (tests/readme-examples.sh: the
# blocks marked `<!-- example: NAME -->`), in the test host where this
# host's KVM is slow: Debian 12's kernel with /tmp on tmpfs.
rc=0
tests/readme-examples.sh >"$OUT-readme.log" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then
	ok "README's examples as written ($(grep -c '^PASS' "$OUT-readme.log") examples)"
else
	nok "README's examples as written (status $rc; $OUT-readme.log)"
	grep -E '^(FAIL|     \|)' "$OUT-readme.log" | head -n 40 | sed 's/^/     | /'
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
