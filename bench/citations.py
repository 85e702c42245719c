#!/usr/bin/python3
"""bench/citations.py: is everything the pages cite under bench/results/
still there?

Reads the notebook and the pages (bench/JOURNAL.md, bench/RESULTS.md,
README.md, bench/README.md, guest/README.md, tests/e2e/README.md,
bench/vmm-vs-qemu.md, CONTRIBUTING.md; any other tracked *.md for full
paths) and the comments of the tracked *.c, *.h, *.py and *.sh files, and
finds every citation of the data:

  - a path under bench/results/ (a directory, a file, a glob such as
    bench/results/*/*/vmbench-output.log, braces such as
    bench/results/2026-12-01/vmbench-{plug,peers,scaling}/, also broken
    over two lines inside the braces);
  - a path relative to the results folder: 2026-12-05/profile-s29,
    results/2026-12-02/profile-s10, arm64-peers-20261205-0911;
  - in a section of the notebook (bench/JOURNAL.md, and RESULTS.md) that
    names its data directories (a "## " section), the names it gives
    relative to them: a directory beside them (devbench-s24/,
    .../profile-pin1q-s20/), a file in them or below them (deaths.md,
    testhost-failed-console.log, testhost-failed.*/console.log,
    monitor.txt), a saved test-host boot (testhost-failed.113819 and
    .115229).  Names of the repository's own files (vmm/main.c,
    virtq.c, guest/jobs/) are not data;
  - what the parenthesis after a data directory names in words (PHRASES):
    "the consoles of the deaths" (logs/NAME of each run of runs.jsonl
    that did not end clean), "the VMM's messages", ".kvmtrace", "the
    harness's output", "logs", "the console of the third test-host
    boot".

Not recognised: a bare name with neither a slash nor an extension
(iftout3), and prose that names data without one of the forms above.
This file's own docstring is not read (its examples are forms).

A cited file counts as present when it is there or compressed beside it
as FILE.gz (bench/README.md: raw logs kept for a finding are gzip -9'd);
a glob when it matches at least one file (or FILE.gz).  A run directory
may be packed (bench/results/pack.py: DATE/NAME.tar.xz beside
DATE/NAME.md): its files are looked for in the archive, as if unpacked
in place (bench/vmharness/results.py), and a cited FILE.gz there is
satisfied by FILE (the packing stores a FILE.gz so).  A cited record of
vmbench's sweep in its old format (meta.tsv, runs.tsv, points.tsv,
failures.tsv) is satisfied by what bench/results/convert-sweep-records.py
made of it (meta.json, runs.jsonl, plan.json, failures.jsonl).  Prints one line
per missing citation (file:line, the citation, where it was looked for)
and exits 1 if there is any; -v lists every citation and how it was
found.  Python 3 standard library only.

  bench/citations.py [-v] [--root DIR]     (DIR: the checkout, default
                                            this file's)
"""
import argparse
import ast
import io
import json
import os
import re
import subprocess
import sys
import tokenize

# A run directory may be packed (bench/results/pack.py: DATE/NAME.tar.xz):
# vfs sees it as the directory it was (exists, isdir, glob, open).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmharness import results as vfs  # noqa: E402

RESULTS = "bench/results"
# The pages that cite data; in the notebook's sections (and RESULTS.md's)
# a name may also be relative to the section's data directories.
PAGES = ("bench/JOURNAL.md", "bench/RESULTS.md", "README.md", "bench/README.md",
         "guest/README.md", "tests/e2e/README.md", "bench/vmm-vs-qemu.md",
         "CONTRIBUTING.md")
NOTEBOOKS = ("bench/JOURNAL.md", "bench/RESULTS.md")
CODE_EXT = (".c", ".h", ".py", ".sh")
# What a data file's name ends in (a name relative to a data directory
# is recognised by these).
DATA_EXT = ("log", "txt", "md", "json", "jsonl", "sha256", "py", "sh", "patch", "diff",
            "tsv", "csv", "png", "svg", "kvmtrace", "vmm", "regs", "out", "err", "gz",
            "c", "fio", "dat", "gp")
# The sweep's old records, and what bench/results/convert-sweep-records.py
# made of each.
CONVERTED = {"meta.tsv": "meta.json", "runs.tsv": "runs.jsonl", "points.tsv": "plan.json",
             "failures.tsv": "failures.jsonl"}
