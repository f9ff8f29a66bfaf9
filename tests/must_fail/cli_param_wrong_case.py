"""tilec: a --param name in the wrong case."""

from __future__ import annotations

from tilec.errors import ParamError

EXPECT = ParamError, "gemm_basic.py: unknown parameter 'bm'; did you mean 'BM'?"
ARGV = ["show", "{examples}/gemm_basic.py", "--param", "bm=64"]
