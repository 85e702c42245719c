"""bench/RESULTS.md is written from the data (vmharness/standing.py): the
committed page is the one the data gives, the newest directory answers
each question, and the words follow the intervals."""
import json
import os

from vmharness import devbench, pages, paths, profile_page, standing


def test_committed_pages_match_the_data():
    """`bench/vmbench report` would write what is committed (RESULTS.md,
    the plot, README's headline table): a figure typed by hand, or new
    data without its pages, fails here."""
    cwd = os.getcwd()
    os.chdir(paths.REPO)
    try:
        for path, text in standing.outputs().items():
            with open(path) as f:
                assert f.read() == text, \
                    "%s differs from the data: run bench/vmbench report" % path
    finally:
        os.chdir(cwd)


def run(config, job, repeat, iops, exits=1000):
    ios = int(iops * 5)
    return {"config": config, "job": job, "repeat": repeat, "outcome": "clean",
            "fio": {"ios": ios, "iops": iops, "lat_mean_us": 1e6 / iops},
            "counters": {"kvm": {"exits": exits, "irq_injections": exits // 2},
                         "exit_reasons": {}, "threads": {}}}


def profile_dir(root, name, date, runs, command="bench/vmbench profile -c qemu -c vmm"):
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"command": command, "date": date, "nproc": "2", "kernel": "k"}, f)
    with open(os.path.join(d, "runs.jsonl"), "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    return d


def test_newest_directory_answers_and_words_follow_the_interval(tmp_path):
    root = str(tmp_path)
    # Old: ours twice QEMU.  New: ours a steady 1.5x on randread-4k, and
    # noisy around 1 on randwrite-4k.
    profile_dir(root, "old", "2026-12-01 10:00:00 UTC",
                [run(c, "randread-4k", k, 1000 * (2 if c == "vmm" else 1))
                 for k in range(3) for c in ("qemu", "vmm")])
    noisy = (0.6, 1.7, 0.9, 1.4)
    profile_dir(root, "new", "2026-12-02 10:00:00 UTC",
                [run("qemu", j, k, 1000) for j in ("randread-4k", "randwrite-4k") for k in range(4)] +
                [run("vmm", "randread-4k", k, 1500 + k, exits=500) for k in range(4)] +
                [run("vmm", "randwrite-4k", k, 1000 * noisy[k]) for k in range(4)] +
                [{"config": "vmm", "job": "randwrite-4k", "repeat": 3, "outcome": "died"}])
    text = "\n".join(profile_page.x86_section(standing.scan(root), False))
    rr = next(l for l in text.splitlines() if l.startswith("| randread-4k"))
    rw = next(l for l in text.splitlines() if l.startswith("| randwrite-4k"))
    assert "**1.50x" in rr and "significantly higher" in rr and "| new |" in rr
    assert "| 0.33x (0.33-0.33) |" in rr  # exits per request: 500/7.5k, 1000/5k
    assert "not significant" in rw
    assert "significantly higher on randread-4k;" in text
    assert "ours 1 of 9, QEMU 0 of 8" in text
    assert "`%s/new`" % root in text and "`%s/old`" % root not in text
    # One queue is another question: these directories do not answer it.
    assert profile_page.x86_section(standing.scan(root), True) == []
    profile_dir(root, "q1", "2026-11-30 10:00:00 UTC",
                [run(c, "randread-4k", k, 1000 * (0.5 if c == "vmm" else 1) + k)
                 for k in range(3) for c in ("qemu", "vmm")],
                command="bench/vmbench profile --queues 1 -c qemu -c vmm")
    q1 = "\n".join(profile_page.x86_section(standing.scan(root), True))
    assert "significantly lower" in q1 and "`%s/q1`" % root in q1


def test_words_of_a_ratio():
    r = {"ratio": 1.2, "lo": 1.01, "hi": 1.4}
    assert pages.verdict(r) == "significantly higher"
    assert pages.verdict(dict(r, lo=0.9)) == "not significant"
    assert pages.verdict({"ratio": 0.5, "lo": 0.4, "hi": 0.99}, "more", "fewer") == \
        "significantly fewer"
    assert pages.verdict({"ratio": 2.0, "lo": None, "hi": None}) == "no interval"
    assert pages.fmt_ratio(r) == "1.20x (1.01-1.40)"


def test_devbench_ratios(tmp_path):
    d = tmp_path / "devbench-x"
    d.mkdir()
    for i, ratio in enumerate((2.0, 2.2, 1.8)):
        (d / ("i%d.json" % i)).write_text(json.dumps({
            "command": "build/bench/devbench --json i%d.json" % i,
            "date": "2026-12-0%dT00:00:00Z" % (i + 1),
            "machine": {"nproc": 2, "cpu": "c", "kernel": "k"},
            "points": [{"name": "ram-x", "ok": True, "iops": 100.0 * ratio,
                        "baseline": "fio-y", "ratio_iops": ratio}]}))
    # A newer devbench run without the host's fio (--no-fio: two settings
    # compared) does not answer this question and is passed over.
    n = tmp_path / "devbench-nofio"
    n.mkdir()
    (n / "on-1.json").write_text(json.dumps({
        "command": "build/bench/devbench --no-fio --limit --json on-1.json",
        "date": "2026-12-09T00:00:00Z", "machine": {"nproc": 2},
        "points": [{"name": "ram-x", "ok": True, "iops": 50.0}]}))
    text = "\n".join(devbench.devbench_section(standing.scan(str(tmp_path))))
    assert "| ram-x | 200 | fio-y | **1.99x (1.55-2.56)** significantly higher | 3 |" in text
    assert "| 3 |" in text and "2026-12-03 00:00 UTC" in text


def test_null_blk_rows_take_the_headline_and_leave_tmpfs_rows_apart(tmp_path):
    """A profile on null_blk fills the block-device section and moves the
    x86 headline there; tmpfs sections take only file-backed runs; each
    configuration's role comes from its -c option, not its name."""
    root = str(tmp_path)
    profile_dir(root, "tmpfs", "2026-12-01 10:00:00 UTC",
                [run(c, "randread-4k", k, 1000 * (2 if c == "vmm" else 1))
                 for k in range(3) for c in ("qemu", "vmm")])
    runs = []
    for k in range(3):
        runs.append({"config": "host", "job": "randread-4k", "repeat": k, "outcome": "clean",
                     "fio": {"ios": 5000, "iops": 4000.0, "lat_mean_us": 8.0}})
        for c, iops, own in (("q10", 1000, 30e6), ("qemu", 800, 40e6), ("vmm", 2000, 10e6)):
            r = run(c, "randread-4k", k, iops)
            r["counters"]["threads"] = {"vcpu": {"run_ns": own + 5e6, "guest_ns": 5e6,
                                                 "wait_ns": 0, "vcsw": 0, "ivcsw": 0}}
            runs.append(r)
    profile_dir(root, "nullb", "2026-12-02 10:00:00 UTC", runs,
                command="bench/vmbench profile --backing nullb -c host -c qemu "
                "-c qemu:release=10,name=q10 -c vmm -j randread-4k")
    entries = standing.scan(root)
    text = "\n".join(profile_page.nullb_section(entries))
    row = next(l for l in text.splitlines() if l.startswith("| randread-4k"))
    # ours 2000 IOPS: 0.50x the host's fio, 2x QEMU 10.0, 2.5x QEMU 7.2
    assert "**0.50x" in row and "**2.00x" in row and "**2.50x" in row
    # own CPU per request: (run - guest) / ios, ios = 5 x IOPS
    assert "| 1.0, 6.0, 10.0 |" in row
    assert "ours / QEMU 10.0 0.17x" in text and "| nullb |" in row
    assert "tmpfs" not in "\n".join(profile_page.x86_section(entries, False)).split("| data |")[0]
    assert "| nullb |" not in "\n".join(profile_page.x86_section(entries, False))
    heads = [(h["where"], h["peer"]) for h in standing.headline_rows(root)]
    assert heads == [("x86-64, null_blk", "the test host's fio"),
                     ("x86-64, null_blk", "QEMU 10.0"), ("x86-64, null_blk", "QEMU 7.2")]


def test_null_blk_takes_each_peer_from_the_newest_profile_that_paired_it(tmp_path):
    """A newer null_blk profile with QEMU 7.2 only replaces the older one's
    QEMU 7.2 figures and leaves its host fio figures standing: one row
    per job and profile, "-" where that profile is not the newest for a
    peer."""
    root = str(tmp_path)

    def runs(peers):
        out = []
        for k in range(3):
            for c, iops in peers + (("vmm", 2000),):
                if c == "host":
                    out.append({"config": "host", "job": "randread-4k", "repeat": k,
                                "outcome": "clean", "fio": {"ios": 5000, "iops": iops,
                                                            "lat_mean_us": 8.0}})
                else:
                    r = run(c, "randread-4k", k, iops)
                    r["counters"]["threads"] = {"vcpu": {"run_ns": 6e6, "guest_ns": 5e6,
                                                         "wait_ns": 0, "vcsw": 0, "ivcsw": 0}}
                    out.append(r)
        return out
    profile_dir(root, "old", "2026-12-02 10:00:00 UTC", runs((("host", 4000), ("qemu", 800))),
                command="bench/vmbench profile --backing nullb -c host -c qemu -c vmm "
                "-j randread-4k")
    profile_dir(root, "new", "2026-12-03 10:00:00 UTC", runs((("qemu", 1000),)),
                command="bench/vmbench profile --backing nullb -c qemu -c vmm -j randread-4k")
    text = "\n".join(profile_page.nullb_section(standing.scan(root)))
    rows = [l for l in text.splitlines() if l.startswith("| randread-4k")]
    assert len(rows) == 2, text
    new, old = rows
    assert "| new |" in new and "**2.00x" in new and "**0.50x" not in new
    assert "| old |" in old and "**0.50x" in old and "**2.50x" not in old
    # CPU: a peer's figure only where the row is its newest
    assert "| 0.1, 0.2 | new |" in new and "| 0.1, - | old |" in old
    heads = [(h["peer"], h["data"]) for h in standing.headline_rows(root)]
    assert heads == [("QEMU 7.2", "new"), ("the test host's fio", "old")]
