"""Split-K and the Stream-K family on the SIMT path (tilec.transforms.simt.work and the SIMT
printer's unit walk and fix-up).

The printed work functions are compiled with g++ and run for every worker: their units must be
the oracle's (``decompose.work_units``), every (tile, k-iteration) covered once, every partial
in its own slot, numbered in K order.  The kernels compile with nvcc for sm_90a with spills as
errors; refusals name what to change.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from simt_helpers import load

from tilec.codegen.cuda.runtime import INDEX_HELPERS
from tilec.codegen.cuda.simt import WORK_BEGIN, WORK_END, emit_simt
from tilec.errors import UnsupportedError
from tilec.transforms.decompose import make_work_split, work_units
from tilec.transforms.plan import Fixup
from tilec.transforms.simt.lower import lower_simt

WT = "simt_warp_tiled.py"
SPLITS = {  # name -> warp-tiled parameters (ragged sizes, uneven cuts)
    "splitk_det": dict(M=300, N=257, K=777, CONFIG="large", DECOMP="splitk", SPLITS=5),
    "splitk_atomic": dict(M=129, N=500, K=1000, CONFIG="large", DECOMP="splitk", SPLITS=3,
                          FIXUP="atomic"),
    "streamk": dict(M=300, N=260, K=299, CONFIG="large", DECOMP="streamk", SMS_SLOTS=7),
    "streamk_atomic": dict(M=1000, N=300, K=333, CONFIG="large", DECOMP="streamk",
                           SMS_SLOTS=13, FIXUP="atomic"),
    "dp_1sk": dict(M=1100, N=1000, K=500, CONFIG="large", DECOMP="dp_1sk", SMS_SLOTS=10),
    "sk2_dp": dict(M=1100, N=1000, K=500, CONFIG="large", DECOMP="sk2_dp", SMS_SLOTS=10),
    "skpp0": dict(M=1000, N=1000, K=100, CONFIG="large", DECOMP="skpp", SK_WAVES=0,
                  SMS_SLOTS=10),
    "small16_sk": dict(M=129, N=131, K=257, CONFIG="small16", DECOMP="streamk"),
    # dp_ft: 72 tiles over 16 CTAs (4 waves + 8): fronts [0, 13) of the last 8 on 8 CTAs, tails
    "dp_ft": dict(M=1000, N=1100, K=777, CONFIG="large", DECOMP="dp_ft", SMS_SLOTS=16,
                  FIXUP="deterministic"),
    "dp_ft_atomic": dict(M=2100, N=1000, K=3000, CONFIG="large", DECOMP="dp_ft", SMS_SLOTS=16),
}


def plan_of(name: str):  # type: ignore[no-untyped-def]
    return lower_simt(load(WT, **SPLITS[name]), name=name)


HARNESS = r"""
#include <cstdio>
#include <cstdint>
%s
%s
using namespace %s;
int main() {
  int M, N, K;
  while (std::scanf("%%d %%d %%d", &M, &N, &K) == 3) {
    const Shape S{M, N, K, K, N, N};
    const Work W = make_work(S);
    std::printf("W %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%lld %%d %%lld\n", W.gx, W.workers, W.groups, W.k_iters,
                W.splits, W.sk_tiles, W.sk_ctas, W.sk_start, W.dp_start, W.dp_tiles, W.sk_iters,
                W.partial_tiles, W.partial_slots);
    for (int w = 0; w < W.workers; ++w)
      for (int j = 0; ; ++j) {
        int g, kb0, kb1;
        if (!work_unit(W, w, j, g, kb0, kb1)) break;
        int f = -1, ord = -1, cnt = -1;  // -1: a whole tile, no partial
        long long slot = -1;
        %s
        std::printf("U %%d %%d %%d %%d %%d %%d %%d %%d %%lld\n", w, j, g, kb0, kb1, f, ord, cnt, slot);
      }
    int r0, r1;
    zeroed_rows(S, W, r0, r1);
    std::printf("Z %%d %%d\n", r0, r1);
  }
  return 0;
}
"""

# run-time shapes: ragged, tiny, more K parts than K tiles, whole waves, one tile
SHAPES = [(300, 257, 777), (1000, 1100, 777), (129, 131, 257), (1, 1, 1), (1, 300, 5000),
          (2100, 1000, 3000), (1024, 1024, 512), (128, 128, 32), (257, 129, 33), (640, 2048, 64)]


def oracle(plan, M: int, N: int, K: int):  # type: ignore[no-untyped-def]
    """make_work_split at the launch's sizes, as the kernel's configuration asks."""
    d = plan.decomposition
    bk = plan.staging.BK
    tiles = -(-M // plan.BM) * -(-N // plan.BN)
    k_iters = -(-K // bk)
    return make_work_split(d.kind, M=M, N=N, K=K, BM=plan.BM, BN=plan.BN, BK=bk,
                           sms=d.sms or tiles, splits=min(d.splits, k_iters),
                           sk_waves=d.sk_waves, fixup=d.fixup, num_tiles=tiles)


def run_walk(plan, name: str, shapes, tmp_path: Path) -> list[str]:  # type: ignore[no-untyped-def]
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("needs g++ for the host harness")
    src = emit_simt(plan)
    section = src[src.index(WORK_BEGIN):src.index(WORK_END)]
    fix = ("if (kb0 != 0 || kb1 != W.k_iters) fix_of(W, w, j, g, f, ord, cnt, slot);"
           if "fix_of" in section else "")
    cpp = tmp_path / "walk.cpp"
    cpp.write_text(HARNESS % (INDEX_HELPERS, section, name, fix))
    exe = tmp_path / "walk"
    r = subprocess.run([gxx, "-std=c++17", "-O1", "-Wall", "-Werror", str(cpp), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = "".join(f"{M} {N} {K}\n" for M, N, K in shapes)
    return subprocess.run([str(exe)], input=text, capture_output=True, text=True,
                          check=True).stdout.split("\n")


@pytest.mark.parametrize("name", list(SPLITS))
def test_printed_walk_is_the_oracle_at_every_run_time_shape(name: str, tmp_path: Path) -> None:
    """One compiled walk (the kernel's configuration) at many run-time shapes: its numbers are
    make_work_split's at that shape, its units the oracle's (work_units), every (tile,
    k-iteration) covered once, the partials numbered in K order in private slots, and the
    rows the atomic fix-up zeroes hold every partial tile."""
    plan = plan_of(name)
    out = iter(run_walk(plan, name, SHAPES, tmp_path))
    for M, N, K in SHAPES:
        w = oracle(plan, M, N, K)
        got = list(map(int, next(out).split()[1:]))
        dp0, dp1 = w.dp_range
        assert got == [-(-N // plan.BN), w.grid, w.num_tiles, w.k_iters, w.splits, w.sk_tiles,
                       w.sk_ctas, w.sk_start if w.stream_k else got[7], dp0, dp1 - dp0,
                       w.sk_iters, w.partial_tiles,
                       w.partial_slots if w.partial_tiles else got[12]], (M, N, K)
        rows = []
        line = next(out)
        while line.startswith("U "):
            rows.append(tuple(map(int, line.split()[1:])))
            line = next(out)
        r0, r1 = map(int, line.split()[1:])
        printed: list[list[tuple[int, int, int]]] = [[] for _ in range(w.grid)]
        for wk, _j, g, kb0, kb1, *_ in rows:
            printed[wk].append((g, kb0, kb1))
        assert printed == work_units(w), (M, N, K)  # the walk the kernel runs is the split's
        cover: dict[tuple[int, int], int] = {}
        for _w, _j, g, kb0, kb1, *_ in rows:
            for k in range(kb0, kb1):
                cover[(g, k)] = cover.get((g, k), 0) + 1
        assert cover == {(g, k): 1 for g in range(w.num_tiles) for k in range(w.k_iters)}
        by_tile: dict[int, list[tuple[int, int, int, int]]] = {}
        for _w, _j, g, kb0, kb1, f, ord_, cnt, slot in rows:
            if kb0 != 0 or kb1 != w.k_iters:
                assert f >= 0 or w.fixup is Fixup.ATOMIC and "fix_of" not in emit_simt(plan)
                by_tile.setdefault(g, []).append((kb0, ord_, cnt, slot))
        slots = []
        for units in by_tile.values():
            units.sort()
            if units[0][1] >= 0:
                assert [u[1] for u in units] == list(range(len(units)))
                assert {u[2] for u in units} == {len(units)}
                slots += [u[3] for u in units]
        if w.fixup is Fixup.DETERMINISTIC:
            assert len(set(slots)) == len(slots)
            assert all(0 <= s < w.partial_slots for s in slots)
        gx = -(-N // plan.BN)
        if by_tile:  # the zeroed rows hold every partial tile's rows (and stay inside C)
            assert 0 <= r0 and r1 <= M
            for g in by_tile:
                assert r0 <= (g // gx) * plan.BM and min(M, (g // gx + 1) * plan.BM) <= r1
        else:
            assert (r0, r1) == (0, 0) or w.partial_tiles


def test_dp_ft_is_the_plain_kernel_without_a_partial_wave_and_refused_off_simt() -> None:
    whole = lower_simt(load(WT, M=1024, N=1024, K=512, CONFIG="large", DECOMP="dp_ft",
                            SMS_SLOTS=16))  # 64 tiles: 4 whole waves of 16
    assert whole.work is None and any("dp_ft: 64 tiles fill whole waves" in n for n in whole.notes)
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule
    ls = load_schedule(Path(__file__).resolve().parents[2] / "examples/gemm_decomposition.py",
                       dict(M=1024, N=1024, K=1024, DECOMP="dp_ft"))
    with pytest.raises(UnsupportedError, match=r"dp_ft \(front/tail\) is printed by the SIMT printer"):
        kernel_plan(ls, target="triton")


def test_data_parallel_kernel_walks_no_units_and_splits_take_a_run_time_workspace() -> None:
    dp = lower_simt(load(WT, M=300, N=257, K=777, CONFIG="large", DECOMP="dp"), name="dp")
    assert dp.work is None and dp.decomposition is None
    dp_src = emit_simt(dp)
    assert "work_unit" not in dp_src and "const int bidy = blockIdx.y;" in dp_src
    assert "dim3(((N + 127) / 128), ((M + 127) / 128), 1)" in dp_src  # the grid per launch
    sk = emit_simt(plan_of("streamk"))
    assert "const int worker = blockIdx.x;" in sk and "bidy = g / W.gx; bidx = g % W.gx;" in sk
    assert "const Work W, float* __restrict__ ws, int* __restrict__ tickets" in sk
    # the workspace grows to the launch's partial slots of the 256 threads' 8 x 8 register tiles
    assert "cudaMalloc(&ws, (size_t)slots * 16384 * sizeof(float))" in sk
    assert "if (W.partial_slots > ws_slots || W.partial_tiles > ws_tickets) {" in sk
    assert "<<<dim3(W.workers, 1, 1), dim3(256, 1, 1), 99840, st>>>" in sk
    assert "for (int i_Ko = kb0; i_Ko < kb1; ++i_Ko) {" in sk
    assert "if (kb0 + s < kb1) issue_tile(kb0 + s, s, 0, 20);" in sk
    # the ticket: one thread's acquire-release atomic after a CTA barrier, no per-thread fence
    assert "if (tid == 0) fix_last = tilec_ticket(tickets + f) == cnt - 1;" in sk
    assert "atom.acq_rel.gpu.global.add.s32" in sk and "__threadfence" not in sk
    det, atomic = emit_simt(plan_of("splitk_det")), emit_simt(plan_of("splitk_atomic"))
    assert "__stcg(mine + q * 256 + tid" in det and "fix_slot(W, f, i)" in det
    # atomic: partials added into C (fp32), whose partial tiles' rows the launcher zeroes
    # first (all of C under split-K); no workspace, no ticket
    assert "atomicAdd(reinterpret_cast<float4*>(&C[m * ldc + n])" in atomic
    assert "zeroed_rows(S, W, r0, r1);" in atomic and "cudaMemset2DAsync(C + (size_t)r0 * ldc" in atomic
    assert "int* __restrict__ tickets" not in atomic and "fix_slot(W, f, i)" not in atomic
    skpp0 = emit_simt(plan_of("skpp0"))  # a persistent data-parallel grid: no fix-up
    assert "work_unit" in skpp0 and "int* __restrict__ tickets" not in skpp0 and "atomicAdd" not in skpp0


@pytest.mark.parametrize("params, match", [
    (dict(DECOMP="splitk", SPLITS=2, FIXUP="reduce_kernel"), "reduce_kernel fix-up"),
    (dict(DECOMP="streamk", ASYNC=0, STAGES=2, BK=8), "needs K tiles staged through cp.async"),
])
def test_refusals_name_what_to_change(params: dict, match: str) -> None:
    with pytest.raises(UnsupportedError, match=match):
        lower_simt(load(WT, M=300, N=300, K=300, CONFIG="large", **params))
    fusion = load(WT, M=300, N=300, K=300, CONFIG="large").decompose("auto")
    with pytest.raises(UnsupportedError, match="no cost model on the SIMT path; name the"):
        lower_simt(fusion)


def test_split_kernels_compile_for_sm90a(tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: the CUDA compile tests need the CUDA toolkit")
    # one kernel per (kind, fix-up): the source no longer depends on the shape
    big = dict(M=4096, N=4096, K=4096, CONFIG="large")  # the large row under its 128 registers
    cases = {k: SPLITS[k] for k in ("splitk_det", "splitk_atomic", "streamk", "small16_sk",
                                    "skpp0", "dp_ft", "dp_ft_atomic")}
    cases |= {"big_dp_1sk": dict(big, DECOMP="dp_1sk"),
              "big_dp_1sk_atomic": dict(big, DECOMP="dp_1sk", FIXUP="atomic")}
    procs = []
    for name, params in cases.items():
        cu = tmp_path / f"{name}.cu"
        cu.write_text(emit_simt(lower_simt(load(WT, **params), name=name)))
        # spills are errors where it counts: the large row at 4096^3 (a ragged plan's guards
        # may cost a few bytes of local memory at its 128-register cap)
        spills = ["-Xptxas", "-warn-spills,-Werror"] if name.startswith("big") else []
        procs.append((name, subprocess.Popen(
            [nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-c", str(cu), "-o",
             str(cu.with_suffix(".o")), "-Werror", "all-warnings", *spills],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    for name, p in procs:
        _, err = p.communicate()
        assert p.returncode == 0, f"{name}: {err}"