# Placeholders in a path (bench/results/arm64-peers-YYYYMMDD-HHMM,
# `bench/vmbench analyse DIR`): a pattern, not a citation.
TEMPLATE = re.compile(r"YYYY|HHMM|\bDIR\b|\bNAME\b|\bOUT\b|\bDATE\b|\bN\b")

PATH_CHARS = re.compile(r"[\w.\-*?\[\]/]")
FULL = re.compile(r"(?<![\w./-])bench/results(?![\w.-])")
REL_RESULTS = re.compile(r"(?<![\w./-])results/(?=\d{4}-\d\d-\d\d/)")
DATED = re.compile(r"(?<![\w./-])\d{4}-\d\d-\d\d/(?=[A-Za-z])")
ARM64 = re.compile(r"(?<![\w./-])arm64-peers-\d{8}-\d{4}(?![\w-])")
# A name that may be relative to a section's data: starts where a word
# does (not inside a path, an option or an absolute path).
REL_START = re.compile(r"(?<![\w./~$@=:+-])(?:\.\.\./)?[\w*][\w.*?\[\]{}/-]*")
SAVED_BOOT = re.compile(r"testhost-failed\.(\d+|\*)(?![\w-])")
SAVED_BOOT_AND = re.compile(r"\s+and\s+\.(\d{6})(?!\w)")
HEADING = re.compile(r"^#{1,6} ", re.M)
# What a data directory's parenthesis says it holds, in words ("Data:
# bench/results/2026-11-30/deaths-rr50/ (runs.jsonl, the consoles of the
# deaths, the harness's own output with the test host's consoles)"):
# the phrase, and what it names in the directory.  DEATHS: each run of
# runs.jsonl that did not end clean, by the log its record names.
ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
PHRASES = tuple((re.compile(rx.replace(" ", r"\s+")), what, name) for rx, what, name in (
    (r"\bevery run's console\b|\bconsoles? of the deaths\b|\bfor each death its console\b",
     "DEATHS", ""),
    (r"\bthe VMM's messages\b", "DEATHS", ".vmm"),
    (r"(?<![\w.])\.kvmtrace\b", "DEATHS", ".kvmtrace"),
    (r"\bthe harness's (?:own )?output\b", "ANY", "v*-output.log"),
    (r"\bthe console of the (%s) test-host boot\b" % "|".join(ORDINAL), "BOOT",
     "testhost-boot%d-console.log"),
    (r"(?:^|(?<=[\s,(]))logs(?=[\s,)]|$)", "ANY", "logs/*"),
))


class Citation:
    def __init__(self, src, line, text, kind, candidates, need_all=False):
        self.src, self.line, self.text, self.kind = src, line, text, kind
        self.candidates = candidates  # paths (or globs) relative to the root
        self.need_all = need_all      # every candidate, else any one of them
        self.found = None             # the path that satisfied it
        self.how = None               # "there", "FILE.gz", "glob"

    def where(self):
        return "%s:%d" % (self.src, self.line)


# ---- reading the sources ----------------------------------------------------

def sources(root):
    """[(path relative to root, kind)]: kind "notebook" (sections may
    cite relative names), "page" or "md" (full paths only) or "code"
    (comments only)."""
    try:
        names = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                               cwd=root, capture_output=True, text=True, check=True
                               ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        names = []
        for d, subdirs, files in os.walk(root):
            rel = os.path.relpath(d, root)
            subdirs[:] = [s for s in subdirs if s not in (".git", "build", "__pycache__")]
            names += [os.path.normpath(os.path.join(rel, f)) for f in files]
    out = []
    for n in sorted(set(names)):
        if (n.startswith(RESULTS + "/") or n == "bench/citations.py"
                or not os.path.isfile(os.path.join(root, n))):
            continue
        if n in NOTEBOOKS:
            out.append((n, "notebook"))
        elif n in PAGES:
            out.append((n, "page"))
        elif n.endswith(".md"):
            out.append((n, "md"))
        elif n.endswith(CODE_EXT):
            out.append((n, "code"))
    return out


def blank(text, keep):
    """TEXT with every character outside the (start, end) spans of KEEP
    replaced by a space (newlines kept), so that offsets and line numbers
    stay those of the file."""
    out = [c if c == "\n" else " " for c in text]
    for a, b in keep:
        out[a:b] = text[a:b]
    return "".join(out)


