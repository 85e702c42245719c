"""The death scenario's flight recorder (bench/vmharness/kvmtrace.py) on
the real host KVM: a guest stopped at its timeout, as a hang is, leaves
its vCPUs' last exits, with their rips, in the copy.  Needs root and
tracefs with the kvm events: the test host has both.  Stock kernel
only: this is about what the host records, not about the guest."""
import os
import re

import pytest

from vmharness import cmdlines, counters, guestrun, kvmtrace, paths

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="tracefs needs root")


def test_a_stopped_guests_last_exits_are_kept(tmp_path):
    counters.ensure_mounts()
    rec = kvmtrace.FlightRecorder()
    assert rec.start(), "no tracefs with kvm events"
    try:
        rec.clear()
        argv = cmdlines.vmm_argv(paths.BZIMAGE, paths.INITRD,
                                 cmdlines.guest_cmdline(script="echo idle; sleep 600"),
                                 256, 2, [], paths.VMM_BIN)
        log = str(tmp_path / "guest.log")
        g = guestrun.GuestRun(argv, timeout=20, log_path=log).run()
        assert g.outcome == "hang" and any("idle" in l for l in g.lines), g.tail()
        assert rec.save(log + ".kvmtrace")
    finally:
        rec.stop()
    text = open(log + ".kvmtrace").read()
    lines = text.splitlines()
    assert 0 < len(lines) <= 2000
    # Both of our vCPU threads' exits, each with the guest's rip.
    for cpu in (0, 1):
        assert re.search(r"vcpu%d-\d+ .* kvm_exit: vcpu %d reason \w+ rip 0x[0-9a-f]+"
                         % (cpu, cpu), text), text[-3000:]
    # Oldest first: trace timestamps never go back.
    stamps = [float(m.group(1)) for m in
              (re.search(r"\s(\d+\.\d+): ", l) for l in lines) if m]
    assert stamps and stamps == sorted(stamps)
