"""The dispatch table (tilec/library/table.py) against gen's own resolution: every bucket holds
what ``load_schedule`` (tilec gen's road) resolves at the bucket's representative shape, exact
entries what it resolves at the shape; tuned records and per-card rules files land where gen
would use them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.runtime.loader import load_schedule
from tilec.library.table import (
    ConfigSet,
    build_table,
    build_tables,
    heuristic_data,
    representative,
    shape_class,
    tuned_shapes,
)
from tilec.runtime.records import Records, schedule_key
from tilec.runtime.rules import FORMAT, Rules

EX = Path("examples/gemm_decomposition.py")
PINS = dict(BM=32, BN=32, BK=16, SMS=4, DTYPE="fp16", STAGES=2, WARPS=4, GROUP_M=2)
MAX = 512


@pytest.fixture(scope="module")
def raw() -> dict:
    return load_schedule(EX, PINS, tuned=False).raw_params


@pytest.fixture(scope="module")
def built(raw: dict) -> tuple[ConfigSet, object]:
    configs = ConfigSet()
    table = build_table(raw, card="default", target="triton", key="k", configs=configs,
                        shapes=[(100, 300, 5000)], max_size=MAX)
    return configs, table


@given(st.integers(0, 10**6))
def test_shape_class_is_the_smallest_power_of_two_at_or_above(x: int) -> None:
    c = shape_class(x)
    assert representative(c) >= max(x, 1)
    assert c == 0 or representative(c - 1) < x


def _gen_params(M: int, N: int, K: int) -> dict:
    got = load_schedule(EX, {**PINS, "M": M, "N": N, "K": K}, tuned=False).params
    return {k: v for k, v in got.items() if k not in ("M", "N", "K")}


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 3000), st.integers(1, 40000))
def test_every_bucket_holds_gens_choice_at_its_representative(built: tuple, M: int, N: int,
                                                               K: int) -> None:
    configs, table = built
    C = table.classes
    assert C == shape_class(MAX) + 1
    c = [min(shape_class(x), C - 1) for x in (M, N, K)]
    index = table.grid[(c[0] * C + c[1]) * C + c[2]]
    assert configs.params[index] == _gen_params(*(representative(x) for x in c))
    assert "at the bucket's shape" in table.reasons[table.grid_why[(c[0] * C + c[1]) * C + c[2]]]


def test_tables_choose_several_decompositions_and_exact_shapes(built: tuple) -> None:
    configs, table = built
    kinds = {p["DECOMP"] for p in configs.params}
    assert {"dp", "splitk"} <= kinds, kinds  # the heuristic's choice changes over the buckets
    index, why = table.exact[(100, 300, 5000)]
    assert configs.params[index] == _gen_params(100, 300, 5000)
    assert table.reasons[why].startswith("heuristic: tile 32x32x16")


def test_pinned_schedule_is_one_config_everywhere() -> None:
    raw = load_schedule("examples/gemm_basic.py", {"BM": 32}, tuned=False).raw_params
    configs = ConfigSet()
    table = build_table(raw, card="default", target="triton", key="k", configs=configs,
                        max_size=64)
    assert len(configs.params) == 1 and set(table.grid) == {0}
    assert table.reasons == ["pinned: every knob given by the schedule's PARAMS or --param"]


def _rules(tmp: Path, device: str | None, params: dict, name: str) -> tuple:
    data = {"format": FORMAT, "schedule": EX.name, "schedule_key": "x", "radius": 4.0,
            "device": device, "rules": [{"M": 64, "N": 256, "K": 4096, "params": params}]}
    path = tmp / name
    path.write_text(json.dumps(data))
    from tilec.library.table import card_of

    return card_of(device), Rules.load(path)


def test_rules_per_card(tmp_path: Path, raw: dict) -> None:
    knobs = dict(_gen_params(64, 256, 4096))
    h100 = _rules(tmp_path, "NVIDIA H100 80GB HBM3", {**knobs, "DECOMP": "streamk",
                                                      "SPLITS": 1}, "h100.json")
    h200 = _rules(tmp_path, "NVIDIA H200", {**knobs, "DECOMP": "dp", "SPLITS": 1}, "h200.json")
    configs = ConfigSet()
    tables, notes = build_tables(raw, target="triton", key="k", configs=configs,
                                 rules=[h100, h200], card="auto", max_size=MAX)
    assert sorted(tables) == ["default", "h100", "h200"] and notes == []

    def at(card: str, M: int, N: int, K: int) -> tuple[dict, str]:
        t = tables[card]
        if (M, N, K) in t.exact:
            i, w = t.exact[(M, N, K)]
        else:
            C = t.classes
            c = [min(shape_class(x), C - 1) for x in (M, N, K)]
            flat = (c[0] * C + c[1]) * C + c[2]
            i, w = t.grid[flat], t.grid_why[flat]
        return configs.params[i], t.reasons[w]

    assert at("h100", 64, 256, 4096)[0]["DECOMP"] == "streamk"
    assert "rules h100.json: exact shape" in at("h100", 64, 256, 4096)[1]
    assert at("h200", 64, 256, 4096)[0]["DECOMP"] == "dp"
    # a bucket holds the heuristic at its shape even within the radius of a rule: the rule
    # answers at the shape (the module's look-up, test_module_answers_rules_as_gen_does)
    assert at("h200", 50, 200, 4096)[1].startswith("heuristic")
    assert at("h200", 50, 200, 4096)[0] == _gen_params(64, 256, 512)
    for card, decomp in (("h100", "streamk"), ("h200", "dp")):
        (entry,) = tables[card].rules
        assert entry["name"] == f"{card}.json" and entry["radius"] == 4.0
        (M, N, K, i), = entry["rules"]
        assert (M, N, K) == (64, 256, 4096) and configs.params[i]["DECOMP"] == decomp
    assert tables["default"].rules == []
    assert at("default", 64, 256, 4096)[0] == _gen_params(64, 256, 4096)  # no rules there
    # far from the rule (beyond its radius): the heuristic, on every card
    assert at("h100", 8, 16, 16)[1].startswith("heuristic")
    one, notes = build_tables(raw, target="triton", key="k", configs=ConfigSet(),
                              rules=[h100, h200], card="h200", max_size=MAX)
    assert list(one) == ["default"] and notes == ["rules for another card than h200 skipped: "
                                                  "h100.json"]


def test_tuned_records_become_exact_entries(tmp_path: Path, raw: dict) -> None:
    rec = Records(tmp_path / "tuned.sqlite")
    key = schedule_key(EX.read_text(), "triton")
    params = {**raw, "M": 96, "N": 96, "K": 96}
    auto = {k: v for k, v in raw.items() if v == "auto"}
    choice = {**dict.fromkeys(auto, 1), "DECOMP": "splitk", "SPLITS": 2, "FIXUP": "atomic",
              "LOAD": "pointer"}
    rec.record(key, params, choice)
    rec.record(key, {**params, "SMS": 8}, {**choice, "SPLITS": 3})  # other fixed params
    found = tuned_shapes(rec.path, key, raw)
    assert found == {(96, 96, 96): choice}
    assert tuned_shapes(rec.path, "another", raw) == {}
    configs = ConfigSet()
    table = build_table(raw, card="default", target="triton", key=key, configs=configs,
                        tuned=found, max_size=64)
    i, w = table.exact[(96, 96, 96)]
    assert configs.params[i]["SPLITS"] == 2 and configs.params[i]["FIXUP"] == "atomic"
    assert table.reasons[w] == "tuned: recorded by tilec tune at this shape"


def test_processes_resolve_the_same_table(raw: dict, built: tuple) -> None:
    configs, table = built
    par = ConfigSet()
    other = build_table(raw, card="default", target="triton", key="k", configs=par,
                        shapes=[(100, 300, 5000)], max_size=MAX, jobs=2)
    assert [par.params[i] for i in other.grid] == [configs.params[i] for i in table.grid]
    assert [other.reasons[i] for i in other.grid_why] == [table.reasons[i]
                                                         for i in table.grid_why]


RULE_SHAPES = [(64, 256, 4096), (300, 40, 2000), (1500, 1500, 30000)]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(RULE_SHAPES), st.tuples(*[st.floats(-0.9, 0.9)] * 3))
def test_module_answers_rules_as_gen_does(rules_module: tuple, rule: tuple,
                                          offset: tuple) -> None:
    """The built module's choice at a shape near a rule (each size the rule's times 2**±0.9)
    against gen's (load_schedule with the rules file): the same wherever a rule answers (exact
    or within the radius: Rules.lookup decides); elsewhere gen's heuristic at the shape (the
    module's copy)."""
    M, N, K = (max(1, round(x * 2 ** o)) for x, o in zip(rule, offset, strict=True))
    assert _module_agrees(rules_module, M, N, K) in ("rule", "heuristic")


