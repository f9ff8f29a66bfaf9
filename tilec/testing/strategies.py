"""Hypothesis strategies for the parameters of a schedule file.

:func:`params` reads the file's ``PARAMS`` and sorts its integer parameters by name
(:func:`kinds`): problem **sizes** (M, N, K), **tiles** (BM, BN, BK, WM, TM, BLOCK_M, ...),
**cluster** factors (CLUSTER, CM, CN, CLUSTER_M, ...) and **other** counts (SMS, GROUP_M,
SPLITS, ...). Sizes, tiles and other counts are drawn small (a brute force walks every CTA);
cluster factors keep their default (the cluster shape is fixed) unless ``fixed`` or
``strategies`` says otherwise; text, booleans and parameters whose default is 0 or less (a
schedule's "pick for me") keep their default. A draw always builds: values the schedule or
launch inference refuses (a cluster that does not divide the grid) are filtered out.

``facts`` restricts the draws to values meeting every fact (``meet=True``) or failing one
(``meet=False``); a fact ``X % E == 0`` about one drawn parameter X draws X as a multiple of E.

    >>> from hypothesis import given, settings
    >>> seen = []
    >>> @settings(max_examples=5, database=None)
    ... @given(p=params("examples/seed004_persistent_cluster.py", facts=["M % BM == 0"]))
    ... def draw(p):
    ...     seen.append(p)
    >>> draw()
    >>> all(p["M"] % p["BM"] == 0 and (p["CLUSTER"], p["CM"]) == (2, 2) for p in seen)
    True
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tilec.errors import ParamError, TilecError
from tilec.testing.facts import FactLike, condition, divisibility, holds


class Kind(Enum):
    """What a parameter is, and how it is drawn."""

    SIZE = "size"  # M, N, K: 1 .. max_size
    TILE = "tile"  # BM, BN, BK, ...: one of TILES
    CLUSTER = "cluster"  # CLUSTER, CM, CN: kept (the cluster shape is fixed)
    OTHER = "other"  # SMS, GROUP_M, SPLITS, ...: 1 .. 8
    KEPT = "kept"  # text, booleans, floats, a default of 0 or less: kept


TILES = (1, 2, 3, 4, 8, 16)
OTHER_MAX = 8
_CLUSTER = re.compile(r"CLUSTER(_?(SIZE_?)?[MNXYZ])?|C[MNXYZ]")
_TILE = re.compile(r"[BWT][MNK]|BLOCK_?(SIZE_?)?[MNK]")


def kinds(defaults: Mapping[str, Any]) -> dict[str, Kind]:
    """The kind of each parameter, from its name and default.

    >>> sorted((k, v.value) for k, v in kinds(dict(M=1, BM=2, CN=1, SMS=4, KIND="vec", TM=0)).items())
    [('BM', 'tile'), ('CN', 'cluster'), ('KIND', 'kept'), ('M', 'size'), ('SMS', 'other'), ('TM', 'kept')]
    """
    out = {}
    for name, v in defaults.items():
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            out[name] = Kind.KEPT
        elif name in ("M", "N", "K"):
            out[name] = Kind.SIZE
        elif _CLUSTER.fullmatch(name):
            out[name] = Kind.CLUSTER
        elif _TILE.fullmatch(name):
            out[name] = Kind.TILE
        else:
            out[name] = Kind.OTHER
    return out


def defaults(path: str | Path) -> dict[str, Any]:
    """The ``PARAMS`` of a schedule file (a user error if it has none that are valid)."""
    from tilec.runtime.loader import load_module

    module = load_module(path)
    found = getattr(module, "PARAMS", None)
    if not isinstance(found, dict) or not all(isinstance(k, str) for k in found):
        raise ParamError(f"{Path(path).name}: PARAMS must be a dict of parameter names to "
                         f"defaults to draw parameter values, but got {found!r}")
    return dict(found)


def builds(path: str | Path, p: Mapping[str, Any],
           cluster: tuple[int, ...] | None = None) -> bool:
    """Whether the schedule builds at ``p`` and its launch is valid."""
    from tilec.ir import infer_launch
    from tilec.runtime.loader import load_schedule

    try:
        fusion = load_schedule(path, dict(p)).fusion
        if cluster is not None:
            fusion.set_cluster(*cluster)
        infer_launch(fusion)
    except TilecError:
        return False
    return True


def params(path: str | Path, *, fixed: Mapping[str, Any] | None = None,
           strategies: Mapping[str, st.SearchStrategy[Any]] | None = None,
           facts: Sequence[FactLike] = (), meet: bool = True, max_size: int = 64,
           cluster: tuple[int, ...] | None = None) -> st.SearchStrategy[dict[str, Any]]:
    """Every parameter of the schedule file ``path``, drawn (see the module's docstring).

    ``fixed``: values kept as given; ``strategies``: a strategy of one's own per parameter;
    ``facts``: conditions the draws meet (or, ``meet=False``, fail); ``max_size``: the largest
    M, N, K drawn; ``cluster``: the (x, y, z) cluster tested with ``set_cluster``, for a schedule
    that binds blockIdx and leaves the cluster to the launch (:func:`tilec.testing.check`)."""
    base = defaults(path)
    fixed = dict(fixed or {})
    strategies = dict(strategies or {})
    for name in [*fixed, *strategies]:
        if name not in base:
            raise ParamError(f"{Path(path).name}: unknown parameter {name!r}; the parameters "
                             f"are {', '.join(base)}")
    if max_size < 1:
        raise ParamError(f"max_size must be at least 1 but got {max_size}")
    kind = kinds(base)
    draws: dict[str, st.SearchStrategy[Any]] = {}
    ranges: dict[str, int] = {}
    for name, k in kind.items():
        if name in fixed:
            continue
        if name in strategies:
            draws[name] = strategies[name]
        elif k is Kind.SIZE:
            draws[name], ranges[name] = st.integers(1, max_size), max_size
        elif k is Kind.TILE:
            draws[name], ranges[name] = st.sampled_from(TILES), max(TILES)
        elif k is Kind.OTHER:
            draws[name], ranges[name] = st.integers(1, OTHER_MAX), OTHER_MAX
    conds = [condition(f, base) for f in facts]
    for f, c in zip(facts, conds, strict=True):
        unknown = sorted(str(s) for s in (c.free_symbols if c is not None else ())
                         if str(s) not in base)
        if unknown:
            raise ParamError(f"fact {f} names {unknown[0]}, not a parameter of "
                             f"{Path(path).name} ({', '.join(base)})")
    multiples = _multiples(conds, set(ranges)) if meet else []
    start = {**base, **fixed}

    aligned = _aligned(kind, set(draws) - set(strategies), start)

    @st.composite
    def draw(d: st.DrawFn) -> dict[str, Any]:
        p = dict(start)
        planned = {x for x, _ in multiples}
        for name, s in draws.items():
            if name not in planned:
                p[name] = d(s)
        # half the time a size is a multiple of its tile and a count of the cluster: the
        # launches where closed forms are proved, and those next to them
        for name, by in aligned.items():
            if name not in planned and d(st.booleans()):
                step = math.lcm(*[p[b] if isinstance(b, str) else b for b in by])
                p[name] = step * d(st.integers(1, max(1, ranges[name] // step)))
        for name, exprs in multiples:
            steps = [_value(e, p) for e in exprs]
            if any(v is None or v < 1 for v in steps):
                p[name] = d(draws[name])
                continue
            step = math.lcm(*steps)  # type: ignore[arg-type]
            p[name] = step * d(st.integers(1, max(1, ranges[name] // step)))
        return p

    out = draw()
    if facts:
        out = out.filter(lambda p: holds(facts, p) == meet)
    return out.filter(lambda p: builds(path, p, cluster))


def _aligned(kind: Mapping[str, Kind], drawn: set[str], start: Mapping[str, Any]
             ) -> dict[str, list[str | int]]:
    """What each drawn size (its block tile: BM for M) and count (the cluster factors) may be
    drawn a multiple of."""
    out: dict[str, list[str | int]] = {}
    tiles = [t for t, k in kind.items() if k is Kind.TILE and t.startswith("B")]
    factors = [start[c] for c, k in kind.items() if k is Kind.CLUSTER and c not in drawn]
    for name, k in kind.items():
        if name not in drawn:
            continue
        if k is Kind.SIZE:
            tile = next((t for t in tiles if t.endswith(name) and t in drawn | set(start)), None)
            if tile is not None:
                out[name] = [tile]
        elif k is Kind.OTHER and factors and math.lcm(*factors) > 1:
            out[name] = [math.lcm(*factors)]
    return out


def _multiples(conds: Sequence[Any], drawn: set[str]) -> list[tuple[str, list[Any]]]:
    """Per drawn parameter X, the E of its facts ``X % E == 0``, in an order where E's drawn
    parameters come first (a fact that cannot be ordered is left to the filter)."""
    by: dict[str, list[Any]] = {}
    for x, e in filter(None, map(divisibility, conds)):
        if str(x) in drawn:
            by.setdefault(str(x), []).append(e)
    order: list[tuple[str, list[Any]]] = []
    done: set[str] = set()
    progress = True
    while progress:
        progress = False
        for x, exprs in by.items():
            needs = {str(s) for e in exprs for s in e.free_symbols} & set(by)
            if x not in done and needs <= done:
                order.append((x, exprs))
                done.add(x)
                progress = True
    return order


def _value(e: Any, p: Mapping[str, Any]) -> int | None:
    from tilec.proofs.evaluate import compile_int

    syms = sorted(e.free_symbols, key=str)
    vals = [p.get(str(s)) for s in syms]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return None
    try:
        return int(compile_int([e], syms)(*vals)[0])
    except ZeroDivisionError:
        return None
