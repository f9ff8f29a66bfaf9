"""The cluster knobs CM, CN of examples/gemm_decomposition.py and of the heuristic's Config
(issue 30: 2x1 / 1x2 clusters with multicast among the heuristic's choices).

A 1x1 cluster is today's schedule (the golden sources, unchanged); a larger one is seed 004's
clustered walk, which the CUDA backend launches with TMA multicast (its masks checked against
the brute force at run-time shapes other than the one it was lowered at) and Triton runs
without a cluster (same tile order, checked in the interpreter). The heuristic keeps 1x1 on
both targets for now, keeps a pinned cluster, and takes a cluster from its one-line hook.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported (the Triton test below)

import pytest

from tests.codegen.test_cuda_emit import needs_gxx, needs_nvcc
from tests.inprocess import tilec
from tilec.errors import ParamError
from tilec.runtime.build import kernel_plan
from tilec.runtime.loader import load_schedule
from tilec.transforms import heuristic as H
from tilec.transforms.heuristic import KNOBS, Config, Source, heuristic, parse_knob, resolve

ROOT = Path(__file__).resolve().parents[2]
SCHEDULE = ROOT / "examples" / "gemm_decomposition.py"
DEEP = dict(M=1000, N=1000, K=50000)  # the H200 probe's shape: 0.955x cuBLAS with 2x1


def _params(**kw: Any) -> list[str]:
    return [a for k, v in kw.items() for a in ("--param", f"{k}={v}")]


# ------------------------------------------------------------------ the heuristic's Config


def test_cm_cn_are_knobs_and_short_names_only_a_real_cluster() -> None:
    assert KNOBS[-2:] == ("CM", "CN")
    cfg = Config()
    assert (cfg.CM, cfg.CN) == (1, 1) and cfg.params()["CM"] == cfg.params()["CN"] == 1
    assert replace(cfg, CM=1, CN=1).short() == cfg.short() and "c1x1" not in cfg.short()
    assert replace(cfg, CM=2).short() == cfg.short() + " c2x1"
    assert replace(cfg, CN=2).short() == cfg.short() + " c1x2"


@pytest.mark.parametrize("value", [0, -1, 17, "two", True, 1.5])
def test_parse_knob_refuses_a_bad_cluster_factor(value: Any) -> None:
    with pytest.raises(ParamError, match=f"parameter CM .*{value!r}"):
        parse_knob("CM", value)


def test_parse_knob_takes_cluster_factors() -> None:
    assert [parse_knob("CN", v) for v in (1, 2, 16, "auto", "AUTO")] == [1, 2, 16, "auto", "auto"]


SHAPES = [(1000, 1000, 50000), (4096, 4096, 4096), (16, 4096, 4096), (96, 14336, 4096),
          (512, 512, 65536), (3000, 5000, 2000)]


@pytest.mark.parametrize("target", ["triton", "cuda"])
def test_heuristic_keeps_a_pinned_cluster(target: str) -> None:
    for M, N, K in SHAPES:
        cfg, _ = heuristic(M, N, K, target=target)
        # the CUDA rule's 2x1 (tests/transforms/test_cuda_cluster_rule.py) at the deep probe shape
        # and the very-few-deep-tiles rule's (test_cuda_few_deep_rule.py) at 512^2 x 65536
        deep = (M, N, K) in (tuple(DEEP.values()), (512, 512, 65536))
        want = (2, 1) if target == "cuda" and deep else (1, 1)
        assert want == (cfg.CM, cfg.CN), (M, N, K)
        for cm, cn in ((2, 1), (1, 2), (2, 2)):
            pinned, _ = heuristic(M, N, K, target=target, fixed={"CM": cm, "CN": cn})
            # the cluster is kept and nothing else moves
            assert pinned == replace(cfg, CM=cm, CN=cn), (M, N, K, cm, cn)


def test_the_cluster_hook_decides_cuda_where_the_user_left_it_auto(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The lead's CUDA rule is one line in ``_cluster``: its answer reaches the config with its
    reason; a pinned cluster wins over it; a cluster that does not divide the SMs is none;
    Triton never asks it."""
    calls: list[tuple[int, int, int, str]] = []

    def two_by_one(M: int, N: int, K: int, cfg: Config, target: Any,
                   sms: int = 132) -> tuple[int, int, str]:
        calls.append((M, N, K, str(target.value)))
        return 2, 1, "B shared by the two tile rows"

    monkeypatch.setattr(H, "_cluster", two_by_one)
    cfg, why = heuristic(*DEEP.values(), target="cuda")
    assert (cfg.CM, cfg.CN) == (2, 1) and "cluster 2x1: B shared by the two tile rows" in why
    plain, _ = heuristic(*DEEP.values(), target="cuda", fixed={"CM": 1, "CN": 1})
    assert (plain.CM, plain.CN) == (1, 1) and replace(cfg, CM=1) == plain
    half, why_half = heuristic(*DEEP.values(), target="cuda", fixed={"CN": 2})
    assert (half.CM, half.CN) == (2, 2) and not any("cluster 2x1" in w for w in why_half)
    odd, why_odd = heuristic(*DEEP.values(), sms=131, target="cuda")
    assert (odd.CM, odd.CN) == (1, 1) and not any(w.startswith("cluster") for w in why_odd)
    # the tile rule's branch (not weighed) asks too
    small, _ = heuristic(96, 14336, 4096, target="cuda")
    assert (small.CM, small.CN) == (2, 1)
    assert {c[3] for c in calls} == {"cuda"}
    n = len(calls)
    tri, _ = heuristic(*DEEP.values(), target="triton")
    assert (tri.CM, tri.CN) == (1, 1) and len(calls) == n
    # resolve() hands it to a schedule that leaves the cluster auto
    r = resolve({**DEEP, "BM": "auto", "CM": "auto", "CN": "auto"}, target="cuda")
    assert (r.params["CM"], r.params["CN"]) == (2, 1)
    assert r.choice("CM").source is Source.HEURISTIC


