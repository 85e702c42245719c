"""vmharness.testhost's architecture parameter (x86_64 or arm64): the
command and environment tests/testhost/run.sh gets, and the names it
takes.  Nothing boots: run.sh is a stand-in, or stops before booting."""
import os
import subprocess

import pytest

from vmharness import cli, paths, testhost

# A stand-in for tests/testhost/run.sh that writes down its arguments and
# the environment it was given, and ends with the command's status 0.
RECORDING_RUN = r"""#!/bin/sh
mkdir -p "$TESTHOST_OUT/.testhost"
echo "$*" >"$TESTHOST_OUT/argv"
echo "$TESTHOST_ARCH $TESTHOST_TIMEOUT" >"$TESTHOST_OUT/env"
echo 0 >"$TESTHOST_OUT/.testhost/rc"
"""


@pytest.fixture
def recording_run(tmp_path, monkeypatch):
    run = tmp_path / "run.sh"
    run.write_text(RECORDING_RUN)
    run.chmod(0o755)
    monkeypatch.setattr(testhost, "LOCK", str(tmp_path / "lock"))
    monkeypatch.setattr(paths, "TESTHOST_RUN", str(run))
    return run


@pytest.mark.parametrize("given,name", [("x86_64", "x86_64"), ("amd64", "x86_64"),
                                        ("arm64", "arm64"), ("aarch64", "arm64")])
def test_check_arch_takes_both_names_of_each_architecture(given, name):
    assert testhost.check_arch(given) == name


@pytest.mark.parametrize("bad", ["", "x86", "arm", "ARM64", "riscv64", None])
def test_check_arch_refuses_anything_else(bad):
    with pytest.raises(ValueError, match="x86_64, arm64"):
        testhost.check_arch(bad)


def test_run_argv_is_run_sh_and_the_command():
    assert testhost.run_argv(("sh", "-c", "exit 3")) == [paths.TESTHOST_RUN, "sh", "-c", "exit 3"]


def test_run_env_names_out_dir_time_limit_and_architecture(monkeypatch):
    monkeypatch.setenv("TESTHOST_ARCH", "arm64")  # the parameter decides, not this
    e = testhost.run_env("/o", 77, env={"KEEP": "1"})
    assert e["TESTHOST_ARCH"] == "x86_64" and e["KEEP"] == "1"
    assert (e["TESTHOST_OUT"], e["TESTHOST_TIMEOUT"]) == ("/o", "77")
    assert e["TESTHOST_MONITOR"] == "/tmp/testhost-monitor.%d.sock" % os.getpid()
    e = testhost.run_env("/o", 5, env={"TESTHOST_MONITOR": "/m.sock"}, arch="aarch64")
    assert e["TESTHOST_ARCH"] == "arm64" and e["TESTHOST_MONITOR"] == "/m.sock"
    assert testhost.run_env("/o", 5)["TESTHOST_ARCH"] == "x86_64"  # ours, the default
    with pytest.raises(ValueError):
        testhost.run_env("/o", 5, arch="mips")


def test_monitor_commands_ask_for_local_apics_on_x86_only():
    assert testhost.monitor_commands(2) == ["info registers -a", "info lapic 0", "info lapic 1"]
    assert testhost.monitor_commands(2, "arm64") == ["info registers -a"]


def test_run_inside_hands_the_architecture_to_run_sh(tmp_path, recording_run):
    assert testhost.run_inside(["true"], str(tmp_path), timeout_s=9, arch="arm64") == 0
    assert (tmp_path / "env").read_text() == "arm64 9\n"
    assert (tmp_path / "argv").read_text() == "true\n"
    assert testhost.run_inside(["true"], str(tmp_path), timeout_s=9) == 0
    assert (tmp_path / "env").read_text() == "x86_64 9\n"


def test_a_wrong_architecture_stops_before_run_sh(tmp_path, recording_run):
    with pytest.raises(ValueError):
        testhost.run_inside(["true"], str(tmp_path), arch="sparc")
    with pytest.raises(ValueError):
        testhost.run_until_command_ends(["true"], str(tmp_path), 9, 1, arch="sparc")
    assert not (tmp_path / "argv").exists()


def test_testhost_command_takes_arch(tmp_path, recording_run, capsys):
    out = tmp_path / "out"
    assert cli.main(["testhost", "-o", str(out), "--arch", "aarch64", "--", "sh", "-c", "x"]) == 0
    assert (out / "env").read_text() == "arm64 1800\n"
    assert (out / "argv").read_text() == "sh -c x\n"
    assert cli.main(["testhost", "-o", str(out), "--", "true"]) == 0
    assert (out / "env").read_text() == "x86_64 1800\n"
    with pytest.raises(SystemExit) as e:
        cli.main(["testhost", "-o", str(out), "--arch", "s390x", "--", "true"])
    assert e.value.code == 2 and "--arch" in capsys.readouterr().err


def run_sh(tmp_path, cwd=None, **env):
    e = dict(os.environ, TESTHOST_OUT=str(tmp_path / "out"), **env)
    return subprocess.run([os.path.join(paths.REPO, "tests", "testhost", "run.sh"), "true"],
                          env=e, cwd=cwd or paths.REPO, capture_output=True, text=True,
                          timeout=60)


def test_run_sh_refuses_an_unknown_architecture_before_anything(tmp_path):
    p = run_sh(tmp_path, TESTHOST_ARCH="ppc64")
    assert p.returncode == 1
    assert "TESTHOST_ARCH=ppc64: x86_64 or arm64" in p.stderr
    assert not (tmp_path / "out").exists()


def test_run_sh_arm64_needs_a_directory_the_test_host_has(tmp_path):
    # Neither the checkout nor TESTHOST_OUT: not there inside, said before
    # anything is built or booted.
    p = run_sh(tmp_path, cwd=str(tmp_path), TESTHOST_ARCH="arm64", TESTHOST_QEMU="true")
    assert p.returncode == 1
    assert "run it from one of them, not %s" % tmp_path in p.stderr
    assert not (tmp_path / "out").exists()
