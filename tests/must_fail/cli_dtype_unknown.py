"""tilec: an unknown DTYPE."""

from __future__ import annotations

from tilec.errors import PolicyError

EXPECT = PolicyError, "dtype must be one of fp16, bf16, fp32 but got 'int8'"
ARGV = ["gen", "{examples}/gemm_basic.py", "--param", "DTYPE=int8"]
