"""The fix-up of partial tiles (split-K and the Stream-K family): where the partials of a tile
live, in K order (``contributors``, ``partial_slot``), how a unit hands its partial over
(``fixup``: atomic adds, or a workspace slot summed by the last arrival or by the separate
``reduce_kernel``)."""

from __future__ import annotations

from tilec.codegen.triton.printer.kernel import SHAPE_ARGS, Code, Kernel
from tilec.codegen.triton.printer.tile import guard_alive, store_rows
from tilec.transforms.plan import CTA, TILE, Fixup, J


def partial_slots(k: Kernel) -> str:
    """Where the j-th partial (K order) of partial-region tile ``tile`` lives, and how many:
    the work split's formulas over its run-time numbers."""
    w = k.work
    c = Code()
    c("@triton.jit", f"def contributors(tile, {k.params}):")
    c.indent()(f"return {k.expr(w.contributors(TILE), tile='tile')}").dedent()
    c("", "", "@triton.jit", f"def partial_slot(tile, j, {k.params}):")
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
    c("@triton.jit", f"def fixup(c, ws, tickets, acc, pid_m, pid_n, tile, slot, {k.params}):")
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
    c(f"if ticket == contributors(tile, {k.args}) - 1:")
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
        c(f"for j in range(contributors(tile, {k.args})):  # K order: bitwise reproducible")
        c.indent()
        c(f"total += tl.load(ws + partial_slot(tile, j, {k.args}) * (BM * BN) + offs, "
          'cache_modifier=".cg")')
        c.dedent()
    c("tl.store(tickets + tile, 0)  # every contributor has taken its ticket: reset it")
    c(f"store_c(c, total, pid_m, pid_n, {k.args})")
    return c.text()


RED_ROWS = 4  # rows of C one step of the reduce kernel sums: the finest strip


def reduce_grid_fn(k: Kernel) -> str:
    """``_reduce_grid(tiles, GRID) -> (programs, SUBS)``, launcher side: the rows of C one
    ``reduce_kernel`` program sums are the tile's rows halved (down to 4) until the partial
    tiles' strips give at least two programs per CTA of the GEMM's grid, at the run-time sizes.
    One program per whole tile leaves most SMs idle while a few read every partial: 8 tiles of
    16 partials took 91 us on an H200 (bench/results/fixup_probe_h200_2026-11-23.json)."""
    c = Code()
    c("def _reduce_grid(tiles, GRID):")
    c.indent()
    c('"""(programs, SUBS) of reduce_kernel for `tiles` partial tiles: a program sums SUBS')
    c("strips of RED_ROWS rows; strips are halved until there are two programs per CTA of the")
    c("GEMM's grid, or they are RED_ROWS rows.")
    c('"""')
    c(f"rows = {k.plan.BM}")
    c(f"while rows > {RED_ROWS} and tiles * ({k.plan.BM} // rows) < 2 * GRID:")
    c.indent()("rows //= 2").dedent()
    c(f"return tiles * ({k.plan.BM} // rows), rows // {RED_ROWS}")
    c.dedent()("", "")
    return c.text()


def unspecialized(k: Kernel) -> list[str]:
    """The integer arguments Triton must not specialize on (``== 1``, ``% 16 == 0``): the sizes
    change with every shape, and a specialization would compile
    the kernel again for a shape that meets the same facts (and a kernel kept for the direct
    launch would be wrong at another). The leading dimensions stay specialized (their
    16-alignment lets pointer loads vectorize) and are part of the direct launch's key. A static
    kernel has none (its sizes are ``tl.constexpr``)."""
    return [] if k.static else list(SHAPE_ARGS[:3])


def partial_tiles(k: Kernel) -> str:
    """The partial-region tiles at run time, in the launcher's names (split-K: every tile)."""
    return "NUM_TILES" if k.split_k else "SK_TILES"


def reduce_kernel(k: Kernel) -> str:
    """``reduce_kernel(c, ws, SUBS, ...)`` (Fixup.REDUCE_KERNEL): a second launch; each program
    sums ``SUBS`` strips of ``RED_ROWS`` rows of one partial tile (the launcher's
    ``_reduce_grid`` picks SUBS per call), in K order, and writes C's rows."""
    c = Code()
    keep = ["SUBS", *unspecialized(k)]  # a compiled reducer serves every shape (as gemm_kernel)
    c(f"@triton.jit(do_not_specialize={keep!r})",
      f"def reduce_kernel(c, ws, SUBS, {k.launch_params}):")
    c.indent()
    c('"""Sum SUBS strips of a tile\'s partials in K order and write them to C (second launch)."""')
    k.numbers_prologue(c)
    c("programs = BM // (RED_ROWS * SUBS)  # per tile")
    c("tile = tl.program_id(0) // programs")
    c("part = tl.program_id(0) % programs")
    c(f"n = contributors(tile, {k.args})")
    c("if n > 1:  # a single contributor owned the whole tile and wrote C itself")
    c.indent()
    c(f"pid_m, pid_n = tile_coords({k.expr(TILE + k.work.sk_start, tile='tile')}, M, N)")
    guard_alive(k, c)
    c("for sub in range(SUBS):")
    c.indent()
    c("rows = (part * SUBS + sub) * RED_ROWS + tl.arange(0, RED_ROWS)")
    c("offs = rows[:, None] * BN + tl.arange(0, BN)[None, :]")
    c("total = tl.zeros((RED_ROWS, BN), dtype=tl.float32)")
    c("for j in range(n):")
    c.indent()(f"total += tl.load(ws + partial_slot(tile, j, {k.args}) * (BM * BN) + offs)")
    c.dedent()
    c("offs_m = pid_m * BM + rows")
    c("offs_n = pid_n * BN + tl.arange(0, BN)")
    store_rows(c, "total")
    return c.text()
