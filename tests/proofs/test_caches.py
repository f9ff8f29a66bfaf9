"""The proof engine's caches are two objects (tilec/proofs/cache.py): every table is found from the
objects, filled by ordinary use, emptied by one call; a session passed as ``cache=`` is the one
used all the way down; no module of tilec.proofs keeps another cache of its own."""

from __future__ import annotations

import functools
import importlib
import itertools
import pkgutil
from types import FunctionType, ModuleType

import numpy as np
import pytest
import sympy
from sympy import Eq, Mod, floor

import tilec.proofs as proofs
from tilec.proofs import (
    CONTENT,
    SESSION,
    Context,
    ProofCache,
    bounds,
    clear_caches,
    compile_int,
    evaluate_grid,
    frac,
    implies,
    narrow,
    prove_eq,
    simplify,
)
from tilec.proofs.cache import Memo, Table
from tilec.proofs.expand import identical
from tilec.proofs.trace import text

x, y, r = sympy.symbols("x y r", integer=True, nonnegative=True)
CM, CN, SMS = sympy.symbols("CM CN SMS", integer=True, positive=True)
_calls = itertools.count()


def _use_the_engine(cache: ProofCache | None = None) -> None:
    """Ordinary calls of every entry point (no table named: what they fill is what they use),
    over symbols of new names each time (so that what is kept is new to every cache)."""
    n = next(_calls)
    x, y, r = sympy.symbols(f"x{n} y{n} r{n}", integer=True, nonnegative=True)
    CM, CN, SMS = sympy.symbols(f"CM{n} CN{n} SMS{n}", integer=True, positive=True)
    ctx = Context().bound(r, CN).divisible(SMS, CN)
    simplify(floor(Mod(x, CM * CN) / CN), ctx, cache=cache)
    simplify(Mod(SMS * x + r, CN), ctx, cache=cache)
    narrow(Eq(floor((CN * x + r) / CN), floor((CN * y + r) / CN)), ctx, cache=cache)
    prove_eq(floor(x / (CM * CN)), floor(floor(x / CN) / CM), ctx, cache=cache)
    implies(sympy.Lt(x, 4), sympy.Lt(floor(x / 2), 2), ctx, cache=cache)
    bounds(Mod(x, CN) + r, ctx, cache=cache)
    [str(f) for f in ctx.facts]
    text(floor(x / CN) + Mod(x, CM))
    frac(floor((x + 1) / (2 * CN)))
    identical(CN * (x + 1), CN * x + CN)
    compile_int([floor(x / 3)], [x])(7)
    evaluate_grid(Mod(x, 4), [x], [np.arange(5)])


def _modules() -> list[ModuleType]:
    mods = [proofs]
    for info in pkgutil.walk_packages(proofs.__path__, prefix="tilec.proofs."):
        mods.append(importlib.import_module(info.name))
    return mods


def test_every_table_is_filled_by_use_and_emptied_by_one_call() -> None:
    clear_caches()
    _use_the_engine()
    tables = {f"SESSION.{k}": v for k, v in SESSION.tables().items()}
    tables |= {f"CONTENT.{k}": v for k, v in CONTENT.tables().items()}
    assert len(tables) >= 15
    assert [name for name, t in tables.items() if len(t) == 0] == []  # each one is in use
    clear_caches()
    assert {name: len(t) for name, t in tables.items() if len(t)} == {}
    # the objects hold the same tables after clearing (cleared in place, not replaced)
    assert all(t is SESSION.tables().get(n[8:], CONTENT.tables().get(n[8:])) for n, t in tables.items())


def test_a_session_passed_down_is_the_one_used() -> None:
    """Results, reasoners and divisibility answers of a call given ``cache=`` land in that
    session, none in the default one (a reasoner or a nested call that dropped it would)."""
    clear_caches()
    mine = ProofCache()
    _use_the_engine(mine)
    assert {k: n for k, n in SESSION.sizes().items() if n} == {}
    assert all(n > 0 for n in mine.sizes().values()), mine.sizes()
    assert all(r.cache is mine for r in mine.reasoners.values())
    # and the answers are those of the default session
    ctx = Context().bound(r, CN)
    e = Eq(floor((CN * x + r) / CN), floor((CN * y + r) / CN))
    assert narrow(e, ctx, cache=mine).explain() == narrow(e, ctx).explain()


def _containers(mod: ModuleType) -> dict[str, object]:
    """Module-level dicts, sets and lists, and those held by module-level objects (a printer's
    memo), by name; functools caches; Memo and Table instances."""
    out: dict[str, object] = {}
    for name, v in vars(mod).items():
        if isinstance(v, ModuleType | type) or v is SESSION or v is CONTENT:
            continue
        if isinstance(v, dict | set | list | Memo | Table) or hasattr(v, "cache_clear"):
            out[f"{mod.__name__}.{name}"] = v
        elif not isinstance(v, FunctionType | functools.partial) and hasattr(v, "__dict__"):
            for k, w in vars(v).items():
                if isinstance(w, dict | set | list | Memo | Table):
                    out[f"{mod.__name__}.{name}.{k}"] = w
    return out


def test_no_module_keeps_a_cache_outside_the_two_objects() -> None:
    """Every container at module level stays the same size through the engine's use (a cache
    grows), and no function is wrapped in a functools cache."""
    clear_caches()
    found: dict[str, object] = {}
    for mod in _modules():
        found |= _containers(mod)
    assert [n for n, v in found.items() if hasattr(v, "cache_clear")] == []
    assert [n for n, v in found.items() if isinstance(v, Memo | Table)] == []
    before = {n: len(v) for n, v in found.items()}  # type: ignore[arg-type]
    _use_the_engine()
    _use_the_engine(ProofCache())
    grew = {n: (before[n], len(v)) for n, v in found.items() if len(v) != before[n]}  # type: ignore[arg-type]
    assert grew == {}


@pytest.mark.parametrize("limit", [1, 3])
def test_memo_keeps_the_most_recently_used(limit: int) -> None:
    m: Memo[int] = Memo(limit)
    for k in range(5):
        m.get_or(k, lambda k=k: k * k)
    assert len(m) == limit and all(k in m for k in range(5 - limit, 5))
    t = Table(limit)
    for k in range(limit + 2):
        t.remember(k, k)
    assert len(t) <= limit + 1 and t[limit + 1] == limit + 1
