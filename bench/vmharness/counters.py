"""What is counted around a measured phase, for any VMM process.

- KvmStats: the KVM statistics of the VM that a process created, from
  debugfs (/sys/kernel/debug/kvm/PID-FD/, each vCPU statistic summed over
  the VM's vCPUs): exits, halt_exits, irq_injections, io_exits, ...
- ExitReasons: exits by hardware reason from the kvm:kvm_exit tracepoint
  (a tracefs histogram keyed by thread and reason), for the VMM's threads.
- Threads: per thread of the VMM process, CPU time on the CPU and waiting
  for one (/proc/PID/task/TID/schedstat, ns), the part of it spent in
  the guest (guest_time of /proc/PID/task/TID/stat: a vCPU's time inside
  KVM_RUN's guest mode, in clock ticks), and context switches
  (voluntary = the thread slept, involuntary = it was preempted), grouped
  by kind (vcpu, iothread, io-wq, main, other) from the thread's name
  (ours, QEMU's and kvmtool's names).

Each sample is a dict; delta(a, b) subtracts.  Everything here reads the
host the VMM runs on; in the test host that is the test host's kernel,
whose KVM runs the guest, so its counters are the guest's exits.
"""
import glob
import os
import re

DEBUGFS = "/sys/kernel/debug"
TRACEFS_CANDIDATES = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")


def tracefs_write(path, s):
    """Write S to one tracefs control file (a trigger, enable, ...)."""
    with open(path, "w") as f:
        f.write(s)

# AMD SVM exit codes (AMD APM vol. 2, appendix C) seen in practice; the
# test host's emulated CPU is AMD.  Others are shown in hex.
SVM_EXITS = {
    0x40 + 14: "PF", 0x40 + 6: "UD", 0x40 + 17: "AC", 0x40 + 18: "MC",
    0x60: "INTR", 0x61: "NMI", 0x62: "SMI", 0x63: "INIT", 0x64: "VINTR",
    0x72: "CPUID", 0x74: "IRET", 0x75: "SWINT", 0x76: "INVD",
    0x77: "PAUSE", 0x78: "HLT", 0x79: "INVLPG", 0x7b: "IOIO", 0x7c: "MSR",
    0x7f: "SHUTDOWN", 0x81: "VMMCALL", 0x87: "RDTSCP", 0x6e: "RDTSC",
    0x400: "NPF", 0x401: "AVIC_IPI", 0x402: "AVIC_NOACCEL",
}
# Intel VMX basic exit reasons, for hosts with VMX.
VMX_EXITS = {
    0: "EXCEPTION_NMI", 1: "EXTERNAL_INTERRUPT", 7: "INTERRUPT_WINDOW",
    10: "CPUID", 12: "HLT", 28: "CR_ACCESS", 30: "IO_INSTRUCTION",
    31: "MSR_READ", 32: "MSR_WRITE", 40: "PAUSE", 48: "EPT_VIOLATION",
    49: "EPT_MISCONFIG", 52: "PREEMPTION_TIMER", 18: "VMCALL",
}


def _read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def ensure_mounts():
    """Mount debugfs and tracefs if they are not (as root, in the test
    host); silently leaves them absent otherwise."""
    if not os.path.isdir(os.path.join(DEBUGFS, "kvm")):
        os.system("mount -t debugfs none %s 2>/dev/null" % DEBUGFS)
    if not any(os.path.exists(os.path.join(t, "trace")) for t in TRACEFS_CANDIDATES):
        os.system("mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null")


def kvm_vm_dir(pid):
    """debugfs directory of the VM that process PID created, or None."""
    dirs = glob.glob(os.path.join(DEBUGFS, "kvm", "%d-*" % pid))
    return sorted(dirs)[0] if dirs else None


def kvm_stats(pid):
    d = kvm_vm_dir(pid)
    out = {}
    if not d:
        return out
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if os.path.isdir(p):
            continue
        v = _read(p, "").strip()
        if re.fullmatch(r"\d+", v):
            out[name] = int(v)
    return out


# kvmtool's threads: its vCPUs (kvm-vcpu-N), and the three on a disk's
# path, together its I/O threads: ioeventfd-worker (the guest's queue
# notifications, from every ioeventfd; "ioeventfd-worke" as the kernel
# keeps 15 characters), virtio-blk-io (pops the requests and submits
# them) and disk-image-io (reaps libaio's completions).
KVMTOOL_IO_THREADS = ("ioeventfd-worke", "virtio-blk-io", "disk-image-io")


def thread_kind(tid, pid, comm):
    if (comm.startswith("vcpu") or re.fullmatch(r"CPU \d+/KVM", comm)
            or re.fullmatch(r"kvm-vcpu-\d+", comm)):
        return "vcpu"
    if comm.startswith("iothread") or comm.startswith("IO ") or comm in KVMTOOL_IO_THREADS:
        return "iothread"
    if comm.startswith("iou-"):
        return "io-wq"
    if tid == pid:
        return "main"
    return "other"


# guest_time's unit (USER_HZ) and its place in /proc/PID/task/TID/stat:
# field 43 (proc(5)), the 41st after the ")" that ends the thread's name.
CLK_TCK = os.sysconf("SC_CLK_TCK")
STAT_GUEST_TIME = 40


def guest_ns(stat_text):
    """A thread's time in guest mode (ns) from its stat line; 0 where the
    line cannot be read."""
    fields = (stat_text or "").rpartition(")")[2].split()
    try:
        return int(fields[STAT_GUEST_TIME]) * 1000000000 // CLK_TCK
    except (IndexError, ValueError):
        return 0


