"""The sympy -> Triton expression printer: rules, refusals, and an exhaustive evaluation oracle."""

from __future__ import annotations

import ast
import itertools

import pytest
import sympy

from tests.plans import plan
from tilec.codegen.triton.expr import TritonExprPrinter, print_expr
from tilec.errors import InternalError, UnsupportedError
from tilec.proofs import Context
from tilec.transforms.plan import SIZE_M, SIZE_N

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


def test_refuses_non_integers():
    with pytest.raises(InternalError):
        print_expr(t / 2, {t: "t"})


def test_unknown_symbol():
    with pytest.raises(UnsupportedError, match="depends on rank"):
        print_expr(t + sympy.Symbol("rank"), {t: "t"})


@pytest.mark.parametrize(("order_kind", "g", "sms"),
                         [("row", 8, None), ("grouped", 2, None), ("grouped", 3, 3),
                          ("grouped", 8, None), ("grouped", 4, 5)])
def test_orders_print_exactly_at_every_size(order_kind, g, sms):
    """Printed Triton text (M and N kernel arguments), run with truncating // and %, equals the
    order's exact value at every t, for orders lowered once (at one size) from row-major and
    grouped-raster schedules, one CTA per tile or persistent, at sizes other than that one."""
    order = plan(16 * 5, 16 * 3, 16, 16, 16, 16, order=order_kind, group_m=g, sms=sms).order
    names = {order.index: "t", SIZE_M: "M", SIZE_N: "N"}
    live = Context().bound(order.index, order.num_tiles)  # as the printer: t < num_tiles
    pm = TritonExprPrinter(names, live).doprint(order.tile_m)
    pn = TritonExprPrinter(names, live).doprint(order.tile_n)
    for tm, tn in ((1, 1), (5, 3), (9, 4), (7, 7), (13, 2)):
        for M, N in ((16 * tm, 16 * tn), (16 * tm - 7, 16 * tn - 1)):
            at = order.at(M=M, N=N)
            for v in range(int(at.concrete().num_tiles)):
                env = {"t": v, "M": M, "N": N}
                try:
                    exact = at.evaluate(v)
                except ZeroDivisionError:  # padding past a grouped raster's last band
                    continue
                if at.is_alive(v):
                    assert (_run_as_triton(pm, env), _run_as_triton(pn, env)) == exact, (M, N, v)


x, y = sympy.symbols("x y", integer=True)  # sign unknown
r = sympy.Symbol("r", integer=True, nonnegative=True)
n = sympy.Symbol("n", integer=True, positive=True)


def _tdiv(a: int, b: int) -> int:  # C / Triton integer division: truncation toward zero
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _tmod(a: int, b: int) -> int:
    return a - b * _tdiv(a, b)


