"""Configs around the heuristic's choice on the shapes where the one-command path trails cuBLAS
(bench/results/pipeline_h200_2026-11-23_first.json): each built from examples/gemm_decomposition.py
through the pipeline (tilec.runtime.autotune.measure), timed beside torch.matmul in the same run
(5 rounds each, do_bench median with L2 flushed). Writes $OUT/explore.json (round 1) or
$OUT/explore_r2.json.

Round 1 (results: bench/results/explore_heuristic_h200_2026-11-23.json): the tiles the heuristic
knew. Round 2: for the shapes still below 0.9x in bench/results/pipeline_h200_2026-11-23.json,
the 128x256 tile with more splits, Stream-K instead of split-K, the reduce-kernel fix-up, and
the other decompositions of wave_1664 / wave_3328. Round 3 (session 6): DP against DP + Stream-K
on every large shape (below).

    PYTHONPATH=. python bench/explore_heuristic.py [--round 2|3]
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

from tilec.runtime.autotune import measure  # noqa: E402
from tilec.runtime.bench import time_ms  # noqa: E402

EX = ROOT / "examples" / "gemm_decomposition.py"


def cfg(BM, BN, BK, D="dp", S=1, st=3, w=8, g=8, fix="deterministic", sk=1):
    return dict(BM=BM, BN=BN, BK=BK, DECOMP=D, SPLITS=S, STAGES=st, WARPS=w, GROUP_M=g,
                FIXUP=fix, SK_WAVES=sk)


ROUND1 = {
    (512, 512, 65536): [cfg(128, 128, 64, "splitk", 8, 4), cfg(128, 128, 128, "splitk", 8, 3),
                        cfg(128, 128, 64, "splitk", 8, 6), cfg(64, 128, 128, "splitk", 8, 4, 4),
                        cfg(64, 64, 128, "splitk", 4, 6, 4), cfg(128, 128, 64, "splitk", 8, 4,
                                                                   fix="atomic"),
                        cfg(128, 64, 128, "splitk", 8, 4, 4), cfg(64, 128, 64, "splitk", 8, 6, 4)],
    (1664, 1664, 8192): [cfg(128, 128, 64, "skpp", 1, 4), cfg(128, 128, 64, "skpp", 1, 5),
                         cfg(128, 128, 64, "skpp", 1, 3, 4), cfg(128, 256, 64, "dp", 1, 4),
                         cfg(128, 128, 128, "skpp", 1, 3), cfg(128, 256, 64, "skpp", 1, 3),
                         cfg(256, 128, 64, "dp_1sk", 1, 3), cfg(128, 128, 64, "dp", 1, 5),
                         cfg(128, 256, 64, "dp", 1, 3, g=16)],
    (1024, 1024, 1024): [cfg(64, 128, 128, "dp", 1, 4, 4), cfg(64, 128, 64, "dp", 1, 5, 4),
                         cfg(128, 128, 64, "dp", 1, 4, 4), cfg(64, 64, 128, "dp", 1, 4, 4),
                         cfg(128, 64, 128, "dp", 1, 3, 4)],
    (1024, 1024, 32768): [cfg(128, 128, 64, "splitk", 2, 4), cfg(128, 128, 64, "splitk", 2, 5),
                          cfg(128, 128, 128, "splitk", 2, 3), cfg(128, 128, 64, "splitk", 3, 4),
                          cfg(128, 256, 64, "splitk", 4, 4), cfg(128, 128, 64, "sk2_dp", 1, 4)],
    (2304, 2304, 8192): [cfg(128, 256, 64, "dp", 1, 3), cfg(128, 256, 64, "dp", 1, 4),
                         cfg(128, 128, 64, "dp", 1, 5), cfg(256, 128, 64, "dp", 1, 4)],
}


ROUND2 = {
    (512, 512, 65536): [cfg(128, 128, 64, "splitk", 8, 4), cfg(128, 256, 64, "splitk", 16, 3),
                        cfg(128, 256, 64, "splitk", 16, 4), cfg(256, 128, 64, "splitk", 16, 3),
                        cfg(128, 256, 64, "splitk", 8, 3), cfg(128, 256, 64, "streamk", 1, 3),
                        cfg(128, 128, 64, "streamk", 1, 5), cfg(128, 256, 64, "splitk", 16, 3,
                                                                fix="atomic"),
                        cfg(128, 128, 64, "splitk", 8, 4, fix="reduce_kernel"),
                        cfg(128, 256, 64, "splitk", 16, 3, fix="reduce_kernel"),
                        cfg(128, 128, 64, "splitk", 4, 4), cfg(128, 128, 128, "splitk", 8, 4),
                        cfg(128, 128, 64, "splitk", 8, 3, 4)],
    (1664, 1664, 8192): [cfg(128, 128, 64, "skpp", 1, 5), cfg(128, 256, 64, "streamk", 1, 3),
                         cfg(256, 128, 64, "streamk", 1, 3), cfg(128, 256, 64, "dp_1sk", 1, 3),
                         cfg(128, 256, 64, "sk2_dp", 1, 3), cfg(128, 128, 64, "streamk", 1, 5),
                         cfg(128, 256, 64, "splitk", 2, 3), cfg(256, 128, 64, "splitk", 2, 3)],
    (3328, 3328, 8192): [cfg(128, 256, 64, "dp_1sk", 1, 3), cfg(128, 256, 64, "dp", 1, 3),
                         cfg(128, 128, 64, "dp", 1, 5), cfg(128, 128, 64, "skpp", 1, 5),
                         cfg(256, 128, 64, "dp_1sk", 1, 3), cfg(128, 256, 64, "dp", 1, 4)],
    (1024, 1024, 32768): [cfg(128, 128, 64, "splitk", 2, 5), cfg(128, 256, 64, "splitk", 4, 3),
                          cfg(128, 128, 64, "streamk", 1, 5), cfg(128, 256, 64, "streamk", 1, 3)],
}
# Round 3: the data-parallel wave tail against the Stream-K decompositions on every shape the
# heuristic treats as large (the suite's eight and four LLM-like shapes it does not name), to
# calibrate the cost model's view of a partial last wave.
_LARGE = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (1664, 1664, 8192),
          (2304, 2304, 8192), (3328, 3328, 8192), (1408, 1920, 16384), (4095, 4097, 4100),
          (4096, 14336, 4096), (8192, 4096, 4096), (2048, 2048, 8192), (6144, 6144, 2048)]
ROUND3 = {s: [cfg(128, 256, 64, "dp"), cfg(128, 256, 64, "dp_1sk"), cfg(128, 256, 64, "skpp"),
              cfg(128, 128, 64, "dp", 1, 5), cfg(128, 128, 64, "skpp", 1, 5),
              cfg(256, 128, 64, "dp")] for s in _LARGE}
# Round 4 (session 7): wave_1664, the suite's slowest large shape (0.85x with 128x128 DP + Stream-K
# at 5 stages, one CTA per SM): two CTAs per SM (3 stages of 128x128x64 = 96 KB each) run all 169
# tiles in one wave; and the new split-K choice of the skinny shapes beside the old one.
ROUND4 = {
    (1664, 1664, 8192): [cfg(128, 128, 64, "skpp", 1, 5), cfg(128, 128, 64, "dp", 1, 3),
                         cfg(128, 128, 64, "dp", 1, 3, 4), cfg(128, 128, 64, "dp", 1, 2),
                         cfg(128, 128, 64, "skpp", 1, 3), cfg(128, 128, 128, "dp", 1, 2),
                         cfg(64, 256, 64, "dp", 1, 3), cfg(128, 256, 64, "dp", 1, 3)],
    (512, 512, 65536): [cfg(128, 128, 64, "splitk", 8, 5),
                        cfg(128, 256, 64, "splitk", 16, 3, fix="reduce_kernel")],
}
ROUNDS = {1: ROUND1, 2: ROUND2, 3: ROUND3, 4: ROUND4}


def main() -> int:
    rnd = int(sys.argv[sys.argv.index("--round") + 1]) if "--round" in sys.argv else 1
    rows = []
    out = Path(os.environ.get("OUT", ".")) / ("explore.json" if rnd == 1 else f"explore_r{rnd}.json")
    for (M, N, K), configs in ROUNDS[rnd].items():
        a = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
        b = torch.randn((K, N), device="cuda", dtype=torch.bfloat16)
        cub = [time_ms(lambda a=a, b=b: torch.matmul(a, b)) for _ in range(5)]
        for c in configs:
            cub.append(time_ms(lambda a=a, b=b: torch.matmul(a, b)))  # the peer between configs
            cm = statistics.median(cub)
            m = measure(EX, {"M": M, "N": N, "K": K, **c},
                        timer=lambda fn: statistics.median(time_ms(fn) for _ in range(5)))
            r = {"M": M, "N": N, "K": K, "config": c, "ms": m.ms, "ok": m.ok, "error": m.error,
                 "cublas_ms": cm, "vs_cublas": cm / m.ms if m.ms else None}
            rows.append(r)
            print(M, N, K, c, f"{r['vs_cublas']:.3f}x" if m.ms else m.error, flush=True)
        # written after every shape: a run cut by the time limit keeps what it measured
        out.write_text(json.dumps({"device": torch.cuda.get_device_name(0), "rows": rows},
                                  indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
