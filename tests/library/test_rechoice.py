"""The built module re-chooses a lent config's decomposition at the shape (tilec/library/runtime.py,
_rechoose and _modeled) as tilec does (tilec/runtime/rules.py, rechoose and modeled): the module's
closed-form copy of the cost model against tilec's simulation, its pick against tilec's over
thousands of random shapes per tile, and, under Triton's interpreter, a built module running each
re-chosen decomposition (and every kernel it carries) correctly."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.library.fake import KERNEL, heuristic_module, import_module
from tests.library.test_build_triton import ROOT, _assert_correct, _build, _run
from tilec.library import Library, module_text
from tilec.library.table import ConfigSet
from tilec.runtime.rules import DECOMP_KNOBS, MENU, modeled, rechoose

TILES = [(16, 64, 256), (32, 32, 16), (64, 64, 128), (128, 128, 64), (128, 256, 64)]
ODD = [("splitk", 40, 1, "deterministic"), ("splitk", 3, 1, "atomic"), ("skpp", 1, 0, "atomic"),
       ("skpp", 1, 5, "reduce_kernel"), ("streamk", 1, 1, "reduce_kernel"),
       ("dp_1sk", 1, 1, "atomic"), ("sk2_dp", 1, 1, "reduce_kernel"), ("dp", 1, 1, "atomic")]


def _params(tile: tuple[int, int, int], entry: tuple, sms: int) -> dict:
    return {"BM": tile[0], "BN": tile[1], "BK": tile[2], "SMS": sms,
            **dict(zip(DECOMP_KNOBS, entry, strict=True))}


def _module(tmp: Path, sms: int) -> tuple:
    """A module (torch kernels) whose configs are every tile with every MENU decomposition, each
    carrying the whole menu of its tile."""
    configs = ConfigSet()
    base = {}
    for tile in TILES:
        base[tile] = configs.add(_params(tile, MENU[0], sms), (1, 1, 1))
        configs.menus[base[tile]] = set(range(len(MENU)))
    menus = configs.alternatives()
    tile_menu = {tuple(configs.params[i][k] for k in ("BM", "BN", "BK")): m
                 for i, m in menus.items()}
    cfgs = [{"label": str(i), "params": p, "tile": (p["BM"], p["BN"], p["BK"]), "kernel": "k0",
             "tma": (False, False), "facts": [], "menu": tile_menu[(p["BM"], p["BN"], p["BK"])]}
            for i, p in enumerate(configs.params)]
    table = {"classes": 1, "grid": [0], "grid_why": [0], "exact": {}, "reasons": ["t"],
             "rules": []}
    lib = Library(name=f"menu{sms}", schedule="g.py", target="triton", dtype="float32",
                  out_dtype="float32", b_layout="kn", kernels={"k0": KERNEL.format(layout="kn")},
                  configs=cfgs, tables={"default": table})
    return import_module(module_text(lib, built="test"), tmp, lib.name), configs, base


def _shape(rng: random.Random, tile: tuple[int, int, int], sms: int) -> tuple[int, int, int]:
    """M, N, K around a few waves of the tile (where the decompositions differ)."""
    tiles = rng.randint(1, 4 * sms)
    tm = rng.randint(1, tiles)
    tn = -(-tiles // tm)
    M = rng.randint((tm - 1) * tile[0] + 1, tm * tile[0])
    N = rng.randint((tn - 1) * tile[1] + 1, tn * tile[1])
    return M, N, rng.randint(1, 300) * tile[2] - rng.randint(0, tile[2] - 1)


@pytest.mark.parametrize("sms", [4, 16, 132])
def test_the_modules_model_is_tilecs_cost_model(tmp_path: Path, sms: int) -> None:
    """The module's closed-form _modeled against tilec's simulation (estimate_cost), float for
    float, for every MENU decomposition and odd ones (atomic or reduce-kernel fix-ups, more
    parts than k-iterations, 0 or 5 Stream-K++ waves) at random shapes."""
    mod, _, _ = _module(tmp_path, sms)
    rng = random.Random(sms)
    for _ in range(700 if sms < 100 else 250):
        tile = rng.choice(TILES)
        M, N, K = _shape(rng, tile, sms)
        entry = rng.choice(MENU + tuple(ODD))
        q = _params(tile, entry, sms)
        tiles, k_iters = -(-M // tile[0]) * -(-N // tile[1]), -(-K // tile[2])
        assert mod._modeled(q, tiles, k_iters, sms) == modeled(M, N, K, q, sms), (M, N, K, q)


@pytest.mark.parametrize("sms", [4, 16, 132])
def test_the_modules_pick_is_tilecs_rechoice(tmp_path: Path, sms: int) -> None:
    """Per tile, at random shapes: the module's re-choice (index and words) is tilec's
    (rules.rechoose, which the cost model's own choice checks: tests/runtime/
    test_rules_rechoose.py), for a lent dp config and a lent split-K one, margins 3%, 0 and
    none (a bucket's)."""
    mod, configs, base = _module(tmp_path, sms)
    rng = random.Random(100 + sms)
    for tile in TILES:
        own = {"dp": base[tile]}
        own["splitk"] = next(i for i in mod.CONFIGS[base[tile]]["menu"]
                             if configs.params[i]["DECOMP"] == "splitk")
        for _ in range(300 if sms < 100 else 120):
            M, N, K = _shape(rng, tile, sms)
            kind, margin = rng.choice(["dp", "splitk"]), rng.choice([0.03, 0.0, None])
            index, how = mod._rechoose(own[kind], M, N, K, margin)
            want, why = rechoose(M, N, K, configs.params[own[kind]], sms=sms, margin=margin)
            assert (configs.params[index], how) == (want, why), (M, N, K, tile, kind)


SMALL = ["--param", "BM=32", "--param", "BN=32", "--param", "BK=16", "--param", "DTYPE=fp16",
         "--param", "SMS=8", "--param", "STAGES=2", "--param", "WARPS=4", "--param", "GROUP_M=2",
         "--no-tuned", "--max-size", "256"]
KIND = {"splitk": "split-K", "skpp": "Stream-K++", "dp_1sk": "DP + 1 Stream-K wave",
        "sk2_dp": "two-tile Stream-K + DP", "streamk": "Stream-K", "dp": "data-parallel"}


def test_a_built_module_runs_each_rechosen_decomposition(tmp_path: Path) -> None:
    """tilec build (8 SMs, 32x32 tiles, a rules file of one data-parallel rule): one shape per
    decomposition the module picks at run time (split-K with each fix-up, Stream-K++, DP +
    Stream-K, data-parallel), by the nearest rule's re-choice or gen's heuristic at the shape,
    and shapes whose bucket config differs from gen's choice, run under the interpreter into
    NaN-poisoned outputs; each ran gen's choice. Then every kernel the module carries, at a
    shape with a partial wave."""
    from tilec.runtime.loader import load_schedule
    from tilec.runtime.rules import Rules

    rule = {"BM": 32, "BN": 32, "BK": 16, "GROUP_M": 2, "STAGES": 2, "WARPS": 4, "LOAD": "auto",
            "DECOMP": "dp", "SPLITS": 1, "SK_WAVES": 1, "FIXUP": "deterministic"}
    (tmp_path / "r.json").write_text(json.dumps({
        "format": "tilec-rules/1", "schedule": "gemm_decomposition.py", "radius": 1.0,
        "rules": [{"M": 64, "N": 96, "K": 512, "params": rule}]}))
    path = _build(tmp_path, str(ROOT / "examples" / "gemm_decomposition.py"), "rc", *SMALL,
                  "--rules", str(tmp_path / "r.json"))
    mod = import_module(path.read_text(), tmp_path, "rc_probe")
    rules = Rules.load(tmp_path / "r.json")
    pins = {k: int(v) for k, v in (a.split("=") for a in SMALL[1:16:2]) if k != "DTYPE"}
    picked: dict[str, tuple[int, int, int]] = {}
    for K in (160, 640, 1000):
        for M in (1, 20, 40, 70, 100, 130):
            for N in (20, 40, 70, 100, 130):
                c = mod._choose(M, N, K)
                p = mod.CONFIGS[c.config]["params"]
                kind = p["DECOMP"] + (" reduce" if p["FIXUP"] == "reduce_kernel" else "")
                road = "rule" if "nearest tuned shape" in c.why else "heuristic"
                picked.setdefault(f"{kind} by {road}", (M, N, K))
                table = mod.TABLES["default"]
                C = table["classes"]
                cells = [min(mod.shape_class(x), C - 1) for x in (M, N, K)]
                bucket = table["grid"][(cells[0] * C + cells[1]) * C + cells[2]]
                if road == "heuristic" and bucket != c.config:
                    picked.setdefault("not the bucket's", (M, N, K))
    kinds = {k.split(" by ")[0] for k in picked}
    assert {"splitk", "splitk reduce", "skpp", "dp_1sk", "dp"} <= kinds, picked
    assert {"dp by rule", "skpp by rule", "not the bucket's"} <= set(picked), picked
    got = _run(tmp_path, "rc", list(picked.values()))
    _assert_correct(got)
    for (M, N, K), row in zip(picked.values(), got["rows"], strict=True):
        want = load_schedule(ROOT / "examples" / "gemm_decomposition.py",
                             {**pins, "DTYPE": "fp16", "M": M, "N": N, "K": K}, tuned=False,
                             rules=rules).params
        label = row["explain"].split(": config ", 1)[1].split(" (kernel")[0]
        index = int(label.split()[0])
        assert mod.CONFIGS[index]["params"] == {k: v for k, v in want.items()
                                                if k not in ("M", "N", "K")}, row["explain"]
    # every kernel of the module, run directly, at 3 x 3 tiles (a partial wave of 8 SMs) and
    # at 1 tile, K = 200 (13 k-iterations)
    kernels = sorted({c["kernel"] for c in mod.CONFIGS})
    assert len(kernels) >= 10
    env = dict(os.environ, TRITON_INTERPRET="1", TILEC_CACHE=str(tmp_path / "cache"))
    env.pop("PYTHONPATH", None)
    res = subprocess.run([sys.executable, "-c", KERNELS, str(tmp_path), json.dumps(kernels)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    errors = json.loads(res.stdout.strip().splitlines()[-1])
    assert len(errors) == 2 * len(kernels)
    for kid, shape, err, nan in errors:
        assert nan == 0 and err <= 2e-2 * max(1.0, shape[2] ** 0.5), (kid, shape, err, nan)


KERNELS = r'''
import json, sys
import torch
sys.path.insert(0, sys.argv[1])
import rc as lib
out = []
for kid in json.loads(sys.argv[2]):
    run = lib._kernel(kid).run
    for M, N, K in ((70, 90, 200), (20, 30, 200)):
        g = torch.Generator().manual_seed(M + N)
        a, b = torch.randn((M, K), generator=g).half(), torch.randn((K, N), generator=g).half()
        c = torch.full((M, N), float("nan"), dtype=torch.float16)
        run(a, b, out=c)
        err = (c.float() - a.float() @ b.float()).abs().max().item()
        out.append([kid, [M, N, K], err, int(c.isnan().sum())])
print(json.dumps(out))
'''


def _heuristic_module(tmp: Path, raw: dict, name: str) -> tuple:
    """A module (torch kernels) carrying what tilec build gives the module's copy of gen's
    heuristic for the schedule parameters ``raw`` (its tables empty: every shape asks the copy)."""
    from tilec.library.table import heuristic_data

    configs = ConfigSet()
    data = heuristic_data(raw, configs)
    assert data is not None
    return heuristic_module(tmp, name, configs, data), configs


GEN = "examples/gemm_decomposition.py"


def test_the_modules_tile_rules_are_the_heuristics() -> None:
    """The copied tile rules (names and tiles) against heuristic._tile_rule, at random shapes
    and on each rule's boundaries."""
    from tilec.library.model import _TILE_RULES, _rule_region, _tile_rule
    from tilec.transforms.heuristic import _tile_rule as tile_rule

    rng = random.Random(7)
    edges = [1, 16, 17, 32, 33, 64, 128, 129, 256, 257, 1024, 1025, 4096, 4097, 7937, 7936, 8192,
             8193, 16384]
    shapes = [(rng.choice(edges), rng.choice(edges), rng.choice(edges)) for _ in range(300)]
    shapes += [tuple(int(2 ** rng.uniform(0, 15)) for _ in range(3)) for _ in range(700)]
    for M, N, K in shapes:
        for sms in (4, 132):
            cfg, name = tile_rule(M, N, K, sms)
            assert _tile_rule(M, N, K, sms) == name, (M, N, K, sms)
            assert _TILE_RULES[name] == (cfg.BM, cfg.BN, cfg.BK, cfg.WARPS, cfg.STAGES)
            assert cfg.GROUP_M == 8
            m0, n0, mn0 = _rule_region(name, sms)  # what the build reads: never more
            assert M >= m0 and N >= n0 and M * N >= mn0, (M, N, K, sms, name)


def test_the_modules_heuristic_is_gens_on_the_bench_shapes_and_random_ones(
        tmp_path: Path) -> None:
    """With no rules file, the module's choice at a shape is tilec gen's (load_schedule, the
    heuristic at the shape), knob for knob: bench/dispatch.py's 50 shapes and random ones."""
    from tilec.runtime.loader import load_schedule

    sys.path.insert(0, str(ROOT / "bench"))
    from dispatch import shapes  # type: ignore[import-not-found]

    raw = load_schedule(GEN, None, tuned=False).raw_params
    mod, configs = _heuristic_module(tmp_path, raw, "heur132")
    rng = random.Random(3)
    todo = [(M, N, K) for _, M, N, K in shapes()]
    todo += [tuple(int(2 ** rng.uniform(0, 13.5)) for _ in range(3)) for _ in range(60)]
    for M, N, K in todo:
        got = mod._heuristic(M, N, K)
        assert got is not None, (M, N, K)
        want = load_schedule(GEN, {"M": M, "N": N, "K": K}, tuned=False).params
        assert configs.params[got[0]] == {k: v for k, v in want.items()
                                          if k not in ("M", "N", "K")}, (M, N, K, got[1])


def test_the_modules_heuristic_honours_pins_and_few_sms(tmp_path: Path) -> None:
    """Pinned tile knobs and 4 SMs (as the interpreter tests build): gen's choice at random
    small shapes."""
    from tilec.runtime.loader import load_schedule

    pins = dict(BM=32, BN=32, BK=16, SMS=4, DTYPE="fp16", STAGES=2, WARPS=4, GROUP_M=2)
    raw = load_schedule(GEN, pins, tuned=False).raw_params
    mod, configs = _heuristic_module(tmp_path, raw, "heur4")
    rng = random.Random(4)
    for _ in range(150):
        M, N, K = rng.randint(1, 300), rng.randint(1, 300), rng.randint(1, 5000)
        got = mod._heuristic(M, N, K)
        assert got is not None and "tile by the rule" in got[1]
        want = load_schedule(GEN, {**pins, "M": M, "N": N, "K": K}, tuned=False).params
        assert configs.params[got[0]] == {k: v for k, v in want.items()
                                          if k not in ("M", "N", "K")}, (M, N, K, got[1])
