"""tilec: M=-4."""

from __future__ import annotations

from tilec.errors import FusionError

EXPECT = FusionError, "sizes.py:7: GEMM size M must be a positive integer but got -4"
FILES = {
    "sizes.py": "from tilec.ir import GemmFusion\n\nPARAMS = dict(M=256)\n\n\ndef schedule(M):\n    return GemmFusion(M, 128, 64)\n",
}
ARGV = ["gen", "{tmp}/sizes.py", "--param", "M=-4"]
