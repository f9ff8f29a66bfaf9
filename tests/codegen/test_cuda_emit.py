"""CUDA backend without a GPU: generated files compile warning-free for sm_90a, the masks and
predicates the kernel uses equal the plan's (a host harness runs the file's own schedule
functions over every (rank, i_rt, cidx) and is compared with sympy), and unsupported plan
features are refused."""

from __future__ import annotations

import dataclasses
import itertools
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tilec.codegen.cuda import SCHEDULE_END, emit, host_prefix
from tilec.codegen.cuda_launch import CudaBuildError, compile_cu
from tilec.codegen.cuda_seed import closed_matches_general, evaluate, seed_plan
from tilec.errors import UnsupportedError
from tilec.transforms.plan import Decomposition, DType, MulticastMode, WorkSplit

L, S = MulticastMode.LEADER, MulticastMode.SLICED

# (M, N, K, BM, BN, CM, CN, mode, form, sms): clusters of 1, 2, 4 along M and N, leader and
# sliced, closed / general / guarded forms, several tile shapes, ragged edges, partial rounds.
MATRIX = [
    (1000, 1500, 776, 128, 256, 1, 1, L, "auto", 6),
    (1024, 2048, 512, 128, 128, 1, 2, L, "closed", 8),
    (2048, 1024, 512, 128, 256, 2, 1, L, "closed", 8),
    (1100, 1300, 512, 128, 256, 1, 4, L, "general", 8),
    (2048, 1536, 768, 128, 256, 4, 1, S, "closed", 12),
    (1300, 1100, 512, 128, 256, 2, 2, S, "general", 8),
    (1300, 1100, 512, 128, 256, 2, 2, L, "guarded", 8),
    (1536, 2048, 512, 128, 128, 1, 2, S, "closed", 8),
    (1000, 1000, 1000, 64, 128, 2, 1, L, "general", 6),
    (1000, 1000, 1000, 256, 128, 2, 2, L, "closed", 8),
    (777, 1000, 1000, 128, 192, 1, 4, S, "general", 8),
    (1536, 1536, 512, 128, 256, 2, 2, S, "closed", 12),
]
SLOW_MATRIX = [
    (4096, 4096, 4096, 128, 256, 1, 1, L, "auto", 132),
    (4096, 4096, 4096, 128, 256, 2, 2, L, "closed", 120),
    (8192, 8192, 8192, 128, 256, 4, 1, S, "closed", 120),
    (1000, 1000, 1000, 128, 64, 1, 2, L, "general", 8),
]


def plan_of(row: tuple, **kw: object):  # type: ignore[no-untyped-def]
    M, N, K, BM, BN, CM, CN, mode, form, sms = row
    return seed_plan(M=M, N=N, K=K, BM=BM, BN=BN, CM=CM, CN=CN, sms=sms, mode=mode, form=form,
                     stages=4 if BM + BN <= 384 else 3, **kw)


def _ids(rows: list) -> list[str]:
    return [f"{r[0]}x{r[1]}x{r[2]}_{r[3]}x{r[4]}_c{r[5]}x{r[6]}_{r[7].value}_{r[8]}" for r in rows]


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def _compile_all(rows: list, tmp: Path) -> list[str]:
    """nvcc -Werror over every row's .cu; the error text of each that fails."""
    plans = [plan_of(r, evict_a="first", evict_b="last") for r in rows]

    def one(i: int) -> str | None:
        try:
            compile_cu(emit(plans[i]), tmp / f"k{i}.o", shared=False, werror=True)
        except CudaBuildError as e:
            return str(e)
        return None

    with ThreadPoolExecutor(max_workers=4) as ex:
        return [e for e in ex.map(one, range(len(plans))) if e]


@needs_nvcc
def test_matrix_compiles_without_warnings(tmp_path: Path) -> None:
    errors = _compile_all(MATRIX, tmp_path)
    assert not errors, errors[0]


@needs_nvcc
@pytest.mark.slow
def test_large_schedules_compile_without_warnings(tmp_path: Path) -> None:
    errors = _compile_all(SLOW_MATRIX, tmp_path)
    assert not errors, errors[0]


# ---------------------------------------------------------------------------- host harness

HARNESS = r"""
#include <cstdio>
int main() {
  using namespace NS;
  for (int t = 0; t < NUM_TILES; ++t) std::printf("T %d %d %d %d\n", t, tile_m(t), tile_n(t), (int)tile_alive(t));
  const int rounds = (NUM_TILES + GRID - 1) / GRID;
  for (int i_rt = 0; i_rt < rounds; ++i_rt)
    for (int cidx = 0; cidx < GRID / CLUSTER; ++cidx)
      for (int rank = 0; rank < CLUSTER; ++rank) {
        BODY
      }
  return 0;
}
"""


