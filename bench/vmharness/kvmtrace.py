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
import os

from .counters import TRACEFS_CANDIDATES

EVENTS = ("kvm_exit", "kvm_inj_exception", "kvm_inj_virq", "kvm_msr",
          "kvm_page_fault")
BUFFER_KB = 256  # per CPU: a second or so of a busy guest's exits


def _write(path, s):
    with open(path, "w") as f:
        f.write(s)


class FlightRecorder:
    def __init__(self, roots=TRACEFS_CANDIDATES):
        self.root = next((r for r in roots
                          if os.path.isdir(os.path.join(r, "events", "kvm"))), None)

    def _events(self, on):
        for e in EVENTS:
            p = os.path.join(self.root, "events", "kvm", e, "enable")
            if os.path.exists(p):
                _write(p, "1" if on else "0")

    def start(self):
        """Record from now on.  False: no tracefs with kvm events here."""
        if not self.root:
            return False
        try:
            _write(os.path.join(self.root, "buffer_size_kb"), str(BUFFER_KB))
            self._events(True)
            _write(os.path.join(self.root, "tracing_on"), "1")
        except OSError:
            self.root = None
            return False
        return True

    def clear(self):
        """Forget what was recorded (before each run)."""
        if self.root:
            _write(os.path.join(self.root, "trace"), "")

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
