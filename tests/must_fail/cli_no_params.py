"""tilec: no PARAMS and schedule() arguments without defaults or --param values."""

from __future__ import annotations

from tilec.errors import ParamError

EXPECT = ParamError, "noparams.py: parameter(s) M, N, K have no value; give them defaults in PARAMS (PARAMS = dict(M=...)) or pass --param M=VALUE"
FILES = {
    "noparams.py": "from tilec.ir import GemmFusion\n\n\ndef schedule(M, N, K):\n    return GemmFusion(M, N, K)\n",
}
ARGV = ["show", "{tmp}/noparams.py"]
