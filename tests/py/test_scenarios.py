"""One pipeline for every scenario (issue 50, item 1): each module of
the registry (vmharness/scenarios.py) has scenario.py's entry points,
the command line is built from the registry, `analyse DIR` asks each
scenario whether it wrote DIR, a -c typo is refused by every command that
takes -c before anything runs, in one line, and RESULTS.md's sections
come from the scenarios in the registry's page order."""
import argparse
import os

import pytest

from vmharness import cli, config, scenario, scenarios, standing, testhost

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "results")


def test_every_scenario_has_the_entry_points():
    assert len(scenarios.ALL) >= 12
    for s in scenarios.ALL:
        missing = [n for n in scenario.ENTRY_POINTS if not hasattr(s, n)]
        assert not missing, "%s lacks %s" % (s.__name__, missing)
        for f in ("add_arguments", "check", "run", "analyse", "is_result", "sections"):
            assert callable(getattr(s, f)), (s.__name__, f)
        assert isinstance(s.COMMAND, bool) and s.HELP
    names = [s.NAME for s in scenarios.ALL]
    assert len(set(names)) == len(names)
    assert scenarios.DEFAULT in scenarios.ALL and not scenarios.DEFAULT.COMMAND


def test_the_commands_are_the_registrys_and_the_tools():
    sub = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(scenarios.COMMANDS) | set(cli.TOOLS)
    assert {"profile", "deaths", "cpuid", "boot", "lockup", "exitcost", "hotplug",
            "arm64-peers"} <= set(scenarios.COMMANDS)
    for name, s in scenarios.COMMANDS.items():
        assert sub.choices[name].get_default("scenario_module") is s
    # The sweep's --help lists them too.
    assert all("  %s " % name in cli.commands_text() for name in sub.choices)


# A packed directory of each kind under bench/results and the scenario
# that wrote it; the last ones no scenario claims (an early sweep's
# tables without their runs, devbench-ab.py's A/B plan).
WROTE = (("arm64-peers-20261205-1710", "arm64-peers"), ("2026-12-07/peers-nullb-s1", "sweep"),
         ("2026-12-01/boot-quiet", "boot"), ("2026-12-03/exitcost-ws-s19", "exitcost"),
         ("2026-12-03/lockup-s18a", "lockup"), ("2026-12-01/cpuid-after", "cpuid"),
         ("2026-12-02/deaths-s13", "deaths"), ("2026-11-30/deaths-rr50", "deaths"),
         ("2026-12-07/profile-nullb-s57", "profile"), ("2026-11-30/profile-vmh1", "profile"),
         ("2026-12-07/hotplug-x86-s2", "hotplug"), ("2026-12-06/hunt-noplug-s33", "hunt"),
         ("2026-12-01/vmbench-hw-check-slow", "hw-check"),
         ("2026-12-07/devbench-loop-s1", "devbench"),
         ("2026-11-30/peers", None), ("2026-12-07/devbench-ab-uring-s1", None))


@pytest.mark.parametrize("d,name", WROTE)
def test_analyse_asks_each_scenario_and_exactly_one_claims_a_directory(d, name, monkeypatch,
                                                                        capsys):
    path = os.path.join(RESULTS, d)
    claims = [s.NAME for s in scenarios.ALL if s.is_result(path)]
    assert claims == ([name] if name else [])
    # cli's analyse runs that scenario's analyse (on the unpacked copy).
    ran = []
    for s in scenarios.ALL:
        monkeypatch.setattr(s, "analyse", lambda out, s=s: ran.append((s.NAME, out)) or "t\n")
    if name is None:
        with pytest.raises(SystemExit) as e:
            cli.main(["analyse", path])
        assert e.value.code == 2 and "no scenario wrote this" in capsys.readouterr().err
        return
    assert cli.main(["analyse", path]) == 0
    assert [n for n, _ in ran] == [name] and os.path.isdir(ran[0][1])
    assert capsys.readouterr().out == "t\n"


def commands_with_config():
    """Every command whose parser has -c, and the sweep (no word), with
    the config.py table its -c goes through."""
    out = [([], "vmbench")]
    sub = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        if any("-c" in a.option_strings for a in p._actions):
            out.append(([name], name))
    return out


def bad_specs(table):
    """-c words of TABLE's that config.py refuses: an unknown key on each
    kind, and a bad value of a key that checks its value."""
    kinds = config.SCENARIOS[table]
    if not kinds:
        return [("vmm:nosuch=1", "no configurations")]
    out = []
    for kind, keys in kinds.items():
        out.append(("%s:nosuch=1" % kind, "nosuch"))
        bad = next((k for k, check in sorted(keys.items()) if check("@x")), None)
        if bad:
            out.append(("%s:%s=@x" % (kind, bad), "%s=@x" % bad))
    return out


class Ran(Exception):
    pass


def test_every_command_with_c_refuses_a_typo_in_one_line_before_anything_runs(
        tmp_path, monkeypatch, capsys):
    def ran(*a, **k):
        raise Ran()
    for s in scenarios.ALL:
        monkeypatch.setattr(s, "run", ran)
    for f in ("run_with_reboots", "run_inside", "probe", "kvm_is_fast"):
        monkeypatch.setattr(testhost, f, ran)
    monkeypatch.setattr(scenario, "write_meta", ran)
    cmds = commands_with_config()
    assert {c[0] for c, _ in cmds if c} >= {"profile", "deaths", "cpuid", "boot", "lockup",
                                            "exitcost", "arm64-peers"}
    tried = 0
    for words, table in cmds:
        for spec, what in bad_specs(table):
            out = tmp_path / ("out%d" % tried)
            with pytest.raises(SystemExit) as e:
                cli.main(words + ["-c", spec, "-o", str(out)])
            err = capsys.readouterr().err
            assert e.value.code == 2, (words, spec)
            assert err.count("\n") == 1 and what in err and "error:" in err, (words, spec, err)
            assert not out.exists()
            tried += 1
    assert tried > 30


def test_the_page_takes_each_scenarios_sections_in_the_registrys_order(tmp_path, monkeypatch):
    from vmharness import boot, deaths, hotplug
    for s, key, title in ((boot, "boot", "B"), (deaths, "deaths", "D"), (hotplug, "hotplug", "H")):
        monkeypatch.setattr(s, "sections", lambda es, key=key, title=title: [
            (key, title, ["from " + title])])
    empty = str(tmp_path)  # no data: every other section is empty

    def heads():
        return [l[3:] for l in standing.page(empty).splitlines() if l.startswith("## ")]
    assert heads() == ["H", "B", "D"]  # scenarios.PAGE: hotplug, boot, deaths
    assert "from B" in standing.page(empty)
    monkeypatch.setattr(scenarios, "PAGE", tuple(reversed(scenarios.PAGE)))
    assert heads() == ["D", "B", "H"]
    # A section a scenario offers and the page does not place is an error.
    monkeypatch.setattr(scenarios, "PAGE", tuple(k for k in scenarios.PAGE if k[0] != "boot"))
    with pytest.raises(ValueError, match="boot"):
        standing.page(empty)


def test_every_section_offered_has_a_place_on_the_page():
    got = [(s.NAME, key) for s in scenarios.ALL for key, _, _ in s.sections([])]
    assert sorted(got) == sorted(scenarios.PAGE) and len(set(got)) == len(got)
