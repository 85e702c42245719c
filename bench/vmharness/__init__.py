"""vmharness: the project's orchestration in one Python package.

It owns, once each, what launching and measuring guests needs: the command
lines of our VMM and of QEMU (cmdlines), a guest run with its console,
markers and stall detection (guestrun), the counters read around a measured
phase (counters: the test host's KVM statistics, the VMM's threads),
fio's JSON (fiojson) and the test host (testhost).  Scenarios are modules
over those (profile: where the time goes, ours beside QEMU); the command
line is bench/vmbench.

Debian's python3 only; no third-party modules.
"""
