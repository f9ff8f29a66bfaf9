"""Lowering: the schedule's choices reach the plan."""

from __future__ import annotations

import pytest

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