def comments(path, text):
    """The comments of a source file (docstrings too for Python), the
    rest blanked."""
    spans = []
    if path.endswith(".py"):
        starts = [0]
        for line in text.splitlines(True):
            starts.append(starts[-1] + len(line))
        off = lambda rc: starts[rc[0] - 1] + rc[1]
        docs = set()
        try:
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                     ast.AsyncFunctionDef)) and node.body:
                    first = node.body[0]
                    if isinstance(first, ast.Expr) and isinstance(
                            getattr(first, "value", None), ast.Constant) and isinstance(
                            first.value.value, str):
                        docs.add(first.lineno)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING
                                                    and tok.start[0] in docs):
                    spans.append((off(tok.start), off(tok.end)))
        except (SyntaxError, tokenize.TokenError, ValueError):
            spans = [(m.start(), m.end()) for m in re.finditer(r"#[^\n]*", text)]
    elif path.endswith(".sh"):
        spans = [(m.start(1), m.end(1)) for m in
                 re.finditer(r"(?:^|\s)(#(?!!)[^\n]*)", text)]
    else:
        spans = [(m.start(), m.end()) for m in
                 re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S)]
    return blank(text, spans)


def sections(text):
    """[(start, end)] of the text's sections: from one heading to the
    next (a "## " section of the notebook holds its "### " ones)."""
    starts = [m.start() for m in re.finditer(r"^## ", text, re.M)]
    if not starts:
        starts = [m.start() for m in HEADING.finditer(text)]
    bounds = sorted(set([0] + starts + [len(text)]))
    return list(zip(bounds, bounds[1:]))


# ---- paths in text ------------------------------------------------------------

def read_path(text, i):
    """The path that starts at TEXT[i]: path characters, with commas and
    line breaks allowed inside braces (a{b,\\n c}); trailing punctuation
    left out.  (path, end offset)."""
    j, depth, out = i, 0, []
    while j < len(text):
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            if not depth:
                break
            depth -= 1
        elif c == ",":
            if not depth:
                break
        elif c.isspace():
            if not depth:
                break
            j += 1
            continue
        elif not PATH_CHARS.match(c):
            break
        out.append(c)
        j += 1
    p = "".join(out)
    if "{" in p and p.count("{") != p.count("}"):
        p = p[:p.index("{")]
    while p and p[-1] in ".:" and not p.endswith("/."):
        p = p[:-1]
    if p.endswith("/."):
        p = p[:-1]
    return p, j


def expand(p):
    """Brace expansion: a{b,c}d -> [abd, acd] (any number of groups)."""
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    return [x for alt in m.group(1).split(",")
            for x in expand(p[:m.start()] + alt + p[m.end():])]


def converted(rel):
    """REL with its old sweep record's name replaced by the converted
    one's (CONVERTED), or None."""
    head, _, name = rel.rpartition("/")
    new = CONVERTED.get(name)
    return new and os.path.join(head, new)


def present(root, rel):
    """(path found, how) for REL relative to ROOT, or (None, None): the
    path itself, FILE.gz for a file, a glob's first match, or the
    converted record of an old one."""
    found, how = _present(root, rel)
    if not found and converted(rel):
        found, how = _present(root, converted(rel))
        how = how and "converted"
    return found, how


def _present(root, rel):
    path = os.path.join(root, rel)
    if any(c in rel for c in "*?["):
        hits = sorted(vfs.glob(path.rstrip("/"))) + sorted(vfs.glob(path.rstrip("/") + ".gz"))
        if not hits and rel.endswith(".gz"):
            # bench/results/pack.py stores a FILE.gz of a run directory as FILE.
            hits = sorted(vfs.glob(path[:-3]))
        if rel.endswith("/"):
            hits = [h for h in hits if vfs.isdir(h)]
        if hits:
            return os.path.relpath(hits[0], root), "glob"
        return None, None
    if rel.endswith("/"):
        return (rel, "there") if vfs.isdir(path) else (None, None)
    if vfs.exists(path):
        return rel, "there"
    if vfs.isfile(path + ".gz"):
        return rel + ".gz", "FILE.gz"
    if rel.endswith(".gz") and vfs.isfile(path[:-3]):
        # bench/results/pack.py stores a FILE.gz of a run directory as FILE.
        return rel[:-3], "FILE"
    return None, None


def line_of(text, i):
    return text.count("\n", 0, i) + 1


