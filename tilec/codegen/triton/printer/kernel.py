"""What every section of the Triton file is printed from: the plan checked against what Triton
can run (:func:`check`), the :class:`Kernel` (the plan, the printer's options and the work
split's facts the sections branch on), and :class:`Code`, the lines of Python being written."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy

from tilec.codegen.triton.expr import TritonExprPrinter
from tilec.dtypes import TORCH_NAME, TRITON_NAME
from tilec.errors import UnsupportedError
from tilec.ir import ceil_div
from tilec.proofs import Context
from tilec.transforms.plan import (
    SIZE_K,
    SIZE_M,
    SIZE_N,
    WORK_SYMBOLS,
    Decomposition,
    Fixup,
    KernelPlan,
    LoadKind,
    WorkSplit,
    kernel_symbol,
)

TL_DTYPE = {d: f"tl.{name}" for d, name in TRITON_NAME.items()}  # as the file spells them
TORCH_DTYPE = {d: f"torch.{name}" for d, name in TORCH_NAME.items()}


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
    C in another type than the inputs, tiles that are not powers of two >= 16, and an order or
    B layout that disagrees with the plan (TMA loads take rows of any length: the launcher
    copies those TMA cannot take into aligned rows)."""
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
    need = (ceil_div(p.M, p.BM), ceil_div(p.N, p.BN))
    if (ref.tiles_m, ref.tiles_n) != need:
        raise UnsupportedError(
            f"triton: tile order covers {ref.tiles_m} x {ref.tiles_n} tiles but "
            f"M={p.M}, N={p.N} with BM={p.BM}, BN={p.BN} need {need[0]} x {need[1]}"
        )


# the run-time sizes and leading dimensions every device function receives, then the work
# split's numbers (the launcher computes them per call), then the variant's compile-time flags
SHAPE_ARGS = ("M", "N", "K", "lda", "ldb", "ldc")
# the variant's compile-time flags: the facts (BM divides M, BN divides N, BK divides K: no
# boundary mask along that size) and int64 offsets
# and, per operand loaded by TMA, whether its rows take TMA this call (16-byte aligned base and
# row stride: else the variant loads it through masked pointers); then int64 offsets
FLAGS = ("EVEN_M", "EVEN_N", "EVEN_K", "TMA_A", "TMA_B", "WIDE")


