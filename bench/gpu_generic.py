"""The shape-generic CUDA kernel on the benchmark suite (issue 26): one kernel per configuration,
launched at every shape, against the per-shape kernel of the same configuration (where its source
still differs) and torch.matmul (cuBLAS).

For each shape of the suite (``SUITE``, a copy of shared/bench/suite.json: the device machine
cannot read it) and each configuration (``CONFIGS``: the seed schedule's parameters):

* the **generic** kernel: the plan lowered once, at the configuration's reference shape
  (``REFERENCE``), built once, launched at every shape;
* the **per-shape** kernel of the same configuration: the file ``tilec gen`` printed at 9d1b699
  (the last per-shape printer) for that shape, kept in ``bench/static_cuda_9d1b699`` (sizes
  baked in; launched through its own ``launch(A, B, C, ws, tickets, stream)``); where its L2
  hints differ from those the generic kernel uses at the shape (``hints_at``: the plan's, or its
  size-dependent rule's), also **generic_hints**, the generic kernel printed with the per-shape
  file's hints, so that the printer's cost (generic_hints vs per-shape) and the hints' (generic
  vs generic_hints) show apart; for a
  configuration without kept files, the plan lowered at the shape with today's printer, timed
  only where its source differs from the generic one (``same source`` otherwise: today's printer
  prints no size);
* correctness of each: fresh random inputs per check, C poisoned with NaN, relative error
  (Frobenius) against an fp32 reference, which variant ran (closed / general: ``facts_hold``);
* timing: every kernel and torch.matmul alternated, ``--rounds`` rounds (5) of ``--reps`` replays
  (10), the L2 flushed (a 512 MB buffer zeroed) before every replay, median of the round medians,
  spread = min..max of the round medians; clocks (nvidia-smi) before and after each shape;
* host time per call (the Python launcher, no sync) of the generic kernel and of torch.matmul.

A and B are bf16, A row-major M x K, B row-major K x N (the suite's layout; ``B_LAYOUT="kn"``),
C row-major M x N.  Rows TMA cannot take (K or N not a multiple of 8 elements: the suite's
"ragged" shape) are given as views of padded buffers (the kernel takes any row stride that is a
multiple of 16 bytes; the padding is the caller's, outside the timing).

Run on the GPU machine from the repository root::

    PYTHONPATH=. python bench/gpu_generic.py --out DIR [--quick] [--config NAME] [--only REGEX]

Prints a table and writes ``gpu_generic_<card>_<date>.json`` under DIR (default: $OUT, else
bench/results).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SEED = ROOT / "examples" / "seed004_persistent_cluster.py"

# shared/bench/suite.json ("bf16", A row-major MxK, B row-major KxN, C row-major MxN, fp32
# accumulate): (name, M, N, K)
SUITE = [
    ("sq1024", 1024, 1024, 1024),
    ("sq2048", 2048, 2048, 2048),
    ("sq4096", 4096, 4096, 4096),
    ("sq8192", 8192, 8192, 8192),
    ("seed001_awq", 128, 4096, 7168),
    ("decode_m16", 16, 4096, 4096),
    ("decode_m64", 64, 28672, 4096),
    ("wave_1664", 1664, 1664, 8192),
    ("wave_2304", 2304, 2304, 8192),
    ("wave_3328", 3328, 3328, 8192),
    ("wave_1408x1920", 1408, 1920, 16384),
    ("skinny_512_k64k", 512, 512, 65536),
    ("skinny_1024_k32k", 1024, 1024, 32768),
    ("ragged", 4095, 4097, 4100),
]
QUICK = ["sq1024", "seed001_awq", "decode_m16", "ragged"]

# configurations (the seed schedule's parameters; SMS: the device's SMs, rounded down to whole
# clusters, when absent); c2x1_128x256 is the one whose per-shape files are kept
CONFIGS: dict[str, dict[str, Any]] = {
    "c2x1_128x256": dict(BM=128, BN=256, CM=2, CN=1, B_LAYOUT="kn", SMS=132),
    "c1x1_128x256": dict(BM=128, BN=256, CM=1, CN=1, B_LAYOUT="kn"),
    "c1x2_128x128": dict(BM=128, BN=128, CM=1, CN=2, B_LAYOUT="kn"),
    "c1x1_128x128_splitk4": dict(BM=128, BN=128, CM=1, CN=1, B_LAYOUT="kn", DECOMP="splitk",
                                 SPLITS=4, FIXUP="deterministic"),
}
STATIC = ROOT / "bench" / "static_cuda_9d1b699"  # the per-shape files of 9d1b699 (configs.json)
DEFAULT_CONFIGS = ["c2x1_128x256"]
REFERENCE = (4096, 4096, 4096)  # where the generic kernel's plan is lowered


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="directory for the JSON (default $OUT, else "
                    "bench/results)")
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}; 2 rounds")
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS), default=None,
                    help=f"configurations (default {', '.join(DEFAULT_CONFIGS)}); repeatable")
    ap.add_argument("--only", default=None, help="regex over shape names")
    ap.add_argument("--rounds", type=int, default=None, help="timing rounds (default 5; quick 2)")
    ap.add_argument("--reps", type=int, default=10, help="replays per round (L2 flushed before each)")
    ap.add_argument("--no-per-shape", action="store_true",
                    help="skip the per-shape kernels (the generic one and torch.matmul only)")
    args = ap.parse_args(argv)
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    if args.rounds < 1 or args.reps < 1:
        ap.error("--rounds and --reps must be positive")
    args.config = args.config or list(DEFAULT_CONFIGS)
    return args


def shapes(args: argparse.Namespace) -> list[tuple[str, int, int, int]]:
    """The suite's shapes this run covers (``--quick``, ``--only``)."""
    out = [s for s in SUITE if not args.quick or s[0] in QUICK]
    if args.only:
        out = [s for s in out if re.search(args.only, s[0])]
    return out


