"""The harness's formulas against known values, its parsers against
known input."""
import math
import os
import re

import pytest

from vmharness import (cmdlines, config, fiojson, guestrun, markers, profile, profile_tables, scenario,
                       stats)


def test_wilson_known_values():
    lo, hi = stats.wilson(0, 50)
    assert lo == 0.0 and hi == pytest.approx(0.0714, abs=5e-4)
    lo, hi = stats.wilson(10, 100)
    assert (lo, hi) == (pytest.approx(0.0552, abs=5e-4), pytest.approx(0.1744, abs=5e-4))
    assert stats.wilson(0, 0) == (0.0, 1.0)


def test_fisher_known_values():
    # [[10, 0], [0, 10]]: 2 / C(20, 10)
    assert stats.fisher_two_sided(10, 0, 0, 10) == pytest.approx(2 / math.comb(20, 10))
    # the tea-tasting table [[3, 1], [1, 3]]: p = 0.486
    assert stats.fisher_two_sided(3, 1, 1, 3) == pytest.approx(0.4857, abs=1e-4)
    assert stats.fisher_two_sided(0, 5, 0, 5) == 1.0


def run(cfg, rep, iops, job="j"):
    return {"config": cfg, "job": job, "repeat": rep, "fio": {"iops": iops}}


def test_paired_ratio_on_the_log_scale():
    # ratios 2, 2, 2: no spread, the interval is the point
    runs = [run("a", r, 100) for r in range(3)] + [run("b", r, 200) for r in range(3)]
    pr = profile_tables.paired_ratio(runs, "j", "a", "b")
    assert pr["n"] == 3 and pr["ratio"] == pytest.approx(2.0)
    assert pr["lo"] == pytest.approx(2.0) and pr["hi"] == pytest.approx(2.0)
    # ratios 1 and 4: geometric mean 2; log-scale t interval with 1 df
    runs = [run("a", 0, 100), run("b", 0, 100), run("a", 1, 100), run("b", 1, 400)]
    pr = profile_tables.paired_ratio(runs, "j", "a", "b")
    m, sd = math.log(2), math.log(4) / math.sqrt(2)
    h = 12.7062047 * sd / math.sqrt(2)
    assert pr["ratio"] == pytest.approx(2.0)
    assert pr["lo"] == pytest.approx(math.exp(m - h)) and pr["lo"] > 0
    assert pr["hi"] == pytest.approx(math.exp(m + h))
    # a repeat with one side missing is not paired
    assert profile_tables.paired_ratio(runs[:3], "j", "a", "b") is None


def test_fio_json_between_markers():
    lines = ["junk", "=== FIO-JSON BEGIN x ===", "fio: note", '{"jobs": [{"read":',
             '{"total_ios": 10, "iops": 5.0, "bw_bytes": 2000000, "runtime": 2000,',
             '"clat_ns": {"mean": 3000, "percentile": {"99.000000": 9000}}},',
             '"write": {"total_ios": 0}}]}', "=== FIO-JSON END x rc=0 ===", "after"]
    got = fiojson.extract(lines)
    assert list(got) == ["x"] and got["x"][0] == 0
    s = fiojson.summary(got["x"][1])
    assert s["ios"] == 10 and s["iops"] == 5.0 and s["bw_mbs"] == 2.0
    assert s["lat_mean_us"] == 3.0 and s["lat_p99_us"] == 9.0 and s["runtime_s"] == 2.0
    bad = fiojson.extract(["=== FIO-JSON BEGIN y ===", "{not json", "=== FIO-JSON END y rc=1 ==="])
    assert bad["y"] == (1, None)


IRQ0 = """           CPU0       CPU1
  0:         36          0   IO-APIC   2-edge      timer
 25:        100         50  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
 26:         10        200  PCI-MSIX-0000:00:02.0   2-edge      virtio1-req.1
NMI:          0          0   Non-maskable interrupts
LOC:       5000       6000   Local timer interrupts
RES:         30         40   Rescheduling interrupts
ERR:          0
"""


