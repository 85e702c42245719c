"""kvmtool as an x86 configuration of bench/vmbench profile: its command
line (cmdlines.kvmtool_argv, profile.guest_argv), its configuration's
options, its guest script, its threads' kinds and its place in the
tables.  No guest, no KVM."""
import base64
import re
from types import SimpleNamespace

import pytest

from vmharness import cmdlines, counters, guestrun, profile

ARGS = SimpleNamespace(kernel="vmlinux", queues=2, mem=512, cpus=2, disk_mb=1024)
DISK = {"path": "/tmp/vmh-disk.img", "serial": "data", "direct": False}


def test_kvmtool_argv_is_the_model_run_with_the_file_and_no_network():
    argv = cmdlines.kvmtool_argv("K", "I", "C", 512, 2,
                                 [{"path": "/x.img", "queues": 1, "serial": "data"}], "lkvm")
    assert argv == ["env", "HOME=/tmp", "lkvm", "run", "-k", "K", "-i", "I", "-p", "C",
                    "-m", "512", "-c", "2", "--console", "serial",
                    "--virtio-transport", "pci", "--network", "mode=none",
                    "-d", "/x.img"]
    argv = cmdlines.kvmtool_argv("K", "I", "C", 512, 2,
                                 [{"path": "/x.img", "direct": True, "readonly": True}], "lkvm")
    assert argv[argv.index("-d") + 1] == "/x.img,ro,direct"
    assert cmdlines.kvmtool_argv("K", "I", "C", 1, 1, [], "lkvm", home=None)[0] == "lkvm"


def test_kvmtool_argv_refuses_what_kvmtool_cannot_do():
    with pytest.raises(ValueError):
        cmdlines.kvmtool_argv("K", "I", "C", 512, 2, [{"path": "ram:1G"}], "lkvm")
    with pytest.raises(ValueError):
        cmdlines.kvmtool_argv("K", "I", "C", 512, 2, [{"path": "/x.img", "queues": 2}], "lkvm")
    # kvmtool puts its own words first and cuts the whole at 2046 bytes
    room = cmdlines.KVMTOOL_CMDLINE_MAX - len(cmdlines.KVMTOOL_X86_CMDLINE)
    cmdlines.kvmtool_argv("K", "I", "x" * room, 512, 2, [], "lkvm")
    with pytest.raises(ValueError):
        cmdlines.kvmtool_argv("K", "I", "x" * (room + 1), 512, 2, [], "lkvm")


def test_every_profile_job_fits_kvmtools_command_line():
    for job, fio_args in profile.JOBS.items():
        script = profile.KVMTOOL_SCRIPT_HEAD + guestrun.fio_script(job, fio_args)
        line = cmdlines.guest_cmdline(script=script)
        assert len(cmdlines.KVMTOOL_X86_CMDLINE) + len(line) <= cmdlines.KVMTOOL_CMDLINE_MAX, job


def test_profile_kvmtool_gets_vmms_guest_and_data_disk():
    line = cmdlines.guest_cmdline(fio="verify")
    kt = profile.guest_argv(profile.parse_config("kvmtool:append=nopv"), line, DISK, ARGS)
    ours = profile.guest_argv(profile.parse_config("vmm:append=nopv"), line, DISK, ARGS)

    def opt(argv, o):
        return argv[argv.index(o) + 1]
    # the same vCPUs, memory, initrd, command line, data disk file
    for o in ("-m", "-c", "-i", "-p"):
        assert opt(kt, o) == opt(ours, o), o
    assert opt(kt, "-d").split(",")[0] == opt(ours, "-d").split(",")[0] == DISK["path"]
    assert "nopv" in opt(kt, "-p")
    # the same kernel as a bzImage (kvmtool loads no ELF), one queue,
    # the default binary
    assert opt(kt, "-k") == profile.paths.BZIMAGE and opt(ours, "-k") == profile.paths.VMLINUX
    assert opt(kt, "-d") == DISK["path"]
    assert profile.KVMTOOL_BIN in kt
    kt = profile.guest_argv(profile.parse_config("kvmtool:bin=/b/lkvm,name=k"), line,
                            dict(DISK, direct=True), ARGS)
    assert "/b/lkvm" in kt and opt(kt, "-d") == DISK["path"] + ",direct"


def test_profile_kvmtool_options():
    assert profile.parse_config("kvmtool") == {"kind": "kvmtool", "name": "kvmtool", "opts": {}}
    c = profile.parse_config("kvmtool:queues=1,name=kt-q1,jobs=randread-4k")
    assert c["name"] == "kt-q1" and c["opts"] == {"queues": "1", "jobs": "randread-4k"}
    for bad in ("kvmtool:queues=2", "kvmtool:pin=on", "kvmtool:backend=ram",
                "kvmtool:kernel=vmlinux", "kvmtool:iothread=off", "kvmtool:x", "lkvm"):
        with pytest.raises(ValueError):
            profile.parse_config(bad)
    assert profile.parse_config("qemu:queues=1")["kind"] == "qemu"
    assert profile.parse_config("vmm")["kind"] == "vmm"


def test_profile_prepare_checks_before_the_test_host(tmp_path, monkeypatch):
    built = []
    monkeypatch.setattr(profile.subprocess, "run",
                        lambda argv, **kw: built.append(argv) or SimpleNamespace(returncode=0))
    lkvm = tmp_path / "lkvm"
    lkvm.write_text("#!/bin/sh\n")
    lkvm.chmod(0o755)
    monkeypatch.setattr(profile, "KVMTOOL_BIN", str(lkvm))
    profile.prepare(["qemu", "vmm"])
    assert built == []
    profile.prepare(["qemu", "kvmtool"])
    assert built == [[profile.PEERS_X86]]
    profile.prepare(["kvmtool:bin=%s" % lkvm])
    assert len(built) == 1
    with pytest.raises(ValueError):
        profile.prepare(["kvmtool:bin=%s" % (tmp_path / "none")])
    lkvm.unlink()  # the build said yes but left nothing
    with pytest.raises(ValueError):
        profile.prepare(["kvmtool"])


