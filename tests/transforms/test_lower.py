"""Lowering: the schedule's choices reach the plan."""

from __future__ import annotations

import pytest
import sympy

from tests.plans import plan, schedule
from tilec.ir import GemmFusion
from tilec.ir.types import Epilogue, LoadKind
from tilec.transforms.pipeline import lower
from tilec.transforms.plan import SIZE_K, SIZE_M, SIZE_N


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


def test_epilogue_choice_reaches_the_plan() -> None:
    from tilec.errors import UnsupportedError

    f = schedule(256, 256, 128, 128, 128, 64)
    assert lower(f, target="cuda").epilogue is Epilogue.OVERLAP  # 'auto': lowering's choice
    assert lower(f, target="triton").epilogue is None  # Triton stores C its own way
    f.set_kernel(epilogue=" Overlap ")
    assert f.kernel_options.epilogue is Epilogue.OVERLAP
    assert str(f.schedule).endswith("fusion.set_kernel(epilogue='overlap')")
    assert GemmFusion.replay(f.schedule).kernel_options == f.kernel_options
    p = lower(f, target="cuda")
    assert p.epilogue == "overlap"
    assert "epilogue overlap" in legalize_summary(f)
    with pytest.raises(UnsupportedError, match="set_kernel\\(epilogue='overlap'\\)"):
        lower(f, target="triton")
    assert lower(f.set_kernel(epilogue="tma"), target="cuda").epilogue is Epilogue.TMA
    assert lower(f.set_kernel(epilogue="auto"), target="cuda").epilogue is Epilogue.OVERLAP


@pytest.mark.parametrize("BN", [64, 96, 128, 192, 256])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_lowerings_epilogue_is_overlap_exactly_where_the_cuda_printer_prints_it(
        BN: int, stages: int) -> None:
    # oracle: the CUDA printer's shared-memory layout, asked to print overlapped TMA stores
    from dataclasses import replace

    from tilec.codegen.cuda.printer import CudaPrinter
    from tilec.errors import UnsupportedError

    f = schedule(1024, 1024, 256, 128, BN, 64, b_transposed=True, stages=stages)
    p = lower(f, target="cuda")
    try:
        CudaPrinter(replace(p, epilogue=Epilogue.DIRECT))
    except UnsupportedError:
        pytest.skip("the CUDA printer refuses this tile")
    try:
        printable = CudaPrinter(p, epilogue="overlap").shape.tma_store
    except UnsupportedError as e:
        assert "16-bit C, BN a multiple of 64" in str(e)
        printable = False
    assert p.epilogue is (Epilogue.OVERLAP if printable else Epilogue.DIRECT)
    assert CudaPrinter(p).epilogue == p.epilogue.value


def test_a_plan_without_an_epilogue_is_not_printed_for_cuda() -> None:
    # lowering resolves the epilogue; a plan reaching the CUDA printer without one (lowered for
    # Triton, or edited) is an internal error, not a choice the printer makes
    from dataclasses import replace

    from tilec.codegen.cuda.printer import CudaPrinter, emit

    p = lower(schedule(1024, 1024, 256, 128, 128, 64, b_transposed=True), target="cuda")
    with pytest.raises(AssertionError, match="carries no epilogue"):
        CudaPrinter(replace(p, epilogue=None))
    with pytest.raises(AssertionError, match="carries no epilogue"):
        emit(replace(p, epilogue=None), epilogue="none")


def test_cluster_sizes_that_disagree_are_refused_at_lower_time() -> None:
    # a derivation handed to lowering for another cluster than the launch's: refused while
    # lowering, the message naming both sizes (the printer no longer checks)
    from tests.codegen.cuda_plans import SEED
    from tilec.errors import TilecError
    from tilec.runtime.loader import load_schedule
    from tilec.transforms.multicast.derive import derive

    params = dict(M=2048, N=2048, K=256, CM=2, CN=1, SMS=16)
    s = load_schedule(SEED, {**params, "CLUSTER": 2})
    other = load_schedule(SEED, {**params, "CM": 2, "CN": 2, "CLUSTER": 4})
    d4 = derive(other.fusion, "leader", params=other.params, cluster_k_ranges=True)
    assert d4.cluster_size == 4
    with pytest.raises(TilecError, match="clusters of 4 CTAs but the launch's cluster has 2"):
        lower(s.fusion, target="cuda", params=s.params, derivation=lambda launch: d4)
    d2 = derive(s.fusion, "leader", params=s.params, cluster_k_ranges=True)
    assert lower(s.fusion, target="cuda", params=s.params,
                 derivation=lambda launch: d2).cluster == (2, 1, 1)