def test_module_rules_change_choices(rules_module: tuple) -> None:
    """Near each rule the module answers the rule, not the heuristic (which differs there)."""
    mod, configs, rules = rules_module
    for M, N, K in RULE_SHAPES:
        for shape in ((M, N, K), (M + 7, N - 3, K + 100)):  # exact, then within the radius
            text = mod.explain(*shape)
            assert "rules r.json: " + ("exact" if shape == (M, N, K) else "nearest") in text
            _module_agrees(rules_module, *shape)
    assert any(_gen_params(*shape) != configs.params[int(mod.explain(*shape).split(
        ": config ", 1)[1].split()[0])] for shape in RULE_SHAPES)


def _module_agrees(rules_module: tuple, M: int, N: int, K: int) -> str:
    """Assert that the module chose as gen does at M x N x K; which answered: "rule" or
    "heuristic"."""
    mod, configs, rules = rules_module
    got = configs.params[int(mod.explain(M, N, K).split(": config ", 1)[1].split()[0])]
    if rules.lookup(M, N, K) is not None:
        want = load_schedule(EX, {**PINS, "M": M, "N": N, "K": K}, tuned=False,
                             rules=rules).params
        assert got == {k: v for k, v in want.items() if k not in ("M", "N", "K")}
        assert "rules r.json" in mod.explain(M, N, K)
        # the module's own copy of the re-choice says what gen's says, numbers included
        assert f"why: {rules.lookup(M, N, K, sms=PINS['SMS'])[1]} [" in mod.explain(M, N, K)
        return "rule"
    # no rule: gen's heuristic at the shape, the module's copy of it
    assert got == _gen_params(M, N, K)
    assert "heuristic at this shape" in mod.explain(M, N, K)
    return "heuristic"


