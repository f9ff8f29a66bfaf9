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
from tilec.codegen.cuda.printer import emit

DET = dict(FIXUP="deterministic", DECOMP="splitk")

# the reduce-kernel harness's walk over its grid, whose body sums float4 p by reduce_float4 and
# checks its slots' K order
REDUCE_WALK = """  const long long total = (long long)sh.GROUPS * PART_FLOAT4S;
  for (int b = 0; b < blocks; ++b)
    for (int x = 0; x < threads; ++x)
      for (long long p = (long long)b * threads + x; p < total; p += (long long)blocks * threads) {
"""
# in its place, the spread launch's walk: each part's share (spread_share) of each warpgroup of its
# tile, the float4s spread_sum hands to reduce_float4; the shares of a warpgroup's float4s must cut
# it with none left out or taken twice, and the parts that wait on a ticket must be its cnt
SPREAD_WALK = r"""  std::vector<long long> ps;
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
          for (int e = lo; e < hi; ++e) { ++seen[base + e]; ps.push_back(base + e); }
        }
    }
  }
  for (int f = 0; f < sh.GROUPS; ++f)
    if (waiting[f] != cnt_of[f]) { std::printf("BAD waiters %d: %d of %d\n", f, waiting[f], cnt_of[f]); return 1; }
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i] != 1) { std::printf("BAD share of float4 %zu: %d\n", i, seen[i]); return 1; }
  for (long long p : ps) {
"""


def harness(swapped: bool) -> str:
    """The reduce-kernel test's harness (its partial stores; for swapped tiles, placed by the
    swapped D fragment as test_swap_ab does) walking a spread launch instead of the reduce grid."""
    h = red.HARNESS
    if swapped:
        for old, new in swap.SWAPPED_PLACEMENT:
            h = h.replace(old, new)
    assert h.count(REDUCE_WALK) == 1
    return h.replace(REDUCE_WALK, SPREAD_WALK)


def _check(plan, shapes: list[tuple[int, int, int]], tmp: Path) -> None:  # type: ignore[no-untyped-def]
    """The reduce-kernel test's checks (C = A @ B exactly, each element once, the padding
    untouched) on a spread launch at each size, every one cut into parts."""
    for M, N, K in shapes:
        assert launch_numbers(plan, run_split(plan, M, N, K))[1] > 1, (M, N, K)
    red._assert_emulation_is_a_at_b(plan, shapes, tmp, harness(plan.swap_ab))


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
