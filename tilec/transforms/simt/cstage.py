"""The SIMT epilogue staged through shared memory: whether a variant's C stores go through a
CTA tile in shared memory, and its layout (:class:`~tilec.transforms.simt.plan.CStage`).

A thread's register tile holds ``TM x TN`` elements spread over the warp tile (the warp-tiled
kernel: 4-element vectors 32 columns apart, lanes 4 columns apart).  Stored straight to C with
32-bit stores (C's rows not proven 16-byte aligned: a ragged ``N`` or ``ldc``), a warp's store
instruction writes one element of 32 different 16-byte chunks, so the 32-byte sectors of C go
through L2 about four times each.  Staged, every thread first puts its register tile in a
``BM x pitch`` tile of shared memory (the K tiles' buffers, free once the main loop is done: a
barrier first), then, after a second barrier, the CTA writes its tile of C row by row, a warp's
lanes on consecutive columns: each 32-bit store instruction 128 contiguous bytes.

The decision (``fusion.stage_c``, :mod:`tilec.ir.threads`): unset, a staged-K plan stages
where its C stores are 32-bit (``vec_c == 1``); ``stage_c(True)`` stages every variant (the
copy then writes ``vec_c`` elements per lane); ``stage_c(False)`` none.  The tile must fit in
the K tiles' shared memory (``SmemStaging.smem_bytes``) and the register tiles must cover it
exactly (``threads * TM * TN == BM * BN``); otherwise the epilogue stays as it was and the
plan's notes say why.  The row pitch is ``BN`` plus the pad (a multiple of the put width, at
most 32) whose puts take the fewest wavefronts (:func:`~tilec.transforms.simt.banks.request_wavefronts`,
exhaustive over every warp and register point), the smallest on a tie.
"""

from __future__ import annotations

import sympy

from tilec.ir.threads import ThreadOptions
from tilec.transforms.simt.banks import request_wavefronts
from tilec.transforms.simt.plan import IT, TID, CStage, RegAxis, SmemStaging, vec0
from tilec.transforms.simt.staging import divides, simplify

MAX_PAD = 32


def plan_c_stage(opts: ThreadOptions, staging: SmemStaging | None, BM: int, BN: int,
                 block: tuple[int, int, int], thread_axes: tuple[sympy.Symbol, ...],
                 reg: list[RegAxis], m_local: sympy.Expr, n_local: sympy.Expr, vec_n: int,
                 vec_c: int, sizes: tuple[sympy.Expr | int, sympy.Expr | int],
                 preds: list[sympy.Boolean], bounds: dict[sympy.Symbol, sympy.Expr],
                 notes: list[str]) -> CStage | None:
    """The staged epilogue of a plan (None: C stored from the registers), its reasons in
    ``notes`` (see the module docstring).  ``sizes``: the variant's ``M`` and ``N``;
    ``preds``: the register epilogue's guards (IR predicates): a copy is guarded by ``m < M``
    (``n < N``) unless ``M`` is a multiple of ``BM`` and no predicate names ``M`` (the tile's
    rows, which the copies cover as the registers do, are then all below ``M``)."""
    if staging is None:
        return None  # lower.py notes a stage_c of an unstaged plan with the other copy verbs
    if opts.stage_c is False:
        notes.append("C epilogue: stored from the registers (stage_c(False))")
        return None
    if opts.stage_c is None and vec_c > 1:
        return None  # 128/64-bit stores: a warp's store already covers whole sectors
    threads = block[0] * block[1] * block[2]
    regs = 1
    for r in reg:
        regs *= r.extent
    if threads * regs != BM * BN:
        notes.append(f"C epilogue: not staged (the register tiles hold {threads * regs} elements, "
                     f"the CTA tile {BM}x{BN} {BM * BN})")
        return None
    put = vec_n if any(r.dim == "N" and r.vector for r in reg) else 1
    width = vec_c
    room = staging.smem_bytes
    if room < 4 * BM * BN:
        notes.append(f"C epilogue: not staged (the {BM}x{BN} tile, {4 * BM * BN} bytes, does not "
                     f"fit in the K tiles' {room} bytes of shared memory)")
        return None
    assert BN % width == 0, (BN, width)  # a copy's vector never straddles two rows
    step = max(put, width)
    n_put = n_local.xreplace(vec0(reg, "N")) if put > 1 else n_local
    best: tuple[float, int, int, int] | None = None
    for pad in range(0, MAX_PAD + 1, step):
        if 4 * BM * (BN + pad) > room:
            break
        word = m_local * (BN + pad) + n_put
        worst, ideal, _, _, _ = request_wavefronts(word, put, block, thread_axes, bounds, load=False)
        key = (worst / ideal, pad, worst, ideal)
        if best is None or key[0] < best[0]:
            best = key
    assert best is not None
    _, pad, worst, ideal = best
    pitch = BN + pad
    total = BM * BN // width
    iters = -(-total // threads)
    ib = {TID: sympy.Integer(threads), IT: sympy.Integer(iters)}
    e = (TID + IT * threads) * width
    row = simplify(sympy.floor(e / BN), ib)
    col = simplify(sympy.Mod(e, BN), ib)
    named = set().union(*(q.free_symbols for q in preds)) if preds else set()

    def guard(tile: int, size: sympy.Expr | int) -> bool:
        return not divides(tile, size) or bool(sympy.sympify(size).free_symbols & named)

    M, N = sizes
    stage = CStage(pitch=pitch, put_width=put, width=width, iters=iters, guard_idx=total % threads != 0,
                   row=row, col=col, guard_m=guard(BM, M), guard_n=guard(BN, N),
                   wavefronts=worst, ideal=ideal)
    lanes = "consecutive columns" if BN % (32 * width) == 0 else f"rows of {BN} columns"
    notes.append(f"C epilogue: staged through shared memory Cs[{BM}][{pitch}] ({4 * BM * pitch} of the "
                 f"K tiles' {room} bytes): the register tile put {32 * put}-bit ({worst} wavefront(s), "
                 f"ideal {ideal}), then C written by rows, a warp's {32 * width}-bit stores on {lanes} "
                 f"({32 * 4 * width} bytes), {iters} per thread")
    return stage
