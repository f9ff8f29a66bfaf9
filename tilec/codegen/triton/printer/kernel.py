"""What every section of the Triton file is printed from: the plan checked against what Triton
can run (:func:`check`), the :class:`Kernel` (the plan, the printer's options and the work
split's facts the sections branch on), and :class:`Code`, the lines of Python being written."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from tilec.codegen.triton.expr import TritonExprPrinter
from tilec.errors import UnsupportedError
from tilec.transforms.plan import DType, Fixup, KernelPlan, LoadKind, kernel_symbol

TL_DTYPE = {DType.FP16: "tl.float16", DType.BF16: "tl.bfloat16", DType.FP32: "tl.float32"}
TORCH_DTYPE = {DType.FP16: "torch.float16", DType.BF16: "torch.bfloat16",
               DType.FP32: "torch.float32"}


def range_takes(arg: str) -> bool:
    """Whether the installed Triton's ``tl.range`` has the keyword ``arg``."""
    import inspect

    import triton.language as tl

    try:
        return arg in inspect.signature(tl.range.__init__).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


class Code:
    """Lines of Python with an indentation level.

    >>> c = Code()
    >>> print(c("def f():").indent()("return 1").dedent()("").text(), end="")
    def f():
        return 1
    <BLANKLINE>
    """

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


def check(p: KernelPlan) -> None:
    """Refuse (UnsupportedError) plan features Triton cannot express: clusters > 1, multicast,
    C in another type than the inputs, tiles that are not powers of two >= 16, TMA loads of
    rows that are not 16-byte aligned, and an order or B layout that disagrees with the plan."""
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
    ref = p.order.concrete()
    if ref.tiles_m != -(-p.M // p.BM) or ref.tiles_n != -(-p.N // p.BN):
        raise UnsupportedError(
            f"triton: tile order covers {ref.tiles_m} x {ref.tiles_n} tiles but "
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


@dataclass(frozen=True)
class Kernel:
    """One kernel being printed: a checked plan and whether its K loop is warp-specialized
    (``tl.range(..., warp_specialize=True)``, only where the installed Triton takes it)."""

    plan: KernelPlan
    warp_specialize: bool = False

    @property
    def num_tiles(self) -> int:
        """Linear tile indices the work split walks (the order's, with padding)."""
        return self.plan.work.num_tiles

    @property
    def split_k(self) -> bool:
        return self.plan.work.split_k

    @property
    def stream_k(self) -> bool:
        return self.plan.work.stream_k

    @property
    def sk_start(self) -> int:
        """The first linear tile of the Stream-K region."""
        return self.plan.work.sk_start

    @property
    def partials(self) -> bool:
        """Whether some work units cover part of a tile's K range (a fix-up is printed)."""
        return self.split_k or self.stream_k

    @property
    def fixup(self) -> Fixup | None:
        """How partial tiles are summed; None when every unit covers a whole tile."""
        return self.plan.work.fixup if self.partials else None

    @property
    def padded(self) -> bool:
        """The order pads to whole groups: a unit checks its tile is alive."""
        return self.num_tiles > self.plan.tiles

    @property
    def wide(self) -> bool:
        """Some operand has 2**31 elements or more: row offsets are computed in int64."""
        p = self.plan
        return max(p.M * p.K, p.K * p.N, p.M * p.N) >= 2**31

    def expr(self, e: sympy.Basic | int, **names: str) -> str:
        """``e`` as Triton text, each plan symbol ``kernel_symbol(k)`` printed as ``names[k]``."""
        syms = {kernel_symbol(k): v for k, v in names.items()}
        return TritonExprPrinter(syms).doprint(sympy.sympify(e))
