"""One guest, start to end: launch a VMM, read its console line by line,
act on guest/init's markers, stop it on a stall or a timeout, classify
how it ended.

Markers (guest/init and the scripts run in it):
  === PHASE BEGIN NAME ===      a measured phase starts (counters taken)
  === PHASE END NAME rc=N ===   it ended
  === FIO-JSON BEGIN/END ... ===, === RUN BEGIN/END ... ===
"""
import os
import re
import signal
import subprocess
import threading
import time

from . import markers

PHASE_BEGIN = re.compile(r"^=== PHASE BEGIN (\S+) ===$")
PHASE_END = re.compile(r"^=== PHASE END (\S+) rc=(\d+) ===$")

# How a guest died, from its console: first match wins.
DEATHS = (
    ("stall", re.compile(r"rcu: INFO: rcu_\S+ detected stall|BUG: soft lockup")),
    ("double-fault", re.compile(r"double fault")),
    ("entry-stack", re.compile(r"stack guard page was hit")),
    ("panic", re.compile(r"Kernel panic")),
    ("oops", re.compile(r"BUG: (?!soft lockup)|Oops: |general protection fault")),
)


def classify(lines, rc, timed_out, stderr="", stalls=True):
    """How the run ended.  STALLS false: the guest's RCU and soft-lockup
    warnings are no death (a guest with many more vCPUs than the test
    host has CPUs prints them and goes on); the outcome is then what
    the run itself did."""
    for kind, rx in DEATHS:
        if kind == "stall" and not stalls:
            continue
        if any(rx.search(l) for l in lines):
            return kind
    if "triple fault" in stderr:  # the VMM's word: KVM_EXIT_SHUTDOWN
        return "triple-fault"
    if timed_out:
        return "hang"
    return "clean" if rc == 0 else "exit-%d" % rc


# GuestRun(stdin=ANSWER): the console's input is a pipe that stays open
# until the guest ends, for on_line to answer the guest (answer()).  A
# guest that needs the host to act before it goes on says so in a line
# and waits for the answer (`read -r -t SECONDS`), never a fixed time.
ANSWER = object()


def answer(proc, text):
    """TEXT and a newline on the console's input of PROC, a GuestRun's
    VMM started with stdin=ANSWER; nothing if it has ended."""
    try:
        proc.stdin.write(text.encode() + b"\n")
        proc.stdin.flush()
    except (OSError, ValueError):
        pass  # the VMM ended (or closed its stdin) first


