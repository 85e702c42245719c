"""What the deaths report says about each death: how the host's kvm
trace ends (vmharness.kvmtrace.describe) and each vCPU's CR3 read at a
stop (deaths.stuck_cr3), from lines laid out as the test host's
tracefs, our VMM's -v and QEMU's monitor write them."""
import json
import os

from vmharness import counters, deaths, kvmtrace, stats


class NoTrace:
    """A flight recorder with nothing to save (a run that ends clean)."""

    def clear(self):
        pass

    def save(self, path):
        return False


class Args:
    boot_timeout = 20


EXIT = ("{comm}-{pid} [{cpu:03d}] {flags} {ts:.6f}: kvm_exit: vcpu {vcpu} reason {reason} "
        "rip {rip} info1 {info1} info2 {info2} intr_info {intr} error_code 0x00000000\n")


def exit_line(comm="vcpu0", pid=274, cpu=0, flags=".....", ts=1.0, vcpu=0, reason="interrupt",
              rip="0x418c1a", info1="0x0000000000000000", info2="0x0000000000000000",
              intr="0x00000000"):
    return "           " + EXIT.format(**locals())


def test_a_triple_fault_names_its_vcpu_host_cpu_event_and_the_exit_before(tmp_path):
    p = tmp_path / "t"
    p.write_text(
        exit_line(cpu=0, ts=1.0, reason="msr", rip="0xffffffff8107e914")
        + exit_line(comm="vcpu1", pid=275, cpu=1, vcpu=1, ts=1.1)  # the other vCPU
        + exit_line(cpu=0, flags=".N...", ts=1.2)
        + "           vcpu0-274 [000] ..... 1.3: kvm_inj_virq: IRQ 0x23\n"
        + exit_line(cpu=0, ts=1.4, reason="shutdown", intr="0x80000023"))
    d = kvmtrace.describe(str(p))
    assert d.startswith("triple fault: vCPU 0 (thread vcpu0-274, host CPU 0 of its 3 exits) "
                        "at rip 0x418c1a delivering interrupt 0x23")
    assert d.endswith("its exit before: interrupt at rip 0x418c1a, host reschedule pending")
    # no reschedule pending at that exit: none said
    p.write_text(exit_line(ts=1.2, reason="vintr") +
                 exit_line(ts=1.4, reason="shutdown", intr="0x80000b0e"))
    assert kvmtrace.describe(str(p)).endswith(
        "delivering exception 0xe; its exit before: vintr at rip 0x418c1a")


def test_a_vcpu_stuck_in_its_page_walk_is_a_loop_with_its_root(tmp_path):
    walk = dict(comm="CPU 0/KVM", pid=157, cpu=1, reason="npf", rip="0xffffffffc066d20c",
                info1="0x000000020000000e", info2="0x0000000100a92fe0", intr="0x80000b0e")
    notify = dict(walk, info1="0x000000010000000e", info2="0x00000000c0003000")
    lines = [exit_line(ts=i, **notify) for i in range(150)]  # not in a page walk
    p = tmp_path / "t"
    p.write_text("".join(lines + [exit_line(ts=i, **walk) for i in range(kvmtrace.LOOP_MIN - 1)]))
    assert kvmtrace.describe(str(p)) is None
    p.write_text("".join(lines + [exit_line(ts=i, **walk) for i in range(kvmtrace.LOOP_MIN)]))
    assert kvmtrace.describe(str(p)) == (
        "loop: vCPU 0 (host CPU 1) at rip 0xffffffffc066d20c, %d nested page faults in its "
        "page walk at 0x0000000100a92fe0 (table page 0x100a92000) delivering exception 0xe"
        % kvmtrace.LOOP_MIN)


