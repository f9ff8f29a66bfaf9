"""GPU check and benchmark of the CUDA backend (H200), every plan the seed schedule lowered
(examples/seed004_persistent_cluster.py through tilec.runtime.build.kernel_plan):

* correctness: cluster shapes 1, 2x1, 1x2, 2x2, 4x1 x multicast leader / sliced x every
  decomposition (dp, split-K, Stream-K, DP + 1 SK wave, two-tile SK + DP, Stream-K++; fix-ups
  deterministic and atomic) on ragged shapes (M, N, K not multiples of the tile, K < BK, fewer
  tiles than SMs, partial last rounds): NaN-poisoned C, fp32 reference, deterministic plans bitwise
  identical across runs; bad launches must raise KernelArgumentError;
* perf: tilec and cuBLAS (torch.matmul) alternated, 7 rounds of 10 replays each, L2 flushed
  before every replay, median and spread of the round medians, clocks read before and after;
* compute-sanitizer memcheck / racecheck / synccheck on small matrices.

Run on the device machine from the repository root::

    PYTHONPATH=. python3 bench/bench_cuda.py --out $OUT [--skip-perf] [--skip-sanitizer]

Correctness cases run in a worker subprocess with a per-case time limit, so a deadlocked
pipeline costs one case, not the run.  Writes cuda_correctness_<date>.json,
cuda_perf_<date>.json and cuda_sanitizer_<date>.txt under --out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tilec.codegen.cuda.launch import build, launch_numbers  # noqa: E402
from tilec.codegen.cuda.printer import CudaPrinter, emit  # noqa: E402
from tilec.errors import KernelArgumentError  # noqa: E402
from tilec.runtime.build import kernel_plan  # noqa: E402
from tilec.runtime.loader import load_schedule  # noqa: E402

SEED = ROOT / "examples" / "seed004_persistent_cluster.py"
CACHE = Path(os.environ.get("TILEC_CUDA_CACHE", "/tmp/tilec_cuda"))
DATE = time.strftime("%Y-%m-%d")

CLUSTERS = [(1, 1, "leader"), (2, 1, "leader"), (2, 1, "sliced"), (1, 2, "leader"),
            (1, 2, "sliced"), (2, 2, "leader"), (2, 2, "sliced"), (4, 1, "leader"),
            (4, 1, "sliced")]
DECOMPS = [dict(DECOMP="dp"), dict(DECOMP="splitk", SPLITS=3),
           dict(DECOMP="splitk", SPLITS=2, FIXUP="atomic"), dict(DECOMP="streamk"),
           dict(DECOMP="streamk", FIXUP="atomic"), dict(DECOMP="dp_1sk"), dict(DECOMP="sk2_dp"),
           dict(DECOMP="skpp", SK_WAVES=2)]
# ragged shapes: (M, N, K, BN, SMS per cluster size); 40 < BK; 1100*2 bytes rows: direct epilogue
SHAPES = [(1000, 1100, 776, 256, 8), (777, 1000, 40, 128, 8), (1300, 1504, 1000, 256, 16),
          (1536, 1000, 3000, 128, 132)]

# perf: (M, N, K) -> variants (params of the seed schedule, multicast mode)
BIG = [(4096, 4096, 4096), (8192, 8192, 8192), (6144, 6144, 2048), (4096, 6144, 4096),
       (4096, 28672, 4096), (4096, 4096, 14336), (6000, 6000, 6000)]
# (tma_tile with 3 stages, 3 stages alone and dp_1sk with the TMA-store epilogue lost to these
# everywhere: bench/results/cuda_perf_2026-11-23b.json; SMS=132, dp_1sk and 256x128 tiles with
# 1x2 clusters, all with the overlapped epilogue, lost too: cuda_perf_2026-11-23d.json)
_OVL = {"epilogue": "overlap"}
BIG_VARIANTS = [(dict(CM=2, CN=1, SMS=128), "leader", {}),  # the printer's choice: overlap
                (dict(CM=2, CN=1, SMS=128), "leader", {"epilogue": "tma"}),
                (dict(CM=2, CN=1, SMS=128, ORDER="grouped", GROUP=8), "leader", _OVL),
                (dict(CM=2, CN=1, SMS=128, B_LAYOUT="kn"), "leader", _OVL),
                # measurements: the same kernel without its epilogue (C not written), and without
                # its epilogue and its loads (the stages are released empty: MMAs and barriers)
                (dict(CM=2, CN=1, SMS=128), "leader", {"epilogue": "none"}),
                (dict(CM=2, CN=1, SMS=128), "leader", {"epilogue": "none", "loads": False})]
# deep-K and small-M shapes (issue 14: at least match cuBLAS). Session 7's exploration: tile
# (incl. 64-row tiles for M=128), split count / Stream-K, fix-up, stages, clusters and multicast,
# SM count; "epilogue none" and "loads False" are measurements (what is left without them).
_A, _D = dict(FIXUP="atomic"), dict(FIXUP="deterministic")


def _sk(splits: int) -> dict:
    return dict(DECOMP="splitk", SPLITS=splits)


_STK = dict(DECOMP="streamk", SMS=132)
_NONE, _BARE = {"epilogue": "none"}, {"epilogue": "none", "loads": False}
_NN, _LF, _LL, _FF = (dict(EVICT=e) for e in ("normal,normal", "last,first", "last,last",
                                                  "first,first"))
# run 1 (cuda_perf_2026-11-23_s7a.json: tiles, splits, Stream-K, fix-ups, stages, clusters, SMS;
# without loads every shape ran 1.04-1.53x cuBLAS, with them 0.70-0.95x) -> run 2
# (..._s7b.json: L2 hints, stages, 128x64 tiles: 128x4096x7168 at 1.067x with 128x64, 8 stages,
# A last / B first) -> run 3 (this list): the chosen configs, the CUDA heuristic's own plan of
# examples/gemm_decomposition.py, the old L2 hints beside the new rule, and 128x64 tiles with 8
# stages tried on the two deep-K shapes. The first variant of each shape is its reference.
_DEC = "examples/gemm_decomposition.py"
_P = [dict(PREFETCH=d) for d in (4, 8, 16)]  # the producer's L2 look-ahead, k-iterations
_ROW = dict(BM=128, BN=64, CM=1, CN=1, **_sk(2), **_D, STAGES=8)  # 128x4096x7168's choice
_D5 = dict(BN=128, CM=2, CN=1, **_sk(8), **_A, STAGES=6, **_NN)  # 512^2 x 65536, run 2's best
_D1 = dict(BN=256, CM=1, CN=1, **_sk(4), **_D, **_FF)  # 1024^2 x 32768, run 2's best
SMALL_S7C = {(128, 4096, 7168): [(_ROW, {}),
                                  (dict(SCHEDULE=_DEC, SMS=132), {}),  # heuristic, B K x N
                                  (dict(SCHEDULE=_DEC, SMS=132, B_LAYOUT="nk"), {}),
                                  (dict(_ROW, EVICT="first,last"), {}),  # hints before s7
                                  (dict(_ROW, FIXUP="atomic"), {}),
                                  (dict(_ROW, **_P[1]), {}),
                                  (dict(_ROW, **_P[2]), {}),
                                  (dict(BM=128, BN=128, CM=1, CN=1, **_sk(4), **_D), {}),
                                  (_ROW, _BARE)],
              (512, 512, 65536): [(_D5, {}),
                                  (dict(SCHEDULE=_DEC, SMS=132), {}),
                                  (dict(_D5, **_P[0]), {}),
                                  (dict(_D5, **_P[1]), {}),
                                  (dict(_D5, **_P[2]), {}),
                                  (dict(BN=256, CM=2, CN=1, **_sk(16), **_A, **_NN, **_P[1]), {}),
                                  (dict(BN=64, CM=1, CN=1, **_sk(4), **_A, STAGES=8, **_NN), {}),
                                  (dict(BN=64, CM=2, CN=1, **_sk(4), **_A, STAGES=8, **_NN,
                                        **_P[2]), {}),
                                  (dict(BN=128, CM=1, CN=2, **_sk(8), **_A, STAGES=6, **_NN,
                                        **_P[1]), {}),
                                  (dict(_D5, **_P[1]), _BARE)],
              (1024, 1024, 32768): [(_D1, {}),
                                    (dict(SCHEDULE=_DEC, SMS=132), {}),
                                    (dict(_D1, **_P[0]), {}),
                                    (dict(_D1, **_P[1]), {}),
                                    (dict(_D1, **_P[2]), {}),
                                    (dict(BN=128, CM=1, CN=1, **_sk(2), **_D, STAGES=6, **_FF,
                                          **_P[1]), {}),
                                    (dict(BN=64, CM=1, CN=1, DECOMP="dp", STAGES=8), {}),
                                    (dict(BN=64, CM=2, CN=1, DECOMP="dp", STAGES=8, **_NN,
                                          **_P[2]), {}),
                                    (dict(BN=256, CM=2, CN=1, **_sk(4), **_D, **_NN, **_P[1]), {}),
                                    (dict(_D1, **_P[1]), _BARE)]}
# run 4 (..._s7d.json, after the CUDA heuristic's deep-K rule): each shape's choice in the seed
# schedule and the heuristic's own plan of examples/gemm_decomposition.py (the CUDA default for
# a schedule that leaves its knobs "auto"), B as the file gives it (K x N) and N x K
SMALL = {shape: [(v, o), (dict(SCHEDULE=_DEC, SMS=132), {}),
                 (dict(SCHEDULE=_DEC, SMS=132, B_LAYOUT="nk"), {})]
         for shape, v, o in (((128, 4096, 7168), _ROW, {}), ((512, 512, 65536), _D5, {}),
                             ((1024, 1024, 32768), _D1, {}))}


def plan_of(params: dict, mode: str = "leader"):  # type: ignore[no-untyped-def]
    """The plan of the seed schedule with ``params``, or of the schedule file ``params["SCHEDULE"]``
    (its 'auto' knobs resolved by the CUDA heuristic, never a tuned record)."""
    p = dict(params)
    path = p.pop("SCHEDULE", None)
    if path is not None:
        return kernel_plan(load_schedule(ROOT / path, p, target="cuda", tuned=False),
                           target="cuda", mode=mode)
    p.setdefault("CLUSTER", p.get("CM", 2) * p.get("CN", 1))
    return kernel_plan(load_schedule(SEED, p), target="cuda", mode=mode)


def correctness_cases() -> list[tuple[dict, str, dict]]:
    out = []
    for ci, (cm, cn, mode) in enumerate(CLUSTERS):
        for di, d in enumerate(DECOMPS):
            i = (ci + di) % len(SHAPES)
            if SHAPES[i][2] < 64 * d.get("SPLITS", 1):  # split-K needs a k-iteration per part
                i = (i + 1) % len(SHAPES)
            M, N, K, BN, sms = SHAPES[i]
            sms = sms if sms % (cm * cn) == 0 else sms - sms % (cm * cn)
            kn = (ci + di) % 2 == 1 and N % 8 == 0  # B given K x N in every other case
            out.append((dict(M=M, N=N, K=K, BN=BN, CM=cm, CN=cn, SMS=sms, **d,
                             **({"B_LAYOUT": "kn"} if kn else {})), mode, {}))
    # the whole-tile TMA-store epilogue (3 stages), over the cluster shapes and some decompositions
    tile = {"epilogue": "tma_tile", "stages": 3}
    for ci, (cm, cn, mode) in enumerate(CLUSTERS[::2]):
        d = DECOMPS[(3 * ci) % len(DECOMPS)]
        out.append((dict(M=1300, N=1504, K=1000, BN=256, CM=cm, CN=cn, SMS=16, **d), mode, tile))
    # the overlapped epilogue (the tile packed in registers, stored box by box through TMA during
    # the next tile's k-iterations): every cluster shape, every decomposition, ragged shapes
    # (TMA-storable: N * 2 a multiple of 16), 256 x 128 tiles (two m64 rows per consumer), units
    # shorter than its store steps (K < BK: one k-iteration for four boxes)
    ovl = {"epilogue": "overlap"}
    tma_shapes = [(1000, 1000, 776, 256, 8), (777, 1000, 40, 256, 8), (1300, 1504, 1000, 256, 16),
                  (1536, 1000, 3000, 128, 132)]
    for ci, (cm, cn, mode) in enumerate(CLUSTERS):
        d = DECOMPS[ci % len(DECOMPS)]
        i = (ci + 1) % len(tma_shapes)
        if tma_shapes[i][2] < 64 * d.get("SPLITS", 1):
            i = (i + 1) % len(tma_shapes)
        M, N, K, BN, sms = tma_shapes[i]
        sms = sms if sms % (cm * cn) == 0 else sms - sms % (cm * cn)
        out.append((dict(M=M, N=N, K=K, BN=BN, CM=cm, CN=cn, SMS=sms, **d), mode, ovl))
    # session 7: one tile row of 128x64 tiles, 8 stages, split-K 2 (the CUDA heuristic's choice
    # for M <= 128), the lowering's L2 hints for one tile row (A last, B first) and given ones
    out += [(dict(M=100, N=1000, K=1000, BM=128, BN=64, CM=1, CN=1, SMS=132, DECOMP="splitk",
                  SPLITS=2, STAGES=8), "leader", {}),
            (dict(M=128, N=1024, K=3000, BM=128, BN=64, CM=1, CN=2, SMS=132, DECOMP="splitk",
                  SPLITS=2, STAGES=8, FIXUP="atomic", B_LAYOUT="kn"), "leader", {}),
            (dict(M=77, N=1000, K=776, BM=128, BN=64, CM=1, CN=1, SMS=16, DECOMP="streamk",
                  STAGES=8, EVICT="normal,normal"), "leader", {}),
            (dict(M=300, N=1504, K=1000, BN=128, CM=2, CN=1, SMS=16, DECOMP="splitk", SPLITS=3,
                  EVICT="last,last"), "sliced", {}),
            (dict(M=300, N=1000, K=3000, BM=128, BN=64, CM=1, CN=1, SMS=16, DECOMP="splitk",
                  SPLITS=2, STAGES=8, PREFETCH=16), "leader", {}),
            (dict(M=520, N=520, K=5000, BN=128, CM=2, CN=1, SMS=16, DECOMP="splitk", SPLITS=4,
                  FIXUP="atomic", STAGES=6, PREFETCH=8, EVICT="normal,normal"), "leader", {}),
            (dict(M=1000, N=640, K=2000, BN=128, CM=1, CN=2, SMS=8, PREFETCH=4, B_LAYOUT="kn"),
             "sliced", {}),
            # fewer tiles than CTAs and not whole clusters: the grid rounded up, the extra CTAs dead
            (dict(M=600, N=1400, K=64, CM=2, CN=1, SMS=132), "leader", {}),
            (dict(M=600, N=1400, K=520, BN=128, CM=2, CN=2, SMS=120), "sliced", {}),
            (dict(SCHEDULE="examples/gemm_decomposition.py", M=128, N=4096, K=7168), "leader", {}),
            (dict(SCHEDULE="examples/gemm_decomposition.py", M=120, N=2000, K=1504,
                  B_LAYOUT="nk"), "leader", {})]
    out += [(dict(M=999, N=1000, K=504, BN=128, CM=1, CN=1, SMS=8, DECOMP="splitk", SPLITS=2), "leader", ovl),
            (dict(M=1000, N=1000, K=1000, BM=256, BN=128, CM=1, CN=2, SMS=16, DECOMP="streamk"), "leader", ovl),
            (dict(M=1300, N=1504, K=1000, BM=256, BN=128, CM=1, CN=2, SMS=16, B_LAYOUT="kn"), "leader", ovl)]
    # session 13: the reduce-kernel fix-up (split-K parts to private slots, a second kernel sums
    # them in K order): ragged M and N, 2x1 clusters (a dead tile), 256-row tiles, B K x N,
    # more parts than SMS (a second wave), a direct epilogue (C rows TMA cannot store)
    red = dict(DECOMP="splitk", FIXUP="reduce_kernel")
    out += [(dict(M=1000, N=1000, K=5000, BN=128, CM=1, CN=1, SMS=16, SPLITS=8, **red), "leader", {}),
            (dict(M=333, N=1504, K=4096, BN=256, CM=2, CN=1, SMS=16, SPLITS=4, **red), "leader", {}),
            (dict(M=300, N=1000, K=3000, BM=256, BN=128, CM=1, CN=2, SMS=8, SPLITS=5,
                  B_LAYOUT="kn", **red), "sliced", {}),
            (dict(M=128, N=128, K=65536, BN=128, CM=1, CN=1, SMS=16, SPLITS=32, **red), "leader", {}),
            (dict(M=77, N=1001, K=2000, BM=128, BN=64, CM=1, CN=1, SMS=132, SPLITS=3, STAGES=8,
                  **red), "leader", {})]
    return out


_PLANS: dict[str, object] = {}
PLANS_FILE = CACHE / "plans.pkl"


def _plan_key(key: str):  # type: ignore[no-untyped-def]
    params, mode, *opts = json.loads(key)
    if opts and opts[0].get("stages"):  # the schedule's pipeline depth (set_kernel(stages=...))
        params = {**params, "STAGES": opts[0]["stages"]}
    if opts and opts[0].get("epilogue", "none") != "none":  # the schedule's set_kernel(epilogue=)
        params = {**params, "EPILOGUE": opts[0]["epilogue"]}
    try:
        return plan_of(params, mode)
    except Exception as e:
        return f"lowering failed: {type(e).__name__}: {e}"[:300]


def make_plans(keys: list[str]) -> None:
    """Lower every plan once, in parallel (the derivation is CPU-bound Python); workers load them."""
    import multiprocessing
    import pickle

    todo = sorted(set(keys) - set(_PLANS))
    t0 = time.time()
    with multiprocessing.get_context("fork").Pool(min(16, os.cpu_count() or 4)) as pool:
        _PLANS.update(zip(todo, pool.map(_plan_key, todo), strict=True))
    PLANS_FILE.parent.mkdir(parents=True, exist_ok=True)
    PLANS_FILE.write_bytes(pickle.dumps(_PLANS))
    print(f"lowered {len(todo)} plans in {time.time() - t0:.0f}s", flush=True)


def get_plan(params: dict, mode: str, *opts: dict):  # type: ignore[no-untyped-def]
    key = json.dumps([params, mode, *opts])
    if key not in _PLANS:
        if PLANS_FILE.exists():
            import pickle

            _PLANS.update(pickle.loads(PLANS_FILE.read_bytes()))
        if key not in _PLANS:
            _PLANS[key] = _plan_key(key)
    return _PLANS[key]


def build_all(plans: list, opts: list | None = None) -> list:
    """Build every plan with its variant's options: an epilogue "none" or loads False are
    measurements (printer overrides, never a plan's choice); any other epilogue is already the
    plan's (the schedule's set_kernel(epilogue=), see _plan_key)."""
    def one(po):  # type: ignore[no-untyped-def]
        p, o = po
        epi = o.get("epilogue") if o.get("epilogue") == "none" else None
        return build(p, CACHE, source=emit(p, epilogue=epi, loads=o.get("loads", True)))

    with ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 4)) as ex:
        return list(ex.map(one, zip(plans, opts or [{}] * len(plans), strict=True)))


def job_plan(job: list):  # type: ignore[no-untyped-def]
    return plan_of(job[1], job[2])


def _inputs(p, seed: int):  # type: ignore[no-untyped-def]
    """A (M x K) and B as the plan takes it: N x K, or K x N (row-major B)."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    A = torch.randn(p.M, p.K, device="cuda", generator=g).to(torch.bfloat16)
    B = torch.randn(p.N, p.K, device="cuda", generator=g).to(torch.bfloat16)
    return A, (B if p.b.transposed else B.T.contiguous())


