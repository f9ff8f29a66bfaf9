"""The sympy -> C printer: C's / and % only on proven-nonnegative operands, checked by running C."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest
import sympy

from tilec.codegen.cuda.expr import CudaExprPrinter, cexpr
from tilec.codegen.cuda.runtime import INDEX_HELPERS
from tilec.errors import InternalError

NN = {"integer": True, "nonnegative": True}
a, b = sympy.symbols("a b", **NN)
x, y = sympy.symbols("x y", integer=True)  # sign unknown


def test_floor_and_mod_on_nonnegative_print_as_c_operators() -> None:
    assert cexpr(sympy.floor(a / 4)) == "(a / 4)"
    assert cexpr(sympy.Mod(a, 4)) == "(a % 4)"
    assert cexpr(sympy.floor((a + 3) / 4)) == "((a + 3) / 4)"


def test_unknown_sign_uses_floor_helpers() -> None:
    assert "tilec_floordiv" in cexpr(sympy.floor(x / 4))
    assert "tilec_mod" in cexpr(sympy.Mod(x, 3))


def test_powers_of_two_are_shifts_and_sums_fold() -> None:
    j = sympy.Symbol("j", **NN)
    assert cexpr(2 ** sympy.Mod(a, 2)) == "(1 << ((a % 2)))"
    assert cexpr(sympy.Sum(2 ** (2 * j), (j, 0, 2))) == "21"
    loop = cexpr(sympy.Sum(2 ** j, (j, 0, a)))
    assert "for (int j = 0; j <= a; ++j)" in loop


def test_non_integer_leaks_are_refused() -> None:
    with pytest.raises(InternalError):
        cexpr(a / 3)
    with pytest.raises(InternalError):
        CudaExprPrinter().doprint(sympy.Float(0.5) * a)


EXPRS = [
    sympy.floor(a / 3) + sympy.Mod(b, 5),
    sympy.floor(x / 3),
    sympy.Mod(x, 3),
    sympy.Mod(x - y, 4),
    sympy.ceiling(a / 4),
    sympy.floor((x + 2 * y) / 5) * 2 ** sympy.Mod(a, 3),
    sympy.Piecewise((a, sympy.Lt(x, 0)), (b, True)),
    sympy.Min(x, y) + sympy.Max(a, 2),
    sympy.floor((a - b) / 4),  # nonnegative symbols, a difference of unknown sign
    sympy.floor((4 * a + b - 1) / 4),  # canonicalised to a + floor((b - 1)/4): wrong at b=0 if truncated
    sympy.Mod(a - 2 * b, 3) + sympy.ceiling((a - b) / 3),
    sympy.floor(a / (x * x + 1)),  # a divisor proven positive only by the reasoner
]


def test_c_operators_only_where_signs_are_proven() -> None:
    assert "tilec_floordiv" in cexpr(sympy.floor((a - b) / 4))
    assert "tilec_floordiv" in cexpr(sympy.floor((4 * a + b - 1) / 4))
    assert cexpr(sympy.floor((4 * a + b + 3) / 4)) == "a + ((b + 3) / 4)"
    # facts make a difference proven: a - b >= 0 where b < a is stated
    from tilec.proofs import Context
    assert "tilec_floordiv" in cexpr(sympy.floor((x + 1) / 4))
    assert cexpr(sympy.floor((x + 1) / 4), Context().bound(x, 9)) == "((x + 1) / 4)"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_printed_c_matches_python_semantics(tmp_path: Path) -> None:
    """Brute force: every expression, printed as C and run, equals sympy's value on a grid that
    includes negative values for the unknown-sign symbols."""
    fns = [f"int f{i}(int a, int b, int x, int y) {{ return {cexpr(e)}; }}" for i, e in enumerate(EXPRS)]
    grid = list(itertools.product(range(0, 7), range(0, 7), range(-7, 8), range(-4, 5)))
    calls = "\n".join(
        f'for (auto& p : pts) std::printf("%d\\n", f{i}(p[0], p[1], p[2], p[3]));' for i in range(len(EXPRS))
    )
    pts = ",".join("{%d,%d,%d,%d}" % p for p in grid)
    src = (
        "#include <cstdio>\n" + INDEX_HELPERS + "\n".join(fns)
        + f"\nint pts[][4] = {{{pts}}};\nint main() {{\n{calls}\nreturn 0; }}\n"
    )
    (tmp_path / "h.cpp").write_text(src)
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-o", str(tmp_path / "h"), str(tmp_path / "h.cpp")],
                   check=True)
    got = subprocess.run([str(tmp_path / "h")], capture_output=True, text=True, check=True).stdout.split()
    want = [
        int(e.subs({a: p[0], b: p[1], x: p[2], y: p[3]})) for e in EXPRS for p in grid
    ]
    assert [int(g) for g in got] == want


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_a_power_of_two_shifts_in_the_width_its_range_needs(tmp_path: Path) -> None:
    """``2**t`` was ``1 << t`` in 32 bits (wrong from t = 31): 64-bit unless ``t <= 30`` is proven."""
    from tilec.proofs import Context

    t = sympy.Symbol("t", **NN)
    assert cexpr(2**t, Context().bound(t, 31)) == "(1 << (t))"
    fns = [f"long long f{i}(long long t) {{ return {cexpr(e, ctx)}; }}"
           for i, (e, ctx) in enumerate([(2**t, None), (3 * 2**t, Context().bound(t, 61)), (2**(t + 1), None)])]
    calls = "".join(f'std::printf("%lld\\n", f{i}(v));' for i in range(3))
    src = ("#include <cstdio>\n#include <initializer_list>\n" + "\n".join(fns)
           + f"\nint main() {{ for (long long v : {{0, 3, 30, 31, 40, 60}}) {{ {calls} }} return 0; }}\n")
    (tmp_path / "p.cpp").write_text(src)
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-o", str(tmp_path / "p"), str(tmp_path / "p.cpp")],
                   check=True)
    got = [int(v) for v in subprocess.run([str(tmp_path / "p")], capture_output=True, text=True,
                                          check=True).stdout.split()]
    assert got == [w for v in (0, 3, 30, 31, 40, 60) for w in (2**v, 3 * 2**v, 2 ** (v + 1))]
