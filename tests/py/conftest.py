"""Unit tests of the Python harness (bench/vmharness): no guest, no KVM."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
