"""The SIMT CUDA printer: generated kernels compile with nvcc for sm_90a (in parallel)."""

from __future__ import annotations

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from simt_helpers import load

from tilec.codegen.cuda_simt import emit_simt
from tilec.transforms.simt import lower_simt

KERNELS = {
    "naive": ("coalescing_naive.py", dict(M=511, N=769, K=333)),
    "coalesced": ("coalescing_coalesced.py", dict(M=1024, N=1024, K=1024)),
    "smem": ("simt_sgemm.py", dict(M=1000, N=1000, K=1001, KIND="smem")),
    "reg1d": ("simt_sgemm.py", dict(M=511, N=769, K=333, KIND="reg1d")),
    "reg2d": ("simt_sgemm.py", dict(M=1024, N=1024, K=1024, KIND="reg2d")),
    "vec": ("simt_sgemm.py", dict(M=1000, N=1000, K=1001, KIND="vec")),
}


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    return {k: emit_simt(lower_simt(load(p, **q), name=k)) for k, (p, q) in KERNELS.items()}


@pytest.fixture(scope="module")
def compiled(sources: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: the CUDA compile tests need the CUDA toolkit")
    d = tmp_path_factory.mktemp("simt_cu")

    def build(item: tuple[str, str]) -> tuple[str, str]:
        name, src = item
        cu = Path(d) / f"{name}.cu"
        cu.write_text(src)
        r = subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O1", "-c", str(cu),
                            "-o", str(cu.with_suffix(".o"))], capture_output=True, text=True)
        return name, "" if r.returncode == 0 else r.stderr

    with ThreadPoolExecutor(len(sources)) as pool:
        return dict(pool.map(build, sources.items()))


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_compiles_for_sm90a(name: str, compiled: dict[str, str]) -> None:
    assert compiled[name] == "", compiled[name]


def test_printed_features_follow_the_plan(sources: dict[str, str]) -> None:
    vec, naive, smem = sources["vec"], sources["naive"], sources["smem"]
    assert 'extern "C" int tilec_launch_vec(' in vec
    assert "reinterpret_cast<const float4*>(&As[buf]" in vec  # 128-bit shared reads of A
    assert "reinterpret_cast<float4*>(&C[m * N + n])" in vec  # 128-bit C stores, N=1000
    assert "& 15) return -1" in vec
    assert "__shared__" not in naive and "__syncthreads" not in naive
    assert "if (((32*bidx + tidx < 511) && (32*bidy + tidy < 769)))" in naive  # predicated edge
    assert "((32*bidx + tidx < 511)) ? A[" in naive  # predicated load
    assert "store_tile(buf ^ 1)" in smem  # double-buffered
    assert "__shared__" in smem
