"""The registry of bench/vmbench's scenarios (scenario.py says what one
is): the command line (cli.py) builds its commands from ALL, `bench/vmbench
analyse DIR` asks each in ALL's order whether it wrote DIR, and the page
(standing.py) asks each for its sections and puts them in PAGE's order."""
from . import (arm64peers, boot, cpuid, deaths, devbench, exitcost, hotplug, lockup, profile,
               sweep, vmbench_hunt, vmbench_hw)

# Every scenario, in the order `analyse` asks them: those whose own file
# says so first (arm64-peers' plan.txt, hunt.md, hw-check.md, a sweep's
# plan.json), profile last (its first directories had only runs.jsonl).
ALL = (arm64peers, vmbench_hunt, vmbench_hw, sweep, devbench, hotplug, boot, exitcost, lockup,
       cpuid, deaths, profile)

# bench/vmbench with no command word: the sweep, whose parser takes its
# modes' options (the hunt's, hw-check's).
DEFAULT = sweep

# The sub-commands: {word: scenario}.
COMMANDS = {s.NAME: s for s in ALL if s.COMMAND}

# RESULTS.md's sections in the page's order: (scenario NAME, section key).
PAGE = (("profile", "nullb"), ("profile", "tmpfs"), ("profile", "tmpfs-1q"),
        ("profile", "tmpfs-kvmtool"), ("arm64-peers", "nullb"), ("arm64-peers", "file"),
        ("profile", "api"), ("sweep", "seed004"), ("profile", "seed004-peers"),
        ("devbench", "devbench"), ("hotplug", "hotplug"), ("boot", "boot"),
        ("deaths", "deaths"))


def by_name(name):
    return next(s for s in ALL if s.NAME == name)


def which(out):
    """The scenario that wrote directory OUT (packed or not), or None."""
    return next((s for s in ALL if s.is_result(out)), None)


def sections(entries):
    """Every scenario's sections of ENTRIES (standing.scan's) in PAGE's
    order: [(title, lines)], those without data too (lines [])."""
    got = {}
    for s in ALL:
        for key, title, lines in s.sections(entries):
            got[(s.NAME, key)] = (title, lines)
    missing = set(got) - set(PAGE)
    if missing:
        raise ValueError("sections not in scenarios.PAGE: %s" % sorted(missing))
    return [got[k] for k in PAGE]
