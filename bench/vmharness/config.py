"""The one parser of a configuration, `-c KIND[:KEY=VALUE,...]`, for
every command of bench/vmbench (issue 50): per scenario, a table of the
kinds it runs and, per kind, the keys it reads with a check of each
value.  An unknown kind or key, a bad value, a key given twice or two
keys that contradict each other raise ConfigError (a ValueError), so
that bench/vmbench refuses the command line before anything boots.

parse() returns {"kind", "name", "opts"}: opts maps each key given
(less name) to its value, a string as written (release=10 becomes the
binary it names, bin=, and vqmap=on unless told); boot's kinds add
"image" and "machine".  The old pipeline (vmbench.py) builds its own
record from the same result."""
import os
import re

from . import paths


class ConfigError(ValueError):
    """A configuration the scenario cannot run: one line saying why."""


# ---- checks of one value: each returns None (good) or what is wanted --------

def choice(*vals):
    def check(v):
        return None if v in vals else "|".join(vals)
    return check


def uint(lo, hi=None):
    def check(v):
        if re.fullmatch(r"[0-9]+", v) and int(v) >= lo and (hi is None or int(v) <= hi):
            return None
        return "a whole number from %d%s" % (lo, " to %d" % hi if hi is not None else " up")
    return check


def rate(v):
    """bytes per second, or with a K, M or G suffix, not 0 (blk/opts.c)."""
    m = re.fullmatch(r"([0-9]+)[kKmMgG]?", v)
    return None if m and int(m.group(1)) > 0 else "bytes per second: N, NK, NM or NG, not 0"


def text(v):
    return None if v else "not empty"


def words(v):
    """W1+W2: words for the guest kernel's command line (',' ends an option)."""
    return None if v and all(v.split("+")) else "W1+W2..., no empty word"


def job_list(v):
    # which names are jobs is the scenario's: parse(..., jobs=NAMES) checks them
    return words(v)


def kernel_any(v):
    """Ours: bzimage or vmlinux (overrides --kernel), or the PATH of a
    guest kernel of one's own."""
    return text(v)


def kernel_path(v):
    """QEMU and kvmtool boot the bzImage: only a PATH of one's own."""
    if v in KERNEL_KINDS:
        return "a PATH of one's own (%s boot the guest's bzImage; bzimage|vmlinux is ours)" % (
            "QEMU and kvmtool")
    return text(v)


# kernel= in our configurations: these two name --kernel's files; anything
# else is the path of a guest kernel of one's own (kernels.py).
KERNEL_KINDS = ("bzimage", "vmlinux")

# qemu:release=10: QEMU 10.0 from Debian's backports (tests/testhost/emulator.sh
# unpacks it under build/testhost/qemu).
QEMU_RELEASES = {"10": os.path.join(paths.BUILD, "testhost", "qemu", "qemu-system-x86_64")}

# Our disk's options that go into its -d spec as KEY=VALUE (blk/opts.c,
# `vmm run --help`).  ro, direct and serial are the harness's: the data
# disk's file decides direct, and the guest finds the disk by serial=data.
VMM_DISK = {
    "poll": uint(0, 1000000),         # BLK_POLL_US_MAX
    "batch": choice("on", "off"),
    "engine": choice("uring", "sync"),
    "iops": uint(1, 10 ** 9),         # BLK_IOPS_MAX
    "bw": rate,
    "burst": uint(1, 60000),          # BLK_BURST_MS_MAX
}

# Ours, as profile.guest_argv reads it (deaths and cpuid run the same).
VMM = dict(VMM_DISK, **{
    "name": text, "bin": text, "jobs": job_list, "append": words, "kernel": kernel_any,
    "queues": uint(1, 16),            # BLK_MAX_QUEUES
    "pin": choice("follow", "on", "off"),   # --pin
    "api": choice("poll"),            # `vmm ctl SOCK stats --every 1s` through fio
    "backend": choice("file", "ram"),  # ram: our RAM disk of the file's size
})
# QEMU, as profile.guest_argv reads it.
QEMU = {
    "name": text, "bin": text, "jobs": job_list, "append": words, "kernel": kernel_path,
    "queues": uint(1), "iothread": choice("on", "off"), "vqmap": choice("on", "off"),
    "aio": choice("io_uring", "native", "threads"),
}


def _less(table, *keys):
    return {k: v for k, v in table.items() if k not in keys}


HOST_THP = choice("always", "madvise", "never")
# Boot's kinds: (VMM, image, machine).
BOOT_KINDS = {
    "vmm": ("vmm", "bzImage", None),
    "vmm-elf": ("vmm", "vmlinux", None),
    "qemu": ("qemu", "bzImage", None),
    "qemu-pvh": ("qemu", "vmlinux", None),
    "qemu-microvm": ("qemu", "vmlinux", "microvm"),
}

# lockup's guests and arm64-peers' configurations: names, without keys.
LOCKUP_GUESTS = ("ifpoll", "iftrap")
ARM64_PEERS = ("vmm-ram", "vmm-file", "kvmtool-file", "qemu-file",
               "vmm-nullb", "vmm-nullb-poll0", "kvmtool-nullb", "qemu-nullb", "qemu10-nullb",
               "host-nullb")

