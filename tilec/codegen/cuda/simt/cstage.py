"""The SIMT epilogue staged through shared memory, as the printer writes it (the plan's
:class:`~tilec.transforms.simt.plan.CStage`, decided in :mod:`tilec.transforms.simt.cstage`):
a barrier (after ``cp.async``'s last wait: every thread is done with the K tiles' buffers), each
thread's register tile put in ``Cs[BM][pitch]`` (the buffers' memory, vector ``st.shared``
where the register tile has 4-element vectors), a barrier, then the CTA's tile written to C row
by row, a warp's lanes on consecutive columns (or added into C: the atomic fix-up's partials
take the same coalesced path).  ``c_put_<variant>`` and ``c_copy_<variant>`` print the same
expressions host-compilably (tests/simt/test_stage_c.py runs them at ragged shapes)."""

from __future__ import annotations

import sympy

from tilec.codegen.cuda.simt.text import VT
from tilec.transforms.simt.plan import CStage, RegAxis

__all__ = ["stage_functions", "staged_epilogue"]


def _stage(pr) -> CStage:
    st = pr.p.c_stage
    assert st is not None
    return st


def put_axes(pr) -> tuple[list[RegAxis], dict[sympy.Symbol, int]]:
    """The register axes the puts loop over (the N vector axis at 0 when a put is a vector)."""
    p, st = pr.p, _stage(pr)
    axes_n, v0 = pr.vec_split("N", st.put_width)
    return [*p.regs("M"), *axes_n], v0


def put_word(pr) -> str:
    """The word of ``Cs`` a thread's put at a register point writes (``put_width`` words)."""
    p, st = pr.p, _stage(pr)
    _, v0 = put_axes(pr)
    return pr.c(p.m_local * st.pitch + p.n_local.xreplace(v0))


def copy_parts(pr) -> tuple[str, str, str, str]:
    """``(word, m, n, guard)`` of copy ``it`` of thread ``tid`` (C expressions; guard ``""``:
    none)."""
    p, st = pr.p, _stage(pr)
    m, n = pr.c(p.m_base + st.row), pr.c(p.n_base + st.col)
    conds = []
    if st.guard_idx:
        conds.append(f"tid + it * {p.threads} < {p.BM * p.BN // st.width}")
    if st.guard_m:
        conds.append("m < M")
    if st.guard_n:
        conds.append("n < N")
    return pr.c(st.word()), m, n, " && ".join(f"({c})" for c in conds)


def staged_epilogue(pr, ind: str, atomic: bool = False) -> list[str]:
    """The register tile to C through shared memory (``atomic``: added into C)."""
    p, st = pr.p, _stage(pr)
    axes, v0 = put_axes(pr)
    fm, fn = pr.c(p.flat("M")), pr.c(p.flat("N").xreplace(v0))
    w, wg = st.put_width, st.width
    if w > 1:
        vals = ", ".join(f"acc[{fm}][{fn} + {j}]" for j in range(w))
        put = f"*reinterpret_cast<{VT[w]}*>(&Cs[{put_word(pr)}]) = make_{VT[w]}({vals});"
    else:
        put = f"Cs[{put_word(pr)}] = acc[{fm}][{fn}];"
    word, m, n, guard = copy_parts(pr)
    val = f"*reinterpret_cast<const {VT[wg]}*>(&Cs[{word}])" if wg > 1 else f"Cs[{word}]"
    if atomic:
        dst = f"reinterpret_cast<{VT[wg]}*>(&C[m * ldc + n])" if wg > 1 else "&C[m * ldc + n]"
        store = f"atomicAdd({dst}, {val});"
    else:
        dst = f"*reinterpret_cast<{VT[wg]}*>(&C[m * ldc + n])" if wg > 1 else "C[m * ldc + n]"
        store = f"{dst} = {val};"
    what = "added into C" if atomic else "to C"
    i2 = ind + "  "
    out = [f"{ind}{{  // epilogue: the register tile {what} through shared memory Cs[{p.BM}][{st.pitch}] "
           "(the K tiles' buffers), by rows"]
    if p.options.async_copy:
        out.append(f"{i2}tilec_cp_async_wait<0>();")
    out += [f"{i2}__syncthreads();  // every thread is done with the K tiles' buffers",
            f"{i2}float* const Cs = smem;"]
    out += pr.reg_loops(i2, axes, [put])
    out += [f"{i2}__syncthreads();  // the CTA's tile is in shared memory",
            f"{i2}#pragma unroll",
            f"{i2}for (int it = 0; it < {st.iters}; ++it) {{  // a warp's lanes on consecutive columns",
            f"{i2}  const int m = {m};",
            f"{i2}  const int n = {n};",
            f"{i2}  {f'if ({guard}) ' if guard else ''}{store}",
            f"{i2}}}", f"{ind}}}"]
    return out


def stage_functions(pr) -> list[str]:
    """``c_put_<variant>`` (the word of ``Cs`` a thread's put at a register point writes,
    ``put_width`` words from it) and ``c_copy_<variant>`` (the word copy ``it`` of thread
    ``tid`` reads, the element ``(m, n)`` of C it writes, ``width`` from ``n``, and whether),
    the expressions the staged epilogue prints; none where the variant is not staged."""
    p = pr.p
    st = p.c_stage
    if st is None:
        return []
    axes, _ = put_axes(pr)
    regs = [str(a.symbol) for a in axes]
    head = ("  [[maybe_unused]] const int M = S.M, N = S.N, K = S.K, lda = S.lda, ldb = S.ldb, "
            "ldc = S.ldc;")
    word, m, n, guard = copy_parts(pr)
    idx = ["tidx", "tidy", "tidz", *regs]
    blk = ["bidx", "bidy", "bidz"]
    return [
        f"TILEC_HD int c_put_{pr.v.name}(const Shape& S, " + ", ".join(f"int {i}" for i in idx) + ") {",
        head, "  " + " ".join(f"(void){i};" for i in idx),
        f"  return {put_word(pr)};  // {st.put_width} word(s) of Cs[{p.BM}][{st.pitch}]", "}",
        f"TILEC_HD bool c_copy_{pr.v.name}(const Shape& S, " + ", ".join(f"int {i}" for i in blk)
        + ", int tid, int it, int& word, int& m, int& n) {",
        head, "  " + " ".join(f"(void){i};" for i in blk),
        f"  word = {word}; m = {m}; n = {n};",
        f"  return {guard or 'true'};  // {st.width} element(s) from n", "}"]
