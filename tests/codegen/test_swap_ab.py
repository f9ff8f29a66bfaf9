"""SWAP_AB=1: the CUDA kernel that computes each tile as C^T = B^T A^T (our M on wgmma's N, so BM
is any multiple of 8): the knob's plumbing and refusals, nvcc over a matrix of tiles, and a host
emulation of the printed epilogues' index maps against the PTX ISA's wgmma D fragment."""

from __future__ import annotations

import itertools
import re
import shutil
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tilec.codegen.cuda.launch import CudaBuildError, compile_cu
from tilec.codegen.cuda.printer import emit
from tilec.errors import ParamError, UnsupportedError
from tilec.runtime.build import kernel_plan, kernel_source
from tilec.runtime.loader import load_schedule
from tilec.transforms.knobs import LATER_KNOBS, Config, parse_knob
from tilec.transforms.plan import KernelPlan

EX = Path(__file__).resolve().parents[2] / "examples" / "gemm_decomposition.py"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
BASE = dict(M=333, N=1000, K=700, GROUP_M=8, BK=64, DECOMP="dp", SPLITS=1, SK_WAVES=1,
            FIXUP="deterministic", LOAD="tma", CM=1, CN=1, SWAP_AB=1)


@cache
def _plan(items: tuple, target: str) -> KernelPlan:
    params = dict(items)
    return kernel_plan(load_schedule(EX, params, target=target, tuned=False), target=target)


def plan(target: str = "cuda", **kw: Any) -> KernelPlan:
    """gemm_decomposition.py lowered for ``target`` with BASE and ``kw`` (WARPS: one consumer
    warpgroup for BN=64, else two; STAGES: 3)."""
    params = {**BASE, "STAGES": 3, **kw}
    params.setdefault("WARPS", 8 if params["BN"] == 64 else 12)
    return _plan(tuple(sorted(params.items())), target)


def fits(BM: int, BN: int) -> bool:
    """The swapped kernel's register rule: N_SUB * BM / 2 accumulators per thread <= 128."""
    consumers = 1 if BN == 64 else 2
    return BN // consumers // 64 * BM // 2 <= 128


# ------------------------------------------------------------------ the knob


def test_swap_ab_is_a_later_knob_shown_only_when_set() -> None:
    cfg = Config()
    assert cfg.SWAP_AB == 0 and LATER_KNOBS["SWAP_AB"] == 0 and "swap" not in cfg.short()
    assert replace(cfg, SWAP_AB=1).short() == cfg.short() + " swap"
    assert replace(cfg, SWAP_AB=1, CM=2).short().endswith(" swap c2x1")
    assert (parse_knob("SWAP_AB", 1), parse_knob("SWAP_AB", "auto")) == (1, "auto")
    with pytest.raises(ParamError, match="SWAP_AB must be 0, 1 or 'auto' but got 2"):
        parse_knob("SWAP_AB", 2)


def test_auto_is_the_swap_rule_and_the_plan_carries_it() -> None:
    s = load_schedule(EX, {"M": 200, "N": 4096, "K": 7168, "SWAP_AB": "auto"}, target="cuda",
                      tuned=False)  # cuda_swap.rule: 200 rows as 2 x 104
    assert (s.params["SWAP_AB"], s.params["BM"], s.params["BN"]) == (1, 104, 64)
    assert kernel_plan(s, target="cuda").swap_ab
    big = load_schedule(EX, {"M": 4096, "N": 4096, "K": 4096, "SWAP_AB": "auto"}, target="cuda",
                        tuned=False)
    assert big.params["SWAP_AB"] == 0 and not kernel_plan(big, target="cuda").swap_ab
    assert plan(BM=104, BN=64).swap_ab


def test_triton_ignores_the_knob() -> None:
    kw = dict(BM=64, BN=64, M=200, N=300, K=100)
    a, b = plan("triton", **kw, WARPS=4), plan("triton", **{**kw, "SWAP_AB": 0}, WARPS=4)
    assert not a.swap_ab and kernel_source(a) == kernel_source(b)


@pytest.mark.parametrize(("kw", "message"), [
    (dict(BM=104, BN=64, EPILOGUE="overlap"), "SWAP_AB=1 writes C .* got epilogue='overlap'"),
    (dict(BM=104, BN=64, WARPS=12), "WARPS must be 8 .* got WARPS=12"),
    (dict(BM=100, BN=64), "BM a multiple of 8 .* got BM=100, BN=64"),
    (dict(BM=104, BN=96, B_LAYOUT="nk"), "BN a multiple of 64 .* got BM=104, BN=96"),
    (dict(BM=168, BN=256), "168 fp32 accumulators per thread for BM=168, BN=256"),
    (dict(BM=256, BN=128, STAGES=4, EPILOGUE="tma"), "'tma' epilogue needs .* fewer STAGES"),
])
def test_what_the_swapped_kernel_refuses_is_one_line(kw: dict, message: str) -> None:
    with pytest.raises(UnsupportedError, match=message):
        emit(plan(**kw))


