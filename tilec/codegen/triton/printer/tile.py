"""The device functions of one C tile: where linear tile ``t`` lands (``tile_coords``, and the
alive guard on padded orders), the operand loads (pointer or tensor-descriptor), the K loop
(``mainloop``) and the epilogue (``store_c``).

Every function takes the run-time sizes (``M, N, K``, the leading dimensions, the work split's
numbers) and the variant's flags: ``EVEN_M``, ``EVEN_N``, ``EVEN_K`` (the tile divides that
size) drop the boundary masks along it, ``WIDE`` computes row offsets in int64."""

from __future__ import annotations

import sympy

from tilec.codegen.triton.expr import TritonExprPrinter
from tilec.codegen.triton.printer.kernel import Code, Kernel
from tilec.proofs import Context
from tilec.transforms.plan import SIZE_M, SIZE_N, DType, LoadKind, OperandLoad


def tile_coords(k: Kernel) -> str:
    """``tile_coords(t, M, N) -> (pid_m, pid_n)``: the plan's TileOrder, an expression of t and
    the run-time sizes, simplified under ``t < num_tiles``."""
    o = k.plan.order
    c = Code()
    c("@triton.jit", "def tile_coords(t, M, N):")
    c.indent()
    c(f'"""Linear tile index t -> (pid_m, pid_n): {o.description}."""')
    names = {o.index: "t", SIZE_M: "M", SIZE_N: "N"}
    live = Context().bound(o.index, sympy.sympify(o.num_tiles))  # t < num_tiles: signs
    c(f"pid_m = {TritonExprPrinter(names, live).doprint(o.tile_m)}")
    c(f"pid_n = {TritonExprPrinter(names, live).doprint(o.tile_n)}")
    c("return pid_m, pid_n")
    return c.text()


def guard_alive(k: Kernel, c: Code) -> None:
    """Open ``if the tile just computed is alive:`` (TileOrder.alive) where the order pads."""
    if k.padded:
        o = k.plan.order
        alive = f"(pid_m < {k.expr(o.tiles_m)}) & (pid_n < {k.expr(o.tiles_n)})"
        c(f"if {alive}:  # the order pads past the C tiles")
        c.indent()


def load_fn(k: Kernel, op: OperandLoad) -> str:
    """``load_a(a, pid_m, ki, KMASK, ...)`` -> [BM, BK]; ``load_b(b, pid_n, ki, KMASK, ...)``
    -> [BK, BN].

    An operand the plan loads by TMA is a tensor descriptor made per call from the run-time
    shape where its rows are 16-byte aligned (``TMA_A``/``TMA_B``: TMA fills the box past the
    edges with zeros), else a pointer. Pointer loads mask rows past M (N) unless EVEN_M
    (EVEN_N), and columns past K where ``KMASK`` (BK does not divide K)."""
    p = k.plan
    is_a = op.name == "A"
    fn, arg, pid = ("load_a", "a", "pid_m") if is_a else ("load_b", "b", "pid_n")
    rows_n, rows_b, ld, even = (("M", "BM", "lda", "EVEN_M") if is_a
                                else ("N", "BN", "ldb", "EVEN_N"))
    stored_t = not is_a and p.b.transposed  # B as N x K
    c = Code()
    c("@triton.jit", f"def {fn}({arg}, {pid}, ki, KMASK: tl.constexpr, {k.params}):")
    c.indent()
    if op.kind is LoadKind.TMA:
        c(f"if TMA_{op.name}:  # a tensor descriptor: TMA fills the box past the edges with zeros")
        c.indent()
        if is_a:
            c(f"return {arg}.load([{pid} * BM, ki * BK])")
        elif stored_t:
            c(f"return {arg}.load([{pid} * BN, ki * BK]).T")
        else:
            c(f"return {arg}.load([ki * BK, {pid} * BN])")
        c.dedent()
        c("else:  # rows TMA cannot take (unaligned base or row stride): masked pointer loads")
        c.indent()
    c(f"offs_r = {pid} * {rows_b} + tl.arange(0, {rows_b})")
    c(f"offs_r = tl.max_contiguous(tl.multiple_of(offs_r, {rows_b}), {rows_b})")
    c("offs_k = ki * BK + tl.arange(0, BK)")
    c("offs_k = tl.max_contiguous(tl.multiple_of(offs_k, BK), BK)")
    c("if WIDE:")
    c.indent()("offs_r = offs_r.to(tl.int64)", "offs_k = offs_k.to(tl.int64)").dedent()
    if is_a or stored_t:  # row-major [rows, K]: tile [rows, BK]
        c(f"ptrs = {arg} + offs_r[:, None] * {ld} + offs_k[None, :]")
        row_mask, k_mask = f"offs_r[:, None] < {rows_n}", "offs_k[None, :] < K"
        done = "return t" if is_a else "return t.T"
    else:  # B row-major [K, N]: tile [BK, BN]
        c(f"ptrs = {arg} + offs_k[:, None] * {ld} + offs_r[None, :]")
        row_mask, k_mask = f"offs_r[None, :] < {rows_n}", "offs_k[:, None] < K"
        done = "return t"
    c(f"if {even} and not KMASK:  # every element is in range")
    c.indent()("t = tl.load(ptrs)").dedent()
    c(f"elif {even}:")
    c.indent()(f"t = tl.load(ptrs, mask={k_mask}, other=0.0)").dedent()
    c("elif not KMASK:")
    c.indent()(f"t = tl.load(ptrs, mask={row_mask}, other=0.0)").dedent()
    c("else:")
    c.indent()(f"t = tl.load(ptrs, mask=({row_mask}) & ({k_mask}), other=0.0)").dedent()
    c(done)
    return c.text()


