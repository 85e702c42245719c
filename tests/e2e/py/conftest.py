"""pytest end-to-end tests over bench/vmharness: real guests, run where
KVM runs Linux (inside the test host on this project's machines; see
`bench/vmbench pytest`)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))


# bench/vmbench pytest (vmharness.pytestrun) reads each test's outcome from
# VMH_PYTEST_RECORD as it ends, so that a test-host death loses nothing
# already run; one JSON object per line, flushed at once.
RECORD = os.environ.get("VMH_PYTEST_RECORD")


def _record(obj):
    import json
    with open(RECORD, "a") as f:
        f.write(json.dumps(obj) + "\n")


def _heartbeat():
    """OUT/heartbeat rewritten every 20 s: the test host's user space is
    alive even while a test is silent (a guest run may take minutes);
    vmharness.testhost stops a test host whose heartbeat stops."""
    import threading
    import time
    path = os.path.join(os.path.dirname(RECORD), "heartbeat")

    def beat():
        while True:
            with open(path, "w") as f:
                f.write("%.0f\n" % time.time())
            time.sleep(20)
    threading.Thread(target=beat, daemon=True).start()


def pytest_collection_finish(session):
    if RECORD:
        _heartbeat()
        _record({"collected": [item.nodeid for item in session.items]})


def pytest_runtest_logreport(report):
    if RECORD:
        # duration (s): where `make test`'s time goes, test by test
        _record({"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
                 "duration": round(report.duration, 1)})


def pytest_sessionfinish(session, exitstatus):
    if RECORD:
        _record({"finished": int(exitstatus)})


# ---- the suite's own fixtures and markers ----------------------------------

import pytest  # noqa: E402

import guestlib  # noqa: E402

ONLY_NAMED = "only_named"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", ONLY_NAMED + ": run only when selected by marker "
        "(`-m only_named`, e.g. `bench/vmbench pytest -- -m only_named -k seed`); "
        "deselected otherwise")
    config.addinivalue_line("markers", "long: a long case, run by `make e2e`, left out of "
                            "`make test` (E2E_MARK=\"not long\")")


def pytest_collection_modifyitems(config, items):
    """Tests marked only_named are deselected (not skipped) unless the -m
    expression names the marker."""
    if ONLY_NAMED in (config.option.markexpr or ""):
        return
    keep = [i for i in items if i.get_closest_marker(ONLY_NAMED) is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


@pytest.fixture(params=guestlib.KERNEL_NAMES)
def kernel(request):
    """Each guest kernel of paths.KERNELS in turn (ids stock, small); a
    kernel not built fails the test (Kernel.path)."""
    return guestlib.Kernel(request.param)


@pytest.fixture(autouse=True)
def _drop_images(tmp_path):
    """The disk images a test left at the top of its tmp_path go when it
    ends: in the test host /tmp is tmpfs, in its RAM, and pytest keeps
    every test's directory until the end of the session."""
    yield
    for p in tmp_path.glob("*.img"):
        try:
            p.unlink()
        except OSError:
            pass


NOTES = []


@pytest.fixture
def note(request):
    """note(TEXT): a line for the run's end (figures such as IOPS)."""
    def add(text):
        NOTES.append((request.node.nodeid, text))
        print(text)
    return add


def pytest_terminal_summary(terminalreporter):
    from vmharness import guestrun
    tr = terminalreporter
    if NOTES:
        tr.section("figures")
        for nodeid, text in NOTES:
            tr.write_line("%s: %s" % (nodeid.split("::", 1)[-1], text))
    if tr.stats.get("passed") or tr.stats.get("failed"):
        tr.write_sep("=", "guest deaths tried again (the test host's): %d" % len(guestrun.RETRIED))
        for log, outcome in guestrun.RETRIED:
            tr.write_line("%s: %s" % (outcome, log))
    if RECORD:
        # The same, in a file beside the record: the test host's console
        # channel back to us has lost bytes under load.
        with open(os.path.join(os.path.dirname(RECORD), "figures.txt"), "a") as f:
            for nodeid, text in NOTES:
                f.write("%s: %s\n" % (nodeid, text))
            for log, outcome in guestrun.RETRIED:
                f.write("guest death tried again: %s: %s\n" % (outcome, log))
