"""The CUDA module's copy of ``tilec gen --target cuda``'s heuristic (copied into modules that
``tilec build --target cuda`` writes, after :mod:`tilec.library.model`, from its marker line on):
:func:`_cuda_heuristic` chooses at the shape what tilec.transforms.heuristic.heuristic chooses
for the cuda target, among the configs the build carries for it (``HEURISTIC``):

* the swapped-operand rules (tilec.transforms.cuda_swap.rule): the decode and 17-32-row split-K
  tiles, the data-parallel rows tile of at most one wave, one row tile under half a wave in two K
  parts, the 168x128 tile past 1024 rows;
* the deep-K rules (tilec.transforms.cuda_rules: very few tiles, one tile) with their split-K
  counts;
* the other tile rules, and the tiles weighed by rate where M and N are both 128 or more, each
  with its decomposition picked by the cost model (:func:`_pick`, :func:`_modeled`);
* the 2x1 cluster (tilec.transforms.heuristic._cluster).

Above the marker, tilec's side: :func:`cuda_heuristic_data`, the data the copy reads, adding to
the build's configs every config the copy can choose. tests/library/test_cuda_heuristic.py holds
the copy to gen's choice, knob for knob.
"""
# ruff: noqa: F821  (the data block's names: CONFIGS, HEURISTIC; model's _pick)

from __future__ import annotations

import math
from typing import Any

from tilec.library.table import ConfigSet, sms_of

__all__ = ["cuda_heuristic_data"]