def padded(cols: int, elem: int = 2) -> int:
    """The row stride (elements) TMA takes for rows of ``cols`` elements: a multiple of 16 bytes.

    >>> padded(4096), padded(4097), padded(4100)
    (4096, 4104, 4104)
    """
    from tilec.ir import ceil_div

    return ceil_div(cols * elem, 16) * 16 // elem


def config_params(name: str, sms: int, shape: tuple[int, int, int]) -> dict[str, Any]:
    """The seed schedule's parameters of configuration ``name`` at ``shape`` on ``sms`` SMs."""
    p = dict(CONFIGS[name])
    cl = p.get("CM", 1) * p.get("CN", 1)
    p.setdefault("SMS", sms // cl * cl)
    p["CLUSTER"] = cl
    p["M"], p["N"], p["K"] = shape
    return p


# ------------------------------------------------------------------------------------ GPU part


def clocks() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu,"
                               "power.draw", "--format=csv,noheader"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return "unknown"


def device_name() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                               "--format=csv,noheader"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return "unknown"


def static_kernels(config: str) -> dict[str, dict[str, Any]]:
    """The kept per-shape files of ``config`` (``STATIC/configs.json``), by shape name."""
    index = STATIC / "configs.json"
    if not index.exists():
        return {}
    data = json.loads(index.read_text())
    if data.get("config") != config:
        return {}
    return {n: k for n, k in data["kernels"].items() if "file" in k}


class StaticKernel:
    """A per-shape file of 9d1b699 built with nvcc: ``k(A, B, C)`` at its own M, N, K only
    (contiguous operands; its launcher encodes its maps with the baked sizes)."""

    def __init__(self, entry: dict[str, Any]) -> None:
        import ctypes

        from tilec.codegen.cuda.launch import compile_cu

        src = (STATIC / entry["file"]).read_text()
        cache = Path(os.environ.get("TILEC_CUDA_CACHE", "/tmp/tilec_cuda"))
        key = hashlib.sha1(src.encode()).hexdigest()[:12]
        lib = cache / f"static_{entry['file'][:-3]}_{key}.so"
        if not lib.exists():
            compile_cu(src, lib, shared=True, werror=False)
        self.lib = ctypes.CDLL(str(lib))
        self._launch = getattr(self.lib, f"{entry['cname']}_launch")
        self._launch.argtypes = [ctypes.c_void_p] * 6
        self._launch.restype = ctypes.c_int
        self.shape = (entry["M"], entry["N"], entry["K"])
        assert entry["workspace"] == [0, 0], "a kept file with a fix-up workspace"

    def __call__(self, A: Any, B: Any, C: Any) -> Any:
        import ctypes

        import torch

        M, K = A.shape
        N = B.shape[1]
        assert (M, N, K) == self.shape and A.is_contiguous() and B.is_contiguous() \
            and C.is_contiguous(), "a per-shape kernel runs at its own shape, contiguous"
        rc = self._launch(A.data_ptr(), B.data_ptr(), C.data_ptr(), 0, 0,
                          ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if rc:
            raise RuntimeError(f"per-shape launch failed: {rc}")
        return C

    def variant(self, M: int, N: int, K: int, ldc: int | None = None) -> str:
        return "per-shape"


def file_hints(entry: dict[str, Any]) -> tuple[str, str] | None:
    """The L2 hints (A's, B's) a kept per-shape file's header names."""
    m = re.search(r"L2 eviction hints[^:]*: A (\w+), B (\w+)", (STATIC / entry["file"]).read_text())
    return (m.group(1), m.group(2)) if m else None


def with_hints(plan: Any, hints: tuple[str, str]) -> Any:
    """``plan`` with A's and B's L2 hints replaced (their own type: a string or an enum), the
    same at every size (a size-dependent rule, ``evict_where``, dropped)."""
    import dataclasses

    def hinted(op: Any, h: str) -> Any:
        fixed = {"evict_where": None} if hasattr(op, "evict_where") else {}
        return dataclasses.replace(op, evict=type(op.evict)(h), **fixed)

    return dataclasses.replace(plan, a=hinted(plan.a, hints[0]), b=hinted(plan.b, hints[1]))


def hints_at(plan: Any, M: int, N: int) -> tuple[str, str]:
    """The L2 hints (A's, B's) the kernel of ``plan`` uses at sizes M, N: each operand's
    ``evict``, or where its size-dependent rule (``evict_where``) holds there, the rule's."""
    import sympy

    def at(op: Any) -> str:
        rule = getattr(op, "evict_where", None)
        if rule is not None:
            cond = sympy.sympify(rule[0])
            sizes = {s: sympy.Integer({"M": M, "N": N}.get(s.name, 1)) for s in cond.free_symbols}
            if bool(cond.xreplace(sizes)):
                return hint_name(rule[1])
        return hint_name(op.evict)

    return at(plan.a), at(plan.b)


def hint_name(h: Any) -> str:
    """An L2 hint's name (a string, or an enum's value)."""
    return str(getattr(h, "value", h))


def plan_at(params: dict[str, Any]) -> Any:
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule

    return kernel_plan(load_schedule(SEED, params, target="cuda", tuned=False), target="cuda")


def inputs(M: int, N: int, K: int, seed: int) -> tuple[Any, Any]:
    """Fresh bf16 A (M x K) and B (K x N), as views of row-padded buffers where TMA needs it."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    A = torch.empty(M, padded(K), device="cuda", dtype=torch.bfloat16)[:, :K]
    B = torch.empty(K, padded(N), device="cuda", dtype=torch.bfloat16)[:, :N]
    A.copy_(torch.randn(M, K, device="cuda", generator=g))
    B.copy_(torch.randn(K, N, device="cuda", generator=g))
    return A, B


def check(kernel: Any, M: int, N: int, K: int, seed: int) -> dict[str, Any]:
    """NaN-poisoned C, fresh inputs, relative error against fp32."""
    import torch

    A, B = inputs(M, N, K, seed)
    C = torch.full((M, padded(N)), float("nan"), device="cuda", dtype=torch.bfloat16)[:, :N]
    kernel(A, B, C)
    torch.cuda.synchronize()
    ref = A.float() @ B.float()
    nan = int(torch.isnan(C).sum())
    err = float(torch.linalg.norm(C.float() - ref) / torch.linalg.norm(ref)) if nan == 0 else float("nan")
    return {"rel_err": err, "nan": nan, "ok": nan == 0 and err < 1e-2,
            "variant": kernel.variant(M, N, K, C.stride(0))}


def flush_time(fn: Any, cache: Any, reps: int) -> float:
    """Median ms of ``reps`` replays, the L2 flushed before each."""
    import torch

    times = []
    for _ in range(reps):
        cache.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def host_us(fn: Any, calls: int = 200) -> float:
    """Host time per call (enqueue only), microseconds."""
    import torch

    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def run_shape(name: str, shape: tuple[int, int, int], kernels: dict[str, Any],
              args: argparse.Namespace) -> dict[str, Any]:
    import torch

    M, N, K = shape
    row: dict[str, Any] = {"shape": name, "M": M, "N": N, "K": K}
    for kname, k in kernels.items():
        row[f"{kname}_check"] = [check(k, M, N, K, seed) for seed in (M + N + K, M * 3 + 7)]
    A, B = inputs(M, N, K, 1)
    C = torch.empty(M, padded(N), device="cuda", dtype=torch.bfloat16)[:, :N]
    Ad, Bd = A.contiguous(), B.contiguous()  # torch.matmul on plain contiguous operands
    fns = {kname: (lambda k=k: k(A, B, C)) for kname, k in kernels.items()}
    fns["torch"] = lambda: torch.matmul(Ad, Bd)
    cache = torch.empty(512 * 2**20, dtype=torch.uint8, device="cuda")
    for fn in fns.values():  # warm-up
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    row["clocks_before"] = clocks()
    rounds: dict[str, list[float]] = {n: [] for n in fns}
    for _ in range(args.rounds):  # alternated: every kernel and torch once per round
        for n, fn in fns.items():
            rounds[n].append(flush_time(fn, cache, args.reps))
    row["clocks_after"] = clocks()
    flop = 2.0 * M * N * K
    for n, r in rounds.items():
        med = statistics.median(r)
        row[n] = {"ms": med, "ms_rounds": r, "spread": [min(r), max(r)], "tflops": flop / med / 1e9}
    base = row["torch"]["ms"]
    for n in kernels:
        row[n]["x_torch"] = base / row[n]["ms"]
    if "per_shape" in kernels:
        row["generic_vs_per_shape"] = row["per_shape"]["ms"] / row["generic"]["ms"]
    if "per_shape" in kernels and "generic_hints" in kernels:
        row["generic_hints_vs_per_shape"] = row["per_shape"]["ms"] / row["generic_hints"]["ms"]
    row["host_us"] = {"generic": host_us(fns["generic"]), "torch": host_us(fns["torch"])}
    return row


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from tilec.codegen.cuda.launch import build
    from tilec.codegen.cuda.printer import emit

    out_dir = Path(args.out or os.environ.get("OUT") or ROOT / "bench" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    name = (props.name or "gpu").lower()
    card = next((c for c in ("h200", "h100") if c in name), re.sub(r"\W+", "_", name))
    result: dict[str, Any] = {"device": device_name(), "sms": sms, "date": time.strftime("%Y-%m-%d"),
                              "rounds": args.rounds, "reps": args.reps, "reference": REFERENCE,
                              "configs": {}}
    for cfg in args.config:
        t0 = time.time()
        generic_plan = plan_at(config_params(cfg, sms, REFERENCE))
        generic_src = emit(generic_plan)
        generic = build(generic_plan, source=generic_src)
        from tilec.codegen.cuda.printer import CudaPrinter

        result["configs"][cfg] = {"generic_plan": {
            "stages": generic_plan.num_stages, "evict": [generic_plan.a.evict, generic_plan.b.evict],
            "epilogue": CudaPrinter(generic_plan).epilogue, "params": config_params(cfg, sms, REFERENCE)}}
        rows = []
        print(f"== {cfg}: generic kernel built in {time.time() - t0:.0f}s", flush=True)
        kept = static_kernels(cfg)
        todo = [n for n, *_ in shapes(args) if n in kept] if not args.no_per_shape else []

        def build_static(name: str) -> Any:
            try:
                return StaticKernel(kept[name])
            except Exception as e:  # reported in the row
                return f"per-shape file failed: {type(e).__name__}: {e}"[:200]

        t0 = time.time()
        with ThreadPoolExecutor(max_workers=8) as ex:  # nvcc in parallel
            statics = dict(zip(todo, ex.map(build_static, todo), strict=True))
        if todo:
            print(f"   {len(todo)} per-shape files built in {time.time() - t0:.0f}s", flush=True)
        rehinted: dict[tuple[str, str], Any] = {}
        for name, M, N, K in shapes(args):
            kernels: dict[str, Any] = {"generic": generic}
            note = ""
            if not args.no_per_shape and kept:
                if isinstance(statics.get(name), StaticKernel):
                    kernels["per_shape"] = statics[name]
                    note = "per-shape file of 9d1b699"
                    hints = file_hints(kept[name])
                    if hints is not None and hints != hints_at(generic_plan, M, N):
                        if hints not in rehinted:
                            rehinted[hints] = build(with_hints(generic_plan, hints))
                        kernels["generic_hints"] = rehinted[hints]
                        note += f"; its L2 hints A {hints[0]}, B {hints[1]}"
                elif name in statics:
                    note = statics[name]
                else:
                    note = "no per-shape file (9d1b699 refused this shape)"
            elif not args.no_per_shape:
                try:
                    plan = plan_at(config_params(cfg, sms, (M, N, K)))
                    src = emit(plan)
                    if src == generic_src:
                        note = "same source"
                    else:
                        kernels["per_shape"] = build(plan, source=src)
                except Exception as e:  # a per-shape lowering the printer refuses
                    note = f"no per-shape kernel: {type(e).__name__}: {e}"[:200]
            try:
                row = run_shape(name, (M, N, K), kernels, args)
            except Exception as e:
                row = {"shape": name, "M": M, "N": N, "K": K, "error": f"{type(e).__name__}: {e}"[:400]}
            row["per_shape_note"] = note
            rows.append(row)
            print(format_row(row), flush=True)
        ratios = [r["generic_vs_per_shape"] for r in rows if "generic_vs_per_shape" in r]
        same_hints = [r.get("generic_hints_vs_per_shape", r["generic_vs_per_shape"]) for r in rows
                      if "generic_vs_per_shape" in r]
        xt = [r["generic"]["x_torch"] for r in rows if "generic" in r]
        result["configs"][cfg] |= {
            "rows": rows,
            "all_correct": all(c["ok"] for r in rows
                               for k in ("generic", "generic_hints", "per_shape")
                               for c in r.get(f"{k}_check", [])) and not any("error" in r for r in rows),
            "geomean_generic_vs_per_shape": geomean(ratios) if ratios else None,
            # the generic kernel with each per-shape file's own L2 hints: the printer's cost alone
            "geomean_generic_same_hints_vs_per_shape": geomean(same_hints) if same_hints else None,
            "geomean_generic_x_torch": geomean(xt) if xt else None,
        }
        print(f"   {cfg}: correct {result['configs'][cfg]['all_correct']}, geomean generic/per-shape "
              f"{result['configs'][cfg]['geomean_generic_vs_per_shape']} (same L2 hints "
              f"{result['configs'][cfg]['geomean_generic_same_hints_vs_per_shape']}), x torch "
              f"{result['configs'][cfg]['geomean_generic_x_torch']}", flush=True)
    path = out_dir / f"gpu_generic_{card}_{result['date']}.json"
    path.write_text(json.dumps(result, indent=1))
    print(f"wrote {path}")
    return 0


def geomean(xs: list[float]) -> float:
    """The geometric mean.

    >>> round(geomean([1.0, 4.0]), 6)
    2.0
    """
    return float(statistics.geometric_mean(xs))


def format_row(r: dict[str, Any]) -> str:
    """One line of the table."""
    head = f"{r['shape']:>18} {r['M']:>5}x{r['N']:>5}x{r['K']:>5}"
    if "error" in r:
        return f"{head}  ERROR {r['error'][:120]}"
    g = r["generic"]
    ok = all(c["ok"] for c in r["generic_check"])
    var = "/".join(sorted({c["variant"] for c in r["generic_check"]}))
    s = (f"{head}  generic {g['ms']:.4f} ms ({g['tflops']:.0f} TF/s, {g['x_torch']:.3f}x torch, "
         f"{var}, {'ok' if ok else 'WRONG'} {r['generic_check'][0]['rel_err']:.1e})"
         f"  torch {r['torch']['ms']:.4f} ms")
    if "per_shape" in r:
        s += f"  per-shape {r['per_shape']['ms']:.4f} ms (generic/per-shape {r['generic_vs_per_shape']:.3f})"
    if "generic_hints" in r:
        s += (f"  generic with its hints {r['generic_hints']['ms']:.4f} ms "
              f"({r['generic_hints_vs_per_shape']:.3f})")
    elif r.get("per_shape_note"):
        s += f"  [{r['per_shape_note'][:60]}]"
    return s + f"  host us {r['host_us']['generic']:.1f} vs {r['host_us']['torch']:.1f}"


if __name__ == "__main__":
    raise SystemExit(main())
