"""Choosing a schedule's ``"auto"`` parameters: shape rules, the decomposition cost model, and
where each value came from.

A schedule file may leave any of its tuning knobs to tilec by giving it the value ``"auto"``::

    PARAMS = dict(M=4096, N=4096, K=4096, BM="auto", BN="auto", BK="auto", DECOMP="auto", ...)

:func:`resolve` fills those in, in this order of precedence:

1. the user's own value (``--param``, ``--params-file``, the file's PARAMS): always kept;
2. a tuned record of this schedule at this shape (``tilec tune`` writes it);
3. a rules file (``tilec sweep --export``);
4. :func:`heuristic`: shape rules for the tile, the cost model for the decomposition.

Every resolved value says where it came from (:class:`Choice`), so ``tilec gen`` and
``tilec explain`` can tell the user why a kernel looks the way it does.

The knobs (:data:`KNOBS`) and what they mean in a schedule:

==========  =================================================================================
BM BN BK    the MMA tile
GROUP_M     tile rows per group of the grouped raster (Triton's GROUP_SIZE_M)
DECOMP      the decomposition (:class:`~tilec.ir.types.Decomposition` or ``auto``)
SPLITS      split-K parts;  SK_WAVES: trailing Stream-K waves (Stream-K++)
FIXUP       how partial tiles are summed (:class:`~tilec.ir.types.Fixup`)
STAGES      software pipeline depth;  WARPS: warps per CTA
LOAD        operand loads (:class:`~tilec.ir.types.LoadKind`), chosen at lowering when auto
CM CN       a cluster of CM x CN neighbouring tiles (CUDA: TMA multicast of A along the CN
            tiles of a row, of B along the CM tiles of a column); 1 x 1: none (Triton: always)
SWAP_AB     CUDA: each tile computed as C^T = B^T A^T, our M on wgmma's N (BM a multiple of 8);
            chosen by :mod:`tilec.transforms.cuda_swap` on small and ragged M
==========  =================================================================================

Example::

    >>> cfg, why = heuristic(512, 512, 65536)
    >>> cfg.DECOMP.value, cfg.SPLITS, (cfg.BM, cfg.BN), cfg.FIXUP.value
    ('splitk', 16, (128, 256), 'reduce_kernel')
    >>> r = resolve(dict(M=1024, N=1024, K=1024, BM=64, BN="auto", BK="auto"))
    >>> r.params["BM"], r.params["BN"], r.choice("BM").source.value, r.choice("BN").source.value
    (64, 128, 'user', 'heuristic')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from tilec.errors import ParamError
from tilec.ir import ceil_div
from tilec.ir.types import Target
from tilec.transforms import cuda_swap
from tilec.transforms.choice import choose_decomposition, rank_decompositions
from tilec.transforms.cost_model import estimate_cost
from tilec.transforms.cuda_rules import (
    CUDA_FEW_DEEP,
    CUDA_ONE_DEEP,
    CUDA_TILES,
    CUDA_WEIGHED,
    cuda_rule,
    few_deep,
)
from tilec.transforms.decompose import make_work_split
from tilec.transforms.knobs import (
    AUTO,
    DEFERRED,
    KNOBS,
    LATER_KNOBS,
    Config,
    Source,
    parse_knob,
)
from tilec.transforms.plan import Decomposition, Fixup, LoadKind

__all__ = [
    "AUTO",
    "DEFERRED",
    "KNOBS",
    "Choice",
    "Config",
    "Resolution",
    "Source",
    "candidates",
    "heuristic",
    "parse_knob",
    "resolve",
]

# --------------------------------------------------------------------------------------------
# the heuristic
# --------------------------------------------------------------------------------------------

# Relative tensor-core throughput per flop of the large tiles weighed against each other (H200,
# bench/results/triton_h200_2026-11-21.json: data-parallel 128x256 ran 1.07-1.12x 128x128 on
# sq2048, sq4096 and wave_3328; 256x128 ran 0.98-1.03x 128x128). 128x128 runs 5 stages:
# bench/results/explore_heuristic_h200_2026-11-23.json, wave_1664 Stream-K++ 0.883x cuBLAS with 5
# vs 0.844x with 4, wave_2304 data-parallel 0.940x with 5.
LARGE_TILES = (
    (Config(BM=128, BN=256, BK=64, WARPS=8, STAGES=3), 1.10),
    (Config(BM=256, BN=128, BK=64, WARPS=8, STAGES=3), 1.0),
    (Config(BM=128, BN=128, BK=64, WARPS=8, STAGES=5), 1.0),
)


# how much faster (modeled) the reduce-kernel fix-up must be to be chosen over the deterministic
# one: a second launch costs host time the model does not see. Only split-K with at least
# REDUCE_MIN_SPLITS parts: measured faster at 8 and 16 parts, slower at 2 (1024^2 x 32768: 0.94x
# against 0.96x; 16 x 4096 x 4096: 1.00x against 1.09x), Stream-K's never measured
# (bench/results/fixup_probe_r2_h200_2026-11-23.json). CUDA too: 128 x 128 x 65536 (one tile) ran
# 0.74x cuBLAS in 32 parts with the reduce kernel against 0.44x in 15 deterministic ones; 512^2 x
# 65536 and 256 x 1024 x 131072 within 2.5% of the deterministic fix-up
# (bench/results/cuda_reduce_h200_2026-11-28_s13.json)
REDUCE_MARGIN = 0.05
REDUCE_MIN_SPLITS = 8


def _tile_rule(M: int, N: int, K: int, sms: int) -> tuple[Config, str]:
    """The tile of a shape class, with the rule's name (measured on the H200, Triton)."""
    if M <= 16:
        return Config(BM=16, BN=64, BK=256, WARPS=4, STAGES=3), "decode (M <= 16): stream B"
    if M <= 32:
        # one tile row, so B is streamed once: 32x8192x28672 ran 0.99x cuBLAS with 32x64x256
        # against 0.68x with 16x64x256 (two tile rows), 24x4096x7168 split-K 2 0.99x against 0.76x
        # (bench/results/explore_s11_set2_h200_2026-11-28.json)
        return Config(BM=32, BN=64, BK=256, WARPS=4, STAGES=3), "decode (M <= 32): one tile row, stream B"
    if M <= 128 and sms // 2 <= ceil_div(M, 64) * ceil_div(N, 256):
        return Config(BM=64, BN=256, BK=64, WARPS=8, STAGES=4), "small M, enough 64x256 tiles"
    if M <= 128:
        # 128x4096x7168: data-parallel 64x64x128 ran 270 TFLOP/s = 1.61x the plain kernel
        return Config(BM=64, BN=64, BK=128, WARPS=4, STAGES=6), "small M, few tiles"
    if N <= 128:
        return Config(BM=128, BN=128, BK=64, WARPS=8, STAGES=4), "small N"
    if M * N <= 1024 * 1024 and K <= 4096:
        # sq1024: 226 TFLOP/s with TMA loads, 200-215 with the plain kernel's 64x128x64
        return Config(BM=64, BN=128, BK=128, WARPS=4, STAGES=4), "small problem"
    if ceil_div(M, 128) * ceil_div(N, 128) * 8 <= sms and K >= 16384:
        # 512^2 x 65536: 128x256 split-K 16 with the reduce kernel 0.81x cuBLAS, 128x128 split-K
        # 8 0.78x (0.73x with the deterministic fix-up): fewer bytes from L2 per flop
        return Config(BM=128, BN=256, BK=64, WARPS=8, STAGES=3), "very few tiles, deep K"
    if M * N <= 1024 * 1024 and K >= 32768 and (M % 128 or N % 128):
        # 128x128 split-K 2 ran 0.62-0.69x cuBLAS where M = N = 1000 (K 32768, 49152, 50000) and
        # 0.87-0.96x where M = N = 1024; 256x128 split-K 4 0.83-0.86x at all six, half the B
        # traffic per flop (bench/results/explore_s11_set4_h200_2026-11-28.json)
        return (Config(BM=256, BN=128, BK=64, WARPS=8, STAGES=3),
                "few tiles, deep K, M or N off the 128 grid")
    if M * N <= 1024 * 1024:  # 1024^2 x 32768 split-K 2: 0.934x cuBLAS with 5 stages, 0.921x with 4
        return Config(BM=128, BN=128, BK=64, WARPS=8, STAGES=5), "few tiles, deep K"
    return Config(), "large"


