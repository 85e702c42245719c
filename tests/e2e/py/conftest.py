"""pytest end-to-end tests over bench/vmharness: real guests, run where
KVM runs Linux (inside the test host on this project's machines; see
`bench/vmh pytest`)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))


# bench/vmh pytest (vmharness.pytestrun) reads each test's outcome from
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
        _record({"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome})


def pytest_sessionfinish(session, exitstatus):
    if RECORD:
        _record({"finished": int(exitstatus)})
