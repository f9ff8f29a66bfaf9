"""Lowering: the schedule's choices reach the plan."""

from __future__ import annotations

import pytest
import sympy

from tests.plans import plan, schedule
from tilec.ir.types import LoadKind
from tilec.transforms.lower import lower


@pytest.mark.parametrize("target", ["triton", "cuda"])
def test_kernel_options_reach_the_plan(target: str) -> None:
    default = plan(256, 256, 128, 128, 128, 64, target=target, b_transposed=True)
    chosen = plan(256, 256, 128, 128, 128, 64, target=target, b_transposed=True,
                  stages=default.num_stages + 2, warps=2 * default.num_warps)
    assert (chosen.num_stages, chosen.num_warps) == (default.num_stages + 2,
                                                     2 * default.num_warps)
    f = schedule(256, 256, 128, 64, 64, 64, load="pointer")
    assert f.kernel_options.load is LoadKind.POINTER
    p = lower(f, target="triton")
    assert (p.a.kind, p.b.kind) == (LoadKind.POINTER, LoadKind.POINTER)
    assert lower(schedule(256, 256, 128, 64, 64, 64), target="triton").a.kind is LoadKind.TMA


def test_multicast_plan_carries_its_facts_as_objects_and_the_guard_they_make() -> None:
    from tilec.loader import load_schedule
    from tilec.proofs.context import Fact
    from tilec.runtime.build import kernel_plan

    s = load_schedule("examples/seed004_persistent_cluster.py", {"CN": 2, "CLUSTER": 4})
    plan = kernel_plan(s, target="cuda")
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in s.params.items()
              if isinstance(v, int) and not isinstance(v, bool)}
    for mc in (plan.a.multicast, plan.b.multicast):
        assert mc is not None and mc.closed_form and mc.facts
        assert all(isinstance(f, Fact) for f in mc.facts)
        # the guard is the facts' conjunction decided at the launch: every fact holds there
        assert mc.guard is sympy.true
        assert all(bool(f.condition().xreplace(values).doit()) for f in mc.facts)