def _pinned(cfg: Config, fixed: Mapping[str, Any]) -> Config:
    """``cfg`` with the user's knobs put back."""
    return replace(cfg, **{k: v for k, v in fixed.items() if k in KNOBS and v != AUTO})


def _decomposition(M: int, N: int, K: int, cfg: Config, sms: int,
                   fixed: Mapping[str, Any], target: Target = Target.TRITON
                   ) -> tuple[Config, list[str]]:
    """``cfg`` with the decomposition knobs the user left auto chosen by the cost model.

    An auto fix-up is deterministic (one kernel, bitwise reproducible) unless the
    reduce kernel's modeled time beats it by :data:`REDUCE_MARGIN`: when one CTA per tile would
    read many partials back alone (skinny 512x512x65536: 0.73x cuBLAS deterministic, 0.81x with
    the reduce kernel spread over row strips).
    """
    fixup = fixed.get("FIXUP", AUTO)
    fx = Fixup.DETERMINISTIC if fixup == AUTO else fixup
    kind = fixed.get("DECOMP", AUTO)
    why_fix = ("fix-up deterministic: on the H200's split-K shapes it ran as fast as atomic "
               "or faster, and it is bitwise reproducible")
    if kind == AUTO:
        split, why = choose_decomposition(M, N, K, cfg.BM, cfg.BN, cfg.BK, sms, fixup=fx)
        alts = [r for r in rank_decompositions(M, N, K, cfg.BM, cfg.BN, cfg.BK, sms,
                                               fixup=Fixup.REDUCE_KERNEL)
                if r[3].kind is Decomposition.SPLIT_K and r[3].splits >= REDUCE_MIN_SPLITS]
        if fixup == AUTO and alts:
            t_red, _, name, alt, _ = alts[0]
            t_det = estimate_cost(split, sms, cfg.BM, cfg.BN, cfg.BK).total
            if t_red < t_det * (1 - REDUCE_MARGIN):
                split = alt
                why = [*why[:-1], f"chosen: {name} with the reduce kernel"]
                why_fix = (f"fix-up reduce_kernel: a second kernel sums the partials over all SMs"
                           f" ({t_red:.1f} iters modeled) where the deterministic fix-up's"
                           f" last contributor of each tile reads them alone ({t_det:.1f});"
                           f" still summed in K order, bitwise reproducible")
    else:
        ranked = [r for r in rank_decompositions(M, N, K, cfg.BM, cfg.BN, cfg.BK, sms, fixup=fx)
                  if r[3].kind is kind]
        if not ranked or kind is Decomposition.DATA_PARALLEL:
            return _pinned(cfg, fixed), [f"decomposition {kind.value} given by the user"]
        split = ranked[0][3]
        why = [f"{kind.value} given by the user; the cost model's best {ranked[0][2]}"]
    out = replace(cfg, DECOMP=split.kind, SPLITS=split.splits,
                  SK_WAVES=split.sk_waves if split.kind is Decomposition.STREAM_K_PP else 1,
                  FIXUP=split.fixup)
    if split.kind is not Decomposition.DATA_PARALLEL and fixup == AUTO:
        why.append(why_fix)
    return _pinned(out, fixed), why


