"""null_blk block devices, made through configfs: a real block device of
any geometry that the host's kernel serves from memory, with a set
completion time (Documentation/block/null_blk.rst).  The test hosts load
configfs and null_blk with no device (tests/testhost/mkinitramfs.sh);
create() makes one, remove() takes it away.

Every VMM opens it with O_DIRECT, so the I/O goes through the block layer
as it would to an NVMe drive; the test host's own fio on the same device
is the physical limit there."""
import os
import re

CONFIGFS = "/sys/kernel/config/nullb"
NAME = re.compile(r"^nullb[a-z0-9_]{1,16}$")

# The defaults a comparison uses (ARCHITECTURE.md, "Bench method").
DEFAULTS = {"bs": 512, "completion_ns": 10000, "size_mib": 1024}


def unavailable():
    """Why no null_blk device can be made here, or None."""
    if os.geteuid() != 0:
        return "null_blk needs root"
    if not os.path.isdir(CONFIGFS):
        return ("no %s: load configfs and null_blk (nr_devices=0) and mount "
                "configfs on /sys/kernel/config, as the test host does "
                "(tests/testhost/mkinitramfs.sh)" % CONFIGFS)
    return None


def parse_spec(spec):
    """--backing SPEC (file, or nullb[:bs=B,completion_ns=N]) as
    {"kind": "file"} or {"kind": "nullb", "bs", "completion_ns"};
    ValueError with one line when a key or value is wrong, so that a
    plan is refused before anything boots."""
    kind, _, rest = (spec or "file").partition(":")
    if kind == "file" and not rest:
        return {"kind": "file"}
    if kind != "nullb":
        raise ValueError("--backing %s: file or nullb[:bs=B,completion_ns=N]" % spec)
    b = {"kind": "nullb", "bs": DEFAULTS["bs"], "completion_ns": DEFAULTS["completion_ns"]}
    for kv in filter(None, rest.split(",")):
        k, _, v = kv.partition("=")
        if k not in ("bs", "completion_ns") or not v.isdigit():
            raise ValueError("--backing %s: '%s': bs=512|1024|2048|4096 or completion_ns=N"
                             % (spec, kv))
        b[k] = int(v)
    if b["bs"] not in (512, 1024, 2048, 4096):
        raise ValueError("--backing %s: bs=%d: 512, 1024, 2048 or 4096" % (spec, b["bs"]))
    return b


def _write(d, attr, value):
    with open(os.path.join(d, attr), "w") as f:
        f.write("%s\n" % value)


def create(name, size_mib=DEFAULTS["size_mib"], bs=DEFAULTS["bs"],
           completion_ns=DEFAULTS["completion_ns"], submit_queues=2,
           hw_queue_depth=64, cache_mib=0):
    """/dev/NAME: a memory-backed null_blk device of SIZE_MIB with logical
    blocks of BS bytes, multi-queue (SUBMIT_QUEUES hardware queues), each
    request completed by a timer COMPLETION_NS after it arrives.  With
    CACHE_MIB, a volatile write cache of that size, which the device
    says it has (write back): a flush then reaches it; without one (the
    default) the block layer completes a flush at once, as for any
    device with nothing to flush."""
    why = unavailable()
    if why:
        raise RuntimeError(why)
    if not NAME.match(name):
        raise ValueError("null_blk name %r: nullb followed by letters or digits" % name)
    if bs not in (512, 1024, 2048, 4096):
        raise ValueError("null_blk bs=%r: 512, 1024, 2048 or 4096" % bs)
    attrs = [("size", size_mib), ("blocksize", bs), ("memory_backed", 1),
             ("queue_mode", 2), ("submit_queues", submit_queues),
             ("hw_queue_depth", hw_queue_depth), ("irqmode", 2),
             ("completion_nsec", completion_ns)]
    if cache_mib:
        attrs.append(("cache_size", cache_mib))
    d = os.path.join(CONFIGFS, name)
    os.mkdir(d)
    try:
        for attr, value in attrs + [("power", 1)]:
            _write(d, attr, value)
    except OSError:
        remove(name)
        raise
    # Named after the configfs directory since Linux 5.19 or so; before,
    # nullb<index>.
    with open(os.path.join(d, "index")) as f:
        alt = "/dev/nullb%d" % int(f.read())
    for dev in ("/dev/" + name, alt):
        if os.path.exists(dev):
            return dev
    remove(name)
    raise RuntimeError("null_blk %s: powered on but neither /dev/%s nor %s appeared"
                       % (name, name, alt))


def filled(name, size_mib, backing, submit_queues=2):
    """/dev/NAME made anew as BACKING (parse_spec's) says, every block
    written once: a memory-backed null_blk allocates a block on its first
    write, and reads of a block never written return zeros without a
    copy, which would flatter every reader."""
    remove(name)
    dev = create(name, size_mib=size_mib, bs=backing["bs"],
                 completion_ns=backing["completion_ns"], submit_queues=submit_queues)
    zero = bytes(1 << 20)
    with open(dev, "wb") as f:
        for _ in range(size_mib):
            f.write(zero)
    return dev


def remove(name):
    d = os.path.join(CONFIGFS, name)
    if not os.path.isdir(d):
        return
    try:
        _write(d, "power", 0)
    except OSError:
        pass
    os.rmdir(d)


def io_counts(dev):
    """(reads, writes) completed by the block device DEV (/sys/block)."""
    with open("/sys/block/%s/stat" % os.path.basename(dev)) as f:
        v = f.read().split()
    return int(v[0]), int(v[4])
