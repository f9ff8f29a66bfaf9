"""Triton backend: print a :class:`~tilec.transforms.plan.KernelPlan` as a standalone Python file.

The file holds small ``@triton.jit`` functions, one per plan feature, and a launcher::

    tile_coords(t)            the TileOrder, printed from its sympy expressions
    load_a / load_b           one per operand: masked pointer loads or tensor-descriptor (TMA) loads
    mainloop                  the K loop of one work unit (k_begin, k_end)
    store_c                   the epilogue (cast to C's dtype, masked store)
    partial_slot/contributors where the partials of a tile live, in K order (split-K / Stream-K)
    fixup                     atomic, deterministic (ticket) or workspace store (reduce kernel)
    unit                      one (tile, k_begin, k_end) unit: order + mainloop + epilogue/fix-up
    gemm_kernel               the schedule: data-parallel / split-K / Stream-K regions
    reduce_kernel             the separate reduction (Fixup.REDUCE_KERNEL)
    run(a, b, out=None)       checks, workspaces, descriptors, launches

Every index formula of the schedule (tile order, unit -> tile / split, Stream-K iteration ranges
and owners) is a sympy expression printed by :class:`TritonExprPrinter`; the Python text around
them is built by one emitter per feature, so a feature the plan does not use leaves no code.

Example::

    >>> from tilec.app.loader import load_schedule
    >>> from tilec.transforms.pipeline import lower
    >>> s = load_schedule("examples/split_k.py", {"M": 100, "N": 70, "K": 50, "BM": 32, "BN": 32,
    ...                                            "BK": 16, "SPLITS": 2})
    >>> src = emit(lower(s.fusion))
    >>> "def gemm_kernel" in src and "def run(a, b, out=None)" in src and "SPLITS = " in src
    True
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from types import ModuleType
from typing import Any

import sympy

from tilec.codegen.triton.expr import TritonExprPrinter
from tilec.errors import UnsupportedError
from tilec.proofs import Context
from tilec.transforms.plan import (
    CTA,
    IT_BEGIN,
    IT_END,
    PID,
    TILE,
    UNIT,
    Decomposition,
    DType,
    Fixup,
    J,
    KernelPlan,
    LoadKind,
    OperandLoad,
    kernel_symbol,
)

__all__ = ["TritonPrinter", "bench", "emit", "load", "run_plan"]

_TL = {DType.FP16: "tl.float16", DType.BF16: "tl.bfloat16", DType.FP32: "tl.float32"}
_TORCH = {DType.FP16: "torch.float16", DType.BF16: "torch.bfloat16", DType.FP32: "torch.float32"}


def _range_takes(arg: str) -> bool:
    """Whether the installed Triton's ``tl.range`` has the keyword ``arg``."""
    import inspect

    import triton.language as tl

    try:
        return arg in inspect.signature(tl.range.__init__).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


