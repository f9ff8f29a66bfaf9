"""The SIMT launcher's padding (tilec.transforms.simt.padding.padding decides, tilec.codegen.cuda.simt.launch.run_padded copies) on CPU:
the decision (the model's choice, the small problems it leaves alone, the override), the padded
sizes meeting the target variant's facts (checked with the facts themselves), and the padded
launch's result through a reference matmul standing in for the kernel, on NaN-poisoned
workspaces and outputs, at M, N or K = 1, ragged everything and misaligned pointers."""

from __future__ import annotations

import math
import random

import pytest
import torch

from tilec.codegen.cuda.simt.launch import Workspace, operands, run_padded
from tilec.errors import KernelArgumentError
from tilec.transforms.simt import cost
from tilec.transforms.simt.padding import COPY_LAUNCH, MARGIN, Padding, holds, padding

BM, BN, BK = 128, 128, 32
VARIANTS = [
    ("tiles", [f"M % {BM} == 0", f"N % {BN} == 0", f"K % {BK} == 0", "lda % 4 == 0",
               "ldb % 4 == 0", "ldc % 4 == 0", "(A | B | C) % 16 == 0"]),
    ("ragged_n", [f"M % {BM} == 0", f"K % {BK} == 0", "ldb % 4 == 0", "B % 16 == 0"]),
    ("aligned", ["N % 4 == 0", "K % 4 == 0", "lda % 4 == 0", "ldb % 4 == 0", "ldc % 4 == 0",
                 "(A | B | C) % 16 == 0"]),
    ("general", []),
]
LARGE = cost.Row("large", BM, BN, BK, warps=8, ctas=2)
H100 = cost.CARDS["H100"]
DRAM = H100.dram * cost.DEFAULT.dram_efficiency


def est(variant: str, M: int, N: int, K: int) -> float:
    return cost.estimate(LARGE, "dp_ft", M, N, K, H100, variant)


def decide(M: int, N: int, K: int, lda: int | None = None, ldb: int | None = None,
           ldc: int | None = None, ptrs: tuple[int, int, int] = (0, 0, 0), mode: str = "auto") -> Padding:
    return padding(M, N, K, lda or K, ldb or N, ldc or N, ptrs, VARIANTS, est, DRAM, mode)


def test_ragged_shapes_from_the_h100_run_pad_to_the_tiles_variant() -> None:
    # N ragged (B and C rows of 4095: the general variant): B copied to rows of 4096, C written
    # in place by ragged_n (the tiles variant would copy C too: 128 MB more)
    p = decide(4096, 4095, 4096)
    assert (p.variant, p.M, p.N, p.K, p.copy_a, p.copy_b, p.copy_c, p.b_cols) == (
        "ragged_n", 4096, 4095, 4096, False, True, False, 4096)
    assert dict(p.options)["general"] > 1.1 * p.seconds
    assert dict(p.options)["pad:tiles"] > p.seconds
    # K ragged: A and B padded (zero K), C as it is
    p = decide(4096, 4096, 4095)
    assert (p.variant, p.K, p.copy_a, p.copy_b, p.copy_c) == ("tiles", 4096, True, True, False)
    # M ragged: the aligned variant's predicates (0.917x in the H100 run) against copying A and C
    p = decide(4097, 4096, 4096)
    assert p.seconds < (1 - MARGIN) * dict(p.options)["aligned"]
    assert dict(p.options)["aligned"] > p.seconds and (p.M, p.copy_a, p.copy_b, p.copy_c) == (
        4224, True, False, True)


@pytest.mark.parametrize(("M", "N", "K", "card"), [(2048, 50257, 768, "H200"), (4096, 4095, 4096, "H200"),
                                                   (4096, 4095, 4096, "H100"), (2048, 14335, 4096, "H200"),
                                                   (4096, 4099, 4095, "H200")])
