"""Every example through ``tilec gen`` for every target it supports, and the output checked:

* Triton source imported and run in the CPU interpreter (TRITON_INTERPRET=1) on a small ragged
  size, against torch in float64, with C poisoned by NaN (every element must be written);
* CUDA source compiled with ``nvcc -gencode=arch=compute_90a,code=sm_90a -c``, all files in
  parallel (skipped with the reason when nvcc is not on PATH);
* a target an example does not support is refused with one line, exit status 2.

Sizes are small (the interpreter runs each tl.dot in numpy); fp16 and fp32 (ieee), since the
interpreter gets bf16 dots wrong.
"""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"

import importlib.util
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from tilec.app.cli import main

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"

Params = dict[str, object]

# (id, example, params): Triton, run in the interpreter
TRITON: list[tuple[str, str, Params]] = [
    ("basic", "gemm_basic.py", dict(M=96, N=80, K=72, BM=32, BN=32, BK=16, DTYPE="fp16")),
    ("basic-fp32-nk", "gemm_basic.py",
     dict(M=50, N=40, K=24, BM=16, BN=32, BK=16, DTYPE="fp32", B_LAYOUT="nk")),
    ("grouped", "grouped_raster.py",
     dict(M=160, N=96, K=48, BM=32, BN=32, BK=16, GROUP_M=2, DTYPE="fp16")),
    ("seed004", "seed004_persistent_cluster.py",
     dict(M=128, N=256, K=64, BM=32, BN=64, BK=32, CM=2, CN=1, SMS=4, CLUSTER=2, DTYPE="fp16")),
    ("tutorial", "my_gemm.py",
     dict(M=256, N=512, K=128, BM=64, BN=64, BK=32, SMS=4, CN=2, DTYPE="fp16")),
    ("decomp-auto", "gemm_decomposition.py",
     dict(M=64, N=64, K=512, BM=32, BN=32, BK=32, GROUP_M=2, SMS=8, DTYPE="fp16")),
    ("splitk", "split_k.py",
     dict(M=64, N=48, K=200, BM=32, BN=32, BK=32, SPLITS=3, FIXUP="deterministic", DTYPE="fp16")),
    *[(f"streamk-{d}", "stream_k.py",
       dict(M=96, N=96, K=80, BM=32, BN=32, BK=16, SMS=4, DECOMP=d, SK_WAVES=2, DTYPE="fp16"))
      for d in ("streamk", "dp_1sk", "sk2_dp", "skpp")],
]

# (id, example, params, extra args): CUDA, compiled for sm_90a
CUDA: list[tuple[str, str, Params, list[str]]] = [
    ("basic", "gemm_basic.py",
     dict(M=192, N=160, K=256, BM=64, BN=64, BK=64, DTYPE="fp16", B_LAYOUT="nk"), []),
    ("grouped", "grouped_raster.py",
     dict(M=512, N=384, K=256, GROUP_M=2, B_LAYOUT="nk"), []),
    ("seed004-leader", "seed004_persistent_cluster.py",
     dict(M=1024, N=1024, K=512, SMS=8, CLUSTER=4, CM=2, CN=2), []),
    ("seed004-sliced", "seed004_persistent_cluster.py",
     dict(M=1024, N=1024, K=512, SMS=8, CLUSTER=2, CM=1, CN=2), ["--mode", "sliced"]),
    ("tutorial", "my_gemm.py", dict(M=1024, N=1024, K=512, SMS=8), []),
    ("decomp-dp", "gemm_decomposition.py",
     dict(M=512, N=512, K=256, SMS=8, DECOMP="dp", B_LAYOUT="nk"), []),
    ("splitk", "split_k.py", dict(M=512, N=512, K=4096, SPLITS=4, FIXUP="deterministic"), []),
    ("splitk-reduce-kernel", "split_k.py", dict(M=512, N=512, K=4096, SPLITS=8, FIXUP="reduce_kernel"), []),
    ("streamk", "stream_k.py", dict(M=512, N=768, K=1024, SMS=8), []),
    ("simt-vec", "simt_sgemm.py", dict(M=1000, N=1000, K=1001), []),
    ("simt-smem", "simt_sgemm.py", dict(M=256, N=256, K=64, KIND="smem"), []),
    ("simt-warp-tiled", "simt_warp_tiled.py", dict(M=300, N=257, K=131), []),
    ("coalescing-naive", "coalescing_naive.py", dict(M=500, N=512, K=64), []),
    ("coalescing-coalesced", "coalescing_coalesced.py", dict(M=512, N=512, K=64), []),
]

