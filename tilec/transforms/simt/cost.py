"""A cost model of the SIMT fp32 kernels: the time of a configuration row and work split at a
shape, calibrated on the committed measurements, so that ``CONFIG="auto"`` picks per shape.

The model (all times in seconds; ``R`` a row's FLOP/s per SM when the SM is busy):

- a tile of ``BM x BN`` does ``w = 2 BM BN (Kp + o)`` FLOP, ``Kp`` = K rounded up to the K tile,
  ``o`` the prologue and epilogue as K elements;
- an SM running ``n`` CTAs of ``warps`` warps each runs at ``r(n) = R min(1, n warps / SAT)``
  (``SAT`` warps keep the FMA pipes busy): a wave of ``n`` CTAs per SM takes ``n w / r(n)``, so
  a CTA alone on its SM finishes early when it has warps enough;
- ``dp`` (one CTA per tile): ``T // S`` whole waves of ``S = SMS x CTAs/SM`` slots, then the
  partial wave at ``ceil((T % S) / SMS)`` CTAs per SM;
- ``dp_ft``: the whole waves, then the partial wave's work spread over every slot, ``(1 + ft)``
  for the fix-up (the partial units' pipeline restarts, the atomic adds into C) plus
  ``ft_fixed`` (the launcher's zeroing of the partial rows);
- ``splitk`` / ``streamk``: every tile's K split (``s`` parts) or all the work spread over the
  slots, with the same fix-up factor (measured never ahead of ``dp_ft``, so ``auto`` offers
  only ``dp`` and ``dp_ft``, see :func:`choices`);
- the run-time variant multiplies the compute (``tiles`` 1, ``aligned``, ``general``: their
  predicates and scalar accesses); the time is at least the DRAM traffic of A, B and C at the
  card's bandwidth; ``launch`` is added once.

:func:`measurements` reads the points (:data:`CALIBRATION`: the kernels of today's rows in the
committed ``bench/results/simt_*.json``, H200 and H100), :func:`calibrate` fits the constants
(least squares on log time, Levenberg-Marquardt), :data:`DEFAULT` holds the fit
(``tests/simt/test_simt_cost.py`` checks it is the fit, and that a fit without some shapes
ranks the held-out ones as measured).

    >>> large = Row("large", 128, 128, 32, warps=8, ctas=2)
    >>> t_dp = estimate(large, "dp", 5120, 5120, 5120)
    >>> t_ft = estimate(large, "dp_ft", 5120, 5120, 5120)  # a 7th wave of 16 tiles, spread
    >>> round(t_dp / t_ft, 2) > 1.03
    True
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from tilec.ir import ceil_div
from tilec.transforms.simt.padding import COPY_LAUNCH, padding

SAT = 8  # warps an SM needs for full FMA throughput (a CTA of the large row has 8)
# ``ragged_n``'s compute against ``tiles``' (not measured yet): its K-tile loop is 2272
# instructions to the tiles' 2259 (the large row's SASS, sm_90a: B's source sizes; the
# ``aligned`` loop's 2463 are 1.090x, its fitted factor 1.106x)
RAGGED_N = 2272 / 2259
# variants whose C stores are 32-bit, beyond what their factor was fitted on (``scalar_c``)
SCALAR_C = ("ragged_n",)


@dataclass(frozen=True)
class Card:
    """A GPU: its SMs and DRAM bandwidth (bytes/s, the data sheet's)."""

    name: str
    sms: int
    dram: float


CARDS = {"H100": Card("H100", 132, 3.35e12), "H200": Card("H200", 132, 4.8e12)}


def card_of(device_name: str) -> Card:
    """The card of ``torch.cuda.get_device_name()`` (an H100 unless it names an H200).

    >>> card_of("NVIDIA H200").dram
    4800000000000.0
    """
    return CARDS["H200"] if "H200" in device_name else CARDS["H100"]


@dataclass(frozen=True)
class Row:
    """A configuration row: the CTA tile ``BM x BN``, the K tile, warps per CTA and CTAs per SM
    (``__launch_bounds__``' minimum, or what the registers and shared memory allow); ``WM x WN``
    the warp tile and ``stages`` the K tiles in flight (0: not recorded; they enter the model
    through the row's fitted rate)."""

    name: str
    BM: int
    BN: int
    BK: int
    warps: int
    ctas: int
    WM: int = 0
    WN: int = 0
    stages: int = 0


def ctas_per_sm(min_blocks: int | None, threads: int) -> int:
    """CTAs per SM of a kernel: ``__launch_bounds__``' minimum where the schedule sets one,
    else enough to give the SM :data:`SAT` warps (the small rows' registers allow more:
    ptxas gives 7 and 5; with ``SAT`` warps resident the model's rate is the same).

    >>> ctas_per_sm(2, 256), ctas_per_sm(None, 128), ctas_per_sm(None, 512)
    (2, 2, 1)
    """
    return min_blocks or max(1, SAT // max(threads // 32, 1))


@dataclass(frozen=True)
class Constants:
    """The model's constants (see the module docstring); ``rate`` per row name, FLOP/s per SM."""

    rate: dict[str, float] = field(default_factory=dict)
    overhead_k: float = 64.0
    ft: float = 0.05
    ft_fixed: float = 5e-6
    launch: float = 4e-6
    variant: dict[str, float] = field(default_factory=lambda: {"tiles": 1.0, "aligned": 1.09,
                                                               "general": 1.21, "ragged_n": RAGGED_N})
    dram_efficiency: float = 0.8
    sk: float = 0.08  # the Stream-K family's and split-K's fix-up (``ft`` is dp_ft's)
    exposed: float = 0.1  # the part of the tile loads' DRAM time not hidden behind the FMAs
    # C's bytes in a variant of 32-bit C stores (``ragged_n``) count this many times in the
    # exposed traffic: a warp's store moves a quarter of the bytes over as many sectors
    scalar_c: float = 4.0

    def rate_of(self, row: str) -> float:
        return self.rate.get(row, min(self.rate.values(), default=3.5e11))


# the fit of calibrate(measurements()) (tests/simt/test_simt_cost.py checks it)
DEFAULT = Constants(
    rate={"large": 3.9832e11, "small8": 3.5575e11, "small16": 3.2711e11, "large_w": 3.9668e11,
          "large_k16": 3.9180e11, "tall": 3.8149e11, "wide": 3.9345e11, "mid3": 3.7110e11},
    overhead_k=5.423, ft=0.01832, ft_fixed=6.948e-06, launch=7.487e-06,
    variant={"tiles": 1.0, "aligned": 1.1060, "general": 1.2517, "ragged_n": RAGGED_N},
    dram_efficiency=0.6249,
    exposed=0.2347, sk=0.02499)

DECOMPS = ("dp", "dp_ft", "dp_1sk", "splitk", "streamk")


_cdiv = ceil_div


def tile_loads(row: Row, M: int, N: int, K: int, slots: int) -> float:
    """Bytes of A and B a grid of one CTA per tile reads from DRAM, the tiles numbered
    row-major (``g = bidy * tiles_n + bidx``) and launched in waves of ``slots``: a wave reads
    each tile row of A and each tile column of B it touches once (the wave's CTAs walk K
    together, so a tile another CTA of the wave reads is an L2 hit), plus C's store.  Where a
    wave spans fewer tile rows than the grid has (``N`` wide), B streams from DRAM once per
    wave.

    >>> large = Row("large", 128, 128, 32, warps=8, ctas=2)
    >>> tile_loads(large, 128, 128 * 264, 1, 264) == 4 * (128 + 264 * 128) + 4 * 128 * 128 * 264
    True
    """
    tn = _cdiv(N, row.BN)
    tiles = _cdiv(M, row.BM) * tn
    out = 0
    for a in range(0, tiles, slots):
        b = min(a + slots, tiles)
        out += (((b - 1) // tn - a // tn + 1) * row.BM + min(tn, b - a) * row.BN) * K
    return 4.0 * (out + M * N)


def estimate(row: Row, decomp: str, M: int, N: int, K: int, card: Card = CARDS["H100"],
             variant: str = "tiles", c: Constants = DEFAULT, splits: int = 1) -> float:
    """The model's time in seconds of ``row`` with work split ``decomp`` at ``M x N x K``."""
    if decomp not in DECOMPS:
        raise ValueError(f"estimate: decomp must be one of {', '.join(DECOMPS)} but got {decomp!r}")
    if min(M, N) <= 0:
        return c.launch
    R = c.rate_of(row.name)
    kp = _cdiv(max(K, 0), row.BK) * row.BK
    w = 2.0 * row.BM * row.BN * (kp + c.overhead_k)

    def r(n: int) -> float:
        return R * min(1.0, n * row.warps / SAT)

    def waves(count: int, work: float) -> float:  # ``count`` CTAs of ``work`` FLOP, one each
        full, rem = divmod(count, card.sms * row.ctas)
        n = _cdiv(rem, card.sms)
        return full * row.ctas * work / r(row.ctas) + (n * work / r(n) if rem else 0.0)

    tiles = _cdiv(M, row.BM) * _cdiv(N, row.BN)
    slots = card.sms * row.ctas
    rem = tiles % slots
    spread = rem * w / (card.sms * r(row.ctas))  # the partial wave's work over every slot
    if decomp == "dp" or (decomp in ("dp_ft", "dp_1sk") and rem == 0):
        t = waves(tiles, w)
    elif decomp in ("dp_ft", "dp_1sk"):  # the whole waves, then the partial wave spread
        t = waves(tiles - rem, w) + spread * (1 + (c.ft if decomp == "dp_ft" else c.sk)) + c.ft_fixed
    elif decomp == "splitk":
        wu = 2.0 * row.BM * row.BN * (kp / splits + c.overhead_k)
        t = waves(tiles * splits, wu) * (1 + c.sk) + c.ft_fixed if splits > 1 else waves(tiles, w)
    else:  # streamk: every tile's work over every slot
        t = tiles * w / (card.sms * r(row.ctas)) * (1 + c.sk) + c.ft_fixed
    loads = tile_loads(row, M, N, K, slots) + (c.scalar_c - 1) * 4.0 * M * N * (variant in SCALAR_C)
    t = t * c.variant[variant] + c.exposed * loads / card.dram
    dram = 4.0 * (M * K + K * N + M * N) / (card.dram * c.dram_efficiency)
    return max(t, dram) + c.launch


def _variants(row: Row) -> list[tuple[str, list[str]]]:
    """The run-time variants of a row's library and their facts (as the printer writes them:
    ``tilec.transforms.simt.lower.run_time_variants``; the rows are cp.async kernels with
    vector B copies and C stores, so ``ragged_n`` is one), fastest first."""
    return [("tiles", [f"M % {row.BM} == 0", f"N % {row.BN} == 0", f"K % {row.BK} == 0",
                       "lda % 4 == 0", "ldb % 4 == 0", "ldc % 4 == 0", "(A | B | C) % 16 == 0"]),
            ("ragged_n", [f"M % {row.BM} == 0", f"K % {row.BK} == 0", "ldb % 4 == 0", "B % 16 == 0"]),
            ("aligned", ["N % 4 == 0", "K % 4 == 0", "lda % 4 == 0", "ldb % 4 == 0",
                         "ldc % 4 == 0", "(A | B | C) % 16 == 0"]), ("general", [])]


def launch_estimate(row: Row, decomp: str, M: int, N: int, K: int, card: Card = CARDS["H100"],
                    c: Constants = DEFAULT, splits: int = 1) -> float:
    """The model's time of a launch on contiguous, 16-byte aligned operands through the
    launcher's padding (:func:`tilec.transforms.simt.padding.padding`, ``auto``): the variant the
    sizes meet, or the operands copied to a faster one's multiples where the model expects
    that to pay (ragged M, N or K: the copies are part of the choice).

    >>> large = Row("large", 128, 128, 32, warps=8, ctas=2)
    >>> launch_estimate(large, "dp_ft", 4096, 4096, 4096) == estimate(large, "dp_ft", 4096, 4096, 4096)
    True
    >>> h200 = CARDS["H200"]
    >>> t = launch_estimate(large, "dp", 7000, 3000, 4096, h200)  # A, B, C padded to 7040 x 3072
    >>> estimate(large, "dp", 7040, 3072, 4096, h200) < t
    True
    >>> t < estimate(large, "dp", 7000, 3000, 4096, h200, variant="aligned")
    True
    """

    def kernel(v: str, m: int, n: int, k: int) -> float:
        return estimate(row, decomp, m, n, k, card, v, c, splits)

    if min(M, N, K) <= 0:
        return kernel("general", M, N, K)
    return padding(M, N, K, K, N, N, (0, 0, 0), _variants(row), kernel,
                   card.dram * c.dram_efficiency).seconds


# the work splits ``auto`` weighs per row, ``(decomp, splits)``: those measured ahead of one CTA
# per tile somewhere, or the only one measured (a row not named: one CTA per tile only; dp_ft is
# one CTA per tile where the tiles fill whole waves).  dp_1sk, Stream-K and split-K were timed
# (simt_explore_h200_2026-11-28_s12) and never ahead of dp_ft by more than the noise.
OFFERED: dict[str, tuple[tuple[str, int], ...]] = {
    "large": (("dp", 1), ("dp_ft", 1)),
    **{name: (("dp_ft", 1),) for name in ("large_w", "large_k16", "tall", "wide", "mid3")}}


def choices(M: int, N: int, K: int, rows: list[Row], card: Card = CARDS["H100"],
            c: Constants = DEFAULT, offered: dict[str, tuple[tuple[str, int], ...]] | None = None
            ) -> list[tuple[float, str, str, int]]:
    """``(seconds, row, decomp, splits)`` of every choice ``auto`` weighs, fastest first: each
    row with each split ``offered`` for it (:data:`OFFERED`), timed as launched
    (:func:`launch_estimate`: ragged sizes with the padding's copies).  Ties keep the rows'
    order."""
    offered = OFFERED if offered is None else offered
    out = []
    for i, row in enumerate(rows):
        for j, (d, s) in enumerate(offered.get(row.name, (("dp", 1),))):
            out.append((launch_estimate(row, d, M, N, K, card, c, s), i, j, row.name, d, s))
    out.sort()
    return [(t, name, d, s) for t, _, _, name, d, s in out]


def pick(M: int, N: int, K: int, rows: list[Row], card: Card = CARDS["H100"],
         c: Constants = DEFAULT) -> tuple[str, str, int]:
    """``(row, decomp, splits)`` the model expects fastest at ``M x N x K``."""
    _, name, d, s = choices(M, N, K, rows, card, c)[0]
    return name, d, s


# -- calibration ------------------------------------------------------------------------------


ROOT = Path(__file__).resolve().parents[3]
# files whose kernels are today's rows (session 8 on: cp.async, the swizzle, dp_ft); kernels by
# name: 'warp' / 'dp' / 'warp_large' / 'generic_large' (probes that rewrite a kernel by hand
# or fix-ups replaced since are left out)
CALIBRATION = ("simt_h200_2026-11-23_s8.json", "simt_tail_probe_h200_2026-11-23_s8.json",
               "simt_sk_h200_2026-11-23_s8a.json", "simt_sk_h200_2026-11-23_s8b.json",
               "simt_front_tail_h200_2026-11-23_s8a.json", "simt_front_tail_h200_2026-11-23_s8b.json",
               "simt_front_tail_h200_2026-11-23_s8d.json", "simt_front_tail_h200_2026-11-23_s8e.json",
               "simt_front_tail_ablate_h200_2026-11-23_s8c.json",
               "simt_atomic_c_h200_2026-11-23_s8f.json", "simt_generic_h100_2026-11-28_partial.json")
KERNELS = ("warp", "dp", "warp_large", "generic_large")
# the rows: today's three (examples/simt_warp_tiled.py's CONFIGS) and the ones the exploration
# times (bench/bench_simt.py's EXPLORE), the first of a tile, K tile and threads standing for
# a kernel whose warp tile is not recorded
KNOWN = (Row("large", 128, 128, 32, warps=8, ctas=2, WM=32, WN=64, stages=3),
         Row("small8", 64, 64, 8, warps=2, ctas=7, WM=32, WN=64, stages=3),
         Row("small16", 64, 64, 16, warps=4, ctas=5, WM=32, WN=32, stages=3),
         Row("large_w", 128, 128, 32, warps=8, ctas=2, WM=64, WN=32, stages=3),
         Row("large_k16", 128, 128, 16, warps=8, ctas=2, WM=32, WN=64, stages=4),
         Row("tall", 256, 128, 16, warps=8, ctas=1, WM=64, WN=64, stages=3),
         Row("wide", 128, 256, 16, warps=8, ctas=1, WM=64, WN=64, stages=3),
         Row("mid3", 128, 64, 32, warps=4, ctas=3, WM=32, WN=64, stages=3))
# today's rows as the runs' manifests record them: (tile, threads) -> row
ROWS = {((r.BM, r.BN), 32 * r.warps): r for r in reversed(KNOWN)}


def row_of(BM: int, BN: int, BK: int, threads: int, min_blocks: int | None,
           warp: tuple[int, int] | None = None, stages: int = 0) -> Row:
    """The row of a built kernel: the first of :data:`KNOWN` with its tile, K tile and threads
    (and warp tile and stages where given), its fitted rate and CTAs per SM, else a row of its
    own (the slowest fitted rate, :func:`ctas_per_sm`).

    >>> row_of(128, 128, 32, 256, 2).name, row_of(64, 64, 16, 128, None).ctas
    ('large', 5)
    >>> row_of(128, 128, 32, 256, 2, warp=(64, 32)).name
    'large_w'
    >>> row_of(128, 64, 8, 128, None)
    Row(name='custom', BM=128, BN=64, BK=8, warps=4, ctas=2, WM=0, WN=0, stages=0)
    """
    for r in KNOWN:
        if ((r.BM, r.BN, r.BK, 32 * r.warps) == (BM, BN, BK, threads)
                and (warp is None or tuple(warp) == (r.WM, r.WN)) and stages in (0, r.stages)):
            return r
    return Row("custom", BM, BN, BK, warps=max(threads // 32, 1), ctas=ctas_per_sm(min_blocks, threads))


@dataclass(frozen=True)
class Point:
    """One measured kernel: its row, split, variant, shape, card and median time (s); a padded
    launch (:mod:`tilec.codegen.cuda.simt.launch`) ran the kernel at ``M x N x K`` (the padded
    sizes) after and before copies of ``moved`` bytes in ``copies`` kernels."""

    file: str
    kernel: str
    row: Row
    decomp: str
    variant: str
    M: int
    N: int
    K: int
    card: Card
    seconds: float
    splits: int = 1
    moved: float = 0.0
    copies: int = 0
    given: tuple[int, ...] = ()  # the launch's sizes before padding (``M, N, K`` where empty)
    pad: str = "auto"  # the launcher's padding mode of the run (``never``: the variant met)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.given or (self.M, self.N, self.K)


def point_estimate(p: Point, c: Constants = DEFAULT) -> float:
    """The model's time of a measured launch: the kernel and the padding's copies (their
    bytes at the card's bandwidth times ``dram_efficiency``, a launch each)."""

    return (estimate(p.row, p.decomp, p.M, p.N, p.K, p.card, p.variant, c, p.splits)
            + p.moved / (p.card.dram * c.dram_efficiency) + p.copies * COPY_LAUNCH)


def _padded(row: Row, variant: str, M: int, N: int, K: int) -> tuple[int, int, int, float, int]:
    """``(M, N, K, bytes, copies)`` of the launcher's padding to ``variant`` (operands fresh,
    contiguous and 16-byte aligned, as the bench's are)."""

    facts = _variants(row)
    # the copies' seconds at 1 byte/s are their bytes; at an infinite bandwidth, their launches
    p = padding(M, N, K, K, N, N, (0, 0, 0), facts, lambda *a: 0.0, 1.0, variant)
    fixed = padding(M, N, K, K, N, N, (0, 0, 0), facts, lambda *a: 0.0, math.inf, variant).seconds
    return p.M, p.N, p.K, p.seconds - fixed, round(fixed / COPY_LAUNCH)


# runs of several rows and splits per shape (bench_simt.py --explore-model, the issue-30 set):
# their checks record each kernel's model fields (tile, K tile, warp tile, stages, split)
EXPLORED = ("simt_dispatch_h200_2026-11-28.json", "simt_explore_h200_2026-11-28_s12.json")


def measurements(root: Path = ROOT, explored: tuple[str, ...] = EXPLORED) -> list[Point]:
    """The points of :data:`CALIBRATION` (the row from the run's tile and threads, the split
    from its notes, the variant where the run records it, else ``tiles``: square sizes) and
    of ``explored`` (every timed kernel: its row and split from the check's model fields where
    recorded, else from tile, threads and notes; a padded launch at its padded sizes, the
    copies' bytes with it)."""
    out = []
    for name in CALIBRATION + tuple(explored):
        d = json.loads((root / "bench" / "results" / name).read_text())
        card = card_of(d["device"])
        checks = {(c["kernel"], tuple(c["size"])): c for c in d["checks"]}
        for t in d["timings"]:
            shape = tuple(t.get("shape") or [t["size"]] * 3)
            ch = checks.get((t["kernel"], shape))
            if ch is None or (name in CALIBRATION and t["kernel"] not in KERNELS):
                continue
            m = ch.get("model")
            notes = " ".join(ch.get("notes", []))
            row: Row | None
            if m is not None:
                (BM, BN), warp = ch["tile"], m.get("warp")
                row = row_of(BM, BN, m["BK"], ch["block"][0], m["min_blocks"],
                             (warp[0], warp[1]) if warp else None, m.get("stages", 0))
                decomp, splits = m["decomp"], m["splits"]
            else:
                row = ROWS.get((tuple(ch["tile"]), ch["block"][0]))
                decomp = "dp_ft" if "work: dp_ft" in notes else "dp" if "work:" not in notes else ""
                splits = 1
            if row is None or row.name == "custom" or decomp not in DECOMPS:
                continue
            variant = (t.get("variant") or "tiles").removesuffix(" (padded)")
            M, N, K, moved, copies = (_padded(row, variant, *shape) if "(padded)" in t.get("variant", "")
                                      else (*shape, 0.0, 0))
            out.append(Point(name, t["kernel"], row, decomp, variant, M, N, K, card,
                             t["median_ms"] * 1e-3, splits, moved, copies, shape,
                             ch.get("pad_mode", "auto")))
    return out


_FIT = (*(f"rate:{r.name}" for r in KNOWN), "overhead_k", "ft", "ft_fixed", "launch",
        "variant:aligned", "variant:general", "dram_efficiency", "exposed", "sk")


def _with(c: Constants, x: list[float], keys: tuple[str, ...] = _FIT) -> Constants:
    rate, variant, kw = dict(c.rate), dict(c.variant), {}
    for key, v in zip(keys, x, strict=True):
        group, _, sub = key.partition(":")
        if group == "rate":
            rate[sub] = v
        elif group == "variant":
            variant[sub] = v
        else:
            kw[group] = v
    return replace(c, rate=rate, variant=variant, **kw)


def _get(c: Constants, key: str) -> float:
    group, _, sub = key.partition(":")
    return getattr(c, group)[sub] if sub else getattr(c, group)


TRIM = 0.1  # a point the first fit misses by more than this (in log time) is left out of the second


def calibrate(points: list[Point], start: Constants = DEFAULT, iters: int = 60,
              keys: tuple[str, ...] = _FIT, trim: float | None = TRIM) -> Constants:
    """The constants ``keys`` minimising the squared log error of :func:`point_estimate` over
    ``points`` (Levenberg-Marquardt in the logs of the constants; a constant no point depends
    on keeps its start value); with ``trim``, fitted again without the points the first fit
    misses by more than ``trim`` (what the model cannot represent: a ``small16`` CTA alone on
    its SM runs at about 0.8 of its row's rate, not the half its 4 warps of :data:`SAT` give)."""
    c = _fit(points, start, iters, keys)
    if trim is None:
        return c
    kept = [p for p in points if abs(math.log(point_estimate(p, c) / p.seconds)) <= trim]
    return c if len(kept) == len(points) else _fit(kept, c, iters, keys)


def outliers(points: list[Point], c: Constants = DEFAULT, trim: float = TRIM) -> list[Point]:
    """The points ``c`` misses by more than ``trim`` (those :func:`calibrate` leaves out)."""
    return [p for p in points if abs(math.log(point_estimate(p, c) / p.seconds)) > trim]


def _fit(points: list[Point], start: Constants, iters: int, keys: tuple[str, ...]) -> Constants:
    import numpy as np

    def residuals(logx: np.ndarray) -> np.ndarray:
        c = _with(start, [float(v) for v in np.exp(logx)], keys)
        return np.array([math.log(point_estimate(p, c) / p.seconds) for p in points])

    x = np.log([max(_get(start, k), 1e-9) for k in keys])
    lam = 1e-3
    r = residuals(x)
    for _ in range(iters):
        J = np.empty((len(r), len(x)))
        for j in range(len(x)):
            dx = np.zeros_like(x)
            dx[j] = 1e-5
            J[:, j] = (residuals(x + dx) - r) / 1e-5
        A = J.T @ J
        step = np.linalg.solve(A + lam * np.diag(np.diag(A) + 1e-12), -J.T @ r)
        r2 = residuals(x + step)
        if r2 @ r2 < r @ r:
            x, r, lam = x + step, r2, lam / 3
            if np.abs(step).max() < 1e-7:
                break
        else:
            lam *= 10
    return _with(start, [float(v) for v in np.exp(x)], keys)
