"""The CUDA backend's reduce-kernel fix-up (Fixup.REDUCE_KERNEL, split-K) without a GPU: the
file compiles warning-free for sm_90a; its workspace is one slot per K part (counted from the
work units); Stream-K kinds are refused with it; the launcher's grids at run-time shapes; and a
host emulation of both kernels built on the file's own schedule functions (the work walk, the
slot of each part, the slot layout ``part_float4`` and its inverse ``reduce_place``, the reduce
grid) computes C = A @ B exactly (small integers) against numpy, every element of C written
once, the padding of its rows untouched, each element's slots summed in K order."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.codegen.cuda_plans import seed
from tests.codegen.test_cuda_emit import needs_gxx, needs_nvcc
from tilec.codegen.cuda.launch import compile_cu, launch_numbers, run_split
from tilec.codegen.cuda.printer import CudaPrinter, emit, host_prefix
from tilec.codegen.cuda.printer.reduce import RED_MIN_THREADS, RED_THREADS
from tilec.errors import UnsupportedError
from tilec.ir import ceil_div
from tilec.transforms.decompose import work_units
from tilec.transforms.plan import Decomposition, Fixup

RED = dict(FIXUP="reduce_kernel", DECOMP="splitk")
# (params, launch shapes): one CTA per group and 2x1 clusters (dead tiles in the last group),
# 64 / 128 / 256-row tiles (one or two consumer warpgroups, one or two m64 blocks each), ragged
# M and N, an N of one column, K parts that do not divide K_ITERS, fewer k-iterations than parts
PLANS = [
    (dict(M=300, N=200, K=640, BM=128, BN=128, CM=1, CN=1, SMS=8, SPLITS=3),
     [(300, 200, 640), (333, 260, 1000), (129, 1, 320), (64, 64, 128)]),
    (dict(M=520, N=300, K=1000, BM=128, BN=128, CM=2, CN=1, SMS=8, SPLITS=4),
     [(520, 300, 1000), (333, 129, 777), (1000, 100, 200)]),
    (dict(M=333, N=300, K=1000, BM=256, BN=128, CM=1, CN=1, SMS=8, SPLITS=5),
     [(333, 300, 1000), (257, 77, 4000)]),
    (dict(M=100, N=640, K=1000, BM=128, BN=64, CM=1, CN=1, SMS=16, SPLITS=2, STAGES=8),
     [(100, 640, 1000), (77, 1000, 3000)]),
    (dict(M=256, N=512, K=2048, BM=128, BN=256, CM=1, CN=2, SMS=8, SPLITS=6),
     [(256, 512, 2048), (200, 600, 3000)]),
]


def red_plan(params: dict, **kw: object):  # type: ignore[no-untyped-def]
    return seed(**RED, **params, **kw)


@needs_nvcc
def test_reduce_kernel_plans_compile_without_warnings(tmp_path: Path) -> None:
    """nvcc -Werror, as a shared library (the host launcher too): each PLANS tile and cluster
    shape, fp16, B given K x N, the direct epilogue (fp32 C is not printed for CUDA)."""
    plans = [red_plan(p) for p, _ in PLANS[:3]]
    plans += [red_plan(PLANS[0][0], DTYPE="fp16"), red_plan(PLANS[1][0], B_LAYOUT="kn"),
              red_plan(PLANS[0][0], EPILOGUE="direct")]
    for i, plan in enumerate(plans):
        src = emit(plan)
        assert "cudaLaunchKernelEx(&cfg, reduce_kernel" in src and "ticket_acq_rel(" not in src.split("gemm_kernel(")[1]
        compile_cu(src, tmp_path / f"r{i}.so", shared=True, werror=True)


def test_the_other_fix_ups_print_no_reduce_kernel() -> None:
    """Only a reduce-kernel plan prints the second kernel and the partial stores; the atomic
    fix-up none of its functions (the deterministic one prints the schedule section's
    ``reduce_float4`` for its spread sum: test_cuda_spread_fixup.py)."""
    for fixup in ("deterministic", "atomic"):
        src = emit(seed(**PLANS[0][0], DECOMP="splitk", FIXUP=fixup))
        assert "reduce_kernel(" not in src and "partial_store(" not in src
        assert ("PART_FLOAT4S" in src) == (fixup == "deterministic")
    red = emit(red_plan(PLANS[0][0]))
    assert "fix_last" not in red and "ticket_acq_rel" not in red.split("gemm_kernel(")[1]


@pytest.mark.parametrize("kind", ["streamk", "dp_1sk", "sk2_dp", "skpp"])
def test_stream_k_with_the_reduce_kernel_is_refused(kind: str) -> None:
    plan = seed(M=520, N=300, K=1000, BN=128, CM=1, CN=1, SMS=8, DECOMP=kind,
                FIXUP="reduce_kernel")
    assert plan.work.fixup is Fixup.REDUCE_KERNEL
    with pytest.raises(UnsupportedError, match=rf"plan '{plan.name}' is '{kind}' with the "
                                               r"'reduce_kernel' fix-up; .*split-K parts only"):
        emit(plan)


def _units(plan, M: int, N: int, K: int) -> list[tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    """Every work unit (group, kb0, kb1) at a launch, by decompose.work_units (the brute force)."""
    c = plan.cluster[0]
    w = run_split(plan, M, N, K)
    groups = ceil_div(int(plan.order.at(M=M, N=N).concrete().num_tiles), c)
    split = dataclasses.replace(w, grid=w.grid // c, num_tiles=groups, k_iters=ceil_div(K, plan.BK))
    return [u for units in work_units(split) for u in units]


@pytest.mark.parametrize("i", range(len(PLANS)))
def test_workspace_is_one_slot_per_k_part(i: int) -> None:
    """fp32 floats: one slot per work unit (a K part of a group of CLUSTER tiles), BM x BN per
    tile; no tickets. One part (K_ITERS = 1): no workspace at all."""
    params, shapes = PLANS[i]
    plan = red_plan(params)
    pr = CudaPrinter(plan)
    for M, N, K in [*shapes, (shapes[0][0], shapes[0][1], 1)]:
        units = _units(plan, M, N, K)
        parts = len(units) if any((kb0, kb1) != (0, ceil_div(K, plan.BK)) for _, kb0, kb1 in units) else 0
        want = parts * plan.cluster[0] * plan.BM * plan.BN
        assert pr.workspace(run_split(plan, M, N, K)) == (want, 0), (M, N, K)


HARNESS = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
// C = A @ B by the file's own functions: gemm_kernel's walk and partial stores (the tile by
// brute force, placed by wgmma's D fragment), then reduce_kernel's grid-stride loop over its
// grid, each float4 the file's reduce_float4 (the kernel's own work) over host loads and stores.
static float A_at(int m, int k) { return (float)((m * 7 + k * 3) % 5 - 2); }
static float B_at(int k, int n) { return (float)((k * 5 + n * 11) % 7 - 3); }
int main(int argc, char** argv) {
  using namespace @NS@;
  if (argc != 11) return 2;
  int a[9];
  for (int i = 0; i < 9; ++i) a[i] = std::atoi(argv[i + 1]);
  const Shape sh = make_shape(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  const int M = sh.M, N = sh.N, K = sh.K, ldc = (int)sh.LDC, sms = a[8];
  if (sh.SPLITS < 2) { std::printf("BAD one part\n"); return 1; }
  const long long slots = (long long)sh.GROUPS * sh.SPLITS;
  std::vector<float> ws(slots * PART_FLOAT4S * 4, NAN);
  std::vector<int> ws_count(ws.size(), 0);
  std::vector<int> own_g(slots, -1), own_k0(slots, -1), own_k1(slots, -1);
  std::vector<float> tile((size_t)BM * BN);
  for (int w = 0; w < sh.WORKERS; ++w) {
    int g, kb0, kb1;
    for (int j = 0; sh.work_unit(w, j, g, kb0, kb1); ++j) {
      int f, ord, cnt, slot;
      sh.fix_of(w, j, g, f, ord, cnt, slot);
      own_g[slot] = g; own_k0[slot] = kb0; own_k1[slot] = kb1;
      for (int rank = 0; rank < CLUSTER; ++rank) {
        const int t = g * CLUSTER + rank;
        if (!sh.tile_alive(t)) continue;
        const int m0 = sh.tile_m(t) * BM, n0 = sh.tile_n(t) * BN;
        for (int r = 0; r < BM; ++r)
          for (int c = 0; c < BN; ++c) {
            float s = 0.f;  // TMA reads zeros past M, N and K
            if (m0 + r < M && n0 + c < N)
              for (int k = kb0 * BK; k < kb1 * BK && k < K; ++k) s += A_at(m0 + r, k) * B_at(k, n0 + c);
            tile[(size_t)r * BN + c] = s;
          }
        for (int cw = 0; cw < CONSUMERS; ++cw)
          for (int ctid = 0; ctid < 128; ++ctid)
            for (int ms = 0; ms < M_SUB; ++ms)
              for (int jj = 0; jj < BN / 8; ++jj)
                for (int i = 0; i < 4; ++i) {
                  const int warp = ctid / 32, lane = ctid % 32;  // value 4 * jj + i of thread ctid
                  const int r = cw * WG_M + ms * 64 + warp * 16 + lane / 4 + 8 * (i / 2);
                  const int c = 8 * jj + 2 * (lane % 4) + i % 2;
                  const long long at = ((long long)slot * PART_FLOAT4S + part_float4(rank, cw, ms * (BN / 8) + jj, ctid)) * 4 + i;
                  ws[at] = tile[(size_t)r * BN + c];
                  ++ws_count[at];
                }
      }
    }
  }
  for (size_t i = 0; i < ws_count.size(); ++i)
    if (ws_count[i] > 1) { std::printf("BAD ws %zu stored %d times\n", i, ws_count[i]); return 1; }
  int blocks = 0, threads = 0;
  reduce_grid(sh, sms, blocks, threads);
  std::printf("G %d %d\n", blocks, threads);
  std::vector<float> C((size_t)M * ldc, NAN);
  std::vector<int> count(C.size(), 0);
  struct F4 { float x, y, z, w; };
  std::vector<long long> read;  // the slots one float4's sum read, in order
  const auto load = [&](long long i) {
    read.push_back(i / PART_FLOAT4S);
    return F4{ws[4 * i], ws[4 * i + 1], ws[4 * i + 2], ws[4 * i + 3]};
  };
  const auto put = [&](int row, int col, bool two, float x, float y) {
    for (int i = 0; i < (two ? 2 : 1); ++i) {
      if (row >= M || col + i >= N) { std::printf("BAD put %d %d\n", row, col + i); std::exit(1); }
      C[(size_t)row * ldc + col + i] = i ? y : x;
      ++count[(size_t)row * ldc + col + i];
    }
  };
  const long long total = (long long)sh.GROUPS * PART_FLOAT4S;
  for (int b = 0; b < blocks; ++b)
    for (int x = 0; x < threads; ++x)
      for (long long p = (long long)b * threads + x; p < total; p += (long long)blocks * threads) {
        read.clear();
        reduce_float4<F4>(sh, p, load, put);
        if (read.empty()) continue;
        // K order: each slot a part of this float4's group, the parts back to back from k-iteration
        // 0 to K_ITERS (the unrolled loads past the last slot read the last again)
        while (read.size() > 1 && read.back() == read[read.size() - 2]) read.pop_back();
        const int f = (int)(p / PART_FLOAT4S);
        int k_at = 0;
        for (long long slot : read) {
          if (own_g[slot] != f || own_k0[slot] != k_at) { std::printf("BAD order %d %lld\n", f, slot); return 1; }
          if (ws_count[(slot * PART_FLOAT4S + p % PART_FLOAT4S) * 4] != 1) { std::printf("BAD unwritten\n"); return 1; }
          k_at = own_k1[slot];
        }
        if (k_at != sh.K_ITERS) { std::printf("BAD K %d %d\n", f, k_at); return 1; }
      }
  FILE* out = std::fopen(argv[10], "wb");
  std::fwrite(C.data(), sizeof(float), C.size(), out);
  std::fwrite(count.data(), sizeof(int), count.size(), out);
  std::fclose(out);
  return 0;
}
"""