# (id, example, params, target, what the one-line error must say)
REFUSED: list[tuple[str, str, Params, str, str]] = [
    ("streamk-cuda-reduce-kernel", "stream_k.py", {"FIXUP": "reduce_kernel"}, "cuda",
     "'streamk' with the 'reduce_kernel' fix-up"),
    ("simt-triton", "simt_sgemm.py", {}, "triton", "--target cuda"),
    ("coalescing-triton", "coalescing_naive.py", {}, "triton", "--target cuda"),
]


def _argv(example: str, params: Params, target: str, out: Path, extra: list[str] = ()) -> list[str]:
    argv = ["gen", str(EX / example), "--target", target, "-o", str(out), *extra]
    for k, v in params.items():
        argv += ["--param", f"{k}={v}"]
    return argv


def test_every_example_is_covered() -> None:
    used = {e for _, e, _ in TRITON} | {e for _, e, _, _ in CUDA} | {e for _, e, _, _, _ in REFUSED}
    assert used == {p.name for p in EX.glob("*.py")}


def _import(path: Path):
    name = f"gen_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # triton's jit reads the source through the module
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(("example", "params"), [c[1:] for c in TRITON],
                         ids=[c[0] for c in TRITON])
def test_triton_runs_in_interpreter(example: str, params: Params, tmp_path: Path) -> None:
    out = tmp_path / f"{Path(example).stem}_{abs(hash(str(params)))}.py"
    assert main(_argv(example, params, "triton", out)) == 0
    mod = _import(out)
    M, N, K = (int(params[d]) for d in "MNK")
    dt = {"fp16": torch.float16, "fp32": torch.float32}[str(params["DTYPE"])]
    g = torch.Generator().manual_seed(0)
    a = torch.randn((M, K), generator=g).to(dt)
    nk = params.get("B_LAYOUT", "kn") == "nk" or example in ("seed004_persistent_cluster.py",
                                                              "my_gemm.py")
    b = torch.randn((N, K) if nk else (K, N), generator=g).to(dt)
    c = mod.run(a, b, out=torch.full((M, N), float("nan"), dtype=dt))
    assert c.shape == (M, N) and not c.isnan().any(), "some elements of C were never written"
    ref = a.double() @ (b.double().T if nk else b.double())
    err = (c.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1.0)
    assert err < (2e-3 if dt is torch.float16 else 1e-5), f"relative error {err:.3g}"


@pytest.fixture(scope="module")
def cuda_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str]]:
    """Generate every CUDA case, then compile them all in parallel: id -> (status, message)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: the CUDA compile tests need the CUDA toolkit")
    folder = tmp_path_factory.mktemp("cuda")
    results: dict[str, tuple[int, str]] = {}
    todo = []
    for cid, example, params, extra in CUDA:
        cu = folder / f"{cid}.cu"
        rc = main(_argv(example, params, "cuda", cu, extra))
        if rc != 0 or not cu.is_file():
            results[cid] = (rc or 1, "tilec gen failed")
        else:
            todo.append((cid, cu))

    def compile_one(item: tuple[str, Path]) -> tuple[str, tuple[int, str]]:
        cid, cu = item
        r = subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-c", str(cu),
                            "-o", str(cu.with_suffix(".o"))], capture_output=True, text=True)
        return cid, (r.returncode, r.stderr[-3000:])

    with ThreadPoolExecutor(max_workers=max(os.cpu_count() or 1, 2)) as pool:
        results.update(pool.map(compile_one, todo))
    return results


@pytest.mark.parametrize("cid", [c[0] for c in CUDA])
def test_cuda_compiles_for_sm90a(cid: str, cuda_builds: dict[str, tuple[int, str]]) -> None:
    rc, msg = cuda_builds[cid]
    assert rc == 0, msg


def test_cuda_cluster_source_uses_the_derived_multicast(tmp_path: Path) -> None:
    _cid, example, params, extra = CUDA[2]
    cu = tmp_path / "seed.cu"
    assert main(_argv(example, params, "cuda", cu, extra)) == 0
    src = cu.read_text()
    # clusters of 4 (CM=2 x CN=2): A shared by rank pairs {0,1},{2,3}, B by {0,2},{1,3}
    assert "__cluster_dims__(4, 1, 1)" in src
    assert "tma_load_multicast" in src and "mc_a_mask" in src and "mc_b_mask" in src


@pytest.mark.parametrize(("example", "params", "target", "says"), [c[1:] for c in REFUSED],
                         ids=[c[0] for c in REFUSED])
def test_unsupported_target_is_one_line(example: str, params: Params, target: str, says: str,
                                        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x"
    assert main(_argv(example, params, target, out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tilec: error: ") and says in err[0], err
    assert not out.exists()
