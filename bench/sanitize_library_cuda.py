"""A CUDA built library's launches under compute-sanitizer, on the GPU: the module's own path
(operands copied into row-padded buffers, the work split's numbers and the fix-up workspace it
sizes itself, the padded out copied back), not a harness's.

    compute-sanitizer --tool memcheck python bench/sanitize_library_cuda.py MODULE.py [MxNxK ...]

(with shapes given, only those of the cases below)

Runs ``matmul`` at each case below into a NaN-poisoned out, checks it against torch.matmul in
fp32 (relative error < 2e-2, no NaN) and prints one line per case and ``all correct`` or the
failures (exit 1). The cases cover the kinds the module launches: rows off 16 bytes (A, B and C
padded), swapped split-K with the ticket fix-up, the spread sum (48 parts, cooperative), the
reduce kernel on a 2x1 cluster, data-parallel on ragged sizes, the swapped 104-row tile, and
the half-wave rule's swapped 136-row tile in two K parts on ragged M (session 18), and session
19's rules: that tile whole (132 x 4096 x 4096), 136-row swapped tiles of 128 columns past 1024
rows (1062 x 4096 x 14336), 176 rows in one tile (171 x 14336 x 4096), the decode 16x128 tile
whole and in two K parts (9 x 7168 x 2048, 9 x 4608 x 3584); and more shapes whose rows TMA
cannot take (N or K off a multiple of 8: the copies into padded rows) on decode, split-K and
data-parallel tiles.
"""

from __future__ import annotations

import importlib.util
import sys

import torch

CASES = [(37, 100, 36), (1, 6144, 4096), (128, 128, 65536), (512, 512, 65536),
         (1000, 1000, 1000), (200, 4096, 7168), (135, 4096, 7168), (132, 4096, 4096),
         (1062, 4096, 14336), (171, 14336, 4096), (9, 7168, 2048), (9, 4608, 3584),
         (66, 1676, 4254), (5, 3778, 7331), (1, 572, 524), (287, 547, 874), (1388, 1434, 386),
         (2048, 2048, 4100), (1062, 4096, 7168)]  # the last: 1062 rows' tile at half the K


def main() -> int:
    spec = importlib.util.spec_from_file_location("sanitized", sys.argv[1])
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    bad = []
    only = {tuple(map(int, a.split("x"))) for a in sys.argv[2:]}
    for M, N, K in [c for c in CASES if not only or c in only]:
        g = torch.Generator(device="cuda").manual_seed(M + N + K)
        dt = getattr(torch, mod.DTYPE)
        a = torch.randn((M, K), device="cuda", dtype=dt, generator=g)
        b = torch.randn((K, N), device="cuda", dtype=dt, generator=g)
        out = torch.full((M, N), float("nan"), device="cuda", dtype=getattr(torch, mod.OUT_DTYPE))
        mod.matmul(a, b, out=out)
        ref = a.float() @ b.float()
        err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
        nan = int(out.isnan().sum().item())
        ok = nan == 0 and err < 2e-2
        print(f"{M}x{N}x{K}: {mod.explain(M, N, K).splitlines()[0].split(': ', 1)[1]}; "
              f"rel err {err:.2e}, {nan} NaN: {'ok' if ok else 'WRONG'}", flush=True)
        if not ok:
            bad.append((M, N, K))
    torch.cuda.synchronize()
    print("all correct" if not bad else f"wrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
