"""The tile coordinates printed into kernels are simplified (issue 18), over the sizes (issue 26).

Golden: each example's ``tile_m`` / ``tile_n``, expressions of ``t`` and the run-time sizes M and
N, print in their simplest form (the IR's splits recombined).  Property: the printed text, run
with truncating ``//`` and ``%`` (Triton's and C's), equals the *unsimplified* index map at every
tile, at the size lowered for and at others.  (A grouped raster's last-group ``min`` folds only
under the fact that the group divides the tile rows: the facts variant's forms, not checked here.)
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from tilec.runtime.loader import load_schedule
from tilec.codegen.cuda.expr import cexpr
from tilec.codegen.triton.expr import print_expr
from tilec.proofs import Context
from tilec.transforms import pipeline as lower_mod
from tilec.transforms.plan import SIZE_M, SIZE_N

EX = Path(__file__).resolve().parents[2] / "examples"

# (example, params, Triton pid_m, Triton pid_n, C tile_m, C tile_n)
GOLDEN = [
    ("gemm_decomposition.py", dict(M=4096, N=4096, K=4096), None, None, None, None),
    ("seed004_persistent_cluster.py", {},
     "(t % 2) + 2*(t // (2*((N + 255) // 256)))", "((t // 2) % ((N + 255) // 256))",
     "(t % 2) + 2*(t / (2*((N + 255) / 256)))", "((t / 2) % ((N + 255) / 256))"),
    ("grouped_raster.py", dict(M=160, N=96, BM=32, BN=32, GROUP_M=2), None, None, None, None),
    ("gemm_basic.py", dict(M=96, N=80, BM=32, BN=32), None, None, None, None),
]
# the sizes the printed forms are run at, besides the one lowered for: ragged ones included
OTHER_SIZES = [(1, 1), (300, 257), (1000, 96)]


def _order(example: str, params: dict, simplified: bool = True):  # type: ignore[no-untyped-def]
    fusion = load_schedule(EX / example, params, tuned=False).fusion
    state = lower_mod.Lowering(fusion, lower_mod.LowerOptions(target="triton"))
    order = lower_mod.tile_order(lower_mod.tile_axes(state)).order
    if simplified:
        return order
    # the coordinates as the IR's index map builds them, before the theorems
    return replace(order, tile_m=order.raw_tile_m, tile_n=order.raw_tile_n)


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


class _Truncating(ast.NodeTransformer):
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.FloorDiv | ast.Div):
            return ast.Call(ast.Name("_tdiv", ast.Load()), [node.left, node.right], [])
        if isinstance(node.op, ast.Mod):
            return ast.Call(ast.Name("_tmod", ast.Load()), [node.left, node.right], [])
        return node


class _TL:
    minimum = staticmethod(min)
    maximum = staticmethod(max)


def _run(src: str, env: dict[str, int]) -> int:
    """Evaluate printed Triton or C (``/`` on ints) text with truncating division."""
    tree = ast.fix_missing_locations(_Truncating().visit(ast.parse(src, mode="eval")))
    scope = {"_tdiv": _tdiv, "_tmod": lambda a, b: a - b * _tdiv(a, b), "tl": _TL,
             "tilec_min": min, "tilec_max": max,  # the C file's floor helpers: exact semantics
             "tilec_floordiv": lambda a, b: a // b, "tilec_mod": lambda a, b: a % b}
    return int(eval(compile(tree, "<printed>", "eval"), scope, dict(env)))


@pytest.mark.parametrize("example,params,pm,pn,cm,cn", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_printed_tile_coordinates_are_simplest_and_exact(example, params, pm, pn, cm, cn) -> None:  # type: ignore[no-untyped-def]
    order = _order(example, params)
    raw = _order(example, params, simplified=False)
    names = {order.index: "t", SIZE_M: "M", SIZE_N: "N"}
    live = Context().bound(order.index, order.num_tiles)  # as the backends
    tri = (print_expr(order.tile_m, names, live), print_expr(order.tile_n, names, live))
    c = (cexpr(order.tile_m, live), cexpr(order.tile_n, live))
    for want, got in ((pm, tri[0]), (pn, tri[1]), (cm, c[0]), (cn, c[1])):
        if want is not None:
            assert got == want
    # no trace of the IR's guards: nothing a person would simplify by hand
    for text in (*tri, *c):
        assert "tl.maximum" not in text and "+ 0" not in text
    ref = dict(order.sizes)
    for M, N in [(ref[SIZE_M], ref[SIZE_N]), *OTHER_SIZES]:
        at = order.at(M=M, N=N)
        n = int(at.concrete().num_tiles)
        step = max(1, n // 300)
        for t in range(0, n, step):
            if not at.is_alive(t):
                continue
            env = {raw.index: t, SIZE_M: M, SIZE_N: N}
            want_m, want_n = int(raw.tile_m.xreplace(env)), int(raw.tile_n.xreplace(env))
            scope = {"t": t, "M": M, "N": N}
            assert _run(tri[0], scope) == want_m and _run(tri[1], scope) == want_n, (t, tri)
            assert _run(c[0], scope) == want_m and _run(c[1], scope) == want_n, (t, c)


def test_the_raw_map_is_what_the_issue_saw() -> None:
    """The unsimplified seed map still carries the IR's splits: the golden forms are not trivial."""
    raw = _order("gemm_decomposition.py", dict(M=4096, N=4096, K=4096), simplified=False)
    names = {raw.index: "t", SIZE_M: "M", SIZE_N: "N"}
    assert len(print_expr(raw.tile_m, names)) > 3 * len("(t % 8) + 8*(t // (8*((N + 255) // 256)))")
