"""The deterministic fix-up's spread sum (printer/spread.py) without a GPU: which files print it,
that they compile warning-free for sm_90a (plain and swapped tiles, clusters, both B layouts),
and a host emulation of a spread launch built on the file's own functions (the work walk, each
part's slot, ``spread_share``, ``part_float4``, ``reduce_float4``): every part's share of every
warpgroup, summed from every slot in K order, gives C = A @ B exactly (small integers) against
numpy, each element of C written once, the padding of its rows untouched, the shares of a
warpgroup's float4s cut among its tile's parts with none left out or taken twice, and the parts
that wait on a ticket exactly the ``cnt`` it waits for."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.codegen import test_cuda_reduce_kernel as red
from tests.codegen import test_swap_ab as swap
from tests.codegen.cuda_plans import seed
from tests.codegen.test_cuda_emit import needs_gxx, needs_nvcc
from tilec.codegen.cuda.launch import compile_cu, launch_numbers, run_split
from tilec.codegen.cuda.printer import CudaPrinter, emit, host_prefix

DET = dict(FIXUP="deterministic", DECOMP="splitk")

# the spread phase: in place of the reduce kernel's grid, each part's share of each warpgroup
SPREAD_PHASE = r"""
  (void)sms;  // (the reduce kernel's grid: not launched)
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
  std::vector<int> seen((size_t)sh.GROUPS * PART_FLOAT4S, 0), waiting(sh.GROUPS, 0), cnt_of(sh.GROUPS, -1);
  for (int w = 0; w < sh.WORKERS; ++w) {
    int g, kb0, kb1;
    for (int j = 0; sh.work_unit(w, j, g, kb0, kb1); ++j) {
      if (kb0 == 0 && kb1 == sh.K_ITERS) continue;  // a whole tile: the epilogue, no fix-up
      int f, ord, cnt, slot;
      sh.fix_of(w, j, g, f, ord, cnt, slot);
      ++waiting[f];
      if (cnt_of[f] >= 0 && cnt_of[f] != cnt) { std::printf("BAD cnt %d\n", f); return 1; }
      cnt_of[f] = cnt;
      for (int rank = 0; rank < CLUSTER; ++rank)
        for (int cw = 0; cw < CONSUMERS; ++cw) {
          int lo, hi;
          spread_share(ord, cnt, lo, hi);
          if (lo < 0 || hi > WG_FLOAT4S || lo > hi) { std::printf("BAD share %d %d\n", lo, hi); return 1; }
          const long long base = (long long)f * PART_FLOAT4S + part_float4(rank, cw, 0, 0);
          for (int e = lo; e < hi; ++e) {
            ++seen[base + e];
            read.clear();
            reduce_float4<F4>(sh, base + e, load, put);
            if (read.empty()) continue;
            while (read.size() > 1 && read.back() == read[read.size() - 2]) read.pop_back();
            int k_at = 0;  // K order: the tile's parts back to back from k-iteration 0 to K_ITERS
            for (long long s : read) {
              if (own_g[s] != f || own_k0[s] != k_at) { std::printf("BAD order %d %lld\n", f, s); return 1; }
              k_at = own_k1[s];
            }
            if (k_at != sh.K_ITERS) { std::printf("BAD K %d %d\n", f, k_at); return 1; }
          }
        }
    }
  }
  for (int f = 0; f < sh.GROUPS; ++f)
    if (waiting[f] != cnt_of[f]) { std::printf("BAD waiters %d: %d of %d\n", f, waiting[f], cnt_of[f]); return 1; }
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i] != 1) { std::printf("BAD share of float4 %zu: %d\n", i, seen[i]); return 1; }
"""


def harness(swapped: bool) -> str:
    """The reduce-kernel test's harness (its partial stores; for swapped tiles, placed by the
    swapped D fragment as test_swap_ab does) with the spread phase in place of the reduce grid."""
    h = red.HARNESS
    if swapped:
        for old, new in swap.SWAPPED_PLACEMENT:
            h = h.replace(old, new)
    start = h.index("  int blocks = 0, threads = 0;")
    end = h.index('  FILE* out = std::fopen(argv[10], "wb");')
    return h[:start] + SPREAD_PHASE + h[end:]


def _check(plan, shapes: list[tuple[int, int, int]], tmp: Path) -> None:  # type: ignore[no-untyped-def]
    tmp.mkdir(parents=True, exist_ok=True)
    src = emit(plan)
    (tmp / "sched.h").write_text(host_prefix(src))
    (tmp / "h.cpp").write_text('#include "sched.h"\n' + harness(plan.swap_ab).replace(
        "@NS@", CudaPrinter(plan).cname))
    exe = tmp / "h"
    import subprocess

    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
                    "-I", str(tmp), "-o", str(exe), str(tmp / "h.cpp")], check=True)
    for M, N, K in shapes:
        grid, splits, sk_tiles, sk_ctas = launch_numbers(plan, run_split(plan, M, N, K))
        assert splits > 1, (M, N, K)
        ldc = N + 3  # padded rows: the padding must stay untouched
        out = tmp / "c.bin"
        r = subprocess.run([str(exe), *map(str, (M, N, K, ldc, grid, splits, sk_tiles, sk_ctas, 132, out))],
                           capture_output=True, text=True)
        assert r.returncode == 0 and "BAD" not in r.stdout, (M, N, K, r.stdout, r.stderr)
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


def test_only_split_k_with_the_deterministic_fix_up_prints_the_spread_sum() -> None:
    params = red.PLANS[1][0]
    det = emit(seed(**params, **DET))
    assert "spread_sum(sh, C, ws, ticket" in det and "const Shape sh, const int spread)" in det
    assert "ticket_acq_rel(ticket) == cnt - 1" in det  # the ticket fix-up stays for other launches
    assert "reduce_kernel(" not in det and "partial_store(" not in det
    for other in (dict(DECOMP="splitk", FIXUP="atomic"), dict(DECOMP="splitk", FIXUP="reduce_kernel"),
                  dict(DECOMP="streamk", FIXUP="deterministic"), dict(DECOMP="dp")):
        src = emit(seed(**{**params, **other}))
        kernel = src.split("gemm_kernel(")[1]
        assert "spread_s" not in src and "use_spread" not in src and "ld_acquire(" not in kernel, other


@needs_nvcc
def test_spread_plans_compile_without_warnings(tmp_path: Path) -> None:
    plans = [seed(**p, **DET) for p, _ in red.PLANS[:3]]
    plans += [seed(**red.PLANS[0][0], **DET, DTYPE="fp16"), seed(**red.PLANS[1][0], **DET, B_LAYOUT="kn"),
              seed(**red.PLANS[0][0], **DET, EPILOGUE="direct"),
              swap.plan(**swap.REDUCE[0][0], **DET), swap.plan(**swap.REDUCE[3][0], **DET)]
    for i, plan in enumerate(plans):
        src = emit(plan)
        # a cooperative launch with spread = 1, else (refused, or not spread) the plain one with 0
        assert "attr[0].id = cudaLaunchAttributeCooperative" in src and ", sh, 1) == cudaSuccess" in src, i
        assert re.search(r"if \(!launched\) kernel<<<[^;]*, sh, 0\);", src), i
        compile_cu(src, tmp_path / f"s{i}.so", shared=True, werror=True)


@needs_gxx
@pytest.mark.parametrize("i", range(len(red.PLANS)))
def test_a_spread_launch_emulated_on_the_host_computes_a_at_b(i: int, tmp_path: Path) -> None:
    params, shapes = red.PLANS[i]
    _check(seed(**params, **DET), [s for s in shapes if s[2] > 2 * 64], tmp_path)


@needs_gxx
@pytest.mark.parametrize("i", range(len(swap.REDUCE)))
def test_a_swapped_spread_launch_emulated_on_the_host(i: int, tmp_path: Path) -> None:
    params, shapes = swap.REDUCE[i]
    _check(swap.plan(**params, **DET), shapes, tmp_path)


@needs_gxx
def test_spread_at_random_shapes(tmp_path: Path) -> None:
    rng = np.random.default_rng(29)
    for i in (1, 2, 4):
        plan = seed(**red.PLANS[i][0], **DET)
        shapes = [(int(rng.integers(1, 600)), int(rng.integers(1, 500)),
                   int(rng.integers(2 * plan.BK + 1, 3000))) for _ in range(3)]
        _check(plan, shapes, tmp_path / str(i))
