"""tilec: a tile of 96 rows for the Triton backend (tl.arange needs powers of two)."""

from __future__ import annotations

from tilec.errors import UnsupportedError

EXPECT = UnsupportedError, "triton: BM must be a power of two >= 16 but got 96"
ARGV = ["gen", "{examples}/gemm_basic.py", "--param", "BM=96"]
