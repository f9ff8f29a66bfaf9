"""tilec: a tile of 96 rows for the CUDA backend (WGMMA tiles of 64, 128, 192, 256)."""

from __future__ import annotations

from tilec.errors import UnsupportedError

EXPECT = UnsupportedError, "CUDA backend: BM must be 64, 128, 192 or 256 but got 96"
ARGV = ["gen", "{examples}/gemm_basic.py", "--target", "cuda", "--param", "B_LAYOUT=nk", "--param", "BM=96"]
