"""tilec: bench --sweep without values."""

from __future__ import annotations

from tilec.errors import TilecError

EXPECT = TilecError, "--sweep must look like NAME=V1,V2,... but got 'M'"
ARGV = ["bench", "{examples}/gemm_basic.py", "--sweep", "M"]
