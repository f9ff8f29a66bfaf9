"""Every error of the catalogue (docs/errors.md) with the message it gives.

Each ``match`` names the view, the axis and the offending value, so a message that loses one of
them fails here. Situations are built with real schedules where one exists."""

from __future__ import annotations

import re

import pytest
import sympy

from tilec import errors
from tilec.errors import (
    AxisError,
    FusionError,
    InternalError,
    LaunchError,
    MergeError,
    ParallelizeError,
    ParamError,
    ReorderError,
    ScheduleError,
    SplitFactorError,
    TilecError,
    UnsupportedError,
)
from tilec.ir import GemmFusion, IterDomain, TensorView, infer_launch
from tilec.ir import ParallelType as P
from tilec.loader import load_schedule, parse_params

from .helpers import SEED


def esc(text: str) -> str:
    return re.escape(text)


@pytest.fixture
def f() -> GemmFusion:
    return GemmFusion(M=256, N=128, K=64)


def view(name: str, *extents: int) -> TensorView:
    return TensorView(name, [IterDomain(n, sympy.Integer(e)) for n, e in zip("abcd", extents, strict=False)])


# -- the hierarchy ---------------------------------------------------------------------------


def test_hierarchy() -> None:
    for cls in (AxisError, SplitFactorError, MergeError, ReorderError, ParallelizeError):
        assert issubclass(cls, ScheduleError)
    for cls in (ScheduleError, LaunchError, FusionError, ParamError, UnsupportedError):
        assert issubclass(cls, TilecError)
    assert not issubclass(InternalError, TilecError)  # a bug, not a user mistake


def test_every_error_class_is_in_the_catalogue() -> None:
    doc = (SEED.parents[1] / "docs" / "errors.md").read_text()
    classes = [n for n, c in vars(errors).items() if isinstance(c, type) and issubclass(c, Exception)]
    assert len(classes) == 12
    for name in classes:
        assert f"## {name}" in doc, name


# -- ScheduleError ---------------------------------------------------------------------------


def test_axis_out_of_range(f: GemmFusion) -> None:
    with pytest.raises(AxisError, match=r"^C: axis 3 is out of range .* 3 axes \(valid: -3\.\.2\)"):
        f.c.split(3, 32)
    with pytest.raises(AxisError, match=r"^C: axis -4 is out of range"):
        f.c.parallelize(-4, P.BIDx)
    with pytest.raises(AxisError, match=r"^C: inner axis 3 is out of range"):
        f.c.merge(2)  # the axis after the last one
    with pytest.raises(AxisError, match=r"^C: reorder target 5 is out of range"):
        f.c.reorder({0: 5})
    with pytest.raises(AxisError, match=esc("C: axis must be an int but got '0'")):
        f.c.split("0", 32)  # type: ignore[arg-type]


def test_broadcast_position_out_of_range(f: GemmFusion) -> None:
    with pytest.raises(AxisError, match=esc("C: broadcast position 5 is out of range (valid: -4..3)")):
        f.c.broadcast(5)


def test_swizzle_needs_two_axes(f: GemmFusion) -> None:
    with pytest.raises(AxisError, match=esc("C: swizzle needs two different axes but got 1 twice")):
        f.c.swizzle(1, -2, 4)


@pytest.mark.parametrize("factor,shown", [(0, "0"), (-4, "-4"), (2.5, "2.5"), (True, "True"),
                                          ("B M", "'B M'"), (sympy.Integer(-2), "-2")])
def test_split_factor_not_a_positive_integer(f: GemmFusion, factor: object, shown: str) -> None:
    with pytest.raises(SplitFactorError,
                       match=rf"^C: split factor of axis 1 must be a positive integer.* but got {esc(shown)}$"):
        f.c.split(1, factor)  # type: ignore[arg-type]


def test_swizzle_group_not_a_positive_integer(f: GemmFusion) -> None:
    f.c.split(0, 64).split(2, 64)
    with pytest.raises(SplitFactorError, match=esc("C: swizzle group of axis 0 must be a positive integer but got 0")):
        f.c.swizzle(0, 2, 0)


