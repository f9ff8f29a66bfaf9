"""The staged K tiles of a SIMT kernel: how the threads of a CTA copy the A and B tiles from
global to shared memory (:class:`TileCopy`: linear thread id -> (row, col), vector width proven
from alignment facts, A stored transposed and optionally swizzled, copies addressed by index or
by a stride argument) and the buffers they fill (:class:`SmemStaging`: stages, fragments, row
pads chosen against bank conflicts), with the index simplifier the SIMT lowering proves with.
:func:`~tilec.transforms.simt.lower.lower_simt` builds them (``staging``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import sympy

from tilec.errors import ScheduleError, UnsupportedError
from tilec.ir import ceil_div, index_symbol
from tilec.ir.threads import ThreadOptions
from tilec.ir.types import SMEM_LIMIT
from tilec.proofs import Context
from tilec.proofs import simplify as prove_simplify
from tilec.transforms.simt.banks import request_wavefronts
from tilec.transforms.simt.plan import IT, TID, SmemStaging, TileCopy

VECTOR_WIDTHS = (4, 2, 1)  # fp32 elements per 128-, 64-, 32-bit access
STATIC_SMEM = 48 * 1024  # static shared memory per CTA; more is dynamic (opted in at launch)


def simplify(expr: sympy.Expr, bounds: dict[sympy.Symbol, sympy.Expr]) -> sympy.Expr:
    """Simplify an index expression under ``0 <= s < bounds[s]`` with the proofs engine.

    """
    expr = sympy.expand(expr)
    ctx = Context()
    for s, b in bounds.items():
        ctx.bound(s, b)
    return sympy.expand(prove_simplify(expr, ctx).expr)


def proven_multiple(expr: sympy.Expr, d: int, bounds: dict[sympy.Symbol, sympy.Expr]) -> bool:
    """True when ``expr % d == 0`` for every point of the bounds (proved, never guessed); a
    size symbol (``M``, ``lda``) is a multiple only where the variant's facts make it one
    (``N = 128*N_q``)."""
    if d == 1:
        return True
    return simplify(sympy.Mod(expr, d), bounds) == 0


def divides(d: int, size: sympy.Expr | int) -> bool:
    """``size % d == 0`` as sympy decides it without bounds: always for a concrete size, for a
    symbolic one only when it is written as a multiple of ``d`` (a variant's fact)."""
    return sympy.Mod(size, d) == 0


def stage_tiles(bk: int, ko: sympy.Symbol, ki: sympy.Symbol, k_tiles: sympy.Expr | int,
                opts: ThreadOptions, sizes: tuple[sympy.Expr, ...], BM: int, BN: int,
                m_base: sympy.Expr, n_base: sympy.Expr, block: tuple[int, int, int],
                frag: tuple[sympy.Expr, int, sympy.Expr, int], bounds: dict,
                notes: list[str]) -> SmemStaging:
    """The K tile copies and shared layouts: A stored transposed ``As[k][m]``, B as ``Bs[k][n]``;
    each row padded as the schedule says, or by the pad with the fewest bank-conflict wavefronts
    (:mod:`tilec.transforms.simt.banks`) among those that keep the fragment reads aligned.

    ``sizes``: ``(M, N, K, lda, ldb)``, integers (the reference launch) or symbols (a run-time
    variant: a guard is left out, a vector kept, only where the variant's facts prove it)."""
    M, N, K, lda, ldb = sizes
    threads = block[0] * block[1] * block[2]
    m_frag, vec_m, n_frag, vec_n = frag
    k0 = ko * bk
    # A tile: BM rows (m) x BK cols (k), contiguous along k in global memory
    # cp.async cannot transpose a vector: A's copies are 4-byte with async copies
    va = 1 if opts.async_copy else next(v for v in VECTOR_WIDTHS if bk % v == 0
                                         and divides(v, K) and divides(v, lda))
    a = _copy("A", BM, bk, va, threads,
              lambda r, c: (m_base + r) * lda + k0 + c,
              lambda r, c: sympy.And(sympy.true if divides(BM, M) else sympy.Lt(m_base + r, M),
                                     sympy.true if divides(bk, K) else sympy.Lt(k0 + c, K)),
              transposed=True, lanes=opts.lanes("A"))
    # a cp.async copy may straddle the row's end (N not a multiple of the width, ldb one): it
    # copies the row's part of the vector and zero-fills the rest (``TileCopy.edge``)
    vb = next(v for v in VECTOR_WIDTHS if BN % v == 0 and divides(v, ldb)
              and (divides(v, N) or opts.async_copy) and proven_multiple(n_base, v, bounds))
    b = _copy("B", bk, BN, vb, threads,
              lambda r, c: (k0 + r) * ldb + n_base + c,
              lambda r, c: sympy.And(sympy.true if divides(bk, K) else sympy.Lt(k0 + r, K),
                                     sympy.true if divides(BN, N) else sympy.Lt(n_base + c, N)),
              transposed=False, lanes=opts.lanes("B"))
    if not divides(vb, N):  # the guard keeps K's part; the edge (<= 0: nothing read) N's
        k_guard = sympy.true if divides(bk, K) else sympy.Lt(k0 + b.row, K)
        b = replace(b, edge=N - n_base - b.col, guard=k_guard)
        notes.append(f"B tile copy: {32 * vb}-bit cp.async vectors (ldb a multiple of {vb}); the "
                     f"one at the end of a row copies its columns < N (the source size) and "
                     f"zero-fills the rest")
    if opts.swizzle_a:  # rotate by whole read vectors, and by k inside one
        if vec_m == 1:
            notes.append("smem_swizzle: the k-slice reads of A are 32-bit; nothing to rotate "
                         "(an odd pad spreads them)")
        elif bk <= 32 // vec_m:
            notes.append(f"smem_swizzle: rows k rotate by k // {32 // vec_m}; a K tile of {bk} "
                         f"is not rotated")
        a = replace(a, swizzle=vec_m)
    a = replace(a, pitch=BM + _pad(a, opts.pad_a, ki, m_frag, vec_m, block, bounds))
    b = replace(b, pitch=BN + _pad(b, opts.pad_b, ki, n_frag, vec_n, block, bounds))
    for cp, w in ((a, vec_m), (b, max(vec_n, b.vec))):
        if cp.pitch % w:
            raise ScheduleError(
                f"smem_pad: the rows of {cp.operand}'s shared tile ({cp.pitch} elements with the "
                f"pad) must stay a multiple of {w} for its {32 * w}-bit accesses")
    if va < 4 and not opts.async_copy:
        notes.append(f"A tile copy uses {32 * va}-bit loads (BK={bk}, K={K}, lda={lda})")
    if vb < 4:
        notes.append(f"B tile copy uses {32 * vb}-bit loads (BN={BN}, N={N}, ldb={ldb})")
    if opts.copy_slices > 1 and not opts.async_copy:
        raise ScheduleError("spread_copies: spreads cp.async copies; the schedule's K tiles are "
                            "register-staged (circular_buffer(..., async_copy=True) to use it)")
    if opts.copy_slices > bk:
        raise ScheduleError(f"spread_copies: a K tile has {bk} k-slices; the copies cannot be "
                            f"spread over {opts.copy_slices}")
    if opts.copy_addresses in ("stride", "byte_stride"):
        if not opts.async_copy:
            raise ScheduleError("copy_addresses: addresses cp.async copies; the schedule's K tiles "
                                "are register-staged (circular_buffer(..., async_copy=True) to use it)")
        a, b = (_strided(cp, notes) for cp in (a, b))
    if opts.fragments == 2 and bk % 2:
        raise ScheduleError(f"circular_buffer: two register fragments alternate over the k-slices "
                            f"of a K tile, so BK must be even but it is {bk}")
    st = SmemStaging(bk, opts.stages, ko, ki, k_tiles, a, b)
    if st.smem_bytes > SMEM_LIMIT:
        raise UnsupportedError(
            f"SIMT printer: shared memory tiles need {st.smem_bytes} bytes (> {SMEM_LIMIT} per CTA); "
            f"use smaller BM/BN/BK or fewer circular_buffer stages"
        )
    return st


def _copy(op: str, rows: int, cols: int, vec: int, threads: int,
          index: Callable[[sympy.Expr, sympy.Expr], sympy.Expr],
          guard: Callable[[sympy.Expr, sympy.Expr], sympy.Boolean], transposed: bool,
          lanes: int | None = None) -> TileCopy:
    """Copy number ``idx = tid + it * threads`` moves ``vec`` elements at (row, col): with
    ``lanes`` (``fusion.copy_lanes``) ``idx = (cb * rows + row) * lanes + l`` and col
    ``vec * (cb * lanes + l)`` (column block ``cb`` of ``lanes`` vectors, rows walked first),
    else ``idx = row * (cols / vec) + col / vec``."""
    per_row = cols // vec
    total = rows * per_row
    n = per_row if lanes is None else lanes
    if per_row % n:
        raise ScheduleError(
            f"copy_lanes: {op}'s tile copy moves {per_row} vectors of {vec} element(s) per row "
            f"({rows} x {cols} tile); its lanes along a row ({n}) must divide that")
    if threads % n == 0:  # (tid + it*T)/n = tid/n + it*(T/n), (tid + it*T) % n = tid % n
        q, lane = sympy.floor(TID / n) + IT * (threads // n), sympy.Mod(TID, n)
    else:
        idx = TID + IT * threads
        q, lane = sympy.floor(idx / n), sympy.Mod(idx, n)
    if n == per_row:  # one column block: q is the row
        row, col = q, vec * lane
    else:
        b = {TID: sympy.Integer(threads), IT: sympy.Integer(ceil_div(total, threads))}
        row = simplify(sympy.Mod(q, rows), b)
        col = simplify(vec * (n * sympy.floor(q / rows) + lane), b)
    return TileCopy(op, rows, cols, vec, ceil_div(total, threads), total % threads != 0, row, col,
                    index(row, col), guard(row, col), 0, transposed)


LDGSTS_OFFSET = 2048  # bytes: ptxas folds offsets in [-2048, 2048) into LDGSTS (sm_90a SASS)


def _strided(cp: TileCopy, notes: list[str]) -> TileCopy:
    """``cp`` with its stride between copies (``fusion.copy_addresses``), when its
    index is linear in the copy number and the copies span more than LDGSTS' immediate offsets
    (closer copies are one instruction each already: ptxas folds the offsets)."""
    step = sympy.expand(cp.global_index - cp.base_index())
    c = step.coeff(IT)
    if cp.iters == 1:
        return cp
    # a stride may be a multiple of a run-time size (the leading dimension: ``8*lda``), never
    # of a loop index
    loop = {s for s in c.free_symbols if s.name in ("tid", "it") or s.name.startswith(("i_", "bid", "tid"))}
    if loop or sympy.expand(step - c * IT) != 0 or not c.is_positive:
        notes.append(f"copy_addresses: {cp.operand}'s copy index is not a positive multiple of the "
                     f"copy number ({step}); its copies keep whole indices")
        return cp
    if c.is_Integer and 4 * int(c) * (cp.iters - 1) < LDGSTS_OFFSET:
        notes.append(f"copy_addresses: {cp.operand}'s copies span {4 * int(c) * (cp.iters - 1)} "
                     f"bytes, within LDGSTS' immediate offsets; they keep whole indices")
        return cp
    return replace(cp, stride=int(c) if c.is_Integer else c)


PADS = (0, 1, 2, 4, 8)  # candidate row pads (elements) when the schedule sets none


def _pad(cp: TileCopy, pad: int | None, ki: sympy.Symbol, frag: sympy.Expr, vec_read: int,
         block: tuple[int, int, int], bounds: dict) -> int:
    """The schedule's pad, else the candidate with the fewest wavefronts over the copy's stores
    and the fragment reads (ties: the smallest)."""
    if pad is not None:
        return pad
    threads = block[0] * block[1] * block[2]
    tid_linear = _tid_linear(block)
    thread = tuple(index_symbol(n) for n in ("tidx", "tidy", "tidz"))
    b = {**bounds, IT: sympy.Integer(cp.iters)}
    active = sympy.Lt(tid_linear + IT * threads, cp.rows * cp.cols // cp.vec) if cp.guard_idx \
        else sympy.true
    row, col = (e.xreplace({TID: tid_linear}) for e in (cp.row, cp.col))
    best: tuple[int, int] | None = None
    for p in PADS:
        pitch = (cp.rows if cp.transposed else cp.cols) + p
        if pitch % max(vec_read, 1) or (not cp.transposed and pitch % cp.vec):
            continue
        stores = [((col + j) * pitch + cp.place(col + j, row), 1) for j in range(cp.vec)] \
            if cp.transposed else [(row * pitch + col, cp.vec)]
        cost = sum(request_wavefronts(w, width, block, thread, b, active, load=False)[0]
                   for w, width in stores)
        cost += request_wavefronts(ki * pitch + frag, vec_read, block, thread, b)[0]
        if best is None or cost < best[0]:
            best = (cost, p)
    assert best is not None
    return best[1]


def _tid_linear(block: tuple[int, int, int]) -> sympy.Expr:
    dx, dy, _ = block
    sx, sy, sz = (index_symbol(n) for n in ("tidx", "tidy", "tidz"))
    return sx + dx * (sy + dy * sz)
