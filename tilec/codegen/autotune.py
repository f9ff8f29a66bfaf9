"""Tile configs, the heuristic plan, and an autotuner over a small config space (GPU).

A :class:`Config` is everything a plan needs besides the problem: tile sizes, warps, stages,
raster group, decomposition numbers and load kind.  :func:`heuristic_config` picks one from
shape rules plus the decomposition cost model (:func:`~tilec.transforms.decompose.choose_decomposition`);
:func:`candidates` lists a handful around it; :func:`autotune` times them on the GPU and caches
the winner in ``$TILEC_CACHE/autotune.json`` (default ``~/.cache/tilec/autotune.json``).

Example::

    >>> cfg, why = heuristic_config(512, 512, 65536)
    >>> cfg.decomposition, cfg.splits
    ('splitk', 8)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from tilec.progress import Progress
from tilec.transforms.decompose import (
    choose_decomposition,
    estimate_cost,
    rank_decompositions,
    simple_plan,
)
from tilec.transforms.plan import Decomposition, DType, Fixup, KernelPlan, LoadKind

__all__ = [
    "Config",
    "Progress",
    "autotune",
    "cache_path",
    "candidates",
    "heuristic_config",
    "plan_for",
]


@dataclass(frozen=True)
class Config:
    """One point of the tuning space (decomposition numbers as in make_work_split)."""

    BM: int = 128
    BN: int = 256
    BK: int = 64
    num_warps: int = 8
    num_stages: int = 3
    group_m: int = 8
    decomposition: str = "dp"
    splits: int = 1
    sk_waves: int = 1
    fixup: str = "atomic"
    load: str = "auto"  # "auto" | "tma" | "pointer"
    ws: bool = False  # warp-specialized K loop (printer option, not a plan field)

    def short(self) -> str:
        d = self.decomposition + (f"{self.splits}" if self.decomposition == "splitk" else "")
        d += f"w{self.sk_waves}" if self.decomposition == "skpp" else ""
        return (f"{self.BM}x{self.BN}x{self.BK} w{self.num_warps} s{self.num_stages} "
                f"g{self.group_m} {d} {self.fixup if d != 'dp' else ''} {self.load}"
                + (" ws" if self.ws else "")).strip()


def plan_for(
    M: int, N: int, K: int, cfg: Config, *, dtype: DType = DType.BF16, sms: int = 132,
    b_transposed: bool = False,
) -> KernelPlan:  # fmt: skip
    """The KernelPlan of ``cfg`` for an M x N x K problem."""
    load = None if cfg.load == "auto" else LoadKind(cfg.load)
    return simple_plan(
        M, N, K, cfg.BM, cfg.BN, cfg.BK, dtype=dtype, decomposition=cfg.decomposition,
        sms=sms, splits=cfg.splits, sk_waves=cfg.sk_waves, fixup=Fixup(cfg.fixup),
        order="grouped", group_m=cfg.group_m, load=load, b_transposed=b_transposed,
        num_warps=cfg.num_warps, num_stages=cfg.num_stages,
    )  # fmt: skip


def _tile_config(M: int, N: int, K: int, sms_hint: int = 132) -> Config:
    # shape rules: wgmma wants BM in 64s; tiny M streams B (memory bound)
    if M <= 32:  # decode: stream B with long K steps (measured best: 16x64x256, split-K 2)
        return Config(BM=16, BN=64, BK=256, num_warps=4, num_stages=3)
    if M <= 128 and sms_hint // 2 <= -(-M // 64) * -(-N // 256):  # enough 64x256 tiles
        return Config(BM=64, BN=256, BK=64, num_warps=8, num_stages=4)
    if M <= 128:  # few tiles: 64x64 with BK=128, 6 stages; one tile per SM (H200, 128x4096x7168:
        # data-parallel 270 TFLOP/s = 1.61x plain; 64x128x128 split-K 2 ran 232-260)
        return Config(BM=64, BN=64, BK=128, num_warps=4, num_stages=6)
    if M <= 128 or N <= 128:
        return Config(BM=128, BN=128, BK=64, num_warps=8, num_stages=4)
    if M * N <= 1024 * 1024 and K <= 4096:  # small problem: 64x128 tiles, BK=128 (H200 sq1024:
        # 226 TFLOP/s with TMA loads, 200-215 with the plain kernel's 64x128x64)
        return Config(BM=64, BN=128, BK=128, num_warps=4, num_stages=4)
    if M * N <= 1024 * 1024:  # few tiles, deep K: split-K fills the machine
        return Config(BM=128, BN=128, BK=64, num_warps=8, num_stages=4)
    return Config(BM=128, BN=256, BK=64, num_warps=8, num_stages=3)


# Relative tensor-core throughput per flop of the large-tile configs the heuristic weighs (H200,
# bench/results/triton_h200_2026-11-21.json: data-parallel 128x256 ran 1.07-1.12x 128x128 on
# sq2048, sq4096 and wave_3328; 256x128 ran 0.98-1.03x 128x128)
LARGE_TILES = (
    (Config(BM=128, BN=256, BK=64, num_warps=8, num_stages=3), 1.10),
    (Config(BM=256, BN=128, BK=64, num_warps=8, num_stages=3), 1.0),
    (Config(BM=128, BN=128, BK=64, num_warps=8, num_stages=4), 1.0),
)


def _large(M: int, N: int, K: int) -> bool:
    return M > 128 and N > 128 and not (M * N <= 1024 * 1024 and K <= 4096)


def heuristic_config(
    M: int, N: int, K: int, sms: int = 132, fixup: Fixup = Fixup.DETERMINISTIC
) -> tuple[Config, list[str]]:
    """Tile config and decomposition from the cost model (shape rules for small M or small
    problems); with the reasons.

    The fix-up defaults to DETERMINISTIC (workspace slots summed in K order by the last
    arriver): on the H200 it ran as fast as or faster than ATOMIC on every split-K shape measured
    (128x4096x7168 split-K 2: 260 vs 232 TFLOP/s; 1024x1024x32768 split-K 4: 629 vs 590;
    512x512x65536 split-K 8: 456 vs 454), and it is bitwise reproducible.

    For large problems each of :data:`LARGE_TILES` gets its best decomposition from
    :func:`~tilec.transforms.decompose.choose_decomposition`; the modeled critical path (in
    k-iterations) times the tile's flops per k-iteration over its measured relative rate decides.
    """
    if not _large(M, N, K):
        cfg = _tile_config(M, N, K, sms)
        split, reasons = choose_decomposition(M, N, K, cfg.BM, cfg.BN, cfg.BK, sms, fixup=fixup)
        reasons.insert(0, f"tile config for M={M}, N={N}, K={K} (shape rule): "
                          f"{cfg.BM}x{cfg.BN}x{cfg.BK}, {cfg.num_warps} warps, "
                          f"{cfg.num_stages} stages")
    else:
        scored: list[Any] = []
        for t, rate in LARGE_TILES:
            split, why = choose_decomposition(M, N, K, t.BM, t.BN, t.BK, sms, fixup=fixup)
            tiles = -(-M // t.BM) * -(-N // t.BN)
            k_iters = -(-K // t.BK)
            iters = estimate_cost(split, tiles, k_iters, sms, t.BM, t.BN, t.BK).total
            # time in units of one 128x128x64 k-iteration at rate 1
            time_ = iters * (t.BM * t.BN * t.BK) / (128 * 128 * 64) / rate
            scored.append((time_, len(scored), t, split, why, iters, rate))
        time_, _, cfg, split, reasons, _, _ = min(scored, key=lambda x: (x[0], x[1]))
        head = [f"tile config for M={M}, N={N}, K={K}: the cost model over "
                f"{len(LARGE_TILES)} tile configs (time = critical path x tile flops / rate):"]
        for tm, _, t, sp, _, iters, rate in scored:
            mark = "  <- chosen" if t == cfg else ""
            head.append(f"  {t.BM}x{t.BN}x{t.BK}: {sp.kind.value}"
                        f"{sp.splits if sp.kind is Decomposition.SPLIT_K else ''}, "
                        f"{iters:.1f} iters, rate {rate:.2f} -> {tm:.1f}{mark}")
        reasons = head + reasons
    sk_waves = split.sk_waves if split.kind is Decomposition.STREAM_K_PP else 1
    cfg = replace(cfg, decomposition=split.kind.value, splits=split.splits, sk_waves=sk_waves,
                  fixup=split.fixup.value)
    if split.kind is not Decomposition.DATA_PARALLEL and split.fixup is Fixup.DETERMINISTIC:
        reasons.append("fix-up deterministic (default): on the H200 split-K shapes it ran as fast "
                       "as or faster than atomic; bitwise reproducible")
    return cfg, reasons


def _tile_space(M: int, N: int, K: int) -> list[Config]:
    """Tile configs worth timing for the shape class (the heuristic's own comes first)."""
    out = [_tile_config(M, N, K)]
    if M <= 32:
        out += [Config(BM=16, BN=128, BK=128, num_warps=4, num_stages=4),
                Config(BM=16, BN=64, BK=256, num_warps=4, num_stages=3),
                Config(BM=64, BN=64, BK=128, num_warps=4, num_stages=4)]
    elif M <= 128:
        out += [Config(BM=64, BN=128, BK=64, num_warps=4, num_stages=4),
                Config(BM=64, BN=64, BK=128, num_warps=4, num_stages=4),
                Config(BM=64, BN=128, BK=128, num_warps=4, num_stages=4),
                Config(BM=128, BN=64, BK=128, num_warps=4, num_stages=4),
                Config(BM=128, BN=128, BK=128, num_warps=8, num_stages=3),
                Config(BM=64, BN=256, BK=64, num_warps=8, num_stages=4)]
    else:
        out += [Config(BM=128, BN=256, BK=64, num_warps=8, num_stages=3),
                Config(BM=256, BN=128, BK=64, num_warps=8, num_stages=3),
                Config(BM=128, BN=128, BK=64, num_warps=8, num_stages=4),
                Config(BM=64, BN=128, BK=64, num_warps=4, num_stages=4)]
        if M * N <= 1024 * 1024 and K <= 4096:  # few tiles, short K: smaller tiles fill SMs
            out += [Config(BM=64, BN=64, BK=64, num_warps=4, num_stages=5),
                    Config(BM=64, BN=128, BK=64, num_warps=4, num_stages=4),
                    Config(BM=128, BN=128, BK=64, num_warps=4, num_stages=4)]
    return list(dict.fromkeys(out))


def _decompositions(M: int, N: int, K: int, t: Config, sms: int) -> list[Config]:
    """DP, the model's two best other decompositions, and split-K filling one or two waves."""
    ranked = rank_decompositions(M, N, K, t.BM, t.BN, t.BK, sms, fixup=Fixup.ATOMIC)
    dp = next(r[0] for r in ranked if r[3].kind is Decomposition.DATA_PARALLEL)
    # DP modeled at 2x the best or worse (one tile per 8+ SMs) is not worth a compile
    out = [replace(t, decomposition="dp")] if dp <= 2 * ranked[0][0] else []
    others = [r[3] for r in ranked if r[3].kind is not Decomposition.DATA_PARALLEL]
    for split in others[:2]:
        sk_waves = split.sk_waves if split.kind is Decomposition.STREAM_K_PP else 1
        out.append(replace(t, decomposition=split.kind.value, splits=split.splits,
                           sk_waves=sk_waves))
    tiles = -(-M // t.BM) * -(-N // t.BN)
    k_iters = -(-K // t.BK)
    if 2 * tiles <= sms:
        for s in (sms // tiles, 2 * sms // tiles):
            if 2 <= s <= k_iters // 4:
                out.append(replace(t, decomposition="splitk", splits=s))
    return out


def candidates(M: int, N: int, K: int, sms: int = 132) -> list[Config]:
    """The tuning space: the heuristic's choice; for each tile config of the shape class, DP,
    the cost model's two best other decompositions and split-K filling one or two waves (atomic
    fix-up); pointer-load variants of the heuristic's choice."""
    heur, _ = heuristic_config(M, N, K, sms)
    out: list[Config] = [heur]
    for t in _tile_space(M, N, K):
        if max(M, 16) * 2 < t.BM:  # tiles mostly past the edge
            continue
        out += _decompositions(M, N, K, t, sms)
    if M > 64:  # pointer loads: the plain kernel's path, sometimes faster than TMA
        out.append(replace(heur, decomposition="dp", splits=1, sk_waves=1, load="pointer"))
        out.append(replace(heur, load="pointer"))
    if heur.decomposition != "dp":  # the other fix-up of the heuristic's choice
        other = "atomic" if heur.fixup == "deterministic" else "deterministic"
        out.append(replace(heur, fixup=other))
    return list(dict.fromkeys(out))


# --------------------------------------------------------------------------------------------
# progress bar and cache
# --------------------------------------------------------------------------------------------


def cache_path() -> str:
    root = os.environ.get("TILEC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tilec")
    return os.path.join(root, "autotune.json")


def _read_cache() -> dict[str, Any]:
    try:
        with open(cache_path()) as f:
            return dict(json.load(f))
    except (OSError, ValueError):
        return {}


def _write_cache(data: dict[str, Any]) -> None:
    path = cache_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def autotune(
    M: int,
    N: int,
    K: int,
    *,
    dtype: DType = DType.BF16,
    sms: int | None = None,
    configs: list[Config] | None = None,
    timer: Callable[[KernelPlan], float] | None = None,
    use_cache: bool = True,
    progress: bool = True,
) -> tuple[Config, list[dict[str, Any]]]:
    """Time each candidate config (``timer(plan) -> ms``; default: do_bench on the GPU) and
    return the fastest with all results; the winner is cached on disk per device and shape."""
    if sms is None or timer is None:
        import torch

        dev = torch.cuda.get_device_properties(0)
        sms = sms or dev.multi_processor_count
        device = dev.name
    else:
        device = "custom-timer"
    key = f"{device}|{sms}|{M}x{N}x{K}|{dtype.value}"
    cache = _read_cache() if use_cache else {}
    if key in cache:
        hit = cache[key]
        return Config(**hit["config"]), hit["results"]
    if timer is None:
        timer = _gpu_timer
    configs = configs or candidates(M, N, K, sms)
    results = []
    items = Progress(configs, f"tune {M}x{N}x{K}") if progress else configs
    for cfg in items:
        try:
            ms = timer(plan_for(M, N, K, cfg, dtype=dtype, sms=sms))
            results.append({"config": asdict(cfg), "ms": ms})
        except Exception as e:  # a config that fails to compile or launch loses
            results.append({"config": asdict(cfg), "ms": None, "error": f"{type(e).__name__}: {e}"[:300]})
    ok = [r for r in results if r["ms"] is not None]
    if not ok:
        raise RuntimeError(f"autotune {M}x{N}x{K}: every config failed: {results[0].get('error')}")
    best: dict[str, Any] = min(ok, key=lambda r: float(r["ms"]))
    if use_cache:
        cache = _read_cache()
        cache[key] = {"config": best["config"], "results": results}
        _write_cache(cache)
    return Config(**best["config"]), results


def _gpu_timer(plan: KernelPlan) -> float:
    import torch

    from tilec.codegen.triton import load
    from tilec.codegen.triton_bench import time_ms

    dt = {DType.FP16: torch.float16, DType.BF16: torch.bfloat16, DType.FP32: torch.float32}
    a = torch.randn((plan.M, plan.K), device="cuda", dtype=dt[plan.dtype])
    b = torch.randn((plan.N, plan.K) if plan.b_transposed else (plan.K, plan.N), device="cuda",
                    dtype=dt[plan.dtype])
    mod = load(plan)
    out = torch.empty((plan.M, plan.N), device="cuda", dtype=dt[plan.dtype])
    return time_ms(lambda: mod.run(a, b, out=out), warmup=10, rep=40)
