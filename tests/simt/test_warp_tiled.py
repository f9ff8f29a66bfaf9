"""The warp-tiled hierarchy: IR verbs and their trace, the helper's tiles, copies, warp tiles."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
import sympy
from simt_helpers import load

from tilec.errors import ScheduleError
from tilec.ir import GemmFusion
from tilec.ir.threads import ThreadOptions
from tilec.transforms.simt.hierarchy import describe_hierarchy, warp_tiled, warp_tiles
from tilec.transforms.simt.lower import lower_simt
from tilec.transforms.simt.plan import IT, TID

# small instances of the three rows of examples/simt_warp_tiled.py and of the sync pipeline
SMALL = {
    "large-async": dict(M=70, N=72, K=37, BM=32, BN=64, BK=4, WM=16, WN=32, TM=4, TN=4,
                        STAGES=3, FRAGMENTS=2, ASYNC=1),
    "sync-f1": dict(M=64, N=72, K=20, BM=32, BN=32, BK=8, WM=16, WN=32, TM=4, TN=4,
                    STAGES=2, FRAGMENTS=1, ASYNC=0),
    "narrow-lanes": dict(M=40, N=130, K=9, BM=64, BN=32, BK=2, WM=64, WN=16, TM=8, TN=4,
                         STAGES=2, FRAGMENTS=2, ASYNC=1),
    # copy_lanes over column blocks of A's tile, spread copies, swizzled rows (k 8..15 rotated)
    "lanes-spread-swizzle": dict(M=70, N=72, K=37, BM=32, BN=64, BK=16, WM=16, WN=32, TM=4, TN=4,
                                 STAGES=3, FRAGMENTS=2, ASYNC=1, LANES_A=4, SPREAD=3, SWIZZLE=1),
    "sync-swizzle-lanes": dict(M=64, N=72, K=20, BM=32, BN=32, BK=16, WM=16, WN=32, TM=4, TN=4,
                               STAGES=2, FRAGMENTS=1, ASYNC=0, LANES_A=1, SWIZZLE=1),
    # the tile rows walked fastest (BIDx over M's tiles): more tile columns than rows
    "raster-m": dict(M=70, N=200, K=37, BM=32, BN=64, BK=4, WM=16, WN=32, TM=4, TN=4,
                     STAGES=3, FRAGMENTS=2, ASYNC=1, RASTER="m"),
}


def plan_of(name: str):  # type: ignore[no-untyped-def]
    return lower_simt(load("simt_warp_tiled.py", **SMALL[name]))


def test_verbs_are_recorded_and_replay_to_the_same_fusion() -> None:
    f = load("simt_warp_tiled.py", M=512, N=256, K=64, CONFIG="large", PAD_A=8, LANES_A=8,
             SPREAD=4)
    again = GemmFusion.replay(f.schedule)
    assert again.thread_options == f.thread_options == ThreadOptions(
        stages=3, fragments=2, async_copy=True, pad_a=8, pad_b=None, min_blocks=2,
        fma_order="snake_rows", lanes_a=8, copy_slices=4, swizzle_a=True,
        copy_addresses="stride")
    assert "fusion.copy_addresses('stride')" in str(f.schedule)
    assert again.c.structure() == f.c.structure()
    text = str(f.schedule)
    assert "fusion.circular_buffer(3, fragments=2, async_copy=True)" in text
    assert "fusion.smem_pad('A', 8)" in text and "fusion.min_blocks_per_sm(2)" in text
    assert "fusion.fma_order('snake_rows')" in text and "fusion.copy_lanes('A', 8)" in text
    assert "fusion.spread_copies(4)" in text and "fusion.smem_swizzle('A')" in text
    plain = load("simt_warp_tiled.py", M=512, N=256, K=64, CONFIG="large", SWIZZLE=0)
    assert plain.thread_options.swizzle_a is False and "smem_swizzle" not in str(plain.schedule)
    indexed = load("simt_warp_tiled.py", M=512, N=256, K=64, CONFIG="large", ADDR="index")
    assert indexed.thread_options.copy_addresses == "index"
    assert "copy_addresses" not in str(indexed.schedule)


@pytest.mark.parametrize(("call", "match"), [
    (lambda f: f.circular_buffer(3), "stages must be in 1..2"),
    (lambda f: f.circular_buffer(5, async_copy=True), "stages must be in 2..4"),
    (lambda f: f.circular_buffer(2, fragments=3), "fragments must be 1 or 2"),
    (lambda f: f.circular_buffer(2, async_copy=1), "async_copy must be True or False"),
    (lambda f: f.smem_pad("C", 1), "operand must be 'A' or 'B'"),
    (lambda f: f.smem_pad("A", -1), "in 0..32"),
    (lambda f: f.min_blocks_per_sm(0), "in 1..32"),
    (lambda f: f.fma_order("diagonal"), "order must be one of rows, snake_rows, snake_columns"),
    (lambda f: f.copy_lanes("C", 8), "copy_lanes: operand must be 'A' or 'B'"),
    (lambda f: f.copy_lanes("A", 3), "power of 2 in 1..32 but got 3"),
    (lambda f: f.copy_lanes("B", 64), "power of 2 in 1..32 but got 64"),
    (lambda f: f.spread_copies(0), "slices must be an integer in 1..64"),
    (lambda f: f.smem_swizzle("B"), "only A's shared tile"),
    (lambda f: f.copy_addresses("pointer"), "how must be one of index, stride, byte_stride but got 'pointer'"),
])
def test_verb_errors(call, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ScheduleError, match=match):
        call(GemmFusion(64, 64, 64, dtype="fp32"))


@pytest.mark.parametrize(("args", "match"), [
    (((128, 128, 8), (32, 32), (8, 8)), "4 x 4 = 16 lanes"),
    (((128, 128, 8), (48, 64), (8, 8)), "must divide the block tile"),
    (((128, 128, 8), (32, 64), (8, 6)), "divide the thread tile"),
    (((128, 128, 0), (32, 64), (8, 8)), "positive integers"),
])
def test_warp_tiled_errors(args, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ScheduleError, match=match):
        warp_tiled(GemmFusion(256, 256, 64, dtype="fp32"), *args)


@pytest.mark.parametrize(("raster", "fast"), [("n", "N"), ("m", "M")])
def test_raster_binds_the_fast_launch_index_to_the_tiles_it_names(raster: str, fast: str) -> None:
    plan = lower_simt(load("simt_warp_tiled.py", **{**SMALL["raster-m"], "RASTER": raster}))
    bidx = next(s for s in plan.block_symbols if s.name == "bidx")
    # BIDx walks M's tiles (raster m) or N's (raster n): only that index expression holds it
    on_m, on_n = bidx in plan.m_expr.free_symbols, bidx in plan.n_expr.free_symbols
    assert (on_m, on_n) == (fast == "M", fast == "N")
    assert int(plan.bounds[bidx]) == -(-(plan.M if fast == "M" else plan.N) // (32 if fast == "M" else 64))


def test_raster_errors() -> None:
    with pytest.raises(ScheduleError, match="raster must be 'n'"):
        warp_tiled(GemmFusion(256, 256, 64, dtype="fp32"), (128, 128, 8), (32, 64), (8, 8),
                   raster="k")


@pytest.mark.parametrize(("params", "match"), [
    (dict(CONFIG="small8", LANES_A=16), "A's tile copy moves 8 vectors of 1 element"),
    (dict(CONFIG="large", ASYNC=0, STAGES=2, SPREAD=2), "register-staged"),
    (dict(CONFIG="small8", SPREAD=9), "a K tile has 8 k-slices"),
    (dict(CONFIG="large", ASYNC=0, STAGES=2, ADDR="stride"), "copy_addresses: addresses cp.async"),
])
def test_copy_verbs_checked_at_lowering(params, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ScheduleError, match=match):
        lower_simt(load("simt_warp_tiled.py", M=256, N=256, K=64, **params))


@pytest.mark.parametrize("name", [n for n in SMALL if SMALL[n].get("SWIZZLE")])
def test_the_swizzle_permutes_each_row_and_the_reads_undo_it(name: str) -> None:
    """Each shared row k holds every m once; the vector read at aligned ``m0`` has element
    ``m0 + v`` as component ``(v + rotation(k)) % w``, which is where ``place`` put it."""
    plan = plan_of(name)
    a = plan.staging.a
    w = a.swizzle
    assert w == plan.vec_m == 4
    k, m = sympy.symbols("k m", integer=True, nonnegative=True)
    for kv in range(plan.staging.BK):
        cols = [int(a.place(k, m).subs({k: kv, m: mv})) for mv in range(a.rows)]
        assert sorted(cols) == list(range(a.rows))
        assert (cols == list(range(a.rows))) == (kv < 32 // w)  # rows past the first 32/w rotate
        rot = int(a.rotation(k).subs(k, kv))
        for m0 in range(0, a.rows, w):
            assert [m0 + (v + rot) % w for v in range(w)] == cols[m0:m0 + w]


def test_two_fragments_need_an_even_k_tile() -> None:
    with pytest.raises(ScheduleError, match="BK must be even"):
        lower_simt(load("simt_warp_tiled.py", M=64, N=64, K=64, CONFIG="small16", BK=3))


@pytest.mark.parametrize("name", list(SMALL))
def test_every_element_of_c_is_computed_once(name: str) -> None:
    plan = plan_of(name)
    syms = [*plan.block_symbols, *plan.thread_symbols, *(r.symbol for r in plan.reg)]
    f = sympy.lambdify(syms, [plan.m_expr, plan.n_expr, sympy.And(*plan.predicates)], "math")
    seen: Counter[tuple[int, int]] = Counter()
    for pt in itertools.product(*(range(int(plan.bounds[s])) for s in syms)):
        m, n, ok = f(*pt)
        if ok:
            seen[(m, n)] += 1
    assert set(seen) == set(itertools.product(range(plan.M), range(plan.N)))
    assert set(seen.values()) == {1}


@pytest.mark.parametrize("name", list(SMALL))
def test_tile_copies_cover_each_tile_element_once(name: str) -> None:
    plan = plan_of(name)
    st = plan.staging
    assert st is not None and (st.a.vec == 1) == plan.options.async_copy  # cp.async: 4-byte A
    for cp in (st.a, st.b):
        got: Counter[tuple[int, int]] = Counter()
        for tid, it in itertools.product(range(plan.threads), range(cp.iters)):
            if cp.guard_idx and tid + it * plan.threads >= cp.rows * cp.cols // cp.vec:
                continue
            r, c = (int(e.subs({TID: tid, IT: it})) for e in (cp.row, cp.col))
            got.update((r, c + j) for j in range(cp.vec))
        assert set(got) == set(itertools.product(range(cp.rows), range(cp.cols)))
        assert set(got.values()) == {1}


@pytest.mark.parametrize("name", list(SMALL))
def test_warp_tiles_partition_the_block_tile_into_rectangles(name: str) -> None:
    plan = plan_of(name)
    p = SMALL[name]
    tiles = warp_tiles(plan)
    assert len(tiles) == plan.threads // 32
    cells = Counter((r, c) for t in tiles for r in t.rows for c in t.cols)
    assert set(cells) == set(itertools.product(range(plan.BM), range(plan.BN)))
    assert set(cells.values()) == {1}
    for t in tiles:
        assert t.dense and (len(t.rows), len(t.cols)) == (p["WM"], p["WN"])
        assert t.lanes == (p["WM"] // p["TM"], p["WN"] // p["TN"])


def test_fma_order_is_recorded_and_printed() -> None:
    from tilec.codegen.cuda.simt import emit_simt

    f = load("simt_warp_tiled.py", M=256, N=256, K=64, CONFIG="large", FMA_ORDER="snake_columns")
    assert "fusion.fma_order('snake_columns')" in str(f.schedule)
    assert GemmFusion.replay(f.schedule).thread_options.fma_order == "snake_columns"
    src = {o: emit_simt(lower_simt(load("simt_warp_tiled.py", M=256, N=256, K=64, CONFIG="large",
                                        FMA_ORDER=o))) for o in ("rows", "snake_rows", "snake_columns")}
    assert "acc[i][j] = fmaf(am[i_Ki & 1][i], bn[i_Ki & 1][j], acc[i][j]);" in src["rows"]
    assert "const int jj = (i & 1) ? 7 - j : j;" in src["snake_rows"]
    assert "const int ii = (j & 1) ? 7 - i : i;" in src["snake_columns"]


EXPECTED_ORDER = {  # the sequence of (i, j) each order promises (tilec.ir.threads.FMA_ORDERS)
    "rows": lambda tm, tn: [(i, j) for i in range(tm) for j in range(tn)],
    "snake_rows": lambda tm, tn: [(i, tn - 1 - j if i & 1 else j) for i in range(tm) for j in range(tn)],
    "snake_columns": lambda tm, tn: [(tm - 1 - i if j & 1 else i, j) for j in range(tn) for i in range(tm)],
}


@pytest.mark.parametrize("order", list(EXPECTED_ORDER))
def test_printed_fmas_follow_the_order(order: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The printer's FMA block, compiled for the host with fmaf recording its accumulator: each
    accumulator once, in the order's sequence; consecutive FMAs share an operand except where
    ``rows`` changes row."""
    import shutil
    import subprocess

    from tilec.codegen.cuda.simt import SimtCudaPrinter

    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("needs g++ for the host harness")
    plan = lower_simt(load("simt_warp_tiled.py", M=256, N=256, K=64, CONFIG="large", TM=16, TN=8,
                           WM=64, FMA_ORDER=order))
    tm, tn = plan.reg_count("M"), plan.reg_count("N")
    assert (tm, tn) == (16, 8)
    body = "\n".join(SimtCudaPrinter(plan).fma("  ", "am[0]", "bn[0]"))
    src = f"""#include <cstdio>
static float acc[{tm}][{tn}];
static float rec(float* p) {{ const int k = (int)(p - &acc[0][0]); std::printf("%d %d\\n", k / {tn}, k % {tn}); return 0.f; }}
#define fmaf(a, b, c) rec(&(c))
int main() {{
  float am[1][{tm}] = {{}}, bn[1][{tn}] = {{}};
{body}
  return (int)(am[0][0] + bn[0][0]);
}}
"""
    (tmp_path / "order.cpp").write_text(src)
    subprocess.run([gxx, "-Wno-unknown-pragmas", str(tmp_path / "order.cpp"), "-o",
                    str(tmp_path / "order")], check=True, capture_output=True)
    out = subprocess.run([str(tmp_path / "order")], check=True, capture_output=True, text=True).stdout
    seen = [tuple(int(x) for x in line.split()) for line in out.splitlines()]
    assert seen == EXPECTED_ORDER[order](tm, tn)
    shared = sum(a[0] == b[0] or a[1] == b[1] for a, b in itertools.pairwise(seen))
    assert shared == len(seen) - 1 - (tm - 1 if order == "rows" else 0)


