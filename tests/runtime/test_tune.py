"""Parameters a schedule leaves "auto": the heuristic, the precedence of user > tuned > rules >
heuristic, the tuned records, the tuner (a fake timer here; the GPU runs bench/bench_pipeline.py)
and the commands that show the choice."""

from __future__ import annotations

import json
import os

os.environ["TRITON_INTERPRET"] = "1"

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.app.cli import main
from tilec.errors import ParamError, PolicyError, TilecError
from tilec.runtime.autotune import ROUNDS, measure, space, tune
from tilec.runtime.loader import load_schedule
from tilec.runtime.records import Records, schedule_key
from tilec.transforms.decompose import make_work_split
from tilec.transforms.heuristic import (
    DEFERRED,
    KNOBS,
    Config,
    Source,
    candidates,
    heuristic,
    parse_knob,
    resolve,
)
from tilec.transforms.plan import Decomposition, Fixup

EX = str(Path(__file__).resolve().parents[2] / "examples" / "gemm_decomposition.py")
ALL_AUTO = {k: "auto" for k in KNOBS}
USER_VALUES = dict(BM=64, BN=128, BK=32, GROUP_M=4, DECOMP="splitk", SPLITS=3, SK_WAVES=2,
                   FIXUP="atomic", STAGES=2, WARPS=4, LOAD="pointer", CM=2, CN=2, SWAP_AB=1)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(KNOBS)), st.sampled_from([(16, 4096, 4096), (128, 4096, 7168),
                                                          (1024, 1024, 1024), (512, 512, 65536),
                                                          (8192, 8192, 8192), (3000, 5000, 2000)]))
def test_a_value_the_user_gives_is_kept(pinned: set[str], shape: tuple[int, int, int]) -> None:
    M, N, K = shape
    params = {"M": M, "N": N, "K": K, **ALL_AUTO, **{k: USER_VALUES[k] for k in pinned}}
    r = resolve(params)
    for k in KNOBS:
        c = r.choice(k)
        if k in pinned:
            assert (r.params[k], c.source) == (USER_VALUES[k], Source.USER)
        else:
            assert c.source is Source.HEURISTIC
            assert r.params[k] != "auto" or k in DEFERRED  # LOAD: lowering decides
    # the choice is a valid configuration: its decomposition can be built
    cfg = Config(**{k: parse_knob(k, r.params[k]) for k in KNOBS if k != "LOAD"})
    make_work_split(cfg.DECOMP, M=M, N=N, K=K, BM=cfg.BM, BN=cfg.BN, BK=cfg.BK, sms=132,
                    splits=cfg.SPLITS, sk_waves=cfg.SK_WAVES, fixup=cfg.FIXUP)


def test_heuristic_rules_follow_the_h200_measurements() -> None:
    cfg, _ = heuristic(128, 4096, 7168)  # seed001_awq: 64x64x128, 6 stages, data-parallel
    assert (cfg.BM, cfg.BN, cfg.BK, cfg.STAGES, cfg.DECOMP) == (64, 64, 128, 6,
                                                                Decomposition.DATA_PARALLEL)
    cfg, why = heuristic(512, 512, 65536)  # few deep tiles: split-K fills the machine
    # (fixup_probe_r2: 128x256 split-K 16 with the reduce kernel 0.81x cuBLAS, 128x128 split-K 8
    # deterministic 0.73x)
    assert (cfg.BM, cfg.BN, cfg.DECOMP, cfg.SPLITS, cfg.FIXUP) == (
        128, 256, Decomposition.SPLIT_K, 16, Fixup.REDUCE_KERNEL)
    assert any("fix-up reduce_kernel" in w for w in why)
    # two parts: the deterministic fix-up stays (measured faster: 1024^2 x 32768, 16 x 4096^2)
    for shape in ((1024, 1024, 32768), (16, 4096, 4096)):
        cfg, why = heuristic(*shape)
        assert (cfg.DECOMP, cfg.SPLITS, cfg.FIXUP) == (Decomposition.SPLIT_K, 2,
                                                       Fixup.DETERMINISTIC), shape
        assert any("fix-up deterministic" in w for w in why)
    # the CUDA backend prints the reduce kernel too (session 13): chosen by the same margin there,
    # never below REDUCE_MIN_SPLITS parts
    cfg, _ = heuristic(512, 512, 65536, target="cuda")
    assert cfg.FIXUP is Fixup.REDUCE_KERNEL and cfg.SPLITS >= 8
    assert heuristic(1024, 1024, 32768, target="cuda")[0].FIXUP is Fixup.DETERMINISTIC
    big, why = heuristic(8192, 8192, 8192)
    assert (big.BM, big.BN) == (128, 256) and any("chosen" in w for w in why)


