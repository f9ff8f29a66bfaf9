"""Where a split-K kernel's time goes on the deep-K shapes: the GEMM kernel's own GPU time against
its fix-up, kernel by kernel (torch.profiler), for configs built from
examples/gemm_decomposition.py through the pipeline (tilec.runtime.autotune.build); cuBLAS beside.
The reduce-kernel fix-up separates the two (the GEMM kernel only writes partials); the
deterministic and atomic fix-ups run inside the GEMM kernel.

    PYTHONPATH=. python bench/fixup_probe.py [--round 1]
        (GPU; writes $OUT/fixup_probe_r2.json, or $OUT/fixup_probe.json for round 1)

Round 1 (bench/results/fixup_probe_h200_2026-11-23.json) timed the kernels only, with the reduce
kernel's one program per tile; round 2 (..._r2_...) after it was spread over row strips, with
the whole call's time too.

Per config: 30 replays, the L2 flushed (256 MB zeroed) before each, median duration per kernel
name; and the whole call's time (tilec.runtime.bench.time_ms: launches hidden, L2 flushed,
median), what the pipeline bench measures; 3 rounds alternated with torch.matmul.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from tilec.runtime.autotune import build  # noqa: E402
from tilec.runtime.bench import time_ms  # noqa: E402

EX = ROOT / "examples" / "gemm_decomposition.py"


def cfg(BM, BN, BK, D, S, st, fix, w=8):
    return dict(BM=BM, BN=BN, BK=BK, DECOMP=D, SPLITS=S, STAGES=st, WARPS=w, GROUP_M=8,
                FIXUP=fix, SK_WAVES=1)


CONFIGS_R1 = {
    (512, 512, 65536): [
        cfg(128, 128, 64, "splitk", 8, 4, "deterministic"),
        cfg(128, 128, 64, "splitk", 8, 4, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 16, 3, "reduce_kernel"),
        cfg(256, 128, 64, "splitk", 16, 3, "reduce_kernel"),
        cfg(128, 128, 64, "splitk", 16, 3, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 8, 3, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 16, 3, "atomic"),
    ],
    (1024, 1024, 32768): [
        cfg(128, 128, 64, "splitk", 2, 5, "deterministic"),
        cfg(128, 128, 64, "splitk", 2, 5, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 4, 3, "reduce_kernel"),
    ],
}


# round 2: the reduce kernel spread over row strips (two programs per GEMM CTA at least)
CONFIGS = {
    (512, 512, 65536): [
        cfg(128, 128, 64, "splitk", 8, 4, "deterministic"),
        cfg(128, 128, 64, "splitk", 8, 4, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 16, 3, "reduce_kernel"),
        cfg(256, 128, 64, "splitk", 16, 3, "reduce_kernel"),
        cfg(128, 128, 64, "splitk", 8, 5, "reduce_kernel"),
        cfg(128, 128, 128, "splitk", 8, 3, "reduce_kernel"),
    ],
    (1024, 1024, 32768): [
        cfg(128, 128, 64, "splitk", 2, 5, "deterministic"),
        cfg(128, 128, 64, "splitk", 2, 5, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 4, 3, "reduce_kernel"),
        cfg(128, 128, 64, "splitk", 4, 4, "reduce_kernel"),
    ],
    (16, 4096, 4096): [
        cfg(16, 64, 256, "splitk", 2, 3, "deterministic", 4),
        cfg(16, 64, 256, "splitk", 2, 3, "reduce_kernel", 4),
    ],
    (128, 4096, 7168): [
        cfg(64, 128, 64, "splitk", 2, 4, "deterministic", 4),
        cfg(64, 128, 64, "splitk", 2, 4, "reduce_kernel", 4),
        cfg(128, 128, 64, "splitk", 4, 4, "reduce_kernel"),
        cfg(128, 256, 64, "splitk", 8, 3, "reduce_kernel"),
    ],
}


def kernel_us(fn, n=30) -> dict[str, float]:
    cache = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            cache.zero_()
            fn()
        torch.cuda.synchronize()
    per: dict[str, list[float]] = {}
    for e in prof.events():
        if e.device_type.name == "CUDA" and "zero" not in e.name and "fill" not in e.name:
            per.setdefault(e.name, []).append(e.time_range.elapsed_us())
    return {k: statistics.median(v) for k, v in per.items()}


def main() -> int:
    first = "--round" in sys.argv and sys.argv[sys.argv.index("--round") + 1] == "1"
    rows = []
    for (M, N, K), configs in (CONFIGS_R1 if first else CONFIGS).items():
        a = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
        b = torch.randn((K, N), device="cuda", dtype=torch.bfloat16)
        built = [(c, build(EX, {"M": M, "N": N, "K": K, **c})) for c in configs]
        for _ in range(3):
            cub = kernel_us(lambda a=a, b=b: torch.matmul(a, b))
            cub_ms = time_ms(lambda a=a, b=b: torch.matmul(a, b))
            rows.append({"M": M, "N": N, "K": K, "config": "cublas", "us": cub, "ms": cub_ms})
            print(M, N, K, "cublas", {k[:40]: round(v, 1) for k, v in cub.items()}, flush=True)
            for c, bt in built:
                if bt.run is None:
                    rows.append({"M": M, "N": N, "K": K, "config": c,
                                 "error": bt.measurement.error})
                    continue
                us = kernel_us(bt.run)
                ms = time_ms(bt.run)
                rows.append({"M": M, "N": N, "K": K, "config": c, "us": us, "ms": ms,
                             "vs_cublas": cub_ms / ms})
                print(M, N, K, c["BM"], c["BN"], c["BK"], c["SPLITS"], c["STAGES"], c["FIXUP"],
                      {k[:14]: round(v, 1) for k, v in us.items() if "elementwise" not in k},
                      f"call {ms * 1e3:.1f} us = {cub_ms / ms:.3f}x cuBLAS", flush=True)
    out = Path(os.environ.get("OUT", ".")) / ("fixup_probe.json" if first else "fixup_probe_r2.json")
    out.write_text(json.dumps({"device": torch.cuda.get_device_name(0), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