@pytest.fixture(scope="module")
def rules_module(raw: dict, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """A module whose table has a rules file of three rules (radius 1) that pick other
    decompositions than the heuristic; torch kernels (tests/library/fake.py)."""
    from tests.library.fake import KERNEL, import_module
    from tilec.library import Library, module_text

    tmp = tmp_path_factory.mktemp("rules")
    base = _gen_params(64, 256, 4096)
    data = {"format": FORMAT, "schedule": "g.py", "schedule_key": "k", "radius": 1.0,
            "device": None, "rules": [
                {"M": 64, "N": 256, "K": 4096, "params": {**base, "DECOMP": "streamk"}},
                {"M": 300, "N": 40, "K": 2000, "params": {**base, "DECOMP": "splitk",
                                                           "SPLITS": 3}},
                {"M": 1500, "N": 1500, "K": 30000, "params": {**base, "SPLITS": 2,
                                                               "DECOMP": "splitk"}}]}
    (tmp / "r.json").write_text(json.dumps(data))
    rules = Rules.load(tmp / "r.json")
    configs = ConfigSet()
    tables, _ = build_tables(raw, target="triton", key="k", configs=configs,
                             rules=[(None, rules)], max_size=MAX)
    heuristic = heuristic_data(raw, configs)  # what tilec build gives the module's heuristic
    menus = configs.alternatives()  # the lent configs' other decompositions, as tilec build
    cfgs = [{"label": str(i), "params": p, "tile": (p["BM"], p["BN"], p["BK"]), "kernel": "k0",
             "tma": (False, False), "facts": [], **({"menu": menus[i]} if i in menus else {})}
            for i, p in enumerate(configs.params)]
    lib = Library(name="ruled", schedule="g.py", target="triton", dtype="float32",
                  out_dtype="float32", b_layout="kn", kernels={"k0": KERNEL.format(layout="kn")},
                  configs=cfgs, tables={c: t.data() for c, t in tables.items()},
                  heuristic=heuristic)
    return import_module(module_text(lib, built="test"), tmp, "ruled"), configs, rules
