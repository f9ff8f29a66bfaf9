"""The worked example of the nvFuser TMA-multicast discussion, step by step."""

from __future__ import annotations

import pytest
import sympy
from sympy import Eq, Mod, floor

from tilec.proofs import Context, implies, narrow, prove_eq, simplify

from .oracles import brute_equal, brute_implies, z3_equal

RN, CM, CN, SMs, CS = (sympy.Symbol(n, integer=True, positive=True) for n in ("RN", "CM", "CN", "SMs", "cluster_size"))
i_rt, cidx, r1, r2 = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("i_rt", "cidx", "rank1", "rank2"))
I1, I2 = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("I1", "I2"))
I = I1  # noqa: E741


def i_bm(x: sympy.Expr) -> sympy.Expr:
    return floor(floor(x / (CM * CN)) / RN) * CM + floor(Mod(x, CM * CN) / CN)


def i_bn(x: sympy.Expr) -> sympy.Expr:
    return Mod(floor(x / (CM * CN)), RN) * CN + Mod(x, CN)


def linear(rank: sympy.Symbol) -> sympy.Expr:
    return i_rt * SMs + cidx * CS + rank


def in_order(seq: list[str], wanted: list[str]) -> bool:
    it = iter(seq)
    return all(any(x == w for x in it) for w in wanted)


def facts_a() -> Context:
    return Context().divisible(SMs, CN).divisible(CS, CN).bound(r1, CS).bound(r2, CS)


def facts_b() -> Context:
    return Context().divisible(SMs, CM * CN).divisible(CS, CM * CN).bound(r1, CS).bound(r2, CS)


@pytest.fixture(scope="module")
def same_a() -> sympy.Basic:
    return Eq(i_bm(linear(r1)), i_bm(linear(r2)))


@pytest.fixture(scope="module")
def narrowed_a(same_a: sympy.Basic):  # type: ignore[no-untyped-def]
    return narrow(same_a, facts_a())


def test_step1_remainder_then_quotient() -> None:
    res = simplify(floor(Mod(I, CM * CN) / CN), Context())
    assert res.expr == Mod(floor(I / CN), CM)
    assert res.trace.theorems()[:2] == ["2.12", "2.15.1"]
    assert brute_equal(res.expr, floor(Mod(I, CM * CN) / CN), Context()) is None
    assert z3_equal(res.expr, floor(Mod(I, CM * CN) / CN), Context()) in (True, None)


def test_step2_nested_quotient() -> None:
    proof = prove_eq(floor(I / (CM * CN)), floor(floor(I / CN) / CM), Context())
    assert proof is not None and "2.11" in proof.trace.theorems()


def test_step3_same_bulk_narrows_to_quotient_by_cn() -> None:
    res = narrow(Eq(i_bm(I1), i_bm(I2)), Context())
    assert res.expr == Eq(floor(I1 / CN), floor(I2 / CN))
    assert in_order(res.trace.theorems(), ["2.12", "2.15.1", "2.11", "congruence"])
    assert brute_implies(res.expr, Eq(i_bm(I1), i_bm(I2)), Context(), n=3000) is None


def test_step4_facts_drop_i_rt_and_cidx(narrowed_a, same_a) -> None:  # type: ignore[no-untyped-def]
    res = narrowed_a
    assert res.expr == Eq(floor(r1 / CN), floor(r2 / CN))
    thms = res.trace.theorems()
    assert in_order(thms, ["2.12", "2.15.1", "2.11", "2.15.1", "tilec.mixed-radix", "congruence", "tilec.cancel"])
    assert {f for f in res.facts_used if "%" in f} == {"SMs % CN == 0", "cluster_size % CN == 0"}
    assert set(res.facts_used) <= {"SMs % CN == 0", "cluster_size % CN == 0", "CN > 0", "CM > 0"}
    text = res.explain()
    assert "[2.12]" in text and "[congruence]" in text and "stated fact SMs % CN == 0" in text
    assert not res.exact


def test_narrowed_a_implies_same_bulk_by_brute_force(narrowed_a, same_a) -> None:  # type: ignore[no-untyped-def]
    assert brute_implies(narrowed_a.expr, same_a, facts_a(), n=4000) is None


def test_operand_b() -> None:
    same_b = Eq(i_bn(linear(r1)), i_bn(linear(r2)))
    res = narrow(same_b, facts_b())
    want = sympy.And(Eq(floor(r1 / (CM * CN)), floor(r2 / (CM * CN))), Eq(Mod(r1, CN), Mod(r2, CN)))
    assert res.expr == want
    assert brute_implies(res.expr, same_b, facts_b(), n=4000) is None
    assert {f for f in res.facts_used if "%" in f} == {"SMs % (CM*CN) == 0", "cluster_size % (CM*CN) == 0"}


def test_without_facts_the_result_still_implies_and_is_not_the_closed_form(same_a) -> None:  # type: ignore[no-untyped-def]
    ctx = Context().bound(r1, CS).bound(r2, CS)
    res = narrow(same_a, ctx)
    closed = Eq(floor(r1 / CN), floor(r2 / CN))
    assert res.expr != closed
    assert brute_implies(res.expr, same_a, ctx, n=4000) is None
    # the closed form would be unsound here: brute force finds a witness
    assert brute_implies(closed, same_a, ctx, n=20000) is not None


def test_implies_api(narrowed_a, same_a) -> None:  # type: ignore[no-untyped-def]
    assert implies(narrowed_a.expr, narrowed_a.expr, facts_a())
    x = sympy.Symbol("x", integer=True, nonnegative=True)
    assert implies(sympy.Lt(x, 4), sympy.Lt(floor(x / 2), 2), Context())
    assert not implies(sympy.Lt(x, 5), sympy.Lt(floor(x / 2), 2), Context())
    assert implies(Eq(r1, r2), Eq(floor(r1 / CN), floor(r2 / CN)), Context())
