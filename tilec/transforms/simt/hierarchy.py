"""The CUTLASS SIMT hierarchy (seed 003) on the IR: :func:`warp_tiled` writes a CTA's block,
warp and thread tiles with the IR's verbs; :func:`warp_tiles` derives back, from any lowered
:class:`~tilec.transforms.simt.lower.SimtPlan`, which rows and columns each warp computes, and
:func:`describe_hierarchy` says it in words (``tilec explain``)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import sympy

from tilec.ir import GemmFusion, ParallelType, ceil_div
from tilec.proofs import evaluate_grid
from tilec.transforms.simt.lower import lower_simt  # noqa: F401 (doctests)
from tilec.transforms.simt.plan import SimtPlan

P = ParallelType


@dataclass(frozen=True)
class WarpTile:
    """The C elements one warp computes (CTA-local rows and columns), derived from the index maps."""

    warp: int
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    dense: bool  # every (row, col) of rows x cols is computed by the warp, each by one lane
    lanes: tuple[int, int]  # distinct row / column positions of the lanes (LM, LN)


def warp_tiles(plan: SimtPlan) -> list[WarpTile]:
    """Per warp of the block, the rows and columns of C's tile it covers (exact enumeration).

    >>> from tilec.runtime.loader import load_schedule
    >>> t = warp_tiles(lower_simt(load_schedule("examples/simt_warp_tiled.py", {}).fusion))
    >>> len(t), len(t[1].rows), len(t[1].cols), t[1].dense, t[1].lanes, t[1].rows[:5]
    (8, 32, 64, True, (4, 8), (0, 1, 2, 3, 4))
    """
    thread = list(plan.thread_axes())
    regs = [r.symbol for r in plan.reg]
    dx, dy, _ = plan.block
    out = []
    for w in range(ceil_div(plan.threads, 32)):
        tids = np.arange(32 * w, min(32 * w + 32, plan.threads))
        coords = [tids % dx, (tids // dx) % dy, tids // (dx * dy)]
        cells: set[tuple[int, int]] = set()
        lane_rows, lane_cols = set(), set()
        count = 0
        for pt in itertools.product(*(range(r.extent) for r in plan.reg)):
            args = [*coords, *(np.full(len(tids), v) for v in pt)]
            m = np.asarray(evaluate_grid(plan.m_local, thread + regs, args), dtype=np.int64)
            n = np.asarray(evaluate_grid(plan.n_local, thread + regs, args), dtype=np.int64)
            m, n = np.broadcast_to(m, tids.shape), np.broadcast_to(n, tids.shape)
            if not any(pt):
                lane_rows, lane_cols = set(m.tolist()), set(n.tolist())
            cells.update(zip(m.tolist(), n.tolist(), strict=True))
            count += len(tids)
        rows = tuple(sorted({r for r, _ in cells}))
        cols = tuple(sorted({c for _, c in cells}))
        dense = len(cells) == len(rows) * len(cols) == count
        out.append(WarpTile(w, rows, cols, dense, (len(lane_rows), len(lane_cols))))
    return out


def _runs(values: tuple[int, ...]) -> str:
    """``0-7, 16-23`` for the runs of consecutive integers."""
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in runs)


def describe_hierarchy(plan: SimtPlan) -> list[str]:
    """The block / warp / thread tiles and the K pipeline, as ``tilec explain`` prints them."""
    gx, gy, gz = plan.grid
    tiles = warp_tiles(plan)
    t0 = tiles[0]
    tm, tn = plan.reg_count("M"), plan.reg_count("N")
    lines = [f"block tile {plan.BM} x {plan.BN} (grid {gx} x {gy} x {gz}), {plan.threads} threads "
             f"= {len(tiles)} warp(s)"]
    if t0.dense:
        lines.append(f"warp tile {len(t0.rows)} x {len(t0.cols)}: warp 0 rows {_runs(t0.rows)}, "
                     f"columns {_runs(t0.cols)}; lanes {t0.lanes[0]} x {t0.lanes[1]}")
    else:
        lines.append(f"warps cover no rectangle of C (warp 0: {len(t0.rows)} rows x "
                     f"{len(t0.cols)} columns, not all of them)")
    vm, vn = plan.vec_m if plan.staging else 1, plan.vec_n
    lines.append(f"thread tile {tm} x {tn} ({tm // vm} x {tn // vn} vectors of {vm} x {vn}), "
                 f"FMAs in {plan.options.fma_order} order")
    st = plan.staging
    if st is not None:
        o = plan.options
        how = "cp.async" if o.async_copy else "ld.global -> registers -> st.shared"
        if o.async_copy and o.copy_slices > 1:
            how += f" spread over the first {o.copy_slices} k-slices"
        lines.append(f"K tiles of {st.BK}: {st.stages} shared buffer(s) per operand ({how}), "
                     f"{o.fragments} register fragment(s) of the k-slice"
                     + (f", {o.min_blocks} CTA(s) per SM" if o.min_blocks else ""))
        if st.a.swizzle > 1:
            w = st.a.swizzle
            k, m = sympy.symbols("k m", integer=True, nonnegative=True)
            lines.append(f"A tile swizzled (smem_swizzle): element (m, k) at As[k][{st.a.place(k, m)}], "
                         f"read as {32 * w}-bit vectors rotated by {st.a.rotation(k)}")
        for cp in (st.a, st.b):
            per_row = cp.cols // cp.vec
            lanes = o.lanes(cp.operand) or per_row
            lines.append(f"{cp.operand} tile copy: {cp.rows} x {cp.cols} in {32 * cp.vec}-bit "
                         f"pieces, a warp over {max(1, 32 // lanes)} row(s) x {min(32, lanes) * cp.vec} "
                         f"column(s)" + (" (copy_lanes)" if o.lanes(cp.operand) else "")
                         + (f"; addresses: a pointer per thread and K tile + it x {cp.stride} "
                            f"(kernel argument {cp.operand.lower()}_step"
                            + (f" = {4 * cp.stride} bytes, 64-bit" if o.copy_addresses == "byte_stride"
                               else "") + ", copy_addresses)"
                            if cp.stride else ""))
    return lines


# -- schedule helper ---------------------------------------------------------------------------


def warp_tiled(fusion: GemmFusion, block: tuple[int, int, int], warp: tuple[int, int],
               thread: tuple[int, int], vector: int = 4, interleave: int = 1,
               raster: str = "n") -> GemmFusion:
    """Schedule ``fusion.c`` as the CUTLASS SIMT hierarchy with the IR's verbs (all recorded).

    ``block = (BM, BN, BK)``: a CTA's tile of C (``BIDy``, ``BIDx``) and the K tile staged in
    shared memory; ``warp = (WM, WN)``: a warp's tile, ``(BM/WM) x (BN/WN)`` warps per CTA;
    ``thread = (TM, TN)``: a thread's register tile, cut into ``(TM/v) x (TN/v)`` vectors of
    ``v = vector`` elements spread over the warp tile, so that the lanes of a warp read one
    contiguous run of each k-slice (``LM x LN = (WM/TM) x (WN/TN)`` lanes, 32 in all).  C's
    ``[M, N, rK]`` becomes::

        [Mo, No, (Wm, Wn, Lm, Ln), Ko, Ki, Rm, Vm, Rn, Vn]      m = Mo*BM + Wm*WM + Rm*LM*v + Lm*v + Vm
         BIDy BIDx TIDx                 Vectorize  Vectorize   tid = ((Wm*WNc + Wn)*LM + Lm)*LN + Ln

    so ``tid // 32`` is the warp and ``tid % 32 = Lm*LN + Ln`` the lane.

    ``interleave = I > 1`` orders the lanes as CUTLASS's ``RowMajorInterleaved<I>``: ``Lm`` is
    split into ``Lmo, Lmi`` (``Lm = Lmo*I + Lmi``) and the lane is ``(Lmo*LN + Ln)*I + Lmi``, so
    that with ``I = 2`` lanes ``n`` and ``n ^ 1`` read the same B vector and lanes ``n`` and
    ``n ^ 2`` the same A vector: both k-slice reads are paired loads, served in half the phases
    (:mod:`tilec.transforms.simt.banks`)::

        [Mo, No, (Wm, Wn, Lmo, Ln, Lmi), Ko, Ki, Rm, Vm, Rn, Vn]

    ``raster`` says which tile index the launch walks fastest (``BIDx``): ``"n"`` the tile
    columns (the CTAs of a wave share a row of A tiles and stream B), ``"m"`` the tile rows
    (they share a column of B tiles: where B is far larger than A and L2, e.g. a vocabulary
    projection, each B tile then leaves DRAM about once instead of once per tile row).

    >>> from tilec.ir import GemmFusion
    >>> f = warp_tiled(GemmFusion(256, 256, 64, dtype="fp32"), (128, 128, 8), (32, 64), (8, 8))
    >>> print(f.c)
    C[iBIDy.Mo{2}, iBIDx.No{2}, iTIDx.Wm_Wn_Lm_Ln{256}, rS.Ko{8}, rS.Ki{8}, iS.Rm{2}, iVectorize.Vm{4}, iS.Rn{2}, iVectorize.Vn{4}]
    """
    from tilec.errors import ScheduleError

    (BM, BN, BK), (WM, WN), (TM, TN), v = block, warp, thread, vector
    for name, val in (("block", block), ("warp", warp), ("thread", thread)):
        if any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in val):
            raise ScheduleError(f"warp_tiled: {name} must be positive integers but got {val!r}")
    if v not in (1, 2, 4) or TM % v or TN % v:
        raise ScheduleError(f"warp_tiled: vector must be 1, 2 or 4 and divide the thread tile "
                            f"{thread} but got {v}")
    if BM % WM or BN % WN or WM % TM or WN % TN:
        raise ScheduleError(f"warp_tiled: the warp tile {warp} must divide the block tile "
                            f"{(BM, BN)} and be a multiple of the thread tile {thread}")
    lanes = (WM // TM) * (WN // TN)
    if isinstance(interleave, bool) or not isinstance(interleave, int) or interleave < 1 \
            or (WM // TM) % interleave:
        raise ScheduleError(f"warp_tiled: interleave must be a positive integer dividing the "
                            f"{WM // TM} lane rows of the warp tile but got {interleave!r}")
    if lanes != 32:
        raise ScheduleError(f"warp_tiled: a warp tile {warp} of thread tiles {thread} has "
                            f"{WM // TM} x {WN // TN} = {lanes} lanes; a warp has 32")
    c = fusion.c
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    # Mi -> [Wm, Rm, Lm, Vm]: Mi = Wm*WM + Rm*(LM*v) + Lm*v + Vm; then Ni the same
    c.split(1, BM // WM, inner=False, names=("Wm", "Mw")).split(2, TM // v, inner=False, names=("Rm", "Ml"))
    c.split(3, v, names=("Lm", "Vm"))
    c.split(6, BN // WN, inner=False, names=("Wn", "Nw")).split(7, TN // v, inner=False, names=("Rn", "Nl"))
    c.split(8, v, names=("Ln", "Vn"))
    if interleave == 1:
        # [Mo, Wm, Rm, Lm, Vm, No, Wn, Rn, Ln, Vn, Ko, Ki] -> [Mo, No, Wm, Wn, Lm, Ln, Ko, Ki, Rm, Vm, Rn, Vn]
        c.reorder([0, 5, 1, 6, 3, 8, 10, 11, 2, 4, 7, 9])
        c.merge(2).merge(2).merge(2)
    else:
        c.split(3, interleave, names=("Lmo", "Lmi"))
        # [Mo, Wm, Rm, Lmo, Lmi, Vm, No, Wn, Rn, Ln, Vn, Ko, Ki]
        #   -> [Mo, No, Wm, Wn, Lmo, Ln, Lmi, Ko, Ki, Rm, Vm, Rn, Vn]
        c.reorder([0, 6, 1, 7, 3, 9, 4, 11, 12, 2, 5, 8, 10])
        c.merge(2).merge(2).merge(2).merge(2)
    if raster not in ("n", "m"):
        raise ScheduleError(f"warp_tiled: raster must be 'n' (tile columns fastest) or 'm' (tile "
                            f"rows fastest) but got {raster!r}")
    fast, slow = (1, 0) if raster == "n" else (0, 1)
    c.parallelize(slow, P.BIDy).parallelize(fast, P.BIDx).parallelize(2, P.TIDx)
    if v > 1:
        c.parallelize(6, P.Vectorize).parallelize(8, P.Vectorize)
    fusion.propagate()
    return fusion