def heuristic(M: int, N: int, K: int, *, sms: int = 132, fixed: Mapping[str, Any] | None = None,
              target: Target | str = Target.TRITON) -> tuple[Config, list[str]]:
    """A config for an M x N x K problem on ``sms`` SMs, honouring the knobs in ``fixed``
    (parsed values, as :func:`parse_knob` gives); with the reasons, one line each.

    Large problems weigh each of :data:`LARGE_TILES` (CUDA: problems of at least 128 rows and
    columns, :data:`CUDA_TILES`) with its best decomposition: the modeled critical path times
    the tile's flops per k-iteration over its measured relative rate.
    """
    target = Target(target)
    fixed = {k: v for k, v in (fixed or {}).items() if v != AUTO}
    tile_fixed = any(k in fixed for k in ("BM", "BN", "BK"))
    if target is Target.CUDA:
        swapped = None if tile_fixed or "SWAP_AB" in fixed else cuda_swap.rule(M, N, K, sms)
        if swapped is not None:  # cuBLAS's small / ragged-M kernels: our M on wgmma's N
            base, rule = swapped
            if {"DECOMP", "SPLITS", "FIXUP"} & fixed.keys():
                cfg, why = _decomposition(M, N, K, _pinned(base, fixed), sms, fixed, target)
            else:
                cfg, why = _pinned(base, fixed), []
            return _clustered(M, N, K, cfg, [f"tile {cfg.BM}x{cfg.BN}x{cfg.BK}, {cfg.STAGES} "
                                             f"stages, swapped operands by the rule '{rule}'",
                                             *why], sms, fixed, target)
        base, rule = cuda_rule(M, N, K, sms)
        if rule in (CUDA_FEW_DEEP, CUDA_ONE_DEEP) and not tile_fixed and "DECOMP" not in fixed:
            cfg = _pinned(base, fixed)  # the rule's split-K, the user's knobs on top
            why = [f"tile {cfg.BM}x{cfg.BN}x{cfg.BK}, {cfg.STAGES} stages by the rule '{rule}'",
                   f"split-K {cfg.SPLITS}: {ceil_div(M, cfg.BM) * ceil_div(N, cfg.BN)} tiles x "
                   f"{cfg.SPLITS} parts, {cfg.FIXUP.value}"]
            return _clustered(M, N, K, cfg, why, sms, fixed, target)
        if rule != CUDA_WEIGHED or tile_fixed:
            cfg, why = _decomposition(M, N, K, _pinned(base, fixed), sms, fixed, target)
            return _clustered(M, N, K, cfg, [f"tile {cfg.BM}x{cfg.BN}x{cfg.BK} by the rule "
                                             f"'{rule}'", *why], sms, fixed, target)
        cfg, why = _weighed(M, N, K, sms, fixed, target, CUDA_TILES, CUDA_WEIGHED)
        return _clustered(M, N, K, cfg, why, sms, fixed, target)
    base, rule = _tile_rule(M, N, K, sms)
    if rule != "large" or tile_fixed:
        cfg, why = _decomposition(M, N, K, _pinned(base, fixed), sms, fixed)
        src = "the user's" if tile_fixed else f"the rule '{rule}'"
        return cfg, [f"tile {cfg.BM}x{cfg.BN}x{cfg.BK}, {cfg.WARPS} warps, {cfg.STAGES} stages "
                     f"by {src}", *why]
    return _weighed(M, N, K, sms, fixed, target, LARGE_TILES, "large problem")


