"""On a GPU (sm_90): one CUDA kernel per configuration, launched at shapes it was not lowered at
(ragged, K < BK, one row, empty), both variants, against an fp32 product with a NaN-poisoned C.

    PYTHONPATH=. python -m pytest -q -m gpu tests/codegen/test_cuda_gpu.py
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.codegen.cuda_plans import seed
from tilec.ir import ceil_div
from tilec.transforms.plan import MulticastMode

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
    reason="needs an sm_90 GPU")]

L, S = MulticastMode.LEADER, MulticastMode.SLICED
REF = dict(M=1024, N=2048, K=512)
CONFIGS = [
    (dict(BM=128, BN=256, CM=2, CN=1, SMS=132, B_LAYOUT="kn"), L, True),
    (dict(BM=128, BN=256, CM=2, CN=2, SMS=132), S, True),
    (dict(BM=128, BN=128, CM=1, CN=2, SMS=132, EPILOGUE="direct"), L, False),
    (dict(BM=128, BN=256, CM=1, CN=1, SMS=132, DECOMP="splitk", SPLITS=3,
          FIXUP="deterministic"), L, True),
    (dict(BM=128, BN=256, CM=1, CN=2, SMS=132, DECOMP="streamk", FIXUP="atomic"), L, True),
    (dict(BM=128, BN=256, CM=2, CN=1, SMS=132, DECOMP="dp_1sk"), L, True),
]
SHAPES = [(1024, 2048, 512), (1000, 1100, 776), (777, 304, 40), (1, 8, 8), (4096, 4096, 1024),
          (128, 4096, 7168), (0, 16, 16), (16, 16, 0), (4095, 4097, 4100)]


def _kernels() -> list[Any]:
    from tilec.codegen.cuda.launch import build

    plans = [seed(mode, closed, **cfg, **REF) for cfg, mode, closed in CONFIGS]
    with ThreadPoolExecutor(max_workers=6) as ex:
        return list(ex.map(build, plans))


@pytest.fixture(scope="module")
def kernels() -> list[Any]:
    return _kernels()


def _padded(cols: int) -> int:
    return ceil_div(cols, 8) * 8


def _run(k: Any, M: int, N: int, K: int, variant: str | None, seed_: int) -> tuple[float, int]:
    g = torch.Generator(device="cuda").manual_seed(seed_)
    A = torch.empty(M, _padded(K), device="cuda", dtype=torch.bfloat16)[:, :K]
    A.copy_(torch.randn(M, K, device="cuda", generator=g))
    b_shape = (N, K) if k.plan.b.transposed else (K, N)
    B = torch.empty(b_shape[0], _padded(b_shape[1]), device="cuda", dtype=torch.bfloat16)[:, :b_shape[1]]
    B.copy_(torch.randn(*b_shape, device="cuda", generator=g))
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    k(A, B, C, variant=variant)
    torch.cuda.synchronize()
    ref = A.float() @ (B.float().T if k.plan.b.transposed else B.float())
    nan = int(torch.isnan(C).sum())
    if M * N == 0:
        return 0.0, nan
    if K == 0:
        return float(C.float().abs().max()), nan
    return float(torch.linalg.norm(C.float() - ref) / torch.linalg.norm(ref)), nan


@pytest.mark.parametrize("i", range(len(CONFIGS)))
def test_one_kernel_at_every_shape(kernels: list[Any], i: int) -> None:
    k = kernels[i]
    bad = []
    for M, N, K in SHAPES:
        ran = k.variant(M, N, K) if M * N * K else "none"
        for variant in (None, "general"):
            err, nan = _run(k, M, N, K, variant, M + N + K)
            if nan or err > 1e-2:
                bad.append((M, N, K, variant or ran, err, nan))
    assert not bad, bad
