"""Integer-division theorems as data (nvFuser's numbering).

Every theorem is a :class:`Theorem`: its number (the one in nvFuser's ``doc/math/integer-division.md``,
or a ``tilec.*`` / ``ceil.*`` name for the few facts that doc does not number), a statement in sympy over
the pattern symbols ``a, b, c, d, ...``, and its side conditions.  ``/`` and ``%`` in the statements are
``floor(x/y)`` and ``Mod(x, y)``, and each theorem holds in *floor* semantics (Python's and sympy's) for all
integers that meet its side conditions, of any sign.  nvFuser states them for Euclidean division; where the
two differ (a divisor that may be negative) the conditions here are the ones floor semantics needs -- the
positivity of each divisor factor that matters, ``r < a`` rather than ``r < |a|`` in 2.5 -- and each one is
necessary: dropping it admits a small counterexample (tests/proofs/test_theorems.py).  Every pattern symbol
is an integer, so a rule may only bind it to an integer-valued expression (``Env.step`` checks).

Example:
    >>> THEOREMS["2.11"].statement
    Eq(floor(a/(b*c)), floor(floor(a/b)/c))
    >>> [str(c) for c in THEOREMS["2.11"].conditions]
    ['c > 0']
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy
from sympy import And, Eq, Equivalent, Implies, Le, Lt, Mod, ceiling, floor

from .build import canon


class Gcd(sympy.Function):
    """Unevaluated ``gcd(a, b)`` of integers (sympy's ``gcd`` would return a polynomial gcd).

    >>> Gcd(4, 6)
    2
    """

    @classmethod
    def eval(cls, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(sympy.igcd(int(a), int(b)))
        return None

    def _sympystr(self, printer: sympy.printing.str.StrPrinter) -> str:
        return f"gcd({printer._print(self.args[0])}, {printer._print(self.args[1])})"


def _sym(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True)


a, b, c, d, e, g, i, k, m, n, r, x, y, D, E = (
    _sym(s) for s in ("a", "b", "c", "d", "e", "g", "i", "k", "m", "n", "r", "x", "y", "D", "E")
)
f = sympy.Function("f")


@dataclass(frozen=True)
class Theorem:
    """One theorem: ``statement`` holds for all integers that meet every one of ``conditions``.

    ``rewrite`` names the direction the simplifier uses (``"lhs -> rhs"`` in words); ``uses`` says
    where tilec relies on it.  Division by zero is outside every statement's domain.
    ``written`` is the statement as written (unevaluated) and ``statement`` its canonical form,
    both built on first use from ``state`` (the prover reads only the conditions: a process that
    proves pays nothing for the statements); ``conditions`` are ``written_conditions`` in
    canonical form, built when the prover first reads them (a proof cites a few theorems).
    """

    number: str
    name: str
    state: Callable[[], sympy.Basic] = field(repr=False, compare=False)
    written_conditions: tuple[sympy.Basic, ...] = ()
    rewrite: str = ""
    uses: str = ""
    exact: bool = True  # False for a narrowing rule (the result implies the original, not iff)

    @functools.cached_property
    def written(self) -> sympy.Basic:
        """The statement as written, unevaluated."""
        with sympy.evaluate(False):
            return self.state()

    @functools.cached_property
    def statement(self) -> sympy.Basic:
        """The statement in canonical form (see :func:`~tilec.proofs.build.canon`)."""
        with sympy.evaluate(True):
            return canon(self.written)

    @functools.cached_property
    def conditions(self) -> tuple[sympy.Basic, ...]:
        """The side conditions in canonical form, built without sympy's costly
        ``floor``/``Mod``/``Eq`` evaluation (that took seconds at import)."""
        return tuple(canon(c) for c in self.written_conditions)

    @functools.cached_property
    def pattern(self) -> tuple[sympy.Symbol, ...]:
        """The pattern symbols, by name."""
        return tuple(sorted(self.statement.free_symbols, key=str))

    def __str__(self) -> str:
        conds = ", ".join(str(c) for c in self.conditions) or "none"
        return f"{self.number} ({self.name}): {self.statement}  [if {conds}]"


def _thm(number: str, name: str, state: Callable[[], sympy.Basic], conditions: tuple = (),
         **kw: object) -> Theorem:
    return Theorem(number, name, state, tuple(conditions), **kw)  # type: ignore[arg-type]


def _theorem_list() -> list[Theorem]:
    """The theorems as written (called under ``sympy.evaluate(False)``: the conditions are built
    here, each statement by its ``state`` when first read)."""
    return [
        # a%c + c*(a/c) -> a
        _thm("1.1", "division with remainder", lambda: Eq(Mod(a, c) + c * floor(a / c), a),
             rewrite="a%c + c*(a/c) -> a", uses="recombine a split index: t%132 + 132*(t/132) -> t"),
        # r%a -> r ; r/a -> 0
        _thm("2.5", "small dividend", lambda: And(Eq(Mod(r, a), r), Eq(floor(r / a), 0)),
             (Le(0, r), Lt(r, a)),
             rewrite="r % a -> r, r/a -> 0", uses="drop a remainder/quotient whose dividend is provably in [0, a)"),
        # (a+b)%c == (a%c + b%c)%c
        _thm("2.7", "remainder of a sum", lambda: Eq(Mod(a + b, c), Mod(Mod(a, c) + Mod(b, c), c, evaluate=False)),
             rewrite="(a%c + b)%c -> (a+b)%c", uses="applied by sympy's Mod canonicaliser (nested remainders in a sum)"),
        # (a+b)%c -> b%c
        _thm("2.7.1", "remainder drops a multiple", lambda: Eq(Mod(a + b, c), Mod(b, c)), (Eq(Mod(a, c), 0),),
             rewrite="(a+b)%c -> b%c", uses="drop i_rt*SMs from (i_rt*SMs + rank) % CN given SMs % CN == 0"),
        # (a+b)%c -> a%c + b
        _thm("2.7.2", "remainder of a sum with a small part", lambda: Eq(Mod(a + b, c), Mod(a, c) + b),
             (sympy.Gt(c, 0), Le(0, b), Lt(b, Gcd(a, c))),
             rewrite="(a+b)%c -> a%c + b", uses="(CN*x + r) % (CN*CM) -> CN*(x % CM) + r for r < CN"),
        # (a*b)%c == ((a%c)*(b%c))%c
        _thm("2.8", "remainder of a product", lambda: Eq(Mod(a * b, c), Mod(Mod(a, c) * Mod(b, c), c, evaluate=False)),
             rewrite="((a%c)*b)%c -> (a*b)%c", uses="applied by sympy's Mod canonicaliser (nested remainders in a product)"),
        # a%b -> 0
        _thm("2.9", "remainder of a multiple", lambda: Eq(Mod(a, b), 0), (Eq(Mod(a, b), 0),),
             rewrite="a%b -> 0", uses="a stated divisibility fact or a factorisation makes a remainder vanish"),
        # (a*b)/c -> a*(b/c)
        _thm("2.10", "quotient of a multiple", lambda: Eq(a * floor(b / c), floor(a * b / c)), (Eq(Mod(b, c), 0),),
             rewrite="(a*b)/c -> a*(b/c)", uses="(i_rt*SMs)/CN -> i_rt*(SMs/CN) given SMs % CN == 0"),
        # a/(b*c) -> a/b/c
        _thm("2.11", "nested quotient", lambda: Eq(floor(a / (b * c)), floor(floor(a / b) / c)), (sympy.Gt(c, 0),),
             rewrite="a/(b*c) -> a/b/c", uses="I/(CM*CN) -> I/CN/CM where I/CN also occurs"),
        # a%(b*c) -> a%b + ((a/b)%c)*b
        _thm("2.12", "mixed-radix remainder", lambda: Eq(Mod(a, b * c), Mod(a, b) + Mod(floor(a / b), c) * b),
             (sympy.Gt(c, 0),),
             rewrite="a%(b*c) -> a%b + ((a/b)%c)*b", uses="I%(CM*CN)/CN -> (I/CN)%CM (with 2.15.1 and 2.5)"),
        # a%b -> ((a/d)%(b/d))*d
        _thm("2.13", "common factor of a remainder", lambda: Eq(Mod(a, b), Mod(floor(a / d), floor(b / d)) * d),
             (Eq(Mod(a, d), 0), Eq(Mod(b, d), 0)),
             rewrite="a%b -> ((a/d)%(b/d))*d", uses="pull a common symbolic factor out of a remainder"),
        # a/(b/c) -> (a*c)/b
        _thm("2.14", "quotient by an exact quotient", lambda: Eq(floor(a / floor(b / c)), floor(a * c / b)),
             (Eq(Mod(b, c), 0),),
             rewrite="a/(b/c) -> (a*c)/b", uses="divide by SMs/CN where SMs % CN == 0"),
        # (a+b)/c -> a/c + b/c
        _thm("2.15", "quotient of a sum", lambda: Eq(floor((a + b) / c), floor(a / c) + floor(b / c)),
             (sympy.Gt(c, 0), Lt(Mod(a, c) + Mod(b, c), c)),
             rewrite="(a+b)/c -> a/c + b/c", uses="split a quotient when the remainders cannot carry"),
        # (a+b)/c -> a/c + b/c
        _thm("2.15.1", "quotient of a sum with a multiple", lambda: Eq(floor((a + b) / c), floor(a / c) + floor(b / c)),
             (Eq(Mod(a, c), 0),),
             rewrite="(a+b)/c -> a/c + b/c", uses="(i_rt*SMs + cidx*cluster + rank)/CN drops i_rt and cidx"),
        # (a+b)/c -> a/c
        _thm("2.15.2", "quotient of a sum with a small part", lambda: Eq(floor((a + b) / c), floor(a / c)),
             (sympy.Gt(c, 0), Le(0, b), Lt(b, Gcd(a, c))),
             rewrite="(a+b)/c -> a/c", uses="(CN*x + r)/CN -> x for 0 <= r < CN"),
        # i/d < D -> i < D*d
        _thm("2.16", "bound of a quotient", lambda: Equivalent(Lt(floor(i / d), D), Lt(i, D * d)), (sympy.Gt(d, 0),),
             rewrite="i/d < D -> i < D*d", uses="turn a bound on a quotient into a bound on the dividend"),
        # split-split: (i/n)/m, (i/n)%m, i%n  ==  i/(m*n), (i%(m*n))/n, (i%(m*n))%n ; same for extents
        _thm("iterdomain-2.1", "split-split",
             lambda: And(Eq(floor(floor(i / n) / m), floor(i / (m * n))),
                 Eq(Mod(floor(i / n), m), floor(Mod(i, m * n) / n)),
                 Eq(Mod(i, n), Mod(Mod(i, m * n), n, evaluate=False), evaluate=False),
                 Eq(ceiling(ceiling(E / n) / m), ceiling(E / (m * n)))),
             (sympy.Gt(m, 0),),
             rewrite="split(n) then split(m) of the outer == split(m*n) then split(n) of the inner",
             uses="nvFuser doc/reading/iterdomain.md theorem 2.1; proved by 2.11, 2.12, 2.15.1, 2.5, ceil.3"),
        # ceil(a/b) == (a + b - 1)/b
        _thm("ceil.1", "ceil division as floor division", lambda: Eq(ceiling(a / b), floor((a + b - 1) / b)),
             (sympy.Gt(b, 0),), rewrite="ceil(a/b) -> (a+b-1)/b", uses="split extents: ceilDiv(E, f)"),
        # a <= ceil(a/b)*b
        _thm("ceil.2", "ceil division covers", lambda: Le(a, ceiling(a / b) * b), (sympy.Gt(b, 0),),
             uses="a split covers its input: outer*f >= E"),
        # ceil(ceil(a/b)/c) -> ceil(a/(b*c))
        _thm("ceil.3", "nested ceil division", lambda: Eq(ceiling(ceiling(a / b) / c), ceiling(a / (b * c))),
             (sympy.Gt(c, 0),), rewrite="ceil(ceil(a/b)/c) -> ceil(a/(b*c))", uses="extents of split-split"),
        # ceil(a/b) -> a/b
        _thm("ceil.4", "divisible ceil division", lambda: Eq(ceiling(a / b), floor(a / b)), (Eq(Mod(a, b), 0),),
             rewrite="ceil(a/b) -> a/b", uses="a divisible split needs no predicate"),
        # a/c -> k ; a%c -> a - k*c   (a's bounds pin the quotient)
        _thm("tilec.const-div", "quotient pinned by bounds", lambda: Eq(floor(a / c), k), (Le(k * c, a), Lt(a, (k + 1) * c)),
             rewrite="a/c -> k", uses="(t % 512)/128 -> 3 where 384 <= t % 512 < 512 is proven"),
        _thm("tilec.const-mod", "remainder pinned by bounds", lambda: Eq(Mod(a, c), a - k * c), (Le(k * c, a), Lt(a, (k + 1) * c)),
             rewrite="a%c -> a - k*c", uses="the remainder when the quotient is pinned"),
        # min(a, b) -> a ; max(a, b) -> a
        _thm("tilec.min", "minimum of ordered terms", lambda: Eq(sympy.Min(a, b), a), (Le(a, b),),
             rewrite="min(a, b) -> a", uses="a grouped raster's last-group size min(G, tiles_m - g*G) -> G on full groups"),
        _thm("tilec.max", "maximum of ordered terms", lambda: Eq(sympy.Max(a, b), a), (Le(b, a),),
             rewrite="max(a, b) -> a", uses="drop a clamp that cannot bind"),
        # a*c + b == d*c + e  <=>  a == d & b == e
        _thm("tilec.mixed-radix", "mixed-radix equality",
             lambda: Equivalent(Eq(a * c + b, d * c + e), And(Eq(a, d), Eq(b, e))),
             (Le(0, b), Lt(b, c), Le(0, e), Lt(e, c)),
             rewrite="a*c + b == d*c + e -> a == d & b == e", uses="split 'same bulk' into digit equalities"),
        # (c*a + b)/(c*d) -> a/d   (derived: 2.11, then 2.15.2 and 2.10)
        _thm("tilec.radix-div", "quotient drops a low digit", lambda: Eq(floor((c * a + b) / (c * d)), floor(a / d)),
             (sympy.Gt(d, 0), Le(0, b), Lt(b, c)),
             rewrite="(c*a + b)/(c*d) -> a/d",
             uses="coalescing: (c*a + b)/(c*d) -> a/d for 0 <= b < c; derived from 2.11 and 2.15.2, cited so in the trace"),
        # (c*a + b)%(c*d) -> c*(a%d) + b   (derived: 2.12, then 2.7.1, 2.5 and 2.15.2)
        _thm("tilec.radix-mod", "remainder keeps a low digit", lambda: Eq(Mod(c * a + b, c * d), c * Mod(a, d) + b),
             (sympy.Gt(d, 0), Le(0, b), Lt(b, c)),
             rewrite="(c*a + b)%(c*d) -> c*(a%d) + b",
             uses="coalescing: (c*a + b)%(c*d) -> c*(a%d) + b for 0 <= b < c; derived from 2.12, 2.7.1, 2.5 and 2.15.2"),
        # x/c == y/c & x%c == y%c  <=>  x == y
        _thm("tilec.divmod-eq", "quotient and remainder determine the dividend",
             lambda: Equivalent(And(Eq(floor(x / c), floor(y / c)), Eq(Mod(x, c), Mod(y, c))), Eq(x, y)),
             rewrite="x/c == y/c & x%c == y%c -> x == y", uses="recombine digits after narrowing"),
        # a + c == b + c  <=>  a == b
        _thm("tilec.cancel", "cancel a common summand", lambda: Equivalent(Eq(a + c, b + c), Eq(a, b)),
             rewrite="a + c == b + c -> a == b", uses="drop terms that do not depend on the CTA rank"),
        # x == y  implies  f(x) == f(y)   (narrowing: the rewrite keeps only a sufficient condition)
        _thm("congruence", "equal arguments give equal values", lambda: Implies(Eq(x, y), Eq(f(x), f(y))),
             rewrite="f(x) == f(y) -> x == y (narrowing)", uses="the only narrowing step", exact=False),
    ]


with sympy.evaluate(False):  # the conditions as written (the statements are built on first use)
    _THEOREM_LIST = _theorem_list()

THEOREMS: dict[str, Theorem] = {t.number: t for t in _THEOREM_LIST}
"""Registry: theorem number -> :class:`Theorem`."""