def _bt(p, B):  # type: ignore[no-untyped-def]
    """B as N x K whatever the plan's layout (for the reference)."""
    return B if p.b.transposed else B.T


def _check(k, seed: int) -> tuple[float, int, object]:  # type: ignore[no-untyped-def]
    import torch

    p = k.plan
    A, B = _inputs(p, seed)
    C = torch.full((p.M, p.N), float("nan"), device="cuda", dtype=torch.bfloat16)
    k(A, B, C)
    torch.cuda.synchronize()
    ref = A.float() @ _bt(p, B).float().T
    nan = int(torch.isnan(C).sum())
    rel = float(torch.linalg.norm(C.float() - ref) / torch.linalg.norm(ref)) if nan == 0 else float("nan")
    return rel, nan, C


def _off16(A):  # type: ignore[no-untyped-def]
    """A copy of ``A`` whose row stride (elements) is past K and not a multiple of 16 bytes."""
    import torch

    M, K = A.shape
    ld = next(d for d in range(K + 1, K + 9) if d * A.element_size() % 16)
    out = torch.empty((M, ld), device=A.device, dtype=A.dtype)[:, :K]
    out.copy_(A)
    return out


def _bad_launches(k) -> dict:  # type: ignore[no-untyped-def]
    """Every wrong argument must be a KernelArgumentError (never a hang or a silent wrong result)."""
    import torch

    p = k.plan
    A, B = _inputs(p, 7)
    bad = {
        "A shape": lambda: k(A[:, :-8], B),  # K of A and B disagree (any M, N, K is a launch)
        # A's rows a few elements longer than K, their byte stride off TMA's 16 (slicing A[:, :-1]
        # keeps A's own stride, which TMA takes: session 13's K=5000 case launched, rightly)
        "A stride": lambda: k(_off16(A), B),
        "A dtype": lambda: k(A.half(), B),
        "B stride": lambda: k(A, torch.empty(*(B.shape[::-1]), device="cuda", dtype=torch.bfloat16).T),
        "B shape": lambda: k(A, B.T.contiguous() if B.shape[0] != B.shape[1] else B[:-1]),
        "A device": lambda: k(A.cpu(), B),
        "C dtype": lambda: k(A, B, torch.empty(p.M, p.N, device="cuda")),
        "A type": lambda: k(A.tolist()[:1], B),
    }
    out = {}
    for name, fn in bad.items():
        try:
            fn()
            out[name] = "no error"
        except KernelArgumentError as e:
            out[name] = "KernelArgumentError: " + str(e)[:120]
        except Exception as e:
            out[name] = f"WRONG {type(e).__name__}: {e}"[:160]
    saved = k.smem_bytes
    k.smem_bytes = 10 ** 6  # as if the device had too little shared memory for this plan
    try:
        k(A, B)
        out["smem"] = "no error"
    except KernelArgumentError as e:
        out["smem"] = "KernelArgumentError: " + str(e)[:120]
    finally:
        k.smem_bytes = saved
    return out


