"""Every theorem holds on integers that meet its side conditions, and no condition is decorative."""

from __future__ import annotations

import functools
import itertools

import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tilec.proofs import RULES, THEOREMS, Theorem

from .oracles import euclid_int, scalar

CHECKED = [t for t in THEOREMS.values() if not t.statement.atoms(sympy.core.function.AppliedUndef)]


def _divisor_symbols(t: Theorem) -> set[sympy.Symbol]:
    out: set[sympy.Symbol] = set()
    exprs = [t.statement, *t.conditions]
    for e in exprs:
        for q in e.atoms(sympy.floor, sympy.ceiling):
            out |= sympy.fraction(sympy.together(q.args[0]))[1].free_symbols
        for m in e.atoms(sympy.Mod):
            out |= m.args[1].free_symbols
    return out


def _syms(t: Theorem) -> list[sympy.Symbol]:
    free: set[sympy.Symbol] = set(t.statement.free_symbols)
    for c in t.conditions:
        free |= c.free_symbols
    return sorted(free, key=lambda s: s.name)


@functools.cache
def _compiled(number: str, euclid: bool) -> tuple:  # type: ignore[type-arg]
    thm = THEOREMS[number]
    syms = _syms(thm)
    ev = euclid_int if euclid else scalar
    conds = tuple(ev(c, syms) for c in thm.conditions)
    return syms, conds, ev(thm.statement, syms)


def _holds(f, vals) -> bool | None:  # type: ignore[no-untyped-def]
    try:
        return bool(f(*vals))
    except ZeroDivisionError:
        return None


@pytest.mark.parametrize("thm", CHECKED, ids=lambda t: t.number)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_statement_with_python_floor_division(thm: Theorem, data: st.DataObject) -> None:
    """tilec's domain: dividends >= 0, divisors > 0; Python's // and % (floor division)."""
    syms, conds, stmt = _compiled(thm.number, False)
    divisors = _divisor_symbols(thm)
    small = st.integers(0, 9) | st.integers(0, 200)
    vals = [data.draw(st.integers(1, 12) if s in divisors else small, label=s.name) for s in syms]
    assume(all(_holds(c, vals) for c in conds))
    ok = _holds(stmt, vals)
    assume(ok is not None)
    assert ok, f"{thm.number} fails at {dict(zip(syms, vals, strict=True))}"


@pytest.mark.parametrize("thm", CHECKED, ids=lambda t: t.number)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_statement_with_floor_division_any_sign(thm: Theorem, data: st.DataObject) -> None:
    """tilec's semantics (floor division, Python's and sympy's) over all integers, divisors nonzero."""
    syms, conds, stmt = _compiled(thm.number, False)
    vals = [data.draw(st.integers(-12, 12), label=s.name) for s in syms]
    assume(all(_holds(c, vals) for c in conds))
    ok = _holds(stmt, vals)
    assume(ok is not None)
    assert ok, f"{thm.number} fails at {dict(zip(syms, vals, strict=True))}"


def _exhaustive_counterexample(number: str, keep: list[int]) -> tuple[int, ...] | None:
    syms, conds, stmt = _compiled(number, False)
    kept = [conds[i] for i in keep]
    order = _ORDER if len(syms) <= 4 else _ORDER[:9]
    for vals in itertools.product(order, repeat=len(syms)):
        if all(_holds(c, vals) for c in kept) and _holds(stmt, vals) is False:
            return vals
    return None


@pytest.mark.parametrize("thm", CHECKED, ids=lambda t: t.number)
def test_statement_exhaustively_in_floor_semantics(thm: Theorem) -> None:
    """No small counterexample of any sign in floor semantics when every condition holds."""
    bad = _exhaustive_counterexample(thm.number, list(range(len(thm.conditions))))
    assert bad is None, f"{thm.number} fails at {bad}"


_ORDER = [0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6]
DROPS = [(t, k) for t in CHECKED for k in range(len(t.conditions))]


@pytest.mark.parametrize("thm,k", DROPS, ids=[f"{t.number}-drop{k}" for t, k in DROPS])
def test_dropping_a_side_condition_admits_a_counterexample(thm: Theorem, k: int) -> None:
    """With condition k dropped (the others kept), a small counterexample exists in floor semantics
    over all signs: no condition is decorative, and none is missing for a negative divisor."""
    keep = [i for i in range(len(thm.conditions)) if i != k]
    assert _exhaustive_counterexample(thm.number, keep) is not None, (
        f"condition {thm.conditions[k]} of {thm.number} looks decorative")


def test_registry_shape() -> None:
    for number, t in THEOREMS.items():
        assert t.number == number and t.name and isinstance(t.statement, sympy.Basic)
        assert all(isinstance(c, sympy.Basic) for c in t.conditions)
    required = ["2.5", "2.7", "2.7.1", "2.7.2", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14",
                "2.15", "2.15.1", "2.15.2", "2.16", "iterdomain-2.1"]
    assert set(required) <= set(THEOREMS)
    assert {r.theorem for r in RULES.values()} <= set(THEOREMS)


def test_congruence_is_the_only_narrowing_theorem() -> None:
    assert [t.number for t in THEOREMS.values() if not t.exact] == ["congruence"]