def test_merge_reduction_with_iteration(f: GemmFusion) -> None:
    with pytest.raises(MergeError, match=esc(
            "C: cannot merge reduction axis rS.K{64} (position 2) with iteration axis iS.N{128} (position 1)")):
        f.c.merge(1)
    with pytest.raises(MergeError, match=esc("reduction axis rS.K{64} (position 2) with iteration axis iS.M{256} (position 0)")):
        f.c.merge(2, 0)


def test_merge_axis_with_itself(f: GemmFusion) -> None:
    with pytest.raises(MergeError, match=esc("C: cannot merge axis 1 with itself")):
        f.c.merge(1, -2)


def test_reorder_list_not_a_permutation(f: GemmFusion) -> None:
    with pytest.raises(ReorderError, match=esc(
            "C: reorder [0, 0, 1] is not a permutation of the 3 loop axes 0..2: axes [2] are missing, axes [0] appear twice")):
        f.c.reorder([0, 0, 1])
    with pytest.raises(ReorderError, match=esc("C: reorder [1, 0] is not a permutation of the 3 loop axes 0..2: axes [2] are missing")):
        f.c.reorder([1, 0])


def test_reorder_dict_not_a_permutation(f: GemmFusion) -> None:
    with pytest.raises(ReorderError, match=esc(
            "C: reorder {0: 2, 1: -1} is not a permutation: axes 0 and 1 both move to position 2")):
        f.c.reorder({0: 2, 1: -1})
    t = view("T", 2, 2, 2, 2)
    with pytest.raises(ReorderError, match=esc("T: reorder {0: 1, 2: 2, 1: 1, 3: 2} is not a permutation: axes 0 and 1 both move to position 1")):
        t.reorder({0: 1, 2: 2, 1: 1, 3: 2})


def test_broadcast_bound_to_a_launching_type(f: GemmFusion) -> None:
    f.c.split(0, 128).split(2, 64)
    f.propagate()
    assert f.a_smem is not None
    with pytest.raises(ParallelizeError, match=esc(
            "A_smem: broadcast axis bS.Ni{64} (position 3) cannot be bound to TIDx")):
        f.a_smem.parallelize(3, P.TIDx)
    t = view("T", 4).broadcast(0, 8)
    with pytest.raises(ParallelizeError, match=esc("T: broadcast axis bS.b{8} (position 0) cannot be bound to BIDy")):
        t.parallelize(0, P.BIDy)
    t.parallelize(0, P.Bulk)  # a type that launches nothing is fine


def test_hardware_index_bound_twice_in_a_view(f: GemmFusion) -> None:
    f.c.split(0, 128).parallelize(0, P.BIDx)
    with pytest.raises(ParallelizeError, match=esc(
            "C: BIDx is already bound to axis 0 (iBIDx.Mo{2}); cannot bind it to axis 2 (iS.N{128}) as well")):
        f.c.parallelize(2, P.BIDx)


def test_parallel_type_not_an_enum(f: GemmFusion) -> None:
    with pytest.raises(ParallelizeError, match=esc("C: axis 0 must be bound to a ParallelType but got 'BIDx'")):
        f.c.parallelize(0, "BIDx")  # type: ignore[arg-type]


# -- LaunchError (infer_launch) --------------------------------------------------------------


def test_launch_bound_twice() -> None:
    """Axes bound before they enter a view bypass parallelize's check; infer_launch catches it."""
    a = IterDomain("a", sympy.Integer(4), ptype=P.BIDx)
    b = IterDomain("b", sympy.Integer(8), ptype=P.BIDx)
    with pytest.raises(LaunchError, match=esc(
            "T: BIDx is bound twice, to axis 0 (iBIDx.a{4}) and axis 1 (iBIDx.b{8})")):
        infer_launch([TensorView("T", [a, b])])


