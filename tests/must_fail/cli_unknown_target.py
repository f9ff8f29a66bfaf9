"""tilec: an unknown --target."""

from __future__ import annotations

EXPECT = "usage", "argument --target: invalid choice: 'ptx' (choose from 'triton', 'cuda')"
ARGV = ["gen", "{examples}/gemm_basic.py", "--target", "ptx"]
