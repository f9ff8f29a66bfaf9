"""The CUDA kernel takes M, N, K at run time (issue 26), without a GPU: the file holds no size
constant, the launcher's work split at a plan's own sizes is the plan's, the closed variant's
launch test (``facts_hold``) against a brute-force oracle, the guarded branch of the multicast
forms (the closed form where the plan's guard holds, else the general one), the launcher's
refusals (Python checks and the C launcher's codes, through ctypes on the host), and the GPU
benchmark script's CPU parts."""

from __future__ import annotations

import ctypes
import dataclasses
import json
import re
import subprocess
from pathlib import Path

import pytest
import sympy

from tests.codegen.cuda_plans import mc_values, seed, sizes
from tests.codegen.test_cuda_emit import (
    DECOMPS,
    MATRIX,
    _run_harness,
    needs_gxx,
    needs_nvcc,
    plan_of,
)
from tilec.codegen.cuda.launch import (
    check_rows,
    compile_cu,
    launch_error,
    launch_numbers,
    run_split,
)
from tilec.codegen.cuda.printer import CudaPrinter, emit
from tilec.codegen.cuda.printer.file import LAUNCH_ERRORS
from tilec.errors import KernelArgumentError, UnsupportedError
from tilec.ir import ceil_div
from tilec.proofs import compile_int
from tilec.transforms.plan import MulticastMode

L, S = MulticastMode.LEADER, MulticastMode.SLICED
SIZE_NAMES = ("M", "N", "K", "K_ITERS", "TILES_M", "TILES_N", "NUM_TILES", "GROUPS", "GRID",
              "WORKERS", "SK_TILES", "SK_CTAS", "SK_START", "DP_START", "DP_TILES")


def _constants(src: str) -> str:
    """The file's constant section: from the first namespace to the schedule functions."""
    return src[src.index("namespace "):src.index("// ---- tilec schedule functions: begin")]


@pytest.mark.parametrize("row", [MATRIX[0], MATRIX[5], MATRIX[10]])
def test_no_size_is_a_constant(row: tuple) -> None:
    plan = plan_of(row)
    src = emit(plan)
    consts = _constants(src)
    for name in SIZE_NAMES:
        assert not re.search(rf"constexpr \w+ {name} =", consts), name
    # sizes are Shape fields (the launcher's make_shape), the kernel takes the Shape
    assert "struct Shape {" in src and "const Shape sh) {" in src
    head = src[:src.index("#include")]
    for size in {plan.M, plan.N, plan.K}:
        assert str(size) not in head and str(size) not in CudaPrinter(plan).cname


def test_split_decompositions_print_no_size_constant() -> None:
    for params, mode, closed in DECOMPS[:4]:
        src = emit(seed(mode, closed, **params))
        consts = _constants(src)
        for name in SIZE_NAMES:
            assert not re.search(rf"constexpr \w+ {name} =", consts), (params, name)


@pytest.mark.parametrize("params,mode,closed", DECOMPS,
                         ids=[f"{d[0]['DECOMP']}-{i}" for i, d in enumerate(DECOMPS)])
def test_run_split_at_the_plans_sizes_is_the_plans(params: dict, mode: MulticastMode,
                                                   closed: bool) -> None:
    """The launcher's work split at the reference launch is lowering's (the same rules)."""
    plan = seed(mode, closed, **params)
    assert run_split(plan, plan.M, plan.N, plan.K) == plan.work


def test_run_split_of_the_matrix() -> None:
    for row in MATRIX:
        plan = plan_of(row)
        assert run_split(plan, plan.M, plan.N, plan.K) == plan.work, row


# ------------------------------------------------------------------ facts_hold, variants