def test_ragged_n_where_only_c_rows_break_the_vectors(M: int, N: int, K: int, card: str) -> None:
    """ragged_n at N ragged (rows of C not of 4 elements) with M a multiple of the tile: B
    copied to rows of N rounded up to 4 (and K to 32 where K is ragged: A too), C written in
    place; the tiles variant's padding would copy C (2 M N 4 bytes) and costs the model more
    by about that, less ragged_n's 32-bit stores.  Through the cost model's own variants."""
    c = cost.CARDS[card]

    def kernel(v: str, m: int, n: int, k: int) -> float:
        return cost.estimate(LARGE, "dp_ft", m, n, k, c, v)

    dram = c.dram * cost.DEFAULT.dram_efficiency
    p = padding(M, N, K, K, N, N, (0, 0, 0), cost._variants(LARGE), kernel, dram)
    assert (p.variant, p.M, p.N, p.copy_b, p.copy_c, p.b_cols) == ("ragged_n", M, N, True, False,
                                                                  -(-N // 4) * 4)
    assert (p.K, p.copy_a) == ((K, False) if K % BK == 0 else (-(-K // BK) * BK, True))
    # the bytes the padding moves (cost._padded: the copies at 1 byte/s): B read and written
    # to rows of N rounded up to 4 (and A where K is ragged), no byte of C
    Kp, Nb = -(-K // BK) * BK, -(-N // 4) * 4
    want = 4 * (K * N + Kp * Nb) + (4 * (M * K + M * Kp) if Kp > K else 0)
    assert cost._padded(LARGE, "ragged_n", M, N, K) == (M, N, Kp, pytest.approx(want), 1 + 3 * (Kp > K))
    # the cost model's time of the launch (what CONFIG=auto weighs rows by) is this choice's
    assert cost.launch_estimate(LARGE, "dp_ft", M, N, K, c) == pytest.approx(p.seconds)
    tiles = dict(p.options)["pad:tiles"]
    c_copy = 2 * M * N * 4 / dram  # what pad:tiles moves more
    scalar = (cost.DEFAULT.scalar_c - 1) * cost.DEFAULT.exposed * 4 * M * N / c.dram
    compute = (cost.RAGGED_N - 1) * kernel("tiles", M, -(-N // BN) * BN, p.K)
    assert tiles - p.seconds == pytest.approx(c_copy - scalar - compute + COPY_LAUNCH, rel=0.05)
    # with C's rows already of 4 elements (a view of a wider C) and B's too: ragged_n as it is
    # when N is off the tile, no copy at all
    if K % BK == 0:
        q = padding(M, N, K, K, -(-N // 4) * 4, -(-N // 4) * 4, (0, 0, 0), cost._variants(LARGE),
                    kernel, dram)
        assert (q.variant, q.padded) == ("ragged_n", False)


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (2048, 14336, 4096), (1024, 32000, 4096),
                                   (4096, 4096, 4095), (4097, 4096, 4096), (7000, 3000, 4096),
                                   (3000, 5000, 2000)])
def test_ragged_n_is_not_taken_where_c_needs_nothing_or_m_is_ragged(shape: tuple[int, int, int]) -> None:
    """Aligned shapes meet tiles; K ragged pads A and B only (C meets tiles' facts); M ragged:
    ragged_n would need C padded, so it is not weighed."""
    p = padding(*shape, shape[2], shape[1], shape[1], (0, 0, 0), cost._variants(LARGE), est, DRAM)
    assert p.variant != "ragged_n"
    if shape[0] % BM:
        assert "pad:ragged_n" not in dict(p.options)


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 4095, 4095), (4095, 1, 4095), (4095, 4095, 1),
                                   (300, 301, 302), (1000, 1000, 1000), (37, 45, 29),
                                   (3000, 5000, 2000)])  # padding would gain < MARGIN
def test_small_or_thin_problems_run_as_they_are(shape: tuple[int, int, int]) -> None:
    p = decide(*shape)
    assert not p.padded and p.variant in ("aligned", "general"), p.options
    assert p.seconds * (1 - MARGIN) <= min(s for _, s in p.options)


def test_the_override() -> None:
    assert decide(4096, 4095, 4096, mode="never").variant == "general"
    forced = decide(37, 45, 29, mode="tiles")
    assert (forced.variant, forced.M, forced.N, forced.K) == ("tiles", 128, 128, 32) and forced.padded
    al = decide(37, 45, 29, mode="aligned")
    assert (al.variant, al.M, al.N, al.K, al.copy_a, al.copy_b, al.copy_c) == ("aligned", 37, 48, 32,
                                                                              True, True, True)
    kept = decide(4096, 4096, 4096, mode="tiles")  # meets tiles already
    assert not kept.padded and kept.variant == "tiles" and "meets tiles as it is" in kept.why
    assert "meets aligned as it is" in decide(300, 300, 300, mode="aligned").why
    with pytest.raises(KernelArgumentError, match=r"pad must be one of auto, never, tiles, ragged_n, aligned but got 'yes'"):
        decide(8, 8, 8, mode="yes")


@pytest.mark.parametrize("seed", range(3))
def test_padded_sizes_meet_the_target_facts(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        M, N, K = (rng.choice([1, 2, 3, 4, 5, 127, 128, 129, 4095, 4096, 4097, rng.randint(1, 9000)])
                   for _ in range(3))
        lda, ldb, ldc = K + rng.choice([0, 0, 1, 3, 4]), N + rng.choice([0, 0, 1, 4]), N + rng.choice([0, 2])
        ptrs = tuple(rng.choice([0, 4, 16, 256]) for _ in range(3))
        for mode in ("auto", "tiles", "ragged_n", "aligned"):
            p = decide(M, N, K, lda, ldb, ldc, ptrs, mode)
            if not p.padded:
                assert holds(dict(VARIANTS)[p.variant], M, N, K, lda, ldb, ldc, *ptrs)
                continue
            assert (M, N, K) <= (p.M, p.N, p.K) and p.M - M < BM and p.N - N < BN and p.K - K < BK
            # what the padded launch passes: workspace buffers (aligned, rows of b_cols / c_cols
            # elements, the launch's N columns of them)
            la = p.K if p.copy_a else lda
            lb, lc = (p.b_cols if p.copy_b else ldb), (p.c_cols if p.copy_c else ldc)
            assert lb >= p.N and lc >= p.N
            pa, pb, pc = (0 if p.copy_a else ptrs[0]), (0 if p.copy_b else ptrs[1]), (0 if p.copy_c else ptrs[2])
            assert holds(dict(VARIANTS)[p.variant], p.M, p.N, p.K, la, lb, lc, pa, pb, pc)
            # the library picks the variant padded for (the first whose facts hold)
            assert next(n for n, f in VARIANTS if holds(f, p.M, p.N, p.K, la, lb, lc, pa, pb, pc)) \
                == p.variant
            # an operand is copied only where it misses the facts; C in place keeps its sizes
            if not p.copy_a:
                assert (p.M, p.K) == (M, K)
            if not p.copy_c:
                assert (p.M, p.N) == (M, N)
            if p.K > K:
                assert p.copy_a and p.copy_b
            if p.variant == "ragged_n" and mode in ("auto", "ragged_n"):  # (aligned's padding
                assert not p.copy_c and p.b_cols % 4 == 0  # may reach ragged_n's facts too)


def _poisoned_workspace() -> Workspace:
    ws = Workspace()
    for role in "ABC":  # leftovers of an earlier, larger launch: NaN everywhere
        ws._buf[("cpu", 0, role)] = torch.full((300 * 300,), math.nan)
    return ws


def _stub(expect: str, seen: list[tuple[int, ...]]):  # type: ignore[no-untyped-def]
    """The kernel's stand-in: the padded launch must meet the facts of ``expect``; it writes
    every element of its C (the padded one) as the float64 product of its operands."""
    def launch(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
        M, N, K, lda, ldb, ldc = operands(a, b, c, device_type="cpu")
        facts = dict(VARIANTS)[expect]
        assert holds(facts, M, N, K, lda, ldb, ldc, a.data_ptr() % 64, b.data_ptr() % 64,
                     c.data_ptr() % 64), (M, N, K, lda, ldb, ldc)
        seen.append((M, N, K))
        c.copy_((a.double() @ b.double()).float())
    return launch


@pytest.mark.parametrize(("M", "N", "K"), [(1, 1, 1), (1, 70, 33), (70, 1, 33), (70, 33, 1),
                                           (37, 45, 29), (129, 131, 97), (128, 128, 32), (5, 3, 200)])
@pytest.mark.parametrize("mode", ["tiles", "ragged_n", "aligned"])
@pytest.mark.parametrize("offset", [0, 1])
def test_padded_launch_computes_the_product(M: int, N: int, K: int, mode: str, offset: int) -> None:
    g = torch.Generator().manual_seed(M * 10007 + N * 101 + K)
    # operands as views of wider matrices, `offset` elements in (a 4-byte misaligned pointer)
    A = torch.randn(M, K + 3 + offset, generator=g)[:, offset:offset + K]
    B = torch.randn(K, N + 5 + offset, generator=g)[:, offset:offset + N]
    Cbig = torch.full((M, N + 2 + offset), math.nan)
    C = Cbig[:, offset:offset + N]
    dims = operands(A, B, C, device_type="cpu")
    p = padding(*dims, (A.data_ptr() % 64, B.data_ptr() % 64, C.data_ptr() % 64), VARIANTS, est,
                DRAM, mode)
    seen: list[tuple[int, ...]] = []
    run_padded(A, B, C, p, _stub(p.variant, seen) if p.padded else _stub("general", seen),
               _poisoned_workspace())
    ref = A.double() @ B.double()
    assert torch.allclose(C.double(), ref, rtol=1e-5, atol=1e-5)
    assert seen == [(p.M, p.N, p.K)]
    assert torch.isnan(Cbig[:, :offset]).all() and torch.isnan(Cbig[:, offset + N:]).all()


def test_workspace_grows_and_is_kept_per_operand() -> None:
    ws = Workspace()
    x = torch.zeros(1)
    a = ws.get(x, "A", 4, 8)
    assert a.shape == (4, 8) and a.is_contiguous()
    a2 = ws.get(x, "A", 2, 4)  # smaller: the same buffer
    assert a2.data_ptr() == a.data_ptr()
    assert ws.get(x, "C", 2, 4).data_ptr() != a.data_ptr()  # another operand: its own
    assert ws.get(x, "A", 16, 16).numel() == 256  # larger: grown


class _FakeLibrary:
    """ctypes.CDLL's stand-in: every symbol a settable function that must not be called."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        def fn(*args):  # type: ignore[no-untyped-def]
            raise AssertionError(f"{name} called on CPU")
        return fn


def test_a_built_kernel_decides_from_its_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """SimtKernel.decide on a lowered plan (the example's large row, dp_ft): its variants'
    facts from the printer, the model fed from the plan; CPU tensors, no library called."""
    import ctypes

    from simt_helpers import load

    from tilec.codegen.cuda.simt.launch import SimtKernel
    from tilec.transforms.simt.lower import lower_simt

    plan = lower_simt(load("simt_warp_tiled.py", M=1024, N=1024, K=512, CONFIG="large",
                           DECOMP="dp_ft"), name="pad_probe")
    monkeypatch.setattr(ctypes, "CDLL", _FakeLibrary)
    kern = SimtKernel(plan, "unused.so")  # type: ignore[arg-type]
    assert [v for v, _ in kern.facts] == kern.variants == ["tiles", "ragged_n", "aligned", "general"]
    assert [tuple(f) for _, f in kern.facts] == [tuple(f) for _, f in VARIANTS]  # as this file's
    assert kern.facts == [(n, tuple(f)) for n, f in cost._variants(LARGE)]  # and the model's

    # the model: the plan's tile, K tile, 8 warps, 2 CTAs per SM, dp_ft (the H100 fit's time)
    assert kern.estimate("tiles", 4096, 4096, 4096) == pytest.approx(est("tiles", 4096, 4096, 4096))
    A = torch.empty(4096, 4096)
    B = torch.empty(4096, 4096)[:, :4095]  # ldb 4096: B meets ragged_n's facts, C (4095) tiles' not
    C = torch.empty(4096, 4095)
    p = kern.decide(A, B, C)
    assert (p.variant, p.N, p.padded) == ("ragged_n", 4095, False)  # as it is: no copy
    p = kern.decide(A, B.contiguous(), C)  # ldb 4095: B copied to rows of 4096, C in place
    assert (p.variant, p.N, p.copy_a, p.copy_b, p.copy_c, p.b_cols) == ("ragged_n", 4095, False,
                                                                        True, False, 4096)
    p = kern.decide(A, B.contiguous(), C, pad="tiles")  # forced: B and C padded to 4096
    assert (p.variant, p.N, p.copy_a, p.copy_b, p.copy_c) == ("tiles", 4096, False, True, True)
    assert not kern.decide(A, B, C, pad="never").padded
    monkeypatch.setattr(kern, "pad", "never")  # TILEC_SIMT_PAD's attribute
    assert kern.decide(A, B.contiguous(), C).variant == "general"
    small = kern.decide(torch.empty(30, 20), torch.empty(20, 10), torch.empty(30, 10))
    assert not small.padded and small.variant == "general"
