"""`vmm run -v --stats FILE`: the device's latency breakdown for a real
guest running fio is written, and its numbers make sense beside fio's.
On each guest kernel (the kernel fixture)."""
import json

from vmharness import cmdlines, fiojson, guestrun, paths

def test_stats_file_for_a_real_guest(tmp_path, kernel):
    stats = tmp_path / "stats.json"
    cmdline = cmdlines.guest_cmdline(fio="randread-4k", disk_serial="data")
    disk = {"path": "ram:64M", "serial": "data", "queues": 1}
    argv = cmdlines.vmm_argv(kernel.path("vmlinux"), paths.INITRD, cmdline, 512, 1,
                             [disk], paths.VMM_BIN) + ["--stats", str(stats)]
    g = guestrun.run_with_retries(argv, str(tmp_path / "guest.log"))
    assert g.rc == 0, "\n".join(g.lines[-30:]) + g.stderr
    rc, doc = fiojson.extract(g.lines)["randread-4k"]
    assert rc == 0 and doc
    fio = fiojson.summary(doc)
    clat_p50_ns = doc["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"]

    d = json.loads(stats.read_text())["disks"][0]
    assert len(d["queues"]) == 1
    q = d["queues"][0]
    # Every read fio did went through the backend (plus the guest's own
    # few, e.g. the partition scan).
    n = q["submit_to_complete"]["count"]
    assert fio["ios"] <= n <= d["requests"]
    assert q["pop_to_submit"]["count"] == n
    assert q["complete_to_publish"]["count"] == n
    for stage in ("pop_to_submit", "submit_to_complete", "complete_to_publish"):
        s = q[stage]
        assert s["p50"] <= s["p99"] <= s["p999"] <= s["max"], s
        assert 0 <= s["mean"] <= s["max"], s
    # The device's part is a part of what the guest saw.
    device_p50 = sum(q[s]["p50"] for s in ("pop_to_submit", "submit_to_complete",
                                           "complete_to_publish"))
    assert 0 < device_p50 < clat_p50_ns
    # -v prints the same breakdown at exit.
    assert "virtio-blk q0: submit_to_complete n=%d " % n in g.stderr