def test_the_plain_kernel_is_unchanged_by_the_knob_being_zero() -> None:
    kw = dict(BM=128, BN=128, M=1000, N=1000, K=512)
    plain = emit(plan(**kw, SWAP_AB=0))
    assert "p, 1, 1, 0, 1;" in plain and "SWAP_AB" not in plain and "N_SUB" not in plain
    assert "p, 1, 1, 1, 0;" in emit(plan(**kw))  # transpose-A: B's K x N slab
    assert "p, 1, 1, 0, 0;" in emit(plan(**kw, B_LAYOUT="nk"))  # both K-major


# ------------------------------------------------------------------ nvcc

# split-K with the reduce kernel: (params, launch shapes M, N, K with two K parts at least)
REDUCE = [(dict(BM=104, BN=64, SPLITS=3), [(200, 300, 1000), (77, 130, 3000), (5, 64, 700)]),
          (dict(BM=48, BN=128, SPLITS=2, B_LAYOUT="nk"), [(48, 300, 900), (100, 1, 300)]),
          (dict(BM=32, BN=64, SPLITS=16), [(128, 200, 2100)]),
          (dict(BM=104, BN=64, SPLITS=2, CM=2, CN=1), [(333, 200, 500)])]


@needs_nvcc
def test_tile_matrix_compiles_without_warnings(tmp_path: Path) -> None:
    """BM (wgmma's N) from 8 to 256 x BN in 64-column slabs, both B layouts, the direct
    epilogue; the TMA-store epilogue, split-K / Stream-K fix-ups and clusters on a few."""
    cases = [dict(BM=bm, BN=bn, B_LAYOUT=lay, EPILOGUE="direct")
             for bm, bn, lay in itertools.product((8, 48, 80, 104, 160, 168, 256),
                                                  (64, 128, 256), ("kn", "nk")) if fits(bm, bn)]
    cases += [dict(BM=104, BN=64, EPILOGUE="tma"), dict(BM=168, BN=128, EPILOGUE="tma", STAGES=2),
              dict(BM=8, BN=256, EPILOGUE="tma", B_LAYOUT="nk"),
              dict(BM=80, BN=128, DECOMP="splitk", SPLITS=3, FIXUP="deterministic"),
              dict(BM=48, BN=64, DECOMP="splitk", SPLITS=2, FIXUP="atomic", B_LAYOUT="nk"),
              dict(BM=160, BN=128, DECOMP="streamk", FIXUP="deterministic", EPILOGUE="tma"),
              dict(BM=104, BN=64, CM=2, CN=1), dict(BM=104, BN=128, CM=1, CN=2, EPILOGUE="tma"),
              *(dict(**p, DECOMP="splitk", FIXUP="reduce_kernel") for p, _ in REDUCE)]
    assert len(cases) == 48  # (BM >= 160 with BN = 256 needs more than 128 registers)

    # lowered here, one at a time (the multicast derivation is not made for threads: lowered in
    # the pool it now and then raised RecursionError); only nvcc runs in parallel
    sources = [emit(plan(**c)) for c in cases]

    def one(i: int) -> str | None:
        try:
            compile_cu(sources[i], tmp_path / f"s{i}.o", shared=False, werror=True)
        except CudaBuildError as e:
            return f"{cases[i]}: {e}"
        return None

    with ThreadPoolExecutor(max_workers=2) as ex:
        errors = [e for e in ex.map(one, range(len(cases))) if e]
    assert not errors, errors[0]


# ------------------------------------------------------------------ the epilogues, emulated


def fragment(ctid: int, i: int) -> tuple[int, int]:
    """PTX ISA, wgmma .m64nNk16 D fragment: (row, column) of register ``i`` of thread ``ctid``
    of the warpgroup (row < 64: wgmma's M; column < N)."""
    w, lane = divmod(ctid, 32)
    return 16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2


def py(expr: str) -> str:
    """A printed C index expression as Python (its operands are non-negative: / floors)."""
    assert re.fullmatch(r"[\w\s+*/%()&^<>-]+", expr), expr
    return expr.replace("/", "//")


def consts(src: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"constexpr int (\w+) = (-?\d+);", src)}


