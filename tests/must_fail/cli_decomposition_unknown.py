"""tilec: an unknown decomposition."""

from __future__ import annotations

from tilec.errors import PolicyError

EXPECT = PolicyError, "gemm_decomposition.py: decomposition must be one of auto, dp, splitk, streamk, dp_1sk, sk2_dp, skpp, dp_ft but got 'bogus'"
ARGV = ["explain", "{examples}/gemm_decomposition.py", "--param", "DECOMP=bogus"]
