"""Generated Triton kernels in the CPU interpreter: every decomposition x fix-up on ragged
shapes, against torch.matmul in float64, with C poisoned by NaN (every element must be written).

TRITON_INTERPRET=1 is set before triton is imported.  The interpreter gets tl.dot wrong for bf16,
so fp16 and fp32 (input_precision="ieee") are tested; bf16 and TMA speed are checked on the GPU by
bench/bench_pipeline.py.  The 3.9 interpreter runs host tensor descriptors, so TMA source
is also run here on a few shapes.
"""

from __future__ import annotations

import os
import re

os.environ["TRITON_INTERPRET"] = "1"

import pytest
import sympy
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.plans import plan
from tilec.codegen.triton.printer import emit
from tilec.errors import TilecError, UnsupportedError
from tilec.runtime.build import load_triton
from tilec.runtime.loader import load_schedule
from tilec.transforms.decompose import work_units
from tilec.transforms.pipeline import lower
from tilec.transforms.plan import (
    DType,
    Fixup,
    KernelPlan,
    LoadKind,
    MulticastMode,
    MulticastPlan,
)

TORCH = {DType.FP16: torch.float16, DType.FP32: torch.float32}
TOL = {DType.FP16: 2e-3, DType.FP32: 1e-5}  # relative to max|C| (fp16 output rounding: 2^-11)


def run_and_check(p: KernelPlan, seed: int = 0, repeat: bool = False) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    dt = TORCH[p.dtype]
    a = torch.randn((p.M, p.K), generator=g).to(dt)
    b_shape = (p.N, p.K) if p.b.transposed else (p.K, p.N)
    b = torch.randn(b_shape, generator=g).to(dt)
    mod = load_triton(p)
    out = torch.full((p.M, p.N), float("nan"), dtype=dt)
    c = mod.run(a, b, out=out)
    assert c is out
    assert not c.isnan().any(), f"{int(c.isnan().sum())} elements of C never written"
    ref = a.double() @ (b.double().T if p.b.transposed else b.double())
    err = (c.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1.0)
    assert err < TOL[p.dtype], f"relative error {err:.3g} for {p.name}"
    if repeat:
        out2 = torch.full((p.M, p.N), float("nan"), dtype=dt)
        assert torch.equal(mod.run(a, b, out=out2), c), "deterministic fix-up not bitwise stable"
    return c


DECOMPS = [
    ("dp", {}),
    ("splitk", {"splits": 3}),
    ("streamk", {}),
    ("dp_1sk", {}),
    ("sk2_dp", {}),
    ("skpp", {"sk_waves": 2}),
]
# ragged shapes: M = 1, K < BK, fewer tiles than SMs, tiles just past a multiple of sms
SHAPES = [
    (1, 70, 40, 4),  # M = 1, 5 tiles on 4 SMs
    (37, 50, 9, 4),  # K < BK, 12 tiles = 3 waves of 4
    (80, 16, 100, 7),  # 5 tiles < 7 SMs
    (50, 35, 70, 6),  # 12 tiles on 6 SMs (+0), ragged M, N, K
    (113, 17, 33, 6),  # 16 tiles: 2 waves + 4
]