def expected(cw: int, ns: int, ctid: int, i: int, m0: int, n0: int, wg_n: int) -> tuple[int, int]:
    """C's element that the accumulator holds: wgmma's row is our n, its column our m."""
    r, c = fragment(ctid, i)
    return m0 + c, n0 + cw * wg_n + ns * 64 + r


def select(expr: str) -> str:
    """A printed C select ``c ? x : y`` of names as Python."""
    m = re.fullmatch(r"(\w+) \? (\w+) : (\w+)", expr.strip())
    assert m, expr
    return f"({m[2]} if {m[1]} else {m[3]})"


class Lanes:
    """The printed pair step of the swapped epilogues (direct and TMA), run for the 32 lanes of
    a warp: each lane's two registers (a, b), the shuffle between lanes, the two values it
    stores; a value is (the thread that holds it, its register)."""

    def __init__(self, src: str, row: str, col: str, store: str) -> None:
        self.hi = py(re.search(r"lane = ctid % 32, hi = (.+?);", src).group(1))
        self.a, self.b = (py(x) for x in re.search(
            r"const float a = acc\[ns\]\[(.+?)\], b = acc\[ns\]\[(.+?)\];", src).groups())
        sel, xor = re.search(r"__shfl_xor_sync\(0xffffffffu, (.+?), (\d+)\);", src).groups()
        self.send, self.xor = select(sel), int(xor)
        self.row, self.col = (py(re.search(e, src).group(1)) for e in (row, col))
        self.x, self.y = (select(v) for v in re.search(store, src).groups())

    def run(self, warp: int, **env: int) -> list[tuple[int, int, tuple, tuple]]:
        """(row, column, first value, second value) per lane of warp ``warp``."""
        lanes = [dict(env, warp=warp, lane=lane) for lane in range(32)]
        for e in lanes:
            e["hi"] = eval(self.hi, {}, e)
            e["a"] = (32 * warp + e["lane"], eval(self.a, {}, e))
            e["b"] = (32 * warp + e["lane"], eval(self.b, {}, e))
        sent = [eval(self.send, {}, e) for e in lanes]
        out = []
        for lane, e in enumerate(lanes):
            e["recv"] = sent[lane ^ self.xor]
            e["r"] = eval(self.row, {}, e)
            e["c"] = eval(self.col, {}, e)
            out.append((e["r"], e["c"], eval(self.x, {}, e), eval(self.y, {}, e)))
        return out


@pytest.mark.parametrize(("BM", "BN", "M", "N"), [(104, 64, 200, 4096 - 17), (8, 256, 5, 300),
                                                   (168, 128, 333, 130), (48, 128, 48, 128)])
