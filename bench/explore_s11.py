"""Where the built library trails cuBLAS (bench/results/dispatch_h200_2026-11-28.json): per shape,
the library's own choice beside the configs the cost model or the kernel space suggests, each
built from examples/gemm_decomposition.py through the pipeline (tilec.runtime.autotune.build:
checked against torch first), and the built modules' ``matmul`` (``--module NAME=PATH``, any
number), all timed beside torch.matmul in the same rounds.

Phase 1 builds and checks everything of a shape (Triton compiles, the GPU idles); phase 2 runs
``--rounds`` rounds, each timing every candidate and cuBLAS once in turn with
tilec.runtime.bench.time_ms (median of replays, L2 flushed before each, launches hidden); the
table gives medians over rounds, x_cublas = cuBLAS / candidate, and the spread (max-min over
median). Clocks read (nvidia-smi), never set. Writes ``explore_s11_<card>_<date>.json`` to $OUT
(or bench/results) after every shape: a run cut by the time limit keeps what it measured.

    PYTHONPATH=. python bench/explore_s11.py [--rounds 5] [--module lib=libbench/benchgemm.py]
                                             [--budget 500] [--shapes name,...] [--set 1|2|3|4|5]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from dispatch import clocks  # noqa: E402  (nvidia-smi, read, never set)
from explore_heuristic import cfg  # noqa: E402  (a config's knobs, as the earlier rounds wrote them)

EX = ROOT / "examples" / "gemm_decomposition.py"


L256 = cfg(128, 256, 64)  # the rules library's config on most large shapes
S128 = cfg(128, 128, 64, "skpp", 1, 5)  # the heuristic's Stream-K++ 128x128
SHAPES: dict[str, tuple[tuple[int, int, int], list[dict]]] = {
    "wave_1664": ((1664, 1664, 8192), [L256, S128, cfg(128, 256, 64, "skpp"),
                                       cfg(128, 128, 64, "dp", 1, 5)]),
    "wave_2304": ((2304, 2304, 8192), [L256, S128, cfg(128, 256, 64, "skpp")]),
    "wave_1408x1920": ((1408, 1920, 16384), [cfg(128, 256, 64, "splitk", 2), L256, S128,
                                             cfg(128, 256, 64, "skpp")]),
    "qwen2_7b_down_m1500": ((1500, 3584, 18944), [L256, cfg(128, 256, 64, "skpp"), S128,
                                                  cfg(128, 128, 64, "dp", 1, 5)]),
    "mixtral_w1_m384": ((384, 14336, 4096), [L256, cfg(128, 128, 64, "dp", 1, 5),
                                             cfg(128, 256, 64, "skpp"), cfg(64, 256, 64, "dp", 1, 4)]),
    "deep_4096x512_k16k": ((4096, 512, 16384), [L256, cfg(128, 128, 64, "dp", 1, 5),
                                                cfg(128, 128, 64, "splitk", 2, 5),
                                                cfg(128, 256, 64, "splitk", 2)]),
    "qwen2_7b_qkv_m3000": ((3000, 4608, 3584), [L256, cfg(128, 128, 64, "dp", 1, 5),
                                                cfg(128, 256, 64, "skpp"), S128]),
    "dsv3_down_m320": ((320, 7168, 2048), [cfg(128, 128, 64, "dp", 1, 5), L256,
                                           cfg(64, 256, 64, "dp", 1, 4), S128]),
    "l3_70b_qkv_m16": ((16, 10240, 8192), [cfg(16, 64, 256, "dp", 1, 3, 4),
                                           cfg(16, 64, 256, "skpp", 1, 3, 4),
                                           cfg(16, 64, 256, "splitk", 2, 3, 4),
                                           cfg(16, 128, 128, "splitk", 2, 4, 4),
                                           cfg(16, 64, 128, "splitk", 4, 4, 4)]),
    "dsv3_gateup_m24": ((24, 4096, 7168), [cfg(16, 64, 256, "dp", 1, 3, 4),
                                           cfg(16, 64, 256, "splitk", 2, 3, 4),
                                           cfg(32, 64, 256, "splitk", 2, 3, 4),
                                           cfg(16, 64, 256, "splitk", 4, 3, 4)]),
    "ragged_333": ((333, 4096, 4096), [cfg(64, 128, 128, "dp", 1, 4, 4),
                                       cfg(128, 128, 64, "dp", 1, 5), cfg(128, 256, 64),
                                       cfg(128, 128, 64, "skpp", 1, 5)]),
    "ragged_77x14336": ((77, 14336, 4096), [cfg(64, 128, 64, "dp", 1, 4, 4),
                                            cfg(64, 256, 64, "dp", 1, 4, 8),
                                            cfg(128, 128, 64, "dp", 1, 4),
                                            cfg(128, 256, 64, "dp", 1, 3)]),
    "deep_1000x1000_k50000": ((1000, 1000, 50000), [cfg(128, 128, 64, "splitk", 2, 5),
                                                    cfg(128, 128, 64, "splitk", 4, 5),
                                                    cfg(128, 256, 64, "splitk", 8),
                                                    cfg(128, 256, 64, "splitk", 8, 3, 8, 8,
                                                        "reduce_kernel")]),
    "skinny_512_k64k": ((512, 512, 65536), [cfg(128, 256, 64, "splitk", 16, 3, 8, 8,
                                                "reduce_kernel"),
                                            cfg(128, 128, 64, "splitk", 8, 4),
                                            cfg(128, 128, 64, "splitk", 16, 4, 8, 8,
                                                "reduce_kernel")]),
}


# round 2: the small-M tiles (one tile row: BM >= M), split-K counts, the deep-K fix-up
R2: dict[str, tuple[tuple[int, int, int], list[dict]]] = {
    "l3_70b_down_m32": ((32, 8192, 28672), [cfg(16, 64, 256, "dp", 1, 3, 4),
                                            cfg(32, 64, 256, "dp", 1, 3, 4),
                                            cfg(32, 64, 256, "splitk", 2, 3, 4),
                                            cfg(16, 128, 128, "dp", 1, 4, 4),
                                            cfg(32, 128, 128, "dp", 1, 4, 4),
                                            cfg(32, 64, 256, "skpp", 1, 3, 4)]),
    "dsv3_gateup_m24": ((24, 4096, 7168), [cfg(32, 64, 256, "dp", 1, 3, 4),
                                           cfg(32, 64, 256, "splitk", 2, 3, 4),
                                           cfg(32, 64, 256, "skpp", 1, 3, 4),
                                           cfg(32, 128, 128, "splitk", 2, 4, 4)]),
    "l3_8b_qkv_m1": ((1, 6144, 4096), [cfg(16, 64, 256, "dp", 1, 3, 4),
                                       cfg(16, 64, 256, "splitk", 2, 3, 4),
                                       cfg(16, 128, 128, "dp", 1, 4, 4)]),
    "l3_8b_gateup_m4": ((4, 28672, 4096), [cfg(16, 64, 256, "skpp", 1, 3, 4),
                                           cfg(16, 128, 128, "dp", 1, 4, 4),
                                           cfg(16, 128, 128, "skpp", 1, 4, 4)]),
    "qwen2_7b_qkv_m48": ((48, 4608, 3584), [cfg(64, 64, 128, "dp", 1, 6, 4),
                                            cfg(64, 64, 128, "splitk", 2, 6, 4),
                                            cfg(64, 64, 128, "splitk", 3, 6, 4),
                                            cfg(64, 64, 128, "splitk", 4, 6, 4)]),
    "dsv3_gateup_m200": ((200, 4096, 7168), [cfg(128, 128, 64, "splitk", 2, 5),
                                             cfg(128, 256, 64, "splitk", 2),
                                             cfg(128, 128, 64, "skpp", 1, 5),
                                             cfg(64, 256, 64, "dp", 1, 4)]),
    "dsv3_down_m320": ((320, 7168, 2048), [cfg(128, 256, 64),
                                           cfg(128, 256, 64, "splitk", 2),
                                           cfg(128, 256, 64, "streamk"),
                                           cfg(128, 128, 64, "dp", 1, 4)]),
    "ragged_1000": ((1000, 1000, 1000), [cfg(64, 128, 128, "dp", 1, 4, 4),
                                         cfg(128, 128, 64, "dp", 1, 4, 4),
                                         cfg(64, 64, 64, "dp", 1, 5, 4),
                                         cfg(128, 64, 128, "dp", 1, 3, 4)]),
    "deep_1000x1000_k50000": ((1000, 1000, 50000), [
        cfg(128, 256, 64, "splitk", 8, 3, 8, 8, "reduce_kernel"),
        cfg(128, 128, 64, "splitk", 8, 5, 8, 8, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 16, 3, 8, 8, "reduce_kernel"),
        cfg(128, 128, 64, "splitk", 4, 5, 8, 8, "reduce_kernel")]),
    "deep_256x1024_k128k": ((256, 1024, 131072), [
        cfg(128, 256, 64, "splitk", 16, 3, 8, 8, "reduce_kernel"),
        cfg(128, 128, 64, "splitk", 16, 5, 8, 8, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 32, 3, 8, 8, "reduce_kernel"),
        cfg(64, 256, 64, "splitk", 16, 4, 8, 8, "reduce_kernel")]),
    "deep_128_k64k": ((128, 128, 65536), [
        cfg(64, 64, 128, "splitk", 32, 6, 4, 8, "reduce_kernel"),
        cfg(128, 128, 64, "splitk", 32, 5, 8, 8, "reduce_kernel"),
        cfg(64, 128, 128, "splitk", 32, 4, 4, 8, "reduce_kernel"),
        cfg(64, 64, 128, "splitk", 16, 6, 4, 8, "reduce_kernel")]),
    "skinny_512_k64k": ((512, 512, 65536), [
        cfg(128, 256, 64, "splitk", 16, 3, 8, 8, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 32, 3, 8, 8, "reduce_kernel"),
        cfg(128, 128, 64, "splitk", 8, 5, 8, 8, "reduce_kernel"),
        cfg(128, 128, 128, "splitk", 16, 3, 8, 8, "reduce_kernel")]),
}

# round 3 (session 12): one wave of 128x256 split-K parts on the deep-K shapes (the heuristic's
# "few tiles, deep K" rule takes 128x128 split-K 2 there), 256x128 tiles, Stream-K at 128x256,
# deeper pipelines on the small ragged square, one wave of 64x128 tiles at M = 200
R3: dict[str, tuple[tuple[int, int, int], list[dict]]] = {
    "deep_1000x1000_k50000": ((1000, 1000, 50000), [
        cfg(128, 128, 64, "splitk", 2, 5),
        cfg(128, 256, 64, "splitk", 4, 3, 8, 8, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 4, 3),
        cfg(128, 256, 64, "splitk", 3, 3, 8, 8, "reduce_kernel"),
        cfg(128, 256, 64, "streamk", 1, 3),
        cfg(256, 128, 64, "splitk", 4, 3, 8, 8, "reduce_kernel")]),
    "skinny_1024_k32k": ((1024, 1024, 32768), [
        cfg(128, 128, 64, "splitk", 2, 5),
        cfg(128, 256, 64, "splitk", 4, 3, 8, 8, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 4, 3),
        cfg(256, 128, 64, "splitk", 4, 3, 8, 8, "reduce_kernel")]),
    "deep_256x1024_k128k": ((256, 1024, 131072), [
        cfg(128, 256, 64, "splitk", 16, 3, 8, 8, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 16, 3),
        cfg(128, 256, 64, "splitk", 16, 4, 8, 8, "reduce_kernel"),
        cfg(256, 128, 64, "splitk", 16, 3, 8, 8, "reduce_kernel")]),
    "skinny_512_k64k": ((512, 512, 65536), [
        cfg(128, 256, 64, "splitk", 16, 3, 8, 8, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 16, 4, 8, 8, "reduce_kernel"),
        cfg(256, 128, 64, "splitk", 16, 3, 8, 8, "reduce_kernel")]),
    "wave_1664": ((1664, 1664, 8192), [S128, cfg(128, 256, 64, "streamk", 1, 3),
                                       cfg(256, 128, 64, "dp", 1, 3)]),
    "ragged_1000": ((1000, 1000, 1000), [cfg(64, 128, 128, "dp", 1, 4, 4),
                                         cfg(64, 128, 64, "dp", 1, 6, 4),
                                         cfg(64, 128, 64, "dp", 1, 8, 4)]),
    "dsv3_gateup_m200": ((200, 4096, 7168), [cfg(128, 128, 64, "splitk", 2, 5),
                                             cfg(64, 128, 64, "dp", 1, 6, 4),
                                             cfg(64, 128, 128, "dp", 1, 4, 4)]),
    "qwen2_7b_qkv_m3000": ((3000, 4608, 3584), [cfg(128, 128, 64, "dp", 1, 5),
                                                cfg(256, 128, 64, "dp", 1, 3)]),
}

# round 4 (session 12): why 1000x1000x50000 runs 128x128 split-K 2 at 0.61x where 1024^2 x 32768
# runs it at 0.96x: the same pair of configs with M, N aligned to 128 and K aligned to 64, apart
_DEEP = [cfg(128, 128, 64, "splitk", 2, 5), cfg(256, 128, 64, "splitk", 4, 3, 8, 8, "reduce_kernel")]
R4: dict[str, tuple[tuple[int, int, int], list[dict]]] = {
    "deep_1000x1000_k50000": ((1000, 1000, 50000), _DEEP),
    "deep_1024x1024_k50000": ((1024, 1024, 50000), _DEEP),
    "deep_1000x1000_k49152": ((1000, 1000, 49152), _DEEP),
    "deep_1024x1024_k49152": ((1024, 1024, 49152), _DEEP),
    "deep_1024x1024_k32768": ((1024, 1024, 32768), _DEEP),
    "deep_1000x1000_k32768": ((1000, 1000, 32768), _DEEP),
}

# round 5 (session 12): the rule "few tiles, deep K, M or N off the 128 grid" (256x128; the cost
# model's split-K 4 deterministic, measured in set 3 only with the reduce kernel) through the
# rebuilt library (--module), beside both fix-ups, and a shape the rule leaves alone
_RULE = [cfg(256, 128, 64, "splitk", 4, 3), cfg(256, 128, 64, "splitk", 4, 3, 8, 8, "reduce_kernel")]
R5: dict[str, tuple[tuple[int, int, int], list[dict]]] = {
    "deep_1000x1000_k50000": ((1000, 1000, 50000), _RULE),
    "deep_1000x1000_k32768": ((1000, 1000, 32768), _RULE),
    "deep_600x900_k40000": ((600, 900, 40000), _RULE),
    "deep_1024x1024_k32768": ((1024, 1024, 32768), [cfg(128, 128, 64, "splitk", 2, 5)]),
}
SETS = {"1": SHAPES, "2": R2, "3": R3, "4": R4, "5": R5}

def label(c: dict) -> str:
    d = c["DECOMP"] + (str(c["SPLITS"]) if c["DECOMP"] == "splitk" else "")
    fx = "" if c["DECOMP"] == "dp" else " " + c["FIXUP"][:3]
    return f"{c['BM']}x{c['BN']}x{c['BK']} {d}{fx} s{c['STAGES']} w{c['WARPS']}"


def load_module(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--module", action="append", default=[], help="NAME=PATH of a built module")
    ap.add_argument("--budget", type=float, default=500.0, help="seconds; no new shape after")
    ap.add_argument("--shapes", default="")
    ap.add_argument("--set", default="1", choices=sorted(SETS))
    args = ap.parse_args()
    import torch

    from tilec.runtime.autotune import build
    from tilec.runtime.bench import time_ms

    t_start = time.time()
    card = "h200" if "H200" in torch.cuda.get_device_name(0) else "h100"
    date = datetime.date.today().isoformat()
    out = Path(os.environ.get("OUT") or ROOT / "bench" / "results") / f"explore_s11_set{args.set}_{card}_{date}.json"
    mods = {n: load_module(n, p) for n, p in (m.split("=", 1) for m in args.module)}
    doc = {"script": "bench/explore_s11.py", "device": torch.cuda.get_device_name(0),
           "date": date, "rounds": args.rounds, "clocks_before": clocks(), "rows": []}
    table = SETS[args.set]
    names = [s for s in args.shapes.split(",") if s] or list(table)
    for name in names:
        if time.time() - t_start > args.budget:
            print(f"budget spent: {name} and later not run", flush=True)
            break
        (M, N, K), configs = table[name]
        dt = torch.bfloat16
        a = torch.randn((M, K), device="cuda", dtype=dt)
        b = torch.randn((K, N), device="cuda", dtype=dt)
        cands: list[tuple[str, object, str | None]] = []
        for c in configs:
            t0 = time.time()
            built = build(EX, {"M": M, "N": N, "K": K, **c})
            ok = built.run is not None
            cands.append((label(c), built.run, None if ok else built.measurement.error))
            print(f"{name}: built {label(c)} in {time.time() - t0:.1f} s"
                  + ("" if ok else f" FAILED {built.measurement.error}"), flush=True)
        for n, mod in mods.items():
            outbuf = torch.empty((M, N), device="cuda", dtype=dt)
            ref = torch.matmul(a.float(), b.float())
            got = mod.matmul(a, b, out=outbuf).float()
            err = float((got - ref).abs().max() / ref.abs().max())
            why = mod.explain(M, N, K).splitlines()[0] if hasattr(mod, "explain") else ""
            cands.append((f"module {n}: {why[:90]}", lambda mod=mod, o=outbuf, a=a, b=b: mod.matmul(a, b, out=o),
                          None if err < 2e-2 else f"wrong: rel err {err:.3g}"))
        runs = [(lbl, fn) for lbl, fn, e in cands if fn is not None and e is None]
        times: dict[str, list[float]] = {lbl: [] for lbl, _ in runs}
        times["cublas"] = []
        for r in range(args.rounds):
            order = runs[r % len(runs):] + runs[:r % len(runs)] if runs else []
            for lbl, fn in order:
                times[lbl].append(time_ms(fn))
                times["cublas"].append(time_ms(lambda a=a, b=b: torch.matmul(a, b)))
        cub = statistics.median(times["cublas"])
        for lbl, fn, e in cands:
            ts = times.get(lbl) if e is None and fn is not None else None
            med = statistics.median(ts) if ts else None
            row = {"name": name, "M": M, "N": N, "K": K, "candidate": lbl, "ms": med,
                   "cublas_ms": cub, "x_cublas": cub / med if med else None,
                   "spread": (max(ts) - min(ts)) / med if ts else None, "error": e}
            doc["rows"].append(row)
            print(f"{name:22s} {lbl[:70]:70s} "
                  + (f"{row['x_cublas']:.3f}x  ({med:.4f} ms, spread {row['spread']:.3f})"
                     if med else f"-- {e}"), flush=True)
        doc["clocks_after"] = clocks()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1))
    print(f"wrote {out} after {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