def _flush_and_time(fn, cache, reps: int = 10) -> float:  # type: ignore[no-untyped-def]
    import torch

    times = []
    for _ in range(reps):
        cache.zero_()  # L2 flushed before every replay
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def clocks() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw",
                               "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def _deterministic_twin(p):  # type: ignore[no-untyped-def]
    """A reduce-kernel plan with the deterministic fix-up: the same slots summed in the same K
    order by the last contributor instead of a second kernel, so C must be bitwise equal."""
    import dataclasses

    from tilec.transforms.plan import Fixup

    det = Fixup.DETERMINISTIC
    split = None if p.split is None else dataclasses.replace(p.split, fixup=det)
    return dataclasses.replace(p, work=dataclasses.replace(p.work, fixup=det), split=split)


def run_job(job: list, kernels: dict) -> dict:
    import torch

    if job[0] == "check":
        k = kernels[json.dumps(job[1:4])]
        p = k.plan
        det = p.work.fixup.value in ("deterministic", "reduce_kernel") or p.work.kind.value == "dp" \
            or not CudaPrinter(p).partials
        seed = abs(hash(json.dumps(job[1:4]))) % 10**6
        rel1, nan1, C1 = _check(k, seed)
        rel1b, nan1b, C1b = _check(k, seed)  # same inputs again: bitwise equal where deterministic
        rel2, nan2, _ = _check(k, seed + 1)  # fresh inputs
        same = bool(torch.equal(C1, C1b))
        mcs = [op.multicast for op in (p.a, p.b)]
        r = {"name": p.name, "params": job[1], "mode": job[2], "opts": job[3], "M": p.M, "N": p.N, "K": p.K,
             "tile": [p.BM, p.BN, p.BK], "cluster": p.cluster[0], "grid": p.work.grid,
             "decomposition": p.work.kind.value, "fixup": p.work.fixup.value,
             "sk_tiles": p.work.sk_tiles, "group": p.work.group,
             "multicast": [None if m is None else f"{m.mode.value}/{'closed' if m.closed_form else 'general'}"
                           for m in mcs],
             "exact_release": CudaPrinter(p).shape.receivers is not None,
             "rel_err": [rel1, rel1b, rel2], "nan_count": [nan1, nan1b, nan2],
             "deterministic": det, "bitwise_repeat": same,
             "ok": all(n == 0 and e < 1e-2 for e, n in ((rel1, nan1), (rel1b, nan1b), (rel2, nan2)))
             and (same or not det)}
        if p.work.fixup.value == "reduce_kernel":  # the same sums in the same K order as ...
            _, _, C_det = _check(build(_deterministic_twin(p), CACHE), seed)
            r["equals_deterministic"] = bool(torch.equal(C1, C_det))  # ... the one-kernel fix-up
            r["ok"] = r["ok"] and r["equals_deterministic"]
        if job[4]:
            r["bad_launches"] = _bad_launches(k)
            r["ok"] = r["ok"] and all(v.startswith("KernelArgumentError") for v in r["bad_launches"].values())
        return r
    # perf: ["perf", (M, N, K), [variant params...], [modes...]]
    M, N, K = job[1]
    ks = [kernels[json.dumps([v, m, o])] for v, m, o in zip(job[2], job[3], job[4], strict=True)]
    g = torch.Generator(device="cuda").manual_seed(M + N + K)
    A = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
    B = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
    Bkn = B.T.contiguous()  # row-major B, for plans that take B as K x N
    C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    cache = torch.empty(512 * 2**20, dtype=torch.uint8, device="cuda")
    ref = A.float() @ B.float().T
    errs = []
    for k in ks:
        C.fill_(float("nan"))
        k(A, B if k.plan.b.transposed else Bkn, C)
        torch.cuda.synchronize()
        errs.append(float(torch.linalg.norm(C.float() - ref) / torch.linalg.norm(ref)))
    del ref
    fns = [lambda k=k, b=(B if k.plan.b.transposed else Bkn): k(A, b, C) for k in ks]
    fns.append(lambda: torch.matmul(A, B.T))
    for fn in fns:  # warm up
        for _ in range(5):
            fn()
    torch.cuda.synchronize()
    clk0 = clocks()
    rounds: list[list[float]] = [[] for _ in fns]
    for _ in range(7):  # alternated: every variant and cuBLAS once per round
        for i, fn in enumerate(fns):
            rounds[i].append(_flush_and_time(fn, cache))
    clk1 = clocks()
    flop = 2.0 * M * N * K
    cub = statistics.median(rounds[-1])
    rows = []
    for i, k in enumerate(ks):
        med = statistics.median(rounds[i])
        rows.append({"kernel": k.plan.name, "params": job[2][i], "mode": job[3][i], "opts": job[4][i],
                     "decomposition": k.plan.work.kind.value, "fixup": k.plan.work.fixup.value,
                     "grid": k.plan.work.grid, "cluster": k.plan.cluster[0],
                     "stages": k.plan.num_stages, "rel_err": errs[i], "ms": med,
                     "ms_rounds": rounds[i], "spread": [min(rounds[i]), max(rounds[i])],
                     "tflops": flop / med / 1e9, "x_cublas": cub / med,
                     "x_peak": flop / med / 1e9 / 989.0})
    return {"shape": [M, N, K], "cublas_ms": cub, "cublas_rounds": rounds[-1],
            "cublas_tflops": flop / cub / 1e9, "clocks_before": clk0, "clocks_after": clk1,
            "variants": rows, "ok": True}


