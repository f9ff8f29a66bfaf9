"""CUDA plans for the tests, built the one way tilec builds them: the seed schedule
(examples/seed004_persistent_cluster.py) loaded with parameters and lowered for CUDA."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import sympy

from tilec.runtime.loader import load_schedule
from tilec.transforms.multicast.derive import symbolic_instance
from tilec.transforms.pipeline import lower
from tilec.transforms.plan import KernelPlan, MulticastMode, MulticastPlan

SEED = Path(__file__).resolve().parents[2] / "examples" / "seed004_persistent_cluster.py"


@cache
def _seed(items: tuple, mode: str, closed: bool, multicast: bool) -> KernelPlan:
    params = dict(items)
    s = load_schedule(SEED, params)
    sym = symbolic_instance(s.module.schedule, s.params) if closed else None
    return lower(s.fusion, target="cuda", params=s.params, symbolic=sym, mode=mode,
                 multicast=multicast)


def seed(mode: MulticastMode | str = "leader", closed: bool = True, multicast: bool = True,
         **params: Any) -> KernelPlan:
    """The seed schedule lowered for CUDA; ``closed`` derives closed forms (else general)."""
    m = mode.value if isinstance(mode, MulticastMode) else mode
    if "CLUSTER" not in params:
        params["CLUSTER"] = params.get("CM", 2) * params.get("CN", 1)
    return _seed(tuple(sorted(params.items())), m, closed, multicast)


def sizes(plan: KernelPlan, M: int | None = None, N: int | None = None,
          K: int | None = None) -> dict[str, int]:
    """A launch's sizes by name (default: the plan's reference launch), for evaluating forms."""
    return {"M": plan.M if M is None else M, "N": plan.N if N is None else N,
            "K": plan.K if K is None else K}


def mc_values(mc: MulticastPlan, rank: int, i_rt: int, cidx: int, facts: bool = True,
              sizes: dict[str, int] | None = None) -> dict[str, int]:
    """The form a kernel variant runs, evaluated in sympy: the closed variant (``facts``: its
    launcher found the facts true) the closed form where the plan has one; the general variant
    the closed form only where the plan guards it and the guard holds at this point (the
    guarded branch), else the general form from ``same``."""
    pt = {"rank": rank, "i_rt": i_rt, "cidx": cidx} | (sizes or {})  # sizes: M, N, K of a launch

    def ev(e: Any, extra: dict[str, int] | None = None) -> int:
        vals = pt | (extra or {})
        e = sympy.sympify(e)
        v = e.xreplace({s: sympy.Integer(vals[s.name]) for s in e.free_symbols}).doit()
        return int(bool(v)) if v in (sympy.true, sympy.false) else int(v)

    if mc.closed_form and (facts or (mc.guard != sympy.true and ev(mc.guard))):
        out = {"issue": ev(mc.issue), "mask": ev(mc.mask)}
        if mc.mode is MulticastMode.SLICED:
            out |= {"slice_index": ev(mc.slice_index), "slice_count": ev(mc.slice_count)}
        return out
    n = mc.cluster_size
    same = [ev(mc.same, {"r1": r, "r2": rank}) for r in range(n)]
    return {"issue": int(not any(same[:rank])) if mc.mode is MulticastMode.LEADER else same[rank],
            "mask": sum(1 << r for r in range(n) if same[r]),
            "slice_index": sum(same[:rank]), "slice_count": sum(same)}
