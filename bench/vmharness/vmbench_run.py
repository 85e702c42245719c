"""The inner half of bench/vmbench: runs where KVM runs standard guests
(here on a hardware KVM, else inside the test host).  Boots the guests
(guestrun.GuestRun, command lines from cmdlines), hands each its script on
a small read-only control disk, releases the fio points with a barrier on
that disk so that N guests run at the same time, and saves every fio JSON
(fiojson) under OUT/raw/ with one line per guest and point in
OUT/runs.jsonl, with the VMM process's CPU over that point (cpu_fields).
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from . import cmdlines, counters, fiojson, guestrun, kernels, nullblk, paths, plan, testhost
from .vmbench_base import (add_meta, cpu_model, hms, mem_total_gib, read_meta, rewrite_job,
                           run_order, run_queues, say, size_mb)

# The guest's bootstrap (run64): find the control disk (serial vmbctl),
# take the script from its first MiB, run it.
BOOTSTRAP = r'''c=; for b in /sys/block/vd*; do [ "$(cat $b/serial 2>/dev/null)" = vmbctl ] && c=/dev/${b##*/}; done
[ -n "$c" ] || { echo "vmbench: no control disk"; exit 9; }
dd if=$c bs=65536 count=16 2>/dev/null | tr -d "\000" >/tmp/vmb.sh && sh /tmp/vmb.sh $c'''
GO_OFFSET = 1 << 20  # the barrier word lives at 1 MiB of the control disk

# Before each step the guest prints "=== VMB READY step ===" and waits
# until the control disk says "go step" (O_DIRECT reads: no page cache in
# the way), then runs fio and prints the JSON between guest/init's
# FIO-JSON markers.
GUEST_FUNCS = r'''c=$1
waitgo() {
	while :; do
		w=$(dd if=$c bs=512 skip=2048 count=1 iflag=direct 2>/dev/null | tr -d '\000' | head -n 1)
		[ "$w" = "go $1" ] && return 0
		[ "$w" = abort ] && return 1
		sleep 0.1
	done
}
up() { cut -d' ' -f1 /proc/uptime; }
pt() {
	echo "vmbench: t=$(up) step $1 ready"
	echo "=== VMB READY $1 ==="
	waitgo "$1" || { echo "vmbench: aborted"; exit 3; }
	echo "vmbench: t=$(up) step $1 go"
	(cd /tmp && fio --eta=never --output-format=json --output=/tmp/$2.json /tmp/$2.fio 2>/tmp/$2.err)
	rc=$?
	echo "vmbench: t=$(up) step $1 fio done"
	[ -f /tmp/$2.json ] && sed -n '/^{/q; s/^/fio: /p' /tmp/$2.json | head -n 20
	sed '/^fio: /!s/^/fio: /' /tmp/$2.err | head -n 50
	echo "=== FIO-JSON BEGIN $2 ==="
	[ -f /tmp/$2.json ] && sed -n '/^{/,$p' /tmp/$2.json | $TRIM |
		sed 's/^ *//; s/^\("[^"]*"\) : /\1:/'
	echo "=== FIO-JSON END $2 rc=$rc ==="
	rm -f /tmp/$2.json
}
'''
READY = re.compile(r"^=== VMB READY (\S+) ===$")
FIO_DONE = re.compile(r"^vmbench: t=\S+ step (\S+) fio done$")
# What guest/init says when the kernel has no virtio_blk at all.
NO_VIRTIO_BLK = re.compile(r"guest: kernel \S+ has no virtio_blk")


def guest_script(out, steps):
    """The script each guest runs: STEPS [(step, point)] in that order.
    fio's JSON is trimmed (bench/vmharness/fio-trim.awk) to what the report reads:
    each byte through the emulated UART costs exits (4 KB took 4-13 s in
    the test host, the trimmed ~1 KB a fifth of that); VMBENCH_FULL_JSON=1
    sends it whole."""
    s = [GUEST_FUNCS]
    if os.environ.get("VMBENCH_FULL_JSON"):
        s.append("TRIM=cat\n")
    else:
        with open(os.path.join(paths.REPO, "bench", "vmharness", "fio-trim.awk")) as f:
            s.append("TRIM=\"awk -f /tmp/vmb-trim.awk\"\ncat >/tmp/vmb-trim.awk <<'VMBENCH_EOF'\n"
                     + f.read() + "VMBENCH_EOF\n")
    for _, k in steps:
        with open(os.path.join(out, "jobs", "p%d.fio" % k)) as f:
            s.append("cat >/tmp/p%d.fio <<'VMBENCH_EOF'\n%sVMBENCH_EOF\n" % (k, f.read()))
    s += ["pt %d p%d\n" % (st, k) for st, k in steps]
    s.append('echo "=== VMB DONE ==="\n')
    return "".join(s)


def ctl_word(path, word):
    """The barrier word, one 512-byte sector at 1 MiB."""
    data = (word + "\n").encode().ljust(512, b"\0")
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, GO_OFFSET)
        os.fsync(fd)
    finally:
        os.close(fd)


def cpu_fields(before, after):
    """runs.jsonl's CPU fields of one VMM process over one point, from
    its threads (counters.threads) at the two ends of the window:
    cpu_run_ns, every thread's time on a CPU (schedstat); cpu_guest_ns,
    the part the vCPUs spent in guest mode (guest_time, counted in clock
    ticks: 10 ms steps at USER_HZ 100); cpu_by_kind,
    counters.threads_by_kind (a thread born in the window counts from 0,
    one that ended in it is lost).  The VMM's own CPU is cpu_run_ns -
    cpu_guest_ns.  {} without both readings: no fields, not zeros."""
    if not before or not after:
        return {}
    kinds = counters.threads_by_kind(before, after)
    return {"cpu_run_ns": sum(k["run_ns"] for k in kinds.values()),
            "cpu_guest_ns": sum(k["guest_ns"] for k in kinds.values()),
            "cpu_by_kind": kinds}


class Run:
    """What one run needs to know: the plan, its configuration, where the
    disks are; cpu, {(guest, point): cpu_fields} once its guests ran
    (none for the host's fio: no VMM)."""

    def __init__(self, ctx, cfg, cfg_index, d, ng, q, steps):
        self.ctx, self.cfg, self.c, self.dir, self.ng, self.q, self.steps = (
            ctx, cfg, cfg_index, d, ng, q, steps)
        self.cpu = {}

    def argv(self, g, ctl):
        p, cfg, ctx = self.ctx.plan, self.cfg, self.ctx
        cmdline = cmdlines.guest_cmdline(script=BOOTSTRAP, disk_serial="data")
        control = {"path": ctl, "readonly": True, "queues": 1, "serial": "vmbctl",
                   "iothread": False}
        data = {"path": ctx.disk(g), "queues": int(self.q),
                "serial": "data"}
        mem = size_mb(p["mem"])
        # A configuration's own kernel (kernel=PATH, copied into OUT) with
        # the initrd that carries its modules, else --kernel's.
        kernel = cfg.get("kernel") or paths.KERNELS[p.get("kernel", "stock")]["bzImage"]
        initrd = cfg.get("initrd") or paths.INITRD
        if cfg["kind"] == "vmm":
            if cfg["backend"] == "ram":
                data["path"] = "ram:" + p["disk"]
            else:
                data["direct"] = cfg["direct"] == "on" or (cfg["direct"] == "auto" and ctx.direct)
            data["opts"] = ["%s=%s" % (k, cfg[k]) for k in ("batch", "poll") if cfg[k]]
            return cmdlines.vmm_argv(kernel, initrd, cmdline, mem, p["cpus"],
                                     [control, data], cfg["bin"] or paths.VMM_BIN, verbose=False)
        cache = cfg["cache"] if cfg["cache"] != "auto" else ("none" if ctx.direct else "writeback")
        data["direct"] = cache == "none"
        data["iothread"] = cfg["iothread"] == "on"
        data["aio"] = cfg["aio"]
        return cmdlines.qemu_argv(kernel, initrd, cmdline, mem, p["cpus"],
                                  [control, data])


class Guest:
    """One guest of a run, in a thread: GuestRun, the READY steps it has
    printed, and its VMM's threads (counters.threads) at each step's go
    and fio done."""

    def __init__(self, argv, log, timeout):
        self.ready = set()
        self.threads_at_go, self.threads_at_done = {}, {}
        self.error = None
        self.said = None  # guest/init's line about a kernel without virtio_blk
        self.run = guestrun.GuestRun(argv, timeout=timeout, log_path=log, on_line=self._line)
        self.thread = threading.Thread(target=self._go, daemon=True)
        self.thread.start()

    def _line(self, line, proc):
        m = READY.match(line)
        if m:
            self.ready.add(m.group(1))
            return
        m = FIO_DONE.match(line)
        if m:
            # Read as the line arrives, before the guest sends fio's
            # JSON through its UART (exits that are no part of the point).
            self.threads_at_done[m.group(1)] = counters.threads(proc.pid)
        elif NO_VIRTIO_BLK.search(line):
            self.said = line.strip()

    def note_go(self, step):
        """The VMM's threads just before STEP's go is written."""
        pid = getattr(self.run, "pid", None)
        if pid:
            self.threads_at_go[step] = counters.threads(pid)

    def cpu(self, step):
        """cpu_fields of STEP: from its go to the guest's "fio done"."""
        return cpu_fields(self.threads_at_go.get(step), self.threads_at_done.get(step))

    def _go(self):
        try:
            self.run.run()
        except Exception as e:  # the VMM could not start
            self.error = e

    def alive(self):
        return self.thread.is_alive()

    def stop(self):
        pid = getattr(self.run, "pid", None)
        if pid and self.alive():
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass

    def ended(self):
        if self.error:
            return "could not start (%s)" % self.error
        return "ended (%s, exit status %s)%s" % (getattr(self.run, "outcome", "?"),
                                                getattr(self.run, "rc", "?"),
                                                ": " + self.said if self.said else "")


LIVE = []  # the guests running now: stopped when the inner is stopped


def guest_run(run):
    """Boot RUN's guests, release each step when all are ready, wait for
    them; True if all ended cleanly; why not in DIR/why."""
    ctx, d, ng, p = run.ctx, run.dir, run.ng, run.ctx.plan
    ctl = os.path.join(ctx.ddir, "ctl.img")
    script = guest_script(ctx.out, run.steps)
    with open(os.path.join(d, "guest.sh"), "w") as f:
        f.write(script)
    if len(script.encode()) >= GO_OFFSET:
        say("guest script over 1 MiB")
        return False
    with open(ctl, "wb") as f:
        f.truncate(2 << 20)
        f.write(script.encode())
    ctl_word(ctl, "wait")
    timeout = p["boot_timeout"] + len(run.steps) * p["step_timeout"]
    guests = [Guest(run.argv(g, ctl), os.path.join(d, "g%d.log" % g), timeout)
              for g in range(1, ng + 1)]
    LIVE[:] = guests
    fail = None
    t0 = launched = time.time()
    deadline = t0 + p["boot_timeout"]

    def stall(what):
        for i, g in enumerate(guests, 1):
            if g.run.stalled:
                return "guest %d reported a stalled CPU (%s)" % (i, what)
        return None
    for s, _ in run.steps:
        while True:
            fail = stall("before step %s" % s)
            if fail:
                break
            ready = 0
            for i, g in enumerate(guests, 1):
                if str(s) in g.ready:
                    ready += 1
                elif not g.alive():
                    fail = "guest %d %s before step %s" % (i, g.ended(), s)
                    break
            if fail or ready == ng:
                break
            if time.time() > deadline:
                fail = "step %s: not all guests ready after %ds" % (s, deadline - t0)
                break
            time.sleep(0.2)
        if fail:
            break
        # The VMM's CPU window of a point: from here to the guest's
        # "fio done" line.  It holds the guest seeing the go (a poll every
        # 0.1 s), fio's start and end, not the boot nor fio's JSON.
        for g in guests:
            g.note_go(str(s))
        ctl_word(ctl, "go %s" % s)
        with open(os.path.join(d, "steps.log"), "a") as f:
            f.write("step %s released %ds after launch\n" % (s, time.time() - launched))
        ctx.heartbeat()
        # Next step: the point just started must end first.
        t0 = time.time()
        deadline = t0 + p["step_timeout"]
    # After the last step: every guest powers off within a step's time.
    while not fail:
        alive = sum(g.alive() for g in guests)
        if not alive:
            break
        fail = stall("last step")
        if not fail and time.time() > deadline:
            fail = "%d guest(s) still running %ds after the last step started" % (alive, deadline - t0)
        if not fail:
            time.sleep(0.5)
    if fail:
        say(fail)
        with open(os.path.join(d, "why"), "a") as f:
            f.write(fail + "\n")
        ctl_word(ctl, "abort")
        time.sleep(2)  # a moment to see "abort", then stop them
        for g in guests:
            g.stop()
    ok = not fail
    for i, g in enumerate(guests, 1):
        g.thread.join()
        rc = getattr(g.run, "rc", None)
        if rc != 0:
            err = [l for l in getattr(g.run, "stderr", "").splitlines() if l.strip()]
            say("guest %d: %s exit status %s, %s (log: %s/g%d.log.vmm)"
                % (i, run.cfg["kind"], rc, getattr(g.run, "outcome", "?"),
                   os.path.relpath(d, ctx.out), i))
            with open(os.path.join(d, "why"), "a") as f:
                f.write("guest %d: %s exit status %s (%s): %s\n" % (
                    i, run.cfg["kind"], rc, getattr(g.run, "outcome", "?"),
                    err[-1] if err else ""))
            for l in err[-5:] + getattr(g.run, "lines", [])[-5:]:
                print("  | " + l, file=sys.stderr)
            ok = False
        # Each point's JSON and fio's status, from the console.
        got = fiojson.extract(getattr(g.run, "lines", []))
        for s, k in run.steps:
            run.cpu[(i, k)] = g.cpu(str(s))
            frc, doc = got.get("p%d" % k, (None, None))
            if doc is not None:
                with open(os.path.join(d, "g%d-p%d.json" % (i, k)), "w") as f:
                    json.dump(doc, f, indent=1)
            with open(os.path.join(d, "g%d-p%d.rc" % (i, k)), "w") as f:
                f.write("%s\n" % ("none" if frc is None else frc))
    LIVE[:] = []
    return ok


def host_run(run):
    """The host's fio on the same backing files, RUN.ng of them at once."""
    ctx, d, p = run.ctx, run.dir, run.ctx.plan
    fio = paths.HOST_FIO
    if not os.access(fio, os.X_OK):
        import shutil
        fio = shutil.which("fio")
        if not fio:
            say("no fio on this host")
            return False
    # The host runs the guest's job on a file: no I/O scheduler to pick,
    # no O_DIRECT where the filesystem has none, no drop_caches unless root.
    drop = ["ioscheduler"] + ([] if os.getuid() == 0 else ["exec_prerun"])
    dset = [] if ctx.direct else ["direct=0"]
    ok = True
    for _, k in run.steps:
        pt = p["points"][k]
        with open(os.path.join(paths.REPO, "guest", "jobs", pt["job"] + ".fio")) as f:
            job = rewrite_job(f.read(), pt["params"].split() + p["sets"] + dset, drop)
        jf = os.path.join(d, "host-p%d.fio" % k)
        with open(jf, "w") as f:
            f.write(job)
        procs = []
        for g in range(1, run.ng + 1):
            env = dict(os.environ, FIO_DISK=ctx.disk(g))
            with open(os.path.join(d, "g%d-p%d.err" % (g, k)), "w") as err:
                procs.append(subprocess.Popen(
                    [fio, "--eta=never", "--output-format=json",
                     "--output=" + os.path.join(d, "g%d-p%d.json" % (g, k)), jf],
                    cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=err))
        for g, pr in enumerate(procs, 1):
            rc = pr.wait()
            with open(os.path.join(d, "g%d-p%d.rc" % (g, k)), "w") as f:
                f.write("%d\n" % rc)
            if rc:
                with open(os.path.join(d, "g%d-p%d.err" % (g, k))) as f:
                    say("host fio p%d failed: %s" % (k, f.read(300)))
                with open(os.path.join(d, "why"), "a") as f:
                    f.write("host fio p%d failed\n" % k)
                ok = False
    return ok


def fio_rc(path):
    """fio's exit status in PATH (g1-p0.rc), None when it did not say."""
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def collect(run, ident, repeat):
    """One runs.jsonl line per guest and point; rc None where fio left no
    JSON or no status; the CPU fields (cpu_fields) where the guest's VMM
    was read at both ends."""
    ctx = run.ctx
    for _, k in run.steps:
        for g in range(1, run.ng + 1):
            js = os.path.join(run.dir, "g%d-p%d.json" % (g, k))
            rc = fio_rc(os.path.join(run.dir, "g%d-p%d.rc" % (g, k)))
            if not (os.path.exists(js) and os.path.getsize(js)):
                rc = None
            plan.record(ctx.out, {
                "run": ident, "repeat": repeat, "cfg": run.c, "label": run.cfg["label"],
                "kind": run.cfg["kind"], "queues": None if run.q == "-" else int(run.q),
                "guests": run.ng, "point": k, "guest": g, "rc": rc,
                "json": os.path.relpath(js, ctx.out), "probe_ns": ctx.probe_ns,
                "pos": ctx.pos, "kernel": run.kernel, **run.cpu.get((g, k), {})})


def probe_ns():
    """How fast KVM is right now (the machine is shared): vmm probe's ns
    per guest loop iteration, None when it has none."""
    return testhost.probe(timeout_s=10)[2]


class Ctx:
    def __init__(self, out):
        self.out = out
        with open(os.path.join(out, "plan.json")) as f:
            self.plan = json.load(f)
        self.ddir = ("/tmp/vmbench-disks" if os.environ.get("TESTHOST")  # tmpfs: page cache
                     else os.path.join(out, "disks"))
        self.direct = False
        self.probe_ns = None
        self.pos = 0
        # --backing nullb: each guest's disk a null_blk device.
        self.nullb = self.plan.get("backing", {}).get("kind") == "nullb"

    def disk(self, g):
        """Guest G's data disk: a file in ddir, or a null_blk device."""
        if self.nullb:
            return "/dev/nullbvmb%d" % g
        return os.path.join(self.ddir, "data%d.img" % g)

    def heartbeat(self):
        """A sign of life for the stall detector (testhost.run_inside)."""
        with open(os.path.join(self.out, "heartbeat"), "w") as f:
            f.write("%d\n" % time.time())


def cmd_line(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.split("\n")[0].strip()
    except OSError:
        return ""


def write_disks(ctx):
    """The same disks for every configuration, written once (no holes)."""
    p = ctx.plan
    maxg = max(int(g) for g in p["glist"])
    mb = size_mb(p["disk"])
    os.makedirs(ctx.ddir, exist_ok=True)
    if ctx.nullb:
        write_nullb_disks(ctx, maxg, mb)
        return
    say("disks: %d x %s in %s" % (maxg, p["disk"], ctx.ddir))
    zero = bytes(1 << 20)
    for g in range(1, maxg + 1):
        with open(os.path.join(ctx.ddir, "data%d.img" % g), "wb") as f:
            for _ in range(mb):
                f.write(zero)
            f.flush()
            os.fsync(f.fileno())
    ctx.direct = cmdlines.direct_ok(os.path.join(ctx.ddir, "data1.img"))


def write_nullb_disks(ctx, maxg, mb):
    """--backing nullb: null_blk devices, memory-backed, written once
    (a memory-backed null_blk allocates on first write), opened with
    O_DIRECT by every configuration."""
    b = ctx.plan["backing"]
    why = nullblk.unavailable()
    if why:
        raise RuntimeError("--backing nullb: %s" % why)
    for g in range(1, maxg + 1):
        nullblk.filled("nullbvmb%d" % g, mb, b, submit_queues=b.get("submit_queues", 2))
    say("disks: %d null_blk device(s) of %d MiB, bs=%d, completion %d ns"
        % (maxg, mb, b["bs"], b["completion_ns"]))
    ctx.direct = True


def inner_meta(ctx):
    fstype = cmd_line(["stat", "-f", "-c", "%T", ctx.ddir])
    add_meta(ctx.out, inner_nproc=os.cpu_count(), inner_mem="%.1f GiB" % mem_total_gib(),
             inner_cpu=cpu_model(),
             disk_dir="%s (%s, O_DIRECT %s)" % (ctx.ddir, fstype, "yes" if ctx.direct else "no")
             if not ctx.nullb else "null_blk %s (O_DIRECT yes)" % ctx.plan["backing"],
             qemu=cmd_line(["qemu-system-x86_64", "--version"]),
             host_fio=cmd_line([paths.HOST_FIO, "--version"]))


def one_run(ctx, ident, cfg, c, ng, qq, steps):
    """A run, tried at most twice; what a failed attempt left stays in
    raw/ID.failedN, listed in failures.jsonl."""
    d = os.path.join(ctx.out, "raw", ident)
    for old in [d] + [d + ".failed%d" % i for i in (1, 2)]:
        if os.path.exists(old):
            subprocess.run(["rm", "-rf", old])
    for tries in (1, 2):
        os.makedirs(d)
        ctx.heartbeat()  # each attempt may take the whole boot time
        t1 = time.time()
        ctx.probe_ns = probe_ns()
        run = Run(ctx, cfg, c, d, ng, qq, steps)
        run.kernel = kernel_now(cfg)
        ok = host_run(run) if cfg["kind"] == "host" else guest_run(run)
        if not ok:
            why = "?"
            if os.path.exists(os.path.join(d, "why")):
                with open(os.path.join(d, "why")) as f:
                    why = (f.read().strip().splitlines() or ["?"])[-1]
            plan.record_failure(ctx.out, {"run": ident, "attempt": tries, "why": why})
            if tries < 2:
                os.rename(d, "%s.failed%d" % (d, tries))
                say("run %s failed; once more" % ident)
                continue
        say("    %s in %s" % ("done" if ok else "FAILED", hms(time.time() - t1)))
        return run


def kernel_now(cfg):
    """A configuration's own kernel, "RELEASE SHA256", checked against
    the plan's before each run: a kernel file that changed between
    repeats would mix two kernels in one figure, so the plan stops
    (KernelError).  None for the standard kernels."""
    if not cfg.get("kernel_sha256"):
        return None
    now = kernels.sha256(cfg["kernel"])
    if now != cfg["kernel_sha256"]:
        raise kernels.KernelError(
            "%s: kernel %s changed since the plan was made (sha256 %s, now %s): refused"
            % (cfg["label"], cfg["kernel"], cfg["kernel_sha256"][:12], now[:12]))
    return "%s %s" % (cfg["kernel_release"], now)


def inner(out):
    ctx = Ctx(out)
    p = ctx.plan

    def stopped(signum, frame):
        say("stopped")
        for g in LIVE:
            g.stop()
        os._exit(143)
    signal.signal(signal.SIGTERM, stopped)
    signal.signal(signal.SIGINT, stopped)
    os.makedirs(os.path.join(out, "raw"), exist_ok=True)
    ctx.heartbeat()
    try:
        write_disks(ctx)
    except (RuntimeError, OSError) as e:
        say("cannot make the disks: %s" % e)
        add_meta(out, refused=str(e))
        return 2
    inner_meta(ctx)
    # Resuming after the test host died: the runs already in runs.jsonl
    # are kept and skipped.
    have = {r["run"] for r in plan.load_runs(out)}
    if have:
        say("resuming: %d run(s) done before" % len(have))
    np_ = len(p["points"])
    total = p["repeats"] * len(p["glist"]) * len(p["qlist"]) * len(p["cfgs"])
    n = ran = 0
    start = time.time()
    for r in range(1, p["repeats"] + 1):
        # Points in a rotated order per repeat, so that no point always
        # runs first after boot.
        steps = [(i, (i + r - 1) % np_) for i in range(np_)]
        for pos, (g, q, c) in enumerate(run_order(p, r)):
            n += 1
            cfg = p["cfgs"][c]
            qq = run_queues(p, cfg, q)
            ident = "r%d-g%d-q%s-c%d" % (r, g, qq, c)
            if ident in have:
                continue
            el = time.time() - start
            left = ", ~%s left" % hms(el * (total - n + 1) / ran) if ran else ""
            say("[%d/%d] repeat %d/%d: %s, queues %s, %d guest(s), %d point(s); %s elapsed%s"
                % (n, total, r, p["repeats"], cfg["label"], qq, g, np_, hms(el), left))
            ran += 1
            ctx.pos = pos
            try:
                run = one_run(ctx, ident, cfg, c, g, qq, steps)
            except kernels.KernelError as e:
                say("refused: %s" % e)
                add_meta(out, refused=str(e))
                return 2
            collect(run, ident, r)
            ctx.heartbeat()
    # Summed over the invocations that ran a part of the plan (--resume).
    add_meta(out, inner_seconds=read_meta(out).get("inner_seconds", 0) + int(time.time() - start))
    open(os.path.join(out, ".inner-done"), "w").close()
    subprocess.run(["rm", "-rf", ctx.ddir])
    if ctx.nullb:
        for g in range(1, max(int(x) for x in p["glist"]) + 1):
            nullblk.remove("nullbvmb%d" % g)
    say("all %d runs in %s" % (total, hms(time.time() - start)))
    return 0
