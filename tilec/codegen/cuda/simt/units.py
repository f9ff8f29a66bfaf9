"""The SIMT kernel's work split (split-K and the Stream-K family, ``fusion.decompose``): the
split's constants and unit walk printed from its :class:`~tilec.transforms.plan.WorkSplit`
(``unit_functions``, shared with the CUDA printer), the kernel body that walks the units around
the ``cp.async`` K loop, the fix-up of partial register tiles, and the workspace the launcher
allocates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilec.codegen.cuda.printer.work import unit_functions
from tilec.codegen.cuda.simt.text import LANE, VT
from tilec.transforms.plan import Fixup
from tilec.transforms.simt.lower import SimtPlan

if TYPE_CHECKING:
    from tilec.codegen.cuda.simt.printer import SimtCudaPrinter

WORK_BEGIN = "// -- work split (host-compilable) --"
WORK_END = "// -- end of work split --"


def partials(plan: SimtPlan) -> bool:
    """Some work units cover part of a tile's K range (a fix-up is printed)."""
    w = plan.work
    return w is not None and (w.split_k or w.stream_k)


def in_place(plan: SimtPlan) -> bool:
    """The atomic fix-up: C is fp32, so partials are added into C itself (``atomicAdd``),
    after the launcher zeroes the rows of the partial tiles: no workspace, no tickets."""
    return partials(plan) and plan.work is not None and plan.work.fixup is Fixup.ATOMIC


def workspace(plan: SimtPlan) -> tuple[int, int]:
    """(fp32 workspace elements, int32 tickets) of the deterministic fix-up: a register tile
    of the CTA per partial slot, a ticket per partial tile; (0, 0) without one."""
    w = plan.work
    if w is None or not partials(plan) or in_place(plan):
        return 0, 0
    words = plan.reg_count("M") * plan.reg_count("N") * plan.threads
    return w.partial_slots * words, w.partial_tiles