def _harness_body(plan) -> str:  # type: ignore[no-untyped-def]
    out = []
    for op in (plan.a, plan.b):
        x, mc = op.name.lower(), op.multicast
        if mc is None:
            continue
        fields = ["issue", "mask"] + (["slice_index", "slice_count"] if mc.mode is S else [])
        fmt = " ".join(["%d"] * (3 + len(fields)))
        args = ", ".join(["i_rt", "cidx", "rank"] + [f"(int)mc_{x}_{f}(rank, i_rt, cidx)" for f in fields])
        out.append(f'std::printf("{op.name} {fmt}\\n", {args});')
    return "\n        ".join(out)


def _run_harness(plan, tmp: Path) -> dict:  # type: ignore[no-untyped-def]
    src = emit(plan)
    prefix = host_prefix(src)
    assert src.startswith(prefix[: -len(SCHEDULE_END) - 1])  # the harness tests the file's own text
    ns = src.split("namespace ")[1].split(" ")[0]
    (tmp / "sched.h").write_text(prefix)
    (tmp / "h.cpp").write_text('#include "sched.h"\n' + HARNESS.replace("NS", ns).replace("BODY", _harness_body(plan)))
    subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
                    "-I", str(tmp), "-o", str(tmp / "h"), str(tmp / "h.cpp")], check=True)
    lines = subprocess.run([str(tmp / "h")], capture_output=True, text=True, check=True).stdout.splitlines()
    got: dict = {"T": {}, "A": {}, "B": {}}
    for ln in lines:
        kind, *vals = ln.split()
        v = [int(s) for s in vals]
        if kind == "T":
            got["T"][v[0]] = tuple(v[1:])
        else:
            got[kind][tuple(v[:3])] = tuple(v[3:])
    return got


@needs_gxx
@pytest.mark.parametrize("row", MATRIX + SLOW_MATRIX[-1:], ids=_ids(MATRIX + SLOW_MATRIX[-1:]))
def test_printed_masks_equal_the_plans(row: tuple, tmp_path: Path) -> None:
    plan = plan_of(row)
    got = _run_harness(plan, tmp_path)
    order = plan.order
    for t, (m, n, alive) in got["T"].items():
        assert (m, n) == order.evaluate(t)
        assert alive == int(t < int(order.num_tiles) and m < order.tiles_m and n < order.tiles_n)
    for op in (plan.a, plan.b):
        mc = op.multicast
        if mc is None:
            assert not got[op.name]
            continue
        assert got[op.name], "no multicast functions printed"
        for (i_rt, cidx, rank), vals in got[op.name].items():
            want = evaluate(mc, rank, i_rt, cidx)  # the form the kernel runs (guard decides)
            keys = ["issue", "mask"] + (["slice_index", "slice_count"] if mc.mode is S else [])
            assert vals == tuple(want[k] for k in keys), (op.name, i_rt, cidx, rank)


def test_seed_closed_forms_are_checked_against_general() -> None:
    """The stand-in derivation only takes a closed form when it agrees with the general one;
    partial groups in the last round (tiles % cluster != 0) force the general form."""
    good = plan_of((2048, 2048, 512, 128, 128, 2, 2, L, "closed", 8))
    assert closed_matches_general(good.a.multicast, good.order, 8)
    assert closed_matches_general(good.b.multicast, good.order, 8)
    ragged = plan_of((1300, 1100, 512, 128, 256, 2, 2, S, "closed", 8))
    assert not closed_matches_general(ragged.b.multicast, ragged.order, 8)
    auto = plan_of((1300, 1100, 512, 128, 256, 2, 2, S, "auto", 8))
    assert not auto.b.multicast.closed_form


# ---------------------------------------------------------------------------- refusals

def test_split_k_and_stream_k_are_refused() -> None:
    p = plan_of(MATRIX[0])
    for kind in (Decomposition.SPLIT_K, Decomposition.STREAM_K, Decomposition.DP_ONE_SK_WAVE):
        bad = dataclasses.replace(p, work=WorkSplit(kind, grid=p.work.grid, splits=2,
                                                    num_tiles=p.tiles, k_iters=p.k_iters))
        with pytest.raises(UnsupportedError, match=kind.value):
            emit(bad)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"b_transposed": False}, "B must be stored N x K"),
        ({"dtype": DType.FP32}, "bf16 or fp16"),
        ({"BK": 32}, "BK must be 64"),
        ({"cluster": (2, 2, 1)}, "1-D along x"),
        ({"num_stages": 8}, "shared memory"),
    ],
)
def test_unsupported_features_are_refused(change: dict, match: str) -> None:
    p = dataclasses.replace(plan_of(MATRIX[0]), **change)
    with pytest.raises(UnsupportedError, match=match):
        emit(p)


def test_fp16_and_eviction_hints_are_printed() -> None:
    src = emit(plan_of(MATRIX[1], dtype=DType.FP16, evict_a="first", evict_b="last"))
    assert "f16.f16" in src and "policy_evict_first()" in src and "policy_evict_last()" in src
    assert "__cluster_dims__(2, 1, 1)" in src and "mbar_arrive_cluster" in src
    assert list(itertools.islice((ln for ln in src.splitlines() if "cluster_sync();" in ln), 3))
