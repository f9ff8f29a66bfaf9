"""Shared-memory bank conflicts of a SIMT kernel: wavefronts per warp request of every shared access.

Shared memory has 32 banks of 4-byte words; a wavefront serves at most one distinct word per bank
(lanes reading the same word share it) and returns at most one register per lane.  A request of
``width`` words per lane (32, 64 or 128 bits) is served in ``width`` phases of ``32 / width``
consecutive lanes (128 bytes of requested data each); a phase takes as many wavefronts as the
most distinct words any bank holds among its lanes:

    wavefronts(request) = sum over phases p of  max over banks b of |{word w of p : w % 32 = b}|

A 64- or 128-bit *load* whose lanes read in pairs (lane n and n^1 the same address for every n,
or n and n^2) packs two lanes' registers in one return: ``width / 2`` phases of twice the lanes.
The ideal is one wavefront per phase; ``conflict = wavefronts / ideal``.  Nsight Compute's
``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st.sum`` on the H200 agree with these counts
(docs/coalescing.md; ``cp.async`` writes are counted apart and not modelled).

Every shared access of a plan (:meth:`SimtPlan.shared_accesses`: the tile copies' stores and the
fragment loads) is a word offset ``f(thread) + g(loop)``, plus terms that mix both.  Adding the
same ``g`` to every lane permutes the banks (``bank(w + g) = (bank(w) + g) % 32``) and keeps
distinct words distinct, so it never changes the count: only the thread terms and the mixed ones
matter.  Those are evaluated exactly for every lane of every warp of the block, at every value of
the loop symbols they mix with (the copy iteration, register indices, ``ki``): the verdict is a
proof by exhaustion over that finite domain, valid for every CTA, buffer and K tile.

``cp.async`` stores (LDGSTS) are charged by the hardware per request at least one wavefront per
128-byte global line they read as well (measured on the H200: a warp's 4-byte copies of 4 rows
x 8 k, conflict-free here, took as many wavefronts as the 4-way conflicts of 1 row x 32 k); the
verdict here is the banks' part alone.

Example (the warp-tiled SGEMM's large configuration: the k-slice reads are conflict-free, and
with the lanes interleaved both are paired, 2 phases each; A's 4-byte ``cp.async`` stores, a
warp over 1 row x 32 k of A, hit 4 words per bank whatever the pad that keeps the 128-bit reads
aligned, unless ``smem_swizzle`` rotates the rows as the row does)::

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.simt.lower import lower_simt
    >>> plan = lower_simt(load_schedule("examples/simt_warp_tiled.py", {"SWIZZLE": 0}).fusion)
    >>> [(r.array, r.kind, r.width, r.wavefronts, r.ideal) for r in analyze_shared(plan)]
    [('As', 'store', 1, 4, 1), ('Bs', 'store', 4, 4, 4), ('As', 'load', 4, 2, 2), ('Bs', 'load', 4, 2, 2)]
    >>> plan = lower_simt(load_schedule("examples/simt_warp_tiled.py", {}).fusion)
    >>> [(r.array, r.kind, r.width, r.wavefronts, r.ideal) for r in analyze_shared(plan)]
    [('As', 'store', 1, 1, 1), ('Bs', 'store', 4, 4, 4), ('As', 'load', 4, 2, 2), ('Bs', 'load', 4, 2, 2)]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from tilec.ir import ceil_div
from tilec.proofs import evaluate_grid
from tilec.transforms.simt.plan import SimtPlan

BANKS = 32
WARP = 32
_MAX_POINTS = 1 << 14  # loop points enumerated per access (the mixed symbols' domain)


@dataclass(frozen=True)
class BankReport:
    array: str
    kind: str
    what: str
    width: int
    wavefronts: int  # worst request over every warp and loop point
    best: int  # fewest
    ideal: int  # one per phase of the worst request
    points: int  # loop points x warps checked
    example: tuple[int, ...]  # the word offsets of the worst request's lanes (from lane 0's)
    per_tile: int = 1  # requests per warp and K tile

    @property
    def conflict(self) -> float:
        return self.wavefronts / self.ideal

    @property
    def verdict(self) -> str:
        if self.wavefronts <= self.ideal:
            return "conflict-free"
        c = self.conflict
        return f"{c:g}-way bank conflict" if c == int(c) else f"{c:.2f}x wavefronts (bank conflicts)"


def paired(words: np.ndarray) -> bool:
    """Lanes read in pairs: ``words[n] == words[n ^ 1]`` for all n, or ``words[n ^ 2]``."""
    n = len(words)
    if n < 32:
        return False
    idx = np.arange(n)
    return any(bool(np.all(words == words[idx ^ d])) for d in (1, 2))


def phases(words: Sequence[int] | np.ndarray, width: int, load: bool = True) -> int:
    """The phases of one warp request (the ideal wavefront count, see the module docstring)."""
    w = np.asarray(words, dtype=np.int64)
    per = max(1, WARP // width) * (2 if load and width > 1 and paired(w) else 1)
    return ceil_div(len(w), per)


def wavefronts(words: Sequence[int] | np.ndarray, width: int, load: bool = True) -> int:
    """Wavefronts of one warp request: lane ``l`` touches words ``words[l] .. words[l]+width-1``.

    >>> wavefronts(list(range(32)), 1), wavefronts([0] * 32, 1), wavefronts([32 * l for l in range(32)], 1)
    (1, 1, 32)
    >>> wavefronts([4 * l for l in range(32)], 4), wavefronts([0] * 32, 4), wavefronts([0] * 32, 4, load=False)
    (4, 2, 4)
    """
    w = np.asarray(words, dtype=np.int64)
    per = max(1, WARP // width)
    if load and width > 1 and paired(w):
        per *= 2
    total = 0
    for p in range(0, len(w), per):
        lanes = w[p:p + per]
        if lanes.size == 0:
            continue
        cells = np.unique((lanes[:, None] + np.arange(width)[None, :]).ravel())
        total += int(np.bincount(cells % BANKS, minlength=BANKS).max())
    return total


def _lane_terms(expr: sympy.Expr, thread: set[sympy.Symbol]) -> sympy.Expr:
    """The terms of ``expr`` that depend on a thread symbol (the rest is uniform per warp)."""
    return sympy.Add(*(t for t in sympy.Add.make_args(sympy.expand(expr)) if t.free_symbols & thread))


def request_wavefronts(word: sympy.Expr, width: int, block: tuple[int, int, int],
                       thread: Sequence[sympy.Symbol], bounds: dict[sympy.Symbol, sympy.Expr],
                       active: sympy.Boolean = sympy.true, load: bool = True
                       ) -> tuple[int, int, int, int, tuple[int, ...]]:
    """``(worst, its ideal, best, checked, worst lanes' offsets)`` over every warp and loop
    point; the worst request is the one with the most wavefronts per phase.

    ``thread``: the symbols ``(tidx, tidy, tidz)`` (or the linear ``tid`` alone, ``block`` then
    ``(threads, 1, 1)``); ``bounds``: every other symbol's extent; ``load``: see :func:`wavefronts`.
    """
    tset = set(thread)
    lane_part = _lane_terms(word, tset)
    others = sorted((lane_part.free_symbols | active.free_symbols) - tset, key=str)
    dx, dy, dz = block
    total = dx * dy * dz
    tids = np.arange(total)
    coords = [tids % dx, (tids // dx) % dy, tids // (dx * dy)][:len(thread)]
    points = list(itertools.product(*(range(int(bounds[s])) for s in others)))
    if len(points) > _MAX_POINTS:
        step = ceil_div(len(points), _MAX_POINTS)
        points = points[::step]  # a regular sample of a large domain (noted by ``checked``)
    syms = [*thread, *others]
    worst, ideal, best, checked, example = 0, 1, 1 << 30, 0, ()
    for pt in points:
        args = [*coords, *(np.full(total, v) for v in pt)]
        vals = np.asarray(evaluate_grid(lane_part, syms, args), dtype=np.int64) \
            if lane_part != 0 else np.zeros(total, dtype=np.int64)
        mask = np.ones(total, dtype=bool) if active is sympy.true else \
            np.asarray(evaluate_grid(active, syms, args), dtype=bool)
        for w0 in range(0, total, WARP):
            lanes = vals[w0:w0 + WARP][mask[w0:w0 + WARP]]
            if lanes.size == 0:
                continue
            n, ph = wavefronts(lanes, width, load), phases(lanes, width, load)
            checked += 1
            best = min(best, n)
            if n * ideal > worst * ph or (n * ideal == worst * ph and n > worst):
                worst, ideal, example = n, ph, tuple(int(v - lanes[0]) for v in lanes)
    return worst, ideal, best, checked, example


def analyze_shared(plan: SimtPlan) -> list[BankReport]:
    """One :class:`BankReport` per shared access of a staged plan (none when K is not staged)."""
    out = []
    for acc in plan.shared_accesses():
        bounds = plan.access_bounds()
        worst, ideal, best, checked, example = request_wavefronts(
            acc.word, acc.width, plan.block, plan.thread_axes(), bounds, acc.active,
            acc.kind == "load")
        out.append(BankReport(acc.array, acc.kind, acc.what, acc.width, worst, best,
                              ideal, checked, example, acc.per_tile))
    return out


def predicted_counters(plan: SimtPlan) -> dict[str, int]:
    """Whole-kernel shared-memory totals the analysis predicts, named as Nsight Compute's
    counters (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`` ...), for shapes whose
    tiles are full (every request has the analysed worst case; the best case must be equal).

    Per warp: the tile copies store ``k_tiles + 1`` times (the prologue's and one per K tile,
    the last of stale registers; ``cp.async`` copies, ``shared_ldgsts_*``, are not counted as
    stores by the hardware); the k-slices are read ``BK`` times per K tile, plus the prologue's
    first slice with two fragment buffers.
    """
    st = plan.staging
    if st is None:
        return {}
    warps = plan.grid[0] * plan.grid[1] * plan.grid[2] * ceil_div(plan.threads, WARP)
    out: dict[str, int] = {}
    for r in analyze_shared(plan):
        if r.kind == "store":  # cp.async copies exactly the K tiles
            n = r.per_tile * (st.k_tiles + (0 if plan.options.async_copy else 1))
        else:
            n = r.per_tile * st.k_tiles + (r.per_tile // st.BK if plan.options.fragments == 2 else 0)
        key = "ld" if r.kind == "load" else "ldgsts" if plan.options.async_copy else "st"
        out[f"shared_{key}_wavefronts"] = out.get(f"shared_{key}_wavefronts", 0) + warps * n * r.wavefronts
        if not plan.options.async_copy:  # the hardware counts cp.async's waits as loads too
            out[f"shared_{key}_requests"] = out.get(f"shared_{key}_requests", 0) + warps * n
    return out


def explain_banks(plan: SimtPlan) -> str:
    """A table of :func:`analyze_shared` for ``tilec explain`` (the model in the module docstring)."""
    reports = analyze_shared(plan)
    if not reports:
        return "no shared memory (K is not staged)"
    st = plan.staging
    assert st is not None
    lines = [f"shared memory (32 banks x 4 bytes; a request of w words per lane is served in w "
             f"phases of 32/w lanes, w/2 when a load's lanes read in pairs; ideal 1 wavefront "
             f"per phase): As[{st.stages}][{st.BK}]"
             f"[{st.a.pitch}] (A transposed, pad {st.a.pitch - plan.BM}),"
             f" Bs[{st.stages}][{st.BK}][{st.b.pitch}] (pad {st.b.pitch - plan.BN})", ""]
    for r in reports:
        lines.append(f"  {r.array} {r.kind:<5} {32 * r.width:>3}-bit  {r.wavefronts} wavefront"
                     f"{'s' if r.wavefronts != 1 else ' '} (ideal {r.ideal})  {r.verdict:<22} "
                     f"{r.what}; {r.points} warp requests checked")
    return "\n".join(lines)
