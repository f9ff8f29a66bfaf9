"""``tilec build --target cuda``: a standalone module whose configs are the CUDA (wgmma / TMA)
kernels. No GPU here, so the launch itself is emulated: the module's own run() is given a fake
``<cname>_launch`` that reads A and B through the pointers and strides it receives and writes C
through C's, so what the module passes (padded rows, strides, the work split's numbers) is
checked end to end; the numbers and the fix-up workspace are held to tilec's own (the plan's
run_split and the printer's workspace) at many shapes; nvcc builds a kernel through the module.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from tests.library.fake import NO_TILEC
from tilec.app.cli import main as tilec
from tilec.codegen.cuda.launch import launch_numbers, run_split
from tilec.codegen.cuda.printer import CudaPrinter
from tilec.library.build import _lower

ROOT = Path(__file__).resolve().parents[2]
SCHEDULE = ROOT / "examples" / "gemm_decomposition.py"
# shapes whose configs cover the CUDA kernel kinds: split-K with the ticket fix-up, the reduce
# kernel on a 2x1 cluster, the spread one-tile split, swapped operands (with split-K), Stream-K;
# 1 x 6144 x 16 first: the decode rule's split-K 3 at one k-iteration, where its own plan is
# data-parallel (its kernel must still hold the K parts' paths: printer/work.py's cuts_k)
EXACT = [(128, 4096, 7168), (512, 512, 65536), (128, 128, 65536), (200, 4096, 7168),
         (1, 6144, 16), (1, 6144, 4096), (8192, 8192, 16384), (8192, 16384, 16384),
         (1000, 1000, 1000)]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("cudalib")
    out = tmp / "cudagemm.py"
    shapes = [a for s in EXACT for a in ("--shape", "x".join(map(str, s)))]
    assert tilec(["build", str(SCHEDULE), "--target", "cuda", "-o", str(out), "--max-size",
                  "1024", "--no-tuned", *shapes]) == 0
    return out


@pytest.fixture(scope="module")
def mod(built: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("cudagemm", built)
    assert spec is not None and spec.loader is not None
    m = importlib.util.module_from_spec(spec)
    sys.modules["cudagemm"] = m
    spec.loader.exec_module(m)
    return m


ALONE = NO_TILEC + r'''
import torch
sys.path.insert(0, sys.argv[1])
import cudagemm as lib
out = {"explain": [lib.explain(*s) for s in json.loads(sys.argv[2])], "target": lib.TARGET}
try:
    lib.matmul(torch.randn(4, 8).bfloat16(), torch.randn(8, 8).bfloat16())
except Exception as e:
    out["cpu"] = f"{type(e).__name__}: {e}"
out["tilec"] = "tilec" in sys.modules
print(json.dumps(out))
'''


def test_module_stands_alone_and_explains(built: Path) -> None:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    shapes = [*EXACT, (300, 700, 900)]
    res = subprocess.run([sys.executable, "-c", ALONE, str(built.parent), json.dumps(shapes)],
                         capture_output=True, text=True, env=env, cwd=built.parent, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout)
    assert got["target"] == "cuda" and not got["tilec"]
    for (M, N, K), text in zip(shapes, got["explain"], strict=True):
        assert text.startswith(f"{M}x{N}x{K} on table 'default': config ")
        assert "built by nvcc for sm_90a" in text
        assert ("exact entry" in text) == ((M, N, K) in EXACT), text
    assert "must be on a CUDA device (the kernels are CUDA sm_90a kernels)" in got["cpu"]


def test_each_kernel_holds_its_decomposition(mod: ModuleType) -> None:
    """A split-K config's kernel has the K parts' paths, a Stream-K kind's its region's, a
    spread config's (16 parts or more, deterministic) the spread sum, the reduce kernel's its
    second kernel: whatever shape the config was first chosen at."""
    seen = set()
    for cfg in mod.CONFIGS:
        p, src = cfg["params"], mod.KERNELS[cfg["kernel"]]
        if p["DECOMP"] == "splitk" and p["SPLITS"] > 1:
            assert "unit_part(" in src, cfg["label"]
            if p["FIXUP"] == "reduce_kernel":
                assert "reduce_kernel" in src, cfg["label"]
            else:
                assert "spread_sum" in src, cfg["label"]
        elif p["DECOMP"] not in ("dp", "splitk"):
            assert "sk_tile_begin(" in src, cfg["label"]
        seen.add((p["DECOMP"], p["SPLITS"], p["SWAP_AB"]))
    assert ("splitk", 3, 1) in seen  # the decode rule's config, first met at K = 16


def _plans(mod: ModuleType) -> dict[int, object]:
    """Each config of the module lowered again by tilec (cuda), at a shape of its own."""
    out = {}
    for i, cfg in enumerate(mod.CONFIGS):
        p = cfg["params"]
        shape = (4 * p["BM"], 4 * p["BN"], 8 * p["BK"])
        out[i] = _lower(SCHEDULE, p, shape, "cuda")
    return out


def test_numbers_and_workspace_are_tilecs(mod: ModuleType) -> None:
    kinds = {(c["params"]["DECOMP"], c["params"]["FIXUP"], c["params"]["SWAP_AB"])
             for c in mod.CONFIGS}
    assert {("splitk", "deterministic", 0), ("splitk", "reduce_kernel", 0),
            ("dp", "deterministic", 1)} <= kinds, kinds
    assert any(c["params"]["DECOMP"] not in ("dp", "splitk") for c in mod.CONFIGS), kinds
    rng = random.Random(7)
    shapes = [(rng.randint(1, 5000), rng.randint(1, 5000), rng.randint(1, 70000))
              for _ in range(60)] + [(1, 1, 1), (128, 128, 65536), (1, 8, 64), (4097, 257, 63)]
    for i, plan in _plans(mod).items():
        run = mod._CudaRun(i, launch=lambda *a: 0)
        printer = CudaPrinter(plan)
        for M, N, K in shapes:
            split = run_split(plan, M, N, K)
            want = (launch_numbers(plan, split), *printer.workspace(split))
            assert run._split(M, N, K) == want, (mod.CONFIGS[i]["label"], (M, N, K))


def _view(ptr: int, rows: int, cols: int, ld: int, dtype: torch.dtype) -> torch.Tensor:
    """The rows x cols matrix at address ``ptr`` with row stride ``ld`` (CPU memory)."""
    elem = torch.tensor([], dtype=dtype).element_size()
    n = ((rows - 1) * ld + cols) * elem
    buf = (ctypes.c_char * n).from_address(ptr)
    return torch.frombuffer(buf, dtype=dtype).as_strided((rows, cols), (ld, 1))


class FakeLaunch:
    """``<cname>_launch`` emulated: C = A @ B through the pointers and strides it is given."""

    def __init__(self, nk: bool) -> None:
        self.nk, self.calls = nk, []

    def __call__(self, A, B, C, ws, tk, stream, M, N, K, lda, ldb, ldc, grid, splits,
                 sk_tiles, sk_ctas, variant) -> int:
        self.calls.append({"M": M, "N": N, "K": K, "lda": lda, "ldb": ldb, "ldc": ldc,
                           "nums": (grid, splits, sk_tiles, sk_ctas), "ws": ws, "tk": tk})
        for name, ld, cols in (("A", lda, K), ("B", ldb, K if self.nk else N), ("C", ldc, N)):
            assert ld >= cols and (ld * 2) % 16 == 0, (name, ld, cols)  # what TMA takes
        a = _view(A, M, K, lda, torch.bfloat16).float()
        b = _view(B, N, K, ldb, torch.bfloat16).float().t() if self.nk else \
            _view(B, K, N, ldb, torch.bfloat16).float()
        _view(C, M, N, ldc, torch.bfloat16).copy_(a @ b)
        return 0


@pytest.mark.parametrize("M, N, K", [(37, 100, 36), (5, 64, 4100), (128, 4096, 7168 // 32),
                                     (1, 6, 10), (64, 129, 24)])
def test_run_pads_rows_and_writes_c(mod: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                    M: int, N: int, K: int) -> None:
    monkeypatch.setattr(mod, "_cuda_stream", lambda dev: 0)
    index = mod._choose(M, N, K).config
    fake = FakeLaunch(mod.B_LAYOUT == "nk")
    run = mod._CudaRun(index, launch=fake)
    run.devices.add(torch.device("cpu"))  # no capability query on the CPU
    g = torch.Generator().manual_seed(M + N + K)
    a = torch.randn((M, K), generator=g).bfloat16()
    b = torch.randn((K, N), generator=g).bfloat16()
    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16)
    assert run.run(a, b, out=out) is out
    ref = (a.float() @ b.float()).bfloat16()
    assert torch.equal(out, ref)
    call = fake.calls[-1]
    assert call["lda"] == -(-K // 8) * 8 and call["ldb"] == -(-N // 8) * 8
    assert call["nums"] == run._split(M, N, K)[0]
    fresh = run.run(a, b)  # out allocated by run
    assert torch.equal(fresh, ref)


@pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                    reason="needs nvcc")
def test_nvcc_builds_a_kernel_once(mod: ModuleType, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path))
    cfg = mod.CONFIGS[mod._choose(1000, 1000, 1000).config]
    launch = mod._cuda_library(cfg["kernel"], cfg["cuda"]["cname"])
    assert launch.restype is ctypes.c_int and len(launch.argtypes) == 17
    built = sorted((tmp_path / "library").glob("*.so"))
    assert len(built) == 1 and not list((tmp_path / "library").glob("*.cu"))
    mod._STATE.clear()  # forgets the loaded launchers too, as a fresh process
    assert not mod._STATE.libs
    assert mod._cuda_library(cfg["kernel"], cfg["cuda"]["cname"]) is not None
    assert sorted((tmp_path / "library").glob("*.so")) == built  # loaded, not built again


def test_an_nk_module_reads_the_weight_in_place_or_padded(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """B_LAYOUT=nk: b is an N x K weight (a linear layer's), read row by row along K; rows of K
    not a multiple of 8 (16 bytes) are padded, as A's."""
    out = tmp_path / "nkgemm.py"
    assert tilec(["build", str(SCHEDULE), "--target", "cuda", "-o", str(out), "--max-size",
                  "256", "--no-tuned", "--param", "B_LAYOUT=nk"]) == 0
    spec = importlib.util.spec_from_file_location("nkgemm", out)
    assert spec is not None and spec.loader is not None
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.B_LAYOUT == "nk"
    monkeypatch.setattr(m, "_cuda_stream", lambda dev: 0)
    for M, N, K in ((40, 72, 36), (3, 16, 64)):
        fake = FakeLaunch(nk=True)
        run = m._CudaRun(m._choose(M, N, K).config, launch=fake)
        run.devices.add(torch.device("cpu"))
        g = torch.Generator().manual_seed(M)
        a = torch.randn((M, K), generator=g).bfloat16()
        w = torch.randn((N, K), generator=g).bfloat16()
        c = run.run(a, w)
        assert torch.equal(c, (a.float() @ w.float().t()).bfloat16())
        assert fake.calls[-1]["ldb"] == -(-K // 8) * 8 and fake.calls[-1]["lda"] == -(-K // 8) * 8


def test_a_refused_launch_names_the_operands(mod: ModuleType,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mod, "_cuda_stream", lambda dev: 0)
    run = mod._CudaRun(mod._choose(64, 64, 64).config, launch=lambda *args: 3011)
    run.devices.add(torch.device("cpu"))
    a, b = torch.zeros((64, 64)).bfloat16(), torch.zeros((64, 64)).bfloat16()
    with pytest.raises(mod.TilecError, match=r"code 3011: operand A: its row stride is shorter "
                       r"than K.*A \(shape \(64, 64\), strides \(64, 1\), torch.bfloat16, cpu\)"):
        run.run(a, b)
