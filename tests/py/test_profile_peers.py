"""bench/vmbench profile on a real block device beside the strongest
peers (issue 47): --backing, the test host's own fio as a configuration,
QEMU 10 with one IOThread per queue, and the VMM's CPU split into the
guest's time and its own.  No guest, no KVM; fio runs for real."""
import json
import os
import shutil
from types import SimpleNamespace

import pytest

from vmharness import cli, cmdlines, counters, nullblk, plan, profile, profile_tables

ARGS = SimpleNamespace(kernel="vmlinux", queues=2, mem=512, cpus=2, disk_mb=64)
DISK = {"path": "/dev/nullbvmh", "serial": "data", "direct": True}


def test_backing_specs_are_checked_before_anything_boots(capsys):
    assert nullblk.parse_spec(None) == {"kind": "file"}
    assert nullblk.parse_spec("nullb:bs=4096") == {"kind": "nullb", "bs": 4096,
                                                   "completion_ns": 10000}
    for bad in ("nullb:bs=3", "nullb:completion_ns=x", "nvme", "file:x", "nullb:size=1"):
        with pytest.raises(ValueError):
            nullblk.parse_spec(bad)
        with pytest.raises(SystemExit) as e:
            cli.main(["profile", "--backing", bad, "-o", "/nonexistent/never-made"])
        assert e.value.code == 2
        assert "--backing %s" % bad in capsys.readouterr().err
    assert not os.path.exists("/nonexistent/never-made")


def test_a_test_host_without_null_blk_stops_the_plan_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr(nullblk, "unavailable", lambda: "no null_blk here")
    made = []
    monkeypatch.setattr(nullblk, "filled", lambda *a, **k: made.append(a))
    args = SimpleNamespace(backing="nullb", disk_mb=64, queues=2, disk_dir="/tmp")
    with pytest.raises(SystemExit) as e:
        plan.data_disk(args, "x.img")
    assert e.value.code == 2 and not made
    assert capsys.readouterr().out == "vmbench: --backing nullb: no null_blk here\n"


def test_the_plans_disk_is_the_null_blk_device_opened_with_o_direct(monkeypatch):
    monkeypatch.setattr(nullblk, "unavailable", lambda: None)
    made = []
    monkeypatch.setattr(nullblk, "filled", lambda name, mb, b, submit_queues:
                        made.append((name, mb, b, submit_queues)) or "/dev/" + name)
    args = SimpleNamespace(backing="nullb:completion_ns=5000", disk_mb=64, queues=4,
                           disk_dir="/tmp")
    d = plan.data_disk(args, "x.img")
    assert d["path"] == "/dev/nullbvmh" and d["direct"] and d["serial"] == "data"
    assert made == [("nullbvmh", 64, {"kind": "nullb", "bs": 512, "completion_ns": 5000}, 4)]
    argv = profile.guest_argv(profile.parse_config("vmm"), "c", d, ARGS)
    assert argv[argv.index("-d") + 1].startswith("/dev/nullbvmh,direct,queues=2")


def test_qemu_options_are_checked_and_release_10_maps_each_queue_to_an_iothread():
    c = profile.parse_config("qemu:release=10,name=qemu10")
    assert c["name"] == "qemu10"
    assert c["opts"] == {"bin": profile.QEMU_RELEASES["10"], "vqmap": "on"}
    argv = profile.guest_argv(c, "c", DISK, ARGS)
    assert argv[0] == profile.QEMU_RELEASES["10"]
    assert argv.count("-object") == 2 and "iothread,id=io0q1" in argv
    dev = json.loads(argv[argv.index("-device", argv.index("-drive")) + 1])
    assert dev["iothread-vq-mapping"] == [{"iothread": "io0q0"}, {"iothread": "io0q1"}]
    assert dev["num-queues"] == 2 and dev["serial"] == "data"
    drive = argv[argv.index("-drive") + 1]
    assert "cache=none" in drive and "aio=io_uring" in drive
    # QEMU 7.2 as before: one IOThread for the disk, aio= passed on
    argv = profile.guest_argv(profile.parse_config("qemu:aio=native"), "c", DISK, ARGS)
    assert argv[0] == "qemu-system-x86_64" and argv.count("-object") == 1
    assert "aio=native" in argv[argv.index("-drive") + 1]
    for bad in ("qemu:aoi=native", "qemu:aio=posix", "qemu:release=9",
                "qemu:release=10,bin=/x", "qemu:vqmap=on,iothread=off", "qemu:x",
                "host:queues=2", "hots"):
        with pytest.raises(ValueError):
            profile.parse_config(bad)