@dataclass(frozen=True)
class Kernel:
    """One kernel being printed: a checked plan and whether its K loop is warp-specialized
    (``tl.range(..., warp_specialize=True)``, only where the installed Triton takes it).

    The kernel is shape-generic: M, N, K, the leading dimensions and the work split's numbers
    (:data:`~tilec.transforms.plan.WORK_SYMBOLS`) are run-time arguments; what it prints depends
    on the configuration only (the decomposition's kind, never whether its regions are empty at
    the size the plan was lowered at). The variant's ``tl.constexpr`` flags (:data:`FLAGS`):
    ``EVEN_M``, ``EVEN_N``, ``EVEN_K``, the plan's facts (the tile divides that size: no
    boundary mask along it; all three: the facts variant), and ``WIDE`` (int64 offsets).

    ``static=True`` prints the per-shape kernel of the same text (``tilec gen --sizes static``):
    the kernels take M, N, K and the leading dimensions as ``tl.constexpr`` (Triton folds
    them), and the launcher serves the plan's M, N, K only, with the operands in rows of
    :attr:`leading` elements.
    """

    plan: KernelPlan
    warp_specialize: bool = False
    static: bool = False

    @property
    def leading(self) -> tuple[int, int, int]:
        """The static file's (lda, ldb, ldc): A's and B's rows padded to 16 bytes (the rows the
        launcher copies an operand into where TMA cannot take it), C's rows contiguous."""
        p, nb = self.plan, self.plan.dtype.nbytes

        def pad(n: int) -> int:  # as the launcher's _aligned pads rows
            return -(-n * nb // 16) * 16 // nb

        return pad(p.K), pad(p.K if p.b.transposed else p.N), p.N

    @cached_property
    def work(self) -> WorkSplit:
        """The split with its numbers as run-time symbols (the formulas printed)."""
        return self.plan.work.symbolic()

    @property
    def kind(self) -> Decomposition:
        return self.plan.work.kind

    @property
    def split_k(self) -> bool:
        """Split-K with more than one part (a part count capped by k_iters at run time)."""
        rule = self.plan.split
        splits = rule.splits if rule is not None else self.plan.work.splits
        return self.kind is Decomposition.SPLIT_K and splits > 1

    @property
    def stream_k(self) -> bool:
        """A Stream-K region may exist at some size (Stream-K++ with no waves has none)."""
        if self.kind in (Decomposition.DATA_PARALLEL, Decomposition.SPLIT_K):
            return False
        rule = self.plan.split
        waves = rule.sk_waves if rule is not None else self.plan.work.sk_waves
        return not (self.kind is Decomposition.STREAM_K_PP and waves == 0)

    @property
    def sk_first(self) -> bool:
        return self.plan.work.sk_first

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
        """The order may walk indices past the C tiles (whole groups, rounds): a unit checks
        its tile is alive."""
        o = self.plan.order
        return sympy.expand(sympy.sympify(o.num_tiles) - o.tiles_m * o.tiles_n) != 0

    @property
    def numbers(self) -> tuple[str, ...]:
        """The work split's numbers the kernel receives, in argument order."""
        out = ["GRID", "NUM_TILES", "K_ITERS"]
        if self.split_k:
            out.append("SPLITS")
        if self.stream_k:
            out += ["SK_TILES", "SK_CTAS"]
        return tuple(out)

    @property
    def args(self) -> str:
        """The trailing arguments of every device function: sizes, numbers, variant flags."""
        return ", ".join((*SHAPE_ARGS, *self.numbers, *FLAGS))

    @property
    def params(self) -> str:
        """:attr:`args` as parameters (the variant's flags compile-time)."""
        return ", ".join((*SHAPE_ARGS, *self.numbers, *(f"{f}: tl.constexpr" for f in FLAGS)))

    @property
    def launch_params(self) -> str:
        """The kernels' own parameters after their pointers: the sizes and the flags (the work
        split's numbers are computed on the device: fewer arguments, a cheaper launch); static:
        the sizes compile-time too."""
        sizes = (f"{a}: tl.constexpr" for a in SHAPE_ARGS) if self.static else SHAPE_ARGS
        return ", ".join((*sizes, *(f"{f}: tl.constexpr" for f in FLAGS)))

    def number_steps(self) -> list[tuple[sympy.Symbol, sympy.Expr]]:
        """The work split's numbers as assignments in order, each over M, N, K and the names
        assigned before it (the plan's SplitRule forms, with the tile counts named): what the
        device and the launcher compute."""
        assert self.plan.split is not None, "a plan lowered with fixed sizes has no split rule"
        forms = {k: sympy.sympify(v) for k, v in self.plan.split.forms().items()}
        o = self.plan.order
        named = [(sympy.Symbol("TILES_M", integer=True, positive=True), sympy.sympify(o.tiles_m)),
                 (sympy.Symbol("TILES_N", integer=True, positive=True), sympy.sympify(o.tiles_n))]
        order = ["k_iters", "num_tiles", "splits", "sk_tiles", "sk_ctas", "grid"]
        wanted = {n.lower() for n in self.numbers}
        named += [(WORK_SYMBOLS[n], forms[n]) for n in order if n in wanted]
        out: list[tuple[sympy.Symbol, sympy.Expr]] = []
        for sym, e in named:
            for prev, pe in out:
                e = e.xreplace({pe: prev})
            out.append((sym, e))
        return out

    def numbers_prologue(self, c: Code) -> None:
        """Compute the work split's numbers from M, N, K on the device (the plan's SplitRule
        forms, as the launcher's ``_numbers`` computes them for the grid)."""
        for sym, e in self.number_steps():
            c(f"{sym.name} = {self.expr(e, TILES_M='TILES_M', TILES_N='TILES_N')}")

    @property
    def pointer_loads(self) -> bool:
        """Some operand is loaded through pointers (masked at the edges; TMA fills with 0)."""
        return LoadKind.POINTER in (self.plan.a.kind, self.plan.b.kind)

    def expr(self, e: sympy.Basic | int, **names: str) -> str:
        """``e`` as Triton text, each plan symbol ``kernel_symbol(k)`` printed as ``names[k]``,
        the sizes and the work split's numbers as the kernel's arguments of those names."""
        syms: dict[sympy.Symbol, str] = {kernel_symbol(k): v for k, v in names.items()}
        syms.update({sympy.Symbol(k, integer=True, positive=True): v for k, v in names.items()
                     if k.isupper()})
        syms.update({s: s.name for s in WORK_SYMBOLS.values()})
        syms.update({SIZE_M: "M", SIZE_N: "N", SIZE_K: "K"})
        return TritonExprPrinter(syms, _REGION).doprint(sympy.sympify(e))


# the Stream-K formulas are printed (and run) only inside the region: ``pid < SK_CTAS`` and
# region tiles exist, so there SK_CTAS and SK_TILES are positive (their signs prove `//`, `%`)
_REGION = Context().positive(WORK_SYMBOLS["sk_ctas"], WORK_SYMBOLS["sk_tiles"])