def test_launch_different_extents_across_views() -> None:
    t1 = view("T1", 64, 32).split(0, 16).parallelize(0, P.BIDx)
    t2 = view("T2", 64, 32).split(0, 8).parallelize(0, P.BIDx)
    with pytest.raises(LaunchError, match=esc(
            "BIDx is bound to different extents: 4 at T1 axis 0 (iBIDx.ao{4}) but 8 at T2 axis 0 (iBIDx.ao{8})")):
        infer_launch([t1, t2])
    assert infer_launch([t1, view("T3", 64).split(0, 16).parallelize(0, P.BIDx)]).grid == (4, 1, 1)


def test_launch_cluster_does_not_divide_grid(f: GemmFusion) -> None:
    f.c.split(0, 64).parallelize(0, P.BIDx)
    f.set_cluster(3)
    with pytest.raises(LaunchError, match=esc(
            "cluster dim x = 3 does not divide grid dim x = 4 (C axis 0 (iBIDx.Mo{4}))")):
        infer_launch(f)


def test_launch_cluster_does_not_divide_unbound_grid(f: GemmFusion) -> None:
    f.c.split(0, 64).parallelize(0, P.BIDx)
    f.set_cluster(1, 2)
    with pytest.raises(LaunchError, match=esc("cluster dim y = 2 does not divide grid dim y = 1 (unbound, 1)")):
        infer_launch(f)


def _ranked(cluster: int, **kw: object) -> GemmFusion:
    f = GemmFusion(M=8192, N=256, K=64, **kw)  # type: ignore[arg-type]
    f.c.split(0, 128).split(0, cluster).parallelize(0, P.CIDx).parallelize(1, P.RankX)
    return f


def test_launch_cluster_over_portable_limit() -> None:
    with pytest.raises(LaunchError, match=esc(
            "cluster (16, 1, 1) (RankX at C axis 1 (iRankX.Moi{16})) has 16 CTAs; the portable limit is 8")):
        infer_launch(_ranked(16))
    assert infer_launch(_ranked(16, non_portable_cluster=True)).cluster == (16, 1, 1)
    assert infer_launch(_ranked(8)).cluster == (8, 1, 1)


def test_launch_cluster_over_mask_width() -> None:
    with pytest.raises(LaunchError, match=esc(
            "cluster (32, 1, 1) (RankX at C axis 1 (iRankX.Moi{32})) has 32 CTAs; a multicast mask addresses at most 16")):
        infer_launch(_ranked(32, non_portable_cluster=True))


def test_launch_set_cluster_over_portable_limit(f: GemmFusion) -> None:
    f.c.split(0, 16).split(2, 32).parallelize(0, P.BIDx).parallelize(2, P.BIDy)
    f.set_cluster(4, 4)
    with pytest.raises(LaunchError, match=esc("cluster (4, 4, 1) (set_cluster(4, 4, 1)) has 16 CTAs; the portable limit is 8")):
        infer_launch(f)


def test_launch_bid_with_cid(f: GemmFusion) -> None:
    f.c.split(0, 64).split(0, 2).parallelize(0, P.CIDx).parallelize(3, P.BIDx)
    with pytest.raises(LaunchError, match=esc(
            "BIDx (C axis 3 (iBIDx.N{128})) and CIDx (C axis 0 (iCIDx.Moo{2})) are both bound")):
        infer_launch(f)


def test_launch_rank_needs_constant_extent() -> None:
    f = GemmFusion(M=8192, N=256, K=64)
    f.c.split(0, 128).split(0, "CLUSTER").parallelize(1, P.RankX)
    with pytest.raises(LaunchError, match=esc("RankX (C axis 1 (iRankX.Moi{CLUSTER})) must have a constant extent but got CLUSTER")):
        infer_launch(f)


def test_launch_set_cluster_conflicts_with_rank() -> None:
    f = _ranked(2)
    f.set_cluster(4)
    with pytest.raises(LaunchError, match=esc(
            "cluster dim x is set to 4 but RankX is bound to extent 2 (C axis 1 (iRankX.Moi{2}))")):
        infer_launch(f)


