"""(Session 19: ran with bench/results/s19_pointer_loads.diff applied, the pointer-load path that
was measured and not kept; without it the launcher refuses such rows. Output:
bench/results/cuda_sanitizer_library_h200_2026-11-29_s19_pointer_loads.txt.)

The CUDA kernel's pointer loads (an A or B whose rows TMA cannot take: a row stride off 16
bytes or a base off a 16-byte boundary; tilec::ptr_box), on the GPU through ``tilec gen``'s
launcher (tilec.codegen.cuda.launch), with no copy of A or B.

    python bench/probe_pointer_loads.py prepare DIR     # CPU: plans and sources (pickled)
    python bench/probe_pointer_loads.py run DIR         # GPU: nvcc, then every case

Each case runs a plan of examples/gemm_decomposition.py (its heuristic at the shape, or knobs
given: a 2x1 cluster with multicast, a swapped tile, B given N x K) at M x N x K with A and B
as views that start ``offset`` elements into their buffers and have rows of ``ld`` elements
(so the base, the stride or both are off 16 bytes), into a NaN-poisoned C, against an fp32
reference (relative Frobenius error < 2e-2, no NaN). Prints one line per case and
``all correct`` or the failures (exit 1).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEMM = ROOT / "examples" / "gemm_decomposition.py"

# (M, N, K, knobs, A offset, A row padding, B offset, B row padding): elements
CASES = [
    (1000, 1000, 1000, {}, 0, 0, 0, 0),           # K, N = 1000: rows of 2000 bytes
    (1000, 1000, 1000, {}, 1, 0, 3, 0),           # and bases 2 / 6 bytes off
    (512, 512, 1024, {}, 1, 0, 0, 0),             # rows on 16 bytes, A's base off
    (512, 512, 1024, {}, 0, 2, 0, 4),             # rows padded to 4-byte / 8-byte multiples
    (4096, 4096, 4100, {"CM": 2, "CN": 1}, 0, 0, 0, 0),   # 2x1 cluster, B multicast, K % 8 = 4
    (135, 4096, 7173, {}, 0, 0, 0, 0),            # the half-wave swapped tile, split-K 2
    (9, 7168, 2050, {}, 0, 0, 0, 0),              # the decode 16x128 swapped tile
    (777, 1001, 515, {"B_LAYOUT": "nk"}, 0, 0, 1, 0),     # B given N x K
    (3, 355, 3794, {}, 0, 0, 0, 0),               # split-K with the reduce kernel
]


def prepare(folder: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from dispatch_cuda import _lower  # type: ignore[import-not-found]

    from tilec.codegen.cuda.printer import emit

    folder.mkdir(parents=True, exist_ok=True)
    plans = []
    for M, N, K, knobs, *_ in CASES:
        _, plan = _lower(GEMM, {"M": M, "N": N, "K": K, **knobs})
        plans.append((plan, emit(plan)))
    (folder / "plans.pkl").write_bytes(pickle.dumps(plans))
    print(f"prepared {len(plans)} plans into {folder}")


def run(folder: Path) -> int:
    import concurrent.futures

    import torch

    from tilec.codegen.cuda.launch import build

    plans = pickle.loads((folder / "plans.pkl").read_bytes())
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        kernels = list(pool.map(lambda ps: build(ps[0], cache_dir=folder, source=ps[1]), plans))
    bad = []
    for (M, N, K, knobs, ao, ap, bo, bp), kern in zip(CASES, kernels, strict=True):
        g = torch.Generator(device="cuda").manual_seed(M + N + K)
        dt = torch.bfloat16
        nk = knobs.get("B_LAYOUT") == "nk"
        b_rows, b_cols = (N, K) if nk else (K, N)

        def view(rows: int, cols: int, off: int, pad: int) -> torch.Tensor:
            buf = torch.randn(off + rows * (cols + pad), device="cuda", dtype=dt, generator=g)
            return buf[off:].view(rows, cols + pad)[:, :cols]

        a, b = view(M, K, ao, ap), view(b_rows, b_cols, bo, bp)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
        kern(a, b, c)
        ref = a.float() @ (b.float().t() if nk else b.float())
        err = ((c.float() - ref).norm() / ref.norm()).item()
        nan = int(c.isnan().sum().item())
        ok = nan == 0 and err < 2e-2
        print(f"{M}x{N}x{K} {knobs or ''} A at +{ao} ld {a.stride(0)}, B at +{bo} ld {b.stride(0)}: "
              f"{kern.plan.name}; rel err {err:.2e}, {nan} NaN: {'ok' if ok else 'WRONG'}",
              flush=True)
        if not ok:
            bad.append((M, N, K))
    torch.cuda.synchronize()
    print("all correct" if not bad else f"wrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    what, folder = sys.argv[1], Path(sys.argv[2])
    sys.exit(prepare(folder) if what == "prepare" else run(folder))
