"""tilec: a misspelled --param name: the closest is suggested."""

from __future__ import annotations

from tilec.errors import ParamError

EXPECT = ParamError, "gemm_basic.py: unknown parameter 'BMM'; did you mean 'BM'? valid parameters are BK, BM, BN, B_LAYOUT, DTYPE, K, M, N"
ARGV = ["show", "{examples}/gemm_basic.py", "--param", "BMM=64"]
