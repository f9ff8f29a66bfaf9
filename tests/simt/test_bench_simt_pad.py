"""bench/bench_simt.py's padded launches and issue-30 rows on CPU: ``pad_launch`` drives a
stand-in for the library's ``tilec_launch_<name>`` that reads and writes memory through the
pointers and leading dimensions it is given (as the kernel does), so the copies, the padded
sizes and the copy back are checked end to end against float64; ``issue_rows`` against a
hand-made run."""

from __future__ import annotations

import ctypes
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from tilec.codegen.cuda.simt.launch import Workspace
from tilec.transforms.simt.padding import holds

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_simt", ROOT / "bench" / "bench_simt.py")
bench = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
spec.loader.exec_module(bench)  # type: ignore[union-attr]

FACTS = {"tiles": ["M % 128 == 0", "N % 128 == 0", "K % 32 == 0", "lda % 4 == 0", "ldb % 4 == 0",
                   "ldc % 4 == 0", "(A | B | C) % 16 == 0"],
         "ragged_n": ["M % 128 == 0", "K % 32 == 0", "ldb % 4 == 0", "B % 16 == 0"],
         "aligned": ["N % 4 == 0", "K % 4 == 0", "lda % 4 == 0", "ldb % 4 == 0", "ldc % 4 == 0",
                     "(A | B | C) % 16 == 0"],
         "general": []}
JOB = {"name": "warp", "tile": [128, 128], "block": [256, 1, 1],
       "model": {"BK": 32, "min_blocks": 2, "ctas": 2, "decomp": "dp_ft", "splits": 1},
       "variants": {k: {"facts": v, "notes": []} for k, v in FACTS.items()}}


def _matrix(ptr: int, rows: int, cols: int, ld: int) -> np.ndarray:
    n = (rows - 1) * ld + cols
    flat = np.ctypeslib.as_array((ctypes.c_float * n).from_address(ptr))
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (4 * ld, 4))


def _library(ran: list[tuple[str, int, int, int]]):  # type: ignore[no-untyped-def]
    def fn(pa, pb, pc, M, N, K, lda, ldb, ldc, stream):  # type: ignore[no-untyped-def]
        variant = next(v for v, f in FACTS.items() if holds(f, M, N, K, lda, ldb, ldc, pa % 64,
                                                             pb % 64, pc % 64))
        ran.append((variant, M, N, K))
        a, b = _matrix(pa, M, K, lda), _matrix(pb, K, N, ldb)
        _matrix(pc, M, N, ldc)[...] = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        return 0
    return fn


@pytest.mark.parametrize(("M", "N", "K"), [(1, 1, 1), (1, 129, 33), (129, 1, 33), (129, 131, 1),
                                           (200, 300, 100), (256, 255, 64), (256, 256, 63),
                                           (128, 3, 33), (256, 257, 64)])
@pytest.mark.parametrize("mode", ["auto", "tiles", "ragged_n"])
def test_pad_launch_computes_the_product_through_the_pointers(M: int, N: int, K: int, mode: str) -> None:
    g = torch.Generator().manual_seed(M + 7 * N + 31 * K)
    A, B = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g)
    C = torch.full((M, N), math.nan)
    ws = Workspace()
    for role in "ABC":
        ws._buf[("cpu", 0, role)] = torch.full((400 * 400,), math.nan)
    ran: list[tuple[str, int, int, int]] = []
    launch, p = bench.pad_launch(JOB, _library(ran), A, B, C, mode, ws, 0, "NVIDIA H100 80GB HBM3")
    launch()
    assert torch.allclose(C.double(), A.double() @ B.double(), rtol=1e-5, atol=1e-5)
    assert ran == [(p.variant, p.M, p.N, p.K)]  # the library picked the variant padded for
    if mode == "tiles":
        assert p.variant == "tiles" and (p.M, p.N, p.K) == (-(-M // 128) * 128, -(-N // 128) * 128,
                                                              -(-K // 32) * 32)
    elif mode == "ragged_n" and M % 128 == 0 and N % 4:  # B to rows of 4, C written in place
        assert (p.variant, p.M, p.N, p.K, p.copy_b, p.copy_c, p.b_cols) == (
            "ragged_n", M, N, -(-K // 32) * 32, True, False, -(-N // 4) * 4)
    elif mode == "auto":  # small problems: as they are
        assert not p.padded


def test_issue_rows() -> None:
    result = {"device": "NVIDIA H100 80GB HBM3", "date": "2026-11-28",
              "checks": [{"kernel": "warp", "size": [4096, 4095, 4096], "correct": True},
                         {"kernel": "warp", "size": [4096, 4095, 4096], "correct": True},
                         {"kernel": "warp", "size": [5, 6, 7], "correct": False}],
              "timings": [{"kernel": "cublas", "shape": [4096, 4095, 4096], "median_ms": 2.0},
                          {"kernel": "warp", "shape": [4096, 4095, 4096], "median_ms": 2.5,
                           "variant": "tiles (padded)"},
                          {"kernel": "cublas", "shape": [5, 6, 7], "median_ms": 1.0},
                          {"kernel": "warp", "shape": [5, 6, 7], "median_ms": 0.5}]}
    rows = bench.issue_rows(result)
    assert rows["device"] == "NVIDIA H100 80GB HBM3" and rows["date"] == "2026-11-28"
    assert [(r["name"], r["M"], r["N"], r["K"], r["path"], r["x_cublas"], r["correct"])
            for r in rows["rows"]] == [("ragged_n_4096x4095x4096", 4096, 4095, 4096, "simt", 0.8, True),
                                       ("5x6x7", 5, 6, 7, "simt", 2.0, False)]
