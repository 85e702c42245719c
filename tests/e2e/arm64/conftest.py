"""The arm64 end-to-end tests run on this (x86) host: they boot the arm64
test host once, where tests/e2e/arm64/cases.sh runs every case's guest
under build/arm64/vmm, and check what the cases left."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))
