"""The words RESULTS.md's sections share (bench/vmbench report): a
ratio with its interval, its verdict, the lines that say where a
section's data came from, and what a run directory's meta.json says
about the command that wrote it.  Pure functions on dicts: every
scenario's section code (its own module, or NAME_page.py beside it) and
standing.py, the page's frame, import them; this module imports none
of the package's."""
import re


def date_of(s):
    """"YYYY-MM-DD HH:MM" of a meta.json or devbench date."""
    m = re.match(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d)", s or "")
    return "%s %s" % m.groups() if m else ""


def command_kind(command):
    """The vmbench command of a meta.json's command line: its first word,
    "sweep" for the fio sweep's (bench/vmbench [OPTION]...: no command)."""
    m = re.search(r"bench/(?:vmbench|vmh)(?!\S)(.*)", command or "")
    if not m:
        return None
    words = m.group(1).split()
    return words[0] if words and not words[0].startswith("-") else "sweep"


def fmt_ratio(r):
    """"1.86x (1.14-3.04)" of a paired_ratio, or its point alone."""
    if r["ratio"] is None:
        return "-"
    if r["lo"] is None:
        return "%.2fx (no interval)" % r["ratio"]
    return "%.2fx (%.2f-%.2f)" % (r["ratio"], r["lo"], r["hi"])


def verdict(r, more="higher", less="lower"):
    """Significance of a ratio from its 95% interval, in words."""
    if r["ratio"] is None or r["lo"] is None:
        return "no interval"
    if r["lo"] > 1:
        return "significantly " + more
    if r["hi"] < 1:
        return "significantly " + less
    return "not significant"


def pct(r):
    """A ratio as a change in percent with its interval: "+8 % (-20 to +45 %)"."""
    if r["ratio"] is None:
        return "-"
    if r["lo"] is None:
        return "%+.0f %% (no interval)" % (100 * (r["ratio"] - 1))
    return "%+.0f %% (%+.0f to %+.0f %%)" % (100 * (r["ratio"] - 1), 100 * (r["lo"] - 1),
                                              100 * (r["hi"] - 1))


def data_line(entry, what=""):
    """The lines under a section: its data directory, command, machine
    and code (ENTRY: one of standing.scan's)."""
    m = entry["meta"]
    machine = m.get("machine")
    if isinstance(machine, dict):
        machine = "%s CPUs, %s, host kernel %s" % (machine.get("nproc"), machine.get("cpu"),
                                                   machine.get("kernel"))
    elif not machine:
        machine = "%s-core host (kernel %s), x86-64 test host: QEMU TCG with nested KVM" % (
            m.get("nproc", "?"), m.get("kernel", "?"))
    lines = ["- Data: `%s`%s, %s UTC" % (entry["dir"], what, entry["date"]),
             "- Command: `%s`" % m.get("command", "?"),
             "- Machine: %s" % machine]
    if m.get("git_head"):
        lines.append("- Code: %s%s, vmm sha256 %s..." % (
            m["git_head"][:7], " (with uncommitted changes)" if m.get("git_dirty") in (True, "True") else "",
            m.get("vmm_sha256", "?")[:12]))
    return lines


def unique(entries):
    """ENTRIES without repeats of a directory, in their order."""
    seen, out = set(), []
    for e in entries:
        if e["dir"] not in seen:
            seen.add(e["dir"])
            out.append(e)
    return out


def sentences(text, pattern):
    """The lines of TEXT that match PATTERN."""
    return [line for line in text.splitlines() if re.search(pattern, line)]


def newest(entries, kind):
    """The first (newest) of ENTRIES of KIND, or None."""
    return next((e for e in entries if e["kind"] == kind), None)