def worker(jobs: list) -> None:
    keys = set()
    for j in jobs:
        if j[0] == "check":
            keys.add(json.dumps(j[1:4]))
        else:
            keys |= {json.dumps([v, m, o]) for v, m, o in zip(j[2], j[3], j[4], strict=True)}
    keys_l = sorted(keys)
    loaded = [json.loads(k) for k in keys_l]
    built = dict(zip(keys_l, build_all([get_plan(*x) for x in loaded],
                                       [x[2] if len(x) > 2 else {} for x in loaded]), strict=True))
    for j in jobs:
        print("START " + json.dumps(j), flush=True)
        try:
            r = run_job(j, built)
        except Exception as e:
            r = {"error": repr(e)[:300], "ok": False, "job": j}
            print("RESULT " + json.dumps(r), flush=True)
            return  # the CUDA context may be broken: the parent starts a fresh worker
        r["job"] = j
        print("RESULT " + json.dumps(r), flush=True)


def run_jobs(jobs: list, per_job_s: float, log) -> list[dict]:
    import queue
    import threading

    todo = list(jobs)
    results: list[dict] = []
    while todo:
        proc = subprocess.Popen([sys.executable, __file__, "--worker", json.dumps(todo)],
                                stdout=subprocess.PIPE, text=True, env=os.environ)
        q: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [q.put(ln) for ln in proc.stdout] + [q.put(None)],
                         daemon=True).start()
        current, last = None, time.time()
        while True:
            try:
                ln = q.get(timeout=0.2)
            except queue.Empty:
                ln = ""
            if ln is None:
                break
            if ln.startswith("START"):
                current, last = json.loads(ln[6:]), time.time()
            elif ln.startswith("RESULT"):
                r = json.loads(ln[7:])
                results.append(r)
                todo.remove(r["job"])
                log(r)
                current = None
            if current is not None and time.time() - last > per_job_s:
                proc.kill()
                break
        proc.wait()
        if current is not None:  # timed out or crashed inside a job
            r = {"job": current, "ok": False,
                 "error": "timeout (deadlock?)" if proc.returncode == -9 else f"worker died rc={proc.returncode}"}
            results.append(r)
            todo.remove(current)
            log(r)
        elif todo and proc.returncode != 0:
            break
    return results


