"""vmharness.mainjob's shared pieces and `bench/vmbench run --arch arm64`
(the script the arm64 test host runs, the summary from the consoles),
with the test host replaced: no boots."""
import json
import shlex
import types

import pytest

from vmharness import cli, mainjob, paths, testhost

DOC = {"jobs": [{"jobname": "randread-4k",
                 "read": {"iops": 2000.0, "bw_bytes": 8192000,
                          "clat_ns": {"mean": 16000.0, "percentile": {"99.000000": 40000}}}}]}


def console(job, rc=0, doc=DOC):
    """A guest's console with guest/init's fio block."""
    return ["[    1.0] booting", "=== FIO-JSON BEGIN %s ===" % job,
            json.dumps(doc, indent=1), "=== FIO-JSON END %s rc=%d ===" % (job, rc)]


def args(out, jobs=("randread-4k", "randwrite-4k"), **kw):
    a = dict(out=str(out), job=list(jobs), cpus=2, mem=512, disk="ram:1G", queues=2,
             boot_timeout=240, kernel="stock")
    a.update(kw)
    return types.SimpleNamespace(**a)


def test_fio_result_only_from_a_block_that_ended_with_status_0():
    assert mainjob.fio_result("randread-4k", console("randread-4k")) == DOC
    assert mainjob.fio_result("randread-4k", console("randread-4k", rc=1)) is None
    assert mainjob.fio_result("randread-4k", console("randwrite-4k")) is None
    assert mainjob.fio_result("randread-4k", console("randread-4k")[:-1]) is None  # died


def test_summary_header_names_what_ran_and_where(tmp_path, capsys):
    mainjob.print_summary(args(tmp_path), "vmm", "stock kernel", None, ["line 1", "line 2"])
    assert capsys.readouterr().out == (
        "\nfio summary: vmm, 2 vCPUs, 512 MiB, stock kernel, /dev/vdb = ram:1G with 2 queues "
        "(randread-4k: 4 KiB random reads, queue depth 32, io_uring, O_DIRECT, 5 s; "
        "randwrite-4k: 4 KiB random writes, queue depth 32, io_uring, O_DIRECT, 5 s)"
        "\nline 1\nline 2\n")
    mainjob.print_summary(args(tmp_path, jobs=["randread-4k"]), "vmm on arm64",
                          "Debian's arm64 kernel", "inside X", [])
    assert capsys.readouterr().out.splitlines()[1:3] == [
        "fio summary: vmm on arm64, 2 vCPUs, 512 MiB, Debian's arm64 kernel, /dev/vdb = "
        "ram:1G with 2 queues (randread-4k: 4 KiB random reads, queue depth 32, io_uring, "
        "O_DIRECT, 5 s)", "inside X"]
    # each job says what it is: a sequential job is not called 4 KiB
    mainjob.print_summary(args(tmp_path, jobs=["seq-write", "randwrite-4k"]), "vmm", "k", None, [])
    assert "(seq-write: Sequential 128 KiB writes, queue depth 32, io_uring, O_DIRECT, 5 s; " \
        "randwrite-4k: 4 KiB random writes" in capsys.readouterr().out


def test_arm64_script_one_bounded_vm_per_job_outputs_under_out(tmp_path):
    out = tmp_path / "it's here"
    script, runs = mainjob.arm64_script(args(out, boot_timeout=200))
    lines = script.splitlines()
    assert lines[0] == "set -u" and len(lines) == 3
    assert [j for j, _, _ in runs] == ["randread-4k", "randwrite-4k"]
    for line, (job, argv, base) in zip(lines[1:], runs):
        words = shlex.split(line)
        assert words[:4] == ["timeout", "-s", "TERM", "200"]
        # The VM's command line comes back whole from the quoted words.
        assert words[4:4 + len(argv)] == argv
        assert argv[:2] == [paths.ARM64_VMM, "run"]
        assert argv[argv.index("-k") + 1] == paths.ARM64_KERNEL
        assert argv[argv.index("-i") + 1] == paths.ARM64_INITRD
        assert "fio=" + job in argv[argv.index("-p") + 1]
        assert "ram:1G,queues=2,serial=data" in argv
        assert base == str(out / job)
        assert line.endswith("</dev/null >%s 2>%s; echo $? >%s" % (
            shlex.quote(base + ".log"), shlex.quote(base + ".err"), shlex.quote(base + ".rc")))