def _facts_oracle(plan, M: int, N: int, K: int) -> bool:  # type: ignore[no-untyped-def]
    """Brute force of the closed variant's conditions (docs/cuda_backend.md, "Variants"): the
    plan's facts (whole tiles, the guards' size facts); per closed multicast form, at every alive
    CTA of every group walked: the guard, and the closed form equal to the general one where it
    issues (receivers among the alive); with the exact release printed, every group wholly
    alive or dead with the printed receivers."""
    if not plan.facts_hold(M, N, K):
        return False
    o, c = plan.order, plan.cluster[0]
    at = {"M": M, "N": N, "K": K}
    sub = lambda e: sympy.sympify(e).xreplace(  # noqa: E731
        {s: sympy.Integer(at[s.name]) for s in sympy.sympify(e).free_symbols if s.name in at})
    n = int(sub(o.num_tiles))
    tm, tn = ceil_div(M, plan.BM), ceil_div(N, plan.BN)
    coords = compile_int([sub(o.tile_m), sub(o.tile_n)], [o.index])
    oc = max((o.ctas or plan.work.grid) // c, 1)
    recv = CudaPrinter(plan).shape.receivers if c > 1 else None

    def alive(t: int) -> bool:
        if t >= n:
            return False
        m, nn = (int(v) for v in coords(t))
        return m < tm and nn < tn

    ops = [op.multicast for op in (plan.a, plan.b) if op.multicast is not None]
    for g in range(ceil_div(n, c)):
        live = sum(1 << r for r in range(c) if alive(g * c + r))
        if not live:
            continue
        if recv is not None and live != (1 << c) - 1:
            return False
        for r in range(c):
            if not live >> r & 1:
                continue
            got = 1 << r
            for mc in ops:
                if not mc.closed_form:
                    continue
                i_rt, cidx = g // oc, g % oc
                pt = {"rank": r, "i_rt": i_rt, "cidx": cidx}
                if mc.guard != sympy.true and not bool(sub(mc.guard).xreplace(
                        {s: sympy.Integer(pt[s.name]) for s in sub(mc.guard).free_symbols})):
                    return False
                cl, ge = mc_values(mc, r, i_rt, cidx, True, at), mc_values(mc, r, i_rt, cidx, False, at)
                if cl["issue"] != ge["issue"]:
                    return False
                keys = ["slice_index", "slice_count"] if mc.mode is S else []
                if cl["issue"] and ((cl["mask"] & live) != (ge["mask"] & live)
                                    or any(cl[k] != ge[k] for k in keys)):
                    return False
                got |= cl["mask"] if cl["issue"] else 0
            if recv is not None and got != recv[r]:
                return False
    return True


@needs_gxx
@pytest.mark.parametrize("row", MATRIX, ids=[str(i) for i in range(len(MATRIX))])
def test_facts_hold_equals_the_brute_force(row: tuple, tmp_path: Path) -> None:
    plan = plan_of(row)
    got = _run_harness(plan, tmp_path)
    assert got["V"] == _facts_oracle(plan, plan.M, plan.N, plan.K)


def test_facts_hold_meets_both_answers() -> None:
    """The matrix has launches that take the closed variant and launches that do not."""
    answers = {_facts_oracle(p, p.M, p.N, p.K) for p in map(plan_of, MATRIX)}
    assert answers == {True, False}


def _narrowed(plan, guard: sympy.Basic):  # type: ignore[no-untyped-def]
    """``plan`` with operand A's closed form replaced by a correct narrowing (every CTA loads its
    own box: issue everywhere, mask 1 << rank) under ``guard``: the closed form differs from the
    general one wherever the general one shares, so the printed branch is observable."""
    mc = plan.a.multicast
    rank = sympy.Symbol("rank", integer=True, nonnegative=True)
    closed = dataclasses.replace(mc, closed_form=True, issue=sympy.true, mask=2**rank,
                                 guard=guard)
    # (release=None: the printer decides the stage release of the edited forms, not lowering's)
    return dataclasses.replace(plan, a=dataclasses.replace(plan.a, multicast=closed),
                               release=None)


CIDX = sympy.Symbol("cidx", integer=True, nonnegative=True)
SIZE_N = sympy.Symbol("N", integer=True, positive=True)


@needs_gxx
@pytest.mark.parametrize("guard,forms", [(sympy.Eq(sympy.Mod(CIDX, 2), 0), {"closed", "general"}),
                                         (sympy.Eq(sympy.Mod(SIZE_N, 4096), 0), {"general"}),
                                         (sympy.Eq(sympy.Mod(SIZE_N, 1024), 0), {"closed"})],
                         ids=["cidx-even", "N%4096-false", "N%1024-true"])
def test_the_guarded_branch(guard: sympy.Basic, forms: set, tmp_path: Path) -> None:
    """The general variant runs the closed form where the guard holds and the general form
    elsewhere; the closed variant runs the closed form, and facts_hold refuses it here (the
    narrowed closed form differs from the general one)."""
    plan = _narrowed(plan_of(MATRIX[1]), guard)  # 1024 x 2048, 1x2 leader: A shared by pairs
    src = emit(plan)
    assert "mc_a_guard(rank, i_rt, cidx) ? mc_a_issue_closed(rank, i_rt, cidx) : " in src
    got = _run_harness(plan, tmp_path, source=src)
    mc = plan.a.multicast
    at_n = {SIZE_N: sympy.Integer(plan.N)}
    ran = {"closed": 0, "general": 0}
    for (i_rt, cidx, rank), vals in got["A"].items():
        g = bool(guard.xreplace(at_n).xreplace({CIDX: sympy.Integer(cidx)}))
        general = mc_values(dataclasses.replace(mc, closed_form=False), rank, i_rt, cidx, False,
                            sizes(plan))
        assert vals == ((1, 1 << rank) if g else (general["issue"], general["mask"])), (i_rt, cidx, rank)
        ran["closed" if g else "general"] += 1
        assert got["a"][(i_rt, cidx, rank)] == (1, 1 << rank)  # the closed variant
    assert {f for f, n in ran.items() if n} == forms
    assert got["V"] is False


# ------------------------------------------------------------------ one source, many shapes

REF = dict(M=1024, N=2048, K=512)  # the reference launch every configuration is lowered at
# (config, mode, closed): no cluster, clusters of 2 and 4, leader and sliced, closed and general
# forms, every kind of work split
GENERIC = [
    (dict(BM=128, BN=256, CM=1, CN=1, SMS=6), L, True),
    (dict(BM=128, BN=128, CM=1, CN=2, SMS=8), L, True),
    (dict(BM=128, BN=256, CM=2, CN=1, SMS=8), S, True),
    (dict(BM=128, BN=256, CM=2, CN=2, SMS=8), S, True),
    (dict(BM=128, BN=256, CM=2, CN=2, SMS=8), L, False),
    (dict(BM=128, BN=256, CM=1, CN=1, SMS=6, DECOMP="splitk", SPLITS=3), L, True),
    (dict(BM=128, BN=256, CM=2, CN=1, SMS=6, DECOMP="splitk", SPLITS=4, FIXUP="atomic"), L, True),
    (dict(BM=128, BN=256, CM=1, CN=2, SMS=8, DECOMP="streamk"), L, True),
    (dict(BM=128, BN=256, CM=1, CN=1, SMS=12, DECOMP="dp_1sk"), L, True),
    (dict(BM=128, BN=256, CM=2, CN=1, SMS=12, DECOMP="skpp", SK_WAVES=2), L, True),
    (dict(BM=128, BN=256, CM=1, CN=1, SMS=12, DECOMP="sk2_dp", FIXUP="atomic"), L, True),
]
# the reference, ragged M / N / K, K < BK (fewer k-iterations than split-K parts), one tile, a
# single row, shapes that meet the facts at other sizes, partial waves
SHAPES = [(1024, 2048, 512), (1000, 1100, 776), (777, 300, 40), (128, 256, 64), (1, 8, 8),
          (2048, 4096, 1024), (3000, 1536, 1000), (256, 8192, 128), (1300, 2304, 3000)]


def _ids(rows: list) -> list[str]:
    return [f"{r[0].get('DECOMP', 'dp')}-c{r[0]['CM']}x{r[0]['CN']}-{r[1].value}-"
            f"{'closed' if r[2] else 'general'}-{i}" for i, r in enumerate(rows)]


@needs_gxx
@pytest.mark.parametrize("config,mode,closed", GENERIC, ids=_ids(GENERIC))
def test_one_source_serves_every_shape(config: dict, mode: MulticastMode, closed: bool,
                                       tmp_path: Path) -> None:
    """One file, printed once, run on the host at shapes it was not lowered at (ragged ones,
    ones that do not meet its facts): its tile order, both variants' multicast forms, work
    units, fix-up slots and facts_hold equal the plan's sympy, the split's brute force and the
    facts oracle there; both answers of facts_hold are met where the configuration has facts."""
    from tests.codegen.test_cuda_emit import _run_harness_at, check_launch

    plan = seed(mode, closed, **config, **REF)
    src = emit(plan)
    got = _run_harness_at(plan, tmp_path, SHAPES, src)
    for (M, N, K), g in zip(SHAPES, got, strict=True):
        check_launch(plan, g, M, N, K)
    assert {g["V"] for g in got} == {True, False}


@pytest.mark.parametrize("config,mode,closed", GENERIC, ids=_ids(GENERIC))
def test_two_shapes_of_one_config_print_one_file(config: dict, mode: MulticastMode,
                                                 closed: bool) -> None:
    """Lowered at another shape that meets the same facts, the file is byte-identical, and
    none of the reference launch's sizes is in it outside the plan's constants."""
    a = seed(mode, closed, **config, **REF)
    b = seed(mode, closed, **config, M=4096, N=2048, K=1024)  # (tiles % SMS as at REF)
    src = emit(a)
    assert src == emit(b)
    no_cluster = config["CM"] * config["CN"] == 1
    if no_cluster:  # no multicast facts: any shape, ragged too, gives the same file
        assert src == emit(seed(mode, closed, **config, M=1000, N=1100, K=776))


# ------------------------------------------------------------------ the launcher's refusals


def test_check_rows_names_the_tensor_its_shape_and_strides() -> None:
    assert check_rows("k", "A", (64, 4096), (4104, 1), 2, 1024) == 4104  # a padded view
    assert check_rows("k", "C", (3, 1100), (1100, 1), 2, 8, tma=False) == 1100
    assert check_rows("k", "A", (0, 16), (16, 1), 2, 0) == 16
    with pytest.raises(KernelArgumentError, match=r"operand B of shape \(40, 16\) and strides \(1, 40\) "
                                          r"must be row-major"):
        check_rows("k", "B", (40, 16), (1, 40), 2, 0)
    with pytest.raises(KernelArgumentError, match="row stride 8 is shorter"):
        check_rows("k", "A", (4, 16), (8, 1), 2, 0)
    with pytest.raises(KernelArgumentError, match="multiple of 16 bytes but it is 8200 bytes"):
        check_rows("k", "A", (4095, 4100), (4100, 1), 2, 0)
    with pytest.raises(KernelArgumentError, match="16-byte aligned for TMA but starts at 0x8"):
        check_rows("k", "A", (4, 16), (16, 1), 2, 8)


def test_launch_error_messages() -> None:
    class T:
        shape, _s = (4095, 4100), (4100, 1)

        def stride(self) -> tuple[int, int]:
            return self._s

    msg = launch_error("k", 3011, {"A": T()})
    assert "code 3011" in msg and "operand A of shape (4095, 4100) and strides (4100, 1)" in msg
    assert "TMA" in launch_error("k", 2001, {}) and "cudaError_t 2" in launch_error("k", 2, {})
    assert all(op in (None, "A", "B", "C") for op, _ in LAUNCH_ERRORS.values())


@needs_nvcc
@pytest.mark.slow
def test_the_c_launcher_refuses_and_picks_the_variant_on_the_host(tmp_path: Path) -> None:
    """The built library's host entry points run without a GPU: the refusals come before any
    CUDA call, and ``_variant`` is facts_hold at the given sizes."""
    plan = plan_of(MATRIX[1])  # 1024 x 2048 x 512, 128 x 128, 1x2 leader, closed
    lib_path = tmp_path / "k.so"
    compile_cu(emit(plan), lib_path, shared=True, werror=False)
    lib = ctypes.CDLL(str(lib_path))
    name = CudaPrinter(plan).cname
    launch = getattr(lib, f"{name}_launch")
    launch.argtypes = [ctypes.c_void_p] * 6 + [ctypes.c_int] * 3 + [ctypes.c_longlong] * 3 \
        + [ctypes.c_int] * 5
    grid, spl, skt, skc = launch_numbers(plan, run_split(plan, plan.M, plan.N, plan.K))

    def rc(a: int, b: int, c: int, M: int = 1024, N: int = 2048, K: int = 512, lda: int = 512,
           ldb: int = 512, ldc: int = 2048, g: int = grid) -> int:
        return launch(a, b, c, 0, 0, 0, M, N, K, lda, ldb, ldc, g, spl, skt, skc, -1)

    ok = 1 << 20
    assert rc(ok, ok, ok, M=0) == 0 and rc(ok, ok, ok, N=0) == 0  # nothing to do
    assert rc(ok, ok, ok, M=-1) == 3100
    assert rc(ok + 8, ok, ok) == 3001 and rc(ok, ok + 2, ok) == 3002 and rc(ok, ok, ok + 4) == 3003
    assert rc(ok, ok, ok, lda=500) == 3011 and rc(ok, ok, ok, lda=516) == 3011
    assert rc(ok, ok, ok, ldb=504) == 3012 and rc(ok, ok, ok, ldc=2047) == 3013
    assert rc(ok, ok, ok, ldc=2050) == 3013  # TMA stores: 4100-byte rows
    assert rc(ok, ok, ok, g=3) == 3200
    variant = getattr(lib, f"{name}_variant")
    variant.argtypes = [ctypes.c_int] * 3 + [ctypes.c_longlong] + [ctypes.c_int] * 4
    assert variant(plan.M, plan.N, plan.K, plan.N, grid, spl, skt, skc) == int(
        _facts_oracle(plan, plan.M, plan.N, plan.K))
    assert variant(plan.M - 1, plan.N, plan.K, plan.N, grid, spl, skt, skc) == 0  # ragged


class _Dev:
    """A stand-in torch device."""

    def __init__(self, kind: str = "cuda", index: int | None = 0) -> None:
        self.type, self.index = kind, index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Dev) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        return f"{self.type}:{self.index}"


