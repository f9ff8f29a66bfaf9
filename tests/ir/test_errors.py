"""The error catalogue around tests/must_fail (one program per mistake, run there):

* the hierarchy, and that docs/errors.md and tests/must_fail cover every class;
* the boundaries: the last accepted value next to the first refused one, so a check that refused
  everything would fail here (the must-fail programs only show the refusals);
* more refused values per class than one program shows;
* how the loader routes exceptions: the schedule file's own (a user error, with its line) versus
  tilec's (a bug, kept as it is);
* the InternalError example of the catalogue.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sympy

from tilec import errors
from tilec.runtime.loader import load_schedule
from tilec.errors import (
    AxisError,
    AxisNameError,
    FusionError,
    InternalError,
    LaunchError,
    MergeError,
    ParallelizeError,
    ParamError,
    PolicyError,
    ReorderError,
    ScheduleError,
    ScheduleFileError,
    SplitFactorError,
    SwizzleError,
    TilecError,
    UnsupportedError,
)
from tilec.ir import GemmFusion, infer_launch
from tilec.ir import ParallelType as P
from tilec.ir.types import (
    BLayout,
    Decomposition,
    DecompositionChoice,
    DType,
    Fixup,
    KernelOptions,
    LoadKind,
    MulticastMode,
)

from .helpers import ROOT, SEED

MUST_FAIL = ROOT / "tests" / "must_fail"


def esc(text: str) -> str:
    return re.escape(text)


@pytest.fixture
def f() -> GemmFusion:
    return GemmFusion(M=256, N=128, K=64)


# -- the hierarchy and the catalogue ------------------------------------------------------------


def test_hierarchy() -> None:
    for cls in (AxisError, AxisNameError, SplitFactorError, MergeError, ReorderError,
                SwizzleError, ParallelizeError):
        assert issubclass(cls, ScheduleError)
    for cls in (ScheduleError, LaunchError, FusionError, PolicyError, ParamError,
                ScheduleFileError, UnsupportedError):
        assert issubclass(cls, TilecError)
    assert issubclass(PolicyError, ValueError)  # what Enum(value) raised before
    assert not issubclass(InternalError, TilecError)  # a bug, not a user mistake


def _classes() -> list[str]:
    return [n for n, c in vars(errors).items() if isinstance(c, type) and issubclass(c, Exception)]


def test_every_error_class_is_in_the_catalogue() -> None:
    doc = (ROOT / "docs" / "errors.md").read_text()
    assert len(_classes()) == 17
    for name in _classes():
        assert f"## {name}" in doc, name
        assert re.search(rf"[│├└─ ]+{name}\b", doc), f"{name} is not in the tree"


def test_every_user_error_class_has_a_program_that_must_fail() -> None:
    text = "\n".join(p.read_text() for p in MUST_FAIL.glob("*.py"))
    for name in _classes():
        if name != "InternalError":
            assert f"EXPECT = {name}," in text, f"no tests/must_fail program raises {name}"


# -- boundaries: accepted next to refused ---------------------------------------------------------


def test_cluster_limits(f: GemmFusion) -> None:
    f.set_cluster(8)  # the portable limit itself is fine
    with pytest.raises(LaunchError, match="portable limit is 8"):
        f.set_cluster(3, 3)
    g = GemmFusion(M=8192, N=256, K=64, non_portable_cluster=True).set_cluster(16)
    assert g.cluster_dims == (16, 1, 1)
    with pytest.raises(LaunchError, match="at most 16"):
        g.set_cluster(17)
    assert g.cluster_dims == (16, 1, 1)  # refused: unchanged


def test_rank_cluster_limits() -> None:
    def ranked(cluster: int, **kw: object) -> GemmFusion:
        g = GemmFusion(M=8192, N=256, K=64, **kw)  # type: ignore[arg-type]
        g.c.split(0, 128).split(0, cluster).parallelize(0, P.CIDx).parallelize(1, P.RankX)
        return g

    assert infer_launch(ranked(8)).cluster == (8, 1, 1)
    assert infer_launch(ranked(16, non_portable_cluster=True)).cluster == (16, 1, 1)
    with pytest.raises(LaunchError, match="portable limit is 8"):
        infer_launch(ranked(16))


def test_decompose_limits(f: GemmFusion) -> None:
    assert f.decompose("skpp", sk_waves=0).decomposition.sk_waves == 0
    assert f.decompose("skpp", sk_waves=7).decomposition.sk_waves == 7
    with pytest.raises(FusionError, match=esc("sk_waves must be an integer in 0..7 but got -1")):
        f.decompose("skpp", sk_waves=-1)
    assert f.decompose(" AUTO ").decomposition.kind is None  # auto: the cost model chooses
    f.decompose(Decomposition.SPLIT_K, splits=4, fixup="Deterministic", sms=3)
    assert f.decomposition == DecompositionChoice(Decomposition.SPLIT_K, splits=4, sk_waves=1,
                                                  fixup=Fixup.DETERMINISTIC, sms=3)
    # the trace records the canonical values, and replays to the same decomposition
    assert str(f.schedule).endswith(
        "fusion.decompose('splitk', splits=4, fixup='deterministic', sms=3)")
    assert GemmFusion.replay(f.schedule).decomposition == f.decomposition


def test_set_kernel_limits_and_replay(f: GemmFusion) -> None:
    assert f.kernel_options == KernelOptions()  # nothing chosen: lowering's defaults
    with pytest.raises(FusionError, match=esc("stages must be an integer in 1..16, 'auto' or None but got 0")):
        f.set_kernel(stages=0)
    with pytest.raises(FusionError, match=esc("warps must be a power of two or a multiple of 4 in 1..32, 'auto' or None but got True")):
        f.set_kernel(warps=True)
    with pytest.raises(PolicyError, match=esc("load kind must be one of auto, pointer, tma but got 'ldg'")):
        f.set_kernel(load="ldg")
    assert f.set_kernel(load=" AUTO ").kernel_options.load is None
    f.set_kernel(stages=4, warps=8, load="TMA")
    assert f.kernel_options == KernelOptions(stages=4, warps=8, load=LoadKind.TMA)
    assert str(f.schedule).endswith("fusion.set_kernel(stages=4, warps=8, load='tma')")
    assert GemmFusion.replay(f.schedule).kernel_options == f.kernel_options
    with pytest.raises(FusionError, match=esc("set_kernel: epilogue must be one of tma, tma_tile, "
                                              "direct, overlap, 'auto' or None but got 'smem'")):
        f.set_kernel(epilogue="smem")


def test_policy_values_parse_in_any_case_and_by_alias() -> None:
    assert DType("float16") is DType.FP16 and DType.parse("BF16") is DType.BF16
    assert MulticastMode(MulticastMode.SLICED) is MulticastMode.SLICED
    assert MulticastMode.parse(" Leader ") is MulticastMode.LEADER
    g = GemmFusion(M=64, N=64, K=64, dtype="half", b_layout="NK")
    assert g.dtype is DType.FP16 and g.b_layout is BLayout.NK
    assert g.b_layout == "nk" and f"{g.b_layout}" == "nk"  # a str to the code that compares
    assert "dtype='fp16', b_layout='nk'" in str(g.schedule)
    with pytest.raises(PolicyError, match=esc("multicast mode must be one of leader, sliced but got 3")):
        MulticastMode(3)


def test_broadcast_default_names_skip_taken_ones(f: GemmFusion) -> None:
    f.c.broadcast(0).broadcast(0).broadcast(-1, 4, name="g")
    assert [a.name for a in f.c.logical] == ["M", "N", "K", "b", "b2", "g"]
    with pytest.raises(AxisNameError, match=esc("name 'b2' is the name of logical axis bS.b2{1}")):
        f.c.broadcast(0, name="b2")
    assert GemmFusion.replay(f.schedule).c.structure() == f.c.structure()


def test_swizzles_that_stay_legal(f: GemmFusion) -> None:
    f.c.split(0, 64).split(2, 64).split(4, 16)  # [Mo, Mi, No, Ni, rKo, rKi]
    f.c.swizzle(0, 2, 2)  # tile rows with tile columns
    f.c.swizzle(4, 5, 2)  # a reduction with a reduction
    with pytest.raises(SwizzleError, match=esc("cannot swizzle reduction axis rS.Kig{16}")):
        f.c.swizzle(1, 5, 2)


def test_grid_roads_do_not_mix(f: GemmFusion) -> None:
    f.c.split(0, 64).split(0, 2)  # [Moo{2}, Moi{2}, Mi, N, rK]
    f.c.parallelize(0, P.CIDx).parallelize(1, P.RankX).parallelize(3, P.BIDy)  # other dims: fine
    with pytest.raises(ParallelizeError, match=r"to BIDx: axis 0 .* is bound to CIDx"):
        f.c.parallelize(3, P.BIDx)
    f.c.parallelize(0, P.SERIAL).parallelize(1, P.SERIAL)
    f.c.parallelize(3, P.BIDx)  # once the cluster road is gone, the block road is free


# -- more refused values per class ----------------------------------------------------------------


@pytest.mark.parametrize("factor,shown", [(0, "0"), (-4, "-4"), (2.5, "2.5"), (True, "True"),
                                          ("B M", "'B M'"), (sympy.Integer(-2), "-2"),
                                          (None, "None"), (sympy.Symbol("u"), "u")])
def test_split_factor_not_a_positive_integer(f: GemmFusion, factor: object, shown: str) -> None:
    with pytest.raises(SplitFactorError,
                       match=rf"^C: split factor of axis 1 must be a positive integer.* but got {esc(shown)}$"):
        f.c.split(1, factor)  # type: ignore[arg-type]


@pytest.mark.parametrize("names", [("Mo",), ("Mo", "Mi", "Mx"), "MoMi", ["Mo"], 3, ("Mo", None)])
def test_split_names_of_the_wrong_shape(f: GemmFusion, names: object) -> None:
    with pytest.raises(AxisNameError, match=esc(f"must be two strings (outer, inner) but got {names!r}")):
        f.c.split(0, 64, names=names)  # type: ignore[arg-type]
    f.c.split(0, 64, names=["Mo", "Mi"])  # type: ignore[arg-type]  # a list of two is fine
    assert [a.name for a in f.c.loop[:2]] == ["Mo", "Mi"]


@pytest.mark.parametrize("mapping", [None, "012", 3, 1.0, {0: "1"}])
def test_reorder_mapping_of_the_wrong_type(f: GemmFusion, mapping: object) -> None:
    with pytest.raises((ReorderError, AxisError), match=r"^C: "):
        f.c.reorder(mapping)  # type: ignore[arg-type]
    assert str(f.c) == "C[iS.M{256}, iS.N{128}, rS.K{64}]"


# -- the loader: the file's exceptions versus tilec's --------------------------------------------


def _file(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "sched.py"
    p.write_text("from tilec.ir import GemmFusion\n\nPARAMS = dict(M=256, BM=64)\n\n\n" + body)
    return p


def test_a_verb_error_in_a_schedule_file_names_its_line(tmp_path: Path) -> None:
    p = _file(tmp_path, "def schedule(M, BM):\n    f = GemmFusion(M, 128, 64)\n"
                        "    f.c.split(0, BM, names=('Mo',))\n    return f\n")
    with pytest.raises(AxisNameError, match=esc(f"{p}:8: C: split: names of axis 0")) as e:
        load_schedule(p)
    assert isinstance(e.value.__cause__, AxisNameError)  # --debug shows the original too


def test_an_error_inside_tilec_is_not_blamed_on_the_file(tmp_path: Path) -> None:
    # ceil_div takes numbers; given a str it breaks inside tilec: a bug report, not a user error
    p = _file(tmp_path, "def schedule(M, BM):\n    from tilec.ir.iterdomain import ceil_div\n"
                        "    ceil_div(str(M), BM)\n")
    with pytest.raises(AttributeError):
        load_schedule(p)


def test_symbolic_and_typed_params(tmp_path: Path) -> None:
    # an int parameter given its own name stays symbolic (what tests of symbolic schedules use)
    m = load_schedule(SEED, {"M": "M"}).fusion.M
    assert m == sympy.Symbol("M", integer=True, positive=True)
    with pytest.raises(ParamError, match=esc("parameter M must be an integer (its default is 8192), "
                                             "or 'M' to keep it symbolic, but got 'N'")):
        load_schedule(SEED, {"M": "N"})
    # a str parameter takes the text even where --param read a number
    assert load_schedule(SEED, {"DTYPE": "fp16"}).fusion.dtype is DType.FP16
    with pytest.raises(PolicyError, match=esc("dtype must be one of fp16, bf16, fp32 but got '16'")):
        load_schedule(SEED, {"DTYPE": 16})


def test_a_schedule_taking_any_params(tmp_path: Path) -> None:
    p = tmp_path / "kw.py"
    p.write_text("from tilec.ir import GemmFusion\n\nPARAMS = dict(M=256, N=128)\n\n\n"
                 "def schedule(**params):\n    return GemmFusion(params['M'], params['N'], 64)\n")
    f = load_schedule(p, {"N": 64}).fusion
    assert (f.M, f.N) == (256, 64)
    with pytest.raises(ParamError, match="unknown parameter 'K'"):
        load_schedule(p, {"K": 3})


# -- InternalError (backends) ---------------------------------------------------------------------


def test_internal_error_example() -> None:
    from tilec.codegen.triton.expr import print_expr

    t = sympy.Symbol("t", integer=True, nonnegative=True)
    with pytest.raises(InternalError, match=esc("triton: t/2 is not an integer (a division not proven exact)")):
        print_expr(t / 2, {t: "pid"})