def full_citations(src, text):
    """(offset, end, [paths relative to the root]) of every path under
    the results folder written out: bench/results/..., results/DATE/...,
    DATE/NAME, arm64-peers-YYYYMMDD-HHMM."""
    out = []
    for rx, prefix in ((FULL, ""), (REL_RESULTS, "bench/"), (DATED, RESULTS + "/"),
                       (ARM64, RESULTS + "/")):
        for m in rx.finditer(text):
            p, end = read_path(text, m.start())
            if TEMPLATE.search(p):
                continue
            out.append((m.start(), end, p, [prefix + x for x in expand(p)]))
    return out


def is_repo_name(root, rel, repo_top, repo_basenames):
    """Whether REL names the repository's own file or directory (vmm/main.c,
    guest/jobs/, virtq.c) rather than data."""
    first = rel.split("/")[0]
    if first in repo_top or first in ("", ".", "..", "tmp", "build", "x"):
        return True
    bare = rel.rstrip("/")
    for base in ("", "bench"):
        if vfs.exists(os.path.join(root, base, bare)):
            return True
    return "/" not in bare and bare in repo_basenames


def relative_citations(root, src, text, a, b, data_dirs, repo_top, repo_basenames, taken):
    """Citations of names relative to the section TEXT[a:b]'s data
    directories DATA_DIRS (paths relative to the root, "/"-ended)."""
    parents = sorted({os.path.dirname(d.rstrip("/")) + "/" for d in data_dirs})
    out = []

    def cite(i, shown, rels, kind):
        cands = []
        for rel in rels:
            if rel.startswith(".../"):
                cands.append(RESULTS + "/**/" + rel[4:])
                continue
            # in a data directory, beside it, anywhere below it
            cands += [d + rel for d in data_dirs + parents]
            cands += [d + "**/" + rel for d in data_dirs]
        out.append(Citation(src, line_of(text, i), shown, kind, cands))

    for m in REL_START.finditer(text, a, b):
        if any(s <= m.start() < e for s, e in taken):
            continue
        p, end = read_path(text, m.start())
        if not p or TEMPLATE.search(p) or re.search(r"[A-Z]{3,}", p):
            continue
        saved = SAVED_BOOT.fullmatch(p.rstrip("/"))
        ext = re.search(r"\.([A-Za-z0-9]+)$", p.rstrip("/"))
        if p.endswith("/") and len(p) > 1:
            kind = "directory beside the data"
        elif ext and ext.group(1) in DATA_EXT:
            kind = "file in the data"
        elif saved:
            kind = "saved test-host boot"
        else:
            continue
        if is_repo_name(root, p if not p.startswith(".../") else p[4:], repo_top,
                        repo_basenames):
            continue
        rels = expand(p)
        cite(m.start(), p, rels, kind)
        if saved:
            # "testhost-failed.113819 and .115229"
            n = SAVED_BOOT_AND.match(text, end)
            if n:
                q = "testhost-failed.%s" % n.group(1)
                cite(n.start(1), q, [q], kind)
    return out


def parenthesis(text, end):
    """(start, end) of the parenthesis right after offset END, or None."""
    i = end
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "(":
        return None
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if not depth:
            return i, j + 1
    return None


def deaths(root, d):
    """The log names (logs/NAME) of the runs in D/runs.jsonl that did not
    end clean."""
    out = []
    try:
        with vfs.open(os.path.join(root, d, "runs.jsonl")) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("outcome", "clean") != "clean" and r.get("log"):
                    out.append("logs/" + os.path.basename(r["log"]))
    except OSError:
        pass
    return out


def phrase_citations(root, src, text, full):
    """Citations of what a data directory's parenthesis names in words
    (PHRASES)."""
    out = []
    for i, end, shown, rels in full:
        span = parenthesis(text, end)
        dirs = [r.rstrip("/") + "/" for r in rels if vfs.isdir(os.path.join(root, r))]
        if not span or not dirs:
            continue
        words = text[span[0]:span[1]]
        for rx, what, name in PHRASES:
            for m in rx.finditer(words):
                at = line_of(text, span[0] + m.start())
                said = " ".join(m.group(0).split())
                for d in dirs:
                    if what == "DEATHS":
                        for log in deaths(root, d):
                            out.append(Citation(src, at, "%s (%s)" % (said, d), "named in words",
                                                [d + log + name]))
                    elif what == "BOOT":
                        out.append(Citation(src, at, "%s (%s)" % (said, d), "named in words",
                                            [d + name % ORDINAL[m.group(1)]]))
                    else:
                        out.append(Citation(src, at, "%s (%s)" % (said, d), "named in words",
                                            [d + name]))
    return out


