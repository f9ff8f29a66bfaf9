"""Schedule choices for deep-K and one-tile-row GEMMs on the CUDA target (issue 14): the L2
eviction hints of A's and B's loads and the producer's L2 prefetch (``set_kernel(evict=,
prefetch=)``, the seed's EVICT and PREFETCH), lowering's hint rule, the CUDA heuristic's tile for
M <= 128; printed from the plan, compiled with nvcc for sm_90a."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.codegen.cuda_plans import seed
from tilec.app.cli import main
from tilec.codegen.cuda.launch import compile_cu, run_split
from tilec.codegen.cuda.printer import emit
from tilec.errors import FusionError, UnsupportedError
from tilec.ir import GemmFusion, ceil_div
from tilec.runtime.build import kernel_plan
from tilec.runtime.loader import load_schedule
from tilec.transforms.cuda_rules import CUDA_WEIGHED
from tilec.transforms.heuristic import heuristic
from tilec.transforms.plan import Decomposition

ROOT = Path(__file__).resolve().parents[2]
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def test_set_kernel_takes_evict_and_prefetch() -> None:
    f = GemmFusion(M=256, N=256, K=64).set_kernel(evict="Last, first", prefetch=6)
    assert f.kernel_options.evict == ("last", "first") and f.kernel_options.prefetch == 6
    f = GemmFusion(M=256, N=256, K=64).set_kernel(evict=("normal", "last"), prefetch="auto")
    assert f.kernel_options.evict == ("normal", "last") and f.kernel_options.prefetch is None
    assert GemmFusion(M=256, N=256, K=64).set_kernel(prefetch=0).kernel_options.prefetch is None
    for bad in ("last", "keep,first", ("first", "last", "normal")):
        with pytest.raises(FusionError, match="evict must be two of normal, first, last"):
            GemmFusion(M=256, N=256, K=64).set_kernel(evict=bad)
    with pytest.raises(FusionError, match=r"prefetch must be an integer in 0\.\.64"):
        GemmFusion(M=256, N=256, K=64).set_kernel(prefetch=65)


def test_lowering_hints_one_tile_row_a_last_b_first() -> None:
    row = seed(M=128, N=2048, K=4096, BM=128, BN=64, CM=1, CN=1, SMS=132)
    assert (row.a.evict, row.b.evict) == ("last", "first")
    assert any("A last, B first: one tile row" in n for n in row.notes)
    many = seed(M=1000, N=1000, K=512, BM=128, BN=128, CM=1, CN=1, SMS=8)
    assert (many.a.evict, many.b.evict) == ("normal", "normal")  # no hint off one tile row
    assert any("no L2 hints" in n for n in many.notes)
    given = seed(M=128, N=2048, K=4096, BM=128, BN=64, CM=1, CN=1, SMS=132,
                 EVICT="normal,last")
    assert (given.a.evict, given.b.evict) == ("normal", "last")
    src = emit(given)
    assert "A normal, B last." in src and "policy_evict_first" not in src.split("gemm_kernel(")[1]


def test_triton_refuses_cuda_only_choices() -> None:
    for extra, match in (({"EVICT": "last,first"}, "evict"), ({"PREFETCH": 4}, "prefetch")):
        s = load_schedule(ROOT / "examples/seed004_persistent_cluster.py",
                          {"M": 512, "N": 512, "K": 512, "CM": 1, "CN": 1, "CLUSTER": 1, "SMS": 8,
                           **extra})
        with pytest.raises(UnsupportedError, match=match):
            kernel_plan(s, target="triton")


PREFETCH_PLANS = [  # (params, mode): no cluster, leader multicast of B, sliced A, B given K x N
    (dict(M=300, N=1000, K=1000, BM=128, BN=64, CM=1, CN=1, SMS=16, DECOMP="splitk", SPLITS=2,
          STAGES=8, PREFETCH=8), "leader"),
    (dict(M=512, N=512, K=4096, BN=128, CM=2, CN=1, SMS=16, DECOMP="splitk", SPLITS=4,
          FIXUP="atomic", STAGES=6, PREFETCH=4), "leader"),
    (dict(M=300, N=640, K=1000, BN=128, CM=1, CN=2, SMS=8, PREFETCH=3), "sliced"),
    (dict(M=300, N=640, K=1000, BN=128, CM=2, CN=1, SMS=16, DECOMP="streamk", PREFETCH=2,
          B_LAYOUT="kn"), "sliced"),
]


def test_prefetch_is_printed_from_the_plan() -> None:
    for params, mode in PREFETCH_PLANS:
        p = seed(mode, **params)
        assert p.prefetch == params["PREFETCH"]
        src = emit(p)
        assert f"constexpr int PREFETCH = {p.prefetch};" in src
        assert f"L2 prefetch {p.prefetch} k-iterations ahead" in src
        calls = [ln.strip() for ln in src.splitlines() if "tma_prefetch_l2" in ln and "asm" not in ln
                 and "__device__" not in ln and "policy == 0" not in ln]  # the runtime's own
        # per operand: the unit's first PREFETCH k-iterations, then kb + PREFETCH in the loop
        assert len(calls) == 4, calls
        assert sum("(kp) * BK" in c for c in calls) == 2
        assert sum("(kb + PREFETCH) * BK" in c for c in calls) == 2
        for c in calls:  # only the boxes this CTA issues, through the operand's own map
            op = re.search(r"&tm([AB])", c).group(1)
            assert c.startswith(f"if (issue_{op.lower()})")
        if mode == "sliced":  # each CTA prefetches its own share of the sliced operand's boxes
            assert any("c = sidx_" in c for c in calls)
    plain = emit(seed(M=300, N=1000, K=1000, BM=128, BN=64, CM=1, CN=1, SMS=16))
    assert "PREFETCH" not in plain and "tma_prefetch_l2(&" not in plain
    assert "tma_prefetch_l2_hint(&" not in plain


@needs_nvcc
def test_prefetch_plans_compile_without_warnings(tmp_path: Path) -> None:
    for i, (params, mode) in enumerate(PREFETCH_PLANS):
        out = tmp_path / f"p{i}.o"
        diag = compile_cu(emit(seed(mode, **params)), out, shared=False, werror=True)  # raises on a warning
        assert out.is_file() and out.stat().st_size > 0 and "warning" not in diag.lower()


def test_cuda_heuristic_one_tile_row() -> None:
    # unswapped (cuda_swap's half-wave rule takes 128 x 4096 x 7168 as a swapped 128x64 tile in
    # two K parts, test_cuda_half_wave.py)
    cfg, why = heuristic(128, 4096, 7168, sms=132, target="cuda", fixed={"SWAP_AB": 0})
    assert (cfg.BM, cfg.BN, cfg.BK, cfg.STAGES, cfg.WARPS) == (128, 64, 64, 8, 12)
    assert cfg.DECOMP is Decomposition.SPLIT_K and cfg.SPLITS == 2
    assert "one tile row" in why[0]
    for M, N in ((256, 4096), (64, 4096), (128, 1024)):  # not one 128-row tile row of 32+ tiles
        # (the unswapped rules: cuda_swap's rule takes 256 x 4096, test_cuda_swap_rule.py)
        cfg = heuristic(M, N, 7168, sms=132, target="cuda", fixed={"SWAP_AB": 0})[0]
        assert cfg.BN != 64 or M <= 64


def test_cuda_heuristic_deep_k_wide_tiles() -> None:
    cfg, why = heuristic(1024, 1024, 32768, sms=132, target="cuda")
    assert (cfg.BM, cfg.BN, cfg.STAGES) == (128, 256, 4) and cfg.SPLITS == 4
    assert why[0].startswith(CUDA_WEIGHED)  # the cost model over the CUDA tiles picks it
    # shallow K: 128x128 models faster (among the unswapped tiles: cuda_swap's rule takes
    # 1024^2 x 4096 as 128x64 swapped tiles, test_cuda_swap_rule.py)
    assert heuristic(1024, 1024, 4096, sms=132, target="cuda", fixed={"SWAP_AB": 0})[0].BN == 128
    # 16 tiles of 128x128 (512^2): cuBLAS's kernel there (session 13's rule for very few tiles and
    # deep K, session 15: 128x256 tiles, 4 stages, a 2x1 cluster, 16 parts each, the reduce kernel
    cfg = heuristic(512, 512, 65536, sms=132, target="cuda")[0]
    assert (cfg.BN, cfg.STAGES, cfg.SPLITS, cfg.FIXUP.value, cfg.CM) == (256, 4, 16, "reduce_kernel", 2)


def test_explain_target_cuda_says_why(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "explain.txt"
    rc = main(["explain", str(ROOT / "examples/gemm_decomposition.py"), "--target", "cuda",
               "--param", "M=128", "--param", "N=4096", "--param", "K=7168",
               "--param", "SWAP_AB=0", "-o", str(out)])  # unswapped: the one-tile-row rule
    text = out.read_text()
    assert rc == 0
    assert "cuda: one tile row" in text and "STAGES = 8" in text
    assert "L2 hints A last, B first" in text


# fewer tiles than CTAs, and not a whole number of clusters of tiles: the walk pads to whole
# cluster groups, one CTA per walked index, the padded ones dead ((params, mode, closed))
ROUNDED = [
    (dict(M=600, N=1400, K=64, CM=2, CN=1, SMS=132), "leader", True),
    (dict(M=600, N=1400, K=200, BN=128, CM=1, CN=4, SMS=132), "sliced", False),
    (dict(M=300, N=700, K=128, BN=128, CM=4, CN=1, SMS=132), "leader", False),
    (dict(M=600, N=1400, K=64, BN=128, CM=2, CN=2, SMS=120), "sliced", True),
]


@pytest.mark.parametrize("params,mode,closed", ROUNDED, ids=[str(i) for i in range(len(ROUNDED))])
def test_grid_is_rounded_up_to_whole_clusters(params: dict, mode: str, closed: bool,
                                              tmp_path: Path) -> None:
    from tests.codegen.cuda_plans import mc_values, sizes
    from tests.codegen.test_cuda_emit import _run_harness

    plan = seed(mode, closed, **params)
    c, tiles = plan.cluster[0], int(plan.order.concrete().num_tiles)
    real = int(plan.order.concrete().tiles_m) * int(plan.order.concrete().tiles_n)
    assert plan.work.grid % c == 0 and plan.work.grid == tiles and real < tiles  # padded walk
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    got = _run_harness(plan, tmp_path)
    # every group of c linear tiles is walked once, by one worker (cluster)
    groups = ceil_div(tiles, c)
    assert sorted(g for g, kb, ke in got["U"].values()) == list(range(groups))
    assert all((kb, ke) == (0, plan.k_iters) for _, kb, ke in got["U"].values())
    for m, n, alive in got["T"].values():  # linear tiles past the end are dead
        assert alive == int(m < plan.order.concrete().tiles_m and n < plan.order.concrete().tiles_n)
    for op in (plan.a, plan.b):  # the masks the kernel computes are the plan's
        if op.multicast is None:
            continue
        keys = ["issue", "mask"] + (["slice_index", "slice_count"]
                                    if op.multicast.mode.value == "sliced" else [])
        for tag, facts in ((op.name, False), (op.name.lower(), True)):  # both variants
            for (i_rt, cidx, rank), vals in got[tag].items():
                want = mc_values(op.multicast, rank, i_rt, cidx, facts, sizes(plan))
                assert vals == tuple(want[k] for k in keys)


@needs_nvcc
def test_rounded_grids_compile_without_warnings(tmp_path: Path) -> None:
    for i, (params, mode, closed) in enumerate(ROUNDED):
        src = emit(seed(mode, closed, **params))
        plan = seed(mode, closed, **params)
        # the grid is a launch's: the launcher's split makes the plan's rounded grid
        assert "constexpr int GRID" not in src
        assert run_split(plan, plan.M, plan.N, plan.K).grid == plan.work.grid
        compile_cu(src, tmp_path / f"r{i}.o", shared=False, werror=True)


def test_gen_seed_at_a_small_size(tmp_path: Path) -> None:
    """The size that refused before ('grid 35 is not a multiple of the cluster size 2')."""
    out = tmp_path / "k.cu"
    rc = main(["gen", str(ROOT / "examples/seed004_persistent_cluster.py"), "--target", "cuda",
               "--param", "M=600", "--param", "N=1400", "--param", "K=64", "-o", str(out)])
    assert rc == 0 and "constexpr int GRID" not in out.read_text()
    plan = kernel_plan(load_schedule(ROOT / "examples/seed004_persistent_cluster.py",
                                     {"M": 600, "N": 1400, "K": 64}), target="cuda")
    assert run_split(plan, 600, 1400, 64).grid == 36  # the launcher's grid, whole clusters
