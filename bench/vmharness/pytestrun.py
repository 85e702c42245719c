"""The pytest end-to-end tests (tests/e2e/py) in the test host, through
its deaths.

The test host itself dies now and then (soft lockups in its emulated
CPUs, guest/README.md's known problems); one death must not throw away
the tests already run nor hide the ones not run.  Each test's outcome is
recorded as it ends (conftest.py writes OUT/runs.jsonl when
VMH_PYTEST_RECORD names it); a test host that dies before pytest has
finished is booted again for the tests without an outcome, the one that
was running included, 3 boots at most.  The summary at the end counts
every test once, from all boots."""
import json
import os

from . import testhost

BOOTS = 3


def read_record(path):
    """(collected node ids, {node id: outcome}, finished) from RECORD."""
    collected, outcome, finished = [], {}, False
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return collected, outcome, finished
    for line in lines:
        try:
            r = json.loads(line)
        except ValueError:
            continue  # a line cut by the test host's death
        if "collected" in r:  # each boot's, the tests already run deselected
            collected += [n for n in r["collected"] if n not in collected]
        elif "nodeid" in r:
            # A failed setup or teardown counts as a failure of its test.
            if r["outcome"] != "passed" or r["when"] == "call":
                if outcome.get(r["nodeid"]) != "failed":
                    outcome[r["nodeid"]] = r["outcome"]
        elif "finished" in r:
            finished = True
    return collected, outcome, finished


def summary(collected, outcome):
    """The last line, counting every test once over all boots; it ends
    in "N passed, N failed" (tests never run count as failed)."""
    counts = {}
    for nodeid in collected:
        o = outcome.get(nodeid, "not run")
        counts[o] = counts.get(o, 0) + 1
    failed = counts.get("failed", 0) + counts.get("not run", 0)
    extra = "".join("%d %s, " % (counts[k], k) for k in ("skipped", "not run") if counts.get(k))
    return "%s%d passed, %d failed" % (extra, counts.get("passed", 0), failed)


def run(pytest_argv, out):
    """Run PYTEST_ARGV in the test host until every collected test has an
    outcome; returns the exit status (0: all passed)."""
    record = os.path.join(out, "runs.jsonl")
    try:
        os.unlink(record)
    except OSError:
        pass
    env = dict(os.environ, VMH_PYTEST_RECORD=record)
    state = {"collected": [], "outcome": {}, "finished": False}

    def next_argv():
        return list(pytest_argv) + [a for n in state["collected"] if n in state["outcome"]
                                    for a in ("--deselect", n)]

    def finished(rc):
        c, o, f = read_record(record)
        state.update(collected=c, outcome=o,
                     finished=f or bool(c and all(n in o for n in c)))
        return state["finished"]
    testhost.run_with_reboots(next_argv, out, finished, boots=BOOTS, env=env)
    collected, outcome, finished = state["collected"], state["outcome"], state["finished"]
    if not finished:
        print("vmbench: the test host died %d times before pytest finished" % BOOTS, flush=True)
    for nodeid in collected:
        if outcome.get(nodeid) not in ("passed", "skipped"):
            print("vmbench: %s: %s" % (outcome.get(nodeid, "not run"), nodeid))
    print("vmbench pytest, all boots: " + summary(collected, outcome), flush=True)
    ok = finished and collected and all(
        outcome.get(n) in ("passed", "skipped") for n in collected)
    return 0 if ok else 1
