"""A flight recorder of the host KVM's last events, kept for a guest death.

A guest that triple-faults leaves nothing behind: on AMD, KVM resets the
vCPU on the shutdown intercept, so its registers are gone, and the
guest's console says nothing.  What the host's KVM saw last is still
there: while a guest runs, the kvm tracepoints below record into the
host's trace ring buffer (small, overwritten as it fills), which is
cleared before each run and copied out after a death.  kvm_exit carries
the guest's rip at every exit (the SHUTDOWN exit's included), so the
copy shows what each vCPU did in its last moments.  It reads the host
the VMM runs on: in the test host, the test host's kernel.
"""
import gzip
import os
import re

from .counters import TRACEFS_CANDIDATES, tracefs_write

EVENTS = ("kvm_exit", "kvm_inj_exception", "kvm_inj_virq", "kvm_msr",
          "kvm_page_fault")
BUFFER_KB = 256  # per CPU: a second or so of a busy guest's exits


class FlightRecorder:
    def __init__(self, roots=TRACEFS_CANDIDATES):
        self.root = next((r for r in roots
                          if os.path.isdir(os.path.join(r, "events", "kvm"))), None)

    def _events(self, on):
        for e in EVENTS:
            p = os.path.join(self.root, "events", "kvm", e, "enable")
            if os.path.exists(p):
                tracefs_write(p, "1" if on else "0")

    def start(self):
        """Record from now on.  False: no tracefs with kvm events here."""
        if not self.root:
            return False
        try:
            tracefs_write(os.path.join(self.root, "buffer_size_kb"), str(BUFFER_KB))
            self._events(True)
            tracefs_write(os.path.join(self.root, "tracing_on"), "1")
        except OSError:
            self.root = None
            return False
        return True

    def clear(self):
        """Forget what was recorded (before each run)."""
        if self.root:
            tracefs_write(os.path.join(self.root, "trace"), "")

    def save(self, path, lines=2000):
        """The last LINES events so far, oldest first, into PATH (the
        buffer is read, not consumed).  False: nothing recorded."""
        if not self.root:
            return False
        with open(os.path.join(self.root, "trace")) as f:
            tail = [l for l in f if not l.startswith("#")][-lines:]
        if not tail:
            return False
        with open(path, "w") as f:
            f.writelines(tail)
        return True

    def stop(self):
        if self.root:
            self._events(False)


# One line of the trace: "COMM-PID [CPU] FLAGS TIME: EVENT: FIELDS".
_LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<flags>\S+)\s+"
                   r"(?P<ts>[\d.]+): (?P<event>\w+): (?P<rest>.*)$")
_EXIT = re.compile(r"vcpu (?P<vcpu>\d+) reason (?P<reason>\S+) rip (?P<rip>0x[0-9a-f]+) "
                   r"info1 (?P<info1>0x[0-9a-f]+) info2 (?P<info2>0x[0-9a-f]+) "
                   r"intr_info (?P<intr>0x[0-9a-f]+)")
NPF_IN_PAGE_WALK = 1 << 33  # info1 of an NPF exit: in the guest's own page walk
LOOP_MIN = 100  # the same NPF this often in the window: a vCPU going nowhere


def open_text(path):
    """PATH opened for reading text, or PATH.gz where only that is there
    (bench/results keeps the raw files a finding or an analysis needs
    gzip -9'd: bench/README.md).  OSError if neither is."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt")
    return open(path)


def saved(path):
    """Whether PATH or PATH.gz is there."""
    return os.path.exists(path) or os.path.exists(path + ".gz")


def _exits(path):
    with open_text(path) as f:
        for line in f:
            m = _LINE.match(line)
            if not m or m.group("event") != "kvm_exit":
                continue
            e = _EXIT.match(m.group("rest"))
            if e:
                d = dict(m.groupdict(), **e.groupdict())
                d["cpu"] = int(d["cpu"])
                yield d


def _event(intr):
    """What an exit was delivering (its exit_int_info), in words."""
    v = int(intr, 16)
    if not v & (1 << 31):
        return "nothing"
    kind = {0: "interrupt", 2: "NMI", 3: "exception", 4: "software interrupt"}.get(
        (v >> 8) & 7, "event")
    return "%s 0x%x" % (kind, v & 0xff)


def describe(path):
    """How the guest of a saved trace ended, in one line, or None: a
    triple fault (the SHUTDOWN exit: which vCPU, on which host CPU, at
    which rip, delivering what, after which exit), or a vCPU stuck
    repeating one nested page fault in its own page walk (rip, the
    guest-physical address, and the page of the table it read: the root,
    CR3, when the fault is at the walk's first level)."""
    exits = list(_exits(path))
    down = [e for e in exits if e["reason"] == "shutdown"]
    if down:
        d = down[-1]
        mine = [e for e in exits if e["pid"] == d["pid"]]
        before = mine[-2] if len(mine) > 1 else None
        cpus = sorted({e["cpu"] for e in mine})
        out = ("triple fault: vCPU %s (thread %s-%s, host CPU %s of its %d exits) at rip %s "
               "delivering %s" % (d["vcpu"], d["comm"], d["pid"],
                                  "+".join(map(str, cpus)), len(mine), d["rip"],
                                  _event(d["intr"])))
        if before:
            out += "; its exit before: %s at rip %s%s" % (
                before["reason"], before["rip"],
                ", host reschedule pending" if "N" in before["flags"] else "")
        return out
    loops = {}
    for e in exits:
        if e["reason"] == "npf" and int(e["info1"], 16) & NPF_IN_PAGE_WALK:
            k = (e["vcpu"], e["rip"], e["info2"])
            loops.setdefault(k, []).append(e)
    if not loops:
        return None
    (vcpu, rip, gpa), es = max(loops.items(), key=lambda kv: len(kv[1]))
    if len(es) < LOOP_MIN:
        return None
    return ("loop: vCPU %s (host CPU %s) at rip %s, %d nested page faults in its page walk "
            "at %s (table page %#x) delivering %s" % (
                vcpu, "+".join(map(str, sorted({e["cpu"] for e in es}))), rip, len(es),
                gpa, int(gpa, 16) & ~0xfff, _event(es[-1]["intr"])))
