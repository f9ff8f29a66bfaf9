"""tilec: --param without =."""

from __future__ import annotations

from tilec.errors import ParamError

EXPECT = ParamError, "--param must look like NAME=VALUE but got 'CN'"
ARGV = ["show", "{examples}/gemm_basic.py", "--param", "CN"]