def run_correctness(out: Path, only: str | None = None, tag: str = "") -> list[dict]:
    cases = [c for c in correctness_cases()
             if only is None or any(o in json.dumps(c) for o in only.split("|"))]
    t0 = time.time()
    make_plans([json.dumps([p, m, o]) for p, m, o in cases])
    plans = [get_plan(p, m, o) for p, m, o in cases]
    # the reduce-kernel cases' deterministic twins, built now (a check job has 30 s)
    twins = [_deterministic_twin(p) for p in plans
             if hasattr(p, "work") and p.work.fixup.value == "reduce_kernel"]
    build_all(plans + twins, [o for _, _, o in cases] + [{}] * len(twins))
    print(f"built {len(cases)} correctness kernels in {time.time() - t0:.0f}s", flush=True)

    def log(r: dict) -> None:
        ok = "ok  " if r.get("ok") else "FAIL"
        print(f"  {ok} {r.get('decomposition', '')}/{r.get('fixup', '')} c{r.get('cluster')} "
              f"{r['job'][2]} {r.get('M')}x{r.get('N')}x{r.get('K')} err={r.get('rel_err', r.get('error'))} "
              f"bitwise={r.get('bitwise_repeat')}"
              + (f" =deterministic={r['equals_deterministic']}" if "equals_deterministic" in r else ""),
              flush=True)

    jobs = [["check", p, m, o, i == 0] for i, (p, m, o) in enumerate(cases)]
    results = run_jobs(jobs, 30.0, log)
    (out / f"cuda_correctness_{DATE}{tag}.json").write_text(json.dumps(
        {"device": device(), "date": DATE, "script": "bench/bench_cuda.py", "cases": results}, indent=1))
    return results