def threads(pid):
    """{tid: {comm, kind, run_ns, wait_ns, guest_ns, vcsw, ivcsw}}."""
    out = {}
    for t in glob.glob("/proc/%d/task/*" % pid):
        tid = int(os.path.basename(t))
        comm = (_read(t + "/comm") or "").strip()
        sched = (_read(t + "/schedstat") or "0 0 0").split()
        status = _read(t + "/status") or ""
        m1 = re.search(r"^voluntary_ctxt_switches:\s*(\d+)", status, re.M)
        m2 = re.search(r"^nonvoluntary_ctxt_switches:\s*(\d+)", status, re.M)
        if not comm:
            continue
        out[tid] = {"comm": comm, "kind": thread_kind(tid, pid, comm),
                    "run_ns": int(sched[0]), "wait_ns": int(sched[1]),
                    "guest_ns": guest_ns(_read(t + "/stat")),
                    "vcsw": int(m1.group(1)) if m1 else 0,
                    "ivcsw": int(m2.group(1)) if m2 else 0}
    return out


def threads_by_kind(before, after):
    """Per kind: summed deltas of the threads present at the end (a thread
    born during the phase counts from 0)."""
    kinds = {}
    for tid, a in after.items():
        k = kinds.setdefault(a["kind"], {"threads": 0, "run_ns": 0, "wait_ns": 0,
                                         "guest_ns": 0, "vcsw": 0, "ivcsw": 0})
        k["threads"] += 1
        for f in ("run_ns", "wait_ns", "guest_ns", "vcsw", "ivcsw"):
            k[f] += a.get(f, 0) - before.get(tid, {}).get(f, 0)
    return kinds


def delta(a, b):
    return {k: b[k] - a.get(k, 0) for k in b if isinstance(b[k], int)}


class ExitReasons:
    """A tracefs histogram of kvm:kvm_exit by (thread, reason), active
    between start() and stop()."""

    SPEC = "hist:keys=common_pid,exit_reason:size=4096"

    def __init__(self):
        self.trig = None
        for t in TRACEFS_CANDIDATES:
            p = os.path.join(t, "events", "kvm", "kvm_exit", "trigger")
            if os.path.exists(p):
                self.trig = p
                break

    def start(self):
        if not self.trig:
            return False
        try:
            tracefs_write(self.trig, "!" + self.SPEC)
        except OSError:
            pass
        try:
            tracefs_write(self.trig, self.SPEC)
        except OSError:
            self.trig = None
            return False
        return True

    def read(self, tids=None, isa_amd=True):
        """{reason name: count} so far, over threads TIDS (None: every
        thread, for a host that runs one VM)."""
        if not self.trig:
            return {}
        text = _read(os.path.join(os.path.dirname(self.trig), "hist"), "")
        names = SVM_EXITS if isa_amd else VMX_EXITS
        out = {}
        for m in re.finditer(r"common_pid:\s*(\d+).*?exit_reason:\s*(\d+)\s*\}\s*hitcount:\s*(\d+)", text):
            tid, reason, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if tids is not None and tid not in tids:
                continue
            key = names.get(reason, "0x%x" % reason)
            out[key] = out.get(key, 0) + n
        return out

    def stop(self, tids, isa_amd=True):
        """read(TIDS), then remove the trigger."""
        out = self.read(tids, isa_amd)
        if self.trig:
            try:
                tracefs_write(self.trig, "!" + self.SPEC)
            except OSError:
                pass
        return out


def cpu_is_amd():
    return "AuthenticAMD" in (_read("/proc/cpuinfo") or "")


def host_cpu_ticks():
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    f = [int(x) for x in (_read("/proc/stat") or "cpu 0").split("\n")[0].split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    return sum(f) - idle, sum(f)


# The rows of /proc/interrupts a death may follow: IPIs (reschedule,
# function call, TLB shootdown) and the local timer; device IRQs summed.
HOST_IRQS = ("RES", "CAL", "TLB", "LOC")


def host_interrupts(path="/proc/interrupts"):
    """{row: [count per CPU]} of HOST_IRQS, and "dev": every numbered
    (device) IRQ summed per CPU.  {} where the file cannot be read."""
    text = _read(path)
    if not text:
        return {}
    lines = text.split("\n")
    ncpu = len(lines[0].split())
    out = {"dev": [0] * ncpu}
    for line in lines[1:]:
        label, _, rest = line.partition(":")
        label = label.strip()
        counts = rest.split()[:ncpu]
        if len(counts) < ncpu or not all(c.isdigit() for c in counts):
            continue
        counts = [int(c) for c in counts]
        if label in HOST_IRQS:
            out[label] = counts
        elif label.isdigit():
            out["dev"] = [a + b for a, b in zip(out["dev"], counts)]
    return out


def interrupts_delta(before, after):
    """after - before, row by row and CPU by CPU, for rows in both."""
    return {k: [b - a for a, b in zip(before[k], after[k])]
            for k in after if k in before}


class Snapshot:
    """Everything above, for process PID, between begin() and end()."""

    def __init__(self, pid):
        self.pid = pid
        self.exits = ExitReasons()

    def begin(self):
        self.k0 = kvm_stats(self.pid)
        self.t0 = threads(self.pid)
        self.c0 = host_cpu_ticks()
        self.exits.start()

    def end(self):
        t1 = threads(self.pid)
        reasons = self.exits.stop(set(t1) | set(self.t0), cpu_is_amd())
        k1 = kvm_stats(self.pid)
        c1 = host_cpu_ticks()
        total = c1[1] - self.c0[1]
        return {"kvm": delta(self.k0, k1), "exit_reasons": reasons,
                "threads": threads_by_kind(self.t0, t1),
                "host_busy": (c1[0] - self.c0[0]) / total if total else None}
