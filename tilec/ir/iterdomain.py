"""IterDomains and the transforms between them (nvFuser semantics).

An :class:`IterDomain` is one axis: an extent (a positive sympy expression), an :class:`IterType`
and a :class:`ParallelType`.  Axes are produced by transforms that form a DAG from a view's
logical domain to its loop domain:

* :class:`Split` ``E -> (ceil(E/f), f)`` (inner split) or ``(f, ceil(E/f))`` (outer split);
  index ``in = outer * inner_extent + inner``; needs the predicate ``in < E`` unless ``f`` divides E.
* :class:`Merge` ``(Eo, Ei) -> Eo*Ei``; ``outer = out / Ei``, ``inner = out % Ei``.
* :class:`Swizzle` a bijection of two axes used for tile orders (grouped raster).

Axes are immutable; identity is the ``uid`` (``dataclasses.replace`` keeps it), so a view can
re-bind an axis' parallel type without losing its place in the transform graph.

Example::

    >>> import sympy
    >>> m = IterDomain("M", sympy.Integer(100))
    >>> s = Split.make(m, 32)
    >>> (s.outer.extent, s.inner.extent, s.divisible)
    (4, 32, False)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import overload

import sympy

from tilec.errors import AxisNameError, ScheduleError, SplitFactorError
from tilec.ir.types import IterType, ParallelType

_uids = itertools.count()


def as_extent(value: int | str | sympy.Expr) -> sympy.Expr:
    """A positive integer extent as sympy: ints stay ints, names become positive integer symbols
    (a bare ``sympy.Symbol("u")`` too, as the schedule trace replays it by name)."""
    if isinstance(value, sympy.Symbol) and not (value.is_integer and value.is_positive):
        return sympy.Symbol(value.name, integer=True, positive=True)
    if isinstance(value, sympy.Expr):
        return value
    if isinstance(value, str):
        return sympy.Symbol(value, integer=True, positive=True)
    return sympy.Integer(value)


@overload
def ceil_div(a: int, b: int) -> int: ...
@overload
def ceil_div(a: sympy.Expr | int, b: sympy.Expr | int) -> sympy.Expr: ...
def ceil_div(a: sympy.Expr | int, b: sympy.Expr | int) -> sympy.Expr | int:
    """``ceil(a / b)`` for a >= 0, b > 0: an int of two ints, else a sympy value, folded when both
    are numbers.

    >>> ceil_div(100, 32), ceil_div(sympy.Integer(100), 32), ceil_div(sympy.Symbol("M"), 32)
    (4, 4, ceiling(M/32))
    """
    if type(a) is int and type(b) is int:
        return -(-a // b)
    a = sympy.Integer(a) if isinstance(a, int) else a
    b = sympy.Integer(b) if isinstance(b, int) else b
    if a.is_Integer and b.is_Integer:
        return sympy.Integer(-(-int(a) // int(b)))
    q = a / b
    if _irreducible_ratio(q):
        # what sympy's ceiling returns for it, without its assumption queries (milliseconds
        # per extent: most of the time of building a schedule over symbols)
        return sympy.ceiling(q, evaluate=False)
    return sympy.ceiling(q)


def _irreducible_ratio(q: sympy.Expr) -> bool:
    """``q`` is ``c * num / den``: ``c`` a positive rational, ``num`` and ``den`` products of
    positive integer symbols and ceilings (integer powers), ``num`` not a number and ``den`` not
    1. sympy's ``ceiling(q)`` then stays unevaluated: the bases of ``num`` and ``den`` are
    distinct (a product cancels equal bases), so neither ``q``'s integrality nor ``q <= 1`` (nor
    any other bound that would pin it) follows from signs, which is all sympy's evaluation asks.
    tests/ir/test_transforms.py compares the two on random ratios."""
    if not q.is_Mul:
        return False
    coeff, rest = q.as_coeff_Mul()
    if not (coeff.is_Rational and coeff > 0):
        return False
    up = down = False
    for f in sympy.Mul.make_args(rest):
        base, exp = f.as_base_exp()
        if not exp.is_Integer or not (
                (base.is_Symbol and base.is_integer and base.is_positive)
                or isinstance(base, sympy.ceiling)):
            return False
        up, down = up or exp > 0, down or exp < 0
    return up and (down or coeff.q != 1)


def divides(factor: sympy.Expr, extent: sympy.Expr) -> bool | None:
    """True if ``factor`` provably divides ``extent``, False if provably not, None if unknown.

    Over symbols, only a syntactic multiple counts (``CM*CN`` by ``CN``): sympy's ``Mod`` would
    ask the assumptions system about every ceiling in the extent (seconds per schedule) and
    proves nothing more for tile extents.
    """
    if extent.free_symbols or factor.free_symbols:
        return True if _obviously_integer(extent / factor) else None
    rem = sympy.Mod(extent, factor)
    if rem == 0:
        return True
    if rem.is_Integer:
        return False
    return None


def _obviously_positive(e: sympy.Basic) -> bool:
    """Positive by its shape: positive numbers and symbols, and sums, products, powers and
    ceilings of those (no assumption queries on new expressions: sympy's ``is_positive`` is
    never False for them, and asking it costs milliseconds per extent)."""
    if e.is_Number:
        return bool(e.is_positive)
    if e.is_Symbol:
        return bool(e.is_positive)
    if isinstance(e, (sympy.Add, sympy.Mul)):
        return all(_obviously_positive(a) for a in e.args)
    if isinstance(e, sympy.Pow):
        return e.exp.is_Integer and _obviously_positive(e.base)
    if isinstance(e, sympy.ceiling):
        return _obviously_positive(e.args[0])
    return False


def _obviously_integer(e: sympy.Basic) -> bool:
    """An integer by its shape: integers, integer symbols, floor/ceiling/Mod, and sums, products
    and natural powers of those (no assumption queries)."""
    if e.is_Integer or (e.is_Symbol and e.is_integer):
        return True
    if isinstance(e, (sympy.floor, sympy.ceiling, sympy.Mod)):
        return True
    if isinstance(e, (sympy.Add, sympy.Mul)):
        return all(_obviously_integer(a) for a in e.args)
    if isinstance(e, sympy.Pow):
        return e.exp.is_Integer and e.exp >= 0 and _obviously_integer(e.base)
    return False


@dataclass(frozen=True, eq=False)
class IterDomain:
    """One axis. Equality and hashing are by ``uid``; ``replace`` keeps the identity."""

    name: str
    extent: sympy.Expr
    iter_type: IterType = IterType.ITERATION
    ptype: ParallelType = ParallelType.SERIAL
    expanded: bool = False  # a broadcast that stands for a consumer's iteration axis
    uid: int = field(default_factory=lambda: next(_uids))

    def __post_init__(self) -> None:
        # a user may build axes by hand (tests, custom views): check them as the verbs would
        if not isinstance(self.name, str) or not self.name:
            raise AxisNameError(f"an IterDomain's name must be a non-empty string but got "
                                f"{self.name!r}")
        if isinstance(self.extent, int) and not isinstance(self.extent, bool):
            object.__setattr__(self, "extent", sympy.Integer(self.extent))
        if not isinstance(self.extent, sympy.Expr) or (
                not _obviously_positive(self.extent) and self.extent.is_positive is False):
            raise SplitFactorError(f"IterDomain {self.name}: extent must be a positive integer (or a "
                                   f"positive integer expression) but got {self.extent!r}")
        if not isinstance(self.iter_type, IterType) or not isinstance(self.ptype, ParallelType):
            raise ScheduleError(f"IterDomain {self.name}: iter_type must be an IterType and ptype a "
                                f"ParallelType but got {self.iter_type!r} and {self.ptype!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IterDomain) and other.uid == self.uid

    def __hash__(self) -> int:
        return hash(self.uid)

    @property
    def is_reduction(self) -> bool:
        return self.iter_type is IterType.REDUCTION

    @property
    def is_broadcast(self) -> bool:
        return self.iter_type is IterType.BROADCAST

    def with_ptype(self, ptype: ParallelType) -> IterDomain:
        return replace(self, ptype=ptype)

    def fresh(self, **changes: object) -> IterDomain:
        """A new axis (new uid) like this one."""
        return replace(self, uid=next(_uids), **changes)  # type: ignore[arg-type]

    def __str__(self) -> str:
        tag = "S" if self.ptype is ParallelType.SERIAL else self.ptype.name
        return f"{self.iter_type.value}{tag}.{self.name}{{{self.extent}}}"

    def __repr__(self) -> str:
        return f"IterDomain({self})"


@dataclass(frozen=True)
class Split:
    """``input -> (outer, inner)``; ``factor`` is the inner extent (inner split) or outer extent."""

    input: IterDomain
    factor: sympy.Expr
    inner_split: bool
    outer: IterDomain
    inner: IterDomain

    @staticmethod
    def make(
        axis: IterDomain, factor: int | sympy.Expr, inner: bool = True,
        names: tuple[str, str] | None = None,
    ) -> Split:
        f = as_extent(factor)
        rest = ceil_div(axis.extent, f)
        outer_extent, inner_extent = (rest, f) if inner else (f, rest)
        on, inn = names or (f"{axis.name}o", f"{axis.name}i")
        kind = dict(iter_type=axis.iter_type, ptype=ParallelType.SERIAL, expanded=axis.expanded)
        o = IterDomain(on, outer_extent, **kind)  # type: ignore[arg-type]
        i = IterDomain(inn, inner_extent, **kind)  # type: ignore[arg-type]
        return Split(axis, f, inner, o, i)

    @property
    def inputs(self) -> tuple[IterDomain, ...]:
        return (self.input,)

    @property
    def outputs(self) -> tuple[IterDomain, ...]:
        return (self.outer, self.inner)

    @property
    def divisible(self) -> bool | None:
        """Whether the split is exact (no predicate needed); None when it depends on symbols."""
        return divides(self.factor, self.input.extent)


@dataclass(frozen=True)
class Merge:
    """``(outer, inner) -> out`` with ``out = outer * inner.extent + inner``."""

    outer: IterDomain
    inner: IterDomain
    out: IterDomain

    @staticmethod
    def make(outer: IterDomain, inner: IterDomain, name: str | None = None) -> Merge:
        types = {outer.iter_type, inner.iter_type}
        if IterType.REDUCTION in types:
            itype = IterType.REDUCTION
        elif types == {IterType.BROADCAST}:
            itype = IterType.BROADCAST
        else:
            itype = IterType.ITERATION
        out = IterDomain(
            name or f"{outer.name}_{inner.name}",
            outer.extent * inner.extent,
            itype,
            expanded=outer.expanded and inner.expanded,
        )
        return Merge(outer, inner, out)

    @property
    def inputs(self) -> tuple[IterDomain, ...]:
        return (self.outer, self.inner)

    @property
    def outputs(self) -> tuple[IterDomain, ...]:
        return (self.out,)


@dataclass(frozen=True)
class Swizzle:
    """Grouped raster of a 2-D tile grid (rows ``x``, columns ``y``), groups of ``group`` rows.

    The outputs (``x_out``, ``y_out``) walk the grid row-major as ``t = x_out * Ey + y_out``;
    the tile visited is ``x = g*G + (t % (G*Ey)) % gs``, ``y = (t % (G*Ey)) / gs`` with
    ``g = t / (G*Ey)`` and ``gs = min(Ex - g*G, G)``: G rows are walked column by column, so
    consecutive tiles reuse the same B columns and A rows from L2. A bijection: no padding.
    """

    x: IterDomain
    y: IterDomain
    group: sympy.Expr
    x_out: IterDomain
    y_out: IterDomain

    @staticmethod
    def make(x: IterDomain, y: IterDomain, group: int | sympy.Expr) -> Swizzle:
        g = as_extent(group)
        return Swizzle(x, y, g, x.fresh(name=f"{x.name}g"), y.fresh(name=f"{y.name}g"))

    @property
    def inputs(self) -> tuple[IterDomain, ...]:
        return (self.x, self.y)

    @property
    def outputs(self) -> tuple[IterDomain, ...]:
        return (self.x_out, self.y_out)

    def backward(self, xo: sympy.Expr, yo: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
        """(x, y) of the tile visited at loop indices (xo, yo)."""
        ey, g = self.y.extent, self.group
        t = xo * ey + yo
        if sympy.Ge(g, self.x.extent) is sympy.true:
            # one group holds every row: plain column-major order
            ex = self.x.extent
            return sympy.Mod(t, ex), sympy.floor(t / ex)
        width = g * ey
        grp = sympy.floor(t / width)
        size = sympy.Min(self.x.extent - grp * g, g)
        local = sympy.Mod(t, width)
        return grp * g + sympy.Mod(local, size), sympy.floor(local / size)


Transform = Split | Merge | Swizzle