def test_direct_epilogue_writes_each_element_once_from_its_register(BM: int, BN: int, M: int,
                                                                     N: int) -> None:
    """The printed direct epilogue run for every lane of every warp: its registers, the shuffle
    between lanes, and the pair each lane stores; each value lands on the C element its register
    holds (the D fragment) and each element of the (ragged) tile is written once."""
    src = emit(plan(BM=BM, BN=BN, EPILOGUE="direct"))
    c = consts(src)
    lanes = Lanes(src, r"const int row = (.+?);  // our m", r"const int col = (.+?);  // our n",
                  r"put\(row, col, ([^,]+), ([^,]+)\);\n")
    tiles = [(tm * BM, tn * BN) for tm in range(-(-M // BM)) for tn in range(-(-N // BN))]
    for m0, n0 in tiles[:2] + tiles[-2:]:  # the first tiles and the ragged last ones
        written: Counter = Counter()
        for cw, warp, ns, j, h in itertools.product(range(c["CONSUMERS"]), range(4),
                                                    range(c["N_SUB"]), range(BM // 8), range(2)):
            for r0, c0, *values in lanes.run(warp, m0=m0, n0=n0, cw=cw, ns=ns, j=j, h=h,
                                             WG_N=c["WG_N"], BM=BM):
                for dn, (owner, i) in enumerate(values):
                    assert (r0, c0 + dn) == expected(cw, ns, owner, i, m0, n0, c["WG_N"])
                    if r0 < M and c0 + dn < N:  # the general variant's mask
                        written[r0, c0 + dn] += 1
        want = {(m, n) for m in range(m0, min(m0 + BM, M)) for n in range(n0, min(n0 + BN, N))}
        assert set(written) == want and set(written.values()) == {1}


def _swizzled(r: int, c: int) -> int:
    """Byte of element (r, c) of a 16-bit box with 128-byte rows, TMA's 128-byte swizzle."""
    return r * 128 + (((c // 8) ^ (r % 8)) * 16) + (c % 8) * 2


@pytest.mark.parametrize(("BM", "BN", "M", "N"), [(104, 64, 200, 4079), (80, 128, 77, 14336),
                                                   (8, 256, 3, 250)])
def test_tma_epilogue_stages_each_element_where_the_store_reads_it(BM: int, BN: int, M: int,
                                                                   N: int) -> None:
    """Every lane's pair lands at the swizzled bytes of its elements in its slab's BM x 64 box
    (two 16-bit halves of one 4-byte word), and the box's TMA store (at column n, row m0,
    clipped at M and N) puts each at its C element."""
    src = emit(plan(BM=BM, BN=BN, EPILOGUE="tma"))
    c = consts(src)
    lanes = Lanes(src, r"const int r = (.+?);  // box row", r"const int c = (.+?);  // box column",
                  r"pack\(([^,]+), ([^,]+)\)\);\n")
    off = py(re.search(r"st_shared_b32\(base \+ (.+?),\n", src).group(1))
    cn, cm = (py(x) for x in re.search(r"tma_store\(&tmC, box, (.+?), (.+?)\);", src).groups())
    assert re.search(r"encode_map\(tmC, .*, BM, 64\)", src)  # the box: BM rows x 64 columns
    m0, n0 = BM * ((M - 1) // BM), BN * ((N - 1) // BN)  # the last (ragged) tile
    written: Counter = Counter()
    for cw, ns in itertools.product(range(c["CONSUMERS"]), range(c["N_SUB"])):
        env0 = dict(m0=m0, n0=n0, cw=cw, ns=ns, WG_N=c["WG_N"])
        box_n, box_m = eval(cn, {}, env0), eval(cm, {}, env0)
        box: dict[int, tuple[int, int]] = {}
        for warp, j, h in itertools.product(range(4), range(BM // 8), range(2)):
            for r, col, *values in lanes.run(warp, **env0, j=j, h=h):
                at = eval(off, {}, dict(r=r, c=col))
                assert at % 4 == 0 and at not in box and 0 <= at < BM * 128
                for half, (owner, i) in enumerate(values):
                    box[at + 2 * half] = expected(cw, ns, owner, i, m0, n0, c["WG_N"])
        for r, col in itertools.product(range(BM), range(64)):  # the TMA store, clipped
            m, n = box_m + r, box_n + col
            assert box[_swizzled(r, col)] == (m, n)
            if m < M and n < N:
                written[m, n] += 1
    want = {(m, n) for m in range(m0, M) for n in range(n0, min(n0 + BN, N))}
    assert set(written) == want and set(written.values()) == {1}


# the reduce-kernel harness's partial placement (wgmma's D fragment) for the swapped tiles: our m
# is the fragment's column, our n its row (also test_cuda_spread_fixup.py)
SWAPPED_PLACEMENT = (
    ("for (int ms = 0; ms < M_SUB; ++ms)", "for (int ms = 0; ms < N_SUB; ++ms)"),
    ("for (int jj = 0; jj < BN / 8; ++jj)", "for (int jj = 0; jj < BM / 8; ++jj)"),
    ("const int r = cw * WG_M + ms * 64 + warp * 16 + lane / 4 + 8 * (i / 2);",
     "const int c = cw * WG_N + ms * 64 + warp * 16 + lane / 4 + 8 * (i / 2);"),
    ("const int c = 8 * jj + 2 * (lane % 4) + i % 2;",
     "const int r = 8 * jj + 2 * (lane % 4) + i % 2;"),
    ("part_float4(rank, cw, ms * (BN / 8) + jj, ctid)",
     "part_float4(rank, cw, ms * (BM / 8) + jj, ctid)"))


def test_reduce_kernel_emulated_on_the_host_computes_a_at_b(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """SWAP_AB=1 with the reduce kernel: tests/codegen/test_cuda_reduce_kernel.py's host
    harness (the work walk, partial slots, ``part_float4``, ``reduce_grid`` and ``reduce_float4``
    from the file itself) with its brute-force partials placed by the swapped D fragment (our m
    is wgmma's column, our n its row): C = A @ B exactly, every element once, padding untouched."""
    pytest.importorskip("numpy")
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    from tests.codegen import test_cuda_reduce_kernel as red

    harness = red.HARNESS
    for old, new in SWAPPED_PLACEMENT:
        assert harness.count(old) == 1, old
        harness = harness.replace(old, new)
    monkeypatch.setattr(red, "HARNESS", harness)
    for i, (params, shapes) in enumerate(REDUCE):
        p = plan(**params, DECOMP="splitk", FIXUP="reduce_kernel")
        assert p.swap_ab and "reduce_kernel(TOut*" in emit(p)
        red._assert_emulation_is_a_at_b(p, shapes, tmp_path / str(i))
