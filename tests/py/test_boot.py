"""vmharness.boot: configurations, the first kvm_entry from a trace, and
the per-stage table with its paired ratios."""
import json

import pytest

from vmharness import boot


def test_configurations_name_a_vmm_an_image_and_a_machine():
    c = boot.parse_config("qemu-microvm")
    assert (c["kind"], c["image"], c["machine"], c["name"]) == ("qemu", "vmlinux", "microvm", "qemu-microvm")
    assert c["opts"] == {"jobs": "small"}  # the stock kernel cannot find its disks
    c = boot.parse_config("vmm-elf:bin=/x/vmm,name=old")
    assert (c["kind"], c["image"], c["name"], c["opts"]) == ("vmm", "vmlinux", "old", {"bin": "/x/vmm"})
    with pytest.raises(ValueError):
        boot.parse_config("qemu-q35")


def test_first_entry_is_the_oldest_kvm_entry_in_the_trace(tmp_path):
    for d in ("events/kvm/kvm_entry", "options"):
        (tmp_path / d).mkdir(parents=True)
    fe = boot.FirstEntry()
    fe.dir = str(tmp_path)
    assert fe.arm()
    assert (tmp_path / "trace_clock").read_text() == "mono"
    assert (tmp_path / "options/overwrite").read_text() == "0"
    (tmp_path / "trace").write_text(
        "# tracer: nop\n"
        "          python3-201   [000] .....  1040.000100: tracing_mark_write: x\n"
        "       CPU 0/KVM-305   [001] d..2.  1040.512345: kvm_entry: vcpu 0, rip 0xfff0\n"
        "       CPU 0/KVM-305   [001] d..2.  1040.600000: kvm_entry: vcpu 0, rip 0x1000\n")
    assert fe.first() == pytest.approx(1040.512345)
    assert (tmp_path / "options/overwrite").read_text() == "1"
    assert (tmp_path / "events/kvm/kvm_entry/enable").read_text() == "0"


def rec(rnd, config, kernel, init, exit_=None, exits=None):
    return {"round": rnd, "config": config, "job": kernel, "outcome": "clean",
            "stages": {"entry": 0.01, "first_line": init / 3, "init": init,
                       "exit": exit_ or init + 0.5},
            "guest_uptime_at_init": init - 0.2,
            "exits_to_init": exits or {"IOIO": 100, "NPF": 50}, "exits": {"IOIO": 300}}


def write_runs(path, runs):
    with open(path / "runs.jsonl", "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")


def test_analyse_compares_ours_with_qemus_best_on_the_same_file(tmp_path):
    runs = []
    for rnd, (ours, pvh, mvm) in enumerate(((1.0, 3.0, 2.0), (1.1, 3.1, 2.1), (0.9, 2.9, 2.2))):
        runs += [rec(rnd, "vmm-elf", "small", ours), rec(rnd, "qemu-pvh", "small", pvh),
                 rec(rnd, "qemu-microvm", "small", mvm)]
    runs.append({"round": 3, "config": "vmm-elf", "job": "small", "outcome": "stall"})
    write_runs(tmp_path, runs)
    text = boot.analyse(str(tmp_path))
    assert "| vmm-elf | 3/4 | 0.010 ± 0.000 |" in text
    # microvm is QEMU's best here (2.1 s on average against 3.0 s).
    line = [l for l in text.splitlines() if "launch to init" in l][0]
    assert "vmm-elf / qemu-microvm" in line and "0.47x" in line and "significant" in line
    assert "not significant" not in line
    assert "| IOIO | NPF |" in text
    assert (tmp_path / "boot.md").read_text() == text


def test_analyse_says_not_significant_when_the_ratio_straddles_one(tmp_path):
    runs = []
    for rnd, (ours, pvh) in enumerate(((1.0, 1.5), (1.5, 1.0), (1.2, 1.2))):
        runs += [rec(rnd, "vmm-elf", "stock", ours), rec(rnd, "qemu-pvh", "stock", pvh)]
    write_runs(tmp_path, runs)
    line = [l for l in boot.analyse(str(tmp_path)).splitlines() if "launch to init" in l][0]
    assert "vmm-elf / qemu-pvh" in line and "not significant" in line


def test_analyse_gives_small_over_stock_per_configuration(tmp_path):
    runs = []
    for rnd in range(3):
        runs += [rec(rnd, "vmm-elf", "stock", 3.0 + rnd * 0.1), rec(rnd, "vmm-elf", "small", 0.6 + rnd * 0.01)]
    write_runs(tmp_path, runs)
    line = [l for l in boot.analyse(str(tmp_path)).splitlines() if "small / stock" in l][0]
    assert "vmm-elf" in line and "0.20x" in line


def test_our_setup_stages_are_read_from_the_vmm_messages(tmp_path):
    err = ("vmm: debug: startup: inputs read, disks open at 7.0 ms\n"
           "vmm: something else\nvmm: debug: startup: first KVM_RUN at 21.5 ms\n")
    assert boot.vmm_startup(err) == [("inputs read, disks open", 7.0), ("first KVM_RUN", 21.5)]
    runs = [dict(rec(0, "vmm-elf", "small", 1.0), vmm_startup_ms=[["first KVM_RUN", 20.0]]),
            dict(rec(1, "vmm-elf", "small", 1.0), vmm_startup_ms=[["first KVM_RUN", 30.0]])]
    write_runs(tmp_path, runs)
    assert "vmm-elf set-up, mean ms since `vmm run` began (2 boots): first KVM_RUN 25.0" \
        in boot.analyse(str(tmp_path))


def test_the_kernel_stage_is_init_less_the_kernels_uptime():
    r = rec(0, "vmm", "stock", 3.0)  # uptime at /init 2.8 s
    assert boot.stage(r, "kernel") == pytest.approx(0.2)
    r["stages"]["kernel"] = 0.25
    assert boot.stage(r, "kernel") == 0.25
    assert boot.stage({"outcome": "hang"}, "init") is None


def test_a_bad_configuration_or_kernel_stops_before_anything_runs(tmp_path):
    import os
    import subprocess
    import sys
    cmd = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "vmbench")
    for bad in (["-c", "qemu-q35"], ["--kernels", "tiny"]):
        out = tmp_path / "out"
        r = subprocess.run([sys.executable, cmd, "boot", "-o", str(out)] + bad,
                           capture_output=True, text=True)
        assert r.returncode == 2 and "error" in r.stderr, (bad, r.stderr)
        assert not out.exists()