# ---------------------------------------------------------------------------- perf
def run_perf(out: Path, which: str, shapes: list | None = None, variants: list | None = None,
             tag: str = "") -> list[dict]:
    """Time ``shapes`` x ``variants`` (default BIG x BIG_VARIANTS) and/or SMALL; writes
    cuda_perf_<date><tag>.json under ``out``."""
    jobs: list = []
    variants = variants or BIG_VARIANTS
    if which in ("all", "big"):
        for shape in shapes or BIG:
            vs = [dict(M=shape[0], N=shape[1], K=shape[2], **v) for v, _, _ in variants]
            jobs.append(["perf", list(shape), vs, [m for _, m, _ in variants],
                         [o for _, _, o in variants]])
    if which in ("all", "small"):
        for shape, variants in SMALL.items():
            vs = [{"M": shape[0], "N": shape[1], "K": shape[2], "SMS": 128, **v} for v, _ in variants]
            jobs.append(["perf", list(shape), vs, ["leader"] * len(vs), [o for _, o in variants]])
    t0 = time.time()
    make_plans([json.dumps([v, m, o]) for j in jobs for v, m, o in zip(j[2], j[3], j[4], strict=True)])
    failed = []
    for j in jobs:  # variants whose lowering failed are reported, not run
        keep = [i for i, x in enumerate(zip(j[2], j[3], j[4], strict=True))
                if not isinstance(_PLANS[json.dumps(list(x))], str)]
        failed += [{"shape": j[1], "params": j[2][i], "mode": j[3][i], "opts": j[4][i],
                    "error": _PLANS[json.dumps([j[2][i], j[3][i], j[4][i]])]}
                   for i in range(len(j[2])) if i not in keep]
        j[2:5] = [[j[2][i] for i in keep], [j[3][i] for i in keep], [j[4][i] for i in keep]]
    for f in failed:
        print(f"  not run: {f}", flush=True)
    build_all([get_plan(v, m, o) for j in jobs for v, m, o in zip(j[2], j[3], j[4], strict=True)],
              [o for j in jobs for o in j[4]])
    print(f"built perf kernels in {time.time() - t0:.0f}s", flush=True)
    rows = run_jobs(jobs, 120.0, lambda r: print(f"  {r['job'][1]} done", flush=True))
    summary = perf_summary(rows)
    (out / f"cuda_perf_{DATE}{tag}.json").write_text(json.dumps(
        {"device": device(), "date": DATE, "script": "bench/bench_cuda.py",
         "method": "alternated, 7 rounds x 10 replays, L2 (512 MiB) zeroed before each replay, "
                   "CUDA events; median of round medians; spread = min/max of round medians",
         "summary": summary, "rows": rows, "not_run": failed}, indent=1))
    print(f"\n{'shape':>18} {'variant':>60} {'ms':>8} {'TFLOP/s':>8} {'x cuBLAS':>8} {'spread':>15}")
    for r in rows:
        if "variants" not in r:
            print(f"{r['job'][1]} ERROR {r.get('error', '')[:100]}")
            continue
        shp = "x".join(map(str, r["shape"]))
        print(f"{shp:>18} {'cuBLAS':>60} {r['cublas_ms']:8.3f} {r['cublas_tflops']:8.1f}")
        for v in r["variants"]:
            d = {k: x for k, x in v["params"].items() if k not in ("M", "N", "K")} | v["opts"]
            print(f"{shp:>18} {json.dumps(d)[:60]:>60} {v['ms']:8.3f} {v['tflops']:8.1f} "
                  f"{v['x_cublas']:8.3f} {v['spread'][0]:.3f}-{v['spread'][1]:.3f}")
    print(json.dumps(summary, indent=1))
    return rows


def _measurement(v: dict) -> bool:
    return v["opts"].get("epilogue") == "none" or v["opts"].get("loads") is False


def perf_summary(rows: list[dict]) -> dict:
    """Per shape the printer's default variant (first in the list) and the fastest variant that
    writes C; their geomeans over the shapes (x cuBLAS); measurements are left out."""
    per, dflt, best = {}, [], []
    for r in rows:
        if "variants" not in r:
            continue
        real = [v for v in r["variants"] if not _measurement(v)]
        if not real:
            continue
        b = max(real, key=lambda v: v["x_cublas"])
        shp = "x".join(map(str, r["shape"]))
        per[shp] = {"default_x_cublas": real[0]["x_cublas"], "default_tflops": real[0]["tflops"],
                    "best_x_cublas": b["x_cublas"], "best_tflops": b["tflops"],
                    "best_variant": {k: x for k, x in b["params"].items() if k not in ("M", "N", "K")}
                    | b["opts"], "cublas_tflops": r["cublas_tflops"],
                    "clocks_after": r["clocks_after"]}
        dflt.append(real[0]["x_cublas"])
        best.append(b["x_cublas"])
    gm = lambda xs: statistics.geometric_mean(xs) if xs else None  # noqa: E731
    return {"shapes": per, "geomean_default_x_cublas": gm(dflt), "geomean_best_x_cublas": gm(best),
            "min_best_x_cublas": min(best) if best else None}