def test_guest_interrupts_during_the_phase_per_cpu(tmp_path):
    """fio_script's awk (run here by the host's awk; the guest's is
    busybox) prints the rows that moved; guest_irqs reads them back."""
    import subprocess
    irq1 = (IRQ0.replace("100         50", "160         50")
            .replace("10        200", "10        207")
            .replace("6000", "6500").replace("30         40", "33         40"))
    (tmp_path / "irq0").write_text(IRQ0)
    (tmp_path / "irq1").write_text(irq1)
    out = subprocess.run(["awk", guestrun.IRQ_DELTA_AWK, "irq0", "irq1"], cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["virtio1-req.0 60 0", "virtio1-req.1 0 7", "LOC: 0 500", "RES: 3 0"]
    lines = (["=== GUEST-IRQS BEGIN other ===", "LOC: 9 9", "=== GUEST-IRQS END other ===",
              "=== GUEST-IRQS BEGIN j ==="] + out[:2] + ["[ 12.3] a kernel line"] + out[2:] +
             ["virtio2-req.0 1 1", "=== GUEST-IRQS END j ==="])
    assert guestrun.guest_irqs(lines, "j") == {
        "virtio-req.0": [61, 1], "virtio-req.1": [0, 7], "LOC": [0, 500], "RES": [3, 0]}
    assert guestrun.guest_irqs(lines[:4], "j") is None  # no end: the guest died
    assert guestrun.guest_irqs(["=== FIO-JSON END j rc=0 ==="], "j") is None
    script = guestrun.fio_script("j", ["--rw=read"])
    assert script.index("/tmp/irq0") < script.index("PHASE BEGIN") < script.index("fio --")
    assert script.index("PHASE END") < script.index("/tmp/irq1") < script.index("GUEST-IRQS BEGIN j")


def test_profile_gives_the_guests_interrupts_per_request():
    rec = {"fio": {"ios": 100, "iops": 20.0, "lat_mean_us": 1.0},
           "counters": {"kvm": {}, "exit_reasons": {}, "threads": {}},
           "guest_irqs": {"LOC": [30, 20], "virtio-req.0": [10, 0]}}
    row = profile_tables.per_request(rec)
    assert row["guest_irq:LOC"] == 0.5 and row["guest_irq:virtio-req.0"] == 0.1
    del rec["guest_irqs"]
    assert not any(k.startswith("guest_irq:") for k in profile_tables.per_request(rec))


def test_profile_table_counts_a_guest_interrupt_row_that_did_not_move_as_0():
    def run(cfg, irqs):
        return {"config": cfg, "job": "j", "fio": {"ios": 10, "iops": 1.0, "lat_mean_us": 1.0},
                "counters": {"kvm": {}, "exit_reasons": {}, "threads": {}}, "guest_irqs": irqs}
    runs = [run("vmm", {"virtio-req.0": [4, 0], "virtio-req.1": [0, 2]}),
            run("vmm", {"virtio-req.0": [6, 0]}), run("qemu", {"LOC": [1, 1]})]
    rows = {l.split(" | ")[0]: l for l in profile_tables.table(runs, ["qemu", "vmm"], "j").splitlines()}
    assert rows["| guest_irq:virtio-req.1"] == "| guest_irq:virtio-req.1 | 0.000 | 0.100 |"
    assert rows["| guest_irq:virtio-req.0"] == "| guest_irq:virtio-req.0 | 0.000 | 0.500 |"


def test_death_classification():
    assert guestrun.classify(["ok"], 0, False) == "clean"
    assert guestrun.classify(["rcu: INFO: rcu_preempt detected stalls"], 0, False) == "stall"
    assert guestrun.classify(["traps: double fault"], 4, False) == "double-fault"
    assert guestrun.classify(["BUG: TASK stack guard page was hit"], 1, False) == "entry-stack"
    assert guestrun.classify(["Kernel panic - not syncing"], 3, False) == "panic"
    assert guestrun.classify([], -15, True) == "hang"
    assert guestrun.classify([], 4, False) == "exit-4"
    assert guestrun.classify([], 4, False, "vmm: error: vCPU 1: triple fault (KVM_EXIT_SHUTDOWN)\n") == "triple-fault"
    assert "triple-fault" in guestrun.TEST_HOST_DEATHS


def test_command_lines():
    d = {"path": "/x.img", "serial": "data", "queues": 2, "direct": True,
         "opts": ["poll=0"]}
    argv = cmdlines.vmm_argv("K", "I", "C", 512, 2, [d], "vmm")
    assert argv[argv.index("-d") + 1] == "/x.img,direct,queues=2,serial=data,poll=0"
    q = cmdlines.qemu_argv("K", "I", "C", 512, 2, [dict(d, iothread=True)])
    assert "virtio-blk-pci,drive=d0,num-queues=2,iothread=io0,serial=data" in q
    assert "file=/x.img,if=none,id=d0,format=raw,aio=io_uring,cache=none" in q
    with pytest.raises(ValueError):
        cmdlines.qemu_argv("K", "I", "C", 512, 2, [{"path": "ram:1G"}])
    assert "run64=" in cmdlines.guest_cmdline(script="echo hi")


def test_rounds_shuffle_and_resume():
    from vmharness import plan
    cfgs = [config.parse("qemu", "profile"), config.parse("vmm:queues=1,name=v1,jobs=a", "profile")]
    full = list(plan.rounds(cfgs, ["a", "b"], 3, 7))
    # every round: qemu runs a and b, v1 only a; nothing else
    assert len(full) == 9
    for rnd in range(3):
        got = sorted((c["name"], j) for r, _, c, j in full if r == rnd)
        assert got == [("qemu", "a"), ("qemu", "b"), ("v1", "a")]
    # same seed, same order; a resumed plan skips what is done and keeps
    # the order of the rest
    assert [(r, i, c["name"], j) for r, i, c, j in plan.rounds(cfgs, ["a", "b"], 3, 7)] == \
        [(r, i, c["name"], j) for r, i, c, j in full]
    done = {(r, c["name"], j) for r, _, c, j in full[:4]}
    rest = list(plan.rounds(cfgs, ["a", "b"], 3, 7, done))
    assert [(r, i, c["name"], j) for r, i, c, j in rest] == \
        [(r, i, c["name"], j) for r, i, c, j in full[4:]]


def _log(bs, entries):
    """A dm-log-writes log built by hand: (sector, nr, flags, data|label)."""
    import io
    from vmharness import logwrites as lw
    out = io.BytesIO()
    out.write(lw.SUPER.pack(lw.MAGIC, 1, len(entries), bs).ljust(bs, b"\0"))
    for sector, nr, flags, payload in entries:
        label = payload if flags & lw.MARK else b""
        out.write((lw.ENTRY.pack(sector, nr, flags, len(label) or len(payload)) + label).ljust(bs, b"\0"))
        if not flags & (lw.MARK | lw.DISCARD):
            out.write(payload)
    return out


def test_logwrites_replay_stops_where_asked():
    import io
    from vmharness import logwrites as lw
    bs = 512
    f = _log(bs, [(2, 1, 0, b"a" * 512), (0, 0, lw.FLUSH, b""),
                  (0, 0, lw.MARK, b"p1"), (2, 2, 0, b"b" * 1024),
                  (3, 1, lw.DISCARD, b""), (0, 0, lw.FLUSH, b"")])
    size, entries = lw.read_log(f)
    assert size == bs and len(entries) == 6
    assert entries[2].label == "p1" and entries[3].data == b"b" * 1024
    disk = lw.replay(bs, entries, 8 * bs, 2)  # up to the first flush
    assert disk[1024:1536] == b"a" * 512 and disk[1536:2048] == bytes(512)
    disk = lw.replay(bs, entries, 8 * bs, 6)
    assert disk[1024:1536] == b"b" * 512 and disk[1536:2048] == bytes(512)
    with pytest.raises(ValueError):  # zeros: no log there
        lw.read_log(io.BytesIO(bytes(512)))


def test_guest_extra_joins_append_words():
    from vmharness import plan
    assert plan.guest_extra(config.parse("vmm:append=nopv+no-kvmapf,name=x", "profile")) == \
        "nopv no-kvmapf"
    assert plan.guest_extra(config.parse("qemu", "profile")) == ""


def test_append_reaches_the_guest_not_the_disk():
    from types import SimpleNamespace
    from vmharness import cmdlines, plan, profile
    cfg = config.parse("vmm:append=nopv,queues=1", "profile")
    args = SimpleNamespace(kernel="bzimage", queues=2, mem=512, cpus=2)
    disk = {"path": "/x.img", "serial": "data", "direct": False}
    line = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
    argv = profile.guest_argv(cfg, line, disk, args)
    assert "nopv" in argv[argv.index("-p") + 1]
    assert not any("append" in a for a in argv)
    assert argv[argv.index("-k") + 1].endswith("bzImage")
    cfg = config.parse("vmm:kernel=vmlinux", "profile")
    argv = profile.guest_argv(cfg, line, disk, args)
    assert argv[argv.index("-k") + 1].endswith("vmlinux")
    assert not any("kernel=" in a for a in argv)


def test_profile_backend_ram_gives_ours_a_ram_disk_of_the_files_size():
    from types import SimpleNamespace
    from vmharness import cmdlines, plan, profile
    args = SimpleNamespace(kernel="bzimage", queues=2, mem=512, cpus=2, disk_mb=1024)
    disk = {"path": "/x.img", "serial": "data", "direct": True}
    line = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
    argv = profile.guest_argv(config.parse("vmm:backend=ram,poll=8", "profile"), line, disk, args)
    assert argv[argv.index("-d") + 1] == "ram:1024M,queues=2,serial=data,poll=8"
    argv = profile.guest_argv(config.parse("vmm", "profile"), line, disk, args)
    assert argv[argv.index("-d") + 1] == "/x.img,direct,queues=2,serial=data"
    assert "--pin" not in argv
    assert disk["path"] == "/x.img"


def test_profile_a_silent_end_without_fio_is_no_result(tmp_path, monkeypatch):
    # QEMU under -no-reboot ends with status 0 when its guest resets in
    # the middle of the job: no result, not a clean run
    from types import SimpleNamespace
    args = SimpleNamespace(boot_timeout=30)
    cfg = {"kind": "qemu", "name": "qemu", "opts": {}}
    for code, want in ((0, "no-result"), (3, "exit-3")):
        monkeypatch.setattr(profile, "guest_argv", lambda *a, code=code: [
            "sh", "-c", "echo '=== RUN BEGIN ==='; "
            "echo '=== PHASE BEGIN randread-4k ==='; exit %d" % code])
        rec = profile.one_run(cfg, "randread-4k", {}, args,
                              str(tmp_path / ("r%d.log" % code)))
        assert rec["outcome"] == want
        assert rec["rc"] == code and "fio" not in rec


def test_profile_pin_is_the_vmms_option_not_the_disks():
    from types import SimpleNamespace
    from vmharness import cmdlines, plan, profile
    args = SimpleNamespace(kernel="bzimage", queues=2, mem=512, cpus=2, disk_mb=1024)
    disk = {"path": "/x.img", "serial": "data", "direct": True}
    line = cmdlines.guest_cmdline(fio="verify", disk_serial="data")
    for word in ("on", "off", "follow"):
        argv = profile.guest_argv(config.parse("vmm:pin=%s,poll=0" % word, "profile"), line, disk, args)
        assert argv[argv.index("--pin") + 1] == word
        assert argv[argv.index("-d") + 1] == "/x.img,direct,queues=2,serial=data,poll=0"


def test_deaths_counts_test_host_ends(tmp_path):
    from vmharness import deaths, plan, testhost
    out = str(tmp_path)
    plan.record(out, {"config": "vmm", "job": "verify", "outcome": "clean"})
    assert scenario.boot_finished(out, 0)
    assert "Test host" not in deaths.analyse(out)
    assert not scenario.boot_finished(out, testhost.LOCKED_UP)
    assert not scenario.boot_finished(out, testhost.DIED)
    assert not scenario.boot_finished(out, testhost.TIMED_OUT)
    assert not scenario.boot_finished(out, 1)
    text = deaths.analyse(out)
    assert "4 boot(s) ended before the plan did: 1 lock-up(s) (no sign of life, " \
        "stopped), 1 at the time limit, 2 death(s)" in text
    assert [e["runs_before"] for e in plan.load_testhost_ends(out)] == [1, 1, 1, 1]
    assert "In flight" not in text  # no plan said which run it was


def test_test_host_ends_recorded_before_their_kind_read_124_as_a_lock_up(tmp_path):
    from vmharness import plan
    with open(tmp_path / "testhost.jsonl", "w") as f:
        f.write('{"status": 124, "time": 1, "runs_before": 3}\n'
                '{"status": 125, "time": 2, "runs_before": 5}\n')
    assert [e["kind"] for e in plan.load_testhost_ends(str(tmp_path))] == ["lock-up", "death"]


def test_deaths_say_which_run_the_test_host_died_under(tmp_path):
    from vmharness import deaths, plan, testhost
    out = str(tmp_path)
    plan.record(out, {"config": "vmm", "job": "verify", "outcome": "clean"})
    plan.set_in_flight(out, {"config": "qemu", "job": "seed-seqread", "round": 6})
    assert not scenario.boot_finished(out, 125)
    # The next boot runs it again and more; a lock-up in a later run.
    plan.set_in_flight(out, {"config": "qemu", "job": "seed-seqread", "round": 6})
    plan.record(out, {"config": "qemu", "job": "seed-seqread", "outcome": "clean"})
    plan.set_in_flight(out, None)
    plan.set_in_flight(out, None)  # twice: nothing to remove, no error
    assert not scenario.boot_finished(out, testhost.LOCKED_UP)
    plan.set_in_flight(out, {"config": "vmm", "job": "verify", "round": 7})
    assert not scenario.boot_finished(out, testhost.LOCKED_UP)
    ends = plan.load_testhost_ends(out)
    assert [e.get("in_flight", {}).get("config") for e in ends] == ["qemu", None, "vmm"]
    assert "In flight when it ended: qemu seed-seqread (n006, death), "\
        "vmm verify (n007, lock-up)" in deaths.analyse(out)


def _fake_tracefs(root, events):
    for e in events:
        os.makedirs(os.path.join(root, "events", "kvm", e))
        open(os.path.join(root, "events", "kvm", e, "enable"), "w").write("0")
    open(os.path.join(root, "trace"), "w").write(
        "# tracer: nop\n#\n" + "".join(" vcpu-%d: kvm_exit: reason npf rip 0x%x\n" % (i % 2, i)
                                    for i in range(10)))


def test_flight_recorder_keeps_the_last_events(tmp_path):
    from vmharness import kvmtrace
    root = str(tmp_path / "tracing")
    _fake_tracefs(root, kvmtrace.EVENTS)
    rec = kvmtrace.FlightRecorder(roots=("/nonexistent", root))
    assert rec.start()
    for e in kvmtrace.EVENTS:
        assert open(os.path.join(root, "events", "kvm", e, "enable")).read() == "1"
    assert open(os.path.join(root, "buffer_size_kb")).read() == str(kvmtrace.BUFFER_KB)
    assert open(os.path.join(root, "tracing_on")).read() == "1"
    out = str(tmp_path / "death.kvmtrace")
    assert rec.save(out, lines=3)
    # The last three, oldest first, the header left out.
    assert open(out).read().splitlines() == [
        " vcpu-%d: kvm_exit: reason npf rip 0x%x" % (i % 2, i) for i in (7, 8, 9)]
    rec.clear()
    assert open(os.path.join(root, "trace")).read() == ""
    # A cleared buffer reads as its header alone: nothing to keep.
    open(os.path.join(root, "trace"), "w").write("# tracer: nop\n#\n")
    assert not rec.save(str(tmp_path / "empty.kvmtrace"))
    assert not os.path.exists(str(tmp_path / "empty.kvmtrace"))
    rec.stop()
    assert open(os.path.join(root, "events", "kvm", "kvm_exit", "enable")).read() == "0"


def test_flight_recorder_without_tracefs_does_nothing(tmp_path):
    from vmharness import kvmtrace
    rec = kvmtrace.FlightRecorder(roots=(str(tmp_path),))
    assert not rec.start()
    rec.clear()
    assert not rec.save(str(tmp_path / "x"))
    assert not os.path.exists(str(tmp_path / "x"))
    rec.stop()


def test_a_scenarios_test_host_boot_has_no_limit_a_long_plan_reaches(tmp_path, monkeypatch):
    """A boot that ends at its time limit cuts the plan short and counts
    as a test-host end: 100 deaths runs (about 40 minutes) must fit."""
    from vmharness import cli, testhost
    seen = {}

    def fake_reboots(next_argv, out_dir, finished, **kw):
        seen.update(kw)
        return 0, 1
    monkeypatch.setattr(testhost, "run_with_reboots", fake_reboots)
    monkeypatch.setattr(testhost, "kvm_is_fast", lambda: False)
    monkeypatch.setattr(scenario, "write_meta", lambda args: None)
    assert cli.main(["deaths", "-n", "25", "--out", str(tmp_path), "--seed", "1"]) == 0
    assert seen["timeout_s"] >= 3 * 3600


def test_marked_blocks_end_by_name_restart_and_drop_the_unended():
    b = re.compile(r"^B (\S+)$")
    e = re.compile(r"^E (\S+) (\d)$")
    lines = ["x", "B a", "1", "B a", "2", "E other 0", "[k] kernel", "E a 7", "after",
             "B c", "3", "E c 1", "B d", "4"]
    got = [(n, m.group(2), body) for n, m, body in markers.blocks(lines, b, e)]
    assert got == [("a", "7", ["2", "E other 0", "[k] kernel"]), ("c", "1", ["3"])]
    assert list(markers.blocks(["E a 1", "B a"], b, e)) == []


def test_profile_pins_qemus_vcpus_and_iothread_like_ours(tmp_path):
    """qemu:pin=on: a real process whose threads carry QEMU's names
    (-name debug-threads=on) gets vCPU i on the i-th allowed CPU and its
    iothread beside vCPU 0; its other threads stay unbound."""
    import subprocess
    import sys
    from vmharness import profile
    child = subprocess.Popen([sys.executable, "-c", r'''
import sys, threading
names = ["CPU 1/KVM", "CPU 0/KVM", "IO io0", "worker"]
ready, stop = threading.Barrier(len(names) + 1), threading.Event()
def run(name):
    with open("/proc/self/task/%d/comm" % threading.get_native_id(), "w") as f:
        f.write(name)
    ready.wait()
    stop.wait()
for n in names:
    threading.Thread(target=run, args=(n,), daemon=True).start()
ready.wait()
print("ready", flush=True)
sys.stdin.read()
'''], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        allowed = sorted(os.sched_getaffinity(child.pid))
        placed = profile.pin_qemu_threads(child.pid)
        want = {"CPU 0/KVM": allowed[0], "CPU 1/KVM": allowed[1 % len(allowed)],
                "IO io0": allowed[0]}
        assert placed == want
        seen = {}
        for t in os.listdir("/proc/%d/task" % child.pid):
            with open("/proc/%d/task/%s/comm" % (child.pid, t)) as f:
                comm = f.read().strip()
            seen[comm] = os.sched_getaffinity(int(t))
        for comm, cpu in want.items():
            assert seen[comm] == {cpu}, (comm, seen[comm])
        assert seen["worker"] == set(allowed)
    finally:
        child.stdin.close()
        child.wait(timeout=10)