def test_profile_kvmtools_guest_runs_fio_on_vda(tmp_path, monkeypatch):
    """kvmtool's disk has no serial "data": the guest is told no disk=
    and the script runs fio on the one virtio disk, /dev/vda; ours and
    QEMU's still find it by serial."""
    seen = []

    class Fake:
        def __init__(self, argv, **kw):
            seen.append(argv)
            self.lines, self.rc, self.seconds, self.outcome = [], 0, 0.0, "clean"

        def run(self):
            return self

    monkeypatch.setattr(profile.guestrun, "GuestRun", Fake)
    args = SimpleNamespace(boot_timeout=30, **vars(ARGS))
    for spec in ("kvmtool", "vmm", "qemu"):
        profile.one_run(profile.parse_config(spec), "randread-4k", DISK, args,
                        str(tmp_path / (spec + ".log")))
    scripts = []
    for argv in seen:
        line = argv[argv.index("-append" if "-append" in argv else "-p") + 1]
        m = re.search(r"run64=(\S+)", line)
        scripts.append((line, base64.b64decode(m.group(1)).decode()))
    (kt_line, kt_script), (vmm_line, vmm_script), (q_line, q_script) = scripts
    assert "disk=" not in kt_line and kt_script.startswith("FIO_DISK=/dev/vda\n")
    assert "--filename=$FIO_DISK" in kt_script
    for line, script in ((vmm_line, vmm_script), (q_line, q_script)):
        assert "disk=data" in line and "/dev/vda" not in script
    assert "--stats" not in seen[0]


def test_kvmtools_threads_have_kinds():
    kind = lambda comm: counters.thread_kind(2, 1, comm)
    assert kind("kvm-vcpu-0") == kind("kvm-vcpu-12") == "vcpu"
    assert kind("virtio-blk-io") == kind("disk-image-io") == "iothread"
    assert kind("ioeventfd-worke") == "iothread"  # ioeventfd-worker, as comm keeps it
    assert kind("term-poll") == kind("kvm-vcpu-x") == "other"
    # ours and QEMU's as before
    assert kind("vcpu0") == kind("CPU 1/KVM") == "vcpu"
    assert kind("iothread0") == kind("IO io0") == "iothread"


def run(cfg, rep, iops, job="randread-4k"):
    return {"config": cfg, "job": job, "repeat": rep, "try": 1, "outcome": "clean",
            "fio": {"iops": iops, "lat_mean_us": 10.0, "ios": 1000},
            "counters": {"kvm": {"exits": 2000}, "exit_reasons": {}, "threads": {}}}


def test_profile_tables_put_kvmtool_beside_qemu_and_ours(tmp_path):
    from vmharness import plan
    for rep in range(2):
        for cfg, iops in (("vmm", 300 + rep), ("kvmtool", 150), ("qemu", 100)):
            plan.record(str(tmp_path), run(cfg, rep, iops))
    text = profile.analyse(str(tmp_path))
    head = text.splitlines()[0]
    assert head.index("qemu (n=2)") < head.index("kvmtool (n=2)") < head.index("vmm (n=2)")
    assert "kvmtool / qemu IOPS: 1.50x" in text
    assert "vmm / qemu IOPS: 3.0" in text
    assert "vmm / kvmtool IOPS: 2.0" in text
    assert "kvmtool / vmm" not in text and "qemu / kvmtool" not in text


def test_kvmtools_command_line_limit_is_the_guest_kernels():
    """kvmtool copies cmdline_size - 1 bytes (the bzImage's setup
    header, 2047 in Debian's 6.1) of its words and ours."""
    import struct
    try:
        with open(profile.paths.BZIMAGE, "rb") as f:
            hdr = f.read(0x240)
    except OSError:
        pytest.skip("no guest bzImage (make guest)")
    assert hdr[0x202:0x206] == b"HdrS"
    assert cmdlines.KVMTOOL_CMDLINE_MAX == struct.unpack_from("<I", hdr, 0x238)[0] - 1


def test_kvmtools_own_words_are_its_sources():
    """KVMTOOL_X86_CMDLINE is what kvmtool's x86 code writes before ours,
    read from the shared peers tarball that bench/peers-x86.sh builds
    (PEERS_DIR, as there)."""
    import glob
    import os
    import tarfile
    peers = os.environ.get("PEERS_DIR", "/work/shared/peers")
    tarballs = sorted(glob.glob(os.path.join(peers, "kvmtool-*.tar.gz")))
    if not tarballs:
        pytest.skip("no kvmtool-*.tar.gz in %s (PEERS_DIR)" % peers)
    files = {}
    with tarfile.open(tarballs[0]) as t:
        for m in t.getmembers():
            for name in ("x86/kvm.c", "builtin-run.c"):
                if m.name.split("/", 1)[-1] == name:
                    files[name] = t.extractfile(m).read().decode()
    arch, run = files["x86/kvm.c"], files["builtin-run.c"]
    body = arch[arch.index("void kvm__arch_set_cmdline"):]
    words = re.findall(r'"([^"]*)"', body[:body.index("\n}")])
    first = "".join(words[:2]) + words[-1]  # the strcpy and the non-video strcat
    assert cmdlines.KVMTOOL_X86_CMDLINE.startswith(first)
    assert '" console=ttyS0"' in run and '" root=/dev/vda rw "' in run
    assert cmdlines.KVMTOOL_X86_CMDLINE == first + " console=ttyS0" + " root=/dev/vda rw " + " "
