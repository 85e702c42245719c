"""The one configuration parser (vmharness/config.py): every command of
bench/vmbench refuses an unknown key or a bad value of -c before anything
boots, and our disk's keys are the VMM's own."""
import os
import re

import pytest

from vmharness import cli, scenario

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class GotPastTheChecks(Exception):
    pass


@pytest.fixture
def stop_before_running(monkeypatch, tmp_path):
    """cli.main up to the point where a scenario would start (write_meta,
    before any guest or test host): raises GotPastTheChecks there."""
    def meta(args):
        raise GotPastTheChecks(args.config)
    monkeypatch.setattr(scenario, "write_meta", meta)
    return ["-o", str(tmp_path / "out")]


@pytest.mark.parametrize("argv,word", [
    ("profile -c vmm:typo=1", "typo"),
    ("profile -c vmm:poll=x", "poll=x"),
    ("profile -c vmm:engine=fast", "engine=fast"),
    ("profile -c vmm:host_thp=always", "host_thp"),
    ("profile -c vmm:jobs=nosuch", "nosuch"),
    ("profile -c vmm:poll=1,poll=2", "twice"),
    ("profile -c vmm:backend=ram,engine=sync", "engine"),
    ("profile -c qemu:kernel=vmlinux", "kernel=vmlinux"),
    ("deaths -c qemu:aoi=native", "aoi"),
    ("deaths -c qemu:pin=on", "pin"),
    ("deaths -c vmm:host_thp=sometimes", "host_thp=sometimes"),
    ("deaths -c vmm:queues=17", "queues=17"),
    ("deaths -c kvmtool", "kvmtool"),
    ("cpuid -c vmm:jobs=randread-4k", "jobs"),
    ("boot -c qemu:bin=/x", "bin"),
    ("boot -c vmm:jobs=nosuch", "nosuch"),
])
def test_every_command_refuses_a_bad_configuration_before_anything_runs(
        argv, word, stop_before_running, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv.split() + stop_before_running)
    assert e.value.code == 2
    assert word in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    "profile -c vmm:poll=0,batch=on,engine=sync,iops=1000,bw=10M,burst=5,pin=on,api=poll",
    "profile -c qemu:vqmap=on,aio=native,queues=4,name=q -c kvmtool:bin=/bin/true,queues=1",
    "deaths -c vmm:host_thp=never,jobs=verify -c qemu:host_thp=always,aio=threads",
    "cpuid -c vmm:kernel=bzimage -c qemu:iothread=off",
    "boot -c vmm-elf:bin=/x/vmm,jobs=small -c qemu-microvm",
])
def test_good_configurations_get_through(argv, stop_before_running):
    with pytest.raises(GotPastTheChecks):
        cli.main(argv.split() + stop_before_running)


def test_every_kind_of_every_scenario_refuses_an_unknown_key_and_a_key_twice():
    from vmharness import config
    for name, kinds in config.SCENARIOS.items():
        for kind, keys in kinds.items():
            with pytest.raises(config.ConfigError, match="unknown option 'nosuch'"):
                config.parse(kind + ":nosuch=1", name)
            if not keys:  # a name without options (lockup's guests, arm64-peers')
                with pytest.raises(config.ConfigError, match="unknown option 'name'.*none"):
                    config.parse(kind + ":name=x", name)
                continue
            with pytest.raises(config.ConfigError, match="name= given twice"):
                config.parse(kind + ":name=a,name=b", name)
            assert config.parse(kind + ":name=x", name)["name"] == "x"


def test_our_disk_keys_are_the_vmms_and_go_into_the_disk_spec():
    """config.VMM_DISK is blk/opts.c's list less the harness's own (ro,
    direct, serial, queues) and hotplug (where the disk sits, not how it
    is served: `vmbench hotplug` measures the slots), and
    profile.guest_argv puts exactly those in -d: an option the VMM gains
    needs a word here."""
    from types import SimpleNamespace
    from vmharness import config, profile
    with open(os.path.join(REPO, "blk", "opts.c")) as f:
        src = f.read()
    names = set(re.findall(r"\[OPT_[A-Z]+\] = \"(\w+)\"", src))
    assert names and set(config.VMM_DISK) == names - {"ro", "direct", "serial", "queues",
                                                      "hotplug"}
    spec = "vmm:poll=0,batch=on,engine=sync,iops=1000,bw=10M,burst=5,pin=on,append=nopv"
    args = SimpleNamespace(kernel="vmlinux", queues=2, mem=512, cpus=2, disk_mb=64)
    disk = {"path": "/d/data.img", "serial": "data", "direct": False}
    argv = profile.guest_argv(profile.parse_config(spec), "console=ttyS0", disk, args)
    assert argv[argv.index("-d") + 1] == (
        "/d/data.img,queues=2,serial=data,poll=0,batch=on,engine=sync,iops=1000,bw=10M,burst=5")
