"""A run directory under bench/results/, packed or not.

bench/results keeps each run directory packed (bench/results/pack.py):
DATE/NAME.tar.xz holds the directory NAME/ whole, with DATE/NAME.md, a
short summary, beside it as text.  The readers (standing.scan, plan.load_runs,
arm64peers, report, vmbench --analyze, bench/citations.py) name the
directory as it was, bench/results/DATE/NAME/FILE, and go through this
module, which finds the file on disk or in the archive:

  real(PATH)     a path on disk that holds PATH's contents: PATH itself
                 when it is there, else its place in the unpacked copy of
                 the archive that holds it (unpacked once per process,
                 into a temporary directory removed at exit);
  exists, isdir, isfile, listdir, glob, open: as os.path's, os's, glob's
                 and the built-in open, over the tree as it would be with
                 every archive unpacked in place.

A directory that is there wins over its archive (bench/results/pack.py
--unpack gives it back to edit).  A FILE.gz of the directory is stored
as FILE in the archive (xz compresses it better than gzip did); the
readers that took FILE.gz where FILE was not there (kvmtrace.open_text)
read FILE.  Python's standard library only.
"""
import atexit
import builtins
import fnmatch
import glob as _glob
import os
import shutil
import tarfile
import tempfile

SUFFIX = ".tar.xz"

_tmp = None
_unpacked = {}   # archive's absolute path -> (its size and mtime, the unpacked directory)


def archive_of(d):
    """The archive that holds directory D (D.tar.xz), or None when D is
    there on disk or has no archive."""
    d = d.rstrip("/")
    if not d or os.path.isdir(d):
        return None
    a = d + SUFFIX
    return a if os.path.isfile(a) else None


def _cache_dir():
    global _tmp
    if _tmp is None:
        _tmp = tempfile.mkdtemp(prefix="vmbench-results-")
        atexit.register(shutil.rmtree, _tmp, True)
    return _tmp


def unpack(arch, dest):
    """Unpack ARCH (NAME.tar.xz, members NAME/...) into DEST; refuses a
    member outside NAME/ or one that is not a plain file or directory."""
    name = os.path.basename(arch)[:-len(SUFFIX)]
    with tarfile.open(arch, "r:xz") as t:
        members = t.getmembers()
        for m in members:
            parts = m.name.split("/")
            if parts[0] != name or ".." in parts or m.name.startswith("/") or \
                    not (m.isfile() or m.isdir()):
                raise ValueError("%s: unexpected member %r" % (arch, m.name))
        t.extractall(dest, members)
    return os.path.join(dest, name)


def _unpacked_dir(arch):
    arch = os.path.abspath(arch)
    st = os.stat(arch)
    key = (st.st_size, st.st_mtime_ns)
    hit = _unpacked.get(arch)
    if hit and hit[0] == key:
        return hit[1]
    dest = tempfile.mkdtemp(dir=_cache_dir())
    d = unpack(arch, dest)
    if hit:
        shutil.rmtree(os.path.dirname(hit[1]), True)
    _unpacked[arch] = (key, d)
    return d


def real(path):
    """A path on disk with PATH's contents (PATH itself, or its place in
    the unpacked archive that holds it); PATH when neither is there."""
    if os.path.lexists(path):
        return path
    p, tail = path.rstrip("/"), []
    while p:
        a = archive_of(p)
        if a:
            return os.path.join(_unpacked_dir(a), *reversed(tail))
        head, t = os.path.split(p)
        if not t or head == p or os.path.isdir(head or os.curdir):
            # HEAD is on disk: nothing above P is packed.
            return path
        p = head
        tail.append(t)
    return path


def exists(path):
    return os.path.exists(real(path))


def isdir(path):
    return os.path.isdir(real(path))


def isfile(path):
    return os.path.isfile(real(path))


def open(path, *args, **kwargs):
    return builtins.open(real(path), *args, **kwargs)


def listdir(d):
    """The names in D, a packed run directory shown under its own name
    beside its archive."""
    names = set(os.listdir(real(d)))
    for n in list(names):
        if n.endswith(SUFFIX) and os.path.isfile(os.path.join(real(d), n)):
            names.add(n[:-len(SUFFIX)])
    return sorted(names)


def _walk(d, parts, recursive):
    """The paths below D (joined as given) that match the components PARTS."""
    if not parts:
        yield d
        return
    p, rest = parts[0], parts[1:]
    base = d or os.curdir
    if recursive and p == "**":
        # Any number of directories, none too; last, everything below D.
        if rest:
            yield from _walk(d, rest, recursive)
        else:
            yield os.path.join(d, "")
        for q in _below(base, d):
            if not rest:
                yield q
            elif isdir(q):
                yield from _walk(q, rest, recursive)
        return
    if _glob.has_magic(p):
        for n in _names(base, p):
            child = os.path.join(d, n)
            if not rest:
                yield child
            elif isdir(child):
                yield from _walk(child, rest, recursive)
        return
    if p == "" and not rest:
        # A pattern ending in "/": directories only, written so.
        if isdir(base):
            yield d + "/"
        return
    child = os.path.join(d, p)
    if not rest:
        if exists(child):
            yield child
    elif isdir(child):
        yield from _walk(child, rest, recursive)


def _below(base, d):
    """Every path below D (BASE: D on disk, "." for ""), directories before
    what they hold, names starting with a dot left out."""
    for n in _names(base, "*"):
        child = os.path.join(d, n)
        yield child
        if isdir(child):
            yield from _below(child, child)


def _names(d, pattern):
    """The names in D that PATTERN matches, glob's way (a name starting
    with a dot only for a pattern that does)."""
    if not isdir(d):
        return []
    return [n for n in listdir(d) if fnmatch.fnmatchcase(n, pattern)
            and (not n.startswith(".") or pattern.startswith("."))]


def glob(pattern, recursive=False):
    """glob.glob(PATTERN) over the tree with every archive unpacked in
    place; the paths as they would be written there."""
    if not _glob.has_magic(pattern):
        return [pattern] if exists(pattern) else []
    absolute = pattern.startswith("/")
    parts = pattern.split("/")
    i = next(i for i, p in enumerate(parts) if _glob.has_magic(p))
    start = "/".join(parts[:i]) or ("/" if absolute else "")
    out = []
    seen = set()
    for p in _walk(start, parts[i:], recursive):
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out