def find(root):
    """Every Citation in the checkout at ROOT, each with found/how set
    (found None: missing)."""
    top = {n for n in os.listdir(root) if n not in ("bench",)} | {"bench"}
    repo_basenames = set()
    srcs = sources(root)
    try:
        tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True,
                                 text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        tracked = [s for s, _ in srcs]
    for n in tracked:
        if not n.startswith(RESULTS + "/"):
            repo_basenames.add(os.path.basename(n))
    cites = []
    for src, kind in srcs:
        with open(os.path.join(root, src), errors="replace") as f:
            text = f.read()
        if kind == "code":
            text = comments(src, text)
        full = full_citations(src, text)
        for i, end, shown, rels in full:
            c = Citation(src, line_of(text, i), shown, "path", rels, need_all=True)
            cites.append(c)
        if kind != "notebook":
            continue
        taken = [(i, end) for i, end, _, _ in full]
        cites += phrase_citations(root, src, text, full)
        for a, b in sections(text):
            dirs = []
            for i, end, shown, rels in full:
                if a <= i < b:
                    for r in rels:
                        if vfs.isdir(os.path.join(root, r)) and r.rstrip("/") != RESULTS:
                            dirs.append(r.rstrip("/") + "/")
            if not dirs:
                continue
            rel = relative_citations(root, src, text, a, b, sorted(set(dirs)), top,
                                     repo_basenames, taken)
            # A directory named beside the data is data of the section too
            # (variant.patch "in its run's data directory").
            more = []
            for c in rel:
                if c.kind == "directory beside the data":
                    for cand in c.candidates:
                        if "*" not in cand and vfs.isdir(os.path.join(root, cand)):
                            more.append(cand.rstrip("/") + "/")
            if more:
                rel = relative_citations(root, src, text, a, b, sorted(set(dirs + more)), top,
                                         repo_basenames, taken)
            cites += rel
    for c in cites:
        for cand in c.candidates:
            if "**" in cand:
                hits = sorted(vfs.glob(os.path.join(root, cand), recursive=True))
                how = "found below"
                if not hits and not cand.endswith("/"):
                    hits = sorted(vfs.glob(os.path.join(root, cand + ".gz"), recursive=True))
                    how = "FILE.gz"
                if not hits and cand.endswith(".gz"):
                    hits = sorted(vfs.glob(os.path.join(root, cand[:-3]), recursive=True))
                    how = "FILE"
                if not hits and converted(cand):
                    hits = sorted(vfs.glob(os.path.join(root, converted(cand)), recursive=True))
                    how = "converted"
                if hits:
                    c.found, c.how = os.path.relpath(hits[0], root), how
                    break
                continue
            if c.kind == "path" or c.need_all:
                # every expansion of the braces must be there
                found, how = present(root, cand)
                if not found:
                    c.found, c.how, c.missing = None, None, cand
                    break
                c.found, c.how = found, how
                continue
            found, how = present(root, cand)
            if found:
                c.found, c.how = found, how
                break
    return cites


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench/citations.py", description=__doc__.split("\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="list every citation")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the checkout (default: this file's)")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    cites = find(root)
    missing = [c for c in cites if not c.found]
    if args.verbose:
        for c in cites:
            if c.found:
                print("%s: %s (%s): %s%s" % (c.where(), c.text, c.kind, c.found,
                                            " (compressed)" if c.how == "FILE.gz" else ""))
    for c in missing:
        look = getattr(c, "missing", None)
        print("MISSING %s: %s (%s): not found as %s" % (
            c.where(), c.text, c.kind,
            look if look else " or ".join(c.candidates[:6]) + (" ..." if len(c.candidates) > 6 else "")))
    gz = sum(1 for c in cites if c.how == "FILE.gz")
    plain = sum(1 for c in cites if c.how == "FILE")
    print("citations: %d in %d files, %d missing; %d present as FILE.gz (a cited file "
          "compressed beside it counts as there)%s" % (
              len(cites), len({c.src for c in cites}), len(missing), gz,
              "; %d cited as FILE.gz, packed as FILE" % plain if plain else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
