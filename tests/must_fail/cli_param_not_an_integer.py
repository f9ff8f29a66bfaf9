"""tilec: a non-integer value for an integer parameter."""

from __future__ import annotations

from tilec.errors import ParamError

EXPECT = ParamError, "gemm_basic.py: parameter M must be an integer (its default is 1024), or 'M' to keep it symbolic, but got '1.5'"
ARGV = ["show", "{examples}/gemm_basic.py", "--param", "M=1.5"]