def test_a_fixed_decomposition_gets_its_best_numbers() -> None:
    cfg, why = heuristic(512, 512, 65536, fixed={"DECOMP": Decomposition.STREAM_K})
    assert cfg.DECOMP is Decomposition.STREAM_K and "given by the user" in why[1]
    # the split count the cost model picks for split-K when only the kind is given
    cfg, _ = heuristic(512, 512, 65536, fixed={"DECOMP": Decomposition.SPLIT_K, "BM": 64})
    assert cfg.DECOMP is Decomposition.SPLIT_K and cfg.SPLITS > 1 and cfg.BM == 64


def test_candidates_start_with_the_heuristic_and_keep_fixed_knobs() -> None:
    fixed = {"BK": 32, "FIXUP": Fixup.ATOMIC}
    cands = candidates(1024, 1024, 1024, fixed=fixed)
    assert cands[0] == heuristic(1024, 1024, 1024, fixed=fixed)[0]
    assert len(cands) == len(set(cands)) > 3
    assert all(c.BK == 32 and c.FIXUP is Fixup.ATOMIC for c in cands)


def test_precedence_tuned_then_rules_then_heuristic() -> None:
    params = {"M": 1024, "N": 1024, "K": 1024, "BM": "auto", "BN": 256}
    tuned, rule = {"BM": 32}, ({"BM": 16}, "rule for 1024^3")
    assert resolve(params, tuned=tuned, rules=rule).choice("BM").source is Source.TUNED
    r = resolve(params, rules=rule)
    assert (r.params["BM"], r.choice("BM").source, r.choice("BN").source) == (
        16, Source.RULES, Source.USER)
    assert "rules chose BM=16 (rule for 1024^3)" in r.notes
    r = resolve(params)
    assert r.choice("BM").source is Source.HEURISTIC and r.notes[0].startswith("heuristic chose BM=")


def test_bad_knob_values_are_named() -> None:
    with pytest.raises(PolicyError, match="decomposition must be one of auto, dp"):
        resolve({"M": 64, "N": 64, "K": 64, "BM": "auto", "DECOMP": "diagonal"})
    with pytest.raises(ParamError, match="parameter BM must be a positive integer or 'auto'"):
        resolve({"M": 64, "N": 64, "K": 64, "BM": -4, "BN": "auto"})
    with pytest.raises(ParamError, match="parameter M must be an integer to choose BM"):
        resolve({"M": "M", "N": 64, "K": 64, "BM": "auto"})
    with pytest.raises(ParamError, match="gemm_decomposition.py: parameter BN must be"):
        load_schedule(EX, {"M": 64, "N": 64, "K": 64, "BN": 0})


def test_records_are_keyed_by_schedule_text_target_and_fixed_params(tmp_path: Path) -> None:
    rec = Records(tmp_path / "t.sqlite")
    k = schedule_key("A", "triton")
    assert k != schedule_key("A", "cuda") and k != schedule_key("B", "triton")
    rec.record(k, {"M": 1, "BM": "auto"}, {"BM": 16})
    rec.record(k, {"M": 1, "BM": "auto"}, {"BM": 32})
    assert rec.lookup(k, {"M": 1, "BM": "auto"}) == {"BM": 32}  # the newest wins
    assert rec.lookup(k, {"M": 2, "BM": "auto"}) is None
    assert rec.lookup(schedule_key("A", "cuda"), {"M": 1, "BM": "auto"}) is None
    (tmp_path / "bad.sqlite").write_text("not a database")
    assert Records(tmp_path / "bad.sqlite").lookup(k, {"M": 1}) is None


