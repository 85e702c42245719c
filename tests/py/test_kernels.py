"""Guest kernels of one's own in bench/vmbench (vmharness/kernels.py,
-c vmm:kernel=PATH[,modules=DIR], --scenario kernels): what a kernel file
says it is, the initrd that brings its modules, the configurations the
scenario makes, a kernel that changes during a plan."""
import os
import struct
import subprocess

import pytest

from vmharness import config, kernels, pages, report, sweep, vmbench, vmbench_run
from vmharness.vmbench import Error


def bzimage(path, release):
    """A file with a bzImage's setup header: "HdrS" at 0x202 and
    kernel_version (at 0x20e) pointing, from 0x200, at the release."""
    data = bytearray(0x1000)
    data[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", data, 0x20e, 0x400)
    text = (release + " (someone@somewhere) #1 SMP").encode() + b"\0"
    data[0x600:0x600 + len(text)] = text
    path.write_bytes(bytes(data))
    return str(path)


def vmlinux(path, release):
    path.write_bytes(b"\x7fELF" + b"\0" * 60 + b"Linux version " + release.encode()
                     + b" (someone@somewhere) #1\0")
    return str(path)


def test_describe_reads_the_release_of_either_format(tmp_path):
    assert kernels.describe(bzimage(tmp_path / "bz", "6.1.192-mine")) == ("bzImage", "6.1.192-mine")
    assert kernels.describe(vmlinux(tmp_path / "vm", "6.6.0+")) == ("vmlinux", "6.6.0+")
    (tmp_path / "junk").write_bytes(b"\0" * 4096)
    with pytest.raises(kernels.KernelError, match="neither a bzImage nor a vmlinux"):
        kernels.describe(str(tmp_path / "junk"))
    with pytest.raises(kernels.KernelError, match="says no release"):
        kernels.describe(bzimage(tmp_path / "norel", ""))
    with pytest.raises(kernels.KernelError, match="No such file"):
        kernels.describe(str(tmp_path / "none"))


def test_a_vmlinux_banner_is_found_wherever_the_chunks_cut_it(tmp_path):
    # describe reads a vmlinux in 1 MiB chunks: the banner before, across
    # and after each place a chunk ends, and at the very end of the file.
    banner = b"Linux version 6.1.192-cut (someone@somewhere) #1\0"
    for at in (100, (1 << 20) - 20, (1 << 20) - 14, (1 << 20) - 3, (2 << 20) - 9, 3 << 20):
        p = tmp_path / ("vm%d" % at)
        p.write_bytes(b"\x7fELF" + b"\0" * (at - 4) + banner)
        assert kernels.describe(str(p)) == ("vmlinux", "6.1.192-cut"), at
    p = tmp_path / "end"
    p.write_bytes(b"\x7fELF" + b"\0" * ((1 << 20) - 30) + b"Linux version 6.1.192-end")
    assert kernels.describe(str(p)) == ("vmlinux", "6.1.192-end")
    p = tmp_path / "none"
    p.write_bytes(b"\x7fELF" + b"\0" * (3 << 20))
    with pytest.raises(kernels.KernelError, match="says no release"):
        kernels.describe(str(p))


def test_the_guest_kernels_guest_build_makes(tmp_path):
    from vmharness import paths
    for name, want in (("stock", "-amd64"), ("small", "-vmm-small")):
        for fmt, path in paths.KERNELS[name].items():
            if not os.path.exists(path):
                pytest.skip("make guest first")
            f, rel = kernels.describe(path)
            assert f == fmt and rel.endswith(want), (path, f, rel)


def module(mdir, rel_path, depends):
    p = mdir / rel_path
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(b"\0ELF stand-in\0depends=" + depends.encode() + b"\0name=x\0")


def modtree(tmp_path, rel, builtin=(), mods=()):
    """An INSTALL_MOD_PATH: lib/modules/REL with modules.builtin and a
    stand-in .ko (only its depends= is read) for each of MODS."""
    root = tmp_path / "mods"
    mdir = root / "lib" / "modules" / rel
    (mdir / "kernel").mkdir(parents=True)
    (mdir / "modules.builtin").write_text(
        "".join("kernel/drivers/%s.ko\n" % b for b in builtin))
    for path, deps in mods:
        module(mdir, path, deps)
    return str(root)


def test_initrd_for_modules_adds_what_virtio_blk_needs_after_the_base(tmp_path):
    rel = "6.1.0-test"
    mods = modtree(tmp_path, rel, mods=(
        ("kernel/drivers/virtio/virtio_ring.ko", ""),
        ("kernel/drivers/virtio/virtio.ko", "virtio_ring"),
        ("kernel/drivers/virtio/virtio_pci.ko", "virtio,virtio_ring"),
        ("kernel/drivers/block/virtio_blk.ko", "virtio,virtio_ring"),
        ("kernel/fs/unused.ko", "")))
    base = tmp_path / "base.img"
    base.write_bytes(b"BASE" * 128)
    out = kernels.make_initrd(mods, rel, str(tmp_path / "initrd.img"), base=str(base))
    data = open(out, "rb").read()
    assert data.startswith(base.read_bytes())  # the base first, unchanged
    extra = tmp_path / "extra.cpio"
    extra.write_bytes(data[len(base.read_bytes()):])
    x = tmp_path / "x"
    x.mkdir()
    subprocess.run(["cpio", "-idm", "--quiet"], stdin=open(extra, "rb"), cwd=x, check=True)
    load = (x / "etc" / "modules.load").read_text().split()
    mdir = "/lib/modules/%s/kernel/drivers/" % rel
    assert load == [mdir + "virtio/virtio_ring.ko", mdir + "virtio/virtio.ko",
                    mdir + "virtio/virtio_pci.ko", mdir + "block/virtio_blk.ko"]
    assert (x / "etc" / "kernel-release").read_text().strip() == rel
    assert not (x / "lib" / "modules" / rel / "kernel" / "fs").exists()
    for ko in load:
        assert (x / ko.lstrip("/")).exists()


def test_initrd_for_a_kernel_with_virtio_built_in_loads_nothing(tmp_path):
    rel = "6.1.0-builtin"
    mods = modtree(tmp_path, rel, builtin=("virtio/virtio_ring", "virtio/virtio",
                                           "virtio/virtio_pci", "block/virtio_blk"))
    base = tmp_path / "base.img"
    base.write_bytes(b"B" * 512)
    out = kernels.make_initrd(mods, rel, str(tmp_path / "i.img"), base=str(base))
    x = tmp_path / "x"
    x.mkdir()
    subprocess.run(["cpio", "-idm", "--quiet"], input=open(out, "rb").read()[512:], cwd=x,
                   check=True)
    assert (x / "etc" / "modules.load").read_text() == ""


def test_a_kernel_without_virtio_blk_is_refused_in_one_line(tmp_path):
    rel = "6.1.0-none"
    mods = modtree(tmp_path, rel, mods=(("kernel/drivers/virtio/virtio.ko", ""),))
    base = tmp_path / "base.img"
    base.write_bytes(b"B" * 512)
    with pytest.raises(kernels.KernelError, match="has no virtio_blk: neither built in nor"):
        kernels.make_initrd(mods, rel, str(tmp_path / "i.img"), base=str(base))
    with pytest.raises(kernels.KernelError, match="no lib/modules/6.1.0-other there"):
        kernels.make_initrd(mods, "6.1.0-other", str(tmp_path / "i.img"), base=str(base))


def test_kernel_and_modules_options():
    c = vmbench.parse_config("vmm:kernel=/k/bzImage-b,modules=/k/mods")
    assert c["kernel"] == "/k/bzImage-b" and c["modules"] == "/k/mods"
    assert c["label"] == "vmm kernel=bzImage-b"
    assert vmbench.parse_config("qemu:kernel=/k/bz")["kernel"] == "/k/bz"
    for bad, msg in (("vmm:modules=/m", "goes with kernel"), ("host:kernel=/k", "unknown option"),
                     ("vmm:kernel=", "kernel=: not empty")):
        with pytest.raises(config.ConfigError, match=msg):
            vmbench.parse_config(bad)


def test_scenario_kernels_makes_one_configuration_per_kernel(tmp_path):
    a = bzimage(tmp_path / "bzImage", "6.1.0-a")
    b = bzimage(tmp_path / "b", "6.1.0-b")
    o = sweep.parse_args(["--scenario", "kernels", a, "new=%s,modules=/m" % b, "-r", "5"])
    assert o["kernels"] == [a, "new=%s,modules=/m" % b] and o["repeats"] == "5"
    vmbench.apply_defaults(o)
    assert o["cfgs"] == ["vmm"] and o["jobs"] == "randread-4k,randwrite-4k,seq-read,seq-write"
    assert vmbench.kernel_configs(o) == ["vmm:kernel=%s,name=bzImage" % a,
                                         "vmm:kernel=%s,name=new,modules=/m" % b]
    o["cfgs"] = ["qemu:iothread=off"]
    assert vmbench.kernel_configs(o)[0] == "qemu:iothread=off,kernel=%s,name=bzImage" % a
    for cfgs, msg in ((["vmm", "qemu"], "at most one -c"), (["vmm:kernel=/x"], "without kernel="),
                      (["host"], "vmm or qemu")):
        o["cfgs"] = cfgs
        with pytest.raises(Error, match=msg):
            vmbench.kernel_configs(o)
    with pytest.raises(Error, match="two kernels or more"):
        sweep.parse_args(["--scenario", "kernels", a, "-r", "5"])
    with pytest.raises(Error, match="two kernels named 'bzImage'"):
        vmbench.kernel_specs([a, "x/bzImage"])
    with pytest.raises(Error, match=r"\[NAME=\]PATH\[,modules=DIR\]"):
        vmbench.kernel_specs([a + ",queues=2"])


def checked(argv):
    o = sweep.parse_args(argv)
    o["where"] = "auto"
    return vmbench.check(o)


def test_check_refuses_a_kernel_before_anything_runs(tmp_path):
    a = bzimage(tmp_path / "a", "6.1.0-a")
    junk = tmp_path / "junk"
    junk.write_bytes(b"nothing")
    with pytest.raises(Error, match="neither a bzImage"):
        checked(["--scenario", "kernels", a, str(junk)])
    with pytest.raises(Error, match="no lib/modules/6.1.0-a there"):
        checked(["--scenario", "kernels", a + ",modules=" + str(tmp_path),
                 bzimage(tmp_path / "b", "6.1.0-b")])
    cfgs = checked(["--scenario", "kernels", a, "b=" + bzimage(tmp_path / "b", "6.1.0-b")])
    assert [c["label"] for c in cfgs[0]] == ["a", "b"] and cfgs[5] == ("a", "b")


def test_copy_kernels_records_release_and_sha256(tmp_path):
    a = bzimage(tmp_path / "a", "6.1.0-a")
    cfgs = [vmbench.parse_config("vmm:kernel=%s,name=A" % a), vmbench.parse_config("vmm")]
    out = tmp_path / "out"
    words = vmbench.copy_kernels(str(out), cfgs)
    c = cfgs[0]
    assert c["kernel"] == str(out / "kernels" / "c0-a") and c["kernel_release"] == "6.1.0-a"
    assert c["kernel_sha256"] == kernels.sha256(a) and not cfgs[1]["kernel"]
    assert words == ["A=6.1.0-a %s" % c["kernel_sha256"][:12]]
    assert vmbench_run.kernel_now(c) == "6.1.0-a " + c["kernel_sha256"]
    assert vmbench_run.kernel_now(cfgs[1]) is None
    # The kernel changes between repeats: the plan stops.
    with open(c["kernel"], "ab") as f:
        f.write(b"patched")
    with pytest.raises(kernels.KernelError, match="changed since the plan was made"):
        vmbench_run.kernel_now(c)


def test_a_run_boots_its_own_kernel_and_initrd():
    from vmharness import paths

    class Ctx:
        ddir, direct, nullb = "/d", False, False
        plan = {"mem": "512M", "disk": "64M", "cpus": 1}
        disk = vmbench_run.Ctx.disk
    for spec in ("vmm", "qemu"):
        c = dict(vmbench.parse_config(spec), kernel="/o/kernels/c0-bz", initrd="/o/kernels/c0-i")
        a = vmbench_run.Run(Ctx(), c, 0, "/r", 1, "1", [(0, 0)]).argv(1, "/d/ctl.img")
        assert "/o/kernels/c0-bz" in a and "/o/kernels/c0-i" in a and paths.INITRD not in a
        c = dict(vmbench.parse_config(spec), kernel="/o/kernels/c0-bz")
        a = vmbench_run.Run(Ctx(), c, 0, "/r", 1, "1", [(0, 0)]).argv(1, "/d/ctl.img")
        assert "/o/kernels/c0-bz" in a and paths.INITRD in a


def test_the_report_lists_regressions_for_every_later_kernel():
    # Five repeats of randread IOPS: B always 20 % below A (significantly
    # worse), C within noise of A.
    a = [1000, 1100, 950, 1050, 1020]
    figs = {"A": a, "B": [x * 0.8 for x in a], "C": [1010, 1080, 960, 1060, 1000]}
    samples = [{"run": "r%d-c%d" % (rep, c), "repeat": rep, "cfg": c, "config": label,
                "kind": "vmm", "queues": "2", "guests": 1, "point": "0",
                "job": "randread-4k", "params": "", "phase": "", "dir": "read",
                "figure": "iops", "value": v, "probe_ns": "-"}
               for c, label in enumerate("ABC") for rep, v in enumerate(figs[label], 1)]
    results = report.summarise({}, samples)
    md = report.table_md({"repeats": "5"}, results, [], ["A", "B", "C"])
    b = md[md.index("where B is significantly worse than A"):]
    assert "randread-4k" in b.split("###")[0] and "0.80x" in b.split("###")[0]
    c = md[md.index("where C is significantly worse than A"):]
    assert c.split("\n")[2].startswith("None: no figure where C is significantly worse than A")
    # The two-build form (regress) is the same list with one entry.
    md2 = report.table_md({"repeats": "5"}, results, [], ["A", "B"])
    assert "where B is significantly worse" in md2 and "where C" not in md2


def test_another_baseline_divides_by_that_configuration():
    # bench/vmbench --analyze DIR --baseline LABEL (a 2x2 compares more
    # than one pair): B is half of A in every repeat.
    a = [1000, 1100, 950, 1050]
    samples = [{"run": "r%d-c%d" % (rep, c), "repeat": rep, "cfg": c, "config": label,
                "kind": "vmm", "queues": "1", "guests": 1, "point": "0",
                "job": "randread-4k", "params": "", "phase": "", "dir": "read",
                "figure": "iops", "value": v, "probe_ns": "-"}
               for c, (label, vals) in enumerate((("A", a), ("B", [x / 2 for x in a])))
               for rep, v in enumerate(vals, 1)]
    first = {r["config"]: r for r in report.summarise({}, samples)}
    assert first["B"]["ratio"] == pytest.approx(0.5) and first["A"]["ratio"] is None
    by_b = {r["config"]: r for r in report.summarise({"_baseline": "B"}, samples)}
    assert by_b["A"]["ratio"] == pytest.approx(2.0) and by_b["B"]["ratio"] is None
    assert by_b["A"]["baseline"] == "B"


def test_a_plan_without_a_sweep_gets_a_ratio_plot(tmp_path):
    import shutil
    if not shutil.which("gnuplot"):
        pytest.skip("no gnuplot")
    a = [1000, 1100, 950, 1050]
    samples = [{"run": "r%d-c%d" % (rep, c), "repeat": rep, "cfg": c, "config": label,
                "kind": "vmm", "queues": "1", "guests": 1, "point": "0",
                "job": "seed-virtio-blk", "params": "", "phase": ph, "dir": d,
                "figure": "iops", "value": v * f, "probe_ns": "-"}
               for c, (label, f) in enumerate((("A", 1.0), ("B", 1.2), ("C", 0.5)))
               for ph, d in (("seq-read", "read"), ("rnd-write", "write"))
               for rep, v in enumerate(a, 1)]
    results = report.summarise({}, samples)
    made = report.plots(str(tmp_path), {"title": "t", "repeats": "4"}, results)
    assert [os.path.basename(m) for m in made] == ["ratio-iops-seed-virtio-blk.png"]
    rows = open(tmp_path / "plots" / "ratio-iops-seed-virtio-blk.dat").read().splitlines()
    assert rows[0].split("\t")[1:4] == ["B ratio", "lo", "hi"] and len(rows) == 3
    cols = dict((r.split("\t")[0], r.split("\t")[1:]) for r in rows[1:])
    assert float(cols["seq-read (read)"][0]) == pytest.approx(1.2)
    assert float(cols["rnd-write (write)"][3]) == pytest.approx(0.5)
    # One repeat gives no interval: no plot, no gnuplot error.
    one = [s for s in samples if s["repeat"] == 1]
    assert report.plots(str(tmp_path / "one"), {}, report.summarise({}, one)) == []


def test_seed004_changes_in_words():
    from vmharness import standing
    assert pages.pct({"ratio": 1.08, "lo": 0.80, "hi": 1.45}) == "+8 % (-20 to +45 %)"
    assert pages.pct({"ratio": 0.90, "lo": None, "hi": None}) == "-10 % (no interval)"
    assert pages.pct({"ratio": None, "lo": None, "hi": None}) == "-"
    # The section reads the newest plan with the 2x2's four configurations.
    lines = sweep.seed004_section(standing.scan())
    if not lines:
        pytest.skip("no seed 004 2x2 data under bench/results")
    table = [l for l in lines if l.startswith("| seq-read")]
    assert table and table[0].startswith("| seq-read | +28 % | IOPS ")


def test_profile_takes_a_kernel_of_ones_own_for_every_vmm(tmp_path):
    """bench/vmbench profile -c vmm:kernel=PATH -c qemu:kernel=PATH -c
    kvmtool:kernel=PATH: the same kernel for each VMM, its release and
    sha256 in every run's record, a changed file refused."""
    import json
    from types import SimpleNamespace
    from vmharness import paths, plan, profile
    bz = bzimage(tmp_path / "bzImage-noplug", "6.1.192-noplug")
    vm = vmlinux(tmp_path / "vmlinux-noplug", "6.1.192-noplug")
    args = SimpleNamespace(kernel="vmlinux", queues=1, mem=512, cpus=1, disk_mb=64)
    disk = {"path": "/d/data.img", "serial": "data", "direct": False}
    for spec in ("vmm", "qemu", "kvmtool:bin=/bin/true"):
        cfg = profile.parse_config("%s%skernel=%s" % (spec, "," if ":" in spec else ":", bz))
        argv = profile.guest_argv(cfg, "console=ttyS0", disk, args)
        assert bz in argv and paths.BZIMAGE not in argv and paths.VMLINUX not in argv, spec
        assert not any("kernel=" in a for a in argv), argv  # not a disk option
    plain = profile.guest_argv(profile.parse_config("qemu"), "x", disk, args)
    assert paths.BZIMAGE in plain
    assert profile.prepare(["vmm:kernel=%s" % vm, "qemu:kernel=%s" % vm])
    for bad, msg in (("kvmtool:bin=/bin/true,kernel=%s" % vm, "kvmtool loads no ELF"),
                     ("vmm:kernel=%s" % (tmp_path / "none"), "No such file"),
                     ("vmm:kernel=%s,modules=/m" % bz, "modules= is bench/vmbench's")):
        with pytest.raises(ValueError, match=msg):
            profile.prepare([bad])
    # The record, and a kernel file that changes between runs.
    out = str(tmp_path / "out")
    os.makedirs(out)
    cfg = profile.parse_config("vmm:kernel=%s,name=noplug" % bz)
    first = profile.kernel_of_run(cfg, out)
    assert first == "6.1.192-noplug " + kernels.sha256(bz)
    plan.record(out, {"config": "noplug", "kernel": first})
    assert profile.kernel_of_run(cfg, out) == first
    assert profile.kernel_of_run(profile.parse_config("vmm:kernel=bzimage"), out) is None
    with open(bz, "ab") as f:
        f.write(b"rebuilt")
    with pytest.raises(kernels.KernelError, match="changed since the plan's first run"):
        profile.kernel_of_run(cfg, out)


def test_the_guest_image_line_names_the_kernel_that_boots():
    own = vmbench.parse_config("vmm:kernel=/k/a,name=a")
    assert vmbench.guest_image([own, dict(own, label="b")], "stock").startswith(
        "each configuration's own kernel, initrd=")
    line = vmbench.guest_image([own, vmbench.parse_config("vmm"),
                                vmbench.parse_config("host")], "stock")
    assert line.startswith("stock bzImage=") and " initrd=" in line