def _fake_torch():  # type: ignore[no-untyped-def]
    """A stand-in ``torch`` module: tensors are shapes, strides and addresses, so the Python
    launcher runs on the host up to the launch (which then fails: no GPU)."""
    import types

    t = types.ModuleType("torch")
    t.bfloat16, t.float16, t.float32, t.int32 = "bf16", "fp16", "fp32", "i32"
    size = {"bf16": 2, "fp16": 2, "fp32": 4, "i32": 4}
    addr = [1 << 20]
    log: list = []

    class Tensor:
        def __init__(self, shape, dtype, strides=None, ptr=None, device=None):  # type: ignore[no-untyped-def]
            self.shape, self.dtype = tuple(shape), dtype
            self._strides = strides or (tuple(shape)[1] if len(shape) == 2 else 1, 1)[:len(shape)]
            self._ptr = ptr if ptr is not None else addr[0]
            addr[0] += 1 << 24
            self.device = device or _Dev()

        def dim(self) -> int:
            return len(self.shape)

        def stride(self) -> tuple:
            return self._strides

        def data_ptr(self) -> int:
            return self._ptr

        def element_size(self) -> int:
            return size[self.dtype]

        def numel(self) -> int:
            n = 1
            for d in self.shape:
                n *= d
            return n

        def __getitem__(self, key):  # type: ignore[no-untyped-def]
            rows, cols = key
            assert rows == slice(None) and cols.start is None
            return Tensor((self.shape[0], cols.stop), self.dtype, self._strides, self._ptr, self.device)

        def zero_(self):  # type: ignore[no-untyped-def]
            log.append(("zero", self.shape))
            return self

        def copy_(self, other):  # type: ignore[no-untyped-def]
            log.append(("copy", self.shape, other.stride()))
            return self

    def empty(shape, dtype=None, device=None):  # type: ignore[no-untyped-def]
        return Tensor(shape, dtype, device=device)

    t.Tensor, t.empty, t.zeros = Tensor, empty, empty
    t.tensor = lambda data, dtype=None: Tensor((0,), dtype)  # noqa: E731
    cuda = types.ModuleType("torch.cuda")
    cuda.get_device_capability = lambda dev=None: (9, 0)  # noqa: E731
    cuda.get_device_properties = lambda dev=None: types.SimpleNamespace(  # noqa: E731
        shared_memory_per_block_optin=232448)
    cuda.current_stream = lambda dev=None: types.SimpleNamespace(cuda_stream=0)  # noqa: E731
    cuda.current_device = lambda: 0  # noqa: E731
    cuda.device = lambda dev: __import__("contextlib").nullcontext()  # noqa: E731
    t.cuda = cuda
    return t, Tensor, log