def test_the_report_lists_deaths_with_their_trace_and_cr3(tmp_path):
    out = tmp_path / "out"
    (out / "logs").mkdir(parents=True)
    runs = [{"config": "vmm", "job": "seed-seqread", "outcome": "stall", "round": 8,
             "log": "/elsewhere/logs/n008-vmm-seed-seqread.log"},
            {"config": "qemu", "job": "seed-seqread", "outcome": "hang", "round": 9,
             "log": "/elsewhere/logs/n009-qemu-seed-seqread.log"},
            {"config": "vmm", "job": "seed-seqread", "outcome": "clean", "round": 9,
             "log": "/elsewhere/logs/n009-vmm-seed-seqread.log"}]
    with open(out / "runs.jsonl", "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    logs = out / "logs"
    (logs / "n008-vmm-seed-seqread.log.vmm").write_text(
        "vmm: info: vCPU 0: running (mp_state 0), rip=0xffffffffc066d20c rflags=0x10246, "
        "interrupts on; cr0=0x80050033 cr3=0x1036a6000 cr4=0x3106f0 efer=0xd01; APIC\n"
        "vmm: info: vCPU 1: halted, rip=0x1; cr0=0x80050033 cr3=0x1fe0c000 cr4=0 efer=0\n")
    (logs / "n008-vmm-seed-seqread.log.kvmtrace").write_text(
        exit_line(reason="shutdown", intr="0x80000b0e"))
    (logs / "n009-qemu-seed-seqread.log.regs").write_text(
        "CPU#0\nEAX=00000000 EBX=00000000\nCR0=80050033 CR2=00000000 CR3=0000000100a92000 "
        "CR4=003106f0\nCPU#1\nCR0=80050033 CR2=00000000 CR3=000000001fe0c000 CR4=003106f0\n")
    assert deaths.stuck_cr3(str(logs / "n008-vmm-seed-seqread.log")) == {
        0: "0x1036a6000", 1: "0x1fe0c000"}
    text = deaths.analyse(str(out))
    assert ("- n008 vmm seed-seqread (stall): triple fault: vCPU 0 (thread vcpu0-274, host CPU 0 "
            "of its 1 exits) at rip 0x418c1a delivering exception 0xe; CR3 at the stop: "
            "vCPU 0 0x1036a6000, vCPU 1 0x1fe0c000") in text
    assert ("- n009 qemu seed-seqread (hang): CR3 at the stop: vCPU 0 0x100a92000, "
            "vCPU 1 0x1fe0c000") in text
    assert "n009 vmm" not in text


def test_a_silent_end_with_a_shutdown_in_the_trace_is_a_triple_fault(tmp_path, monkeypatch):
    # QEMU exits 0 without fio's output when its guest triple-faults
    class Recorder:
        def __init__(self, trace):
            self.trace = trace

        def clear(self):
            pass

        def save(self, path):
            if not self.trace:
                return False
            with open(path, "w") as f:
                f.write(self.trace)
            return True

    monkeypatch.setattr(deaths, "guest_argv", lambda *a: ["sh", "-c", "echo booted"])
    cfg = {"kind": "vmm", "name": "x", "opts": {}}
    down = exit_line(reason="shutdown", intr="0x80000b0e")
    for trace, outcome in ((down, "triple-fault"), ("", "no-result"),
                           (exit_line(reason="hlt"), "no-result")):
        log = str(tmp_path / ("n%d.log" % len(trace)))
        rec = deaths.one_run(cfg, "verify", {}, Args(), log, Recorder(trace))
        assert rec["outcome"] == outcome, trace


PROC_INTERRUPTS = """           CPU0       CPU1
  1:         10         20   IO-APIC   1-edge      i8042
  3:          5          0   IO-APIC   3-edge      ttyS1
 24:        100         50   PCI-MSI 65536-edge      virtio0-config
NMI:          0          0   Non-maskable interrupts
LOC:       1000       2000   Local timer interrupts
RES:         70         30   Rescheduling interrupts
CAL:          1          2   Function call interrupts
TLB:          0          4   TLB shootdowns
ERR:          0
MIS:          0
"""


def test_host_interrupts_are_ipis_timer_and_device_irqs_per_cpu(tmp_path):
    p = tmp_path / "interrupts"
    p.write_text(PROC_INTERRUPTS)
    got = counters.host_interrupts(str(p))
    assert got == {"dev": [115, 70], "LOC": [1000, 2000], "RES": [70, 30],
                   "CAL": [1, 2], "TLB": [0, 4]}
    later = dict(got, RES=[75, 31], dev=[115, 90])
    assert counters.interrupts_delta(got, later) == {
        "dev": [0, 20], "LOC": [0, 0], "RES": [5, 1], "CAL": [0, 0], "TLB": [0, 0]}
    assert counters.host_interrupts(str(tmp_path / "none")) == {}


def test_each_run_records_the_host_interrupts_it_took(tmp_path, monkeypatch):
    snaps = iter([{"RES": [1, 2], "dev": [0, 0]}, {"RES": [11, 5], "dev": [3, 0]}])
    monkeypatch.setattr(counters, "host_interrupts", lambda: next(snaps))
    monkeypatch.setattr(deaths, "guest_argv", lambda *a: ["sh", "-c", "echo booted"])
    rec = deaths.one_run({"kind": "vmm", "name": "x", "opts": {}}, "verify", {}, Args(),
                         str(tmp_path / "n.log"), NoTrace())
    assert rec["host_irqs"] == {"RES": [10, 3], "dev": [3, 0]}


def test_the_report_gives_interrupts_per_second_for_clean_runs_and_deaths(tmp_path):
    def run(config, outcome, seconds, res):
        return {"config": config, "job": "seed-randread", "outcome": outcome, "round": 0,
                "log": "/x/n.log", "seconds": seconds,
                "host_irqs": {"RES": res, "CAL": [0, 0], "TLB": [0, 0], "LOC": [10, 10],
                              "dev": [0, 0]}}
    runs = [run("vmm", "clean", 10, [100, 20]), run("vmm", "clean", 20, [400, 0]),
            run("vmm", "stall", 5, [50, 50]), run("qemu", "clean", 10, [10, 10])]
    with open(tmp_path / "runs.jsonl", "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    text = deaths.analyse(str(tmp_path))
    assert "- vmm, clean (n=2): RES 15/1, CAL 0/0, TLB 0/0, LOC 1/1, dev 0/0" in text
    assert "- vmm, died (n=1): RES 10/10," in text
    assert "- qemu, clean (n=1): RES 1/1," in text
    # runs recorded before the counts existed: no such section
    for r in runs:
        del r["host_irqs"]
    with open(tmp_path / "runs.jsonl", "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    assert "interrupts per second" not in deaths.analyse(str(tmp_path))


def test_a_clean_run_records_its_requests_and_the_phases_kvm_counts(tmp_path, monkeypatch):
    fio = {"jobs": [{"read": {"total_ios": 1200, "iops": 100.0}, "write": {}},
                    {"read": {"total_ios": 34, "iops": 3.0}, "write": {}}]}
    console = ("=== PHASE BEGIN verify ===\n=== PHASE END verify rc=0 ===\n"
               "=== FIO-JSON BEGIN verify ===\n%s\n=== FIO-JSON END verify rc=0 ===\n"
               % json.dumps(fio))
    phase_counts = iter([{"irq_injections": 100, "exits": 1000},
                         {"irq_injections": 130, "exits": 1500}])
    monkeypatch.setattr(counters, "host_interrupts", lambda: {})
    monkeypatch.setattr(counters, "kvm_stats", lambda pid: next(phase_counts))
    monkeypatch.setattr(deaths, "guest_argv",
                        lambda *a: ["sh", "-c", "cat <<'X'\n%sX\nsleep 0.2" % console])
    rec = deaths.one_run({"kind": "vmm", "name": "x", "opts": {}}, "verify", {}, Args(),
                         str(tmp_path / "n.log"), NoTrace())
    assert rec["outcome"] == "clean"
    assert rec["ios"] == 1234
    assert rec["kvm"] == {"irq_injections": 30, "exits": 500}


def run_of(config, job, outcome, ios=None, inj=None, preempted=None):
    r = {"config": config, "job": job, "outcome": outcome, "round": 0,
         "log": "/x/n.log", "seconds": 10}
    if ios is not None:
        r["ios"] = ios
    if inj is not None:
        r["kvm"] = {"irq_injections": inj}
    if preempted is not None:
        r.setdefault("kvm", {}).update(preemption_reported=preempted[0],
                                       preemption_other=preempted[1])
    return r


def test_deaths_per_vcpu_preemption_count_both_kinds_and_every_pair(tmp_path):
    # a: 10 runs, 150 + 50 preemptions each, 1 death; b: 300 + 100, 4;
    # c: no preemption counts (an older record): no such line with c.
    runs = ([run_of("a", "j", "clean", 1000, 10, (150, 50))] * 9 + [run_of("a", "j", "stall")] +
            [run_of("b", "j", "clean", 1000, 10, (300, 100))] * 6 +
            [run_of("b", "j", "triple-fault")] * 4 +
            [run_of("c", "j", "clean", 1000, 10)] * 10)
    line = deaths.per_work(runs, "a", "b", *deaths.WORK[2])
    assert line.startswith("Per vCPU preemption: a 500.00 deaths per million preemptions "
                           "(1 in 0.00M)")
    assert "2.00x a's preemptions per run" in line
    assert "p = %.3f" % stats.binom_two_sided(1, 5, 2000 / 6000) in line
    assert deaths.per_work(runs, "a", "c", *deaths.WORK[2]) is None
    with open(tmp_path / "runs.jsonl", "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    text = deaths.analyse(str(tmp_path))
    assert line in text
    for c1, c2 in (("a", "b"), ("a", "c"), ("b", "c")):
        assert "All jobs: %s %d/10 deaths, %s %d/10" % (
            c1, {"a": 1, "b": 4}.get(c1, 0), c2, {"a": 1, "b": 4}.get(c2, 0)) in text
    assert text.count("Per request:") == 3 and text.count("Per vCPU preemption:") == 1


def test_deaths_per_request_weigh_each_configurations_work(tmp_path):
    # a: 10 runs of 1000 requests (and 10 of another job, 3000), 2 deaths;
    # b: 10 runs of 2000 and 10 of 3000, 6 deaths.
    runs = ([run_of("a", "j1", "clean", 1000, 10)] * 9 + [run_of("a", "j1", "stall")] +
            [run_of("a", "j2", "clean", 3000, 10)] * 9 + [run_of("a", "j2", "stall")] +
            [run_of("b", "j1", "clean", 2000, 40)] * 7 + [run_of("b", "j1", "triple-fault")] * 3 +
            [run_of("b", "j2", "clean", 3000, 40)] * 7 + [run_of("b", "j2", "hang")] * 3)
    line = deaths.per_work(runs, "a", "b", *deaths.WORK[0])
    # a: 10 * 1000 + 10 * 3000 = 40,000 requests; b: 20,000 + 30,000 = 50,000.
    assert line.startswith("Per request: a 50.00 deaths per million requests (2 in 0.04M)")
    assert "b 120.00 (6 in 0.05M; 1.25x a's requests per run)" in line
    p = stats.binom_two_sided(2, 8, 40000 / 90000)
    assert "per request p = %.3f" % p in line
    # the same runs by interrupts injected: a 200, b 800
    inj = deaths.per_work(runs, "a", "b", *deaths.WORK[1])
    assert inj.startswith("Per interrupt injected: a 10000.00 deaths per million injections")
    assert "(6 in 0.00M; 4.00x a's injections per run)" in inj
    assert "p = %.3f" % stats.binom_two_sided(2, 8, 0.2) in inj
    with open(tmp_path / "runs.jsonl", "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    text = deaths.analyse(str(tmp_path))
    assert line in text and inj in text
    # runs recorded before the counts existed: no such lines
    for r in runs:
        r.pop("ios", None)
        r.pop("kvm", None)
    assert deaths.per_work(runs, "a", "b", *deaths.WORK[0]) is None
    assert deaths.per_work(runs, "a", "b", *deaths.WORK[1]) is None
