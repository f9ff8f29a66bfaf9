"""A CUDA built library's launches under compute-sanitizer, on the GPU: the module's own path
(operands copied into row-padded buffers, the work split's numbers and the fix-up workspace it
sizes itself, the padded out copied back), not a harness's.

    compute-sanitizer --tool memcheck python bench/sanitize_library_cuda.py MODULE.py

Runs ``matmul`` at each case below into a NaN-poisoned out, checks it against torch.matmul in
fp32 (relative error < 2e-2, no NaN) and prints one line per case and ``all correct`` or the
failures (exit 1). The cases cover the kinds the module launches: rows off 16 bytes (A, B and C
padded), swapped split-K with the ticket fix-up, the spread sum (48 parts, cooperative), the
reduce kernel on a 2x1 cluster, data-parallel on ragged sizes, the swapped 104-row tile, and
the half-wave rule's swapped 136-row tile in two K parts on ragged M (session 18; not yet run
under the sanitizer when it was added: the session's device time was spent).
"""

from __future__ import annotations

import importlib.util
import sys

import torch

CASES = [(37, 100, 36), (1, 6144, 4096), (128, 128, 65536), (512, 512, 65536),
         (1000, 1000, 1000), (200, 4096, 7168), (135, 4096, 7168)]


def main() -> int:
    spec = importlib.util.spec_from_file_location("sanitized", sys.argv[1])
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    bad = []
    for M, N, K in CASES:
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
