"""The built module's copy of tilec's choices (copied into every module that ``tilec build`` writes,
after :mod:`tilec.library.runtime`, from its marker line on): a nearest rule's decomposition
re-chosen at the shape (:func:`_rechoose`, tilec.runtime.rules.rechoose), gen's heuristic at the
shape (:func:`_heuristic`, tilec.transforms.heuristic.heuristic: its tile rules copied as plain
shape tests, the large tiles' rates in the data block's ``HEURISTIC``), and the cost model they
both weigh with (:func:`_modeled`, tilec.transforms.cost_model.simulate in closed form, its
constants in ``MODEL``). Plain Python: no torch, no tilec. tests/library/test_rechoice.py holds
each copy to its original.

Read as a tilec module this file defines functions only (``tilec build`` reads
:data:`_TILE_RULES` and :func:`_rule_region`); the data names it reads exist in the built module
alone.
"""
# ruff: noqa: F821  (the data block's names: CONFIGS, MODEL, HEURISTIC)

from __future__ import annotations

# ---- the built module's code: copied from here on (tilec.library.build.module_text) ----

# --------------------------------------------------------------------------------------------
# the decomposition re-chosen at the shape (tilec.runtime.rules.rechoose, copied: the cost
# model of tilec.transforms.cost_model in closed form, its constants in MODEL)
# --------------------------------------------------------------------------------------------


