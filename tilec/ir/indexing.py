"""Index maps: every logical index of a view as a sympy expression of its loop indices.

Walking the transforms backward from the loop domain (nvFuser's indexing):

* split:  ``in = outer * inner_extent + inner``
* merge:  ``outer = out / Ei`` (``floor``), ``inner = out % Ei`` (``Mod``)
* swizzle: the grouped-raster bijection of :class:`~tilec.ir.iterdomain.Swizzle`

Loop indices are nonnegative integer symbols with a known exclusive upper bound (the axis
extent).  A split that is not provably divisible adds the predicate ``in < E_in``; a swizzle or a
merge adds none (a merge keeps an index in bounds iff its input is).

Hardware-bound axes get the hardware's name (``bidx``, ``cidx``, ``rank_x``, ``tidx``); serial
axes ``i_<name>``.

Example::

    >>> from tilec.ir import GemmFusion
    >>> f = GemmFusion(M=100, N=64, K=32)
    >>> _ = f.c.split(0, 32)
    >>> im = index_map(f.c)
    >>> im.logical["M"], im.predicates
    (i_Mi + i_Mo*32, [i_Mi + i_Mo*32 < 100])
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import sympy

from tilec.ir.iterdomain import IterDomain, Merge, Split, Swizzle
from tilec.ir.tensorview import TensorView
from tilec.proofs.evaluate import compile_int


def index_symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True, nonnegative=True)


@dataclass
class IndexMap:
    """Logical indices of ``view`` as functions of its loop-index symbols."""

    view: str
    logical: dict[str, sympy.Expr]  # logical axis name -> expression
    loop: list[tuple[IterDomain, sympy.Symbol]]  # loop axes in order, with their symbols
    bounds: dict[sympy.Symbol, sympy.Expr]  # symbol -> exclusive upper bound (its extent)
    predicates: list[sympy.Boolean] = field(default_factory=list)
    # per predicate, the divisibility fact under which its split is exact (and it vanishes)
    predicate_facts: list[tuple[sympy.Expr, sympy.Expr]] = field(default_factory=list)
    broadcast: set[str] = field(default_factory=set)  # logical axes that are broadcasts

    def symbol(self, axis: IterDomain) -> sympy.Symbol:
        for a, s in self.loop:
            if a == axis:
                return s
        raise KeyError(axis)

    @property
    def symbols(self) -> list[sympy.Symbol]:
        return [s for _, s in self.loop]

    def evaluate(self, point: dict[sympy.Symbol, int]) -> dict[str, int]:
        """Each logical index at a loop point (exact integers)."""
        values = self._at(list(self.logical.values()), point)
        return {k: int(v) for k, v in zip(self.logical, values, strict=True)}

    def in_bounds(self, point: dict[sympy.Symbol, int]) -> bool:
        """Every predicate holds at a loop point."""
        return all(self._at(self.predicates, point))

    def _at(self, exprs: list[sympy.Basic], point: dict[sympy.Symbol, int]) -> tuple[object, ...]:
        missing = set().union(*(e.free_symbols for e in exprs)) - set(point)
        if missing:
            raise ValueError(f"{self.view}: the point gives no value for "
                             f"{sorted(str(s) for s in missing)}")
        return compile_int(exprs, list(point))(*point.values())

    def points(self) -> Iterator[dict[sympy.Symbol, int]]:
        """Every loop-index point (concrete extents only)."""
        ranges = [range(int(self.bounds[s])) for s in self.symbols]
        for values in itertools.product(*ranges):
            yield dict(zip(self.symbols, values, strict=True))

    def __str__(self) -> str:
        lines = [f"{self.view}:"]
        for name, e in self.logical.items():
            tag = "  (broadcast)" if name in self.broadcast else ""
            lines.append(f"  {name} = {e}{tag}")
        bounds = ", ".join(f"{s} < {b}" for s, b in self.bounds.items())
        lines.append(f"  where {bounds}")
        for p in self.predicates:
            lines.append(f"  predicate: {p}")
        return "\n".join(lines)


def _symbol_names(view: TensorView) -> list[str]:
    names: list[str] = []
    for a in view.loop:
        base = a.ptype.symbol_name or "i_" + re.sub(r"\W", "_", a.name)
        name, k = base, 1
        while name in names:
            k += 1
            name = f"{base}{k}"
        names.append(name)
    return names


def index_map(view: TensorView) -> IndexMap:
    """The index map of ``view`` (see module docstring)."""
    loop = [(a, index_symbol(n)) for a, n in zip(view.loop, _symbol_names(view), strict=True)]
    exact = {id(t): t.divisible is True for t in view.transforms if isinstance(t, Split)}
    # Built unevaluated: the expressions mirror the transforms (readable, the form the theorems
    # are stated in) and sympy's canonicalisation of floor/Mod over symbols costs seconds.
    with sympy.evaluate(False):
        return _index_map(view, loop, exact)


def _index_map(view: TensorView, loop: list[tuple[IterDomain, sympy.Symbol]],
               exact: dict[int, bool]) -> IndexMap:
    env: dict[int, sympy.Expr] = {a.uid: s for a, s in loop}
    predicates: list[sympy.Boolean] = []
    facts: list[tuple[sympy.Expr, sympy.Expr]] = []
    for t in reversed(view.transforms):
        if isinstance(t, Split):
            inner_extent = t.inner.extent
            env[t.input.uid] = env[t.outer.uid] * inner_extent + env[t.inner.uid]
            # an expanded broadcast stands for the consumer's axis: its tile must exist too
            if not exact[id(t)] and (not t.input.is_broadcast or t.input.expanded):
                predicates.append(sympy.Lt(env[t.input.uid], t.input.extent))
                facts.append((t.input.extent, t.factor if t.inner_split else t.inner.extent))
        elif isinstance(t, Merge):
            out = env[t.out.uid]
            env[t.outer.uid] = sympy.floor(out / t.inner.extent)
            env[t.inner.uid] = sympy.Mod(out, t.inner.extent)
        elif isinstance(t, Swizzle):
            env[t.x.uid], env[t.y.uid] = t.backward(env[t.x_out.uid], env[t.y_out.uid])
    logical = {a.name: env[a.uid] for a in view.logical}
    return IndexMap(
        view=view.name,
        logical=logical,
        loop=loop,
        bounds={s: a.extent for a, s in loop},
        predicates=predicates,
        predicate_facts=facts,
        broadcast={a.name for a in view.logical if a.is_broadcast},
    )
