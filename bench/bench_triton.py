"""Benchmark tilec's Triton backend on the shared suite (GPU): tilec (heuristic and autotuned),
cuBLAS (torch.matmul) and the plain Triton kernel, with a correctness check of every kernel.

    PYTHONPATH=. python bench/bench_triton.py --check --out bench/results/triton_h200.json

Method: triton.testing.do_bench, median, 256 MB L2 flush before every replay (see
tilec/codegen/triton_bench.py); TFLOP/s = 2MNK / median time.  Each kernel's output is first
poisoned with NaN and compared with torch.matmul in fp32 (relative error max|C-R| / max|R|).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tilec.codegen.autotune import Config, Progress, candidates, heuristic_config, plan_for
from tilec.transforms.plan import DType

HERE = os.path.dirname(os.path.abspath(__file__))
# the shared suite (shared/bench/suite.json and the H200 anchor); a copy of its shapes and of the
# anchor's plain-Triton configs is kept here for machines without the shared folder
SHARED_DIRS = [os.environ.get("TILEC_SHARED", ""), os.path.join(HERE, "..", "shared"),
               os.path.join(HERE, "..", "..", "shared"), "/work/shared"]
SUITE = [  # name, M, N, K, plain Triton cfg of the anchor (BM, BN, BK, GROUP_M, stages, warps)
    ("sq1024", 1024, 1024, 1024, (64, 128, 64, 8, 4, 4)),
    ("sq2048", 2048, 2048, 2048, (128, 256, 64, 8, 3, 8)),
    ("sq4096", 4096, 4096, 4096, (128, 256, 64, 8, 3, 8)),
    ("sq8192", 8192, 8192, 8192, (128, 256, 64, 8, 3, 8)),
    ("seed001_awq", 128, 4096, 7168, (64, 128, 64, 8, 4, 4)),
    ("decode_m16", 16, 4096, 4096, (64, 128, 64, 8, 4, 4)),
    ("decode_m64", 64, 28672, 4096, (64, 256, 64, 8, 4, 4)),
    ("wave_1664", 1664, 1664, 8192, (128, 256, 64, 8, 4, 8)),
    ("wave_2304", 2304, 2304, 8192, (128, 128, 64, 8, 4, 4)),
    ("wave_3328", 3328, 3328, 8192, (128, 256, 64, 8, 3, 8)),
    ("wave_1408x1920", 1408, 1920, 16384, (128, 256, 64, 8, 4, 8)),
    ("skinny_512_k64k", 512, 512, 65536, (64, 128, 64, 8, 4, 4)),
    ("skinny_1024_k32k", 1024, 1024, 32768, (64, 128, 64, 8, 4, 4)),
    ("ragged", 4095, 4097, 4100, (128, 256, 64, 8, 4, 8)),
]


def load_suite() -> tuple[str, list[tuple[str, int, int, int, tuple[int, ...]]]]:
    """(dtype, shapes with the anchor's plain config) from shared/bench, else the copy above."""
    for d in SHARED_DIRS:
        path = os.path.join(d, "bench", "suite.json") if d else ""
        anchor = os.path.join(d, "bench", "h200_anchor_2026-11-21.json") if d else ""
        if path and os.path.exists(path) and os.path.exists(anchor):
            with open(path) as f, open(anchor) as g:
                suite, rows = json.load(f), json.load(g)["rows"]
            cfgs = {r["name"]: tuple(r["triton_plain_cfg"]) for r in rows}
            return suite["dtype"], [(s["name"], s["M"], s["N"], s["K"], cfgs[s["name"]])
                                    for s in suite["shapes"]]
    return "bf16", SUITE
TOL = {DType.BF16: 2e-2, DType.FP16: 5e-3, DType.FP32: 5e-3}


def _tensors(M: int, N: int, K: int, dtype: DType, b_t: bool = False, seed: int = 0) -> Any:
    import torch

    dt = {DType.FP16: torch.float16, DType.BF16: torch.bfloat16, DType.FP32: torch.float32}[dtype]
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn((M, K), device="cuda", dtype=dt, generator=g)
    b = torch.randn((N, K) if b_t else (K, N), device="cuda", dtype=dt, generator=g)
    return a, b


def _compile_one(job: tuple[int, int, int, dict[str, Any], str, int, bool]) -> str:
    """Worker: build the plan, import its module and run it once (fills Triton's cache)."""
    M, N, K, cfg, dtype, sms, b_t = job
    try:
        from tilec.codegen.triton import load

        c = Config(**cfg)
        plan = plan_for(M, N, K, c, dtype=DType(dtype), sms=sms, b_transposed=b_t)
        a, b = _tensors(M, N, K, DType(dtype), b_t)
        load(plan, warp_specialize=c.ws).run(a, b)
        import torch

        torch.cuda.synchronize()
        return "ok"
    except Exception as e:
        return f"{type(e).__name__}: {e}"[:400]


def precompile(jobs: list[tuple[Any, ...]], workers: int) -> dict[tuple[Any, ...], str]:
    import multiprocessing as mp

    out: dict[tuple[Any, ...], str] = {}
    t0 = time.time()
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as ex:
        for job, res in zip(jobs, ex.map(_compile_one, jobs), strict=True):
            out[(job[0], job[1], job[2], json.dumps(job[3], sort_keys=True), job[4], job[6])] = res
    print(f"precompiled {len(jobs)} kernels in {time.time() - t0:.0f}s "
          f"({sum(v != 'ok' for v in out.values())} failed)", flush=True)
    return out


# --------------------------------------------------------------------------------------------
# correctness on the GPU: every decomposition x fix-up, both load kinds, three dtypes
# --------------------------------------------------------------------------------------------

CHECK_CASES: list[tuple[int, int, int, dict[str, Any], str, bool]] = []
for dec, extra in [("dp", {}), ("splitk", {"splits": 3}), ("streamk", {}), ("dp_1sk", {}),
                   ("sk2_dp", {}), ("skpp", {"sk_waves": 2}), ("skpp", {"sk_waves": 1})]:
    for fx in ("atomic", "deterministic", "reduce_kernel"):
        if dec == "dp" and fx != "atomic":
            continue
        for load in ("tma", "pointer"):
            cfg = dict(BM=128, BN=128, BK=64, num_warps=8, num_stages=3, decomposition=dec,
                       fixup=fx, load=load, **extra)
            CHECK_CASES.append((1000, 1240, 1096, cfg, "bf16", False))
CHECK_CASES += [
    (4095, 4097, 4100, dict(BM=128, BN=256, BK=64, decomposition="dp"), "bf16", False),
    (768, 512, 1000, dict(BM=128, BN=128, BK=64, decomposition="streamk", fixup="deterministic"),
     "fp16", True),
    (512, 384, 640, dict(BM=64, BN=64, BK=32, num_warps=4, decomposition="splitk", splits=4,
                         fixup="deterministic"), "fp32", False),
    (16, 4096, 4096, dict(BM=16, BN=64, BK=128, num_warps=4, num_stages=4,
                          decomposition="splitk", splits=2), "bf16", False),
]


def check_all(sms: int) -> list[dict[str, Any]]:
    import torch

    from tilec.codegen.triton import load
    from tilec.codegen.triton_bench import rel_err

    rows = []
    for M, N, K, cfg, dt, b_t in Progress(CHECK_CASES, "check"):
        dtype = DType(dt)
        row: dict[str, Any] = {"M": M, "N": N, "K": K, "dtype": dt, "b_transposed": b_t,
                               "config": Config(**cfg).short()}
        try:
            plan = plan_for(M, N, K, Config(**cfg), dtype=dtype, sms=sms, b_transposed=b_t)
            mod = load(plan)
            a, b = _tensors(M, N, K, dtype, b_t)
            ref = a.float() @ (b.float().T if b_t else b.float())
            outs = []
            for _ in range(2):
                out = torch.full((M, N), float("nan"), device="cuda", dtype=a.dtype)
                outs.append(mod.run(a, b, out=out).clone())
            # the second run reuses the self-cleaning workspace of the first
            row["rel_err"] = max(rel_err(o, ref) for o in outs)
            row["nan"] = sum(int(o.isnan().sum().item()) for o in outs)
            row["bitwise_repeat"] = bool(torch.equal(outs[0], outs[1]))
            row["ok"] = row["rel_err"] < TOL[dtype] and row["nan"] == 0 and (
                row["bitwise_repeat"] or cfg.get("fixup") == "atomic")
        except Exception as e:
            row["ok"] = False
            row["error"] = f"{type(e).__name__}: {e}"[:600]
        rows.append(row)
    bad = [r for r in rows if not r["ok"]]
    print(f"check: {len(rows) - len(bad)}/{len(rows)} ok", flush=True)
    for r in bad:
        print("  FAIL", r, flush=True)
    return rows


# --------------------------------------------------------------------------------------------
# the suite
# --------------------------------------------------------------------------------------------


def bench_suite(args: argparse.Namespace, sms: int, result: dict[str, Any]) -> None:
    import torch

    from tilec.codegen.triton import load
    from tilec.codegen.triton_bench import plain_matmul, rel_err, tflops, time_ms

    dt, shapes = load_suite()
    if args.only:  # in the order given
        order = args.only.split(",")
        shapes = sorted((s for s in shapes if s[0] in order), key=lambda s: order.index(s[0]))
    dtype = DType(dt)
    rows = result.setdefault("rows", [])
    for name, M, N, K, pc in shapes:
        t_shape = time.time()
        if args.only and name not in args.only.split(","):
            continue
        row: dict[str, Any] = {"name": name, "M": M, "N": N, "K": K}
        a, b = _tensors(M, N, K, dtype)
        ref = torch.matmul(a.float(), b.float())
        row["cublas_tflops"] = tflops(M, N, K, time_ms(lambda a=a, b=b: torch.matmul(a, b)))
        row["plain_cfg"] = list(pc)
        row["plain_tflops"] = tflops(
            M, N, K, time_ms(lambda a=a, b=b, pc=pc: plain_matmul(a, b, pc)))
        row["plain_rel_err"] = rel_err(plain_matmul(a, b, pc), ref)

        def run_cfg(cfg: Config, reps: int = 100, M: int = M, N: int = N, K: int = K,
                    a: Any = a, b: Any = b, ref: Any = ref) -> tuple[float, float, int]:
            mod = load(plan_for(M, N, K, cfg, dtype=dtype, sms=sms), warp_specialize=cfg.ws)
            out = torch.full((M, N), float("nan"), device="cuda", dtype=a.dtype)
            mod.run(a, b, out=out)
            out.fill_(float("nan"))  # check the second call: it reuses the first one's workspace
            mod.run(a, b, out=out)
            err, nan = rel_err(out, ref), int(out.isnan().sum().item())
            ms = time_ms(lambda: mod.run(a, b, out=out), rep=reps)
            return tflops(M, N, K, ms), err, nan

        cfg, reasons = heuristic_config(M, N, K, sms)
        row["heuristic_config"] = asdict(cfg)
        row["heuristic_reasons"] = reasons
        try:
            row["heuristic_tflops"], row["heuristic_rel_err"], row["heuristic_nan"] = run_cfg(cfg)
        except Exception as e:
            row["heuristic_error"] = f"{type(e).__name__}: {e}"[:600]
            row["heuristic_tflops"] = None
        if args.autotune:
            tried = []
            for c in tuning_set(args, name, M, N, K, sms):
                try:
                    tf, err, nan = run_cfg(c, reps=args.rep)
                    ok = err < TOL[dtype] and nan == 0
                    tried.append({"config": asdict(c), "short": c.short(), "tflops": tf,
                                  "rel_err": err, "ok": ok})
                except Exception as e:
                    tried.append({"config": asdict(c), "short": c.short(), "tflops": None,
                                  "error": f"{type(e).__name__}: {e}"[:300]})
            row["autotune"] = tried
            good = [t for t in tried if t.get("ok")]
            if row.get("heuristic_tflops") and (row.get("heuristic_rel_err", 1) < TOL[dtype]):
                good.append({"config": asdict(cfg), "short": cfg.short(),
                             "tflops": row["heuristic_tflops"]})
            best = max(good, key=lambda t: t["tflops"]) if good else None
            row["tuned_config"] = best["short"] if best else None
            row["tuned_tflops"] = best["tflops"] if best else None
        del ref
        row["seconds"] = round(time.time() - t_shape, 1)
        rows.append(row)
        _print_row(row)
        _save(args, result)


def tuning_set(args: argparse.Namespace, name: str, M: int, N: int, K: int, sms: int) -> list[Config]:
    """The configs timed for one shape: ``--configs FILE`` (shape name -> list of Config dicts,
    or the string "candidates") when it names the shape, else the autotuner's :func:`candidates`."""
    if args.configs:
        with open(args.configs) as f:
            table = json.load(f)
        if name in table:  # the entry "candidates" stands for candidates()
            out: list[Config] = []
            for c in table[name]:
                out += candidates(M, N, K, sms) if c == "candidates" else [Config(**c)]
            return list(dict.fromkeys(out))
    return candidates(M, N, K, sms)


def _fmt(x: float | None) -> str:
    return f"{x:7.1f}" if x else "     - "


def _print_row(r: dict[str, Any]) -> None:
    cub, pl = r["cublas_tflops"], r["plain_tflops"]
    h, t = r.get("heuristic_tflops"), r.get("tuned_tflops")
    best = max(x for x in (h, t, 0.0) if x is not None)
    print(f"{r['name']:>18} {r['M']:>5}x{r['N']:>5}x{r['K']:>5} cuBLAS {_fmt(cub)} plain {_fmt(pl)}"
          f" heur {_fmt(h)} tuned {_fmt(t)} | best/cuBLAS {best / cub:5.2f} best/plain"
          f" {best / pl:5.2f} | {r.get('tuned_config') or r['heuristic_config']['decomposition']}",
          flush=True)


def _summary(result: dict[str, Any]) -> None:
    rows = result.get("rows", [])
    if not rows:
        return
    def gm(xs: list[float]) -> float:
        return math.exp(sum(math.log(x) for x in xs) / len(xs))
    best = [max(x for x in (r.get("heuristic_tflops"), r.get("tuned_tflops"), 1e-9) if x)
            for r in rows]
    result["geomean_tuned_over_cublas"] = gm([b / r["cublas_tflops"] for b, r in zip(best, rows, strict=True)])
    result["geomean_heuristic_over_cublas"] = gm(
        [(r.get("heuristic_tflops") or 1e-9) / r["cublas_tflops"] for r in rows])
    result["geomean_plain_over_cublas"] = gm([r["plain_tflops"] / r["cublas_tflops"] for r in rows])
    print(f"geomean vs cuBLAS: tilec tuned {result['geomean_tuned_over_cublas']:.3f}, heuristic "
          f"{result['geomean_heuristic_over_cublas']:.3f}, plain Triton "
          f"{result['geomean_plain_over_cublas']:.3f}", flush=True)


def _save(args: argparse.Namespace, result: dict[str, Any]) -> None:
    for path in filter(None, [args.out, os.environ.get("OUT") and os.path.join(os.environ["OUT"], os.path.basename(args.out or "bench.json"))]):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump(result, f, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="correctness matrix first")
    ap.add_argument("--no-suite", action="store_true")
    ap.add_argument("--autotune", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated shape names")
    ap.add_argument("--workers", type=int, default=min(12, os.cpu_count() or 1))
    ap.add_argument("--out", default="")
    ap.add_argument("--configs", default="",
                    help="JSON {shape name: [Config dicts]}: time these instead of candidates()")
    ap.add_argument("--rep", type=int, default=50, help="autotune: ms of replays per config")
    args = ap.parse_args()

    import torch
    import triton

    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    result: dict[str, Any] = {
        "device": props.name, "sms": sms, "torch": torch.__version__,
        "triton": triton.__version__, "date": datetime.date.today().isoformat(),
        "method": "triton.testing.do_bench median (warmup 25 ms, rep 100 ms; autotune rep 50 ms),"
                  " 256 MB L2 flush per replay, random normal inputs, C poisoned with NaN and"
                  " checked against torch.matmul fp32",
    }
    jobs = []
    if args.check:
        jobs += [(M, N, K, cfg, dt, sms, bt) for M, N, K, cfg, dt, bt in CHECK_CASES]
    if not args.no_suite:
        dt, shapes = load_suite()
        for name, M, N, K, _ in shapes:
            if args.only and name not in args.only.split(","):
                continue
            cfgs = [heuristic_config(M, N, K, sms)[0]]
            if args.autotune:
                cfgs += tuning_set(args, name, M, N, K, sms)
            for c in dict.fromkeys(cfgs):
                jobs.append((M, N, K, asdict(c), dt, sms, False))
    if jobs and args.workers > 1:
        result["precompile"] = {str(k): v for k, v in precompile(jobs, args.workers).items() if v != "ok"}
    if args.check:
        result["check"] = check_all(sms)
        _save(args, result)
    if not args.no_suite:
        bench_suite(args, sms, result)
        _summary(result)
    _save(args, result)


if __name__ == "__main__":
    main()