def mainloop(k: Kernel) -> str:
    """``mainloop(a, b, pid_m, pid_n, k_begin, k_end, ...)``: the fp32 accumulator of a unit
    (pointer loads mask K unless EVEN_K; a peeled last k-iteration measured slower on an H100:
    the loop with it was 1.9 ms against 1.2 at 4096 x 4096 x 4100)."""
    p = k.plan
    prec = ""
    if p.dtype is DType.FP32:
        prec = f', input_precision="{p.input_precision.value}"'
    c = Code()
    c("@triton.jit", f"def mainloop(a, b, pid_m, pid_n, k_begin, k_end, {k.params}):")
    c.indent()
    c('"""fp32 accumulator of the tile (pid_m, pid_n) over k-iterations [k_begin, k_end)."""')
    c("acc = tl.zeros((BM, BN), dtype=tl.float32)")
    ws = ", warp_specialize=True" if k.warp_specialize else ""
    c(f"for ki in tl.range(k_begin, k_end{ws}):")
    c.indent()
    c(f"acc = tl.dot(load_a(a, pid_m, ki, not EVEN_K, {k.args}), "
      f"load_b(b, pid_n, ki, not EVEN_K, {k.args}), acc{prec})")
    c.dedent()
    c("return acc")
    return c.text()


def store_c(k: Kernel) -> str:
    """``store_c(c, acc, pid_m, pid_n, ...)``: cast to C's dtype, masked where the tile may
    cross an edge of C (along M unless EVEN_M, along N unless EVEN_N)."""
    c = Code()
    c("@triton.jit", f"def store_c(c, acc, pid_m, pid_n, {k.params}):")
    c.indent()
    c("offs_m = pid_m * BM + tl.arange(0, BM)")
    c("offs_n = pid_n * BN + tl.arange(0, BN)")
    store_rows(c, "acc")
    return c.text()


def store_rows(c: Code, value: str) -> None:
    """Store ``value`` at rows ``offs_m`` and columns ``offs_n`` of C, masked along the sizes
    the tiles may not divide."""
    c("if WIDE:")
    c.indent()("offs_m = offs_m.to(tl.int64)").dedent()
    c("ptrs = c + offs_m[:, None] * ldc + offs_n[None, :]")
    c("if EVEN_M and EVEN_N:")
    c.indent()(f"tl.store(ptrs, {value}.to(C_DTYPE))").dedent()
    c("elif EVEN_N:")
    c.indent()(f"tl.store(ptrs, {value}.to(C_DTYPE), mask=offs_m[:, None] < M)").dedent()
    c("elif EVEN_M:")
    c.indent()(f"tl.store(ptrs, {value}.to(C_DTYPE), mask=offs_n[None, :] < N)").dedent()
    c("else:")
    c.indent()(f"tl.store(ptrs, {value}.to(C_DTYPE), "
               "mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))").dedent()
