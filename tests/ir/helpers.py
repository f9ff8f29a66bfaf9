"""Oracles shared by the IR tests: brute-force enumeration, the seed's tile formulas, a parser
for the printed axis notation. None of them calls the tilec code it checks."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import product
from pathlib import Path

import sympy

from tilec.ir import IndexMap, IterType, ParallelType

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed004_persistent_cluster.py"


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def in_bounds(im: IndexMap, point: dict[sympy.Symbol, int]) -> bool:
    """``IndexMap.in_bounds`` by simultaneous substitution (xreplace).

    Same value as ``im.in_bounds`` at a full point (test_bijection checks that), but
    ``Basic.subs`` substitutes one symbol at a time and re-evaluates every partly substituted
    floor/Mod, tens of ms per point on the unevaluated index maps; this keeps the property tests
    within the CI budget."""
    return all(bool(p.xreplace(point)) for p in im.predicates)


def evaluate(im: IndexMap, point: dict[sympy.Symbol, int]) -> dict[str, int]:
    """``IndexMap.evaluate`` by simultaneous substitution (see :func:`in_bounds`)."""
    return {k: int(v.xreplace(point)) for k, v in im.logical.items()}


def hits(im: IndexMap, names: Sequence[str]) -> Counter[tuple[int, ...]]:
    """How often each logical index (in the order ``names``) is hit by an in-bounds loop point
    of ``im.points()``."""
    out: Counter[tuple[int, ...]] = Counter()
    for point in im.points():
        if in_bounds(im, point):
            values = evaluate(im, point)
            out[tuple(values[n] for n in names)] += 1
    return out


def box(extents: Sequence[int]) -> set[tuple[int, ...]]:
    return set(product(*(range(e) for e in extents)))


def symbols_by_axis(im: IndexMap) -> dict[str, sympy.Symbol]:
    """Loop-index symbol of each loop axis, keyed by the axis name (not the symbol name)."""
    return {a.name: s for a, s in im.loop}


# -- the seed schedule's tile order, written out from the multicast discussion -------------


def seed_tile(I: int, p: dict[str, int]) -> tuple[int, int]:  # noqa: E741
    """(i_bm, i_bn) of linear tile index I (Python // and %)."""
    CM, CN = p["CM"], p["CN"]
    RN = cdiv(cdiv(p["N"], p["BN"]), CN)
    i_bm = I // (CM * CN) // RN * CM + I % (CM * CN) // CN
    i_bn = I // (CM * CN) % RN * CN + I % CN
    return i_bm, i_bn


def seed_ctas(p: dict[str, int]) -> list[tuple[int, int, int]]:
    """Every (i_rt, cidx, rank) the seed's persistent grid runs, from the parameters alone."""
    clusters = cdiv(p["SMS"], p["CLUSTER"])
    tiles = (cdiv(cdiv(p["M"], p["BM"]), p["CM"]) * p["CM"]
             * cdiv(cdiv(p["N"], p["BN"]), p["CN"]) * p["CN"])
    rounds = cdiv(tiles, p["SMS"])
    return list(product(range(rounds), range(clusters), range(p["CLUSTER"])))


# -- the printed notation of an axis: <itype><ptype>.<name>{<extent>} ----------------------

_AXIS = re.compile(r"^(?P<itype>[irb])(?P<ptype>[A-Za-z]+)\.(?P<name>[^{]+)\{(?P<extent>.+)\}$")
_PTYPES = {"S": ParallelType.SERIAL} | {p.name: p for p in ParallelType if p is not ParallelType.SERIAL}
_ITYPES = {t.value: t for t in IterType}


def parse_axis(text: str, symbols: dict[str, sympy.Symbol]) -> tuple[IterType, ParallelType, str, sympy.Expr]:
    m = _AXIS.match(text)
    assert m is not None, f"not axis notation: {text!r}"
    extent = sympy.sympify(m["extent"], locals=symbols)
    return _ITYPES[m["itype"]], _PTYPES[m["ptype"]], m["name"], extent


def parse_view(text: str, symbols: dict[str, sympy.Symbol]) -> tuple[str, list[tuple]]:
    """``NAME[ax, ax, ...]`` -> (NAME, [parsed axes]); axes are split at top-level commas."""
    name, _, rest = text.partition("[")
    assert rest.endswith("]"), text
    body, parts, depth, cur = rest[:-1], [], 0, ""
    for ch in body:
        depth += ch in "({["
        depth -= ch in ")}]"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return name, [parse_axis(p, symbols) for p in parts]