def _cluster(M: int, N: int, K: int, cfg: Config, target: Target,
             sms: int = 132) -> tuple[int, int, str | None]:
    """The cluster (CM, CN) of ``cfg`` at M x N x K on ``target``, and why (None: nothing to
    say). CUDA, split-K in 128x128 or 128x256 tiles over two tile rows or more, B's rows of N
    16-bit elements 16-byte aligned but off a multiple of 128 bytes: 2x1, the two CTAs sharing
    one B tile by multicast. On the H200 that ran 1000 x 1000 x 50000 at 0.953x cuBLAS against
    0.611x, 2000 x 1000 x 50000 0.995x against 0.633x, 1000 x 1000 x 32768 0.942x against 0.680x,
    1000 x 2000 x 50000 0.981x against 0.921x, 1000 x 1000 x 16384 0.750x against 0.630x; with B's
    rows on 128 bytes the cluster cost 1-7% (bench/results/cuda_probe_cluster2_h200_2026-11-28_s13
    .json; B given K x N). Triton launches no cluster."""
    if (target is Target.CUDA and few_deep(M, N, K, sms) and cfg.BM == 128
            and cfg.BN in (128, 256) and cfg.DECOMP is Decomposition.SPLIT_K):
        return 2, 1, ("very few tiles, deep K: two tile rows share each B tile by multicast "
                      "(cuBLAS's 2x1 split-K)")
    b_row = 2 * N  # bytes (bf16 / fp16)
    if (target is Target.CUDA and cfg.DECOMP is Decomposition.SPLIT_K and cfg.BM == 128
            and cfg.BN in (128, 256) and ceil_div(M, 128) >= 2 and b_row % 128 and b_row % 16 == 0):
        return 2, 1, (f"split-K with B's rows {b_row} bytes, off a multiple of 128: two tile rows "
                      f"share each B tile by multicast")
    return 1, 1, None


def _clustered(M: int, N: int, K: int, cfg: Config, why: list[str], sms: int,
               fixed: Mapping[str, Any], target: Target) -> tuple[Config, list[str]]:
    """``cfg`` with the cluster :func:`_cluster` chooses where the user left it auto (a cluster
    whose CTAs do not divide the ``sms`` CTAs is none), the user's CM and CN kept."""
    cm, cn, reason = _cluster(M, N, K, cfg, target, sms)
    if sms % (cm * cn):
        cm, cn, reason = 1, 1, None
    out = _pinned(replace(cfg, CM=cm, CN=cn), fixed)
    if reason is not None and (cm, cn) == (out.CM, out.CN):
        why = [*why, f"cluster {cm}x{cn}: {reason}"]
    return out, why