def test_vmm_cpu_is_split_into_the_guests_time_and_its_own():
    # /proc/PID/task/TID/stat: a name with spaces and ")" in it, then
    # fields 3..; guest_time is field 43
    fields = ["S"] + ["0"] * 39 + ["250", "7"]
    line = "123 (CPU 0/KVM) x) " + " ".join(fields)
    assert counters.guest_ns(line) == 250 * 10**9 // counters.CLK_TCK
    assert counters.guest_ns("garbage") == 0
    th = {"vcpu": {"run_ns": 3 * 10**9, "guest_ns": 2 * 10**9, "wait_ns": 0, "vcsw": 0,
                   "ivcsw": 0},
          "iothread": {"run_ns": 10**9, "guest_ns": 0, "wait_ns": 0, "vcsw": 0, "ivcsw": 0}}
    rec = {"fio": {"iops": 1000, "lat_mean_us": 1.0, "ios": 10**6},
           "counters": {"kvm": {}, "exit_reasons": {}, "threads": th}}
    pr = profile_tables.per_request(rec)
    assert pr["cpu_us:guest"] == 2.0 and pr["cpu_us:vmm_own"] == 2.0
    assert pr["cpu_us:vcpu"] == 3.0 and pr["cpu_us:iothread"] == 1.0
    # a thread born during the phase counts from 0, guest time too
    t0 = {1: {"kind": "vcpu", "run_ns": 5, "wait_ns": 0, "guest_ns": 3, "vcsw": 0, "ivcsw": 0}}
    t1 = {1: dict(t0[1], run_ns=9, guest_ns=4),
          2: {"kind": "io-wq", "run_ns": 6, "wait_ns": 1, "guest_ns": 0, "vcsw": 2, "ivcsw": 0}}
    k = counters.threads_by_kind(t0, t1)
    assert k["vcpu"]["run_ns"] == 4 and k["vcpu"]["guest_ns"] == 1
    assert k["io-wq"]["run_ns"] == 6


@pytest.mark.skipif(not os.access(profile.HOST_FIO, os.X_OK), reason="no fio")
def test_the_host_configuration_runs_the_job_with_the_hosts_fio(tmp_path, monkeypatch):
    monkeypatch.setitem(profile.JOBS, "tiny", ["--name=tiny", "--rw=randread", "--bs=4k",
                                               "--size=1M", "--ioengine=psync",
                                               "--direct=1", "--group_reporting"])
    cfg = profile.parse_config("host")
    assert cfg == {"kind": "host", "name": "host", "opts": {}}
    img = tmp_path / "d.img"
    img.write_bytes(b"\0" * (1 << 20))
    disk = {"path": str(img), "direct": cmdlines.direct_ok(str(img))}
    rec = profile.one_run(cfg, "tiny", disk, ARGS, str(tmp_path / "h.log"))
    assert rec["outcome"] == "clean" and rec["rc"] == 0
    assert rec["fio"]["ios"] == 256 and rec["fio"]["iops"] > 0
    assert profile_tables.per_request(rec)["iops"] == rec["fio"]["iops"]
    rec = profile.one_run(cfg, "tiny", {"path": str(img) + "/under-a-file"}, ARGS,
                          str(tmp_path / "h2.log"))
    assert rec["outcome"] == "no-result" and "fio" not in rec and rec["rc"] != 0


def run(cfg, rep, iops, job="randread-4k"):
    rec = {"config": cfg, "job": job, "repeat": rep, "try": 1, "outcome": "clean",
           "fio": {"iops": iops, "lat_mean_us": 10.0, "ios": 1000}}
    if cfg != "host":
        rec["counters"] = {"kvm": {"exits": 2000}, "exit_reasons": {}, "threads": {}}
    return rec


def test_ours_is_compared_with_each_qemu_and_the_host(tmp_path):
    for rep in range(2):
        for cfg, iops in (("vmm", 300 + rep), ("qemu10", 200), ("qemu", 100), ("host", 600),
                          ("vmm-poll0", 150)):
            plan.record(str(tmp_path), run(cfg, rep, iops))
    text = profile.analyse(str(tmp_path))
    head = text.splitlines()[0]
    assert head.index("host (n=2)") < head.index("qemu10 (n=2)") < head.index("vmm (n=2)")
    assert "vmm / qemu10 IOPS: 1.5" in text and "vmm / qemu IOPS: 3.0" in text
    assert "vmm / host IOPS: 0.50x" in text
    assert "qemu / " not in text and "host / " not in text
    # each of ours against each baseline once
    assert text.count("vmm-poll0 / host IOPS") == 1 and text.count("vmm / host IOPS") == 1
    assert "vmm-poll0 / qemu10 IOPS: 0.75x" in text


def test_a_disk_with_queues_none_takes_the_vmms_default():
    argv = cmdlines.vmm_argv("K", "I", "C", 512, 4, [{"path": "/d.img", "queues": None},
                                                     {"path": "/e.img"}], "vmm")
    specs = [argv[i + 1] for i, a in enumerate(argv) if a == "-d"]
    assert specs == ["/d.img", "/e.img,queues=1"]