def test_rules_and_records_from_before_the_cluster_mean_none() -> None:
    """A rules file or tuned record written before CM and CN existed still answers every auto
    knob: its cluster is 1x1."""
    old = {"BM": 64, "BN": 128, "BK": 32, "GROUP_M": 4, "DECOMP": "dp", "SPLITS": 1,
           "SK_WAVES": 1, "FIXUP": "deterministic", "STAGES": 3, "WARPS": 4, "LOAD": "auto"}
    params = {**DEEP, **{k: "auto" for k in KNOBS}}
    for kw in ({"rules": (old, "rules old.json")}, {"tuned": old}):
        r = resolve(params, target="cuda", **kw)
        want = Source.RULES if "rules" in kw else Source.TUNED
        assert {c.source for c in r.choices} == {want}, kw
        assert {k: r.params[k] for k in old} == old
        assert (r.params["CM"], r.params["CN"]) == (1, 1)
    # a record that names a cluster keeps it
    r = resolve(params, target="cuda", tuned={**old, "CM": 2, "CN": 1})
    assert (r.params["CM"], r.params["CN"]) == (2, 1)


# ------------------------------------------------------------------ the schedule


GOLDEN = ROOT / "tests" / "golden" / "out"
# (golden file, tilec argv): the gen commands of tests/golden over this schedule
TODAY = [("gen_triton_gemm_decomposition", ["gen", "examples/gemm_decomposition.py", "-o", "-"]),
         ("gen_cuda_gemm_decomposition", ["gen", "examples/gemm_decomposition.py", "--target",
                                          "cuda", "-o", "-"]),
         ("gen_decomposition_streamk", ["gen", "examples/gemm_decomposition.py", "--param",
                                        "DECOMP=streamk", "-o", "-"])]


@pytest.mark.parametrize("name,argv", TODAY, ids=[t[0] for t in TODAY])
@pytest.mark.parametrize("cluster", [[], _params(CM=1, CN=1)], ids=["auto", "pinned-1x1"])
def test_a_1x1_cluster_prints_the_golden_source(name: str, argv: list[str],
                                                cluster: list[str]) -> None:
    rc, out, err = tilec(argv + cluster)
    assert rc == 0, err
    golden = (GOLDEN / f"{name}.txt").read_text()
    source = out.replace(str(ROOT), "<repo>")
    assert len(source) > 1000 and golden.startswith(source)
    assert golden[len(source):].startswith("tilec: ")  # the rest: the notes on stderr


def test_a_1x1_cluster_records_todays_schedule() -> None:
    """The IR verbs of CM = CN = 1 (auto or pinned) are those without the knobs: no cluster
    verb, one BIDx axis."""
    fixed = dict(BM=128, BN=256, BK=64, GROUP_M=8, DECOMP="dp", SPLITS=1, SK_WAVES=1,
                 FIXUP="deterministic", STAGES=3, WARPS=8, LOAD="auto")
    auto = str(load_schedule(SCHEDULE, fixed).fusion.schedule)
    one = str(load_schedule(SCHEDULE, {**fixed, "CM": 1, "CN": 1}).fusion.schedule)
    two = str(load_schedule(SCHEDULE, {**fixed, "CM": 2, "CN": 1}).fusion.schedule)
    assert auto == one and "BIDx" in one and "CIDx" not in one and "RankX" not in one
    assert "CIDx" in two and "RankX" in two and two != one