# ---------------------------------------------------------------------------- sanitizer
SANITIZER_MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cmath>
int main() {
  using namespace NS;
  const int M = SIZE_M, N = SIZE_N, K = SIZE_K;  // the launch's sizes (launch arguments)
  std::vector<__nv_bfloat16> a((size_t)M * K), b((size_t)N * K);
  std::vector<float> af(a.size()), bf(b.size());
  unsigned s = 12345u;
  auto rnd = [&]() { s = s * 1664525u + 1013904223u; return ((s >> 9) & 0xFFFF) / 32768.0f - 1.0f; };
  for (size_t i = 0; i < a.size(); ++i) { a[i] = __float2bfloat16(rnd()); af[i] = __bfloat162float(a[i]); }
  for (size_t i = 0; i < b.size(); ++i) { b[i] = __float2bfloat16(rnd()); bf[i] = __bfloat162float(b[i]); }
  void *dA, *dB, *dC;
  cudaMalloc(&dA, a.size() * 2); cudaMalloc(&dB, b.size() * 2); cudaMalloc(&dC, (size_t)M * N * 2);
  cudaMemcpy(dA, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
  if (B_KN) {  // the kernel takes B as K x N
    std::vector<__nv_bfloat16> bt(b.size());
    for (int j = 0; j < N; ++j) for (int k = 0; k < K; ++k) bt[(size_t)k * N + j] = b[(size_t)j * K + k];
    cudaMemcpy(dB, bt.data(), bt.size() * 2, cudaMemcpyHostToDevice);
  } else {
    cudaMemcpy(dB, b.data(), b.size() * 2, cudaMemcpyHostToDevice);
  }
  cudaMemset(dC, 0xFF, (size_t)M * N * 2);
  void *dW = nullptr, *dT = nullptr;
  if (WS_FLOATS) { cudaMalloc(&dW, (size_t)WS_FLOATS * 4); cudaMemset(dW, 0, (size_t)WS_FLOATS * 4); }
  if (TICKETS) { cudaMalloc(&dT, (size_t)TICKETS * 4); cudaMemset(dT, 0, (size_t)TICKETS * 4); }
  int rc = LAUNCH(dA, dB, dC, dW, dT, nullptr, M, N, K, K, B_KN ? N : K, N, SPLIT_NUMBERS, -1);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<__nv_bfloat16> c((size_t)M * N);
  cudaMemcpy(c.data(), dC, c.size() * 2, cudaMemcpyDeviceToHost);
  double num = 0, den = 0;
  for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) {
    double r = 0; for (int k = 0; k < K; ++k) r += (double)af[(size_t)i * K + k] * bf[(size_t)j * K + k];
    double d = __bfloat162float(c[(size_t)i * N + j]) - r; num += d * d; den += r * r;
  }
  std::printf("launch rc=%d sync=%s rel_err=%.3e\n", rc, cudaGetErrorString(e), std::sqrt(num / den));
  return (rc == 0 && e == cudaSuccess && std::sqrt(num / den) < 1e-2) ? 0 : 1;
}
"""


def device() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                               "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


GD = "examples/gemm_decomposition.py"  # the schedule behind `tilec gen` (its knobs: SWAP_AB, CM, CN)


def run_sanitizer(out: Path, only: str | None = None, tag: str = "") -> str:
    # exact release, sliced 2x2, TMA-store epilogue; Stream-K deterministic on a 2x1 cluster with
    # the general form (all-cluster release); split-K atomic without a cluster
    cases = [(dict(M=512, N=1024, K=192, BN=256, CM=2, CN=2, SMS=8), "sliced"),
             (dict(M=320, N=448, K=640, BN=128, CM=2, CN=1, SMS=4, DECOMP="streamk"), "leader"),
             (dict(M=200, N=256, K=600, BN=128, CM=1, CN=1, SMS=8, DECOMP="splitk", SPLITS=3,
                   FIXUP="atomic"), "leader"),
             (dict(M=256, N=320, K=384, BN=128, CM=1, CN=2, SMS=4, B_LAYOUT="kn",
                   DECOMP="streamk"), "sliced"),
             # session 7: one tile row (128x64, 8 stages, split-K 2, A last / B first) with the L2
             # prefetch; a grid rounded up to whole clusters (its last CTA dead)
             (dict(M=100, N=640, K=1000, BM=128, BN=64, CM=1, CN=1, SMS=16, DECOMP="splitk",
                   SPLITS=2, STAGES=8, PREFETCH=4), "leader"),
             (dict(M=300, N=700, K=128, BN=128, CM=4, CN=1, SMS=132), "leader"),
             # session 12: the 192-column tile the CUDA heuristic now weighs: B K x N (three
             # 64-column boxes) ragged, split-K 2 deterministic; B N x K under Stream-K
             (dict(M=300, N=1000, K=704, BN=192, CM=1, CN=1, SMS=8, B_LAYOUT="kn"), "leader"),
             (dict(M=333, N=576, K=1000, BN=192, CM=1, CN=1, SMS=8, B_LAYOUT="kn",
                   DECOMP="splitk", SPLITS=2), "leader"),
             (dict(M=256, N=600, K=512, BN=192, CM=1, CN=1, SMS=4, DECOMP="streamk"), "leader"),
             # session 13: the reduce-kernel fix-up (a second kernel sums the split-K slots):
             # ragged M and N on a 2x1 cluster (a dead tile), and 64-column tiles over more K
             # parts than CTAs (N = 200: 400-byte rows)
             (dict(M=200, N=264, K=1000, BN=128, CM=2, CN=1, SMS=8, DECOMP="splitk", SPLITS=4,
                   FIXUP="reduce_kernel"), "leader"),
             (dict(M=130, N=200, K=2000, BM=128, BN=64, CM=1, CN=1, SMS=4, DECOMP="splitk",
                   SPLITS=6, FIXUP="reduce_kernel", B_LAYOUT="kn"), "leader"),
             # session 13: the CUDA heuristic's 2x1 cluster for split-K where B's rows are off
             # 128 bytes (N = 1000, B K x N, deterministic, a dead tile row), no L2 hint
             (dict(M=500, N=1000, K=3000, BN=256, CM=2, CN=1, SMS=8, B_LAYOUT="kn",
                   DECOMP="splitk", SPLITS=4), "leader"),
             # session 14: the swapped kernel (SWAP_AB: our M on wgmma's N, BM a multiple of 8):
             # ragged M and N, direct and TMA-store epilogues, B K x N and N x K, split-K with the
             # deterministic fix-up and with the reduce kernel, a 2x1 cluster
             (dict(SCHEDULE=GD, M=200, N=328, K=640, BM=104, BN=64, SWAP_AB=1, SMS=8, CM=1, CN=1,
                   WARPS=8, DECOMP="dp", STAGES=4, B_LAYOUT="kn"), "leader"),
             (dict(SCHEDULE=GD, M=77, N=304, K=520, BM=80, BN=128, SWAP_AB=1, SMS=4, CM=1, CN=1,
                   DECOMP="dp", STAGES=4, B_LAYOUT="nk", EPILOGUE="tma"), "leader"),
             (dict(SCHEDULE=GD, M=333, N=264, K=1000, BM=168, BN=64, SWAP_AB=1, SMS=8, CM=1, CN=1,
                   WARPS=8, DECOMP="splitk", SPLITS=3, FIXUP="deterministic", B_LAYOUT="kn"), "leader"),
             (dict(SCHEDULE=GD, M=30, N=200, K=2000, BM=32, BN=64, SWAP_AB=1, SMS=8, CM=1, CN=1,
                   WARPS=8, DECOMP="splitk", SPLITS=6, FIXUP="reduce_kernel", B_LAYOUT="kn"), "leader"),
             (dict(SCHEDULE=GD, M=300, N=256, K=512, BM=160, BN=128, SWAP_AB=1, SMS=8, CM=2, CN=1,
                   DECOMP="dp", B_LAYOUT="kn"), "leader"),
             # session 15: the heuristic's new picks: swapped 168x128 (TMA stores) over several
             # waves of tiles per CTA, ragged M; swapped 168x64 at 7 stages; 128x256 split-K with
             # the reduce kernel on a 2x1 cluster; one 128x128 tile split 12 ways at 6 stages
             (dict(SCHEDULE=GD, M=340, N=512, K=400, BM=168, BN=128, SWAP_AB=1, SMS=4, CM=1, CN=1,
                   WARPS=12, DECOMP="dp", STAGES=4, B_LAYOUT="kn"), "leader"),
             (dict(SCHEDULE=GD, M=333, N=320, K=640, BM=168, BN=64, SWAP_AB=1, SMS=4, CM=1, CN=1,
                   WARPS=8, DECOMP="dp", STAGES=7, B_LAYOUT="kn"), "leader"),
             (dict(SCHEDULE=GD, M=256, N=512, K=4096, BM=128, BN=256, SMS=16, CM=2, CN=1, WARPS=12,
                   STAGES=4, DECOMP="splitk", SPLITS=4, FIXUP="reduce_kernel", B_LAYOUT="kn"), "leader"),
             (dict(SCHEDULE=GD, M=128, N=128, K=6400, BM=128, BN=128, SMS=16, CM=1, CN=1, WARPS=12,
                   STAGES=6, DECOMP="splitk", SPLITS=12, FIXUP="reduce_kernel", B_LAYOUT="kn"), "leader"),
             # session 16: the deterministic fix-up spread over 16 resident K parts (spread.py):
             # one 128x128 tile; 128x256 tiles on a 2x1 cluster, ragged M and N (a dead tile); the
             # swapped 104x64 tile, B N x K
             (dict(SCHEDULE=GD, M=128, N=128, K=2048, BM=128, BN=128, SMS=16, CM=1, CN=1, WARPS=12,
                   STAGES=6, DECOMP="splitk", SPLITS=16, FIXUP="deterministic", B_LAYOUT="kn"), "leader"),
             (dict(SCHEDULE=GD, M=100, N=304, K=2560, BM=128, BN=256, SMS=64, CM=2, CN=1, WARPS=12,
                   STAGES=4, DECOMP="splitk", SPLITS=16, FIXUP="deterministic", B_LAYOUT="kn"), "leader"),
             (dict(SCHEDULE=GD, M=100, N=200, K=2112, BM=104, BN=64, SWAP_AB=1, SMS=64, CM=1, CN=1,
                   WARPS=8, DECOMP="splitk", SPLITS=16, FIXUP="deterministic", B_LAYOUT="nk"), "leader")]
    cases = [c for c in cases if only is None or any(o in json.dumps(c[0]) for o in only.split("|"))]
    log = [f"device: {device()}  date: {DATE}"]
    for i, (params, mode) in enumerate(cases):
        plan = get_plan(params, mode)
        pr = CudaPrinter(plan)
        name = pr.cname
        wsf, tk = pr.workspace()
        numbers = ", ".join(map(str, launch_numbers(plan, plan.work)))  # grid, splits, sk_*
        src = emit(plan) + SANITIZER_MAIN.replace("NS", name).replace("LAUNCH", f"{name}_launch") \
            .replace("WS_FLOATS", str(wsf)).replace("TICKETS", str(tk)) \
            .replace("B_KN", str(int(not plan.b.transposed))).replace("SPLIT_NUMBERS", numbers) \
            .replace("SIZE_M", str(plan.M)).replace("SIZE_N", str(plan.N)).replace("SIZE_K", str(plan.K))
        exe = CACHE / f"sanitize_main{i}"
        cu = exe.with_suffix(".cu")
        cu.parent.mkdir(parents=True, exist_ok=True)
        cu.write_text(src)
        r = subprocess.run(["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-O2", "-std=c++17", "-lineinfo",
                            str(cu), "-o", str(exe)], capture_output=True, text=True)
        log.append(f"## {plan.name} {params} {mode}\n$ nvcc ... rc={r.returncode}\n{r.stdout}{r.stderr}")
        for tool in ("memcheck", "racecheck", "synccheck"):
            cmd = ["compute-sanitizer", "--tool", tool, str(exe)]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
                log.append(f"$ {' '.join(cmd)}  (rc={r.returncode})\n{r.stdout[-1500:]}{r.stderr[-800:]}")
            except subprocess.TimeoutExpired:
                log.append(f"$ {' '.join(cmd)}  TIMEOUT")
    text = "\n".join(log)
    (out / f"cuda_sanitizer_{DATE}{tag}.txt").write_text(text)
    print(text[-3000:], flush=True)
    return text


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--worker", default=None)
    ap.add_argument("--perf", default="all", choices=["all", "big", "small", "none"])
    ap.add_argument("--skip-correctness", action="store_true")
    ap.add_argument("--skip-sanitizer", action="store_true")
    ap.add_argument("--only", default=None,
                    help="run the correctness cases whose JSON has this text (a|b: either)")
    ap.add_argument("--sanitize-only", default=None,
                    help="run the sanitizer cases whose parameters' JSON has this text (a|b)")
    ap.add_argument("--shapes", default=None, help='JSON [[M, N, K], ...] instead of BIG')
    ap.add_argument("--variants", default=None,
                    help='JSON [[params, mode, opts], ...] instead of BIG_VARIANTS')
    ap.add_argument("--tag", default="", help="suffix of the perf JSON's name")
    args = ap.parse_args()
    if args.worker is not None:
        worker(json.loads(args.worker))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.skip_correctness:
        res = run_correctness(out, args.only, args.tag)
        print(f"correctness: {sum(bool(r.get('ok')) for r in res)}/{len(res)} ok", flush=True)
    if not args.skip_sanitizer:
        run_sanitizer(out, args.sanitize_only, args.tag)
    if args.perf != "none":
        run_perf(out, args.perf, args.shapes and json.loads(args.shapes),
                 args.variants and json.loads(args.variants), args.tag)


if __name__ == "__main__":
    main()