class _Truncating(ast.NodeTransformer):
    """Rewrite ``a // b`` and ``a % b`` into truncating calls: evaluate printed text as Triton does."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        fn = {ast.FloorDiv: "_tdiv", ast.Mod: "_tmod"}.get(type(node.op))
        if fn is None:
            return node
        return ast.Call(ast.Name(fn, ast.Load()), [node.left, node.right], [])


def _run_as_triton(src: str, env: dict[str, int]) -> int:
    tree = ast.fix_missing_locations(_Truncating().visit(ast.parse(src, mode="eval")))
    scope = {"tl": _TL, "_tdiv": _tdiv, "_tmod": _tmod}
    return int(eval(compile(tree, "<printed>", "eval"), scope, dict(env)))


SIGNED = [
    sympy.floor((x - y) / 4),  # issue 18: was printed as (x - y) // 4
    sympy.floor((4 * t + r - 1) / 4),  # canonicalised to t + floor((r - 1)/4): was wrong at r = 0
    sympy.floor((t - r) / 3) + sympy.Mod(t - 2 * r, 5),
    sympy.ceiling((x + 2 * y) / 8),
    sympy.Mod(x, 3) * sympy.floor(y / 2),
    sympy.floor(x / n) + sympy.Mod(y, n),
    sympy.floor(t / (x * x + 1)),  # a divisor the reasoner proves positive
    sympy.Mod(t, sympy.Min(4, 10 - 4 * sympy.floor(t / 12))),  # a run-time divisor, no guard
]


@pytest.mark.parametrize("expr", SIGNED, ids=str)
def test_printed_triton_is_floor_division_under_truncation(expr):
    """The printed text, run with truncating // and % (Triton's), equals sympy's floor semantics at
    every point of a grid with negative values for the signed symbols."""
    names = {t: "t", x: "x", y: "y", r: "r", n: "n"}
    src = print_expr(expr, names)
    assert "tl.maximum" not in src
    syms = sorted(expr.free_symbols, key=str)
    ranges = {t: range(0, 30), x: range(-9, 10), y: range(-9, 10), r: range(0, 9), n: range(1, 6)}
    for vals in itertools.product(*(ranges[s] for s in syms)):
        env = dict(zip(syms, vals, strict=True))
        try:
            want = int(expr.subs(env))
        except ZeroDivisionError:
            continue
        if expr.has(sympy.Min) and sympy.Min(4, 10 - 4 * (env[t] // 12)) <= 0:
            continue  # past the last group: the divisor is 0 or negative there
        assert _run_as_triton(src, {str(k): v for k, v in env.items()}) == want, (src, env)


def test_operators_only_where_signs_are_proven():
    names = {t: "t", x: "x", y: "y", r: "r", n: "n"}
    assert print_expr(sympy.floor((x - y) / 4), names) != "((x - y) // 4)"
    assert "% 4 + 4) % 4" in print_expr(sympy.floor((4 * t + r - 1) / 4), names)
    assert print_expr(sympy.floor(t / n), names) == "(t // n)"  # no silent tl.maximum(n, 1)
    assert print_expr(sympy.floor((r + 3) / 4), names) == "((r + 3) // 4)"
    # a stated fact proves the sign: x < 9 makes x nonnegative (a bound is 0 <= x < 9)
    assert print_expr(sympy.floor((x + 1) / 4), names, Context().bound(x, 9)) == "((x + 1) // 4)"


def test_an_exact_quotient_sympy_builds_prints_in_integers():
    """sympy turns ``Mod((CM+1)*y + CM + 1, 8*(CM+1))`` into ``(CM+1)*Mod((...)/(CM+1), 8)``; that
    ``/`` was printed, and Triton divides in fp32: 0 instead of 10 at CM=4, y=100000001."""
    CM, yy = sympy.symbols("CM y", integer=True, positive=True)
    e = sympy.Mod((CM + 1) * yy + CM + 1, 8 * (CM + 1))
    src = print_expr(e, {CM: "CM", yy: "y"})
    assert "/" not in src.replace("//", "")
    for cm, yv in ((4, 100000001), (0, 7), (6, 2**40 + 3), (1, 0)):
        want = ((cm + 1) * yv + cm + 1) % (8 * (cm + 1))
        assert _run_as_triton(src, {"CM": cm, "y": yv}) == want
    assert _run_as_triton(src, {"CM": 4, "y": 100000001}) == 10


def test_a_quotient_is_printed_only_where_exact():
    P, Q = sympy.symbols("P Q", integer=True, positive=True)
    names = {P: "P", Q: "Q", t: "t"}
    # exact by a stated fact: printed as //, and right under truncation at every point meeting it
    src = print_expr(t * P / Q, names, Context().divisible(P, Q))
    assert "/" not in src.replace("//", "")
    for p, q, tv in itertools.product(range(1, 13), range(1, 5), range(0, 6)):
        if p % q == 0:
            assert _run_as_triton(src, {"P": p, "Q": q, "t": tv}) == tv * p // q
    with pytest.raises(InternalError):
        print_expr(t * P / Q, names)  # not proven exact: refused, never a float division