def legalize_summary(f) -> str:  # type: ignore[no-untyped-def]
    from tilec.transforms.pipeline import LowerOptions, lower_steps

    return dict(lower_steps(f, LowerOptions(target="cuda")))["legalize"].summary()


def test_multicast_plan_carries_its_facts_as_objects_and_the_guard_they_make() -> None:
    from tilec.runtime.loader import load_schedule
    from tilec.proofs.context import Fact
    from tilec.runtime.build import kernel_plan

    s = load_schedule("examples/seed004_persistent_cluster.py", {"CN": 2, "CLUSTER": 4})
    plan = kernel_plan(s, target="cuda")
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in s.params.items()
              if isinstance(v, int) and not isinstance(v, bool)}
    sizes = {SIZE_M: s.params["M"], SIZE_N: s.params["N"], SIZE_K: s.params["K"]}
    for mc in (plan.a.multicast, plan.b.multicast):
        assert mc is not None and mc.closed_form and mc.facts
        assert all(isinstance(f, Fact) for f in mc.facts)
        # the guard is the facts' conjunction over the run-time sizes (every other parameter
        # decided): it holds at the launch lowered for, as every fact does, and fails at a size
        # that breaks one (M not a multiple of BM)
        assert mc.guard.free_symbols and mc.guard.free_symbols <= {SIZE_M, SIZE_N, SIZE_K}
        assert mc.guard.xreplace(sizes) is sympy.true
        assert mc.guard.xreplace({**sizes, SIZE_M: s.params["M"] - 1}) is sympy.false
        assert all(bool(f.condition().xreplace(values).doit()) for f in mc.facts)


def test_the_pipeline_fills_one_part_per_pass() -> None:
    from tilec.transforms.pipeline import PIPELINE, LowerOptions, lower_steps

    f = schedule(100, 70, 50, 16, 16, 16, decomposition="streamk", sms=5, order="grouped",
                 group_m=2)
    steps = list(lower_steps(f, LowerOptions(target="triton")))
    assert [n for n, _ in steps] == ["input", *(p.__name__ for p in PIPELINE)]
    states = dict(steps)
    filled = {"tile_axes": "tile", "tile_order": "order", "decomposition": "work", "loads": "a"}
    for (_, before), (name, after) in zip(steps, steps[1:], strict=False):
        if name in filled:  # the pass fills its part, on a new value
            assert getattr(before, filled[name]) is None and getattr(after, filled[name])
            assert after is not before
    assert states["multicast"] is states["decomposition"]  # Triton: the pass does not apply
    # what the passes ask of the IR is asked once, when the first state is made
    assert all(st.ir is states["input"].ir for st in states.values())
    assert states["legalize"].plan() == lower(f, target="triton")
    lines = states["legalize"].summary().splitlines()
    assert lines[1] == "tile: 16x16x16" and lines[-1].startswith("launch: cluster (1, 1, 1)")


@pytest.mark.parametrize(("sms", "grid"), [(None, 7 * 5 * 3), (4, 4), (200, 7 * 5 * 3)])
def test_split_k_grid_follows_the_schedule(sms: int | None, grid: int) -> None:
    # one CTA per unit, or a persistent grid walking the units (never more CTAs than units)
    p = plan(100, 70, 50, 16, 16, 16, decomposition="splitk", splits=3, sms=sms)
    assert (p.work.grid, p.work.num_tiles * p.work.splits) == (grid, 7 * 5 * 3)


def test_auto_decomposition_says_why() -> None:
    # 5 deep tiles on 4 CTAs: data-parallel takes two waves, the cost model picks Stream-K
    p = plan(80, 16, 16 * 256, 16, 16, 16, decomposition="auto", sms=4)
    assert p.work.kind.value != "dp" and any(n.startswith("chosen: ") for n in p.notes)


def test_plans_pickle_without_their_compiled_evaluators() -> None:
    # TileOrder keeps its compiled evaluator on the value; a plan still pickles (Ray, caches)
    import copy
    import pickle

    p = plan(100, 70, 50, 16, 16, 16, decomposition="streamk", sms=5, order="grouped", group_m=2)
    alive = dict(p.order.alive_tiles())  # compiles and caches
    q = pickle.loads(pickle.dumps(p))
    assert q == p and dict(q.order.alive_tiles()) == alive and copy.deepcopy(p) == p


