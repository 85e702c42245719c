"""pytest end-to-end tests over bench/vmharness: real guests, run where
KVM runs Linux (inside the test host on this project's machines; see
`bench/vmh pytest`)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))
