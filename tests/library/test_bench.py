"""The CPU-runnable parts of bench/dispatch.py and bench/host_overhead_library.py, on the torch
kernels of tests/library/fake.py: the shape lists, the stream, the correctness check (which
must catch a wrong kernel), the compile count over a stream and the host timing loop."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import dispatch  # noqa: E402
import host_overhead_library  # noqa: E402

from tests.library.fake import fake_library, fake_module, import_module  # noqa: E402
from tilec.library import module_text  # noqa: E402


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path / "cache"))


def test_shape_lists() -> None:
    every = dispatch.shapes()
    names = [s[0] for s in every]
    assert len(set(names)) == len(names) and len(dispatch.EXTRA) >= 30
    suite = Path("/work/shared/bench/suite.json")
    if suite.exists():
        rows = json.loads(suite.read_text())["shapes"]
        want = [(s["name"], s["M"], s["N"], s["K"]) for s in rows]
        assert dispatch.SUITE == want
    assert all(min(M, N, K) >= 1 for _, M, N, K in every)
    assert any(M <= 64 for _, M, _, _ in dispatch.EXTRA)  # decode
    assert any(128 <= M <= 512 for _, M, _, _ in dispatch.EXTRA)  # MoE
    assert any(K >= 65536 for _, _, _, K in dispatch.EXTRA)  # deep K
    assert set(dispatch.QUICK) <= set(names)


def test_stream_repeats_shapes() -> None:
    s = dispatch.stream_shapes(200)
    assert len(s) == 200 and s == dispatch.stream_shapes(200)
    assert 60 < len(set(s)) < 170  # about half repeat
    assert {(N, K) for _, N, K in s} <= set(dispatch.LAYERS.values())


def test_check_catches_a_wrong_kernel(tmp_path: Path) -> None:
    m = fake_module(tmp_path)
    assert dispatch.check(m, 33, 17, 40, device="cpu", tol=1e-5)["correct"]
    lib = fake_library(name="broken")
    lib.kernels = {k: v.replace("out.copy_(", "out[:-1].copy_(") .replace(
        ".to(out.dtype))", ".to(out.dtype)[:-1])") for k, v in lib.kernels.items()}
    bad = import_module(module_text(lib, built="test"), tmp_path, "broken")
    res = dispatch.check(bad, 33, 17, 40, device="cpu", tol=1e-5)
    assert not res["correct"] and res["nan"] == 17  # the last row stays NaN


def test_compile_stream_counts_variants(tmp_path: Path) -> None:
    m = fake_module(tmp_path)
    stream = [(40, 64, 64), (64, 64, 64), (40, 64, 64), (8, 9, 16), (7, 9, 16), (64, 64, 63)]
    res = dispatch.compile_stream(m, stream, device="cpu")
    # by hand (facts held, wide, K % 16, ldb % 16, N % 16 == 0, rows of A and B 16-byte
    # multiples): 40x64x64 (M % 32 fails, the rest holds), 64x64x64 (every fact), 8x9x16 (M % 16
    # and N % 16 fail, B's rows 9 x 4 bytes), 7x9x16 the same, 64x64x63 (K % 32 fails, A's rows)
    assert res["variants_compiled"] == 4 and res["repeat_variant_compiled"] == 0
    assert res["calls"] == 6 and res["distinct_shapes"] == 5
    assert dispatch.path_of(m, 40, 64, 64)["variant"] == "assuming N % 32 == 0 and K % 32 == 0"
    assert dispatch.path_of(m, 40, 40, 40)["variant"] == "general"
    path = dispatch.path_of(m, 64, 64, 64)
    assert (path["config"], path["variant"]) == ("1 32x32x32 (kernel k0)", "facts")
    assert path["why"].startswith("test rule: large M [bucket (M, N, K) classes (6, 6, 6)")


def test_host_times_loop_on_cpu(tmp_path: Path) -> None:
    m = fake_module(tmp_path)
    rows = host_overhead_library.host_times(m, quick=True, device="cpu", shapes=[(4, 8, 8)],
                                            breakdown=True)
    assert rows[0]["M"] == 4 and all(rows[0][k] > 0 for k in
                                     ("matmul_us", "matmul_out_us", "custom_op_us", "torch_us",
                                      "empty_us", "kernel_run_us", "kernel_run_out_us", "key_us"))
    assert rows[0]["direct_launches_cached"] == 0 and rows[0]["fast_keys"] == 0  # fake: none
    errors = rows[0]["errors"]  # the fast path's calls with new tensors, against fp32
    assert set(errors) == {"new", "out", "lead", "unaligned_a"} and max(errors.values()) < 1e-5
    assert dispatch.geomean([1.0, 4.0]) == pytest.approx(2.0)
