"""tilec: a thread-level (SIMT) schedule generated for Triton."""

from __future__ import annotations

from tilec.errors import TilecError

EXPECT = TilecError, "simt_sgemm.py: a thread-level (TIDx/TIDy) schedule is a SIMT kernel; generate it with --target cuda"
ARGV = ["gen", "{examples}/simt_sgemm.py"]