def _rechoose(index: int, M: int, N: int, K: int, margin: float | None) -> tuple:
    """Config ``index`` (lent by a nearest rule) or the config of its tile with the
    decomposition the cost model picks at M x N x K among those the build carries (its
    ``menu``); kept where its own models within ``margin`` of that pick (None: a bucket's, the
    model's pick always). With what happened."""
    menu = CONFIGS[index].get("menu")
    if not menu:
        return index, ""
    p = CONFIGS[index]["params"]
    BM, BN, BK, sms = p["BM"], p["BN"], p["BK"], p.get("SMS", 132)
    tiles, k_iters = -(-M // BM) * -(-N // BN), -(-K // BK)
    best, n = _pick(menu, tiles, k_iters, sms)
    own = _modeled(p, tiles, k_iters, sms)
    waves = (f"{tiles} tiles of {BM}x{BN} on {sms} SMs ({tiles / sms:.2f} waves), "
             f"{k_iters} k-iterations")
    mine, theirs = _short(p), _short(CONFIGS[best[1]]["params"])
    bp = CONFIGS[best[1]]["params"]
    if margin is None and all(p[k] == bp[k] for k in ("DECOMP", "SPLITS", "SK_WAVES", "FIXUP")):
        return index, (f"its decomposition {mine} is the model's best here too: {waves}; "
                       f"{own:.1f} iterations modeled")
    if margin is not None and own <= best[0] * (1 + margin):
        return index, (f"its tile and its decomposition {mine} kept: {waves}; {own:.1f} "
                       f"iterations modeled, the model's best {theirs} {best[0]:.1f} "
                       f"(within {100 * margin:g}%)")
    return best[1], (f"decomposition re-chosen for this shape: its tile lent, {mine} -> "
                     f"{theirs}: {waves}; {own:.1f} -> {best[0]:.1f} iterations modeled "
                     f"({n} candidates)")


def _pick(menu: list, tiles: int, k_iters: int, sms: int) -> tuple:
    """The cost model's decomposition among the configs of ``menu`` (one tile, MENU order) at
    ``tiles`` tiles of ``k_iters`` k-iterations: the fastest with the deterministic fix-up, or
    a reduce-kernel split-K where it models MODEL["REDUCE_MARGIN"] faster still (the
    heuristic's rule); ((modeled time, config index), candidates weighed)."""
    det = red = None
    n = 0
    for alt in menu:
        q = CONFIGS[alt]["params"]
        if not _applicable(q, tiles, k_iters, sms):
            continue
        n += 1
        t = _modeled(q, tiles, k_iters, sms)
        if q["FIXUP"] == "reduce_kernel":
            red = red if red is not None and red[0] <= t else (t, alt)
        else:
            det = det if det is not None and det[0] <= t else (t, alt)
    if red is not None and red[0] < det[0] * (1 - MODEL["REDUCE_MARGIN"]):
        return red, n
    return det, n


# --------------------------------------------------------------------------------------------
# tilec gen's heuristic at the shape (tilec.transforms.heuristic.heuristic, copied): its tile
# rules, the large problems' tiles weighed by the cost model, each tile's decomposition by _pick
# --------------------------------------------------------------------------------------------

# each tile rule's tile: (BM, BN, BK, WARPS, STAGES)
_TILE_RULES = {
    "decode (M <= 16): stream B": (16, 64, 256, 4, 3),
    "decode (M <= 32): one tile row, stream B": (32, 64, 256, 4, 3),
    "small M, enough 64x256 tiles": (64, 256, 64, 8, 4),
    "small M, few tiles": (64, 64, 128, 4, 6),
    "small N": (128, 128, 64, 8, 4),
    "small problem": (64, 128, 128, 4, 4),
    "very few tiles, deep K": (128, 256, 64, 8, 3),
    "few tiles, deep K, M or N off the 128 grid": (256, 128, 64, 8, 3),
    "few tiles, deep K": (128, 128, 64, 8, 5),
    "large": (128, 256, 64, 8, 3),
}


def _rule_region(rule: str, sms: int) -> tuple:
    """The smallest M, N and M * N that ``rule``'s test admits on ``sms`` SMs (tilec build
    reads it: which split-K counts the rule's tile may need)."""
    if rule.startswith("decode"):
        return (17, 1, 17) if "M <= 32" in rule else (1, 1, 1)
    if rule == "small M, enough 64x256 tiles":  # M <= 128: at most 2 tile rows of 64
        n = 256 * (-(-(sms // 2) // 2) - 1) + 1
        return 33, n, 33 * n
    if rule in ("small M, few tiles", "small N"):
        return (33, 1, 33) if rule.startswith("small M") else (129, 1, 129)
    return 129, 129, (1024 * 1024 + 1 if rule == "large" else 129 * 129)


_MENUS: dict = {}  # HEURISTIC["menus"] by tile knobs


def _tile_rule(M: int, N: int, K: int, sms: int) -> str:
    """The name of the heuristic's tile rule for the shape (heuristic._tile_rule's tests)."""
    if M <= 16:
        return "decode (M <= 16): stream B"
    if M <= 32:
        return "decode (M <= 32): one tile row, stream B"
    if M <= 128 and sms // 2 <= -(-M // 64) * -(-N // 256):
        return "small M, enough 64x256 tiles"
    if M <= 128:
        return "small M, few tiles"
    if N <= 128:
        return "small N"
    if M * N <= 1024 * 1024 and K <= 4096:
        return "small problem"
    tiles128 = -(-M // 128) * -(-N // 128)
    if tiles128 * 8 <= sms and K >= 16384:
        return "very few tiles, deep K"
    if M * N <= 1024 * 1024 and K >= 32768 and (M % 128 or N % 128):
        return "few tiles, deep K, M or N off the 128 grid"
    if M * N <= 1024 * 1024:
        return "few tiles, deep K"
    return "large"


def _tile_knobs(tile: tuple, fixed: dict) -> tuple:
    """(BM, BN, BK, STAGES, WARPS, GROUP_M, LOAD) of a rule's tile with the schedule's pins."""
    knobs = {"BM": tile[0], "BN": tile[1], "BK": tile[2], "STAGES": tile[4], "WARPS": tile[3],
             "GROUP_M": 8, "LOAD": "auto"}
    knobs.update((k, v) for k, v in fixed.items() if k in knobs)
    return tuple(knobs[k] for k in ("BM", "BN", "BK", "STAGES", "WARPS", "GROUP_M", "LOAD"))


def _heuristic(M: int, N: int, K: int) -> tuple | None:
    """tilec gen's heuristic at M x N x K among the configs the build carries (HEURISTIC):
    (config index, why); None where the module does not carry its tile (the bucket answers)."""
    h = HEURISTIC
    if not h:
        return None
    if h.get("target") == "cuda":  # the CUDA module's copy (tilec.library.cuda_model)
        return _cuda_heuristic(M, N, K)
    sms, fixed = h["sms"], h["fixed"]
    menus = _MENUS
    if not menus:  # HEURISTIC's data keyed once (constant: not state)
        menus.update((tuple(k), m) for k, m in h["menus"])
    rule = _tile_rule(M, N, K, sms)
    large = rule == "large" and not any(k in fixed for k in ("BM", "BN", "BK"))
    tiles_ = h["large"] if large else [[_TILE_RULES[rule], 1.0]]
    scored, lines = [], []
    for i, (tile, rate) in enumerate(tiles_):
        knobs = _tile_knobs(tile, fixed)
        menu = menus.get(knobs)
        if menu is None:
            return None
        BM, BN, BK = knobs[:3]
        (t, index), _ = _pick(menu, -(-M // BM) * -(-N // BN), -(-K // BK), sms)
        time_ = t * (BM * BN * BK) / (128 * 128 * 64) / rate if large else t
        scored.append((time_, i, index))
        lines.append(f"{CONFIGS[index]['label']}: {t:.1f} iters" +
                     (f", rate {rate:.2f} -> {time_:.1f}" if large else ""))
    _, _, index = min(scored, key=lambda s: (s[0], s[1]))
    if large:
        why = (f"heuristic at this shape: large problem, the cost model over {len(tiles_)} tiles "
               f"({'; '.join(lines)}); chosen: {CONFIGS[index]['label']}")
    else:
        why = (f"heuristic at this shape: tile by the rule '{rule}', its decomposition by the "
               f"cost model ({lines[0]}); chosen: {CONFIGS[index]['label']}")
    return index, why


def _short(p: dict) -> str:
    kind = p["DECOMP"]
    return (f"{kind}{p['SPLITS'] if kind == 'splitk' else ''}"
            f"{' w' + str(p['SK_WAVES']) if kind == 'skpp' else ''}"
            f"{' reduce_kernel' if p['FIXUP'] == 'reduce_kernel' and kind != 'dp' else ''}")


def _applicable(q: dict, tiles: int, k_iters: int, sms: int) -> bool:
    """Whether the cost model weighs decomposition ``q`` here (tilec.runtime.rules.applicable)."""
    kind = q["DECOMP"]
    if kind == "dp":
        return True
    if kind == "splitk":
        wave = 2 * sms if q["FIXUP"] == "reduce_kernel" else sms
        return tiles < sms and q["SPLITS"] <= k_iters and tiles * q["SPLITS"] <= wave
    if tiles % sms == 0:
        return False
    if kind == "streamk":
        return tiles < sms
    if kind == "skpp":
        return tiles > q["SK_WAVES"] * sms
    return True


def _modeled(q: dict, tiles: int, k: int, sms: int) -> float:
    """The modeled time (k-iterations) of config ``q``'s decomposition over ``tiles`` tiles of
    ``k`` k-iterations on ``sms`` SMs: tilec.transforms.cost_model.simulate's critical path,
    in the same float operations (one CTA per tile or split-K part, started in order as SMs
    free up; the Stream-K family's grid fits the SMs, so each CTA runs alone from time 0)."""
    unit, kind = MODEL["UNIT_OVERHEAD"], q["DECOMP"]
    BM, BN, BK = q["BM"], q["BN"], q["BK"]
    fix = MODEL["FIXUP_SCALE"] * 2 * (4 * BM * BN) / (2 * BK * (BM + BN))
    second = q.get("FIXUP") == "reduce_kernel"
    if kind == "dp":
        return -(-tiles // sms) * (k + unit)
    if kind == "splitk":
        import heapq

        s = min(q["SPLITS"], k)
        if s == 1:
            return -(-tiles // sms) * (k + unit)
        free = [(0.0, sm) for sm in range(min(sms, tiles * s))]
        heapq.heapify(free)
        for u in range(tiles * s):
            now, sm = heapq.heappop(free)
            part = u % s
            now = now + ((part + 1) * k // s - part * k // s) + unit
            now += fix / 2 * (1 + (s if part == 0 and not second else 0))
            heapq.heappush(free, (now, sm))
        end = max(t for t, _ in free)
        if second:
            end += MODEL["REDUCE_LAUNCH"] + tiles * s * fix / 2 / len(free)
        return end
    full, rem = divmod(tiles, sms)
    if kind == "streamk":
        sk, first = tiles, True
    elif kind == "dp_1sk":
        sk, first = rem + (sms if full >= 1 and 0 < rem < sms // 2 else 0), False
    elif kind == "sk2_dp":
        sk, first = (rem + (sms if full >= 1 else 0) if rem > 0 else 0), True
    else:  # skpp
        w = q["SK_WAVES"]
        sk, first = (0 if w == 0 else min(tiles, (rem if rem > 0 else sms) + (w - 1) * sms)), False
    ctas = min(sms, sk * k)
    grid = max(ctas, min(sms, tiles - sk))
    if sk == 0:
        return -(-tiles // grid) * (k + unit)
    start, end_ = (0, sk) if first else (tiles - sk, tiles)
    dp0, dp1 = (end_, tiles) if first else (0, start)
    pen = MODEL["SK_L2_PENALTY_WIDE"] if sk >= tiles or sk >= ctas else MODEL["SK_L2_PENALTY"]
    total = sk * k
    owner = lambda i: ((i + 1) * ctas - 1) // total  # noqa: E731
    partials = 0
    makespan = 0.0
    for pid in range(grid):
        now = 0.0
        n_dp = len(range(dp0 + pid, dp1, grid))
        sk_units = []
        if pid < ctas:
            b, e = pid * total // ctas, (pid + 1) * total // ctas
            for lt in range(b // k, (e - 1) // k + 1 if e > b else 0):
                sk_units.append((lt, max(b - lt * k, 0), min(e - lt * k, k)))
        if not first:  # whole numbers from 0: the sum of the additions, exactly
            now = n_dp * (k + unit)
        for lt, kb, ke in sk_units:
            now = now + (ke - kb) * (1 + pen) + unit
            if ke - kb != k:
                partials += 1
                reads = owner(lt * k + k - 1) - owner(lt * k) + 1 if kb == 0 and not second else 0
                now += fix / 2 * (1 + reads)
        if first:
            for _ in range(n_dp):
                now = now + k + unit
        makespan = max(makespan, now)
    if second and partials:
        makespan += MODEL["REDUCE_LAUNCH"] + partials * fix / 2 / min(sms, grid)
    return makespan
