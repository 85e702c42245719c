#!/usr/bin/python3
"""bench/results/pack.py: keep a run directory as one compressed archive.

    bench/results/pack.py [--keep] [--min-age S] [DIR ...]
    bench/results/pack.py --unpack DIR ...
    bench/results/pack.py --check

A run directory (bench/results/DATE/NAME, bench/results/arm64-peers-*)
becomes DATE/NAME.tar.xz, the directory whole (its members NAME/...,
sorted, with fixed owners, modes and times, so that the same files give
the same bytes), and DATE/NAME.md beside it: a short summary in text
(the command, its date and code, what the archive holds).  A FILE.gz of
the directory goes in as FILE (xz compresses it better than gzip did;
zcat is not needed to read it).  The archive is read back and compared
with the files before the directory is removed (--keep keeps it).

The tools read the archive in place (bench/vmharness/results.py):
bench/vmbench report, plan.load_runs, arm64peers, vmbench --analyze and
bench/citations.py name bench/results/DATE/NAME/FILE as before.

Idempotent: a directory already packed is left alone; a directory given
back by --unpack is removed again when its files are those of the
archive and packed anew when they changed.  Without DIR: every run
directory under bench/results whose newest file is at least --min-age
seconds old (default 1800): a benchmark still writing one is left for
later, and said so.  --unpack DIR gives the directory back beside its
archive (to analyse it again or add to it; pack it again after).
--check reads every archive and its summary; exits 1 on any problem.

Adding a run directory: when its benchmark has finished,
`bench/results/pack.py bench/results/DATE/NAME`, then `git add` the two
files it leaves.  Python 3's standard library only.
"""
import argparse
import gzip
import io
import lzma
import os
import shutil
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from vmharness import results  # noqa: E402

SUFFIX = results.SUFFIX
PRESET = 9 | lzma.PRESET_EXTREME
MTIME = 0


def run_dirs(root=HERE):
    """The run directories under ROOT (bench/results), packed or not:
    DATE/NAME and arm64-peers-*; sorted."""
    out = set()
    for top in os.listdir(root):
        p = os.path.join(root, top)
        if top.startswith("arm64-peers-"):
            if top.endswith(SUFFIX):
                out.add(p[:-len(SUFFIX)])
            elif os.path.isdir(p):
                out.add(p)
        elif os.path.isdir(p) and top[:1].isdigit():
            for n in os.listdir(p):
                q = os.path.join(p, n)
                if n.endswith(SUFFIX):
                    out.add(q[:-len(SUFFIX)])
                elif os.path.isdir(q):
                    out.add(q)
    return sorted(out)


def files_of(d):
    """{name relative to D: bytes} of the directory D as the archive holds
    it: FILE.gz as FILE (where D has no FILE)."""
    out = {}
    for top, dirs, files in os.walk(d):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(top, f)
            if os.path.islink(p) or not os.path.isfile(p):
                raise ValueError("%s: not a plain file" % p)
            rel = os.path.relpath(p, d)
            with open(p, "rb") as fh:
                data = fh.read()
            if rel.endswith(".gz") and not os.path.lexists(p[:-3]):
                try:
                    data, rel = gzip.decompress(data), rel[:-3]
                except (OSError, EOFError):
                    pass
            out[rel] = (data, os.access(p, os.X_OK))
    return out


def archive_bytes(name, files):
    """The .tar.xz of FILES ({rel: (bytes, executable)}) under NAME/."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz", preset=PRESET, format=tarfile.PAX_FORMAT) as t:
        for rel in sorted(files):
            data, x = files[rel]
            ti = tarfile.TarInfo("%s/%s" % (name, rel))
            ti.size, ti.mtime, ti.mode = len(data), MTIME, 0o755 if x else 0o644
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def read_archive(arch):
    """{rel: bytes} of ARCH's members (NAME/ left off)."""
    out = {}
    with tarfile.open(arch, "r:xz") as t:
        for m in t.getmembers():
            if m.isfile():
                out[m.name.partition("/")[2]] = t.extractfile(m).read()
    return out


def _meta(files):
    """(command, date, code) of the run, from meta.json or a devbench
    JSON file; None where unknown."""
    import json
    if "meta.json" in files:
        try:
            m = json.loads(files["meta.json"][0])
            code = m.get("git")  # vmbench's sweep: `git describe`
            if m.get("git_head"):
                code = "%s%s" % (m["git_head"][:12], " (with uncommitted changes)"
                                 if m.get("git_dirty") in (True, "True") else "")
            return m.get("command"), m.get("date"), code
        except ValueError:
            pass
    for rel in sorted(files):
        if rel.endswith(".json") and "/" not in rel:
            try:
                m = json.loads(files[rel][0])
            except ValueError:
                continue
            if isinstance(m, dict) and m.get("command"):
                return m.get("command"), m.get("date"), None
    return None, None, None


