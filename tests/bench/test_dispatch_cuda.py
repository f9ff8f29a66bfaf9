"""bench/dispatch_cuda.py on CPU: ``prepare`` writes, per shape, the source ``tilec gen --target
cuda --no-tuned`` prints there (one file per distinct source: equal heuristic configs share it,
different ones do not; one of them compiled with nvcc for sm_90a), and ``run``'s bookkeeping
(padding where TMA refuses the rows, the NaN-poisoned check, the alternated timing, the JSON)
with stand-in kernels on the CPU that honour TMA's row rule."""

from __future__ import annotations

import importlib.util
import itertools
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tilec.transforms.heuristic import heuristic

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("dispatch_cuda", ROOT / "bench" / "dispatch_cuda.py")
bench = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
sys.modules["dispatch_cuda"] = bench
spec.loader.exec_module(bench)  # type: ignore[union-attr]

# not bench shapes: two in the heuristic's "large" class (one ragged in N and K), one decode
SHAPES = [("big", 3000, 5120, 2048), ("big_ragged", 2999, 5001, 2002), ("decode", 3, 5120, 3072)]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("prep")
    return folder, bench.prepare(folder, SHAPES, [], sms=132)


def _knobs(params: dict[str, Any]) -> dict[str, Any]:
    keys = ("BM", "BN", "BK", "DECOMP", "SPLITS", "SK_WAVES", "FIXUP", "STAGES", "WARPS")
    return {k: str(getattr(params[k], "value", params[k])) for k in keys}