def test_tune_records_the_fastest_and_gen_uses_it(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path))
    shape = {"M": 256, "N": 256, "K": 512}
    configs = space(EX, shape, limit=6)
    assert configs[0] == heuristic(256, 256, 512)[0] and len(configs) == 6
    # a made-up timer: the config with the smallest BK*100 + BN wins; one config fails
    def timer(p: dict) -> float:
        if p["BN"] == 256:
            raise RuntimeError("out of shared memory")
        return p["BK"] * 100 + p["BN"]
    res = tune(EX, shape, limit=6, timer=timer, progress=False)
    ok = [(c, m) for c, m in res.results if m.ok]
    want = min(ok, key=lambda r: r[1].ms)[0]
    assert res.best == want and any(not m.ok for _, m in res.results)
    loaded = load_schedule(EX, shape)
    assert all(loaded.params[k] == v for k, v in res.params.items())
    assert loaded.notes[0].startswith("tuned chose ")
    assert load_schedule(EX, shape, tuned=False).resolution.choice("BM").source is Source.HEURISTIC
    # the CLI says which source chose, and --no-tuned ignores the record
    assert main(["gen", EX, *(f"--param={k}={v}" for k, v in shape.items()), "-o",
                 str(tmp_path / "k.py")]) == 0
    assert "tilec: note: tuned chose BM=" in capsys.readouterr().err
    assert main(["gen", EX, *(f"--param={k}={v}" for k, v in shape.items()), "--no-tuned",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["notes"][0].startswith("heuristic chose") and data["params"]["BM"] != "auto"


def test_tune_without_auto_knobs_says_so() -> None:
    given = {"M": 64, "N": 64, "K": 64, "BM": 32, "BN": 32, "BK": 16, "GROUP_M": 4,
             "DECOMP": "dp", "SPLITS": 1, "SK_WAVES": 1, "FIXUP": "atomic", "STAGES": 2,
             "WARPS": 4, "LOAD": "pointer", "CM": 1, "CN": 1, "SWAP_AB": 0}
    with pytest.raises(TilecError, match="nothing to tune"):
        tune(EX, given, timer=lambda p: 1.0, progress=False)


def test_measure_runs_and_checks_in_the_interpreter() -> None:
    small = {"M": 48, "N": 40, "K": 64, "DTYPE": "fp16", "SMS": 4}
    m = measure(EX, {**small, "BM": 16, "BN": 16, "BK": 16, "DECOMP": "splitk", "SPLITS": 2})
    assert m.ok and m.error is None and m.rel_err is not None and m.rel_err < 5e-3
    assert m.ms is None  # nothing times kernels on a CPU unless a timer is given
    bad = measure(EX, {**small, "BM": 24, "BN": 16, "BK": 16})  # 24 is no power of two
    assert not bad.ok and bad.error


def test_params_file_and_tune_dry_run(tmp_path: Path, capsys) -> None:
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps({"BM": 64, "BN": 64, "M": 512, "N": 512, "K": 512}))
    assert main(["explain", EX, "--params-file", str(pf), "--param", "BN=128", "--json"]) == 0
    sec = json.loads(capsys.readouterr().out)
    assert sec["params"]["BM"] == 64 and sec["params"]["BN"] == 128  # --param wins
    choices = {c["name"]: c for c in sec["sections"]["parameters"]["choices"]}
    assert choices["BM"]["source"] == "user" and choices["BK"]["source"] == "heuristic"
    pf.write_text("[1, 2]")
    assert main(["gen", EX, "--params-file", str(pf)]) == 2
    assert "must hold a JSON object" in capsys.readouterr().err
    assert main(["tune", EX, "--param", "M=512", "--param", "N=512", "--param", "K=65536",
                 "--dry-run", "--limit", "4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("# 4 configs") and "splitk16 reduce_kernel" in out[1]


def test_set_kernel_knobs_reach_the_plan() -> None:
    from tilec.runtime.build import kernel_plan
    from tilec.transforms.plan import LoadKind

    shape = {"M": 256, "N": 256, "K": 256}
    plan = kernel_plan(load_schedule(EX, {**shape, "STAGES": 5, "WARPS": 2, "LOAD": "pointer"}))
    assert (plan.num_stages, plan.num_warps, plan.a.kind, plan.b.kind) == (
        5, 2, LoadKind.POINTER, LoadKind.POINTER)
    auto = kernel_plan(load_schedule(EX, shape, tuned=False))
    assert auto.a.kind is LoadKind.TMA  # aligned rows: lowering picks TMA
    # rows TMA cannot take (K = 100 bf16: 200-byte rows) are a run-time fact of the shape-generic
    # kernel (its TMA_A / TMA_B variant flags), so LOAD="tma" keeps TMA in the plan at any K
    unaligned = kernel_plan(load_schedule(EX, {**shape, "K": 100, "LOAD": "tma"}))
    assert (unaligned.a.kind, unaligned.b.kind) == (LoadKind.TMA, LoadKind.TMA)
    with pytest.raises(TilecError, match="warps must be a power of two or a multiple of 4"):
        load_schedule(EX, {**shape, "WARPS": 6})


def test_gen_uses_a_rules_file_and_says_which_rule(tmp_path: Path, capsys) -> None:
    from tilec.runtime.rules import FORMAT

    choice = {"BM": 64, "BN": 64, "BK": 32, "GROUP_M": 4, "DECOMP": "dp", "SPLITS": 1,
              "SK_WAVES": 1, "FIXUP": "atomic", "STAGES": 2, "WARPS": 4, "LOAD": "pointer"}
    rules = tmp_path / "heuristic.json"
    rules.write_text(json.dumps({"format": FORMAT, "schedule": "gemm_decomposition.py",
                                 "schedule_key": "x", "radius": 1.0,
                                 "rules": [{"M": 512, "N": 512, "K": 512, "params": choice}]}))
    argv = ["gen", EX, "--param", "M=600", "--param", "N=512", "--param", "K=512", "--no-tuned",
            "--rules", str(rules), "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(data["params"][k] == v for k, v in choice.items())
    assert data["notes"][0].startswith("rules chose BM=64") and "nearest tuned shape" in data["notes"][0]
    # far from every rule: the heuristic decides
    assert main([*argv[:3], "M=8192", *argv[4:]]) == 0
    assert json.loads(capsys.readouterr().out)["notes"][0].startswith("heuristic chose")


def test_tune_times_every_config_in_rounds_and_the_median_decides(tmp_path: Path) -> None:
    from tilec.runtime.records import Records

    shape = {"M": 256, "N": 256, "K": 512}
    calls: dict[tuple, int] = {}

    def timer(p: dict) -> float:
        # the heuristic's config (BN=...) looks fast once (a cold GPU's noise) and slow after
        key = tuple(sorted(p.items()))
        calls[key] = calls.get(key, 0) + 1
        first = space(EX, shape, limit=6)[0].params()
        if all(p[k] == first[k] for k in ("BM", "BN", "BK", "DECOMP", "SPLITS")):
            return 1.0 if calls[key] == 1 else 9.0
        return 2.0 + p["BN"] / 1e4
    res = tune(EX, shape, limit=6, timer=timer, progress=False,
               records=Records(tmp_path / "t.sqlite"))
    assert res.best != space(EX, shape, limit=6)[0]  # its one fast timing did not win
    assert sorted(calls.values()) == [ROUNDS] * len(calls) and len(calls) == 6  # every config
    # the rounds rotate: the config timed first is a different one each round
    firsts: list[tuple] = []
    seen: set[tuple] = set()

    def first_of_round(p: dict) -> float:
        key = tuple(sorted(p.items()))
        if not firsts or key in seen:  # a config seen again: a new round has begun
            seen.clear()
            firsts.append(key)
        seen.add(key)
        return 1.0
    tune(EX, shape, limit=6, timer=first_of_round, progress=False,
         records=Records(tmp_path / "t3.sqlite"))
    assert len(firsts) == ROUNDS and len(set(firsts)) == ROUNDS
    calls.clear()  # one round: the fast first timing is all there is, and it wins
    res2 = tune(EX, shape, limit=6, timer=timer, progress=False, rounds=1,
                records=Records(tmp_path / "t2.sqlite"))
    assert res2.best == space(EX, shape, limit=6)[0]


def test_tune_keeps_the_heuristic_unless_a_config_beats_it_in_most_rounds(tmp_path: Path) -> None:
    from tilec.runtime.records import Records

    shape = {"M": 256, "N": 256, "K": 512}
    first = space(EX, shape, limit=6)[0]
    calls: dict[tuple, int] = {}

    def timer(lead: float):
        def t(p: dict) -> float:
            # the heuristic's config: 2.0 in every round; every other config 1.5 in the rounds
            # before `lead`, 2.1 after (a lower median, but fewer won rounds when lead is small)
            key = tuple(sorted(p.items()))
            calls[key] = calls.get(key, 0) + 1
            if all(p[k] == v for k, v in first.params().items() if k in p):
                return 2.0
            return 1.5 + p["BN"] / 1e4 if calls[key] <= lead else 2.1
        return t

    n = ROUNDS
    calls.clear()  # faster in a bare majority of rounds: the heuristic's choice stays, and why
    res = tune(EX, shape, limit=6, timer=timer(n // 2 + 1), progress=False,
               records=Records(tmp_path / "a.sqlite"))
    assert res.best == first and "kept the heuristic's choice" in res.note
    assert f"in {n // 2 + 1} of {n} rounds only" in res.note
    calls.clear()  # faster in every round: it wins
    res = tune(EX, shape, limit=6, timer=timer(n), progress=False,
               records=Records(tmp_path / "b.sqlite"))
    assert res.best != first and res.note == ""


def test_time_ms_names_a_bad_launch_mode() -> None:
    from tilec.runtime.bench import time_ms

    # checked before anything touches a GPU: the message names the argument and the value
    with pytest.raises(ValueError, match="launch must be 'hidden' or 'visible' but got 'sometimes'"):
        time_ms(lambda: None, launch="sometimes")