class GuestRun:
    """Run ARGV; on_phase(name, 'begin'|'end', proc) is called at the
    phase markers, and on_line(line, proc) at every console line, from
    the reading thread, as soon as the line arrives; before_stop(proc)
    before a stop at a stall or the timeout (not when the guest ends by
    itself), to read state out of the stuck guest.  stdin: None (the
    VMM's stdin is /dev/null), bytes for the console's input, then end
    of file, or ANSWER."""

    def __init__(self, argv, timeout=300, on_phase=None, log_path=None,
                 stop_on_stall=True, on_line=None, stdin=None, before_stop=None):
        self.argv = argv
        self.before_stop = before_stop
        self.stdin = stdin  # None, bytes for the console's input, or ANSWER
        self.timeout = timeout
        self.on_phase = on_phase
        self.on_line = on_line
        self.log_path = log_path
        self.stop_on_stall = stop_on_stall
        self.lines = []
        self.stamps = []
        self.timed_out = False
        self.stalled = False

    def _kill(self, proc):
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
        except OSError:
            pass

    def run(self):
        err_path = (self.log_path + ".vmm") if self.log_path else os.devnull
        t0 = time.monotonic()
        with open(err_path, "w") as err:
            proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL
                                    if self.stdin is None else subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=err)
            self.pid = proc.pid
            if self.stdin is not None and self.stdin is not ANSWER:
                # At once, as `printf ... | vmm run ...` would (a pipe's
                # buffer holds it).
                try:
                    proc.stdin.write(self.stdin)
                    proc.stdin.close()
                except OSError:
                    pass  # the VMM ended (or closed its stdin) first
            timer = threading.Timer(self.timeout, self._expire, (proc,))
            timer.start()
            try:
                for raw in proc.stdout:
                    line = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
                    self.lines.append(line)
                    self.stamps.append(time.monotonic() - t0)
                    self._marker(line, proc)
                proc.wait()
            finally:
                timer.cancel()
                if proc.stdin:
                    proc.stdin.close()
        self.rc = proc.returncode
        self.seconds = time.monotonic() - t0
        if self.log_path:
            with open(self.log_path, "w") as f:
                for s, l in zip(self.stamps, self.lines):
                    f.write("%9.3f %s\n" % (s, l))
        with open(err_path) as f:
            self.stderr = f.read()
        self.outcome = classify(self.lines, self.rc, self.timed_out, self.stderr,
                                stalls=self.stop_on_stall)
        return self

    def tail(self, n=30):
        """The end of the console and of the VMM's messages, and the
        earlier tries' outcomes (run_with_retries): for assertion
        messages."""
        out = ["outcome %s, exit status %s%s" % (
            self.outcome, self.rc, ", timed out" if self.timed_out else "")]
        for log, outcome in getattr(self, "earlier", ()):
            out.append("an earlier try ended in %s (%s)" % (outcome, log))
        out.append("console (%s), last %d lines:" % (self.log_path, n))
        out += ["  | " + l for l in self.lines[-n:]]
        err = self.stderr.splitlines()[-10:]
        if err:
            out.append("VMM messages, last %d lines:" % len(err))
            out += ["  | " + l for l in err]
        return "\n".join(out)

    def _stop(self, proc):
        if self.before_stop and proc.poll() is None:
            self.before_stop(proc)
        self._kill(proc)

    def _expire(self, proc):
        self.timed_out = True
        self._stop(proc)

    def _marker(self, line, proc):
        if self.on_line:
            self.on_line(line, proc)
        m = PHASE_BEGIN.match(line)
        if m and self.on_phase:
            self.on_phase(m.group(1), "begin", proc)
            return
        m = PHASE_END.match(line)
        if m and self.on_phase:
            self.on_phase(m.group(1), "end", proc)
            return
        if self.stop_on_stall and DEATHS[0][1].search(line) and not self.stalled:
            self.stalled = True
            threading.Thread(target=self._stop, args=(proc,)).start()


# The guest's /proc/interrupts lines that moved between two copies, one
# line each: the row's name (a numbered IRQ by its handler's name, the
# last word) and the count added on each CPU.
IRQ_DELTA_AWK = (
    "NR == FNR { if (FNR == 1) n = NF; else for (i = 2; i <= n + 1; i++) a[$1, i] = $i; next }"
    " FNR > 1 { s = \"\"; moved = 0;"
    " for (i = 2; i <= n + 1; i++) { d = $i - a[$1, i]; s = s \" \" d; if (d) moved = 1 }"
    " if (moved) print ($1 ~ /^[0-9]+:$/ ? $NF : $1) s }")

IRQS_BEGIN = re.compile(r"^=== GUEST-IRQS BEGIN (\S+) ===$")
IRQS_END = re.compile(r"^=== GUEST-IRQS END (\S+) ===$")


def fio_script(name, fio_args):
    """A guest script: PHASE markers around one fio run on $FIO_DISK, its
    JSON between FIO-JSON markers afterwards (outside the phase: the UART
    is slow), then the guest's interrupts during the phase per CPU
    (guest_irqs).  guest/init drains the UART (ttydrain) before it
    powers off, so the tail is not lost."""
    args = " ".join(fio_args)
    return (
        'cd /tmp\n'
        'cat /proc/interrupts >/tmp/irq0\n'
        'echo "=== PHASE BEGIN %(n)s ==="\n'
        'fio --eta=never --output-format=json --output=/tmp/fio.json '
        '--filename=$FIO_DISK %(a)s 2>/tmp/fio.err\n'
        'rc=$?\n'
        'echo "=== PHASE END %(n)s rc=$rc ==="\n'
        'cat /proc/interrupts >/tmp/irq1\n'
        'head -c 2000 /tmp/fio.err\n'
        'echo "=== FIO-JSON BEGIN %(n)s ==="\n'
        "sed -n '/^{/,$ { s/^ *//; p; }' /tmp/fio.json\n"
        'echo "=== FIO-JSON END %(n)s rc=$rc ==="\n'
        'echo "=== GUEST-IRQS BEGIN %(n)s ==="\n'
        "awk '%(awk)s' /tmp/irq0 /tmp/irq1\n"
        'echo "=== GUEST-IRQS END %(n)s ==="\n'
    ) % {"n": name, "a": args, "awk": IRQ_DELTA_AWK}