# Per scenario, per kind, the keys and the check of each value.
SCENARIOS = {
    "profile": {
        "vmm": VMM,
        "qemu": dict(QEMU, pin=choice("on", "off"), release=choice(*QEMU_RELEASES)),
        # kvmtool's virtio-blk has one queue
        "kvmtool": {"name": text, "bin": text, "jobs": job_list, "append": words,
                    "queues": choice("1"), "kernel": kernel_path},
        # the test host's own fio on the data disk
        "host": {"name": text, "jobs": job_list},
    },
    "deaths": {
        "vmm": dict(VMM, host_thp=HOST_THP),
        "qemu": dict(QEMU, host_thp=HOST_THP),
    },
    "cpuid": {  # one guest per configuration: no jobs
        "vmm": _less(VMM, "jobs"),
        "qemu": _less(QEMU, "jobs"),
    },
    "boot": {k: ({"name": text, "bin": text, "jobs": job_list} if v[0] == "vmm"
                 else {"name": text, "jobs": job_list})  # QEMU: the system's
             for k, v in BOOT_KINDS.items()},
    # the guests of lockup (tests/smoke/guest.S's): a name, no keys
    "lockup": {g: {} for g in LOCKUP_GUESTS},
    # exitcost runs one guest under our VMM: no configurations
    "exitcost": {},
    # arm64-peers' configurations (bench/arm64/peers.sh starts each): a
    # name, no keys
    "arm64-peers": {c: {} for c in ARM64_PEERS},
    # bench/vmbench's own fio scenarios (vmbench.py, vmbench_run.py)
    "vmbench": {
        "vmm": {"name": text, "bin": text, "kernel": text, "modules": text,
                "queues": uint(1, 16), "poll": uint(0, 1000000), "batch": choice("on", "off"),
                "backend": choice("file", "ram"), "direct": choice("auto", "on", "off")},
        "qemu": {"name": text, "kernel": text, "modules": text, "queues": uint(1),
                 "iothread": choice("on", "off"), "aio": choice("io_uring", "native", "threads"),
                 "cache": choice("auto", "none", "writeback")},
        "host": {"name": text},
    },
}
# A word more where a key belongs to another scenario.
ELSEWHERE = {
    "modules": "modules= is bench/vmbench's (-c vmm:kernel=PATH,modules=DIR); "
               "the scenarios take kernels with virtio_blk built in",
    "host_thp": "host_thp= is deaths' only",
    "release": "release= is profile's only",
}


def split(spec):
    """KIND[:K=V,...] as (kind, [(key, value)]), the pairs in their order;
    empty items are skipped.  ConfigError where an item has no '='."""
    kind, _, rest = spec.partition(":")
    pairs = []
    for item in rest.split(",") if rest else ():
        if not item:
            continue
        k, eq, v = item.partition("=")
        if not eq or not k:
            raise ConfigError("configuration '%s': '%s' is not KEY=VALUE" % (spec, item))
        pairs.append((k, v))
    return kind, pairs


def parse(spec, scenario, jobs=None):
    """SPEC for SCENARIO (a key of SCENARIOS) as {kind, name, opts}, or
    ConfigError.  JOBS: the names jobs= may list (None: not checked)."""
    table = SCENARIOS[scenario]
    kind, pairs = split(spec)
    if kind not in table:
        raise ConfigError("bad configuration '%s': %s takes %s" % (
            spec, scenario, ", ".join(table) or "no configurations"))
    keys = table[kind]
    opts = {}
    for k, v in pairs:
        if k not in keys:
            more = ELSEWHERE.get(k)
            raise ConfigError("configuration '%s': unknown option '%s' for %s in %s (%s)" % (
                spec, k, kind, scenario, more or "it takes " + (", ".join(sorted(keys)) or "none")))
        if k in opts:
            raise ConfigError("configuration '%s': %s= given twice" % (spec, k))
        want = keys[k](v)
        if want:
            raise ConfigError("configuration '%s': %s=%s: %s" % (spec, k, v, want))
        opts[k] = v
    if jobs is not None and "jobs" in opts:
        bad = [j for j in opts["jobs"].split("+") if j not in jobs]
        if bad:
            raise ConfigError("configuration '%s': jobs=: no job %s (%s has %s)" % (
                spec, ", ".join(bad), scenario, ", ".join(sorted(jobs))))
    _together(spec, kind, opts)
    out = {"kind": kind, "name": opts.pop("name", None), "opts": opts}
    if scenario == "boot":
        out["kind"], out["image"], out["machine"] = BOOT_KINDS[kind]
        if out["machine"] == "microvm":
            opts.setdefault("jobs", "small")  # the stock kernel has virtio-mmio as a module
        out["name"] = out["name"] or kind
    elif scenario == "vmbench":
        out["name"] = out["name"] or ""
    else:
        out["name"] = out["name"] or ("host" if kind == "host" else spec)
    return out


def _together(spec, kind, opts):
    """The keys that go together, or not."""
    if "release" in opts:
        if "bin" in opts:
            raise ConfigError("configuration '%s': release= or bin=, not both" % spec)
        opts["bin"] = QEMU_RELEASES[opts.pop("release")]
        opts.setdefault("vqmap", "on")
    if opts.get("vqmap") == "on" and opts.get("iothread") == "off":
        raise ConfigError("configuration '%s': vqmap=on gives each queue an IOThread; "
                          "iothread=off contradicts it" % spec)
    if kind == "vmm" and "engine" in opts and opts.get("backend") == "ram":
        raise ConfigError("configuration '%s': engine= is a file disk's; backend=ram "
                          "is our RAM disk" % spec)
    if "modules" in opts and "kernel" not in opts:
        raise ConfigError("configuration '%s': modules=DIR goes with kernel=PATH" % spec)