BAD = [
    (dict(CM=0), "parameter CM must be a positive integer.* but got 0"),
    (dict(CN=-2), "parameter CN must be a positive integer.* but got -2"),
    (dict(CM="two"), "parameter CM must be a positive integer or 'auto' but got 'two'"),
    (dict(CM=17), "parameter CM must be at most 16 .* but got 17"),
    (dict(CM=4, CN=8), "CM=4, CN=8 ask for a cluster of 32 CTAs; a multicast mask addresses "
                       "at most 16"),
    (dict(CM=2, CN=1, SMS=131), "parameter SMS=131 must be a multiple of the cluster's CM\\*CN "
                                "= 2 CTAs \\(CM=2, CN=1\\)"),
    (dict(CM=4, CN=1, SMS=130), "SMS=130 must be a multiple of .* = 4 CTAs"),
]


@pytest.mark.parametrize("params,match", BAD, ids=[str(p) for p, _ in BAD])
def test_bad_cluster_parameters_are_refused(params: dict, match: str) -> None:
    with pytest.raises(ParamError, match=match):
        load_schedule(SCHEDULE, {**DEEP, **params})
    # pinned all but the cluster: the schedule itself refuses (the heuristic never sees it)
    pins = dict(BM=128, BN=256, BK=64, GROUP_M=8, DECOMP="dp", SPLITS=1, SK_WAVES=1,
                FIXUP="deterministic", STAGES=3, WARPS=8, LOAD="auto")
    if isinstance(params.get("CM", 1), int) and params.get("CM", 1) <= 16:
        with pytest.raises(ParamError, match=match):
            load_schedule(SCHEDULE, {**DEEP, **pins, **params})


def test_the_cli_names_the_bad_cluster() -> None:
    rc, _, err = tilec(["gen", "examples/gemm_decomposition.py", "--target", "cuda",
                         *_params(CM=5, CN=1), "-o", "-"])
    assert rc != 0 and "SMS=132 must be a multiple of the cluster's CM*CN = 5" in err
    # 9 CTAs: a valid schedule (non-portable cluster) that the CUDA backend refuses
    rc, _, err = tilec(["gen", "examples/gemm_decomposition.py", "--target", "cuda",
                         *_params(CM=3, CN=3, SMS=126), "-o", "-"])
    assert rc != 0 and "at most 8 CTAs" in err and "(9, 1, 1)" in err


# ------------------------------------------------------------------ CUDA: cluster and multicast


