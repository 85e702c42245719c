"""bench/vmbench's pure parts: options, configurations, fio job rewriting,
the plan's order, the guest script, the trimmed JSON."""
import json
import os
import re
import shutil
import subprocess

import pytest

from vmharness import config, fiojson, sweep, vmbench, vmbench_run
from vmharness.vmbench import Error

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def test_small_helpers():
    assert vmbench.hms(5) == "5s" and vmbench.hms(65) == "1m05s"
    assert [vmbench.size_mb(v) for v in ("512M", "1G", "1k", "2048k", "64")] == [512, 1024, 1, 2, 64]
    with pytest.raises(Error):
        vmbench.size_mb("lots")
    assert vmbench.expand_list("1-4") == ["1", "2", "3", "4"]
    assert vmbench.expand_list("1,2,4") == ["1", "2", "4"]
    assert vmbench.expand_list("1,3-4") == ["1", "3", "4"]


def test_config_labels():
    assert vmbench.parse_config("vmm")["label"] == "vmm"
    c = vmbench.parse_config("vmm:queues=2,batch=on,poll=0,backend=ram,direct=off")
    assert c["label"] == "vmm batch=on poll=0 ram direct=off q2"
    assert c["queues"] == "2" and c["backend"] == "ram"
    assert vmbench.parse_config("qemu:iothread=off,aio=native,cache=none")["label"] == \
        "qemu no-iothread aio=native cache=none"
    assert vmbench.parse_config("vmm:bin=/x/build/regress/abc/build/vmm")["label"] == "vmm abc"
    assert vmbench.parse_config("host:name=disk")["label"] == "disk"
    assert vmbench.parse_config("vmm:name=batch=on")["label"] == "batch=on"


@pytest.mark.parametrize("spec,msg", [
    ("nosuch", "bad configuration"), ("vmm:queues=0", "queues=0: a whole number from 1 to 16"),
    ("vmm:batch=maybe", "batch=maybe: on|off"), ("qemu:batch=on", "unknown option 'batch'"),
    ("host:queues=2", "unknown option 'queues'"), ("vmm:poll=x", "poll=x: a whole number"),
    ("vmm:queues", "not KEY=VALUE"), ("vmm:name=a,b", "not KEY=VALUE"),
    ("vmm:name=a;b", "no tabs, commas"), ("vmm:poll=1,poll=2", "poll= given twice"),
])
def test_bad_configs(spec, msg):
    with pytest.raises(config.ConfigError, match=re.escape(msg)):
        vmbench.parse_config(spec)


JOB = """; a comment
[global]
filename=${FIO_DISK}
bs=4k
  runtime=5
# another

[one]
rw=randread
bs=8k
ioscheduler=none
"""


def test_rewrite_job_sets_go_to_global_and_replace_every_line():
    assert vmbench.rewrite_job(JOB, ["bs=16k", "runtime=1"]) == (
        "[global]\nbs=16k\nruntime=1\nfilename=${FIO_DISK}\n[one]\nrw=randread\n"
        "ioscheduler=none\n")


def test_rewrite_job_drops_keys_and_adds_a_global_section():
    assert vmbench.rewrite_job(JOB, [], ["ioscheduler"]).endswith("bs=8k\n")
    assert vmbench.rewrite_job("[job]\nrw=read\n", ["direct=0"]) == \
        "[global]\ndirect=0\n[job]\nrw=read\n"
    assert vmbench.rewrite_job("rw=read\n", ["a=1"]) == "rw=read\n[global]\na=1\n"


def test_fio_points_are_the_cartesian_product():
    assert vmbench.fio_points(["a", "b"], []) == [("a", ""), ("b", "")]
    assert vmbench.fio_points(["a"], ["bs=4k,16k", "iodepth=1,32"]) == [
        ("a", "bs=4k iodepth=1"), ("a", "bs=4k iodepth=32"),
        ("a", "bs=16k iodepth=1"), ("a", "bs=16k iodepth=32")]
    with pytest.raises(Error, match="KEY=V1"):
        vmbench.fio_points(["a"], ["bs"])


def test_parse_args():
    o = sweep.parse_args(["-c", "vmm", "--config", "host", "-r", "5", "--bs", "4k,16k",
                            "--sweep", "iodepth=1,2", "--set", "direct=0", "--guests", "1-4",
                            "-o", "out", "--scenario", "regress", "HEAD~1", "work", "-j", "x"])
    assert o["cfgs"] == ["vmm", "host"] and o["repeats"] == "5"
    assert o["sweeps"] == ["bs=4k,16k", "iodepth=1,2"] and o["sets"] == ["direct=0"]
    assert o["regress"] == ("HEAD~1", "work") and o["jobs"] == "x" and o["guests"] == "1-4"
    with pytest.raises(config.ConfigError, match="expected one argument"):
        sweep.parse_args(["-r"])
    with pytest.raises(config.ConfigError, match="unrecognized arguments: --nosuch"):
        sweep.parse_args(["--nosuch", "1"])
    with pytest.raises(SystemExit) as e:  # argparse's help, printed
        sweep.parse_args(["--allow-slow", "-h"])
    assert e.value.code == 0
    # -j as often as one likes: the jobs, in order
    assert sweep.parse_args(["-j", "a,b", "--job", "c"])["jobs"] == "a,b,c"


