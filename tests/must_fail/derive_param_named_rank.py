"""A schedule parameter named like a variable of the derivation (an internal SyntaxError in
the exact evaluator (proofs/evaluate.compile_int) before)."""

from __future__ import annotations

from tilec.errors import ParamError
from tilec.ir import GemmFusion
from tilec.transforms.multicast.derive import derive

EXPECT = ParamError, "schedule parameter 'rank' has the name of a variable of the multicast derivation (rank, r1, r2, cidx, bidx, rank_x, i_<axis>, ...): rename the parameter"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)
    derive(f, params={"rank": 2})