def _weighed(M: int, N: int, K: int, sms: int, fixed: Mapping[str, Any], target: Target,
             tiles: tuple[tuple[Config, float], ...], what: str) -> tuple[Config, list[str]]:
    """The best of ``tiles``, each with its best decomposition: the modeled critical path times
    the tile's flops per k-iteration over its measured relative rate."""
    scored: list[tuple[float, int, Config, list[str]]] = []
    head = [f"{what}: the cost model over {len(tiles)} tiles "
            f"(time = critical path x tile flops / measured rate)"]
    for i, (tile, rate) in enumerate(tiles):
        cand, why = _decomposition(M, N, K, _pinned(tile, fixed), sms, fixed, target)
        split = make_work_split(cand.DECOMP, M=M, N=N, K=K, BM=cand.BM, BN=cand.BN, BK=cand.BK,
                                sms=sms, splits=cand.SPLITS, sk_waves=cand.SK_WAVES,
                                fixup=cand.FIXUP)
        iters = estimate_cost(split, sms, cand.BM, cand.BN, cand.BK).total
        time_ = iters * (cand.BM * cand.BN * cand.BK) / (128 * 128 * 64) / rate
        scored.append((time_, i, cand, why))
        head.append(f"  {cand.short()}: {iters:.1f} iters, rate {rate:.2f} -> {time_:.1f}")
    _, _, cfg, why = min(scored, key=lambda s: (s[0], s[1]))
    return cfg, [*head, f"chosen: {cfg.short()}", *why]


def candidates(M: int, N: int, K: int, *, sms: int = 132, fixed: Mapping[str, Any] | None = None,
               target: Target | str = Target.TRITON) -> list[Config]:
    """The tuning space around the heuristic: its choice first; the tiles of the shape class,
    each with data-parallel and the cost model's two best other decompositions; the other
    fix-up; pointer loads (Triton) or the other cluster, 1x1 or 2x1 (CUDA, two tile rows or
    more); CUDA, where the heuristic did not swap the operands, the swapped tile of
    :func:`cuda_swap.rows_tile` if there is one. Every config keeps the knobs in ``fixed``."""
    target = Target(target)  # "cuda" as well as Target.CUDA (a string gave Triton's tiles)
    fixed = {k: v for k, v in (fixed or {}).items() if v != AUTO}
    best, _ = heuristic(M, N, K, sms=sms, fixed=fixed, target=target)
    tiles = [best]
    if target is Target.CUDA:
        tiles += [t for t, _ in CUDA_TILES] + [
                  Config(BM=128, BN=128, BK=64, WARPS=12, STAGES=5),
                  Config(BM=128, BN=256, BK=64, WARPS=12, STAGES=3)]
    elif M <= 32:
        tiles += [Config(BM=16, BN=128, BK=128, WARPS=4, STAGES=4),
                  Config(BM=64, BN=64, BK=128, WARPS=4, STAGES=4)]
    elif M <= 128:
        tiles += [Config(BM=64, BN=128, BK=64, WARPS=4, STAGES=4),
                  Config(BM=64, BN=64, BK=128, WARPS=4, STAGES=4),
                  Config(BM=128, BN=64, BK=128, WARPS=4, STAGES=4),
                  Config(BM=64, BN=256, BK=64, WARPS=8, STAGES=4)]
    else:
        tiles += [t for t, _ in LARGE_TILES] + [Config(BM=64, BN=128, BK=64, WARPS=4, STAGES=4)]
        if M * N <= 1024 * 1024 and K <= 4096:
            tiles += [Config(BM=64, BN=64, BK=64, WARPS=4, STAGES=5),
                      Config(BM=128, BN=128, BK=64, WARPS=4, STAGES=4)]
    out: list[Config] = [best]
    for t in tiles:
        t = _pinned(t, fixed)
        if max(M, 16) * 2 < t.BM:  # tiles mostly past the edge
            continue
        if "DECOMP" in fixed and "SPLITS" in fixed:
            out.append(t)
            continue
        ranked = rank_decompositions(M, N, K, t.BM, t.BN, t.BK, sms,
                                     fixup=fixed.get("FIXUP", Fixup.DETERMINISTIC))
        kinds = [r[3] for r in ranked if fixed.get("DECOMP", r[3].kind) is r[3].kind]
        picks = [s for s in kinds if s.kind is Decomposition.DATA_PARALLEL][:1]
        picks += [s for s in kinds if s.kind is not Decomposition.DATA_PARALLEL][:2]
        for s in picks:
            out.append(_pinned(replace(
                t, DECOMP=s.kind, SPLITS=s.splits, FIXUP=s.fixup,
                SK_WAVES=s.sk_waves if s.kind is Decomposition.STREAM_K_PP else 1), fixed))
    if best.DECOMP is not Decomposition.DATA_PARALLEL and "FIXUP" not in fixed:
        other = Fixup.ATOMIC if best.FIXUP is Fixup.DETERMINISTIC else Fixup.DETERMINISTIC
        out.append(replace(best, FIXUP=other))
    if target is not Target.CUDA and "LOAD" not in fixed and M > 64:
        out.append(replace(best, LOAD=LoadKind.POINTER))
    if (target is Target.CUDA and not {"SWAP_AB", "BM", "BN"} & fixed.keys() and not best.SWAP_AB
            and N % 64 == 0 and (tile := cuda_swap.rows_tile(M, N, sms)) is not None):
        out.append(_pinned(cuda_swap.swapped(*tile[:2]), fixed))  # the swapped kernel's tile
    if (target is Target.CUDA and not {"CM", "CN"} & fixed.keys() and sms % 2 == 0
            and ceil_div(M, best.BM) >= 2):  # the heuristic's choice with the other cluster
        out.append(replace(best, CM=1, CN=1) if (best.CM, best.CN) != (1, 1)
                   else replace(best, CM=2, CN=1))
    return list(dict.fromkeys(out))