def test_lowering_asks_the_ir_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # every tilec module's index_map / infer_launch counted: C's index map is built once per
    # lowering, the launch inferred at the fusion's sizes and over the symbols; the multicast
    # derivation of a CUDA lowering takes the lowering's (IRFacts.launch), derived by the pass
    # or by the session through build's kernel_plan (as tilec gen does)
    import sys
    from collections import Counter

    import tilec.ir.indexing
    import tilec.ir.launch
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule
    from tilec.runtime.session import Session

    calls: Counter[str] = Counter()
    real_map, real_launch = tilec.ir.indexing.index_map, tilec.ir.launch.infer_launch

    def counted_map(view, *a, **k):  # type: ignore[no-untyped-def]
        calls[f"index_map {view.name}"] += 1
        return real_map(view, *a, **k)

    def counted_launch(*a, **k):  # type: ignore[no-untyped-def]
        calls["infer_launch"] += 1
        return real_launch(*a, **k)

    for mod in [m for n, m in sys.modules.items() if n.startswith("tilec") and m is not None]:
        if getattr(mod, "index_map", None) is real_map:
            monkeypatch.setattr(mod, "index_map", counted_map)
        if getattr(mod, "infer_launch", None) is real_launch:
            monkeypatch.setattr(mod, "infer_launch", counted_launch)
    s = load_schedule("examples/seed004_persistent_cluster.py", {"M": 512, "N": 512, "SMS": 8})
    calls.clear()
    lower(s.fusion, target="triton", params=s.params)
    assert calls == {"index_map C": 1, "infer_launch": 2}
    calls.clear()
    p = lower(s.fusion, target="cuda", params=s.params)
    assert p.b.multicast is not None and calls["infer_launch"] == 2
    calls.clear()
    p = kernel_plan(s, target="cuda", session=Session())
    assert p.b.multicast is not None and calls["infer_launch"] == 2


CLUSTERED = [  # seed004 lowered for CUDA: no cluster, clusters of 2 and 4, leader and sliced,
    # closed and general forms, a partly dead cluster, split-K and Stream-K over clusters
    ("leader", True, dict(M=2048, N=2048, K=256, CM=2, CN=2, SMS=16)),
    ("sliced", True, dict(M=2048, N=2048, K=256, CM=2, CN=2, SMS=16)),
    ("sliced", False, dict(M=1300, N=1100, K=512, CM=2, CN=2, SMS=8)),
    ("leader", True, dict(M=1300, N=1024, K=256, CM=2, CN=1, SMS=8)),
    ("leader", True, dict(M=1000, N=1500, K=776, CM=1, CN=1, SMS=6, DECOMP="splitk", SPLITS=3)),
    ("leader", True, dict(M=1024, N=2048, K=512, CM=1, CN=2, SMS=8, DECOMP="streamk")),
]


@pytest.mark.parametrize("mode,closed,params", CLUSTERED, ids=[str(i) for i in range(6)])
def test_cuda_plans_carry_the_release_and_epilogue_the_printer_prints(
        mode: str, closed: bool, params: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lowering decides the stage release and the epilogue of a CUDA plan: the printer prints
    them and never decides them itself (its fallbacks, for plans without them, are not taken)."""
    from dataclasses import replace

    from tests.codegen.cuda_plans import mc_values, seed, sizes
    from tilec.codegen.cuda.printer import CudaPrinter
    from tilec.transforms.pipeline import release

    p = seed(mode, closed, **dict(params))
    assert p.epilogue is not None and p.release is not None
    cl = p.cluster[0]
    # oracle: R'(X) from the plan's sympy forms at the reference launch's round 0, cluster 0
    want = []
    for x in range(cl):
        m = 1 << x
        for op in (p.a, p.b):
            if op.multicast is not None:
                v = mc_values(op.multicast, x, 0, 0, sizes=sizes(p))
                m |= v["mask"] if v["issue"] else 0
        want.append(m)
    if p.release.exact:
        assert list(p.release.receivers) == want
        assert all((p.release.senders[y] >> x & 1) == (want[x] >> y & 1)
                   for x in range(cl) for y in range(cl))

    def refuse(*_: object) -> None:
        raise AssertionError("the printer decided the stage release itself")

    monkeypatch.setattr(release, "release_protocol", refuse)
    printer = CudaPrinter(p)
    assert printer.epilogue == p.epilogue.value  # lowering's, printed as it is
    assert printer.shape.receivers == (p.release.receivers or None)
    with pytest.raises(AssertionError, match="decided the stage release"):
        CudaPrinter(replace(p, release=None))  # a plan without it takes the fallback


def test_clustered_plans_meet_both_releases() -> None:
    from tests.codegen.cuda_plans import seed

    got = {(p.cluster[0] > 1, p.release.exact)
           for p in (seed(m, c, **dict(kw)) for m, c, kw in CLUSTERED)}
    assert {(True, True), (True, False)} <= got


def test_triton_plans_decide_no_release() -> None:
    p = plan(256, 256, 128, 128, 128, 64, target="triton", b_transposed=True)
    assert p.release is None and p.epilogue is None
