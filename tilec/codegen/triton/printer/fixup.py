"""The fix-up of partial tiles (split-K and the Stream-K family): where the partials of a tile
live, in K order (``contributors``, ``partial_slot``), how a unit hands its partial over
(``fixup``: atomic adds, or a workspace slot summed by the last arrival or by the separate
``reduce_kernel``)."""

from __future__ import annotations

from tilec.codegen.triton.printer.kernel import Code, Kernel
from tilec.codegen.triton.printer.tile import guard_alive
from tilec.transforms.plan import CTA, TILE, Fixup, J


def partial_slots(k: Kernel) -> str:
    """Where the j-th partial (K order) of partial-region tile ``tile`` lives, and how many."""
    w = k.plan.work
    c = Code()
    c("@triton.jit", "def contributors(tile):")
    c.indent()(f"return {k.expr(w.contributors(TILE), tile='tile')}").dedent()
    c("", "", "@triton.jit", "def partial_slot(tile, j):")
    c.indent()
    if k.split_k:
        c(f"return {k.expr(w.partial_slot(TILE, J), tile='tile', j='j')}")
        return c.text()
    c('"""Slot 2*cta for the CTA\'s first tile, 2*cta + 1 for its last."""')
    c(f"cta = {k.expr(w.first_contributor(TILE) + J, tile='tile', j='j')}")
    c(f"return {k.expr(w.sk_slot(CTA, TILE), cta='cta', tile='tile')}")
    return c.text()


def fixup_fn(k: Kernel) -> str:
    """``fixup(c, ws, tickets, acc, pid_m, pid_n, tile, slot)``: hand one partial over; the last
    contributor of a tile (by ticket) sums and stores it, and leaves buffer and ticket zeroed."""
    f = k.fixup
    c = Code()
    c("@triton.jit", "def fixup(c, ws, tickets, acc, pid_m, pid_n, tile, slot):")
    c.indent()
    offs = "tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]"
    if f is Fixup.ATOMIC:
        c('"""Add the partial into the tile\'s fp32 buffer; the last contributor casts it."""')
        c(f"offs = {offs}")
        c('tl.atomic_add(ws + tile * (BM * BN) + offs, acc, sem="relaxed")')
    else:
        c('"""Store the partial in its workspace slot (summed in K order later)."""')
        c(f"offs = {offs}")
        c("tl.store(ws + slot * (BM * BN) + offs, acc)")
    if f is Fixup.REDUCE_KERNEL:
        return c.text()
    c("tl.debug_barrier()  # every thread's partial is out before the ticket")
    c('ticket = tl.atomic_add(tickets + tile, 1, sem="acq_rel")')
    c("if ticket == contributors(tile) - 1:")
    c.indent()
    c("# last to finish: nobody waits for anybody (runs in the sequential interpreter too)")
    if f is Fixup.ATOMIC:
        c("# read the sum and leave the buffer zeroed for the next launch in one atomic per")
        c("# element (no memset per call; no other thread can see a half-cleared buffer)")
        c("bits = (ws + tile * (BM * BN) + offs).to(tl.pointer_type(tl.int32))  # fp32 bits")
        c('total = tl.atomic_xchg(bits, tl.zeros((BM, BN), dtype=tl.int32), sem="relaxed")')
        c("total = total.to(tl.float32, bitcast=True)")
    else:
        c("total = tl.zeros((BM, BN), dtype=tl.float32)")
        c("for j in range(contributors(tile)):  # K order: bitwise reproducible")
        c.indent()
        c('total += tl.load(ws + partial_slot(tile, j) * (BM * BN) + offs, cache_modifier=".cg")')
        c.dedent()
    c("tl.store(tickets + tile, 0)  # every contributor has taken its ticket: reset it")
    c("store_c(c, total, pid_m, pid_n)")
    return c.text()


def reduce_rows(k: Kernel) -> int:
    """Rows of C one ``reduce_kernel`` program sums: the tile's rows halved (down to 4) until
    the partial tiles' strips give at least two programs per CTA of the GEMM's grid (the grid
    the plan sized for the machine). One program per whole tile leaves most SMs idle while a few
    read every partial: 8 tiles of 16 partials took 91 us on an H200
    (bench/results/fixup_probe_h200_2026-11-23.json)."""
    p = k.plan
    rows = p.BM
    while rows > 4 and p.work.partial_tiles * (p.BM // rows) < 2 * p.work.grid:
        rows //= 2
    return rows


def reduce_kernel(k: Kernel) -> str:
    """``reduce_kernel(c, ws)`` (Fixup.REDUCE_KERNEL): a second launch, one program per
    ``RED_ROWS``-row strip of a partial tile (``RED_STRIPS`` a tile), sums the strip's partials
    in K order and writes C's rows."""
    p = k.plan
    c = Code()
    c("@triton.jit", "def reduce_kernel(c, ws):")
    c.indent()
    c('"""Sum one strip of a tile\'s partials in K order and write it to C (second launch)."""')
    c("tile = tl.program_id(0) // RED_STRIPS")
    c("strip = tl.program_id(0) % RED_STRIPS")
    c("n = contributors(tile)")
    c("if n > 1:  # a single contributor owned the whole tile and wrote C itself")
    c.indent()
    c(f"pid_m, pid_n = tile_coords({k.expr(TILE + k.sk_start, tile='tile')})")
    guard_alive(k, c)
    c("rows = strip * RED_ROWS + tl.arange(0, RED_ROWS)")
    c("offs = rows[:, None] * BN + tl.arange(0, BN)[None, :]")
    c("total = tl.zeros((RED_ROWS, BN), dtype=tl.float32)")
    c("for j in range(n):")
    c.indent()("total += tl.load(ws + partial_slot(tile, j) * (BM * BN) + offs)").dedent()
    c("offs_m = pid_m * BM + rows")
    c("offs_n = pid_n * BN + tl.arange(0, BN)")
    if k.wide:
        c("offs_m = offs_m.to(tl.int64)")
    masks = []
    if p.M % p.BM:
        masks.append("(offs_m[:, None] < M)")
    if p.N % p.BN:
        masks.append("(offs_n[None, :] < N)")
    m = f", mask={' & '.join(masks)}" if masks else ""
    c(f"tl.store(c + offs_m[:, None] * N + offs_n[None, :], total.to(C_DTYPE){m})")
    return c.text()
