"""The schedule: the work units (``unit_full``: a whole tile; ``unit_partial``: part of a tile's
K range, ending in the fix-up) and ``gemm_kernel``, whose CTAs walk the plan's
:class:`~tilec.transforms.plan.WorkSplit` region by region (data-parallel tiles, split-K units,
Stream-K iteration ranges), every index printed from the work split's sympy expressions."""

from __future__ import annotations

from tilec.codegen.triton.printer.kernel import Code, Kernel
from tilec.codegen.triton.printer.tile import guard_alive
from tilec.transforms.plan import IT_BEGIN, IT_END, PID, TILE, UNIT, kernel_symbol


def unit(k: Kernel) -> str:
    """``unit_full(a, b, c, t)``, and with partials ``unit_partial(...)``: order + mainloop +
    epilogue or fix-up for one unit."""
    c = Code()
    c("@triton.jit", "def unit_full(a, b, c, t):")
    c.indent()
    c('"""Data-parallel unit: the whole K range of tile t."""')
    c("pid_m, pid_n = tile_coords(t)")
    guard_alive(k, c)
    c("store_c(c, mainloop(a, b, pid_m, pid_n, 0, K_ITERS), pid_m, pid_n)")
    if not k.partials:
        return c.text()
    c.level = 0
    c("", "", "@triton.jit",
      "def unit_partial(a, b, c, ws, tickets, t, k_begin, k_end, tile, slot):")
    c.indent()
    c('"""k-iterations [k_begin, k_end) of tile t (partial-region tile `tile`, slot `slot`)."""')
    c("pid_m, pid_n = tile_coords(t)")
    guard_alive(k, c)
    c("acc = mainloop(a, b, pid_m, pid_n, k_begin, k_end)")
    if k.stream_k:
        c("if (k_begin == 0) & (k_end == K_ITERS):")
        c.indent()("store_c(c, acc, pid_m, pid_n)").dedent()
        c("else:")
        c.indent()("fixup(c, ws, tickets, acc, pid_m, pid_n, tile, slot)").dedent()
    else:
        c("fixup(c, ws, tickets, acc, pid_m, pid_n, tile, slot)")
    return c.text()


def kernel_args(k: Kernel) -> str:
    """The arguments of ``gemm_kernel`` (the fix-up's workspace and tickets with partials)."""
    return "a, b, c, ws, tickets" if k.partials else "a, b, c"


def gemm_kernel(k: Kernel) -> str:
    """``gemm_kernel``: each program ``pid`` runs its units of every region of the work split."""
    w = k.plan.work
    c = Code()
    c("@triton.jit", f"def gemm_kernel({kernel_args(k)}):")
    c.indent()
    c("pid = tl.program_id(0)")
    if k.split_k:
        _split_k_loop(k, c)
    elif k.stream_k:
        dp = w.dp_range
        if w.sk_first:
            _sk_loop(k, c)
            _dp_loop(k, c, *dp)
        else:
            _dp_loop(k, c, *dp)
            _sk_loop(k, c)
    else:
        _dp_loop(k, c, 0, k.num_tiles)
    return c.text()


def _dp_loop(k: Kernel, c: Code, start: int, end: int) -> None:
    """Whole tiles [start, end), one per program and round."""
    g = k.plan.work.grid
    if end <= start:
        return
    if end - start <= g:
        c(f"if pid < {end - start}:" if end - start < g else "if True:")
        c.indent()(f"unit_full(a, b, c, {k.expr(PID + start, pid='pid')})").dedent()
    else:
        c(f"for t in range({k.expr(PID + start, pid='pid')}, {end}, GRID):")
        c.indent()("unit_full(a, b, c, t)").dedent()


def _split_k_loop(k: Kernel, c: Code) -> None:
    """Split-K: unit u is part s of tile t."""
    w = k.plan.work
    units = k.num_tiles * w.splits
    if units <= w.grid:
        c("u = pid")
    else:
        c("for u in range(pid, NUM_TILES * SPLITS, GRID):")
        c.indent()
    tile, part = w.split_k_unit(UNIT)
    c(f"t = {k.expr(tile, u='u')}")
    c(f"s = {k.expr(part, u='u')}")
    k_begin, k_end = w.split_k_range(kernel_symbol("s"))
    c(f"k_begin = {k.expr(k_begin, s='s')}")
    c(f"k_end = {k.expr(k_end, s='s')}")
    c("unit_partial(a, b, c, ws, tickets, t, k_begin, k_end, t, u)")
    if units > w.grid:
        c.dedent()


def _sk_loop(k: Kernel, c: Code) -> None:
    """Stream-K: the program's range of iterations, cut at tile boundaries into units."""
    w = k.plan.work
    c(f"if pid < SK_CTAS:  # Stream-K: {w.sk_iters} iterations over {w.sk_ctas} CTAs")
    c.indent()
    it_begin, it_end = w.sk_range(PID)
    c(f"it_begin = {k.expr(it_begin, pid='pid')}")
    c(f"it_end = {k.expr(it_end, pid='pid')}")
    first, end = w.sk_tiles_of(IT_BEGIN, IT_END)
    c(f"first = {k.expr(first, it_begin='it_begin')}")
    c(f"for tile in range(first, {k.expr(end, it_end='it_end')}):")
    c.indent()
    names = dict(tile="tile", it_begin="it_begin", it_end="it_end")
    k_begin, k_end = w.sk_unit_range(TILE, IT_BEGIN, IT_END)
    c(f"k_begin = {k.expr(k_begin, **names)}")
    c(f"k_end = {k.expr(k_end, **names)}")
    # the slot of this CTA's partial, with its first tile already in `first`
    slot = w.sk_slot(PID, TILE).xreplace({w.sk_first_tile(PID): kernel_symbol("first")})
    c(f"slot = {k.expr(slot, pid='pid', tile='tile', first='first')}")
    c(f"unit_partial(a, b, c, ws, tickets, {k.expr(TILE + k.sk_start, tile='tile')},"
      " k_begin, k_end, tile, slot)")
    c.dedent().dedent()