class Code:
    """Lines of Python with an indentation level."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.level = 0

    def __call__(self, *lines: str) -> Code:
        for line in lines:
            self.lines.append(("    " * self.level + line) if line else "")
        return self

    def indent(self) -> Code:
        self.level += 1
        return self

    def dedent(self) -> Code:
        self.level -= 1
        return self

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class TritonPrinter:
    """Prints one KernelPlan; ``emit()`` returns the module source.

    Refuses (UnsupportedError) plan features Triton cannot express: clusters > 1 and multicast.

    ``warp_specialize=True`` asks Triton to warp-specialize the K loop (producer warps issue the
    loads, consumer warps the MMAs: ``tl.range(..., warp_specialize=True)``); it is printed only
    when the installed Triton's ``tl.range`` takes that argument, else the loop stays plain.
    """

    def __init__(self, plan: KernelPlan, *, warp_specialize: bool = False) -> None:
        self.plan = plan
        self.warp_specialize = warp_specialize and _range_takes("warp_specialize")
        self.p = plan
        self._check()
        w = plan.work
        self.kind = w.kind
        self.num_tiles = w.num_tiles
        self.split_k = w.split_k
        self.sk_start, self.sk_end = w.sk_start, w.sk_end
        self.stream_k = w.stream_k
        self.partials = self.split_k or self.stream_k
        self.fixup = w.fixup if self.partials else None
        self.padded = self.num_tiles > plan.tiles
        self.wide = max(plan.M * plan.K, plan.K * plan.N, plan.M * plan.N) >= 2**31

    # ------------------------------------------------------------------ validation
    def _check(self) -> None:
        p = self.plan
        if p.cluster != (1, 1, 1):
            raise UnsupportedError(
                f"triton: plan {p.name} has cluster {p.cluster}; the Triton backend launches "
                "single-CTA clusters only (use the CUDA backend for clusters)"
            )
        for op in (p.a, p.b):
            if op.multicast is not None:
                raise UnsupportedError(
                    f"triton: operand {op.name} of plan {p.name} asks for TMA multicast, which "
                    "Triton cannot issue; drop the multicast or use the CUDA backend"
                )
        if p.c_dtype is not p.dtype:
            raise UnsupportedError(
                f"triton: out_dtype {p.c_dtype.value} differs from dtype {p.dtype.value}; "
                "the Triton backend writes C in the input type"
            )
        for name, v in (("BM", p.BM), ("BN", p.BN), ("BK", p.BK)):
            if v < 16 or v & (v - 1):
                raise UnsupportedError(f"triton: {name} must be a power of two >= 16 but got {v}")
        if p.order.tiles_m != -(-p.M // p.BM) or p.order.tiles_n != -(-p.N // p.BN):
            raise UnsupportedError(
                f"triton: tile order covers {p.order.tiles_m} x {p.order.tiles_n} tiles but "
                f"M={p.M}, N={p.N} with BM={p.BM}, BN={p.BN} need "
                f"{-(-p.M // p.BM)} x {-(-p.N // p.BN)}"
            )
        if p.b_transposed != p.b.transposed:
            raise UnsupportedError(
                f"triton: plan.b_transposed={p.b_transposed} but operand B says "
                f"transposed={p.b.transposed}"
            )
        for op in (p.a, p.b):
            if op.kind is LoadKind.TMA:
                cols = p.K if (op.name == "A" or p.b_transposed) else p.N
                if (cols * p.dtype.nbytes) % 16:
                    raise UnsupportedError(
                        f"triton: operand {op.name} is loaded by TMA but its row stride "
                        f"({cols} x {p.dtype.nbytes} bytes) is not 16-byte aligned; use "
                        "LoadKind.POINTER"
                    )

    # ------------------------------------------------------------------ expressions
    def expr(self, e: sympy.Basic | int, **names: str) -> str:
        syms = {kernel_symbol(k): v for k, v in names.items()}
        return TritonExprPrinter(syms).doprint(sympy.sympify(e))

    # ------------------------------------------------------------------ emitters
    def emit(self) -> str:
        parts = [
            self.header(),
            self.constants(),
            self.tile_coords(),
            self.load_fn(self.p.a),
            self.load_fn(self.p.b),
            self.mainloop(),
            self.store_c(),
        ]
        if self.partials:
            parts += [self.partial_slots(), self.fixup_fn()]
        parts += [self.unit(), self.kernel()]
        if self.fixup is Fixup.REDUCE_KERNEL:
            parts.append(self.reduce_kernel())
        parts.append(self.launcher())
        return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"

    def header(self) -> str:
        p = self.p
        w = p.work
        c = Code()
        c('"""' + f"{p.name}: C[{p.M}, {p.N}] = A[{p.M}, {p.K}] @ B"
          + (f"[{p.N}, {p.K}].T" if p.b_transposed else f"[{p.K}, {p.N}]")
          + f", {p.dtype.value}, fp32 accumulation.")
        c("")
        c(f"Generated by tilec (Triton backend). Tiles {p.BM}x{p.BN}x{p.BK}, "
          f"{p.order.tiles_m}x{p.order.tiles_n} tiles, order: {p.order.description}.")
        desc = f"Decomposition: {w.kind.value}, grid {w.grid}"
        if w.kind is Decomposition.SPLIT_K:
            desc += f", splits {w.splits}"
        if self.stream_k:
            desc += (f", Stream-K tiles [{self.sk_start}, {self.sk_end}) over {w.sk_ctas} CTAs"
                     f" ({'first' if w.sk_first else 'last'})")
        if self.fixup is not None:
            desc += f", fix-up {self.fixup.value}"
        c(desc + ".")
        c(f"Loads: A {p.a.kind.value}, B {p.b.kind.value}. Usage: c = run(a, b[, out=c]).")
        for note in p.notes:
            c(note)
        c('"""')
        c("", "import torch", "import triton", "import triton.language as tl")
        if LoadKind.TMA in (p.a.kind, p.b.kind):
            c("from triton.tools.tensor_descriptor import TensorDescriptor")
        return c.text()

    def constants(self) -> str:
        p = self.p
        w = p.work
        c = Code()
        vals: list[tuple[str, Any]] = [
            ("M", p.M), ("N", p.N), ("K", p.K), ("BM", p.BM), ("BN", p.BN), ("BK", p.BK),
            ("K_ITERS", p.k_iters), ("NUM_TILES", self.num_tiles),
            ("TILES_M", p.order.tiles_m), ("TILES_N", p.order.tiles_n), ("GRID", w.grid),
        ]
        if self.split_k:
            vals.append(("SPLITS", w.splits))
        if self.stream_k:
            vals += [("SK_START", self.sk_start), ("SK_TILES", w.sk_tiles),
                     ("SK_CTAS", w.sk_ctas), ("SK_ITERS", w.sk_iters)]
        for name, v in vals:
            c(f"{name} = tl.constexpr({v})")
        c(f"C_DTYPE = tl.constexpr({_TL[p.c_dtype]})")
        return c.text()

    def tile_coords(self) -> str:
        o = self.p.order
        c = Code()
        c("@triton.jit", "def tile_coords(t):")
        c.indent()
        c(f'"""Linear tile index t -> (pid_m, pid_n): {o.description}."""')
        names, live = {o.index: "t"}, Context().bound(o.index, o.num_tiles)  # t < num_tiles: signs
        c(f"pid_m = {TritonExprPrinter(names, live).doprint(o.tile_m)}")
        c(f"pid_n = {TritonExprPrinter(names, live).doprint(o.tile_n)}")
        c("return pid_m, pid_n")
        return c.text()

    def load_fn(self, op: OperandLoad) -> str:
        """``load_a(a, pid_m, ki)`` -> [BM, BK]; ``load_b(b, pid_n, ki)`` -> [BK, BN]."""
        p = self.p
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
        if self.wide:
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

    def mainloop(self) -> str:
        p = self.p
        prec = ""
        if p.dtype is DType.FP32:
            prec = f', input_precision="{p.input_precision.value}"'
        c = Code()
        c("@triton.jit", "def mainloop(a, b, pid_m, pid_n, k_begin, k_end):")
        c.indent()
        c('"""fp32 accumulator of the tile (pid_m, pid_n) over k-iterations [k_begin, k_end)."""')
        c("acc = tl.zeros((BM, BN), dtype=tl.float32)")
        ws = ", warp_specialize=True" if self.warp_specialize else ""
        c(f"for ki in tl.range(k_begin, k_end{ws}):")
        c.indent()
        c(f"acc = tl.dot(load_a(a, pid_m, ki), load_b(b, pid_n, ki), acc{prec})")
        c.dedent()
        c("return acc")
        return c.text()

    def store_c(self) -> str:
        p = self.p
        c = Code()
        c("@triton.jit", "def store_c(c, acc, pid_m, pid_n):")
        c.indent()
        c("offs_m = pid_m * BM + tl.arange(0, BM)")
        c("offs_n = pid_n * BN + tl.arange(0, BN)")
        if self.wide:
            c("offs_m = offs_m.to(tl.int64)")
        masks = []
        if p.M % p.BM:
            masks.append("(offs_m[:, None] < M)")
        if p.N % p.BN:
            masks.append("(offs_n[None, :] < N)")
        m = f", mask={' & '.join(masks)}" if masks else ""
        c(f"tl.store(c + offs_m[:, None] * N + offs_n[None, :], acc.to(C_DTYPE){m})")
        return c.text()

    def partial_slots(self) -> str:
        """Where the j-th partial (K order) of partial-region tile ``tile`` lives, and how many."""
        w = self.p.work
        c = Code()
        c("@triton.jit", "def contributors(tile):")
        c.indent()(f"return {self.expr(w.contributors(TILE), tile='tile')}").dedent()
        c("", "", "@triton.jit", "def partial_slot(tile, j):")
        c.indent()
        if self.split_k:
            c(f"return {self.expr(w.partial_slot(TILE, J), tile='tile', j='j')}")
            return c.text()
        c('"""Slot 2*cta for the CTA\'s first tile, 2*cta + 1 for its last."""')
        c(f"cta = {self.expr(w.first_contributor(TILE) + J, tile='tile', j='j')}")
        c(f"return {self.expr(w.sk_slot(CTA, TILE), cta='cta', tile='tile')}")
        return c.text()

    def fixup_fn(self) -> str:
        f = self.fixup
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

    def _alive(self, c: Code) -> None:
        # TileOrder.alive, on the coordinates just computed
        if self.padded:
            c("if (pid_m < TILES_M) & (pid_n < TILES_N):  # the order pads to whole groups")
            c.indent()

    def unit(self) -> str:
        c = Code()
        c("@triton.jit", "def unit_full(a, b, c, t):")
        c.indent()
        c('"""Data-parallel unit: the whole K range of tile t."""')
        c("pid_m, pid_n = tile_coords(t)")
        self._alive(c)
        c("store_c(c, mainloop(a, b, pid_m, pid_n, 0, K_ITERS), pid_m, pid_n)")
        if not self.partials:
            return c.text()
        c.level = 0
        c("", "", "@triton.jit",
          "def unit_partial(a, b, c, ws, tickets, t, k_begin, k_end, tile, slot):")
        c.indent()
        c('"""k-iterations [k_begin, k_end) of tile t (partial-region tile `tile`, slot `slot`)."""')
        c("pid_m, pid_n = tile_coords(t)")
        self._alive(c)
        c("acc = mainloop(a, b, pid_m, pid_n, k_begin, k_end)")
        if self.stream_k:
            c("if (k_begin == 0) & (k_end == K_ITERS):")
            c.indent()("store_c(c, acc, pid_m, pid_n)").dedent()
            c("else:")
            c.indent()("fixup(c, ws, tickets, acc, pid_m, pid_n, tile, slot)").dedent()
        else:
            c("fixup(c, ws, tickets, acc, pid_m, pid_n, tile, slot)")
        return c.text()

    # the schedule -----------------------------------------------------------------------
    def _dp_loop(self, c: Code, start: int, end: int) -> None:
        g = self.p.work.grid
        if end <= start:
            return
        if end - start <= g:
            c(f"if pid < {end - start}:" if end - start < g else "if True:")
            c.indent()(f"unit_full(a, b, c, {self.expr(PID + start, pid='pid')})").dedent()
        else:
            c(f"for t in range({self.expr(PID + start, pid='pid')}, {end}, GRID):")
            c.indent()("unit_full(a, b, c, t)").dedent()

    def _split_k_loop(self, c: Code) -> None:
        w = self.p.work
        units = self.num_tiles * w.splits
        if units <= w.grid:
            c("u = pid")
        else:
            c("for u in range(pid, NUM_TILES * SPLITS, GRID):")
            c.indent()
        tile, part = w.split_k_unit(UNIT)
        c(f"t = {self.expr(tile, u='u')}")
        c(f"s = {self.expr(part, u='u')}")
        k_begin, k_end = w.split_k_range(kernel_symbol("s"))
        c(f"k_begin = {self.expr(k_begin, s='s')}")
        c(f"k_end = {self.expr(k_end, s='s')}")
        c("unit_partial(a, b, c, ws, tickets, t, k_begin, k_end, t, u)")
        if units > w.grid:
            c.dedent()

    def _sk_loop(self, c: Code) -> None:
        w = self.p.work
        c(f"if pid < SK_CTAS:  # Stream-K: {w.sk_iters} iterations over {w.sk_ctas} CTAs")
        c.indent()
        it_begin, it_end = w.sk_range(PID)
        c(f"it_begin = {self.expr(it_begin, pid='pid')}")
        c(f"it_end = {self.expr(it_end, pid='pid')}")
        first, end = w.sk_tiles_of(IT_BEGIN, IT_END)
        c(f"first = {self.expr(first, it_begin='it_begin')}")
        c(f"for tile in range(first, {self.expr(end, it_end='it_end')}):")
        c.indent()
        names = dict(tile="tile", it_begin="it_begin", it_end="it_end")
        k_begin, k_end = w.sk_unit_range(TILE, IT_BEGIN, IT_END)
        c(f"k_begin = {self.expr(k_begin, **names)}")
        c(f"k_end = {self.expr(k_end, **names)}")
        # the slot of this CTA's partial, with its first tile already in `first`
        slot = w.sk_slot(PID, TILE).xreplace({w.sk_first_tile(PID): kernel_symbol("first")})
        c(f"slot = {self.expr(slot, pid='pid', tile='tile', first='first')}")
        c(f"unit_partial(a, b, c, ws, tickets, {self.expr(TILE + self.sk_start, tile='tile')},"
          " k_begin, k_end, tile, slot)")
        c.dedent().dedent()

    def kernel_args(self) -> str:
        return "a, b, c, ws, tickets" if self.partials else "a, b, c"

    def kernel(self) -> str:
        w = self.p.work
        c = Code()
        c("@triton.jit", f"def gemm_kernel({self.kernel_args()}):")
        c.indent()
        c("pid = tl.program_id(0)")
        if self.split_k:
            self._split_k_loop(c)
        elif self.stream_k:
            dp = w.dp_range
            if w.sk_first:
                self._sk_loop(c)
                self._dp_loop(c, *dp)
            else:
                self._dp_loop(c, *dp)
                self._sk_loop(c)
        else:
            self._dp_loop(c, 0, self.num_tiles)
        return c.text()

    def reduce_kernel(self) -> str:
        c = Code()
        c("@triton.jit", "def reduce_kernel(c, ws):")
        c.indent()
        c('"""Sum the partials of one tile in K order and write C (second launch)."""')
        c("tile = tl.program_id(0)")
        c("n = contributors(tile)")
        c("if n > 1:  # a single contributor owned the whole tile and wrote C itself")
        c.indent()
        c(f"pid_m, pid_n = tile_coords({self.expr(TILE + self.sk_start, tile='tile')})")
        self._alive(c)
        c("offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]")
        c("total = tl.zeros((BM, BN), dtype=tl.float32)")
        c("for j in range(n):")
        c.indent()("total += tl.load(ws + partial_slot(tile, j) * (BM * BN) + offs)").dedent()
        c("store_c(c, total, pid_m, pid_n)")
        return c.text()

    def launcher(self) -> str:
        p = self.p
        w = p.work
        tdt = _TORCH[p.dtype]
        # the launcher is plain Python: sizes are int literals (tl.constexpr is for kernels)
        M, N, K, BM, BN = p.M, p.N, p.K, p.BM, p.BN
        b_shape = f"({N}, {K})" if p.b_transposed else f"({K}, {N})"
        c = Code()
        c("def _check(name, x, shape, dtype):")
        c.indent()
        c("if not isinstance(x, torch.Tensor):")
        c.indent()('raise TypeError(f"{name} must be a torch.Tensor but got {type(x).__name__}")').dedent()
        c("if tuple(x.shape) != shape:")
        c.indent()('raise ValueError(f"{name} must have shape {shape} but got {tuple(x.shape)}")').dedent()
        c("if x.dtype != dtype:")
        c.indent()('raise TypeError(f"{name} must have dtype {dtype} but got {x.dtype}")').dedent()
        c.dedent()
        c("", "")
        if LoadKind.TMA in (p.a.kind, p.b.kind):
            c("def _aligned(x):")
            c.indent()
            c("return x if x.data_ptr() % 16 == 0 else x.clone()  # TMA needs 16-byte base addresses")
            c.dedent()("", "")
        if self.partials:
            self._workspace_fn(c)
        c("def run(a, b, out=None):")
        c.indent()
        c(f'"""C = A @ B{".T" if p.b_transposed else ""}: a is (M, K), b is {b_shape}, '
          f'{p.dtype.value}; returns (M, N).')
        c("")
        c("out: an (M, N) tensor to write into (every element is written); default: a new one.")
        c('"""')
        c(f'_check("A", a, ({M}, {K}), {tdt})')
        c(f'_check("B", b, {b_shape}, {tdt})')
        c("if a.device != b.device:")
        c.indent()('raise ValueError(f"A and B must be on one device but got {a.device} and {b.device}")').dedent()
        c("a = a.contiguous()", "b = b.contiguous()")
        c("if out is None:")
        c.indent()(f"out = torch.empty(({M}, {N}), dtype={_TORCH[p.c_dtype]}, device=a.device)").dedent()
        c("else:")
        c.indent()
        c(f'_check("out", out, ({M}, {N}), {_TORCH[p.c_dtype]})')
        c("if not out.is_contiguous() or out.device != a.device:")
        c.indent()('raise ValueError("out must be contiguous and on the device of A")').dedent()
        c.dedent()
        sizes = {"M": M, "N": N, "K": K}
        for op, var, rows, cols, box in self._descs():
            if op.kind is LoadKind.TMA:
                r, cl = sizes[rows], sizes[cols]
                c(f"{var} = TensorDescriptor(_aligned({var}), shape=[{r}, {cl}], "
                  f"strides=[{cl}, 1], block_shape=[{box[0]}, {box[1]}])")
        args = "a, b, out"
        if self.partials:
            n_tickets = w.partial_tiles
            # one fp32 buffer per partial tile (atomic), else one slot per partial
            slots = n_tickets if self.fixup is Fixup.ATOMIC else w.partial_slots
            c(f"ws, tickets = _workspace(out.device, {slots * BM * BN}, {n_tickets})")
            args += ", ws, tickets"
        c(f"gemm_kernel[(GRID,)]({args}, num_warps={p.num_warps}, num_stages={p.num_stages})")
        if self.fixup is Fixup.REDUCE_KERNEL:
            c(f"reduce_kernel[({w.partial_tiles},)](out, ws, num_warps=4)")
        c("return out")
        return c.text()

    def _workspace_fn(self, c: Code) -> None:
        c("_WORKSPACES = {}", "", "")
        c("def _workspace(device, n_ws, n_tickets):")
        c.indent()
        c('"""fp32 partial buffers and int32 tickets, zeroed once and kept per (device, stream).')
        c("")
        c("The kernel leaves both zeroed again (the last contributor of a tile clears its buffer")
        c("and resets its ticket), so a call launches no memset; launches on one stream run in")
        c("order, so two of them never share a workspace.")
        c('"""')
        c('stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0')
        c("key = (str(device), stream)")
        c("if key not in _WORKSPACES:")
        c.indent()
        c("buf = torch.zeros(n_ws + n_tickets, dtype=torch.float32, device=device)")
        c("_WORKSPACES[key] = (buf[:n_ws], buf[n_ws:].view(torch.int32))")
        c.dedent()
        c("return _WORKSPACES[key]")
        c.dedent()
        c("", "")

    def _descs(self) -> list[tuple[OperandLoad, str, str, str, tuple[int, int]]]:
        p = self.p
        out = [(p.a, "a", "M", "K", (p.BM, p.BK))]
        if p.b_transposed:
            out.append((p.b, "b", "N", "K", (p.BN, p.BK)))
        else:
            out.append((p.b, "b", "K", "N", (p.BK, p.BN)))
        return out


