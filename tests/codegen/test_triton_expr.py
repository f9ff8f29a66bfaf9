"""The sympy -> Triton expression printer: rules, refusals, and an exhaustive evaluation oracle."""

from __future__ import annotations

import pytest
import sympy

from tilec.codegen.triton_expr import TritonExprPrinter, print_expr
from tilec.errors import InternalError, UnsupportedError
from tests.plans import plan

t = sympy.Symbol("t", integer=True, nonnegative=True)


class _TL:  # tl.where / minimum / maximum on Python ints, to evaluate printed code
    @staticmethod
    def where(c, a, b):
        return a if c else b

    minimum = staticmethod(min)
    maximum = staticmethod(max)


def _eval(src: str, value: int) -> int:
    return int(eval(src, {"tl": _TL}, {"t": value}))


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (sympy.floor(t / 4), "(t // 4)"),
        (sympy.Mod(t, 6), "(t % 6)"),
        (sympy.floor((t + 3) / 4), "((t + 3) // 4)"),
        (sympy.ceiling(t / 8), "((t + 7) // 8)"),
        (sympy.Min(t, 5), "tl.minimum(5, t)"),
        (sympy.Mod(sympy.floor(t / 3), 4), "((t // 3) % 4)"),
    ],
)
def test_rules(expr, text):
    assert print_expr(expr, {t: "t"}) == text


@pytest.mark.parametrize(
    "expr",
    [sympy.floor(t / -3), sympy.Mod(t, -3), t / 2],
)
def test_refuses_non_floor_semantics(expr):
    with pytest.raises(InternalError):
        print_expr(expr, {t: "t", sympy.Symbol("n", positive=True): "n"})


def test_unknown_symbol():
    with pytest.raises(UnsupportedError, match="depends on rank"):
        print_expr(t + sympy.Symbol("rank"), {t: "t"})


@pytest.mark.parametrize(("tm", "tn", "g"), [(1, 1, 8), (5, 3, 2), (9, 4, 8), (7, 7, 3), (13, 2, 4)])
def test_orders_print_exactly(tm, tn, g):
    """Printed Python/Triton text equals sympy's value at every t (the oracle), for the orders
    lowered from row-major and grouped-raster schedules, one CTA per tile or persistent."""
    for order_kind, sms in (("row", None), ("grouped", None), ("grouped", 3)):
        order = plan(16 * tm, 16 * tn, 16, 16, 16, 16, order=order_kind, group_m=g,
                     sms=sms).order
        pm = TritonExprPrinter({order.index: "t"}).doprint(order.tile_m)
        pn = TritonExprPrinter({order.index: "t"}).doprint(order.tile_n)
        for v in range(int(order.num_tiles)):
            exact = tuple(int(e.subs(order.index, v)) for e in (order.tile_m, order.tile_n))
            assert (_eval(pm, v), _eval(pn, v)) == exact == order.evaluate(v)


def test_run_time_divisor_is_clamped_to_one():
    """A grouped raster's last-group size is a run-time divisor: printed with a clamp so a tile
    past the end (masked off) never divides by zero or a negative."""
    n = sympy.Symbol("n", positive=True, integer=True)
    src = print_expr(sympy.floor(t / n), {t: "t", n: "n"})
    assert src == "(t // tl.maximum(n, 1))"
    g = sympy.Min(4, 10 - 4 * sympy.floor(t / 12))
    assert "tl.maximum(" in print_expr(sympy.Mod(t, g), {t: "t"})
