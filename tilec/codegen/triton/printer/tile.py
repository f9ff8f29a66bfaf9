"""The device functions of one C tile: where linear tile ``t`` lands (``tile_coords``, and the
alive guard on padded orders), the operand loads (pointer or tensor-descriptor), the K loop
(``mainloop``) and the epilogue (``store_c``)."""

from __future__ import annotations

from tilec.codegen.triton.expr import TritonExprPrinter
from tilec.codegen.triton.printer.kernel import Code, Kernel
from tilec.proofs import Context
from tilec.transforms.plan import DType, LoadKind, OperandLoad


def tile_coords(k: Kernel) -> str:
    """``tile_coords(t) -> (pid_m, pid_n)``: the plan's TileOrder, simplified under its bound."""
    o = k.plan.order.concrete()  # this printer prints one launch's kernel (for now)
    c = Code()
    c("@triton.jit", "def tile_coords(t):")
    c.indent()
    c(f'"""Linear tile index t -> (pid_m, pid_n): {o.description}."""')
    names, live = {o.index: "t"}, Context().bound(o.index, o.num_tiles)  # t < num_tiles: signs
    c(f"pid_m = {TritonExprPrinter(names, live).doprint(o.tile_m)}")
    c(f"pid_n = {TritonExprPrinter(names, live).doprint(o.tile_n)}")
    c("return pid_m, pid_n")
    return c.text()


def guard_alive(k: Kernel, c: Code) -> None:
    """Open ``if the tile just computed is alive:`` (TileOrder.alive) where the order pads."""
    if k.padded:
        c("if (pid_m < TILES_M) & (pid_n < TILES_N):  # the order pads to whole groups")
        c.indent()


def load_fn(k: Kernel, op: OperandLoad) -> str:
    """``load_a(a, pid_m, ki)`` -> [BM, BK]; ``load_b(b, pid_n, ki)`` -> [BK, BN]."""
    p = k.plan
    is_a = op.name == "A"
    fn, arg, pid = ("load_a", "a", "pid_m") if is_a else ("load_b", "b", "pid_n")
    rows_n, rows_b = ("M", "BM") if is_a else ("N", "BN")
    stored_t = not is_a and p.b_transposed  # B as N x K
    c = Code()
    c("@triton.jit", f"def {fn}({arg}, {pid}, ki):")
    c.indent()
    if op.kind is LoadKind.TMA:
        if is_a:
            c(f"return {arg}.load([{pid} * BM, ki * BK])")
        elif stored_t:
            c(f"return {arg}.load([{pid} * BN, ki * BK]).T")
        else:
            c(f"return {arg}.load([ki * BK, {pid} * BN])")
        return c.text()
    # pointer loads: rows past the edge are clamped (wrapped) and never stored; K is masked
    edge = (p.M % p.BM) if is_a else (p.N % p.BN)
    wrap = f" % {rows_n}" if edge else ""
    c(f"offs_r = ({pid} * {rows_b} + tl.arange(0, {rows_b})){wrap}")
    c(f"offs_r = tl.max_contiguous(tl.multiple_of(offs_r, {rows_b}), {rows_b})")
    if k.wide:
        c("offs_r = offs_r.to(tl.int64)")
    c("offs_k = ki * BK + tl.arange(0, BK)")
    mask = p.K % p.BK != 0
    if is_a or stored_t:
        # row-major [rows, K]: tile [rows, BK]
        c(f"ptrs = {arg} + offs_r[:, None] * K + offs_k[None, :]")
        m = ", mask=offs_k[None, :] < K, other=0.0" if mask else ""
        c(f"t = tl.load(ptrs{m})")
        c("return t" if is_a else "return t.T")
    else:
        # B row-major [K, N]: tile [BK, BN]
        c(f"ptrs = {arg} + offs_k[:, None] * N + offs_r[None, :]")
        m = ", mask=offs_k[:, None] < K, other=0.0" if mask else ""
        c(f"return tl.load(ptrs{m})")
    return c.text()


def mainloop(k: Kernel) -> str:
    """``mainloop(a, b, pid_m, pid_n, k_begin, k_end)``: the fp32 accumulator of one unit."""
    p = k.plan
    prec = ""
    if p.dtype is DType.FP32:
        prec = f', input_precision="{p.input_precision.value}"'
    c = Code()
    c("@triton.jit", "def mainloop(a, b, pid_m, pid_n, k_begin, k_end):")
    c.indent()
    c('"""fp32 accumulator of the tile (pid_m, pid_n) over k-iterations [k_begin, k_end)."""')
    c("acc = tl.zeros((BM, BN), dtype=tl.float32)")
    ws = ", warp_specialize=True" if k.warp_specialize else ""
    c(f"for ki in tl.range(k_begin, k_end{ws}):")
    c.indent()
    c(f"acc = tl.dot(load_a(a, pid_m, ki), load_b(b, pid_n, ki), acc{prec})")
    c.dedent()
    c("return acc")
    return c.text()


def store_c(k: Kernel) -> str:
    """``store_c(c, acc, pid_m, pid_n)``: cast to C's dtype, masked where the tile crosses an
    edge of C."""
    p = k.plan
    c = Code()
    c("@triton.jit", "def store_c(c, acc, pid_m, pid_n):")
    c.indent()
    c("offs_m = pid_m * BM + tl.arange(0, BM)")
    c("offs_n = pid_n * BN + tl.arange(0, BN)")
    if k.wide:
        c("offs_m = offs_m.to(tl.int64)")
    masks = []
    if p.M % p.BM:
        masks.append("(offs_m[:, None] < M)")
    if p.N % p.BN:
        masks.append("(offs_n[None, :] < N)")
    m = f", mask={' & '.join(masks)}" if masks else ""
    c(f"tl.store(c + offs_m[:, None] * N + offs_n[None, :], acc.to(C_DTYPE){m})")
    return c.text()
