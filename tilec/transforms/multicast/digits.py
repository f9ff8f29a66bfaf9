"""Deciding the rank structure and building the forms from it.

A uniform partition of the ranks (every alive rank in the same group at every loop point) is
matched against mixed-radix digits of the rank (``rank = d0 + R0*(d1 + R1*(d2 + ...))``): ranks
share when they agree on the *kept* digits and may differ on the *shared* ones. The forms follow
from the digits: the leader is the rank whose shared digits are 0, the mask the kept digits' bits
times one geometric sum per run of shared digits, the slice the shared digits' value. A proof's
rank keys (``rank % CN``, ``rank / (CM*CN)``) give the same digits with symbolic boundaries
(:func:`key_digits`), or the classes of ``rank % D`` (:func:`residue_forms`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy

from tilec.transforms.multicast.table import R1, R2, RANK, value_at

if TYPE_CHECKING:
    from tilec.transforms.multicast.records import OperandForms, OperandMulticast, Row


# the geometric sums' index: an integer and nothing more (sympy's Sum.doit gives its dummy the
# assumptions both limits share; a sign stated here could contradict them: InconsistentAssumptions)
_J = sympy.Symbol("j", integer=True)


@dataclass(frozen=True)
class RankDigits:
    """Mixed-radix digits of the rank (innermost first) and which of them a group spans."""

    radices: tuple[int, ...]
    shared: frozenset[int]

    def key(self, rank: int) -> tuple[int, ...]:
        out, rest = [], rank
        for i, r in enumerate(self.radices):
            if i not in self.shared:
                out.append(rest % r)
            rest //= r
        return tuple(out)

    def runs(self) -> list[tuple[int, int, bool]]:
        """Maximal runs of digits with the same status: (first digit, end digit, shared)."""
        out: list[tuple[int, int, bool]] = []
        for i in range(len(self.radices)):
            s = i in self.shared
            if out and out[-1][2] == s:
                out[-1] = (out[-1][0], i + 1, s)
            else:
                out.append((i, i + 1, s))
        return out

    def describe(self, b: list[sympy.Expr] | None = None) -> str:
        """The groups in words, with the boundaries ``b`` (1, R0, R0*R1, ...) if given."""
        if b is None:
            b, w = [sympy.Integer(1)], 1
            for r in self.radices:
                w *= r
                b.append(sympy.Integer(w))
        if not self.shared:
            return "never shared"
        if len(self.shared) == len(self.radices):
            return "the whole cluster shares"
        parts = []
        for a, e, shared in self.runs():
            if shared:
                lo, hi = b[a], b[e]
                parts.append(f"{hi} consecutive ranks" if lo == 1 else
                             f"{_quotient(hi, lo)} ranks {lo} apart")
        return "groups of " + " x ".join(parts)


@dataclass(frozen=True)
class KeyDigits:
    """The groups of a proof's rank keys as mixed-radix digits with symbolic boundaries
    ``b = [1, ..., top]`` (each divides the next, by the facts): the keys keep the digits in
    ``kept`` and the ranks of a group differ only in the others."""

    b: tuple[sympy.Expr, ...]
    digits: RankDigits | None  # radices at this launch (1 where two boundaries are equal here)
    block: sympy.Expr  # where the top run of kept digits starts: a group lies in one block
    residue: sympy.Expr | None = None  # the one key is rank % D, D not dividing the cluster


def uniform_partition(table: tuple[Row, ...] | list[Row], cs: int
                      ) -> tuple[tuple[int, ...] | None, str]:
    """Per rank, the mask of its group when the groups never change (else None and where).

    A rank that is never alive is a group of its own (it is in no mask)."""
    seen: dict[int, tuple[int, dict[str, int]]] = {}
    for row in table:
        if not row.alive:
            continue
        r = row.point["rank"]
        first = seen.setdefault(r, (row.mask, row.point))
        if first[0] != row.mask:
            return None, (f"the sharing changes with the loop point: rank {r} shares "
                          f"{_bits(first[0])} at {_at(first[1])} but {_bits(row.mask)} at "
                          f"{_at(row.point)}")
    return tuple(seen[r][0] if r in seen else 1 << r for r in range(cs)), ""


def _bits(mask: int) -> str:
    return "{" + ", ".join(str(i) for i in range(mask.bit_length()) if mask >> i & 1) + "}"


def _at(point: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in point.items() if k != "rank")


def _factorizations(n: int) -> tuple[tuple[int, ...], ...]:
    """Ordered factorizations of n into factors > 1, fewest factors first."""
    if n == 1:
        return ((),)
    out = [(n,)]
    for d in range(2, n):
        if n % d == 0:
            out += [(d, *rest) for rest in _factorizations(n // d) if rest]
    return tuple(sorted(set(out), key=len))


def rank_digits(groups: tuple[int, ...]) -> RankDigits | None:
    """The fewest mixed-radix digits whose shared ones span exactly the given groups."""
    cs = len(groups)
    for radices in _factorizations(cs):
        for k in range(len(radices) + 1):
            for shared in itertools.combinations(range(len(radices)), k):
                d = RankDigits(radices, frozenset(shared))
                keys = [d.key(r) for r in range(cs)]
                if all((keys[r] == keys[q]) == (groups[r] == groups[q])
                       for r in range(cs) for q in range(r)):
                    return d
    return None


def _candidates(op: OperandMulticast, forms: OperandForms, extra: list[sympy.Expr]
                ) -> list[sympy.Expr]:
    """Expressions of the schedule that may name a digit boundary, preferred first."""
    dims = list(forms.rank_dims)
    prods = [sympy.Mul(*dims[:i]) for i in range(1, len(dims) + 1)]
    whole = sympy.Tuple(*op.origin.values(), op.alive)
    return list(dict.fromkeys([*extra, forms.rank_extent, *prods, *_inner_divisors(whole),
                               *sorted(_divisors(whole), key=sympy.count_ops)]))


def _inner_divisors(expr: sympy.Basic) -> list[sympy.Expr]:
    """Divisors applied to the rank's tile index itself (``T/CN``, ``T % CN``), before those
    applied to a quotient of it (``(T/CN)/CM``): the digit nearest the rank comes first."""
    out = []
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.floor):
            x, d = sympy.fraction(node.args[0])
        elif isinstance(node, sympy.Mod):
            x, d = node.args
        else:
            continue
        if RANK in x.free_symbols and not x.has(sympy.floor, sympy.Mod) and RANK not in d.free_symbols:
            out.append(d)
    return sorted(dict.fromkeys(out), key=sympy.count_ops)


def _divisors(expr: sympy.Basic) -> list[sympy.Expr]:
    """Divisors of floor/Mod nodes over the rank, with the products of nested chains, in
    sympy's canonical order (never a set's: that depends on the process's hash seed, and the
    first divisor that fits is the one printed)."""
    out: set[sympy.Expr] = set()

    def chain(e: sympy.Basic) -> list[sympy.Expr]:
        if isinstance(e, sympy.floor):
            num, den = sympy.fraction(e.args[0])
            return [den, *[den * i for i in chain(num)]]
        return []

    for node in sympy.preorder_traversal(expr):
        if RANK not in node.free_symbols:
            continue
        if isinstance(node, sympy.floor):
            out.update(chain(node))
        elif isinstance(node, sympy.Mod):
            m = node.args[1]
            out.add(m)
            out.update(m * d for d in chain(node.args[0]))
    return sorted((d for d in out if d.free_symbols or (d.is_Integer and d > 1)),
                  key=sympy.default_sort_key)


def _coefficients(expr: sympy.Basic, variables: list[sympy.Symbol]) -> set[sympy.Expr]:
    """Coefficients of CTA-level variables in sums that also hold the rank."""
    out: set[sympy.Expr] = set()
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Add) and RANK in node.free_symbols:
            for term in node.args:
                for v in variables:
                    if v in term.free_symbols:
                        coeff, _ = term.as_independent(v, as_Add=False)
                        if coeff.free_symbols or (coeff.is_Integer and coeff > 1):
                            out.add(coeff)
    return out


def _boundaries(digits: RankDigits, cands: list[sympy.Expr], values: dict[sympy.Symbol, int],
                cs: int) -> list[sympy.Expr]:
    """Symbolic cumulative weights 1, R0, R0*R1, ..., cs of the digits."""
    by_value: dict[int, sympy.Expr] = {}
    for c in cands:
        v = value_at(c, values)
        if v is not None:
            by_value.setdefault(v, c)
    out, w = [sympy.Integer(1)], 1
    for r in digits.radices:
        w *= r
        out.append(by_value.get(w, sympy.Integer(w)))
    return out


def _quotient(hi: sympy.Expr, lo: sympy.Expr) -> sympy.Expr:
    """hi/lo, an exact quotient of two digit boundaries (floor where sympy cannot see it)."""
    q = hi / lo
    return q if q.is_Integer or q.is_integer else sympy.floor(q)


def digit_forms(digits: RankDigits, b: list[sympy.Expr]
                ) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr, sympy.Expr]:
    """Leader predicate, mask, slice index and slice count of a digit pattern (alive aside)."""
    conds, base, geo = [], [], []
    sidx: sympy.Expr = sympy.Integer(0)
    scount: sympy.Expr = sympy.Integer(1)
    runs = digits.runs()
    for i, (a, e, shared) in enumerate(runs):
        lo, hi, top = b[a], b[e], i == len(runs) - 1
        if shared:
            conds.append(sympy.Eq(sympy.Mod(RANK, hi), 0) if lo == 1
                         else sympy.Lt(sympy.Mod(RANK, hi), lo))
            n = _quotient(hi, lo)
            geo.append(2**hi - 1 if lo == 1 else sympy.Sum(2 ** (lo * _J), (_J, 0, n - 1)))
            value = sympy.Mod(RANK, hi) if lo == 1 else sympy.floor(sympy.Mod(RANK, hi) / lo)
            sidx, scount = sidx + scount * value, scount * n
            if top:
                base.append(hi * sympy.floor(RANK / hi))
        elif lo == 1 and top:
            base.append(RANK)
        elif lo == 1:
            base.append(sympy.Mod(RANK, hi))
        elif top:
            base.append(lo * sympy.floor(RANK / lo))
        else:
            base.append(lo * sympy.Mod(sympy.floor(RANK / lo), _quotient(hi, lo)))
    mask = sympy.Mul(*geo) * 2 ** sympy.Add(*base)
    return sympy.And(*conds), mask, sidx, scount


def _case_forms(groups: tuple[int, ...]) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr,
                                                  sympy.Expr]:
    """A partition no digit pattern matches: the forms by rank cases."""
    cs = len(groups)
    lead = [r for r in range(cs) if groups[r] & ((1 << r) - 1) == 0]
    issue = sympy.Or(*[sympy.Eq(RANK, r) for r in lead])
    mask = sympy.Piecewise(*[(groups[r], sympy.Eq(RANK, r)) for r in range(cs - 1)],
                           (groups[cs - 1], True))
    sidx = sympy.Piecewise(*[(bin(groups[r] & ((1 << r) - 1)).count("1"), sympy.Eq(RANK, r))
                             for r in range(cs - 1)],
                           (bin(groups[cs - 1] & ((1 << (cs - 1)) - 1)).count("1"), True))
    scount = sympy.Piecewise(*[(bin(groups[r]).count("1"), sympy.Eq(RANK, r))
                               for r in range(cs - 1)], (bin(groups[cs - 1]).count("1"), True))
    return issue, mask, sidx, scount


def residue_digits(keys: tuple[sympy.Expr, ...] | list[sympy.Expr], top: sympy.Expr
                   ) -> KeyDigits | None:
    """The one key ``rank % D`` where ``D`` need not divide the cluster: the ranks congruent
    modulo D share (no digit pattern: ``{0, 4}, {1, 5}, {2}, {3}`` in a cluster of 6)."""
    if len(keys) != 1 or not isinstance(keys[0], sympy.Mod) or keys[0].args[0] != RANK:
        return None
    d = keys[0].args[1]
    if d.free_symbols & {RANK, R1, R2}:
        return None
    return KeyDigits((sympy.Integer(1), d, top), None, top, d)


def residue_forms(d: sympy.Expr, top: sympy.Expr
                  ) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr, sympy.Expr]:
    """Leader, mask, slice index and count of the classes of ``rank % d`` in ``top`` ranks:
    the members are ``m, m + d, ...`` below ``top`` (``m = rank % d``)."""
    m = sympy.Mod(RANK, d)
    count = sympy.floor((top - 1 - m) / d) + 1
    mask = 2**m * sympy.Sum(2 ** (d * _J), (_J, 0, count - 1))
    return sympy.Lt(RANK, d), mask, sympy.floor(RANK / d), count


def _key_interval(k: sympy.Expr, top: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr] | None:
    """The digits ``[lo, hi)`` of the rank a key keeps: ``rank``, ``rank % H``, ``rank / L``,
    ``(rank % H) / L`` or ``(rank / L) % Q`` (= ``(rank % (L*Q)) / L``)."""
    one = sympy.Integer(1)
    if k == RANK:
        return one, top
    if isinstance(k, sympy.Mod) and k.args[0] == RANK and RANK not in k.args[1].free_symbols:
        return one, k.args[1]
    if isinstance(k, sympy.Mod) and isinstance(k.args[0], sympy.floor):
        x, lo = sympy.fraction(k.args[0].args[0])
        if x == RANK and RANK not in (lo * k.args[1]).free_symbols:
            return lo, lo * k.args[1]
    if isinstance(k, sympy.floor):
        x, lo = sympy.fraction(k.args[0])
        if RANK in lo.free_symbols:
            return None
        if x == RANK:
            return lo, top
        if isinstance(x, sympy.Mod) and x.args[0] == RANK and RANK not in x.args[1].free_symbols:
            return lo, x.args[1]
    return None


def key_digits(keys: tuple[sympy.Expr, ...] | list[sympy.Expr], top: sympy.Expr,
               values: dict[sympy.Symbol, int]) -> KeyDigits | None:
    """The digit pattern of rank keys, for every launch: None when a key is not a digit run of
    the rank or the boundaries do not divide one another at this launch."""
    spans = []
    for k in keys:
        iv = _key_interval(k, top)
        if iv is None:
            return None
        spans.append(iv)
    bounds = list(dict.fromkeys([sympy.Integer(1), *[x for iv in spans for x in iv], top]))
    vals = {x: value_at(x, values) for x in bounds}
    if any(v is None or v < 1 for v in vals.values()):
        return None

    def divides(a: sympy.Expr, b: sympy.Expr) -> bool:
        q = b / a
        return bool(q.is_integer) and q != 1

    # 1 first, the top last, the others by value at this launch (where two are equal here, the
    # one that divides the other first)
    rest = [x for x in bounds if x != 1 and x != top]
    inner = sorted(rest, key=lambda x: (vals[x], sum(divides(y, x) for y in rest
                                                     if vals[y] == vals[x]), str(x)))
    order = [sympy.Integer(1), *inner, top] if top != 1 else [sympy.Integer(1)]
    if any(vals[b] % vals[a] for a, b in itertools.pairwise(order)):
        return None
    idx = {x: i for i, x in enumerate(order)}
    kept = set()
    for lo, hi in spans:
        if idx[lo] > idx[hi]:
            return None
        kept.update(range(idx[lo], idx[hi]))
    n = len(order) - 1
    radices = tuple(vals[order[i + 1]] // vals[order[i]] for i in range(n))
    shared = frozenset(range(n)) - kept
    start = n
    while start > 0 and start - 1 in kept:
        start -= 1
    return KeyDigits(tuple(order), RankDigits(radices, shared), order[start])