def guest_irqs(lines, name):
    """{row: [count per CPU]} from fio_script's GUEST-IRQS block for NAME;
    None if there is none (a run that died, or an older log).  Numbered
    IRQs are named by their handler with the device's number dropped
    (virtio1-req.0 -> virtio-req.0): the same disk is virtio0 under one
    VMM and virtio1 under another; rows that then share a name (two
    disks' queue 0) are summed."""
    for block, _, body in markers.blocks(lines, IRQS_BEGIN, IRQS_END):
        if block != name:
            continue
        out = {}
        for line in body:
            words = line.split()
            try:
                counts = [int(w) for w in words[1:]]
            except ValueError:
                continue  # not one of ours (a kernel message in between)
            if counts:
                key = re.sub(r"^virtio\d+-", "virtio-", words[0].rstrip(":"))
                prev = out.get(key, [0] * len(counts))
                out[key] = [a + b for a, b in zip(prev, counts)]
        return out
    return None


# How a guest dies in the test host through no fault of the device under
# test (guest/README.md, known problems): such a run is tried again.
TEST_HOST_DEATHS = ("stall", "double-fault", "entry-stack", "triple-fault", "hang", "oops")


def run_with_retries(argv, log_path, tries=5, timeout=240, before_try=None, **kw):
    """GuestRun(argv) until it ends in anything but a test-host death,
    at most TRIES times; the last run is returned (logs: LOG_PATH.N), with
    .earlier: [(log path, outcome)] of the tries before it, each also
    appended to RETRIED.  BEFORE_TRY(), where given, runs before each try:
    a caller whose callbacks keep state empties it there, so that what a
    dead try saw (its socket gone mid-step) is not counted against the
    next.  Five: the deaths come in clusters (QEMU's guest
    double-faulted three times in a row in one CI run of 2026-12-02)."""
    earlier = []
    for i in range(tries):
        if before_try:
            before_try()
        g = GuestRun(argv, timeout=timeout, log_path="%s.%d" % (log_path, i), **kw).run()
        g.earlier = list(earlier)
        if g.outcome not in TEST_HOST_DEATHS:
            break
        earlier.append((g.log_path, g.outcome))
        if i + 1 < tries:
            RETRIED.append((g.log_path, g.outcome))
    return g


# Every guest death run_with_retries tried again, (log path, outcome), in
# this process: what a suite reports at its end.
RETRIED = []


def vmm_counters(g):
    """Our VMM's per-disk counters (-v), the last such line from
    "virtio-blk: " on, or ""."""
    lines = [l[l.index("virtio-blk: "):] for l in g.stderr.splitlines() if "virtio-blk: " in l]
    return lines[-1] if lines else ""


def run_block(lines):
    """(rc, lines) of guest/init's "=== RUN BEGIN ===" ... "=== RUN END
    rc=N ===" block (the last one); rc is None without its end marker."""
    rc, block, cur = None, [], None
    for line in lines:
        if line == "=== RUN BEGIN ===":
            cur = []
            continue
        m = RUN_END.match(line)
        if m and cur is not None:
            rc, block, cur = int(m.group(1)), cur, None
            continue
        if cur is not None:
            cur.append(line)
    return rc, block


RUN_END = re.compile(r"^=== RUN END rc=(\d+) ===$")
