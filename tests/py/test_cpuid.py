"""vmharness.cpuid: the guest's dumps parsed and set side by side."""
import json

from vmharness import cpuid


def console(leaf1_ecx, flags, log, msr_end=True):
    return ["[    0.1] booting", "=== CPUID BEGIN ===",
            "cpu 0 leaf 0x00000000 sub 0: 00000010 68747541 444d4163 69746e65",
            "cpu 0 leaf 0x00000001 sub 0: 00a00f11 00020800 %s 178bfbff" % leaf1_ecx,
            "=== CPUID END ===", "=== CPUINFO BEGIN ===",
            "processor\t: 0", "flags\t\t: " + flags, "", "processor\t: 1",
            "flags\t\t: nothing", "=== CPUINFO END ===", "=== DMESG BEGIN ==="] + log + [
            "=== DMESG END ===", "=== MSR BEGIN ===",
            "cpu 0 msr 0x00000277: 0007040600070406"] + (["=== MSR END ==="] if msr_end else [])


def test_sections_take_what_lies_between_the_markers():
    got, ended = cpuid.dump_sections(console("fffa3203", "fpu pmu", ["[    1.5] a"]))
    assert sorted(got) == ["CPUID", "CPUINFO", "DMESG", "MSR"] and ended == list(cpuid.SECTIONS)
    assert len(got["CPUID"]) == 2 and got["DMESG"] == ["[    1.5] a"]
    _, ended = cpuid.dump_sections(console("x", "y", [], msr_end=False))
    assert ended == ["CPUID", "CPUINFO", "DMESG"]
    assert cpuid.flags(got["CPUINFO"]) == {"fpu", "pmu"}  # the first CPU's


def test_the_numbers_of_a_log_line_do_not_make_it_differ():
    assert cpuid.log_lines(["[    0.123456] Memory: 12345K/524288K available"]) == \
        cpuid.log_lines(["[   12.000001] Memory: 99999K/524288K available"])
    assert cpuid.log_lines(["x2apic enabled"]) != cpuid.log_lines(["x2apic disabled"])


def test_analyse_names_each_difference(tmp_path):
    for name, ecx, flags, log in (("qemu", "fffa3203", "fpu pmu", ["[ 1.0] Perf: AMD PMU"]),
                                  ("vmm", "fef83203", "fpu", ["[ 2.0] no PMU"])):
        got, _ = cpuid.dump_sections(console(ecx, flags, log))
        with open(tmp_path / (name + ".txt"), "w") as f:
            for s in cpuid.SECTIONS:
                for line in got[s]:
                    f.write("%s %s\n" % (s, line))
        with open(tmp_path / "runs.jsonl", "a") as f:
            f.write(json.dumps({"config": name, "outcome": "clean"}) + "\n")
    text = cpuid.analyse(str(tmp_path))
    assert "flags only under qemu: pmu" in text
    assert "flags only under vmm: none" in text
    assert "| cpu 0 leaf 0x00000001 sub 0 | 00a00f11 00020800 fffa3203 178bfbff | " \
           "00a00f11 00020800 fef83203 178bfbff |" in text
    assert "leaf 0x00000000" not in text and "msr" not in text
    assert "Perf: AMD PMU" in text and "no PMU" in text
    assert (tmp_path / "cpuid.md").read_text() == text