@needs_nvcc
@pytest.mark.slow
def test_the_python_launcher_on_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CudaKernel.__call__ with a stand-in torch: sizes from the operands, the refusals named
    (tensor, shape, strides), M = 0 / K = 0 without a launch, a C TMA cannot store written
    through a padded copy, and the launch reached with its arguments (it fails: no GPU)."""
    import sys

    from tilec.codegen.cuda.launch import build

    fake, Tensor, log = _fake_torch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setitem(sys.modules, "torch.cuda", fake.cuda)
    plan = plan_of(MATRIX[1])  # 1024 x 2048 x 512, B N x K, overlap epilogue (TMA stores)
    k = build(plan, cache_dir=tmp_path)
    bf = fake.bfloat16
    A, B = Tensor((300, 512), bf), Tensor((1000, 512), bf)
    with pytest.raises(KernelArgumentError, match=r"launch failed with cudaError_t"):
        k(A, B)  # everything checked, the split made at 300 x 1000 x 512: the launch itself fails
    assert (300, 1000, 512) in k._splits
    assert k._splits[(300, 1000, 512)] == plan.split.at(300, 1000, 512)
    with pytest.raises(KernelArgumentError, match=r"operand B must have shape \(1000, 512\) "):
        k(A, Tensor((1000, 504), bf))
    with pytest.raises(KernelArgumentError, match=r"operand A of shape \(300, 500\) and strides \(500, 1\): "
                                          r"TMA needs a row stride of a multiple of 16 bytes"):
        k(Tensor((300, 500), bf), Tensor((1000, 500), bf))
    with pytest.raises(KernelArgumentError, match="must be bf16 but is fp16"):
        k(A, Tensor((1000, 512), "fp16"))
    with pytest.raises(KernelArgumentError, match="operand C must be on cuda:0 but is on cuda:1"):
        k(A, B, Tensor((300, 1000), bf, device=_Dev("cuda", 1)))
    with pytest.raises(KernelArgumentError, match="variant must be"):
        k(A, B, variant="fast")
    C = Tensor((0, 1000), bf)
    assert k(Tensor((0, 512), bf), B, C) is C and not log  # M = 0: nothing launched or written
    C = Tensor((300, 1000), bf)
    assert k(Tensor((300, 0), bf), Tensor((1000, 0), bf), C) is C and log == [("zero", (300, 1000))]
    log.clear()
    odd = Tensor((300, 1001), bf)  # 2002-byte rows: written through a padded copy
    assert k.c_copy_stride(odd) == 1008 and k.c_copy_stride(C) is None  # (bench/dispatch_cuda.py)
    with pytest.raises(KernelArgumentError, match="cudaError_t"):
        k(A, Tensor((1001, 512), bf), odd)
    assert not log  # (the failed launch copies nothing back)


# ------------------------------------------------------------------ the GPU benchmark script


def test_gpu_generic_arguments_and_suite() -> None:
    import bench.gpu_generic as gg

    a = gg.parse_args(["--out", "/tmp/x", "--quick"])
    assert a.out == "/tmp/x" and a.rounds == 2 and a.reps == 10 and a.config == gg.DEFAULT_CONFIGS
    assert [s[0] for s in gg.shapes(a)] == gg.QUICK
    b = gg.parse_args(["--config", "c1x1_128x256", "--only", "wave", "--rounds", "3"])
    assert b.rounds == 3 and b.config == ["c1x1_128x256"]
    assert [s[0] for s in gg.shapes(b)] == ["wave_1664", "wave_2304", "wave_3328", "wave_1408x1920"]
    with pytest.raises(SystemExit):
        gg.parse_args(["--config", "nope"])
    suite = Path("/work/shared/bench/suite.json")
    if suite.exists():  # the copy in the script is the suite
        want = [(s["name"], s["M"], s["N"], s["K"]) for s in json.loads(suite.read_text())["shapes"]]
        assert gg.SUITE == want
    p = gg.config_params("c2x1_128x256", 132, (16, 4096, 4096))
    assert (p["SMS"], p["CLUSTER"], p["M"], p["B_LAYOUT"]) == (132, 2, 16, "kn")
    assert gg.config_params("c1x2_128x128", 133, (1, 1, 1))["SMS"] == 132
    assert [gg.padded(n) for n in (4097, 4100, 8)] == [4104, 4104, 8]
    # the kept per-shape files of 9d1b699: every suite shape but the one it refused
    kept = gg.static_kernels("c2x1_128x256")
    assert set(kept) == {s[0] for s in gg.SUITE} - {"ragged"} and not gg.static_kernels("nope")
    for name, M, N, K in gg.SUITE:
        if name in kept:
            src = (gg.STATIC / kept[name]["file"]).read_text()
            assert (kept[name]["M"], kept[name]["N"], kept[name]["K"]) == (M, N, K)
            assert f"constexpr int M = {M};" in src and f"constexpr int K = {K};" in src


def test_gpu_generic_times_the_generic_kernel_with_each_files_hints() -> None:
    """Where a kept per-shape file's L2 hints differ from the generic plan's (lowering's rule at
    one tile row), the script also builds the generic kernel with the file's hints: its source
    differs from the generic one in the hints alone."""
    import bench.gpu_generic as gg

    kept = gg.static_kernels("c2x1_128x256")
    hints = {n: gg.file_hints(e) for n, e in kept.items()}
    # lowering's rule at each shape: A last, B first where the tiles make one tile row (M <= BM)
    assert hints == {n: ("last", "first") if kept[n]["M"] <= 128 else ("first", "last")
                     for n in kept}
    plan = gg.plan_at(gg.config_params("c2x1_128x256", 132, gg.REFERENCE))
    # lowering's rule since session 13: no hint off one tile row (the kept files have A first, B last)
    assert (gg.hint_name(plan.a.evict), gg.hint_name(plan.b.evict)) == ("normal", "normal")
    if getattr(plan.a, "evict_where", None) is not None:  # lowering's rule, per launch
        assert {n: gg.hints_at(plan, e["M"], e["N"]) for n, e in kept.items()} == \
            {n: h if h == ("last", "first") else ("normal", "normal") for n, h in hints.items()}
    plan = gg.with_hints(plan, ("first", "last"))  # the same hints at every size
    assert {n: gg.hints_at(plan, e["M"], e["N"]) for n, e in kept.items()} == \
        {n: ("first", "last") for n in kept}
    src, other = emit(plan), emit(gg.with_hints(plan, ("last", "first")))
    diff = [(a, b) for a, b in zip(src.splitlines(), other.splitlines(), strict=True) if a != b]
    assert diff and all("evict" in a and "evict" in b for a, b in diff)
    assert "A last, B first" in other and "pol_a = tilec::policy_evict_last()" in other


# ------------------------------------------------------------------ size-dependent L2 hints


@needs_gxx
def test_a_size_dependent_l2_hint_is_chosen_per_launch(tmp_path: Path) -> None:
    """Where the plan carries lowering's size-dependent hint (``OperandLoad.evict_where``: one
    tile row reads A in every tile and each B tile once: A last, B first there), the kernel
    picks its L2 policy per launch from the Shape: the printed condition, compiled on the host,
    agrees with the plan's at sizes on both sides, and the producer selects the policy by it."""
    from tilec.codegen.cuda.launch import launch_numbers
    from tilec.codegen.cuda.printer import host_prefix
    from tilec.ir.types import L2Hint
    from tilec.transforms.plan import SIZE_M, SIZE_N, OperandLoad

    plan = seed(M=4096, N=4096, K=512, CM=2, CN=1, SMS=132, B_LAYOUT="kn")
    one_row = sympy.Eq(sympy.ceiling(SIZE_M / plan.BM), 1) & (sympy.ceiling(SIZE_N / plan.BN) > 1)

    @dataclasses.dataclass(frozen=True)
    class RuledLoad(OperandLoad):  # the field, where lowering does not have it
        evict_where: tuple | None = None

    def ruled(op: OperandLoad, hint: L2Hint) -> OperandLoad:
        if "evict_where" in {f.name for f in dataclasses.fields(OperandLoad)}:
            return dataclasses.replace(op, evict_where=(one_row, hint))
        return RuledLoad(**{f.name: getattr(op, f.name) for f in dataclasses.fields(op)},
                         evict_where=(one_row, hint))

    p = dataclasses.replace(plan, a=ruled(plan.a, L2Hint.LAST), b=ruled(plan.b, L2Hint.FIRST))
    assert (p.a.evict, p.b.evict) == ("normal", "normal")  # lowering's rule off one tile row
    src = emit(p)
    assert "const uint64_t pol_a = sh.evict_a_where() ? tilec::policy_evict_last() : " \
           "tilec::policy_evict_normal();" in src
    assert "const uint64_t pol_b = sh.evict_b_where() ? tilec::policy_evict_first() : " \
           "tilec::policy_evict_normal();" in src
    ns = src.split("namespace ")[1].split(" ")[0]
    (tmp_path / "s.h").write_text(host_prefix(src))
    (tmp_path / "h.cpp").write_text(
        '#include "s.h"\n#include <cstdio>\n#include <cstdlib>\nint main(int c, char** v) {\n'
        f"  using namespace {ns};\n"
        "  int a[8]; for (int i = 0; i < 8; ++i) a[i] = std::atoi(v[i + 1]);\n"
        "  const Shape s = make_shape(a[0], a[1], a[2], a[1], a[3], a[4], a[5], a[6]);\n"
        '  std::printf("%d %d\\n", (int)s.evict_a_where(), (int)s.evict_b_where());\n}\n')
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
                    "-I", str(tmp_path), "-o", str(tmp_path / "h"), str(tmp_path / "h.cpp")],
                   check=True)
    seen = set()
    for M, N in [(64, 28672), (128, 4096), (16, 300), (129, 4096), (4096, 4096), (100, 200), (1, 1)]:
        want = bool(one_row.subs({SIZE_M: M, SIZE_N: N}))
        nums = launch_numbers(p, run_split(p, M, N, 4096))
        out = subprocess.run([str(tmp_path / "h"), str(M), str(N), "4096", *map(str, nums), "0"],
                             capture_output=True, text=True, check=True).stdout.split()
        assert out == [str(int(want))] * 2, (M, N)
        seen.add(want)
    assert seen == {True, False}
    # a rule between hints the kernel cannot choose by one condition is refused
    bad = dataclasses.replace(p, a=dataclasses.replace(p.a, evict_where=(one_row, "unchanged")))
    with pytest.raises(UnsupportedError, match="chooses between 'first', 'last' and 'normal'"):
        emit(bad)