def zeroed_rows(plan: SimtPlan) -> tuple[int, int]:
    """Rows ``[r0, r1)`` of C that hold every partial tile (the atomic fix-up zeroes them
    before the kernel; whole tiles among them are stored over the zeros)."""
    w = plan.work
    assert w is not None
    gx = plan.grid[0]
    lo, hi = (0, w.num_tiles) if w.split_k else (w.sk_start, w.sk_end)
    syms = {s.name: s for s in plan.block_symbols}
    rows = []
    for g in range(lo, hi):
        at = {syms[n]: v for n, v in (("bidy", g // gx), ("bidx", g % gx)) if n in syms}
        rows.append(int(plan.m_base.xreplace(at)))
    return min(rows), min(plan.M, max(rows) + plan.BM)


def work_section(pr: SimtCudaPrinter) -> str:
    """The split's constants and its unit walk (``work_unit``, ``fix_of``, ``fix_slot``:
    the WorkSplit formulas, printed as the CUDA printer prints them), between
    ``WORK_BEGIN`` and ``WORK_END``: a host harness compiles them after ``INDEX_HELPERS``."""
    w = pr.p.work
    assert w is not None
    consts = {"WORKERS": w.grid, "GROUPS": w.num_tiles, "K_ITERS": w.k_iters}
    if w.split_k:
        consts["SPLITS"] = w.splits
    elif w.stream_k:
        dp0, dp1 = w.dp_range
        consts |= {"SK_TILES": w.sk_tiles, "SK_CTAS": w.sk_ctas, "SK_START": w.sk_start,
                   "DP_START": dp0, "DP_TILES": dp1 - dp0}
    split = partials(pr.p)
    lines = [WORK_BEGIN, f"namespace {pr.p.name} {{",
             *(f"[[maybe_unused]] constexpr int {k} = {v};" for k, v in consts.items()),
             *unit_functions(w, split), "}  // namespace", WORK_END]
    return "\n".join(lines)


def units(pr: SimtCudaPrinter, ind: str) -> list[str]:
    """The kernel body of a split plan: CTA ``worker`` runs its units ``j = 0, 1, ...``
    (``work_unit``): tile ``g`` (``bidy = g / GX``, ``bidx = g % GX``), K tiles [kb0, kb1),
    the fix-up where the unit covers part of the tile's K range, the epilogue where the
    tile is whole (or this CTA summed its partials)."""
    p = pr.p
    w = p.work
    assert w is not None and p.staging is not None
    tm, tn = p.reg_count("M"), p.reg_count("N")
    gx = p.grid[0]
    split, atomic = partials(p), in_place(p)
    out = [f"{ind}const int worker = blockIdx.x;  // this CTA's units: work_unit(worker, j, ...)",
           f"{ind}int bidx = 0, bidy = 0;  // the unit's tile g = bidy * {gx} + bidx"]
    if split and not atomic:
        out.append(f"{ind}__shared__ int fix_last;  // this CTA took the tile's last ticket")
    out.append(f"{ind}float acc[{tm}][{tn}];  // register tile")
    out += pr.staged_setup(ind)
    i2 = ind + "  "
    out += [f"{ind}for (int j = 0; ; ++j) {{", f"{i2}int g, kb0, kb1;",
            f"{i2}if (!work_unit(worker, j, g, kb0, kb1)) break;",
            f"{i2}bidy = g / {gx}; bidx = g % {gx};"]
    out += pr.loops_flat(i2, tm, tn, "acc[i][j] = 0.f;")
    out += pr.staged_loop(i2, "kb0", "kb1")
    if atomic:  # partials added into C, which the launcher zeroed
        out.append(f"{i2}if (kb0 != 0 || kb1 != K_ITERS) {{  // part of the tile's K range: "
                   "added into C")
        out += pr.epilogue(i2 + "  ", atomic=True)
        out.append(f"{i2}}} else {{")
        out += pr.epilogue(i2 + "  ")
        out.append(f"{i2}}}")
    elif split:
        out += fixup(pr, i2)
        out.append(f"{i2}if (last) {{")
        out += pr.epilogue(i2 + "  ")
        out.append(f"{i2}}}")
    else:
        out += pr.epilogue(i2)
    out += [f"{i2}tilec_cp_async_wait<0>();  // the next unit's copies reuse every buffer",
            f"{i2}__syncthreads();", f"{ind}}}"]
    return out


def fixup(pr: SimtCudaPrinter, ind: str) -> list[str]:
    """A partial unit's fix-up (sets ``last``; whole units write C at once): the partial
    goes to the workspace in the register tile's own layout (float4 ``q`` of thread
    ``tid`` at ``q * THREADS + tid``, a warp's stores contiguous), a barrier and one
    thread's acquire-release ticket (``tilec_ticket``; a fence in every thread cost 2%
    at 4096^3, ``bench/results/simt_front_tail_ablate_*``); the CTA taking the tile's last
    ticket gets the sum in ``acc`` (its slots summed in K order: bitwise repeatable), and
    resets the ticket, leaving the workspace clean.  (The atomic fix-up adds into C instead:
    :func:`in_place`.)"""
    p = pr.p
    w = p.work
    assert w is not None
    tm, tn = p.reg_count("M"), p.reg_count("N")
    assert w.fixup is Fixup.DETERMINISTIC
    vw = 4 if tn % 4 == 0 else 1
    per_row = tn // vw
    nq = tm * per_row
    words = tm * tn * p.threads
    vt = VT[vw]
    lane = (lambda e, j: f"{e}.{LANE[j]}") if vw > 1 else (lambda e, j: e)
    i2, i3 = ind + "  ", ind + "    "

    def regs(q: str) -> list[str]:
        return [f"acc[{q} / {per_row}][{vw} * ({q} % {per_row}) + {j}]" for j in range(vw)]

    pack = (f"make_float4({', '.join(regs('q'))})" if vw > 1 else regs("q")[0])
    store = f"__stcg(mine + q * {p.threads} + tid, {pack});"
    out = [f"{ind}bool last = true;  // this CTA writes the tile",
           f"{ind}if (kb0 != 0 || kb1 != K_ITERS) {{  // part of the tile's K range: fix-up "
           "(deterministic)",
           f"{i2}int f, ord, cnt, slot;",
           f"{i2}fix_of(worker, j, g, f, ord, cnt, slot);",
           f"{i2}(void)ord;",
           f"{i2}{vt}* mine = reinterpret_cast<{vt}*>(ws + (size_t)slot * {words});",
           f"{i2}#pragma unroll",
           f"{i2}for (int q = 0; q < {nq}; ++q) {store}",
           f"{i2}__syncthreads();  // every thread's partial is stored",
           f"{i2}// one acq_rel ticket: its release covers the CTA's stores ordered before it by the",
           f"{i2}// barrier, its acquire the other partials the barrier below orders the reads after",
           f"{i2}if (tid == 0) fix_last = tilec_ticket(tickets + f) == cnt - 1;",
           f"{i2}__syncthreads();",
           f"{i2}last = fix_last;  // read by all before the unit's closing barrier",
           f"{i2}if (last) {{"]
    # acc = slot 0, then += slots 1 .. cnt-1 (K order: bitwise repeatable); a compiler
    # barrier every 8 loads keeps the loads in flight within the register budget
    def summed(op: str) -> list[str]:
        return [f"{i3}  #pragma unroll", f"{i3}  for (int q = 0; q < {nq}; ++q) {{",
                f"{i3}    const {vt} x = __ldcg(src + q * {p.threads} + tid);",
                *(f"{i3}    {r} {op} {lane('x', j)};" for j, r in enumerate(regs("q"))),
                f"{i3}    if (q % 8 == 7) asm volatile(\"\" ::: \"memory\");", f"{i3}  }}"]

    out += [f"{i3}for (int i = 0; i < cnt; ++i) {{",
            f"{i3}  const {vt}* src = reinterpret_cast<const {vt}*>(ws + (size_t)fix_slot(f, i) * {words});",
            f"{i3}  if (i == 0) {{", *("  " + x for x in summed("=")), f"{i3}    continue;",
            f"{i3}  }}", *summed("+="), f"{i3}}}"]
    out += [f"{i3}if (tid == 0) tickets[f] = 0;  // every partial has arrived: reset for the next launch",
            f"{i2}}}", f"{ind}}}"]
    return out