def emit(plan: KernelPlan, *, warp_specialize: bool = False) -> str:
    """The standalone Triton source of ``plan``: @triton.jit kernels and ``run(a, b, out=None)``."""
    return TritonPrinter(plan, warp_specialize=warp_specialize).emit()


_LOADED: dict[str, ModuleType] = {}


def load(plan: KernelPlan, *, warp_specialize: bool = False) -> ModuleType:
    """Write ``emit(plan)`` to a file and import it (tests and benches run the exact user text).

    The file lives under ``$TILEC_CACHE/triton`` (default ``~/.cache/tilec/triton``, or a temp
    dir when that is not writable); the module's ``__file__`` is that path.
    """
    src = emit(plan, warp_specialize=warp_specialize)
    key = hashlib.sha1(src.encode()).hexdigest()[:16]
    if key in _LOADED:
        return _LOADED[key]
    root = os.environ.get("TILEC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tilec")
    folder = os.path.join(root, "triton")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        folder = tempfile.mkdtemp(prefix="tilec_")
    name = f"tilec_{plan.name}_{key}".replace("-", "_")
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):
        tmp = path + f".{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(src)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # triton's jit reads the source through the module
    spec.loader.exec_module(mod)
    _LOADED[key] = mod
    return mod


def run_plan(plan: KernelPlan, a: Any, b: Any, out: Any = None, **opts: Any) -> Any:
    """``load(plan, **opts).run(a, b, out)``."""
    return load(plan, **opts).run(a, b, out)


def bench(plan: KernelPlan, **kw: Any) -> dict[str, Any]:
    """Time the plan's kernel, torch.matmul and a plain Triton kernel (GPU); see triton_bench."""
    from tilec.runtime.bench import bench_plan

    return bench_plan(plan, **kw)

