"""CUDA backend without a GPU: generated files compile warning-free for sm_90a, the masks,
predicates and work units the kernel uses equal the plan's (a host harness runs the file's own
schedule functions and is compared with sympy and with decompose.work_units), and unsupported plan
features are refused.  Every plan is the seed schedule lowered for CUDA."""

from __future__ import annotations

import dataclasses
import itertools
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.codegen.cuda_plans import mc_values, seed, sizes
from tilec.codegen.cuda.launch import CudaBuildError, compile_cu
from tilec.codegen.cuda.printer import SCHEDULE_END, CudaPrinter, emit, host_prefix
from tilec.errors import UnsupportedError
from tilec.ir import ceil_div
from tilec.proofs import compile_int
from tilec.transforms.decompose import work_units
from tilec.transforms.plan import CTA, TILE, Decomposition, DType, Fixup, J, MulticastMode


def _sk_contributors(split, k_iters: int, tile: int) -> list[tuple[int, int, int, int]]:
    """Brute force: the Stream-K CTAs whose even share of the region's iterations touches region
    tile ``tile``, in K order, as (cta, slot, k_begin, k_end); a partial goes to slot 2*cta when
    the tile is the CTA's first, else 2*cta + 1."""
    total = split.sk_tiles * k_iters
    out = []
    for c in range(split.sk_ctas):
        b, e = c * total // split.sk_ctas, (c + 1) * total // split.sk_ctas
        kb, ke = max(b - tile * k_iters, 0), min(e - tile * k_iters, k_iters)
        if kb < ke:
            out.append((c, 2 * c + (0 if b // k_iters == tile else 1), kb, ke))
    return out


L, S = MulticastMode.LEADER, MulticastMode.SLICED

# (M, N, K, BM, BN, CM, CN, mode, form, sms): clusters of 1, 2, 4 along M and N, leader and
# sliced, closed forms where derivable ("closed") or the general form only, several tile
# shapes, ragged edges, partial rounds.
MATRIX = [
    (1000, 1500, 776, 128, 256, 1, 1, L, "closed", 6),
    (1024, 2048, 512, 128, 128, 1, 2, L, "closed", 8),
    (2048, 1024, 512, 128, 256, 2, 1, L, "closed", 8),
    (1100, 1300, 512, 128, 256, 1, 4, L, "general", 8),
    (2048, 1536, 768, 128, 256, 4, 1, S, "closed", 12),
    (1300, 1100, 512, 128, 256, 2, 2, S, "general", 8),
    (1300, 1100, 512, 128, 256, 2, 2, L, "closed", 8),
    (1536, 2048, 512, 128, 128, 1, 2, S, "closed", 8),
    (1000, 1000, 1000, 64, 128, 2, 1, L, "general", 6),
    (1000, 1000, 1000, 256, 128, 2, 2, L, "closed", 8),
    (777, 1000, 1000, 128, 192, 1, 4, S, "general", 8),
    (1536, 1536, 512, 128, 256, 2, 2, S, "closed", 12),
]
SLOW_MATRIX = [
    (4096, 4096, 4096, 128, 256, 1, 1, L, "closed", 132),
    (4096, 4096, 4096, 128, 256, 2, 2, L, "closed", 120),
    (8192, 8192, 8192, 128, 256, 4, 1, S, "closed", 120),
    (1000, 1000, 1000, 128, 64, 1, 2, L, "general", 8),
]


def plan_of(row: tuple, **kw: object):  # type: ignore[no-untyped-def]
    M, N, K, BM, BN, CM, CN, mode, form, sms = row
    return seed(mode, form == "closed", M=M, N=N, K=K, BM=BM, BN=BN, CM=CM, CN=CN, SMS=sms,
                STAGES=4 if BM + BN <= 384 else 3, **kw)


def _ids(rows: list) -> list[str]:
    return [f"{r[0]}x{r[1]}x{r[2]}_{r[3]}x{r[4]}_c{r[5]}x{r[6]}_{r[7].value}_{r[8]}" for r in rows]


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def _compile_all(rows: list, tmp: Path) -> list[str]:
    """nvcc -Werror over every row's .cu; the error text of each that fails."""
    plans = [plan_of(r) for r in rows]

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
def test_every_epilogue_compiles_without_warnings(tmp_path: Path) -> None:
    """MATRIX compiles the printer's choice (overlap, or direct where TMA cannot store C); here
    the schedule's other choices, and the two measurements the bench times."""
    base = dict(M=1300, N=1504, K=1000, CM=2, CN=1, SMS=8)
    plans = [seed(**base, EPILOGUE="tma"), seed(**base, EPILOGUE="direct"),
             seed(**base, EPILOGUE="tma_tile", STAGES=3)]
    srcs = [emit(p) for p in plans] + [emit(seed(**base), epilogue="none", loads=False)]

    def one(i: int) -> str | None:
        try:
            compile_cu(srcs[i], tmp_path / f"e{i}.o", shared=False, werror=True)
        except CudaBuildError as e:
            return str(e)
        return None

    with ThreadPoolExecutor(max_workers=4) as ex:
        errors = [e for e in ex.map(one, range(len(srcs))) if e]
    assert not errors, errors[0]


@needs_nvcc
@pytest.mark.slow
def test_large_schedules_compile_without_warnings(tmp_path: Path) -> None:
    errors = _compile_all(SLOW_MATRIX, tmp_path)
    assert not errors, errors[0]


# ---------------------------------------------------------------------------- host harness

HARNESS = r"""
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
  using namespace NS;
  if (argc != 9) return 2;
  int a[8];
  for (int i = 0; i < 8; ++i) a[i] = std::atoi(argv[i + 1]);
  const Shape sh = make_shape(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  std::printf("V %d\n", (int)facts_hold(sh));
  for (int t = 0; t < sh.NUM_TILES; ++t) std::printf("T %d %d %d %d\n", t, sh.tile_m(t), sh.tile_n(t), (int)sh.tile_alive(t));
  const int rounds = (sh.NUM_TILES + ORDER_CTAS - 1) / ORDER_CTAS;
  for (int i_rt = 0; i_rt < rounds; ++i_rt)
    for (int cidx = 0; cidx < ORDER_CLUSTERS; ++cidx)
      for (int rank = 0; rank < CLUSTER; ++rank) {
        BODY
      }
  for (int w = 0; w < sh.WORKERS; ++w) {
    int g, kb0, kb1;
    for (int j = 0; sh.work_unit(w, j, g, kb0, kb1); ++j) {
      std::printf("U %d %d %d %d %d\n", w, j, g, kb0, kb1);
      FIX
    }
  }
  return 0;
}
"""


def _harness_body(plan) -> str:  # type: ignore[no-untyped-def]
    """Per multicast operand, what each variant runs: "A ..." the general one, "a ..." the
    closed one."""
    out = []
    for op in (plan.a, plan.b):
        x, mc = op.name.lower(), op.multicast
        if mc is None:
            continue
        fields = ["issue", "mask"] + (["slice_index", "slice_count"] if mc.mode is S else [])
        fmt = " ".join(["%d"] * (3 + len(fields)))
        for tag, facts in ((op.name, "false"), (x, "true")):
            args = ", ".join(["i_rt", "cidx", "rank"]
                             + [f"(int)sh.mc_{x}_{f}<{facts}>(rank, i_rt, cidx)" for f in fields])
            out.append(f'std::printf("{tag} {fmt}\\n", {args});')
    return "\n        ".join(out)


def _run_harness(plan, tmp: Path, sizes: tuple[int, int, int] | None = None,
                 source: str | None = None) -> dict:  # type: ignore[no-untyped-def]
    """The file's schedule functions run on the host at launch sizes ``sizes`` (default: the
    plan's), with the work split the launcher would pass."""
    return _run_harness_at(plan, tmp, [sizes or (plan.M, plan.N, plan.K)], source)[0]


def _run_harness_at(plan, tmp: Path, shapes: list[tuple[int, int, int]],
                    source: str | None = None) -> list[dict]:  # type: ignore[no-untyped-def]
    """The file's schedule functions compiled once and run on the host at each launch size,
    with the work split the launcher would pass there (``plan.split.at``)."""
    from tilec.codegen.cuda.launch import launch_numbers, run_split

    src = emit(plan) if source is None else source
    prefix = host_prefix(src)
    assert src.startswith(prefix[: -len(SCHEDULE_END) - 1])  # the harness tests the file's own text
    ns = src.split("namespace ")[1].split(" ")[0]
    (tmp / "sched.h").write_text(prefix)
    fix = ""
    if CudaPrinter(plan).partials:
        fix = ('if (kb0 != 0 || kb1 != sh.K_ITERS) { int f, o, c, sl; sh.fix_of(w, j, g, f, o, c, sl); '
               'std::printf("F %d %d %d %d %d %d", w, j, f, o, c, sl); '
               'for (int i = 0; i < c; ++i) std::printf(" %d", sh.fix_slot(f, i)); std::printf("\\n"); }')
    text = HARNESS.replace("NS", ns).replace("BODY", _harness_body(plan)).replace("FIX", fix)
    (tmp / "h.cpp").write_text('#include "sched.h"\n' + text)
    subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
                    "-I", str(tmp), "-o", str(tmp / "h"), str(tmp / "h.cpp")], check=True)
    return [_parse(subprocess.run(
        [str(tmp / "h"), *(str(v) for v in (M, N, K, N, *launch_numbers(plan, run_split(plan, M, N, K))))],
        capture_output=True, text=True, check=True).stdout.splitlines()) for M, N, K in shapes]


def _parse(lines: list[str]) -> dict:
    got: dict = {"T": {}, "A": {}, "B": {}, "a": {}, "b": {}, "U": {}, "F": {}, "V": None}
    for ln in lines:
        kind, *vals = ln.split()
        v = [int(s) for s in vals]
        if kind == "V":
            got["V"] = bool(v[0])
        elif kind == "T":
            got["T"][v[0]] = tuple(v[1:])
        elif kind in "UF":
            got[kind][tuple(v[:2])] = tuple(v[2:])
        else:
            got[kind][tuple(v[:3])] = tuple(v[3:])
    return got


@needs_gxx
@pytest.mark.parametrize("row", MATRIX + SLOW_MATRIX[-1:], ids=_ids(MATRIX + SLOW_MATRIX[-1:]))
def test_printed_masks_equal_the_plans(row: tuple, tmp_path: Path) -> None:
    plan = plan_of(row)
    got = _run_harness(plan, tmp_path)
    check_launch(plan, got, plan.M, plan.N, plan.K)


def check_launch(plan, got: dict, M: int, N: int, K: int) -> None:  # type: ignore[no-untyped-def]
    """What the harness printed at launch sizes M, N, K against the plan's sympy there: the tile
    order (and which tiles are alive), both variants' multicast forms, the work units and fix-up
    slots (:func:`check_units`), and facts_hold (test_cuda_generic's brute force)."""
    from tests.codegen.test_cuda_generic import _facts_oracle

    order = plan.order.at(M=M, N=N).concrete()
    at = order.coords
    for t, (m, n, alive) in got["T"].items():
        assert (m, n) == at(t), (M, N, K, t)
        assert alive == int(t < int(order.num_tiles) and m < order.tiles_m and n < order.tiles_n)
    assert len(got["T"]) == int(order.num_tiles)
    for op in (plan.a, plan.b):
        mc = op.multicast
        if mc is None:
            assert not got[op.name]
            continue
        assert got[op.name], "no multicast functions printed"
        keys = ["issue", "mask"] + (["slice_index", "slice_count"] if mc.mode is S else [])
        for tag, facts in ((op.name, False), (op.name.lower(), True)):  # each variant's form
            for (i_rt, cidx, rank), vals in got[tag].items():
                want = mc_values(mc, rank, i_rt, cidx, facts, {"M": M, "N": N, "K": K})
                assert vals == tuple(want[k] for k in keys), (tag, i_rt, cidx, rank)
    check_units(plan, got, M, N, K)
    assert got["V"] == _facts_oracle(plan, M, N, K)


# (params, mode, closed): every decomposition, with and without clusters, ragged edges, K < BK,
# fewer tiles than SMs, partial last rounds
DECOMPS = [
    (dict(M=1000, N=1500, K=776, CM=1, CN=1, SMS=6, DECOMP="splitk", SPLITS=3), L, True),
    (dict(M=1000, N=1500, K=776, CM=2, CN=1, SMS=6, DECOMP="splitk", SPLITS=4,
          FIXUP="atomic"), L, True),
    (dict(M=512, N=512, K=65536, CM=1, CN=1, SMS=132, DECOMP="streamk"), L, True),
    (dict(M=1300, N=1100, K=3000, CM=2, CN=2, SMS=8, DECOMP="streamk"), S, False),
    (dict(M=1300, N=1100, K=1000, CM=1, CN=2, SMS=8, DECOMP="dp_1sk"), L, True),
    (dict(M=2048, N=1536, K=768, CM=4, CN=1, SMS=12, DECOMP="sk2_dp"), S, True),
    (dict(M=1000, N=1000, K=1000, CM=1, CN=1, SMS=6, DECOMP="skpp", SK_WAVES=2), L, True),
    (dict(M=1000, N=1000, K=1000, CM=2, CN=1, SMS=6, DECOMP="skpp", SK_WAVES=0), L, True),
    (dict(M=777, N=1000, K=40, CM=1, CN=2, SMS=4, DECOMP="streamk", FIXUP="atomic"), L, False),
    # B given K x N (row-major B): 64-column boxes, wgmma transpose-B
    (dict(M=1000, N=1104, K=776, CM=2, CN=1, SMS=8, DECOMP="dp", B_LAYOUT="kn"), S, False),
    (dict(M=1000, N=1104, K=776, CM=1, CN=2, SMS=8, DECOMP="streamk", B_LAYOUT="kn"), S, False),
    # the rest of decomposition x cluster (1, 2, 4), each with a real split (Stream-K region,
    # uneven cuts: see test_decomps_cover_every_decomposition_and_cluster)
    (dict(M=1300, N=1100, K=1000, CM=1, CN=1, SMS=8, DECOMP="dp"), L, True),
    (dict(M=1300, N=1100, K=1000, CM=2, CN=1, SMS=8, DECOMP="dp"), L, True),
    (dict(M=1000, N=1500, K=776, CM=1, CN=4, SMS=12, DECOMP="dp"), L, True),
    (dict(M=777, N=1000, K=1000, CM=2, CN=1, SMS=12, DECOMP="streamk"), L, True),
    (dict(M=1000, N=1500, K=776, CM=1, CN=4, SMS=12, DECOMP="streamk"), L, True),
    (dict(M=777, N=1000, K=1000, CM=2, CN=1, SMS=12, DECOMP="dp_1sk"), L, True),
    (dict(M=1000, N=1500, K=776, CM=4, CN=1, SMS=8, DECOMP="splitk", SPLITS=3), L, True),
    (dict(M=1300, N=1100, K=1000, CM=1, CN=1, SMS=12, DECOMP="dp_1sk"), L, True),
    (dict(M=1000, N=1500, K=776, CM=1, CN=4, SMS=12, DECOMP="dp_1sk"), L, True),
    (dict(M=1300, N=1100, K=1000, CM=1, CN=1, SMS=12, DECOMP="sk2_dp"), L, True),
    (dict(M=777, N=1000, K=1000, CM=2, CN=1, SMS=12, DECOMP="sk2_dp", FIXUP="atomic"), L, True),
    (dict(M=1000, N=1500, K=776, CM=1, CN=4, SMS=12, DECOMP="sk2_dp"), L, True),
    (dict(M=777, N=1000, K=1000, CM=2, CN=1, SMS=12, DECOMP="skpp", SK_WAVES=2), L, True),
    (dict(M=1000, N=1500, K=776, CM=1, CN=4, SMS=12, DECOMP="skpp", SK_WAVES=2), L, True),
]


def test_decomps_cover_every_decomposition_and_cluster() -> None:
    """DECOMPS runs every decomposition on clusters of 1, 2 and 4 CTAs with a real split: split-K
    parts and Stream-K ranges that do not divide K_ITERS evenly, a partial last round of
    data-parallel tiles."""
    seen = set()
    for params, mode, closed in DECOMPS:
        plan = seed(mode, closed, **params)
        w = plan.work
        if w.split_k:
            real = w.k_iters % w.splits != 0
        elif w.stream_k:
            real = w.sk_iters % w.sk_ctas != 0
        else:
            real = ceil_div(int(plan.order.concrete().num_tiles), plan.cluster[0]) % (w.grid // plan.cluster[0]) != 0
        if real:
            seen.add((params["DECOMP"], plan.cluster[0]))
    want = {(d, c) for d in ("dp", "splitk", "streamk", "dp_1sk", "sk2_dp", "skpp") for c in (1, 2, 4)}
    assert want <= seen, sorted(want - seen)


@needs_gxx
@pytest.mark.parametrize("params,mode,closed", DECOMPS,
                         ids=[f"{d[0]['DECOMP']}-c{d[0]['CM']}x{d[0]['CN']}-{d[0].get('B_LAYOUT', 'nk')}-{i}"
                              for i, d in enumerate(DECOMPS)])
def test_printed_work_units_equal_the_decomposition(params: dict, mode: MulticastMode,
                                                    closed: bool, tmp_path: Path) -> None:
    plan = seed(mode, closed, **params)
    c = plan.cluster[0]
    w = plan.work
    assert c == 1 or w.kind is Decomposition.DATA_PARALLEL or w.group == c
    got = _run_harness(plan, tmp_path)
    check_units(plan, got, plan.M, plan.N, plan.K)


def check_units(plan, got: dict, M: int, N: int, K: int) -> None:  # type: ignore[no-untyped-def]
    """The printed work units and fix-up slots at launch sizes M, N, K against the split there
    (``plan.split.at``): decompose.work_units, every (group, k-iteration) covered once, each
    partial's contributors in K order (brute force), slots private."""
    from tilec.codegen.cuda.launch import run_split

    c = plan.cluster[0]
    w = run_split(plan, M, N, K)
    k_iters = ceil_div(K, plan.BK)
    groups = ceil_div(int(plan.order.at(M=M, N=N).concrete().num_tiles), c)
    # the oracle walks workers (CTAs, or clusters) over groups of CLUSTER tiles
    oracle = work_units(dataclasses.replace(w, grid=w.grid // c, num_tiles=groups,
                                            k_iters=k_iters))
    want = {(pid, j): u for pid, units in enumerate(oracle) for j, u in enumerate(units)}
    assert got["U"] == want
    # every (tile, k-iteration) is covered exactly once
    cover = sorted((g, k) for g, kb, ke in want.values() for k in range(kb, ke))
    assert cover == [(g, k) for g in range(groups) for k in range(k_iters)]
    partial = {key: u for key, u in want.items() if (u[1], u[2]) != (0, k_iters)}
    assert set(got["F"]) == set(partial)
    for (pid, j), (g, kb, ke) in partial.items():
        f, order, count, slot, *slots = got["F"][(pid, j)]
        if w.kind is Decomposition.SPLIT_K:
            parts = [(g * w.splits + p, p * k_iters // w.splits) for p in range(w.splits)]
        else:
            sk_start = 0 if w.sk_first else groups - w.sk_tiles
            assert f == g - sk_start
            parts = [(s, b) for _, s, b, _ in _sk_contributors(w, k_iters, f)]
        assert count == len(parts) and slots == [s for s, _ in parts]
        assert parts[order] == (slot, kb)  # its own place in K order, its own slot
    # slots are private: no two partials share one
    all_slots = [v[3] for v in got["F"].values()]
    assert len(all_slots) == len(set(all_slots))


WIDE = r"""
#include <cstdio>
#include <initializer_list>
int main() {
  using namespace NS;
  const Shape sh = make_shape(SIZES);
  for (int c : {0, 1, sh.SK_CTAS / 2, sh.SK_CTAS - 1})
    std::printf("R %d %lld %lld\n", c, (long long)sh.sk_begin(c), (long long)sh.sk_end(c));
  for (int f : {0, 1, sh.SK_TILES / 2, sh.SK_TILES - 1})
    std::printf("P %d %d %d %d %d\n", f, sh.first_contributor(f), sh.contributors(f), sh.fix_slot(f, 0),
                sh.fix_slot(f, sh.contributors(f) - 1));
  return 0;
}
"""


@needs_gxx
def test_work_formulas_are_64_bit_where_int_would_overflow(tmp_path: Path) -> None:
    """65536^3 Stream-K: (tile * K_ITERS + 1) * SK_CTAS passes INT_MAX (17.7e9 at the last
    tile), so those formulas are printed over long long; they equal the plan's, evaluated in
    exact integers, at the ends of their ranges."""
    plan = seed(M=65536, N=65536, K=65536, CM=1, CN=1, SMS=132, DECOMP="streamk")
    w = plan.work
    assert (w.sk_tiles * w.k_iters + 1) * w.sk_ctas > 2**31
    src = emit(plan)
    assert "int first_contributor(long long tile)" in src
    ns = src.split("namespace ")[1].split(" ")[0]
    (tmp_path / "sched.h").write_text(host_prefix(src))
    sizes = f"{plan.M}, {plan.N}, {plan.K}, {plan.N}, {w.grid}, 1, {w.sk_tiles}, {w.sk_ctas}"
    (tmp_path / "w.cpp").write_text('#include "sched.h"\n' + WIDE.replace("NS", ns)
                                    .replace("SIZES", sizes))
    subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Werror", "-I", str(tmp_path), "-o",
                    str(tmp_path / "w"), str(tmp_path / "w.cpp")], check=True)
    out = subprocess.run([str(tmp_path / "w")], capture_output=True, text=True, check=True).stdout
    rng = compile_int(list(w.sk_range(CTA)), [CTA])
    parts = compile_int([w.first_contributor(TILE), w.contributors(TILE)], [TILE])
    slot = compile_int([w.partial_slot(TILE, J)], [TILE, J])
    rows = [ln.split() for ln in out.splitlines()]
    assert len(rows) == 8
    for kind, *v in rows:
        a = [int(x) for x in v]
        if kind == "R":
            assert tuple(a[1:]) == tuple(int(x) for x in rng(a[0]))
        else:
            first, count = (int(x) for x in parts(a[0]))
            assert (a[1], a[2]) == (first, count)
            assert (a[3], a[4]) == (int(slot(a[0], 0)[0]), int(slot(a[0], count - 1)[0]))


@needs_nvcc
def test_decompositions_compile_without_warnings(tmp_path: Path) -> None:
    plans = [seed(m, c, **p) for p, m, c in DECOMPS]
    fix = [dataclasses.replace(plans[0], work=dataclasses.replace(plans[0].work, fixup=f))
           for f in (Fixup.ATOMIC, Fixup.DETERMINISTIC)]

    def one(i: int) -> str | None:
        try:
            compile_cu(emit((plans + fix)[i]), tmp_path / f"d{i}.o", shared=False, werror=True)
        except CudaBuildError as e:
            return str(e)
        return None

    with ThreadPoolExecutor(max_workers=2) as ex:
        errors = [e for e in ex.map(one, range(len(plans) + 2)) if e]
    assert not errors, errors[0]


def test_b_given_k_by_n_is_printed_mn_major() -> None:
    kn = seed(S, False, M=1000, N=1104, K=776, CM=2, CN=1, SMS=8, B_LAYOUT="kn")
    src = emit(kn)
    assert not kn.b.transposed and kn.b.box == (64, 256)
    assert "p, 1, 1, 0, 1;" in src and "smem_desc_sw128_mn(" in src  # transpose-B, MN-major
    assert "encode_map(tmB, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, sizeof(TIn), B, K, N, ldb, BK, 64)" in src
    nk = seed(S, False, M=1000, N=1104, K=776, CM=2, CN=1, SMS=8)
    assert "p, 1, 1, 0, 0;" in emit(nk)
    # B's row stride is a launch's: N = 1100 prints (the launcher refuses a 2200-byte row)
    odd = seed(L, False, M=1000, N=1100, K=776, CM=1, CN=1, SMS=8, B_LAYOUT="kn")
    assert emit(odd) == emit(dataclasses.replace(odd, N=1104))
    with pytest.raises(UnsupportedError, match="BN must be a multiple of 64"):
        emit(dataclasses.replace(odd, BN=128 + 32, b=dataclasses.replace(odd.b, box=(64, 160))))


def test_consumer_warpgroups_come_from_the_plans_warps() -> None:
    p = plan_of(MATRIX[0])  # BM=128: lowering's default 12 warps = producer + 2 consumers
    assert p.num_warps == 12 and CudaPrinter(p).shape.consumers == 2
    one = dataclasses.replace(p, BN=128, b=dataclasses.replace(p.b, box=(128, 64)), num_warps=8)
    s = CudaPrinter(one).shape
    assert (s.consumers, s.wg_m, s.m_sub, s.threads) == (1, 128, 2, 256)
    with pytest.raises(UnsupportedError, match="accumulators"):
        emit(dataclasses.replace(p, num_warps=8))  # 128 rows x 256 columns in one warpgroup
    with pytest.raises(UnsupportedError, match="16 warps per CTA"):
        emit(dataclasses.replace(p, num_warps=16))


def test_reduce_kernel_fixup_is_refused_for_stream_k() -> None:
    p = seed(M=1000, N=1500, K=776, CM=1, CN=1, SMS=6, DECOMP="streamk")
    bad = dataclasses.replace(p, work=dataclasses.replace(p.work, fixup=Fixup.REDUCE_KERNEL))
    with pytest.raises(UnsupportedError, match="'streamk' with the 'reduce_kernel' fix-up"):
        emit(bad)
    p = seed(M=1000, N=1500, K=776, CM=1, CN=1, SMS=6, DECOMP="splitk", SPLITS=3)
    # a plan edited after lowering to clusters its work split was not made for (lowering
    # checks the cluster sizes agree: test_lower's test_cluster_sizes_that_disagree_...)
    per_cta = dataclasses.replace(p, cluster=(2, 1, 1), work=dataclasses.replace(p.work, grid=12))
    with pytest.raises(UnsupportedError, match="groups of 2 linear tiles: lower it with"):
        emit(per_cta)


@pytest.mark.parametrize(
    ("change", "match"),
    [
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
    src = emit(plan_of(MATRIX[1], DTYPE="fp16"))
    assert "f16.f16" in src and "policy_evict_first()" in src and "policy_evict_last()" in src
    assert "__cluster_dims__(2, 1, 1)" in src and "mbar_arrive_cluster" in src
    assert list(itertools.islice((ln for ln in src.splitlines() if "cluster_sync();" in ln), 3))