def fake_testhost(tmp_path, consoles, calls):
    """run_until_command_ends as the arm64 test host would leave OUT:
    each job's console in OUT/JOB.log (CONSOLES: job -> lines)."""
    def run(argv, out_dir, timeout_s, boots, arch="x86_64"):
        calls.append({"argv": argv, "out": out_dir, "timeout_s": timeout_s, "arch": arch})
        for job, lines in consoles.items():
            (tmp_path / (job + ".log")).write_text("\n".join(lines) + "\n")
            (tmp_path / (job + ".err")).write_text(
                "vmm: virtio-blk: 10000 requests, 20 notifies, 30 kicks\n")
        return 0
    return run


def test_run_arm64_boots_the_arm64_test_host_once_and_sums_up(tmp_path, monkeypatch, capsys):
    calls = []
    (tmp_path / "randwrite-4k.log").write_text("an old run's console\n")
    monkeypatch.setattr(testhost, "run_until_command_ends", fake_testhost(
        tmp_path, {"randread-4k": console("randread-4k")}, calls))
    rc = mainjob.run_arm64(args(tmp_path))
    text = capsys.readouterr().out
    assert rc == 1  # randwrite-4k left no console; the old one was removed first
    assert len(calls) == 1 and calls[0]["arch"] == "arm64"
    assert calls[0]["argv"] == ["sh", str(tmp_path / mainjob.ARM64_SCRIPT)]
    assert calls[0]["timeout_s"] > 2 * 240  # each VM's limit, and the boot
    assert (tmp_path / mainjob.ARM64_SCRIPT).read_text() == mainjob.arm64_script(args(tmp_path))[0]
    assert "run: fio randwrite-4k failed" in text and "an old run" not in text
    assert "run: fio randread-4k: 10000 requests, 20 notifies, 30 kicks" in text
    assert "fio summary: vmm on arm64" in text
    assert mainjob.summary_lines("randread-4k", DOC)[0] in text


def test_run_arm64_status_0_when_every_job_reported(tmp_path, monkeypatch):
    jobs = ("randread-4k", "randwrite-4k")
    monkeypatch.setattr(testhost, "run_until_command_ends", fake_testhost(
        tmp_path, {j: console(j, doc=dict(DOC, jobs=[dict(DOC["jobs"][0], jobname=j)]))
                   for j in jobs}, []))
    assert mainjob.run_arm64(args(tmp_path, jobs)) == 0


@pytest.mark.parametrize("arch,called", [("arm64", "run_arm64"), ("x86_64", "run_jobs")])
def test_cli_run_dispatches_on_arch(tmp_path, monkeypatch, arch, called):
    seen = {}
    for name in ("run_arm64", "run_jobs"):
        monkeypatch.setattr(mainjob, name, lambda a, name=name: seen.setdefault(name, a) and 0)
    assert cli.main(["run", "--arch", arch, "--where", "here", "-o", str(tmp_path)]) == 0
    assert list(seen) == [called]
    assert seen[called].job == ["randread-4k", "randwrite-4k"]
    assert seen[called].out == str(tmp_path)


def test_cli_run_arm64_has_an_output_folder_of_its_own(monkeypatch):
    seen = []
    monkeypatch.setattr(mainjob, "run_arm64", lambda a: seen.append(a.out) or 0)
    monkeypatch.setattr(mainjob, "run_jobs", lambda a: seen.append(a.out) or 0)
    cli.main(["run", "--arch", "arm64"])
    cli.main(["run", "--where", "here"])
    assert seen == [paths.BUILD + "/run-arm64", paths.BUILD + "/run"]
