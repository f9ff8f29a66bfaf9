"""The schedule: the work units (``unit_full``: a whole tile; ``unit_partial``: part of a tile's
K range, ending in the fix-up) and ``gemm_kernel``, whose CTAs walk the plan's
:class:`~tilec.transforms.plan.WorkSplit` region by region (data-parallel tiles, split-K units,
Stream-K iteration ranges), every index printed from the work split's sympy expressions over its
run-time numbers (``GRID``, ``NUM_TILES``, ``K_ITERS``, ``SPLITS``, ``SK_TILES``, ``SK_CTAS``)."""

from __future__ import annotations

from tilec.codegen.triton.printer.fixup import unspecialized
from tilec.codegen.triton.printer.kernel import Code, Kernel
from tilec.codegen.triton.printer.tile import guard_alive
from tilec.transforms.plan import IT_BEGIN, IT_END, PID, TILE, UNIT, WORK_SYMBOLS, kernel_symbol


def unit(k: Kernel) -> str:
    """``unit_full(a, b, c, t, ...)``, and with partials ``unit_partial(...)``: order + mainloop
    + epilogue or fix-up for one unit."""
    c = Code()
    c("@triton.jit", f"def unit_full(a, b, c, t, {k.params}):")
    c.indent()
    c('"""Data-parallel unit: the whole K range of tile t."""')
    c("pid_m, pid_n = tile_coords(t, M, N)")
    guard_alive(k, c)
    c(f"acc = mainloop(a, b, pid_m, pid_n, 0, K_ITERS, {k.args})")
    c(f"store_c(c, acc, pid_m, pid_n, {k.args})")
    if not k.partials:
        return c.text()
    c.level = 0
    c("", "", "@triton.jit",
      f"def unit_partial(a, b, c, ws, tickets, t, k_begin, k_end, tile, slot, {k.params}):")
    c.indent()
    c('"""k-iterations [k_begin, k_end) of tile t (partial-region tile `tile`, slot `slot`)."""')
    c("pid_m, pid_n = tile_coords(t, M, N)")
    guard_alive(k, c)
    c(f"acc = mainloop(a, b, pid_m, pid_n, k_begin, k_end, {k.args})")
    # a unit of the whole K range owns its tile (a Stream-K CTA's, or split-K capped to one
    # part where K is short): it writes C itself, and its tile counts one contributor
    c("if (k_begin == 0) & (k_end == K_ITERS):")
    c.indent()(f"store_c(c, acc, pid_m, pid_n, {k.args})").dedent()
    c("else:")
    c.indent()(f"fixup(c, ws, tickets, acc, pid_m, pid_n, tile, slot, {k.args})").dedent()
    return c.text()


def kernel_args(k: Kernel) -> str:
    """The pointer arguments of ``gemm_kernel`` (the fix-up's workspace and tickets with
    partials)."""
    return "a, b, c, ws, tickets" if k.partials else "a, b, c"


def gemm_kernel(k: Kernel) -> str:
    """``gemm_kernel``: each program ``pid`` runs its units of every region of the work split."""
    c = Code()
    c(f"@triton.jit(do_not_specialize={unspecialized(k)!r})",
      f"def gemm_kernel({kernel_args(k)}, {k.launch_params}):")
    c.indent()
    k.numbers_prologue(c)
    c("pid = tl.program_id(0)")
    n, sk = WORK_SYMBOLS["num_tiles"], WORK_SYMBOLS["sk_tiles"]
    if k.split_k:
        _split_k_loop(k, c)
    elif k.stream_k:
        if k.sk_first:
            _sk_loop(k, c)
            _dp_loop(k, c, sk, n)
        else:
            _dp_loop(k, c, 0, n - sk)
            _sk_loop(k, c)
    else:
        _dp_loop(k, c, 0, n)
    return c.text()


def _dp_loop(k: Kernel, c: Code, start: object, end: object) -> None:
    """Whole tiles [start, end), one per program and round."""
    c(f"for t in range({k.expr(PID + start, pid='pid')}, {k.expr(end)}, GRID):")
    c.indent()(f"unit_full(a, b, c, t, {k.args})").dedent()


def _split_k_loop(k: Kernel, c: Code) -> None:
    """Split-K: unit u is part s of tile t."""
    w = k.work
    c("for u in range(pid, NUM_TILES * SPLITS, GRID):")
    c.indent()
    tile, part = w.split_k_unit(UNIT)
    c(f"t = {k.expr(tile, u='u')}")
    c(f"s = {k.expr(part, u='u')}")
    k_begin, k_end = w.split_k_range(kernel_symbol("s"))
    c(f"k_begin = {k.expr(k_begin, s='s')}")
    c(f"k_end = {k.expr(k_end, s='s')}")
    c(f"unit_partial(a, b, c, ws, tickets, t, k_begin, k_end, t, u, {k.args})")
    c.dedent()


def _sk_loop(k: Kernel, c: Code) -> None:
    """Stream-K: the program's range of iterations, cut at tile boundaries into units."""
    w = k.work
    c("if pid < SK_CTAS:  # Stream-K: SK_TILES * K_ITERS iterations over SK_CTAS CTAs")
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
    c(f"unit_partial(a, b, c, ws, tickets, {k.expr(TILE + w.sk_start, tile='tile')},"
      f" k_begin, k_end, tile, slot, {k.args})")
    c.dedent().dedent()
