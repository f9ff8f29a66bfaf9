"""The dispatch table of a built library: which configuration runs for which shape.

A built module cannot import tilec. It carries a copy of gen's heuristic (:func:`heuristic_data`
gives it the kernels of every tile and decomposition it may pick) and of a nearest rule's
re-choice (:meth:`ConfigSet.reach`); what was measured (tuned records, rules) and the buckets are
tables. ``tilec build`` asks gen's resolution at build time, once per **bucket** of shapes (the
answer where the copy of the heuristic does not run: a schedule that pins a decomposition knob),
and embeds the answers. A bucket is a triple of size classes, one per dimension: the class of a size ``x`` is
``c`` with ``2**(c-1) < x <= 2**c`` (0 for ``x <= 1``), so ``M`` in (64, 128] is class 7; the
classes stop at the class of ``max_size`` (larger sizes take the last class). Each bucket is
resolved at its **representative** shape, the largest of the bucket (``2**c`` per dimension): the
powers of two that model shapes are made of land on their own bucket's representative, and the
heuristic's own size rules (``M <= 32``, ``M <= 128``) fall on class boundaries.

Exact entries come first: the shapes of this schedule's tuned records (``tilec tune``), the shapes
of the rules files' rules, and the shapes the user lists (``--shape``); each is resolved at the
shape itself, as ``tilec gen`` would.

Example::

    >>> from tilec.library.table import shape_class, representative
    >>> [shape_class(x) for x in (0, 1, 2, 3, 64, 65, 128)]
    [0, 0, 1, 2, 6, 7, 7]
    >>> representative(7), representative(0)
    (128, 1)
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilec.transforms.heuristic import KNOBS, Config, Resolution, Source, resolve

__all__ = ["CARDS", "ConfigSet", "Table", "build_table", "build_tables", "card_of",
           "representative", "resolve_at", "shape_class", "tuned_shapes"]

CARDS = ("h100", "h200")


def shape_class(x: int) -> int:
    """The size class of ``x``: ``c`` with ``2**(c-1) < x <= 2**c``; 0 for 0 and 1."""
    return (x - 1).bit_length() if x > 1 else 0


def representative(c: int) -> int:
    """The largest size of class ``c`` (where its bucket is resolved)."""
    return 2 ** c


Box = tuple[tuple[int, float], tuple[int, float], tuple[int, float]]  # (lo, hi) of M, N, K


def rule_box(shape: tuple[int, int, int], radius: float) -> Box:
    """Sizes within ``radius`` of a rule's shape in log2 space, per dimension (a box around
    the ball: over-inclusive)."""
    return tuple((max(1, math.floor(x * 2 ** -radius)), math.ceil(x * 2 ** radius))
                 for x in shape)  # type: ignore[return-value]


def reachable(entry: tuple[str, int, int, str], box: Box, tile: tuple[int, int, int],
              sms: int) -> bool:
    """Whether the cost model may weigh ``entry`` (tilec.runtime.rules.applicable) at some
    shape of ``box`` for ``tile`` on ``sms`` SMs: over-inclusive, never under.

    >>> reachable(("splitk", 8, 1, "deterministic"), ((1, 64), (1, 64), (1, 4096)),
    ...           (64, 64, 64), 132)
    True
    >>> reachable(("streamk", 1, 1, "deterministic"), ((4096, 8192),) * 3, (128, 128, 64), 132)
    False
    """
    (m0, m1), (n0, n1), (_, k1) = box
    BM, BN, BK = tile
    tmin = -(-m0 // BM) * -(-n0 // BN)
    tmax = math.inf if math.inf in (m1, n1) else -(-int(m1) // BM) * -(-int(n1) // BN)
    kmax = math.inf if k1 == math.inf else -(-int(k1) // BK)
    return reachable_tiles(entry, tmin, tmax, kmax, sms)


def reachable_tiles(entry: tuple[str, int, int, str], tmin: int, tmax: float, kmax: float,
                    sms: int) -> bool:
    """:func:`reachable` over tile counts ``tmin..tmax`` and at most ``kmax`` k-iterations."""
    kind, splits, waves, fixup = entry
    if kind == "dp":
        return True
    if kind == "splitk":
        wave = 2 * sms if fixup == "reduce_kernel" else sms
        return tmin < sms and tmin * splits <= wave and splits <= kmax
    if sms == 1 or (tmax == tmin and tmin % sms == 0):  # no partial wave anywhere
        return False
    if kind == "streamk":
        return tmin < sms
    if kind == "skpp":
        return tmax > waves * sms
    return True


class ConfigSet:
    """The distinct configurations the tables name, each once (by its parameter values), with
    the shape it was first chosen at (the library's kernels are lowered there)."""

    def __init__(self) -> None:
        self.params: list[dict[str, Any]] = []
        self.first_shape: list[tuple[int, int, int]] = []
        self._index: dict[str, int] = {}
        # config index -> the MENU positions (tilec.runtime.rules.MENU) the module may re-choose
        # its decomposition among, at the shapes a nearest rule lends it to
        self.menus: dict[int, set[int]] = {}

    def reach(self, index: int, box: Box, sms: int) -> None:
        """Config ``index`` may be lent to the shapes of ``box``: note the decompositions the
        run-time re-choice may pick there (:func:`reachable`)."""
        p = self.params[index]
        if any(k not in p for k in ("BM", "BN", "BK", "DECOMP")):
            return
        from tilec.runtime.rules import MENU

        tile = (int(p["BM"]), int(p["BN"]), int(p["BK"]))
        self.menus.setdefault(index, set()).update(
            i for i, entry in enumerate(MENU) if reachable(entry, box, tile, sms))

    def alternatives(self) -> dict[int, list[int]]:
        """Per config with a menu, the configs of its tile with each menu decomposition (in
        MENU order, added to the set: their kernels are built too)."""
        from tilec.runtime.rules import DECOMP_KNOBS, MENU

        out = {}
        for index, menu in sorted(self.menus.items()):
            base, shape = self.params[index], self.first_shape[index]
            out[index] = [self.add({**base, **dict(zip(DECOMP_KNOBS, MENU[i], strict=True))},
                                   shape) for i in sorted(menu)]
        return out

    def add(self, params: dict[str, Any], shape: tuple[int, int, int]) -> int:
        cfg = {k: v for k, v in params.items() if k not in ("M", "N", "K")}
        key = json.dumps(cfg, sort_keys=True, default=str)
        if key not in self._index:
            self._index[key] = len(self.params)
            self.params.append(cfg)
            self.first_shape.append(shape)
        return self._index[key]


@dataclass
class Table:
    """One card's table: ``grid`` and ``grid_why`` hold, per bucket (flat index
    ``(cm * classes + cn) * classes + ck``), the config index and the reason index; ``exact``
    maps (M, N, K) to (config, reason); ``reasons`` are the texts; ``rules``, per rules file in
    gen's order, its name, radius and rules as (M, N, K, config index; -1 where the rule lacks
    an auto knob and gen's heuristic decides)."""

    card: str
    classes: int
    grid: list[int] = field(default_factory=list)
    grid_why: list[int] = field(default_factory=list)
    exact: dict[tuple[int, int, int], tuple[int, int]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    rules: list[dict[str, Any]] = field(default_factory=list)

    def reason(self, text: str) -> int:
        if text not in self.reasons:
            self.reasons.append(text)
        return self.reasons.index(text)

    def data(self) -> dict[str, Any]:
        """The table as the built module holds it."""
        return {"classes": self.classes, "grid": self.grid, "grid_why": self.grid_why,
                "exact": dict(self.exact), "reasons": self.reasons, "rules": self.rules}


def why(res: Resolution) -> str:
    """One line saying where the knobs left "auto" came from (or that the user pinned all)."""
    picked = [c for c in res.choices if c.source is not Source.USER]
    if not picked:
        return "pinned: every knob given by the schedule's PARAMS or --param"
    src = picked[0].source
    if src is Source.HEURISTIC:
        lines = [r for r in res.reasons if r.startswith("chosen:")]
        return "heuristic: " + "; ".join([res.reasons[0] if res.reasons else picked[0].why,
                                          *lines])
    if src is Source.TUNED:
        return "tuned: recorded by tilec tune at this shape"
    return picked[0].why or "rules"


def resolve_at(raw: dict[str, Any], shape: tuple[int, int, int], *, target: str,
               tuned: dict[str, Any] | None, rules: Sequence[Any], key: str
               ) -> tuple[dict[str, Any], str]:
    """The parameters gen would use at ``shape`` (tuned record, then the first rules file that
    answers, then the heuristic) and why."""
    M, N, K = shape
    params = dict(raw, M=M, N=N, K=K)
    rule = None
    for r in rules:
        rule = r.lookup(M, N, K, key, sms=sms_of(raw))
        if rule is not None:
            break
    res = resolve(params, target=target, tuned=tuned, rules=rule)
    return res.params, why(res)


def sms_of(raw: dict[str, Any]) -> int:
    """The SMs the cost model spreads work over: the schedule's ``SMS`` (resolve's default
    where it has none)."""
    return raw["SMS"] if isinstance(raw.get("SMS"), int) else 132


def has_auto(raw: dict[str, Any]) -> bool:
    return any(isinstance(raw.get(k), str) and raw[k].lower() == "auto" for k in KNOBS)


def build_table(raw: dict[str, Any], *, card: str, target: str, key: str, configs: ConfigSet,
                rules: Sequence[Any] = (), tuned: dict[tuple[int, int, int], dict[str, Any]]
                | None = None, shapes: Iterable[tuple[int, int, int]] = (),
                max_size: int = 16384, jobs: int = 1) -> Table:
    """The table of one card (see the module docstring); ``jobs`` processes resolve the
    buckets (the cost model takes seconds on the largest ones)."""
    classes = shape_class(max_size) + 1
    table = Table(card, classes)
    if not has_auto(raw):  # nothing is chosen per shape: one config everywhere
        shape = (raw["M"], raw["N"], raw["K"])
        index = configs.add(dict(raw), shape)
        reason = table.reason(why(resolve(dict(raw), target=target)))
        table.grid = [index] * classes ** 3
        table.grid_why = [reason] * classes ** 3
        return table
    tuned = tuned or {}
    reps = [representative(c) for c in range(classes)]
    rows = [[(m, n, k) for n in reps for k in reps] for m in reps]  # one row per M class
    # a bucket holds the heuristic alone: what was measured (tuned records, rules) answers at
    # the shape (exact entries; the module's nearest-rule look-up), never a whole bucket
    args = [(raw, row, target, {}, (), key) for row in rows]
    if jobs > 1 and len(rows) > 1:
        import concurrent.futures
        import multiprocessing

        with concurrent.futures.ProcessPoolExecutor(
                min(jobs, len(rows)), mp_context=multiprocessing.get_context("spawn")) as pool:
            answers = list(pool.map(_resolve_row, args))
    else:
        answers = [_resolve_row(a) for a in args]
    for row, answer in zip(rows, answers, strict=True):
        for shape, (params, text) in zip(row, answer, strict=True):
            table.grid.append(configs.add(params, shape))
            table.grid_why.append(table.reason(
                f"{text} (at the bucket's shape {shape[0]}x{shape[1]}x{shape[2]})"))
    exact = list(tuned) + [(r.M, r.N, r.K) for f in rules for r in f.rules] + list(shapes)
    for shape in dict.fromkeys(exact):
        params, text = resolve_at(raw, shape, target=target, tuned=tuned.get(shape), rules=rules,
                                  key=key)
        table.exact[shape] = (configs.add(params, shape), table.reason(text))
    for f in rules:  # gen's rules step at any shape: the nearest rule within the radius
        entries = []
        for r in f.rules:
            res = resolve(dict(raw, M=r.M, N=r.N, K=r.K), target=target,
                          rules=(r.params, f"rules {f.name}"))
            ruled = any(c.source is Source.RULES for c in res.choices)
            # a rule without every auto knob: gen's heuristic decides (here: the bucket)
            entries.append((r.M, r.N, r.K, configs.add(res.params, (r.M, r.N, r.K))
                            if ruled else -1))
        table.rules.append({"name": f.name, "radius": f.radius, "rules": entries})
    if rechoosable(raw):  # a nearest rule's re-choice at run time needs its kernels
        sms = sms_of(raw)
        for f, entry in zip(rules, table.rules, strict=True):
            for M, N, K, index in entry["rules"]:
                if index >= 0:
                    configs.reach(index, rule_box((M, N, K), f.radius), sms)
    return table


def heuristic_data(raw: dict[str, Any], configs: ConfigSet) -> dict[str, Any] | None:
    """What the module's copy of gen's heuristic reads (``HEURISTIC``; tilec/library/runtime.py,
    ``_heuristic``): the SMs, the schedule's pinned knobs, the large problems' tiles with their
    rates (heuristic.LARGE_TILES), and per tile any tile rule or large problem may pick, the
    configs of that tile with each decomposition the cost model may pick wherever the rule
    applies (added to ``configs``). None where the schedule pins a decomposition knob or lacks a
    tile knob (the buckets answer)."""
    from tilec.library.model import _TILE_RULES, _rule_region
    from tilec.runtime.rules import DECOMP_KNOBS, MENU, TILE_KNOBS
    from tilec.transforms.heuristic import LARGE_TILES

    if not rechoosable(raw) or any(k not in raw for k in TILE_KNOBS):
        return None
    sms = sms_of(raw)
    fixed = {k: v for k, v in raw.items() if k in (*TILE_KNOBS, *DECOMP_KNOBS)
             and not (isinstance(v, str) and v.lower() == "auto")}
    large = [[[c.BM, c.BN, c.BK, c.WARPS, c.STAGES], rate] for c, rate in LARGE_TILES]
    regions = [(tile, _rule_region(rule, sms)) for rule, tile in _TILE_RULES.items()]
    regions += [(tuple(t), _rule_region("large", sms)) for t, _ in large]
    tmins: dict[tuple[Any, ...], int] = {}
    for tile, (m0, n0, mn0) in regions:
        knobs = {"BM": tile[0], "BN": tile[1], "BK": tile[2], "STAGES": tile[4],
                 "WARPS": tile[3], "GROUP_M": 8, "LOAD": "auto"}
        knobs.update((k, v) for k, v in fixed.items() if k in knobs)
        key = tuple(knobs[k] for k in TILE_KNOBS)
        BM, BN = knobs["BM"], knobs["BN"]
        tmin = max(-(-m0 // BM) * -(-n0 // BN), -(-mn0 // (BM * BN)))
        tmins[key] = min(tmins.get(key, tmin), tmin)
    base = {k: v for k, v in raw.items() if k not in ("M", "N", "K")}
    # a cluster (swapped operands) left auto is none: tilec build is Triton's, whose heuristic
    # (as the buckets' resolve) leaves CM = CN = 1 (SWAP_AB = 0); the menus' configs then equal
    # the buckets' (one kernel each)
    base.update((k, getattr(Config(), k)) for k in ("CM", "CN", "SWAP_AB")
                if isinstance(base.get(k), str) and base[k].lower() == "auto")
    menus = []
    for key, tmin in tmins.items():
        knobs = dict(zip(TILE_KNOBS, key, strict=True))
        shape = (4 * knobs["BM"], 4 * knobs["BN"], 8 * knobs["BK"])
        menus.append([list(key), [
            configs.add({**base, **knobs, **dict(zip(DECOMP_KNOBS, entry, strict=True))}, shape)
            for entry in MENU if reachable_tiles(entry, tmin, math.inf, math.inf, sms)]])
    return {"sms": sms, "fixed": fixed, "large": large, "menus": menus}


def rechoosable(raw: dict[str, Any]) -> bool:
    """Whether the schedule leaves every decomposition knob ``"auto"`` (then the module
    re-chooses the decomposition of a lent config at each shape)."""
    from tilec.runtime.rules import DECOMP_KNOBS

    return all(isinstance(raw.get(k), str) and raw[k].lower() == "auto" for k in DECOMP_KNOBS)


def _resolve_row(args: tuple[Any, ...]) -> list[tuple[dict[str, Any], str]]:
    raw, shapes, target, tuned, rules, key = args
    return [resolve_at(raw, shape, target=target, tuned=tuned.get(shape), rules=rules, key=key)
            for shape in shapes]


def tuned_shapes(records_path: Path | None, key: str, raw: dict[str, Any]
                 ) -> dict[tuple[int, int, int], dict[str, Any]]:
    """The tuned records of schedule ``key`` whose fixed parameters are ``raw``'s (the shape
    aside), by shape: the newest record of each shape."""
    if records_path is None or not records_path.exists():
        return {}
    want = {k: v for k, v in raw.items() if k not in ("M", "N", "K")
            and not (isinstance(v, str) and v.lower() == "auto")}
    want_text = json.dumps(want, sort_keys=True, default=str)
    try:
        con = sqlite3.connect(records_path, timeout=30)
        rows = con.execute("SELECT fixed, choice FROM tuned WHERE schedule = ? "
                           "ORDER BY made, rowid", (key,)).fetchall()
        con.close()
    except sqlite3.Error:
        return {}
    out: dict[tuple[int, int, int], dict[str, Any]] = {}
    for fixed_text, choice in rows:
        fixed = json.loads(fixed_text)
        shape = tuple(fixed.pop(d, None) for d in "MNK")
        if all(isinstance(v, int) for v in shape) and json.dumps(
                fixed, sort_keys=True, default=str) == want_text:
            out[shape] = json.loads(choice)  # type: ignore[index]
    return out


def card_of(device: str | None) -> str | None:
    """``h100`` / ``h200`` from a device name (``NVIDIA H200``), None for another or none.

    >>> card_of("NVIDIA H100 80GB HBM3"), card_of("NVIDIA H200"), card_of(None)
    ('h100', 'h200', None)
    """
    low = (device or "").lower()
    return next((c for c in CARDS if c in low), None)


def build_tables(raw: dict[str, Any], *, target: str, key: str, configs: ConfigSet,
                 rules: Sequence[tuple[str | None, Any]] = (), card: str = "auto",
                 tuned: dict[tuple[int, int, int], dict[str, Any]] | None = None,
                 shapes: Iterable[tuple[int, int, int]] = (), max_size: int = 16384,
                 jobs: int = 1) -> tuple[dict[str, Table], list[str]]:
    """The tables of a build, and notes. ``rules``: (card or None, rules) pairs; rules without
    a card count for every card. ``card="auto"``: a ``default`` table (the rules without a card)
    and one per card that has rules, chosen at run time by the card's name; ``h100``/``h200``:
    the ``default`` table alone, with that card's rules (another card's are skipped: noted)."""
    notes: list[str] = []
    if card == "auto":
        cards = ["default", *sorted({c for c, _ in rules if c is not None})]
    else:
        cards = ["default"]
        skipped = [r.name for c, r in rules if c not in (None, card)]
        if skipped:
            notes.append(f"rules for another card than {card} skipped: {', '.join(skipped)}")
    tables = {}
    for c in cards:
        want = c if c != "default" else (None if card == "auto" else card)
        use = [r for rc, r in rules if rc is None or rc == want]
        tables[c] = build_table(raw, card=c, target=target, key=key, configs=configs, rules=use,
                                tuned=tuned, shapes=shapes, max_size=max_size, jobs=jobs)
    return tables, notes