def test_scenario_defaults_and_overrides():
    o = sweep.parse_args(["--scenario", "peers"])
    sets = vmbench.apply_defaults(o)
    assert o["cfgs"] == ["qemu", "vmm", "host"] and o["queues"] == "1,2"
    assert o["jobs"] == "randread-4k,randwrite-4k" and sets == ["runtime=3"]
    o = sweep.parse_args(["--scenario", "plug", "--runtime", "5", "--set", "bs=4k"])
    assert vmbench.apply_defaults(o) == ["numjobs=32", "time_based=1", "bs=4k", "runtime=5"]
    assert o["cpus"] == "1" and len(o["cfgs"]) == 2
    o = sweep.parse_args(["--scenario", "scaling", "--guests", "1,2", "-c", "vmm"])
    vmbench.apply_defaults(o)
    assert o["guests"] == "1,2" and o["cfgs"] == ["vmm"] and o["cpus"] == "1"
    o = sweep.parse_args([])
    assert vmbench.apply_defaults(o) == [] and o["repeats"] == "3" and o["cfgs"] == ["qemu", "vmm"]
    assert o["kernel"] == "stock"
    o = sweep.parse_args(["--kernel", "small"])
    vmbench.apply_defaults(o)
    assert o["kernel"] == "small"
    for bad in (["--scenario", "nosuch"], ["-r", "0"], ["--cpus", "x"], ["--set", "novalue"],
                ["--kernel", "tiny"]):
        with pytest.raises(Error):
            vmbench.apply_defaults(sweep.parse_args(bad))


def plan_of(ncfg=3, glist=("1", "2"), qlist=("",), repeats=4, seed=7):
    return {"cfgs": [vmbench.parse_config("vmm:name=c%d" % i) for i in range(ncfg)],
            "glist": list(glist), "qlist": list(qlist), "repeats": repeats,
            "seed": seed, "cpus": 2}


def test_run_order_interleaves_and_shuffles_with_the_seed():
    p = plan_of()
    orders = [vmbench.run_order(p, r) for r in range(1, 5)]
    want = sorted((g, "", c) for g in (1, 2) for c in range(3))
    for o in orders:
        assert sorted(o) == want  # every run once in each repeat
    assert len({tuple(o) for o in orders}) > 1  # not the same order every time
    assert orders == [vmbench.run_order(p, r) for r in range(1, 5)]  # resumable
    assert orders != [vmbench.run_order(plan_of(seed=8), r) for r in range(1, 5)]


def test_run_queues():
    p = plan_of()
    host, vmm2 = vmbench.parse_config("host"), vmbench.parse_config("vmm:queues=4")
    assert vmbench.run_queues(p, host, "") == "-" and vmbench.run_queues(p, host, "2") == "2"
    assert vmbench.run_queues(p, vmm2, "") == "4" and vmbench.run_queues(p, vmm2, "1") == "1"
    assert vmbench.run_queues(p, p["cfgs"][0], "") == "2"  # the vCPU count


def test_guest_script(tmp_path):
    os.makedirs(tmp_path / "jobs")
    for k in (0, 1):
        (tmp_path / "jobs" / ("p%d.fio" % k)).write_text("[global]\nbs=%dk\n" % (k + 4))
    s = vmbench_run.guest_script(str(tmp_path), [(0, 1), (1, 0)])
    assert s.index("pt 0 p1\n") < s.index("pt 1 p0\n") < s.index("=== VMB DONE ===")
    assert "cat >/tmp/p1.fio <<'VMBENCH_EOF'\n[global]\nbs=5k\nVMBENCH_EOF\n" in s
    assert "=== FIO-JSON BEGIN $2 ===" in s and "vmb-trim.awk" in s
    assert subprocess.run(["sh", "-n"], input=s, text=True).returncode == 0


FIO_JSON = """{
  "fio version" : "fio-3.33",
  "global options" : {
    "bs" : "4k"
  },
  "jobs" : [
    {
      "jobname" : "randread-4k",
      "error" : 0,
      "read" : {
        "io_bytes" : 4096,
        "iops" : 100.5,
        "total_ios" : 1,
        "clat_ns" : {
          "mean" : 1000.0,
          "percentile" : {
            "1.000000" : 10,
            "50.000000" : 20,
            "99.000000" : 30
          }
        },
        "iops_samples" : 3
      },
      "latency_ms" : {
        "2" : 0.0
      }
    }
  ]
}
"""