@pytest.fixture(scope="module")
def deep_2x1(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    """The brief's command's plan and source: 1000 x 1000 x 50000, CM=2, CN=1."""
    argv = ["gen", "examples/gemm_decomposition.py", "--target", "cuda",
            *_params(CM=2, CN=1, **DEEP), "-o", "-"]
    rc, src, err = tilec(argv)
    assert rc == 0, err
    loaded = load_schedule(SCHEDULE, {**DEEP, "CM": 2, "CN": 1}, target="cuda")
    return kernel_plan(loaded, target="cuda"), src


def test_cuda_2x1_launches_a_cluster_that_multicasts_b(deep_2x1: tuple[Any, str]) -> None:
    plan, src = deep_2x1
    assert plan.cluster == (2, 1, 1)
    # 2x1: the two CTAs of a cluster hold the tiles of two rows of one column: B is shared
    assert plan.b.multicast is not None and plan.b.multicast.cluster_size == 2
    assert plan.a.multicast is None
    assert "cluster 2" in src.splitlines()[1]
    assert src.count("tma_load_multicast") > 2  # defined, and called
    assert "__cluster_dims__(2, 1, 1)" in src
    # the heuristic's tile and split at this shape (the probe's 128x256 split-K 4), the cluster
    # on top of them
    cfg, _ = heuristic(*DEEP.values(), target="cuda")
    assert (plan.BM, plan.BN, plan.work.kind.value, plan.work.splits) == (
        cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS)


@needs_nvcc
def test_cuda_2x1_compiles_for_sm90a(deep_2x1: tuple[Any, str], tmp_path: Path) -> None:
    from tilec.codegen.cuda.launch import NVCC_FLAGS, compile_cu

    assert "-gencode=arch=compute_90a,code=sm_90a" in NVCC_FLAGS
    compile_cu(deep_2x1[1], tmp_path / "k.o", shared=False, werror=True)
    assert (tmp_path / "k.o").stat().st_size > 0


# run-time shapes the one source serves: the shape it was lowered at, ragged ones, ones that
# meet its closed forms' facts and ones that do not, a single tile row, partial rounds
RUN_SHAPES = [(1000, 1000, 50000), (1024, 1024, 4096), (777, 1500, 1000), (2048, 2048, 512),
              (128, 4096, 256), (3000, 1000, 640), (1, 8, 8)]


# where the grid walks past the last cluster group and the group rows are a multiple of GROUP_M,
# the general form's Min(GROUP_M, group rows left) is 0 at those dead points: the printed C
# tests liveness first (&& short-circuits), check_launch's sympy evaluation of the whole
# conjunction divides by zero. The brute force below still checks that shape.
SYMPY_DIVIDES_BY_ZERO = {(2048, 2048, 512)}


@needs_gxx
def test_cuda_2x1_multicast_is_sound_against_the_brute_force(deep_2x1: tuple[Any, str],
                                                             tmp_path: Path) -> None:
    """The printed file's multicast functions, run on the host at shapes other than the one it
    was lowered at, hand every live CTA its own B box exactly once at every point the brute
    force walks (the schedule loaded at that shape); and they are the plan's forms there
    (tile order, work units, facts_hold: test_cuda_emit's check_launch)."""
    from tests.codegen.test_cuda_emit import _run_harness_at, check_launch
    from tilec.testing.brute import Want, brute_force, delivers

    plan, src = deep_2x1
    got = _run_harness_at(plan, tmp_path, RUN_SHAPES, src)
    pins = plan_params(plan)
    checked = 0
    for (M, N, K), g in zip(RUN_SHAPES, got, strict=True):
        if (M, N, K) not in SYMPY_DIVIDES_BY_ZERO:
            check_launch(plan, g, M, N, K)
        fusion = load_schedule(SCHEDULE, {**pins, "M": M, "N": N, "K": min(K, 128)}).fusion
        truth = brute_force(fusion, "B")
        for point, origins in truth.points:
            if point.get("i_Ko", 0) or all(o is None for o in origins):
                continue  # (the boxes' K origin moves every CTA alike)
            for tag in ("B", "b") if g["V"] else ("B",):  # the closed variant where it runs
                # (a dead CTA loads nothing whatever its forms say: the kernel skips its tile,
                # check_launch checked which are alive; no live CTA may send to it)
                sent = [Want(True, bool(i), m, 0, 0) if o is not None else
                        Want(False, False, 0, 0, 0) for o, (i, m) in zip(origins, (
                            g[tag][(point["i_rt"], point["cidx"], r)]
                            for r in range(len(origins))), strict=True)]
                assert delivers(sent, origins, "leader"), (M, N, K, tag, point, sent, origins)
                checked += 1
    assert checked > 100


def plan_params(plan: Any) -> dict[str, Any]:
    """The knobs of the 2x1 plan (every knob pinned: the brute force loads the same schedule)."""
    cfg, _ = heuristic(*DEEP.values(), target="cuda")
    return {**cfg.params(), "CM": 2, "CN": 1, "BM": plan.BM, "BN": plan.BN}


# small launches (8x8 tiles) the repository's oracle (tilec/testing/launch.py) derives at and
# checks against the brute force, with the closed forms proved at BASE checked at each
SMALL = dict(K=16, BM=8, BN=8, BK=8, SMS=12, GROUP_M=2, DECOMP="dp", SPLITS=1, SK_WAVES=1,
             FIXUP="deterministic", STAGES=2, WARPS=4, LOAD="tma", DTYPE="fp16")


@pytest.mark.parametrize("cm,cn", [(2, 1), (1, 2), (2, 2)])
def test_multicast_forms_are_sound_at_other_launches(cm: int, cn: int) -> None:
    from tilec.testing.launch import oracle

    base = {**SMALL, "M": 48, "N": 48, "CM": cm, "CN": cn}  # 36 tiles: 3 rounds of 12
    proved = 0
    for M, N, K in [(48, 48, 16), (96, 48, 8), (48, 96, 24), (37, 50, 16), (8, 8, 8),
                    (100, 20, 16)]:
        r = oracle(SCHEDULE, {**base, "M": M, "N": N, "K": K}, base=base)
        assert r.ok, [str(m) for v in (*r.verdicts, *r.proved) for m in v.mismatches][:3]
        assert r.cluster_size == cm * cn
        proved += len(r.proved)
    # the base's proved forms were carried to (and checked at) the launches meeting their facts
    assert proved >= 4


# ------------------------------------------------------------------ Triton: no cluster launched


@pytest.mark.parametrize("decomp,cm,cn", [("dp", 2, 1), ("splitk", 1, 2), ("streamk", 2, 2)])
def test_triton_runs_a_clustered_schedule_without_a_cluster(decomp: str, cm: int,
                                                            cn: int) -> None:
    """Triton keeps the clustered tile order and launches no cluster (each CTA loads its own
    tiles), as for seed004; the kernel is right on a ragged shape (interpreter, fp16)."""
    from tests.codegen.test_triton import run_and_check

    p = dict(M=70, N=50, K=40, BM=16, BN=16, BK=16, GROUP_M=2, SMS=4, DTYPE="fp16",
             DECOMP=decomp, SPLITS=2, SK_WAVES=1, FIXUP="deterministic", STAGES=2, WARPS=4,
             LOAD="auto", CM=cm, CN=cn)
    loaded = load_schedule(SCHEDULE, p)
    plan = kernel_plan(loaded, target="triton")
    assert plan.a.multicast is None and plan.b.multicast is None
    assert any("is not launched (Triton issues no multicast)" in n for n in plan.notes)
    flat = kernel_plan(load_schedule(SCHEDULE, {**p, "CM": 1, "CN": 1}), target="triton")
    walks = [q.order.at(M=70, N=50).concrete() for q in (plan, flat)]
    orders = [[w.coords(t) for t in range(int(w.num_tiles))] for w in walks]
    assert orders[0] != orders[1] and len(orders[0]) >= 5 * 4  # (5 x 4 tiles, padded)
    run_and_check(plan, seed=cm + 2 * cn)


# ------------------------------------------------------------------ the CUDA bench


def test_dispatch_cuda_prepares_the_2x1_pick_and_a_1x1_candidate(tmp_path: Path) -> None:
    # the CUDA heuristic takes 2x1 at 1000^2 x 50000 (session 13); the candidate pins none
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "dispatch_cuda.py"), "prepare",
                           "--dir", str(tmp_path), "--only", "deep_1000", "--candidates",
                           "CM=1,CN=1", "--jobs", "1"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    plans = {e["candidate"]: e for e in manifest["plans"]}
    assert set(plans) == {"heuristic", "CM=1,CN=1"} and not any("error" in e for e in
                                                                 plans.values())
    heur, one = plans["heuristic"], plans["CM=1,CN=1"]
    assert (heur["params"]["CM"], heur["params"]["CN"]) == (2, 1)
    assert {k: v for k, v in one["params"].items() if k not in ("CM", "CN")} == {
        k: v for k, v in heur["params"].items() if k not in ("CM", "CN")}
    assert heur["config"].endswith(" c2x1") and "c1x1" not in one["config"]
    assert one["source"] != heur["source"]
    src = (tmp_path / manifest["sources"][heur["source"]]["file"]).read_text()
    assert "cluster 2" in src.splitlines()[1] and "tma_load_multicast(" in src


# ------------------------------------------------------------------ the built (Triton) library


def test_the_library_build_resolves_the_cluster_to_none_once() -> None:
    """``tilec build`` (Triton) over the schedule with CM, CN auto: the kernels its copy of the
    heuristic may pick and the buckets' answers are the same configs (1x1), not twins that
    differ only in an unresolved cluster."""
    from tilec.library.table import ConfigSet, heuristic_data, resolve_at
    from tilec.runtime.loader import load_module

    raw = dict(load_module(SCHEDULE).PARAMS)
    assert raw["CM"] == raw["CN"] == "auto"
    configs = ConfigSet()
    data = heuristic_data(raw, configs)
    assert data is not None and len(configs.params) > 10
    assert all((p["CM"], p["CN"]) == (1, 1) for p in configs.params)
    n = len(configs.params)
    for shape in [(4096, 4096, 4096), (128, 4096, 7168), (1000, 1000, 50000)]:
        params, _ = resolve_at(raw, shape, target="triton", tuned=None, rules=(), key="k")
        assert (params["CM"], params["CN"]) == (1, 1)
        assert configs.add(params, shape) < n, shape  # one of the carried kernels