def summary(d, files, size):
    """The text of D's summary (DATE/NAME.md)."""
    name = os.path.basename(d)
    root = os.path.dirname(d) if name.startswith("arm64-peers-") else os.path.dirname(os.path.dirname(d))
    rel = "bench/results/" + os.path.relpath(d, root)
    command, date, code = _meta(files)
    top = {}
    for f in files:
        head, sep, _ = f.partition("/")
        top.setdefault(head + ("/" if sep else ""), []).append(f)
    listing = ", ".join(k if not k.endswith("/") else "%s (%d files)" % (k, len(v))
                        for k, v in sorted(top.items()))
    out = ["# %s" % rel, "",
           "Packed by bench/results/pack.py: %s%s holds the run directory %s/ whole "
           "(%d files, %d KB unpacked); the tools read it in place "
           "(bench/vmharness/results.py), `bench/results/pack.py --unpack %s` "
           "gives the directory back." % (name, SUFFIX, name, len(files),
                                           (size + 1023) // 1024, rel), ""]
    if command:
        out.append("- Command: `%s`" % " ".join(str(command).split()))
    if date:
        out.append("- Date: %s" % date)
    if code:
        out.append("- Code: %s" % code)
    out.append("- Files: %s" % listing)
    return "\n".join(out) + "\n"


def pack(d, keep=False, say=print):
    """Pack run directory D; returns what was done, in words."""
    d = os.path.normpath(d)
    name, arch, summ = os.path.basename(d), d + SUFFIX, d + ".md"
    if not os.path.isdir(d):
        if os.path.isfile(arch):
            return "%s: packed already" % d
        raise ValueError("%s: no such run directory" % d)
    files = files_of(d)
    if not files:
        raise ValueError("%s: no files" % d)
    data = archive_bytes(name, files)
    old = None
    if os.path.isfile(arch):
        with open(arch, "rb") as f:
            old = f.read()
    if old != data:
        with open(arch + ".tmp", "wb") as f:
            f.write(data)
        back = read_archive(arch + ".tmp")
        if back != {k: v[0] for k, v in files.items()}:
            os.unlink(arch + ".tmp")
            raise ValueError("%s: the archive does not read back as the files" % d)
        os.replace(arch + ".tmp", arch)
    text = summary(d, files, sum(len(v[0]) for v in files.values()))
    with open(summ, "w") as f:
        f.write(text)
    n = sum(len(f) for _, _, f in os.walk(d))
    if not keep:
        shutil.rmtree(d)
    return "%s: %s (%d files, %d bytes -> %s%s, %d bytes)%s" % (
        d, "packed" if old is None else "unchanged" if old == data else "packed anew",
        n, sum(len(v[0]) for v in files.values()), name, SUFFIX, len(data),
        "" if keep else ", directory removed")


def unpack(d):
    d = os.path.normpath(d)
    arch = d + SUFFIX
    if os.path.isdir(d):
        return "%s: there already" % d
    if not os.path.isfile(arch):
        raise ValueError("%s: no archive %s" % (d, arch))
    tmp = d + ".unpacking"
    shutil.rmtree(tmp, True)
    os.makedirs(tmp)
    got = results.unpack(arch, tmp)
    os.replace(got, d)
    os.rmdir(tmp)
    return "%s: unpacked beside %s (pack it again when done)" % (d, os.path.basename(arch))


def newest(d):
    t = 0
    for top, _, files in os.walk(d):
        for f in files:
            t = max(t, os.lstat(os.path.join(top, f)).st_mtime)
    return t


def check(root=HERE):
    bad = []
    for d in run_dirs(root):
        arch = d + SUFFIX
        if not os.path.isfile(arch):
            bad.append("%s: not packed" % d)
            continue
        try:
            files = read_archive(arch)
        except (OSError, tarfile.TarError, lzma.LZMAError, EOFError) as e:
            bad.append("%s: %s" % (arch, e))
            continue
        want = summary(d, {k: (v, False) for k, v in files.items()},
                       sum(len(v) for v in files.values()))
        try:
            with open(d + ".md") as f:
                have = f.read()
        except OSError:
            have = None
        if have != want:
            bad.append("%s.md: not the archive's summary" % d)
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench/results/pack.py",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", metavar="DIR")
    ap.add_argument("--unpack", action="store_true", help="give DIR back beside its archive")
    ap.add_argument("--keep", action="store_true", help="keep the directory once packed")
    ap.add_argument("--check", action="store_true", help="read every archive and summary")
    ap.add_argument("--min-age", type=float, default=1800,
                    help="without DIR: skip a directory with a file newer than this (s)")
    ap.add_argument("--root", default=HERE, help="the results folder (default this file's)")
    a = ap.parse_args(argv)
    if a.check:
        bad = check(a.root)
        for b in bad:
            print(b)
        print("pack.py --check: %d run directories, %d problems" % (len(run_dirs(a.root)), len(bad)))
        return 1 if bad else 0
    if a.unpack:
        if not a.dirs:
            ap.error("--unpack needs DIR")
        for d in a.dirs:
            print(unpack(d))
        return 0
    dirs = a.dirs
    if not dirs:
        dirs = []
        for d in run_dirs(a.root):
            if not os.path.isdir(d):
                continue
            age = time.time() - newest(d)
            if age < a.min_age:
                print("%s: left unpacked: a file changed %.0f s ago (being written?)" % (d, age))
                continue
            dirs.append(d)
    rc = 0
    for d in dirs:
        try:
            print(pack(d, a.keep))
        except (OSError, ValueError) as e:
            print("pack.py: %s" % e, file=sys.stderr)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
