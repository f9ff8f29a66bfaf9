"""The spread fix-up under concurrency, on the GPU: two CUDA GEMMs whose deterministic fix-up the
launcher spreads over their K parts (printer/spread.py), launched again and again on two streams at
once so that together they want more SMs than the device has.  A spread part waits for every part
of its tile; launched plainly, a grid that got only some of its SMs would wait on parts that cannot
start while the other grid holds the rest.  The launcher launches the spread cooperatively (every
CTA of the grid runs at once), so the pairs must finish.

Prints, per pair of kernels: whether each launch spread (the file's ``*_last_spread``), the
rounds done, the wall time, each result's error against an fp32 product, and whether two launches
gave the same bits; a watchdog ends the process (exit 3, "HANG") after ``--timeout`` seconds.
Writes the same as JSON to ``--out``.

    PYTHONPATH=. python bench/spread_streams.py --out bench/results/spread_streams_<card>_<date>.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

EX = Path(__file__).resolve().parents[1] / "examples" / "gemm_decomposition.py"
DET = dict(DECOMP="splitk", FIXUP="deterministic", GROUP_M=8, BK=64, SK_WAVES=1, LOAD="tma",
           SWAP_AB=0)
# (name, params): one 128x128 tile in 48 parts (48 CTAs); 128x256 tiles in 16 parts, 128 CTAs,
# without a cluster and on a 2x1 cluster (a cooperative launch of a cluster kernel may be refused:
# then it runs the ticket fix-up)
KERNELS = [
    ("one_tile_48", dict(M=128, N=128, K=65536, BM=128, BN=128, WARPS=12, STAGES=6, SPLITS=48, CM=1, CN=1)),
    ("few_tiles_16", dict(M=512, N=512, K=65536, BM=128, BN=256, WARPS=12, STAGES=4, SPLITS=16, CM=1, CN=1)),
    ("few_tiles_16_c2x1", dict(M=512, N=512, K=65536, BM=128, BN=256, WARPS=12, STAGES=4, SPLITS=16, CM=2,
                               CN=1)),
]
PAIRS = [("one_tile_48", "few_tiles_16"), ("few_tiles_16", "few_tiles_16"),
         ("one_tile_48", "few_tiles_16_c2x1"), ("few_tiles_16_c2x1", "few_tiles_16_c2x1")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    def watchdog() -> None:
        time.sleep(args.timeout)
        print(f"HANG: not done after {args.timeout:.0f} s", flush=True)
        os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()

    import torch

    from tilec.codegen.cuda.launch import build
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule

    kernels, data = {}, {}
    for name, p in KERNELS:
        plan = kernel_plan(load_schedule(EX, {**DET, **p, "B_LAYOUT": "nk"}, target="cuda", tuned=False),
                           target="cuda")
        # one kernel object per stream: a kernel object's workspace and tickets serve stream-ordered
        # launches only
        kernels[name] = (build(plan), build(plan))
        g = torch.Generator(device="cuda").manual_seed(len(data))
        A = torch.randn(p["M"], p["K"], device="cuda", generator=g).to(torch.bfloat16)
        B = torch.randn(p["N"], p["K"], device="cuda", generator=g).to(torch.bfloat16)
        data[name] = (A, B, (A.float() @ B.float().T))
    rows = []
    for a, b in PAIRS:
        streams = (torch.cuda.Stream(), torch.cuda.Stream())
        outs = [torch.empty(data[n][2].shape, device="cuda", dtype=torch.bfloat16) for n in (a, b)]
        firsts: list = [None, None]
        spread = [None, None]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for r in range(args.rounds):
            for i, (n, s) in enumerate(zip((a, b), streams, strict=True)):
                A, B, _ = data[n]
                k = kernels[n][i]
                with torch.cuda.stream(s):
                    k(A, B, outs[i], stream=s)
                    if spread[i] is None:
                        spread[i] = int(getattr(k.lib, f"{k.printer.cname}_last_spread")())
                    if r == 0:
                        firsts[i] = outs[i].clone()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
        errs = [float(torch.linalg.norm(o.float() - data[n][2]) / torch.linalg.norm(data[n][2]))
                for o, n in zip(outs, (a, b), strict=True)]
        same = [bool(torch.equal(o, f)) for o, f in zip(outs, firsts, strict=True)]
        row = dict(pair=[a, b], spread=spread, rounds=args.rounds, wall_s=round(wall, 3),
                   rel_err=errs, same_bits=same)
        rows.append(row)
        print(json.dumps(row), flush=True)
    doc = dict(device=torch.cuda.get_device_name(), date=time.strftime("%Y-%m-%d"),
               script="bench/spread_streams.py", rows=rows)
    if args.out:
        Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    ok = all(max(r["rel_err"]) < 1e-2 and all(r["same_bits"]) for r in rows)
    print("all finished;", "correct and repeatable" if ok else "WRONG", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