@pytest.mark.skipif(not shutil.which("awk"), reason="no awk")
def test_fio_trim_leaves_valid_json_with_the_figures():
    trim = os.path.join(REPO, "bench", "vmharness", "fio-trim.awk")
    out = subprocess.run(["awk", "-f", trim], input=FIO_JSON, text=True,
                         capture_output=True, check=True).stdout
    doc = json.loads(out)
    assert "global options" not in doc
    job = doc["jobs"][0]
    assert set(job) == {"jobname", "error", "read"}
    assert job["read"]["clat_ns"]["percentile"] == {"50.000000": 20, "99.000000": 30}
    got = fiojson.extract(["x", "=== FIO-JSON BEGIN p0 ==="] + out.splitlines()
                          + ["=== FIO-JSON END p0 rc=0 ==="])
    assert got["p0"][0] == 0 and got["p0"][1]["jobs"][0]["read"]["iops"] == 100.5


class FakeCtx:
    ddir, direct, nullb = "/d", False, False
    plan = {"mem": "512M", "disk": "64M", "cpus": 1}
    disk = vmbench_run.Ctx.disk


def test_command_lines_of_a_run():
    def argv(spec):
        run = vmbench_run.Run(FakeCtx(), vmbench.parse_config(spec), 0, "/r", 1, "2", [(0, 0)])
        return run.argv(1, "/d/ctl.img")
    q = argv("qemu:aio=threads,iothread=off")
    drives = [q[i + 1] for i, w in enumerate(q) if w == "-drive"]
    assert drives[0].startswith("file=/d/ctl.img,") and "readonly=on" in drives[0]
    assert drives[1] == "file=/d/data1.img,if=none,id=d1,format=raw,aio=threads,cache=writeback"
    assert "virtio-blk-pci,drive=d1,num-queues=2,serial=data" in q
    assert "cache=none" in " ".join(argv("qemu:cache=none"))
    v = argv("vmm:backend=ram,batch=on,poll=0")
    disks = [v[i + 1] for i, w in enumerate(v) if w == "-d"]
    assert disks == ["/d/ctl.img,ro,queues=1,serial=vmbctl",
                     "ram:64M,queues=2,serial=data,batch=on,poll=0"]
    assert "direct" in argv("vmm:direct=on")[-1] and "disk=data run64=" in v[v.index("-p") + 1]


def test_a_run_boots_the_kernel_the_plan_names():
    from vmharness import paths

    class Small(FakeCtx):
        plan = dict(FakeCtx.plan, kernel="small")
    for ctx, name in ((FakeCtx(), "stock"), (Small(), "small")):
        for spec in ("vmm", "qemu"):
            run = vmbench_run.Run(ctx, vmbench.parse_config(spec), 0, "/r", 1, "1", [(0, 0)])
            a = run.argv(1, "/d/ctl.img")
            assert paths.KERNELS[name]["bzImage"] in a, (name, spec)


def test_regress_builds_nothing_for_options_that_are_wrong(monkeypatch):
    def no_build(rev):
        raise AssertionError("built %s before the options were checked" % rev)
    monkeypatch.setattr(vmbench, "regress_build", no_build)
    for bad in (["-j", "nosuch"], ["--where", "moon"], ["--seed", "x"], ["-c", "kvmtool"]):
        with pytest.raises(Error):
            vmbench.check(sweep.parse_args(["--scenario", "regress", "HEAD~1", "HEAD"] + bad))
    with pytest.raises(Error):  # the same build twice
        vmbench.check(sweep.parse_args(["--scenario", "regress", "HEAD", "HEAD"]))


def test_backing_parsed_and_bad_values_refused_before_boot():
    assert vmbench.parse_backing(None) == {"kind": "file"}
    assert vmbench.parse_backing("nullb") == {"kind": "nullb", "bs": 512, "completion_ns": 10000}
    assert vmbench.parse_backing("nullb:bs=4096,completion_ns=20000") == {
        "kind": "nullb", "bs": 4096, "completion_ns": 20000}
    for bad, msg in (("nullb:bs=3", "512, 1024"), ("nullb:foo=1", "'foo=1'"),
                     ("nullb:bs=", "'bs='"), ("disk", "file or nullb"), ("file:x=1", "file or nullb")):
        with pytest.raises(Error, match=msg):
            vmbench.parse_backing(bad)
    o = sweep.parse_args(["--backing", "nullb:bs=9"])
    with pytest.raises(Error, match="bs=9"):
        vmbench.apply_defaults(o)


def test_nullb_disks_are_devices(tmp_path):
    ctx = vmbench_run.Ctx.__new__(vmbench_run.Ctx)
    ctx.ddir, ctx.nullb = str(tmp_path), True
    assert ctx.disk(2) == "/dev/nullbvmb2"
    ctx.nullb = False
    assert ctx.disk(2) == os.path.join(str(tmp_path), "data2.img")