def cuda_heuristic_data(raw: dict[str, Any], configs: ConfigSet) -> dict[str, Any] | None:
    """What :func:`_cuda_heuristic` reads (``HEURISTIC``): the SMs, the weighed tiles with their
    rates (tilec.transforms.cuda_rules.CUDA_TILES), the configs of each tile whose decomposition
    the cost model picks in MENU order, and every config the copy may choose keyed by
    :func:`_cuda_key` (added to ``configs``). None where the schedule pins a knob or lacks one
    (the buckets answer)."""
    from tilec.runtime.rules import DECOMP_KNOBS, MENU
    from tilec.transforms.cuda_rules import CUDA_TILES
    from tilec.transforms.knobs import KNOBS

    optional = ("GROUP_M", "LOAD")  # the copy's keys hold every other knob
    if not all(isinstance(raw.get(k), str) and raw[k].lower() == "auto"
               for k in KNOBS if k in raw or k not in optional):
        return None
    sms = sms_of(raw)
    base = {k: v for k, v in raw.items() if k not in ("M", "N", "K")}
    declared = [k for k in KNOBS if k in raw]

    def add(tile: tuple, entry: tuple, cm: int = 1) -> int:
        BM, BN, BK, WARPS, STAGES, SWAP_AB = tile
        knobs = {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": 8, "STAGES": STAGES, "WARPS": WARPS,
                 "LOAD": "auto", "SWAP_AB": SWAP_AB, "CM": cm, "CN": 1,
                 **dict(zip(DECOMP_KNOBS, entry, strict=True))}
        return configs.add({**base, **{k: knobs[k] for k in declared}},
                           (4 * BM, 4 * BN, 128 * BK))

    weighed = [[(c.BM, c.BN, c.BK, c.WARPS, c.STAGES, 0), rate] for c, rate in CUDA_TILES]
    picked = {t for t, _ in weighed} | set(_CUDA_PICKED.values())
    twins = sms % 2 == 0
    reach = [e for e in MENU if _reaches(e, sms)]
    menus, reachable = {}, []
    for tile in sorted(picked):
        menus[tile] = [add(tile, e) for e in reach]
        reachable += menus[tile]
        if twins and tile[0] == 128 and tile[1] in (128, 256):
            reachable += [add(tile, e, 2) for e in reach if e[0] == "splitk"]
    for bn in (64, 128):  # the swapped rows tiles: 32 .. 176 rows (rows_tile's, wide_rows')
        reachable += [add(_swap_tile(bm, bn), _DP)
                      for bm in range(_ROWS_M[0], _SWAP_ONE_TILE_ROWS + 1, 8)]
    reachable += [add(_swap_tile(bm, 64), _SPLIT2)  # cuda_swap.half_wave's
                  for bm in range(40, _SWAP_ONE_TILE_ROWS + 1, 8)]
    reachable += [add(*_SWAP_DECODE), add(*_SWAP_DEEP32), add(_SWAP_DECODE_128, _DP),
                  add(_SWAP_DECODE_128, _SPLIT2)]
    for tile in _FEW_DEEP.values():  # split-K over the SMs: at least 4 parts (K >= 16384)
        reachable += [add(tile, ("splitk", s, 1, "reduce_kernel"), 2 if twins else 1)
                      for s in range(4, max(4, sms // 2) + 1)]
    reachable += [add(_ONE_DEEP, ("splitk", s, 1, "deterministic"))
                  for s in range(32, _ONE_DEEP_PARTS + 1)]  # K >= 32768: 32 parts at least
    index = {_cuda_key(configs.params[i]): i for i in sorted(set(reachable))}
    return {"target": "cuda", "sms": sms, "weighed": weighed, "menus": menus, "index": index}


def _reaches(entry: tuple, sms: int) -> bool:
    """Whether MENU ``entry`` can be the cost model's pick anywhere (table.reachable_tiles)."""
    from tilec.library.table import reachable_tiles

    return reachable_tiles(entry, 1, math.inf, math.inf, sms)


# ---- the built module's code: copied from here on (tilec.library.build.module_text) ----

# --------------------------------------------------------------------------------------------
# tilec gen --target cuda's heuristic at the shape (tilec.transforms.heuristic.heuristic for
# the cuda target, copied): tiles as (BM, BN, BK, WARPS, STAGES, SWAP_AB)
# --------------------------------------------------------------------------------------------

# tilec.transforms.cuda_swap
_SWAP_MAX_ROWS, _SWAP_ONE_TILE_ROWS, _SWAP_MIN_SPLIT_ROWS = 168, 176, 96
_SWAP_BUDGET = {64: 208 * 1024, 128: 160 * 1024}  # shared memory for the stage ring, by BN
_SWAP_DECODE = ((16, 256, 64, 8, 6, 1), ("splitk", 3, 1, "deterministic"))
_SWAP_DECODE_128, _DECODE_SHALLOW_K, _DECODE_DEEP_K = (16, 128, 64, 8, 6, 1), 2048, 28672
_ROWS_M, _ROWS_DEEP = (32, 1024), (272, 28672)
_SWAP_DEEP32 = ((32, 256, 64, 12, 6, 1), ("splitk", 4, 1, "reduce_kernel"))
_WIDE_ROWS, _WIDE_WASTE, _WIDE_FILL = 168, 0.025, 0.93
_RAGGED_ROWS, _RAGGED_WASTE = tuple(range(136, 177, 8)), 0.05
_HALF_WAVE_K, _HALF_WAVE_SPLIT_K = (2048, 14336), 7168
_DP, _SPLIT2 = ("dp", 1, 1, "deterministic"), ("splitk", 2, 1, "deterministic")
# tilec.transforms.cuda_rules: very few tiles, deep K (by N >= 512); one tile, deep K
_FEW_DEEP = {True: (128, 256, 64, 12, 4, 0), False: (128, 128, 64, 12, 6, 0)}
_ONE_DEEP, _ONE_DEEP_PARTS = (128, 128, 64, 12, 6, 0), 48
# the tile rules whose decomposition the cost model picks: rule name -> tile
_CUDA_PICKED = {
    "cuda: M <= 96, enough 64x256 tiles": (64, 256, 64, 8, 4, 0),
    "cuda: one tile row (M <= 128), 128x64 tiles, 8 stages deep": (128, 64, 64, 12, 8, 0),
    "cuda: deep K, 32 or more 128x256 tiles": (128, 256, 64, 12, 4, 0),
    "cuda: decode (M <= 64), 8 stages": (64, 128, 64, 8, 8, 0),
    "cuda: small": (64, 128, 64, 8, 4, 0),
}
_CUDA_WEIGHED = "cuda: at least 128 rows and columns"


def _cuda_key(p: dict) -> tuple:
    """A config's knobs as HEURISTIC["index"] keys them: its tile, decomposition, cluster."""
    return (p["BM"], p["BN"], p["BK"], p["WARPS"], p["STAGES"], p["SWAP_AB"], p["DECOMP"],
            p["SPLITS"], p["SK_WAVES"], p["FIXUP"], p["CM"], p["CN"])


def _swap_tile(bm: int, bn: int) -> tuple:
    """cuda_swap.swapped: one consumer warpgroup for 64 columns, two for 128; the stages the
    ring's budget holds (8 at most)."""
    stages = max(2, min(8, _SWAP_BUDGET[bn] // ((bm + bn) * 64 * 2)))
    return (bm, bn, 64, 8 if bn == 64 else 12, stages, 1)


def _rows_tile(M: int, N: int, sms: int) -> tuple | None:
    """cuda_swap.rows_tile: (BM, BN, row tiles) of the swapped data-parallel tile, or None."""
    best = None
    for r in range(1, -(-M // 8) + 1):
        rows = -(-M // r)
        bm = 8 * -(-rows // 8)
        if (bm > (_SWAP_ONE_TILE_ROWS if r == 1 else _SWAP_MAX_ROWS)
                or (r > 1 and bm < _SWAP_MIN_SPLIT_ROWS) or -(-M // bm) != r):
            continue
        for bn in (64, 128):
            tiles = r * -(-N // bn)
            if 2 * tiles < sms or tiles > sms:
                continue
            key = (-tiles, bm * bn, r)
            if best is None or key < best[0]:
                best = (key, (bm, bn, r))
    return None if best is None else best[1]


def _cuda_swap(M: int, N: int, K: int, sms: int) -> tuple | None:
    """cuda_swap.rule: (tile, decomposition, why) of the swapped kernel, or None."""
    if N % 64:
        return None
    n256, n128 = -(-N // 256), -(-N // 128)
    if M <= 16 and K <= _DECODE_SHALLOW_K and sms < 4 * n128 <= 4 * sms:
        return _SWAP_DECODE_128, _DP, "decode rows (M <= 16), shallow K: 16x128"
    if M <= 16 and K <= 8192 and n256 >= 24 and 3 * n256 <= sms:
        return (*_SWAP_DECODE, "decode rows (M <= 16) on wgmma's N, 16x256, split-K 3")
    if M <= 16 and K <= _DECODE_DEEP_K and sms < 4 * n128 and 2 * n128 <= sms:
        return _SWAP_DECODE_128, _SPLIT2, "decode rows (M <= 16): 16x128, split-K 2"
    if 16 < M <= 32 and K >= 16384 and 4 * n256 <= sms:
        return (*_SWAP_DEEP32, "17-32 rows, deep K: 32x256, split-K 4, reduce kernel")
    if _ROWS_M[0] <= M <= _ROWS_M[1] and (K <= 8192 or (M <= _ROWS_DEEP[0] and M % 128 != 0
                                          and K <= _ROWS_DEEP[1])):
        t = _rows_tile(M, N, sms)
        if t is not None:
            return _swap_tile(t[0], t[1]), _DP, f"{M} rows as {t[2]} x {t[0]} on wgmma's N"
    bm, t64 = 8 * -(-M // 8), -(-N // 64)
    if (M > 32 and bm <= _SWAP_ONE_TILE_ROWS and _HALF_WAVE_K[0] <= K <= _HALF_WAVE_K[1]
            and sms < 4 * t64 and 2 * t64 < sms):  # cuda_swap.half_wave
        split = K >= _HALF_WAVE_SPLIT_K
        return (_swap_tile(bm, 64), _SPLIT2 if split else _DP,
                f"{M} rows as one {bm}-row tile on wgmma's N, under half a wave"
                + (": split-K 2" if split else ""))
    if 1025 <= M <= 3400 and 3584 <= K <= 18944 and N % 128 == 0:  # cuda_swap.wide_rows
        ragged = 0 < M % 128 <= 64
        waste = _RAGGED_WASTE if ragged else _WIDE_WASTE
        best = None
        for bm in sorted({_WIDE_ROWS, *(_RAGGED_ROWS if ragged else ())}, reverse=True):
            r = -(-M // bm)
            tiles = r * (N // 128)
            fill = round(tiles / (sms * -(-tiles // sms)), 3)
            rows_per_sm = -(-tiles // sms) * bm
            if r * bm - M <= waste * M and fill >= _WIDE_FILL and (
                    best is None or rows_per_sm < best[0]):
                best = (rows_per_sm, bm, r, tiles)
        if best is not None:
            _, bm, r, tiles = best
            return _swap_tile(bm, 128), _DP, f"{M} rows as {r} x {bm} on wgmma's N, {tiles} tiles"
    return None


def _few_deep(M: int, N: int, K: int, sms: int) -> bool:
    """cuda_rules.few_deep: at most sms/8 128x128 tiles over two tile rows or more, deep K."""
    return M > 128 and K >= 16384 and sms >= -(-M // 128) * -(-N // 128) * 8


def _cuda_rule(M: int, N: int, K: int, sms: int) -> tuple:
    """cuda_rules.cuda_rule: (rule name, tile, its decomposition or None: the cost model's)."""
    if _few_deep(M, N, K, sms):
        tile = _FEW_DEEP[N >= 512]
        parts = min(sms // (-(-M // tile[0]) * -(-N // tile[1])), -(-K // 64) // 64)
        return ("cuda: very few tiles, deep K: 2x1 cluster, split-K over the SMs", tile,
                ("splitk", parts, 1, "reduce_kernel"))
    if M <= 128 and N <= 128 and K >= 32768:
        return ("cuda: one 128x128 tile, deep K: 6 stages, split-K 48, the deterministic fix-up",
                _ONE_DEEP, ("splitk", min(_ONE_DEEP_PARTS, -(-K // 64) // 16), 1,
                            "deterministic"))
    if M <= 96 and -(-M // 64) * -(-N // 256) >= 66:
        name = "cuda: M <= 96, enough 64x256 tiles"
    elif 64 < M <= 128 and -(-N // 64) >= 32:
        name = "cuda: one tile row (M <= 128), 128x64 tiles, 8 stages deep"
    elif M >= 128 and N >= 128:
        return _CUDA_WEIGHED, None, None
    elif K >= 8192 and -(-M // 128) * -(-N // 256) >= 32:
        name = "cuda: deep K, 32 or more 128x256 tiles"
    elif M <= 64:
        name = "cuda: decode (M <= 64), 8 stages"
    else:
        name = "cuda: small"
    return name, _CUDA_PICKED[name], None


def _cuda_cluster(M: int, N: int, K: int, BM: int, BN: int, split_k: bool, sms: int) -> int:
    """heuristic._cluster and _clustered: 2 (a 2x1 cluster sharing each B tile) for split-K in
    128x128 or 128x256 tiles over very few tiles and deep K, or over two tile rows or more where
    B's rows are 16-byte but not 128-byte multiples; 1 otherwise, or where 2 does not divide
    the SMs."""
    if sms % 2 or BM != 128 or BN not in (128, 256) or not split_k:
        return 1
    b_row = 2 * N
    return 2 if _few_deep(M, N, K, sms) or (
        -(-M // 128) >= 2 and b_row % 128 and b_row % 16 == 0) else 1


def _cuda_heuristic(M: int, N: int, K: int) -> tuple | None:
    """tilec gen --target cuda's heuristic at M x N x K among the configs the build carries
    (HEURISTIC): (config index, why); None where the module lacks the config."""
    h = HEURISTIC
    sms, index = h["sms"], h["index"]
    swap = _cuda_swap(M, N, K, sms)
    if swap is not None:
        tile, entry, what = swap
        i = index.get((*tile, *entry, 1, 1))
        return None if i is None else (i, f"heuristic at this shape: swapped operands, {what}"
                                          f"; chosen: {CONFIGS[i]['label']}")
    rule, tile, entry = _cuda_rule(M, N, K, sms)
    if entry is not None:  # a deep-K rule's own split-K
        i = index.get((*tile, *entry, _cuda_cluster(M, N, K, tile[0], tile[1], True, sms), 1))
        return None if i is None else (i, f"heuristic at this shape: the rule '{rule}'; "
                                          f"chosen: {CONFIGS[i]['label']}")
    weighed = rule == _CUDA_WEIGHED
    scored, lines = [], []
    for n, (t, rate) in enumerate(h["weighed"] if weighed else [[tile, 1.0]]):
        menu = h["menus"].get(t)
        if menu is None:
            return None
        BM, BN, BK = t[:3]
        (time_, i), _ = _pick(menu, -(-M // BM) * -(-N // BN), -(-K // BK), sms)
        scored.append((time_ * (BM * BN * BK) / (128 * 128 * 64) / rate if weighed else time_,
                       n, i))
        lines.append(f"{CONFIGS[i]['label']}: {time_:.1f} iters")
    i = min(scored)[2]
    p = CONFIGS[i]["params"]
    if _cuda_cluster(M, N, K, p["BM"], p["BN"], p["DECOMP"] == "splitk", sms) == 2:
        i = index.get((*_cuda_key(p)[:-2], 2, 1))
        if i is None:
            return None
    return i, (f"heuristic at this shape: the rule '{rule}', the cost model over "
               f"{len(scored)} tile(s) ({'; '.join(lines)}); chosen: {CONFIGS[i]['label']}")