def test_prepare_writes_gens_sources_and_dedupes(prepared: tuple[Path, dict[str, Any]]) -> None:
    folder, manifest = prepared
    plans = {e["name"]: e for e in manifest["plans"]}
    assert set(plans) == {n for n, *_ in SHAPES} and all("error" not in e for e in plans.values())
    # the configuration is the CUDA heuristic's at each shape
    for name, M, N, K in SHAPES:
        cfg, _ = heuristic(M, N, K, sms=132, target="cuda")
        assert _knobs(plans[name]["params"]) == _knobs(cfg.params()), name
    same = _knobs(plans["big"]["params"]) == _knobs(plans["big_ragged"]["params"])
    assert same, "the test's two large shapes must resolve alike"
    assert _knobs(plans["decode"]["params"]) != _knobs(plans["big"]["params"])
    # dedupe: equal configs share one file, different ones do not
    assert plans["big"]["source"] == plans["big_ragged"]["source"] != plans["decode"]["source"]
    assert sorted(p.name for p in folder.glob("*.cu")) == sorted(
        f"{plans[n]['source']}.cu" for n in ("big", "decode"))
    assert sorted(manifest["sources"][plans["big"]["source"]]["plans"]) == sorted(
        plans[n]["plan"] for n in ("big", "big_ragged"))
    # each file is what tilec gen prints at the shape
    from tilec.app.cli import main

    for name, M, N, K in SHAPES[1:]:
        out = folder / f"gen_{name}.cu"
        assert main(["gen", str(bench.SCHEDULE), "--target", "cuda", "--no-tuned",
                     "--param", f"M={M}", "--param", f"N={N}", "--param", f"K={K}",
                     "-o", str(out)]) == 0
        assert out.read_text() == (folder / f"{plans[name]['source']}.cu").read_text(), name


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_a_prepared_source_compiles_for_sm90a(prepared: tuple[Path, dict[str, Any]]) -> None:
    from tilec.codegen.cuda.launch import NVCC_FLAGS

    folder, manifest = prepared
    cu = folder / manifest["sources"][next(e["source"] for e in manifest["plans"]
                                           if e["name"] == "decode")]["file"]
    assert "-gencode=arch=compute_90a,code=sm_90a" in NVCC_FLAGS
    proc = subprocess.run(["nvcc", *NVCC_FLAGS, "-c", str(cu), "-o", str(folder / "k.o")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (folder / "k.o").stat().st_size > 0


class FakeKernel:
    """A stand-in CudaKernel: TMA's row checks on A and B, then C = A @ B; the "decode" plan's
    kernel leaves C untouched (its NaN poison must be caught)."""

    tma_store = True

    def __init__(self, plan: Any, path: Path) -> None:
        self.plan, self.broken = plan, plan.M == 3

    def __call__(self, A: Any, B: Any, C: Any) -> Any:
        from tilec.codegen.cuda.launch import check_rows

        for name, t in (("A", A), ("B", B)):
            check_rows("fake", name, tuple(t.shape), tuple(t.stride()), t.element_size(),
                       t.data_ptr())
        if not self.broken:
            C.copy_((A.float() @ B.float()).to(C.dtype))
        return C

    def variant(self, M: int, N: int, K: int, ldc: int | None = None) -> str:
        return "general"

    def c_copy_stride(self, C: Any) -> int | None:
        return None  # writes C in place


def _stand_ins(monkeypatch: pytest.MonkeyPatch, device: str, nvcc: Any, time_ms: Any) -> None:
    """run() on the CPU: this module's three shapes, ``device`` as the card's name, ``nvcc`` for
    launch.compile_cu, FakeKernel for CudaKernel, ``time_ms`` for the timer."""
    import torch

    import tilec.codegen.cuda.launch as launch

    monkeypatch.setattr(bench, "DEVICE", "cpu")
    monkeypatch.setattr(bench, "SUITE", [])
    monkeypatch.setattr(bench, "EXTRA", SHAPES)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: device)
    monkeypatch.setattr(launch, "compile_cu", nvcc)
    monkeypatch.setattr(launch, "CudaKernel", FakeKernel)
    monkeypatch.setattr("tilec.runtime.bench.time_ms", time_ms)
    real = torch.matmul

    def matmul(a: Any, b: Any, out: Any = None) -> Any:
        # the "cuBLAS" side in bf16, through fp32: a CPU without bf16 units (seen: an AMD EPYC)
        # takes minutes per product, past run()'s per-shape watchdog
        if a.dtype != torch.bfloat16:
            return real(a, b) if out is None else real(a, b, out=out)
        r = real(a.float(), b.float()).to(a.dtype)
        return r if out is None else out.copy_(r)

    monkeypatch.setattr(torch, "matmul", matmul)


def test_run_pads_checks_times_and_writes(prepared: tuple[Path, dict[str, Any]], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _ = prepared
    shutil.rmtree(folder / "so", ignore_errors=True)  # the libraries an earlier test "built"
    built: list[str] = []

    def nvcc(source: str, out: Path, *, shared: bool, werror: bool) -> str:
        built.append(source)
        out.write_text("a shared library")
        return ""

    ticks = itertools.cycle([1.0, 2.0])  # per round: the heuristic's kernel, then cuBLAS

    def fake_time(fn: Any, warm: int, rep: int) -> float:
        fn()
        return next(ticks)

    _stand_ins(monkeypatch, "NVIDIA H200", nvcc, fake_time)
    res = bench.run(folder, tmp_path, rounds=5, quick=False, jobs=2)
    assert len(built) == 2 and len(set(built)) == 2  # one build per distinct source
    rows = {r["name"]: r for r in res["rows"]}
    assert set(rows) == {n for n, *_ in SHAPES} and res["candidates"] == []
    assert all(r["path"] == "cuda" for r in rows.values())
    assert rows["big"]["correct"] and not rows["big"]["padded"] and rows["big"]["rel_err"] < 1e-2
    ragged = rows["big_ragged"]  # N = 5001, K = 2002: rows TMA refuses, padded in the call
    assert ragged["padded"] and ragged["correct"] and "TMA" in ragged["refused"]
    assert not rows["decode"]["correct"] and rows["decode"]["nan"] == 3 * 5120
    for r in rows.values():
        assert len(r["ms_rounds"]) == 5 and r["x_cublas"] == pytest.approx(2.0)
        assert r["spread"] == {"tilec": 0.0, "cublas": 0.0} and r["variant"] == "general"
    out = tmp_path / f"dispatch_cuda_h200_{time.strftime('%Y-%m-%d', time.gmtime())}.json"
    data = json.loads(out.read_text())
    assert data["device"] == "NVIDIA H200" and len(data["rows"]) == 3
    assert data["geomean_x_cublas"] == pytest.approx(2.0) and data["under_0.9"] == 0


def test_run_records_a_failing_shape_and_goes_on(prepared: tuple[Path, dict[str, Any]],
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import tilec.codegen.cuda.launch as launch

    folder, manifest = prepared
    shutil.rmtree(folder / "so", ignore_errors=True)  # the libraries an earlier test "built"
    sha = next(e["source"] for e in manifest["plans"] if e["name"] == "decode")
    decode = (folder / manifest["sources"][sha]["file"]).read_text()

    def nvcc_fails_on_decode(source: str, out: Path, *, shared: bool, werror: bool) -> str:
        if source == decode:  # the decode shape's kernel
            raise launch.CudaBuildError("nvcc failed on k.cu: boom")
        out.write_text("a shared library")
        return ""

    _stand_ins(monkeypatch, "NVIDIA H100 80GB HBM3", nvcc_fails_on_decode,
               lambda fn, w, r: (fn(), 1.0)[1])
    res = bench.run(folder, tmp_path, rounds=5, quick=False, jobs=1, only="decode|^big$")
    rows = {r["name"]: r for r in res["rows"]}
    assert set(rows) == {"decode", "big"}
    assert not rows["decode"]["correct"] and "boom" in rows["decode"]["error"]
    assert rows["decode"]["x_cublas"] == 0.0 and rows["big"]["correct"]
    assert (tmp_path / f"dispatch_cuda_h100_{time.strftime('%Y-%m-%d', time.gmtime())}.json"
            ).exists()


def test_candidates_parse_and_lower() -> None:
    assert bench.parse_candidate("BN=192") == ("gemm", {"BN": 192})
    with pytest.raises(ValueError, match="prefix"):
        bench.parse_candidate("cluster:CM=2")
    entry, plan, src = bench.plan_entry("x", 1000, 2048, 1024, "DECOMP=splitk,SPLITS=4", 132, None)
    assert _knobs(entry["params"])["DECOMP"] == "splitk" and entry["params"]["SPLITS"] == 4
    assert plan is not None and src is not None and "error" not in entry
    entry, plan, src = bench.plan_entry("x", 1000, 2048, 1024, "BM=100", 132, None)
    assert plan is None and src is None and "BM" in entry["error"]
    # the CUDA reduce-kernel fix-up as a candidate (deep K, one tile)
    entry, plan, src = bench.plan_entry("deep", 128, 128, 65536,
                                        "DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=32", 132, None)
    assert "error" not in entry and plan.work.fixup.value == "reduce_kernel"
    assert plan.work.splits == 32 and "reduce_kernel(TOut*" in src


def test_a_hung_shape_is_written_down_and_ends_the_run(
        prepared: tuple[Path, dict[str, Any]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _ = prepared
    shutil.rmtree(folder / "so", ignore_errors=True)  # the libraries an earlier test "built"
    exits: list[int] = []

    def slow(fn: Any, warm: int, rep: int) -> float:
        time.sleep(0.3)
        return 1.0

    _stand_ins(monkeypatch, "NVIDIA H200", lambda source, out, **kw: out.write_text("so"), slow)
    monkeypatch.setattr(bench.os, "_exit", exits.append)
    bench.run(folder, tmp_path, rounds=5, quick=False, jobs=1, only="^big$", shape_timeout=1.0)
    assert exits == [3]
    data = json.loads(next(tmp_path.glob("dispatch_cuda_h200_*.json")).read_text())
    assert data["hung"] == "big" and "hung" in data["rows"][0]["error"]


def test_extra_shapes_parse_join_the_list_and_obey_only() -> None:
    assert bench.parse_shape("p77=77x14336x4096") == ("p77", 77, 14336, 4096)
    for bad in ("p77", "=1x2x3", "p=1x2", "p=0x2x3", "p=1x-2x3", "p=axbxc"):
        with pytest.raises(ValueError, match="NAME=MxNxK"):
            bench.parse_shape(bad)
    extra = (("p77", 77, 14336, 4096), ("q5", 5, 6, 7))
    listed = bench.shapes(False, None, extra)
    assert listed[-2:] == list(extra) and len(listed) == len(bench.shapes()) + 2
    assert bench.shapes(False, "^p77$", extra) == [extra[0]]
