"""Unit tests of the Python harness (bench/vmharness): no guest, no KVM."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))


@pytest.fixture
def fake_vmm(tmp_path, monkeypatch):
    """fake_vmm(SCRIPT): a shell script at tmp_path/vmm becomes the VMM
    the harness runs (paths.VMM_BIN); returns its path."""
    from vmharness import paths

    def make(script):
        vmm = tmp_path / "vmm"
        vmm.write_text("#!/bin/sh\n" + script)
        vmm.chmod(0o755)
        monkeypatch.setattr(paths, "VMM_BIN", str(vmm))
        return vmm
    return make