@pytest.mark.parametrize("fixup", list(Fixup), ids=lambda f: f.value)
@pytest.mark.parametrize(("dec", "extra"), DECOMPS, ids=[d for d, _ in DECOMPS])
def test_decompositions_fp16(dec, extra, fixup):
    if dec == "dp" and fixup is not Fixup.ATOMIC:
        pytest.skip("data-parallel has no fix-up")
    for i, (M, N, K, sms) in enumerate(SHAPES[:4] if dec != "dp" else SHAPES):
        splits = min(extra.get("splits", 1), -(-K // 16))
        p = plan(M, N, K, 16, 16, 16, dtype=DType.FP16, decomposition=dec, sms=sms,
                 fixup=fixup, splits=splits, sk_waves=extra.get("sk_waves", 1))
        run_and_check(p, seed=i, repeat=fixup is not Fixup.ATOMIC and i == 1)


@pytest.mark.parametrize("fixup", list(Fixup), ids=lambda f: f.value)
@pytest.mark.parametrize(("dec", "extra"), DECOMPS[1:], ids=[d for d, _ in DECOMPS[1:]])
def test_decompositions_fp32_ieee(dec, extra, fixup):
    M, N, K, sms = SHAPES[4]
    p = plan(M, N, K, 16, 16, 16, dtype=DType.FP32, decomposition=dec, sms=sms,
             fixup=fixup, splits=extra.get("splits", 1), sk_waves=extra.get("sk_waves", 1),
             order="grouped", group_m=3)
    run_and_check(p, seed=7, repeat=fixup is Fixup.DETERMINISTIC)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(M=st.integers(1, 300), N=st.integers(1, 64), K=st.integers(1, 300),
       dec=st.sampled_from([d for d, _ in DECOMPS]), fixup=st.sampled_from(list(Fixup)),
       sms=st.integers(1, 8), order=st.sampled_from(["row", "grouped"]))
def test_random_shapes(M, N, K, dec, fixup, sms, order):
    k_iters = -(-K // 16)
    p = plan(M, N, K, 16, 32, 16, dtype=DType.FP16, decomposition=dec, sms=sms,
             fixup=fixup, splits=min(3, k_iters), sk_waves=2, order=order, group_m=2)
    run_and_check(p)


@pytest.mark.parametrize("order", ["row", "grouped"])
@pytest.mark.parametrize(("dec", "grid"), [("dp", 3), ("splitk", 5)])
def test_persistent_grid_and_orders(order, dec, grid):
    # a persistent schedule of `grid` CTAs: split-K walks its units over them too
    p = plan(70, 60, 50, 16, 16, 16, dtype=DType.FP16, decomposition=dec, splits=2,
             sms=grid, order=order, group_m=2, fixup=Fixup.DETERMINISTIC)
    assert p.work.grid == grid < p.tiles * p.work.splits
    src = emit(p)
    # the order is printed, not a template: the grouped raster's short last band is a Min
    coords = src[src.index("def tile_coords"):src.index("def load_a")]
    assert ("tl.minimum" in coords) == (order == "grouped")
    loop = "range(pid, NUM_TILES * SPLITS, GRID)" if dec == "splitk" else "range(pid, NUM_TILES, GRID)"
    assert loop in src  # persistent loop over units, their count an argument
    run_and_check(p, repeat=dec == "splitk")


def test_transposed_b_and_fp32_tma():
    run_and_check(plan(40, 50, 70, 16, 32, 16, dtype=DType.FP16, b_transposed=True,
                       decomposition="streamk", sms=3, fixup=Fixup.REDUCE_KERNEL))
    # TMA (host tensor descriptors) runs in the 3.9 interpreter; OOB boxes are zero-filled
    for b_t in (False, True):
        p = plan(40, 48, 72, 16, 16, 32, dtype=DType.FP32, b_transposed=b_t,
                 load=LoadKind.TMA, decomposition="dp_1sk", sms=4,
                 fixup=Fixup.DETERMINISTIC)
        assert "TensorDescriptor(" in emit(p)
        run_and_check(p, repeat=True)


def test_padded_order_skips_dead_tiles():
    # the seed's cluster-group order pads 3 x 4 tiles to 16 linear indices (whole 2 x 2 groups): Triton keeps the order, and the kernel skips the indices that are not alive
    seed = "examples/seed004_persistent_cluster.py"
    params = dict(M=48, N=64, K=40, BM=16, BN=16, BK=16, CM=2, CN=2, CLUSTER=4, SMS=8,
                  DTYPE="fp16")
    for dec in ("dp", "streamk"):
        fusion = load_schedule(seed, params).fusion
        fusion.decompose(dec, sms=5, fixup="deterministic")
        p = lower(fusion, target="triton")
        assert int(p.order.concrete().num_tiles) > p.tiles
        assert "(pid_m < ((M + 15) // 16)) & (pid_n < ((N + 15) // 16))" in emit(p)  # alive
        alive = p.order.alive_tiles()
        assert len(alive) == p.tiles
        units = work_units(p.work, alive)
        assert all(p.order.is_alive(u[0]) for us in units for u in us)
        assert {u[0] for us in units for u in us} == set(alive)
        run_and_check(p)


LAUNCH_PLANS = {  # a pointer-load data-parallel plan and a TMA split-K one (workspace, descriptors)
    "pointer_dp": lambda: plan(20, 30, 40, 16, 16, 16, dtype=DType.FP16, load=LoadKind.POINTER),
    "tma_splitk": lambda: plan(40, 48, 64, 16, 16, 32, dtype=DType.FP32, load=LoadKind.TMA,
                               decomposition="splitk", splits=2, fixup=Fixup.DETERMINISTIC),
}


class LooksCuda(torch.Tensor):
    """A CPU tensor that says it is on CUDA device 0: run()'s one comparison takes it for a CUDA
    tensor, so a wrong argument it lets through goes on to a CUDA stream lookup or the launch
    and fails there, not with the TypeError/ValueError naming the argument."""

    is_cuda = True

    def get_device(self) -> int:
        return 0


def cuda_like(t: torch.Tensor) -> torch.Tensor:
    return t.as_subclass(LooksCuda)


def operands(p: KernelPlan, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    dt = TORCH[p.dtype]
    a = torch.randn((p.M, p.K), generator=g).to(dt)
    b = torch.randn((p.N, p.K) if p.b.transposed else (p.K, p.N), generator=g).to(dt)
    return a, b, a.double() @ b.double()


def close(c: torch.Tensor, ref: torch.Tensor, dt: DType) -> bool:
    return (c.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1.0) < TOL[dt]


@pytest.mark.parametrize("kind", list(LAUNCH_PLANS))
def test_launcher_errors_after_a_good_call(kind):
    p = LAUNCH_PLANS[kind]()
    mod = load_triton(p)
    M, N, K, dt = p.M, p.N, p.K, TORCH[p.dtype]
    a, b, ref = operands(p, 0)
    assert close(mod.run(a, b), ref, p.dtype)  # the first call launches (and would cache) it
    other = torch.float32 if dt is torch.float16 else torch.float16
    cases = [  # (a, b, out), error, message
        ((a, b.T.contiguous(), None), ValueError,
         rf"A is \(M, K\) = \({M}, {K}\) and B must be \(K, N\) with the same K, but B has "
         rf"shape \({N}, {K}\)"),
        ((a[:, :-1], b, None), ValueError,
         rf"A is \(M, K\) = \({M}, {K - 1}\) and B must be \(K, N\) with the same K, but B "
         rf"has shape \({K}, {N}\)"),
        ((a[0], b, None), ValueError, rf"A must be a matrix but has shape \({K},\)"),
        ((a.to(other), b, None), TypeError, rf"A must have dtype {dt} but got {other}"),
        ((a, b.to(other), None), TypeError, rf"B must have dtype {dt} but got {other}"),
        ((a.numpy(force=True), b, None), TypeError, "A must be a torch.Tensor but got ndarray"),
        ((a, b, torch.empty(N, M, dtype=dt)), ValueError, rf"out must have shape \({M}, {N}\)"),
        ((a, b, torch.empty(M, N, dtype=other)), TypeError, rf"out must have dtype {dt}"),
        ((a, b, torch.empty(N, M, dtype=dt).T), ValueError,
         rf"out must be contiguous but has strides \(1, {M}\)"),
        ((a, b, [0.0] * N), TypeError, "out must be a torch.Tensor but got list"),
    ]
    for (x, y, out), err, msg in cases:
        for wrap in (lambda t: t, cuda_like):  # as CPU tensors, and as tensors that look CUDA
            x_, y_, out_ = (wrap(t) if isinstance(t, torch.Tensor) else t for t in (x, y, out))
            with pytest.raises(err, match=msg) as raised:
                mod.run(x_, y_, out=out_)
            assert isinstance(raised.value, TilecError)  # a user error, by tilec's contract
    meta = torch.empty((K, N), dtype=dt, device="meta")
    with pytest.raises(ValueError, match="A and B must be on one device but got cpu and meta"):
        mod.run(a, meta)
    with pytest.raises(ValueError, match=r"out must be on the device of A \(cpu\) but is on meta"):
        mod.run(a, b, out=torch.empty((M, N), dtype=dt, device="meta"))
    assert close(mod.run(a, b), ref, p.dtype)  # the failed calls left nothing behind


@pytest.mark.parametrize("kind", list(LAUNCH_PLANS))
def test_repeated_calls_with_new_tensors(kind):
    # each call gets other tensors: new operands, a given and a new out, an operand that is
    # not contiguous, out and operands at addresses that are not 16-byte aligned (TMA clones)
    p = LAUNCH_PLANS[kind]()
    mod = load_triton(p)
    dt = TORCH[p.dtype]
    results = []
    for seed in range(4):
        a, b, ref = operands(p, seed)
        if seed == 1:
            a = a.T.contiguous().T  # same values, column-major
            assert not a.is_contiguous()
        if seed == 2:  # one element in: 2 or 4 bytes past an aligned address
            a = torch.cat([a.new_zeros(1), a.flatten()])[1:].view(p.M, p.K)
            assert a.data_ptr() % 16
        out = None
        if seed >= 2:
            out = torch.full((p.M * p.N + 1,), float("nan"), dtype=dt)[1:].view(p.M, p.N)
            assert out.data_ptr() % 16
        c = mod.run(a, b, out=out)
        assert out is None or c is out
        assert close(c, ref, p.dtype), f"call {seed}"
        results.append(c)
    assert not torch.equal(results[0], results[1])  # the calls computed different products
    assert mod._LAUNCHES == {}  # the interpreter returns no compiled kernel: always the JIT path


FAST_PLANS = {**LAUNCH_PLANS,  # B's rows of 30 fp16 are copied per call: no fast path
              "pointer_dp_rows32": lambda: plan(20, 32, 40, 16, 16, 16, dtype=DType.FP16,
                                                load=LoadKind.POINTER),
              "tma_reduce": lambda: plan(40, 48, 64, 16, 16, 32, dtype=DType.FP32,
                                         load=LoadKind.TMA, decomposition="splitk", splits=2,
                                         fixup=Fixup.REDUCE_KERNEL)}


@pytest.mark.parametrize("kind", list(FAST_PLANS))
def test_fast_path_repeats_a_checked_call(kind, monkeypatch):
    """run()'s fast path, which the interpreter never takes (it returns no compiled kernel): the
    JIT is wrapped to return a stand-in for Triton's CompiledKernel whose launch runs the real
    kernel in the interpreter with the arguments (constexprs included) the direct launch passes.
    A call with the key of a checked one launches directly and is correct with new tensors; the
    checked path runs once per key, and again for what the key cannot carry: unaligned
    addresses (copied), an out overlapping an operand (refused), another layout or dtype."""
    p = FAST_PLANS[kind]()
    mod = load_triton(p)
    dt = TORCH[p.dtype]
    direct = []

    class Compiled:  # what the JIT returns on a GPU; kernel[grid](*args, stream=) launches it
        def __init__(self, jit, warps):
            self.jit, self.warps = jit, warps

        def __getitem__(self, grid):
            def launch(*args, stream=None):
                assert stream == 0  # the interpreter's CPU tensors: no stream
                direct.append(grid)
                self.jit[grid[:1]](*args, num_warps=self.warps)
            return launch

    class Jit:
        def __init__(self, jit):
            self.jit = jit

        def __getitem__(self, grid):
            def launch(*args, **kw):
                self.jit[grid](*args, **kw)
                return Compiled(self.jit, kw["num_warps"])
            return launch

    monkeypatch.setattr(mod, "CompiledKernel", Compiled)
    monkeypatch.setattr(mod, "_current_device", lambda: "cpu")
    monkeypatch.setattr(mod, "_FAST", {})
    monkeypatch.setattr(mod, "_LAUNCHES", {})
    for name in ("gemm_kernel", "reduce_kernel"):
        if hasattr(mod, name):
            monkeypatch.setattr(mod, name, Jit(getattr(mod, name)))
    checked = []
    inner = mod._run
    monkeypatch.setattr(mod, "_run", lambda a, b, out: checked.append(1) or inner(a, b, out))
    for seed in range(3):  # new operands and outs: one key each for out=None and out given
        a, b, ref = operands(p, seed)
        assert close(mod.run(a, b), ref, p.dtype)
        out = torch.full((p.M, p.N), float("nan"), dtype=dt)
        assert mod.run(a, b, out=out) is out and close(out, ref, p.dtype)
    if (p.N * p.dtype.nbytes) % 16:  # B copied into aligned rows each call: every call checked
        assert len(checked) == 6 and not mod._FAST
        return
    assert len(checked) == 2 and len(mod._FAST) == 2
    launches = len(direct)
    assert launches >= 4  # the last two calls of each key, at least
    for fast in mod._FAST.values():  # no user tensor kept (only meta prototypes)
        cells = [c.cell_contents for c in fast.__closure__]
        held = [t for t in cells if isinstance(t, torch.Tensor)]
        held += [d["base"] for d in cells if isinstance(d, dict) and "base" in d]
        assert all(t.device.type == "meta" for t in held)
    # what the key cannot carry: an unaligned base (same shape and strides) is taken the checked
    # way (copied when TMA reads it), correct
    a, b, ref = operands(p, 5)
    odd = torch.cat([a.new_zeros(1), a.flatten()])[1:].view(a.shape)
    assert odd.stride() == a.stride() and odd.data_ptr() % 16
    assert close(mod.run(odd, b), ref, p.dtype) and len(checked) == 3
    # an out that overlaps b, with the key of a call that ran with a disjoint out: refused
    big = torch.zeros(b.numel() + p.M * p.N, dtype=dt)
    bb = big[:b.numel()].view(b.shape)
    bb.copy_(b)
    out = big[b.numel():].view(p.M, p.N)
    assert mod.run(a, bb, out=out) is out and close(out, ref, p.dtype)
    keys = len(mod._FAST)
    assert mod.run(a, bb, out=big[b.numel():].view(p.M, p.N)) is not None
    assert len(mod._FAST) == keys  # the second call took the fast path of the first
    over = big[b.numel() - p.N:b.numel() - p.N + p.M * p.N].view(p.M, p.N)
    with pytest.raises(ValueError, match=r"out \(\d+, \d+\) overlaps B"):
        mod.run(a, bb, out=over)
    # another layout or dtype is a new key, checked: copied or refused
    col = a.T.contiguous().T
    assert close(mod.run(col, b), ref, p.dtype)
    with pytest.raises(TypeError, match="A must have dtype"):
        mod.run(a.double(), b)
    assert len(direct) > launches


def test_descriptor_copies_match_the_constructor():
    from triton.tools.tensor_descriptor import TensorDescriptor

    p = LAUNCH_PLANS["tma_splitk"]()
    mod = load_triton(p)
    for M, K in ((p.M, p.K), (7, 24), (300, 8)):  # one prototype per shape, any shape
        a = torch.randn(M, K)
        made = TensorDescriptor(a, shape=[M, K], strides=[K, 1], block_shape=[p.BM, p.BK])
        copy = mod._desc(a, (p.BM, p.BK))
        assert type(copy) is TensorDescriptor and copy.base is a
        assert vars(copy).keys() == vars(made).keys()
        assert all(vars(copy)[f] == vars(made)[f] for f in vars(made) if f != "base")
    assert all(d.base.device.type == "meta" for d in mod._DESCS.values())  # no user tensor kept
    a = torch.randn(p.M, p.K)
    assert mod._aligned(a) is a  # aligned rows are taken as they are
    odd = torch.cat([a.new_zeros(1), a.flatten()])[1:].view(p.M, p.K)  # 4 bytes past aligned
    moved = mod._aligned(odd)
    assert odd.data_ptr() % 16 and moved.data_ptr() % 16 == 0 and torch.equal(moved, odd)
    rows = torch.randn(p.M, 7)[:, :5]  # a row stride of 7 x 4 bytes: TMA cannot take it
    moved = mod._aligned(rows)
    assert (moved.stride(0) * 4) % 16 == 0 and torch.equal(moved, rows)
    assert mod._desc(moved, (p.BM, p.BK)).base is moved


def test_refusals():
    from dataclasses import replace

    p = plan(64, 64, 64, 16, 16, 16)
    with pytest.raises(UnsupportedError, match="cluster"):
        emit(replace(p, cluster=(2, 1, 1)))
    mc = MulticastPlan(MulticastMode.LEADER, 2, (), sympy.true, sympy.true, sympy.Integer(3),
                       None, None, True)
    with pytest.raises(UnsupportedError, match=r"operand A .* multicast"):
        emit(replace(p, a=replace(p.a, multicast=mc)))
    with pytest.raises(UnsupportedError, match=r"TMA needs boxes of at most 256"):
        plan(64, 512, 64, 16, 512, 16, load=LoadKind.TMA)  # lowering refuses what TMA can't do
    # rows TMA cannot take (60 x 2 bytes) are the launcher's business: it copies them into
    # aligned rows, so the load kind depends on the box only
    odd = plan(64, 64, 60, 16, 16, 16)
    assert odd.a.kind is LoadKind.TMA
    run_and_check(odd)
    with pytest.raises(UnsupportedError, match=r"out_dtype"):
        emit(replace(p, out_dtype=DType.FP32))


def test_source_follows_plan():
    dp = emit(plan(64, 64, 64, 16, 16, 16))
    assert "fixup" not in dp and "tickets" not in dp and "if pid < " not in dp
    sk = emit(plan(64, 64, 64, 16, 16, 16, decomposition="streamk", sms=3,
                   fixup=Fixup.ATOMIC))
    assert "it_begin" in sk and 'sem="relaxed"' in sk and "reduce_kernel" not in sk
    assert "def contributors(tile, M, N, K" in sk and "def partial_slot(tile, j, M, N, K" in sk
    red = emit(plan(64, 64, 64, 16, 16, 16, decomposition="splitk", splits=2,
                    fixup=Fixup.REDUCE_KERNEL))
    assert "def reduce_kernel" in red and "atomic_add" not in red
    compile(red, "<generated>", "exec")


@pytest.mark.parametrize("fixup", list(Fixup), ids=lambda f: f.value)
def test_workspace_is_left_clean(fixup):
    # the launcher keeps one zeroed workspace per (device, stream) and runs no memset: the last
    # contributor of each tile must zero its buffer and reset its ticket for the next call
    p = plan(50, 35, 70, 16, 16, 16, dtype=DType.FP16, decomposition="splitk", splits=3,
             sms=6, fixup=fixup)
    src = emit(p)
    assert "torch.zeros" in src.split("def run(")[0] and "torch.zeros" not in src.split("def run(")[1]
    for seed in range(3):  # new inputs each call: stale partials would show as errors
        run_and_check(p, seed=seed)
    ws, tickets = load_triton(p)._WORKSPACES[("cpu", 0)]
    assert not tickets.any() and (fixup is not Fixup.ATOMIC or not ws.any())
    sk = plan(113, 17, 33, 16, 16, 16, dtype=DType.FP16, decomposition="skpp",
              sk_waves=1, sms=6, fixup=fixup)  # DP waves + the last partial wave in SK
    for seed in range(2):
        run_and_check(sk, seed=seed)


def test_warp_specialize_option_prints_in_the_k_loop():
    p = plan(64, 64, 64, 32, 32, 16)
    assert "warp_specialize" not in emit(p)
    assert "tl.range(k_begin, k_end, warp_specialize=True)" in emit(p, warp_specialize=True)


def test_reduce_kernel_spreads_over_row_strips():
    # one reduce program per whole tile left most SMs idle (8 tiles x 16 partials: 91 us on an
    # H200); the launcher splits each tile into row strips until there are two programs per CTA
    # of the GEMM's grid, or the strips are 4 rows, at the run-time sizes
    for (M, N, K, bm, splits) in ((64, 64, 256, 32, 4), (50, 35, 70, 16, 3), (128, 32, 512, 64, 8)):
        p = plan(M, N, K, bm, 16, 16, dtype=DType.FP16, decomposition="splitk", splits=splits,
                 fixup=Fixup.REDUCE_KERNEL)
        mod = load_triton(p)
        for tiles, grid in ((p.work.partial_tiles, p.work.grid), (1, 132), (1000, 132), (3, 4)):
            programs, subs = mod._reduce_grid(tiles, grid)
            rows = 4 * subs
            assert programs == tiles * (bm // rows) and rows & (rows - 1) == 0 and rows <= bm
            assert programs >= 2 * grid or rows == 4
            assert rows == bm or tiles * (bm // rows // 2) < 2 * grid  # no finer than needed
        run_and_check(p, repeat=True)