def _harness(plan, tmp: Path, text: str | None = None) -> Path:  # type: ignore[no-untyped-def]
    """The harness (``text``, default HARNESS) built against ``plan``'s schedule section."""
    src = emit(plan)
    ns = CudaPrinter(plan).cname
    (tmp / "sched.h").write_text(host_prefix(src))
    (tmp / "h.cpp").write_text('#include "sched.h"\n' + (HARNESS if text is None else text).replace("@NS@", ns))
    exe = tmp / "h"
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
                    "-I", str(tmp),
                    "-o", str(exe), str(tmp / "h.cpp")], check=True)
    return exe


def _reduce_grid(groups: int, per_group: int, sms: int) -> tuple[int, int]:
    """The reduce kernel's (blocks, threads) as reduce.py documents them."""
    total, threads = groups * per_group, RED_THREADS
    while threads > RED_MIN_THREADS and ceil_div(total, threads) < 2 * sms:
        threads //= 2
    return min(ceil_div(total, threads), sms * (2048 // threads)), threads


@needs_gxx
@pytest.mark.parametrize("i", range(len(PLANS)))
def test_both_kernels_emulated_on_the_host_compute_a_at_b(i: int, tmp_path: Path) -> None:
    params, shapes = PLANS[i]
    _assert_emulation_is_a_at_b(red_plan(params), shapes, tmp_path)


@needs_gxx
def test_the_emulation_at_random_shapes(tmp_path: Path) -> None:
    """The same at random launch sizes (at least two K parts) of the 2x1-cluster and the
    256-row plans."""
    rng = np.random.default_rng(13)
    for i in (1, 2):
        plan = red_plan(PLANS[i][0])
        shapes = [(int(rng.integers(1, 600)), int(rng.integers(1, 500)),
                   int(rng.integers(2 * plan.BK + 1, 3000))) for _ in range(4)]
        _assert_emulation_is_a_at_b(plan, shapes, tmp_path / str(i))


def _assert_emulation_is_a_at_b(plan, shapes: list[tuple[int, int, int]], tmp_path: Path,  # type: ignore[no-untyped-def]
                                text: str | None = None) -> None:
    """Both kernels at each launch size on the host (the harness, or ``text``: another walk over
    the same partials, test_cuda_spread_fixup.py), against numpy's A @ B."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    exe = _harness(plan, tmp_path, text)
    c = plan.cluster[0]
    for (M, N, K), sms in zip(shapes, (132, 1, 3, 16), strict=False):
        w = run_split(plan, M, N, K)
        grid, splits, sk_tiles, sk_ctas = launch_numbers(plan, w)
        ldc = N + 3  # padded rows: the padding must stay untouched
        out = tmp_path / "c.bin"
        r = subprocess.run([str(exe), *map(str, (M, N, K, ldc, grid, splits, sk_tiles, sk_ctas,
                                                 sms, out))], capture_output=True, text=True)
        assert r.returncode == 0 and "BAD" not in r.stdout, (M, N, K, r.stdout, r.stderr)
        groups = ceil_div(int(plan.order.at(M=M, N=N).concrete().num_tiles), c)
        blocks, threads = (int(v) for v in r.stdout.split("G ")[1].split()[:2])
        assert (blocks, threads) == _reduce_grid(groups, c * plan.BM * plan.BN // 4, sms)
        raw = np.fromfile(out, dtype=np.uint8)
        n = M * ldc
        got = raw[:4 * n].view(np.float32).reshape(M, ldc)
        count = raw[4 * n:].view(np.int32).reshape(M, ldc)
        m, k, nn = np.arange(M)[:, None], np.arange(K)[None, :], np.arange(N)[None, :]
        A = ((m * 7 + k * 3) % 5 - 2).astype(np.float64)
        B = ((np.arange(K)[:, None] * 5 + nn * 11) % 7 - 3).astype(np.float64)
        assert (count[:, :N] == 1).all() and (count[:, N:] == 0).all(), (M, N, K)
        assert np.isnan(got[:, N:]).all()
        np.testing.assert_array_equal(got[:, :N], A @ B)


@pytest.mark.parametrize("i", range(len(PLANS)))
def test_the_gemm_grid_at_run_time_shapes(i: int) -> None:
    """The GEMM kernel's launch numbers at a launch: split-K's grid (whole clusters, one CTA per
    unit or the plan's persistent CTAs), its parts capped by K_ITERS; sk_* zero."""
    params, shapes = PLANS[i]
    plan = red_plan(params)
    c = plan.cluster[0]
    for M, N, K in [*shapes, (shapes[0][0], shapes[0][1], 64)]:
        grid, splits, sk_tiles, sk_ctas = launch_numbers(plan, run_split(plan, M, N, K))
        units = _units(plan, M, N, K)
        assert splits == min(params["SPLITS"], ceil_div(K, plan.BK))
        assert len(units) == ceil_div(int(plan.order.at(M=M, N=N).concrete().num_tiles), c) * splits
        workers = grid // c
        assert grid % c == 0 and (sk_tiles, sk_ctas) == (0, 0)
        assert workers == len(units) or (plan.split.ctas and workers == plan.split.ctas // c)
        assert run_split(plan, M, N, K).kind is Decomposition.SPLIT_K


@needs_nvcc
@pytest.mark.slow
def test_the_python_launcher_allocates_slots_without_tickets(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """CudaKernel.__call__ with a stand-in torch: the workspace is allocated for a reduce-kernel
    plan (no tickets) before the launch (which fails: no GPU)."""
    from tests.codegen.test_cuda_generic import _fake_torch
    from tilec.codegen.cuda.launch import build
    from tilec.errors import KernelArgumentError

    fake, Tensor, _ = _fake_torch()
    fake.zeros = lambda n, dtype=None, device=None: Tensor((n,), dtype, device=device)
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setitem(sys.modules, "torch.cuda", fake.cuda)
    plan = red_plan(PLANS[0][0])
    k = build(plan, cache_dir=tmp_path)
    A, B = Tensor((333, 1000), fake.bfloat16), Tensor((264, 1000), fake.bfloat16)
    with pytest.raises(KernelArgumentError, match="cudaError_t"):
        k(A, B)
    floats, tickets = k.printer.workspace(k.split(333, 264, 1000))
    assert floats > 0 and tickets == 0
    assert k._ws[0][0].numel() == floats and k._ws[0][1].numel() == 1
