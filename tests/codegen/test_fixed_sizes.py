"""A schedule that cannot be replayed over symbolic M, N, K is lowered over its launch's numbers:
every formula of its plan (tile counts, the work split) holds at that M x N x K only. Before
session 13 its Triton kernel ran other shapes anyway and returned wrong C (100 x 100 x 64 from a
64^3 plan: NaN with split-K, errors of 28 with data-parallel); now the plan says ``fixed_sizes``
and both launchers refuse any other shape, naming the one they serve."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import tilec.transforms.pipeline.state as state
from tilec.codegen.cuda.launch import run_split
from tilec.errors import KernelArgumentError
from tilec.runtime.build import kernel, kernel_plan
from tilec.runtime.loader import load_schedule
from tilec.runtime.session import clear_caches

ROOT = Path(__file__).resolve().parents[2]
PARAMS = {"M": 64, "N": 64, "K": 64, "BM": 32, "BN": 32, "BK": 16, "SMS": 2, "DTYPE": "fp16",
          "STAGES": 2, "WARPS": 4, "GROUP_M": 1, "SK_WAVES": 1, "FIXUP": "atomic"}


@pytest.fixture
def no_replay(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Every schedule's replay over symbols fails (as a schedule needing integer sizes does)."""
    clear_caches()
    monkeypatch.setattr(state, "_replayed", lambda program: None)
    yield
    clear_caches()


def _plan(target: str, decomp: str):  # type: ignore[no-untyped-def]
    s = load_schedule(ROOT / "examples" / "gemm_decomposition.py",
                      {**PARAMS, "DECOMP": decomp, "SPLITS": 2}, target=target)
    return kernel_plan(s, target=target)


def test_a_replayable_schedule_is_not_fixed() -> None:
    clear_caches()
    p = _plan("triton", "splitk")
    assert not p.fixed_sizes
    assert run_split(p, 100, 100, 64).grid >= 1  # any shape


@pytest.mark.parametrize("decomp", ["dp", "splitk"])
def test_triton_serves_its_shape_and_refuses_others(no_replay: None, decomp: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    p = _plan("triton", decomp)
    assert p.fixed_sizes
    f = kernel(p, "triton")
    g = torch.Generator().manual_seed(0)
    a = torch.randn(64, 64, generator=g).half()
    b = torch.randn(64, 64, generator=g).half()
    torch.testing.assert_close(f(a, b).float(), a.float() @ b.float(), atol=5e-2, rtol=1e-2)
    for M, N, K in ((100, 100, 64), (60, 64, 48)):  # more tiles; the same tiles, fewer rows
        with pytest.raises(Exception, match=r"serves only M, N, K = 64, 64, 64.*symbolic sizes"):
            f(torch.randn(M, K).half(), torch.randn(K, N).half())


def test_cuda_launcher_refuses_other_sizes(no_replay: None) -> None:
    p = _plan("cuda", "splitk")
    assert p.fixed_sizes
    assert run_split(p, 64, 64, 64) == p.work
    with pytest.raises(KernelArgumentError, match="serves only 64 x 64 x 64 but the launch is 60"):
        run_split(p, 60, 64, 64)