@pytest.mark.parametrize(("shape", "strides"), [
    ((4096, 4096, 4096), (8 * 4096, 8 * 4096)),  # the large row: rows 8 apart, 16 and 4 copies
    ((300, 257, 131), (8 * 131, 2 * 257)),  # ragged: 32-bit B copies, rows 2 apart
    ((300, 257, 3), (0, 2 * 257)),  # A's copies span 15 x 24 x 4 bytes: immediate offsets
])
def test_strided_copy_addresses_are_the_copies_indices(shape, strides) -> None:  # type: ignore[no-untyped-def]
    """copy_addresses('stride'): the first copy's index plus ``it`` times the stride is every
    copy's index, for every thread, CTA and K tile (the printed address); copies within
    LDGSTS' immediate offsets keep whole indices, with a note."""
    M, N, K = shape
    plan = lower_simt(load("simt_warp_tiled.py", M=M, N=N, K=K, CONFIG="large"))
    st = plan.staging
    assert plan.options.copy_addresses == "stride"
    assert (st.a.stride, st.b.stride) == strides
    explained = "\n".join(describe_hierarchy(plan))
    for cp in (st.a, st.b):
        said = f"{cp.operand} tile copy" in explained and f"+ it x {cp.stride} (kernel argument " \
            f"{cp.operand.lower()}_step" in explained
        assert said == bool(cp.stride)
        if not cp.stride:
            assert any(f"{cp.operand}'s copies span" in n for n in plan.notes)
            continue
        syms = sorted(cp.global_index.free_symbols - {IT}, key=str)
        f = sympy.lambdify([IT, *syms], cp.global_index, "math")
        g = sympy.lambdify(syms, cp.base_index(), "math")
        ranges = [int(plan.bounds.get(s, plan.threads)) for s in syms]  # tid: the threads
        for pt in itertools.product(*(sorted({*range(0, n, max(1, n // 6)), n - 1}) for n in ranges)):
            for it in range(cp.iters):
                assert f(it, *pt) == g(*pt) + it * cp.stride


def test_byte_stride_is_the_stride_in_bytes() -> None:
    """copy_addresses('byte_stride'): the same strides as 'stride' (elements, in the plan), the
    kernel arguments and the explanation in bytes, 64-bit."""
    from tilec.codegen.cuda.simt import SimtCudaPrinter

    elems = lower_simt(load("simt_warp_tiled.py", M=300, N=257, K=131, CONFIG="large"))
    plan = lower_simt(load("simt_warp_tiled.py", M=300, N=257, K=131, CONFIG="large",
                           ADDR="byte_stride"))
    assert plan.options.copy_addresses == "byte_stride"
    assert (plan.staging.a.stride, plan.staging.b.stride) == (elems.staging.a.stride, elems.staging.b.stride)
    # the kernel's arguments are computed per launch from the leading dimensions (here the
    # general variant's: 32-bit B copies, a thread's copies 2 rows apart); at the reference's
    # lda = K, ldb = N they are the reference plan's strides
    from tilec.transforms.simt.plan import LDA, LDB
    at = {LDA: 131, LDB: 257}
    assert [(a, e.subs(at)) for a, e in SimtCudaPrinter(plan).step_args] == \
        [("a_step", 4 * 8 * 131), ("b_step", 4 * 2 * 257)]
    assert [(a, e.subs(at)) for a, e in SimtCudaPrinter(elems).step_args] == \
        [("a_step", 8 * 131), ("b_step", 2 * 257)]
    assert [str(e) for _, e in SimtCudaPrinter(elems).step_args] == ["8*lda", "2*ldb"]
    explained = "\n".join(describe_hierarchy(plan))
    assert f"+ it x {8 * 131} (kernel argument a_step = {4 * 8 * 131} bytes, 64-bit" in explained