def test_launch_set_cluster_with_cluster_index_only(f: GemmFusion) -> None:
    f.c.split(0, 64).parallelize(0, P.CIDx)
    f.set_cluster(2)
    with pytest.raises(LaunchError, match=esc(
            "cluster dim x is set to 2 but RankX is not bound, so it is 1 (CIDx at C axis 0 (iCIDx.Mo{4}))")):
        infer_launch(f)


@pytest.mark.parametrize("dims,shown", [((0,), "x must be a positive integer but got 0"),
                                        ((2, 1.5), "y must be a positive integer but got 1.5")])
def test_set_cluster_bad_dims(f: GemmFusion, dims: tuple, shown: str) -> None:
    with pytest.raises(LaunchError, match=esc(f"cluster dim {shown}")):
        f.set_cluster(*dims)


# -- FusionError ------------------------------------------------------------------------------


@pytest.mark.parametrize("kw,msg", [
    (dict(M=0), "GEMM size M must be a positive integer but got 0"),
    (dict(N=2.0), "GEMM size N must be a positive integer or a name but got 2.0"),
    (dict(K="8k"), "GEMM size K must be a positive integer or a name but got '8k'"),
    (dict(dtype="int8"), "dtype must be one of fp16, bf16, fp32 but got 'int8'"),
    (dict(b_layout="mk"), "B layout must be 'kn' (K x N, row-major) or 'nk' (given as N x K) but got 'mk'"),
])
def test_fusion_errors(kw: dict[str, object], msg: str) -> None:
    args = dict(M=64, N=64, K=64) | kw
    with pytest.raises(FusionError, match=f"^{esc(msg)}$"):
        GemmFusion(**args)  # type: ignore[arg-type]


# -- ParamError and the loader's TilecError -----------------------------------------------------


def test_param_malformed() -> None:
    with pytest.raises(ParamError, match=esc("--param must look like NAME=VALUE but got 'CN'")):
        parse_params(["CN"])
    with pytest.raises(ParamError, match=esc("but got '2=CN'")):
        parse_params(["2=CN"])


def test_param_unknown() -> None:
    with pytest.raises(ParamError, match=esc("seed004_persistent_cluster.py: unknown parameter 'CX'; valid parameters are BK, BM")):
        load_schedule(SEED, {"CX": 2})


def test_param_missing(tmp_path) -> None:
    p = tmp_path / "sched.py"
    p.write_text("from tilec.ir import GemmFusion\n"
                 "def schedule(M, N):\n    return GemmFusion(M, N, 64)\n")
    with pytest.raises(ParamError, match=esc("sched.py: parameter(s) M, N have no value")):
        load_schedule(p, {})


def test_schedule_file_errors(tmp_path) -> None:
    missing = tmp_path / "nope.py"
    with pytest.raises(TilecError, match=esc(f"schedule file {str(missing)!r} does not exist")):
        load_schedule(missing)
    no_fn = tmp_path / "no_fn.py"
    no_fn.write_text("PARAMS = {}\n")
    with pytest.raises(TilecError, match=r"no_fn\.py: a schedule file must define schedule\(\*\*params\)"):
        load_schedule(no_fn)
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def schedule():\n    return 42\n")
    with pytest.raises(TilecError, match=r"wrong\.py: schedule\(\) must return a GemmFusion but returned int"):
        load_schedule(wrong)


# -- UnsupportedError / InternalError (backends) -------------------------------------------------


def test_backend_refuses_what_it_cannot_print() -> None:
    from tilec.codegen.triton_expr import print_expr

    t = sympy.Symbol("t", integer=True, nonnegative=True)
    sms = sympy.Symbol("SMS", integer=True, positive=True)
    with pytest.raises(UnsupportedError, match=esc("triton: expression depends on SMS, unknown inside the kernel (known: t)")):
        print_expr(t + sms, {t: "pid"})
    with pytest.raises(InternalError, match=esc("triton: non-integer coefficient in t/2")):
        print_expr(t / 2, {t: "pid"})