# --------------------------------------------------------------------------------------------
# resolution
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """One knob's value and where it came from."""

    name: str
    value: Any
    source: Source
    why: str = ""


@dataclass(frozen=True)
class Resolution:
    """A schedule's parameters with every ``"auto"`` knob filled in, and why."""

    params: dict[str, Any]
    choices: tuple[Choice, ...] = ()
    reasons: tuple[str, ...] = ()

    def choice(self, name: str) -> Choice:
        for c in self.choices:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def notes(self) -> list[str]:
        """One line per source that chose something: ``heuristic chose BM=64, BN=128 ...``."""
        out = []
        for src in Source:
            picked = [c for c in self.choices if c.source is src]
            if picked and src is not Source.USER:
                where = f" ({picked[0].why})" if picked[0].why else ""
                out.append(f"{src.value} chose " + ", ".join(
                    f"{c.name}={c.value}" for c in picked) + where)
        return out


def resolve(params: Mapping[str, Any], *, sms: int | None = None,
            target: Target | str = Target.TRITON,
            tuned: Mapping[str, Any] | None = None, rules: tuple[Mapping[str, Any], str] | None = None,
            ) -> Resolution:
    """``params`` with each knob whose value is ``"auto"`` chosen (see the module docstring).

    ``tuned``: a tuned record's knob values; ``rules``: a rules file's knob values and the rule's
    description. Knobs the schedule does not declare are left alone; a schedule with no auto
    knob comes back unchanged.
    """
    params = dict(params)
    declared = [k for k in KNOBS if k in params]
    parsed = {k: parse_knob(k, params[k]) for k in declared}
    auto = [k for k in declared if parsed[k] == AUTO]
    user = [Choice(k, params[k], Source.USER) for k in declared if k not in auto]
    if not auto:
        return Resolution(params, tuple(user))
    for dim in ("M", "N", "K"):
        if not isinstance(params.get(dim), int) or isinstance(params.get(dim), bool):
            raise ParamError(f"parameter {dim} must be an integer to choose "
                             f"{', '.join(auto)} (got {params.get(dim)!r})")
    M, N, K = params["M"], params["N"], params["K"]
    sms = sms or (params["SMS"] if isinstance(params.get("SMS"), int) else 132)
    for source, values, why in ((Source.TUNED, tuned, "recorded by tilec tune"),
                                (Source.RULES, rules[0] if rules else None,
                                 rules[1] if rules else "")):
        if values:  # a record from before a knob was added meant its old value
            values = {**{k: v for k, v in LATER_KNOBS.items() if k in auto}, **values}
        if values and all(k in values for k in auto):
            for k in auto:
                params[k] = values[k]
            return Resolution(params, tuple(user) + tuple(
                Choice(k, values[k], source, why) for k in auto))
    fixed = {k: v for k, v in parsed.items() if v != AUTO}
    cfg, reasons = heuristic(M, N, K, sms=sms, fixed=fixed, target=target)
    chosen = cfg.params()
    summary = reasons[0] if reasons else ""
    for k in auto:
        params[k] = chosen[k]
    return Resolution(params, tuple(user) + tuple(
        Choice(k, chosen[k], Source.HEURISTIC, summary) for k in auto), tuple(reasons))
