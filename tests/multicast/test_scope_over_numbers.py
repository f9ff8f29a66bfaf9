"""A schedule that cannot be built over symbols has its closed forms derived over one launch's
numbers: proved there, if at all, and nowhere else. Seen with examples/gemm_decomposition.py at
c1e8f94 (its clustered walk called ``fusion.decompose(splits=SPLITS)``, which refused a symbolic
SPLITS): A's form derived at M=40 was reported ``scope: proved`` with no facts, and the oracle
applied it at M=64, where rank 1 does not issue a box it needs.

schedules/needs_int_sizes.py is seed 004's clustered walk from a schedule that takes integer
parameters only. Checked here: ``tilec masks --json`` says ``launch`` (no facts, why), the
oracle's forms hold wherever it applies them (against the brute force), a form's guard is false
at other launches, and the CUDA kernel's forms at other shapes (the schedule functions
host-compiled with g++, against the brute force there; and where even the replay over M, N, K
fails, facts_hold false off the derived sizes).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy

from tests.codegen.test_cuda_emit import _run_harness_at, needs_gxx
from tilec.runtime.loader import load_schedule
from tilec.testing.brute import brute_force, expected
from tilec.testing.launch import derive_at, oracle
from tilec.transforms.multicast.derive import symbolic_build
from tilec.transforms.multicast.records import Scope

SCHEDULE = Path(__file__).parent / "schedules" / "needs_int_sizes.py"
BASES = [dict(CM=2, CN=1), dict(CM=1, CN=2)]  # B shared in a tile column, A in a tile row
# other launches of the same cluster shape: more tile rows, a ragged last cluster group, fewer
# tile columns (odd: the last group half dead), another SMS
OTHER = [dict(M=448), dict(N=320), dict(M=512, N=448, SMS=8), dict(M=192, K=128)]


def _id(d: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in d.items())


def test_the_schedule_cannot_be_built_over_symbols() -> None:
    loaded = load_schedule(SCHEDULE)
    assert symbolic_build(loaded.module.schedule, loaded.params).fusion is None


@pytest.mark.parametrize("mode", ["leader", "sliced"])
@pytest.mark.parametrize("base", BASES, ids=_id)
def test_masks_json_says_launch(base: dict, mode: str) -> None:
    from tilec.runtime.session import Session

    d = json.loads(Session().masks_json(SCHEDULE, base, mode))
    closed = {k: op for k, op in d["operands"].items() if op["closed_form"]}
    assert closed  # the schedule has closed forms at this launch
    for name, op in closed.items():
        assert op["scope"] == "launch", (name, op["scope"], op["facts"])
        assert op["facts"] == [] and op["would_prove"] == []
        assert "symbolic" in op["why_launch"]


@pytest.mark.parametrize("other", OTHER, ids=_id)
@pytest.mark.parametrize("base", BASES, ids=_id)
def test_the_oracle_applies_no_form_where_it_fails(base: dict, other: dict) -> None:
    """Both modes at the other launch: its own derivation, and every form of ``base`` that
    claims something elsewhere, against the brute force (on main, A's (CM=2) and both
    operands' (CN=2) forms were proved and failed here)."""
    report = oracle(SCHEDULE, {**base, **other}, mode="both", base=base)
    assert report.ok, [str(m) for m in report.mismatches[:3]]


@pytest.mark.parametrize("base", BASES, ids=_id)
def test_a_forms_guard_is_its_launch(base: dict) -> None:
    """The guard (what a kernel tests before it uses the closed form) holds at the launch the
    form was derived at, and at no other (the forms are over that launch's numbers)."""
    loaded = load_schedule(SCHEDULE, base)
    for mode in ("leader", "sliced"):
        d = derive_at(SCHEDULE, base, mode)
        closed = [op for op in d.operands.values() if op.closed_form]
        assert closed
        for op in closed:
            for params, want in [(loaded.params, True),
                                 *[({**loaded.params, **o}, False) for o in OTHER]]:
                env = {s: params[s.name] for s in op.guard.free_symbols}
                assert bool(op.guard.xreplace(env)) is want, (op.operand, params, op.guard)


def _kernel_plan(base: dict, session=None):  # type: ignore[no-untyped-def]
    from tilec.runtime.build import kernel_plan

    return kernel_plan(load_schedule(SCHEDULE, base), target="cuda", session=session)


def _truth(base: dict, sizes: tuple[int, int, int], name: str) -> dict:
    """The brute force at these sizes: per (i_rt, cidx, rank) of an alive CTA, (issue, mask)."""
    M, N, K = sizes
    truth = brute_force(load_schedule(SCHEDULE, {**base, "M": M, "N": N, "K": K}).fusion, name)
    out: dict = {}
    for point, origins in truth.points:
        for rank, want in enumerate(expected(origins, "leader")):
            if want.alive:
                key = (point["i_rt"], point["cidx"], rank)
                assert out.get(key, (want.issue, want.mask)) == (want.issue, want.mask)
                out[key] = (want.issue, want.mask)
    return out


@needs_gxx
@pytest.mark.parametrize("base", BASES, ids=_id)
def test_the_cuda_kernels_forms_hold_at_other_shapes(base: dict, tmp_path: Path) -> None:
    """``tilec gen --target cuda`` derives over the schedule's replay over M, N, K (the
    schedule itself cannot be built over symbols): the file's schedule functions, run on the
    host at shapes it was not lowered at, give every alive CTA the brute force's issue and mask
    in the general variant, and in the closed one wherever facts_hold admits it."""
    plan = _kernel_plan(base)
    assert any(op.multicast is not None for op in (plan.a, plan.b))
    shapes = [(448, 384, 64), (320, 320, 64), (512, 448, 128), (192, 384, 100), (320, 384, 64)]
    closed_ran = 0
    for sizes, got in zip(shapes, _run_harness_at(plan, tmp_path, shapes), strict=True):
        for op in (plan.a, plan.b):
            if op.multicast is None:
                continue
            truth = _truth(base, sizes, op.name)
            tags = [op.name] + ([op.name.lower()] if got["V"] else [])
            closed_ran += got["V"] and op.multicast.closed_form
            for tag in tags:
                for key, (issue, mask) in truth.items():
                    gi, gm = got[tag][key][:2]
                    assert bool(gi) == issue, (sizes, tag, key)
                    assert not issue or gm == mask, (sizes, tag, key, gm, mask)
    # the closed variant checked at some shape wherever the plan has a closed form
    assert closed_ran or not any(op.multicast is not None and op.multicast.closed_form
                                 for op in (plan.a, plan.b))


def test_without_a_replay_the_closed_variant_is_the_derived_sizes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Where even the replay over M, N, K fails, the CUDA lowering derives over the numbers: a
    closed multicast form then guards on the sizes it was derived at, so facts_hold (the closed
    variant's test) is false at every other shape (on main its guard was true)."""
    import tilec.transforms.pipeline.state as state
    from tilec.runtime.session import Session

    monkeypatch.setattr(state, "over_sizes", lambda fusion: None)
    plan = _kernel_plan(dict(CM=1, CN=2), session=Session())
    closed = [op.multicast for op in (plan.a, plan.b)
              if op.multicast is not None and op.multicast.closed_form]
    assert closed
    M, N, K = plan.M, plan.N, plan.K
    assert plan.facts_hold(M, N, K)
    for m, n, k in [(448, 384, 64), (320, 512, 64), (320, 384, 128), (2 * M, 2 * N, 2 * K)]:
        assert not plan.facts_hold(m, n, k), (m, n, k)
    assert all({s.name for s in mc.guard.free_symbols} <= {"M", "N", "K"} for mc in closed)
    assert all(mc.guard.xreplace({sympy.Symbol(x, integer=True, positive=True): v for x, v in
                                  zip("MNK", (M, N, K), strict=True)}) == sympy.true for mc in closed)


WALK = '''
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=32, N=32, K=8, BM=8, BN=8, BK=8, WALK="rows")


def schedule(M, N, K, BM, BN, BK, WALK="rows"):
    fusion = GemmFusion(M, N, K, dtype="fp16")
    c = fusion.c
    c.split(0, BM).split(2, BN).split(4, BK).reorder([0, 2, 4, 1, 3, 5])
    x, y = (1, 0) if WALK == "rows" else (0, 1)  # the pair of a cluster: along a row or column
    c.parallelize(x, P.BIDx).parallelize(y, P.BIDy)
    c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    fusion.set_cluster(2)
    fusion.propagate()
    return fusion
'''


def test_a_form_is_not_carried_to_another_value_of_a_kept_parameter(tmp_path: Path) -> None:
    """A string parameter is built as a value, not a symbol: a form proved at WALK="rows" (A
    shared by the pair, B never) says nothing at WALK="cols", where the pair shares B. The
    oracle carried it there (both operands wrong, A unsoundly) before it compared them."""
    path = tmp_path / "walk.py"
    path.write_text(WALK)
    base = dict(WALK="rows")
    assert any(op.scope is Scope.PROVED for op in derive_at(path, base, "leader").operands.values())
    report = oracle(path, dict(WALK="cols"), mode="both", base=base)
    assert report.ok and report.proved == (), [str(m) for m in report.mismatches[:2]]
    # the same structure at other sizes still carries them (and they hold)
    report = oracle(path, dict(WALK="rows", M=48, N=64), mode="both", base=base)
    assert report.ok and {v.form for v in report.proved} == {"proved"}
