"""Shapes (grids and files), the rules file and its lookup against brute force."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.runtime.rules import FORMAT, Rules, RulesError
from tilec.runtime.sweep.shapes import ShapeError, parse_shapes


def test_grid_is_the_product_of_its_values() -> None:
    got = parse_shapes("M=16..128x2;N=1024,3000 K=1000..1200+100")
    want = list(itertools.product([16, 32, 64, 128], [1024, 3000], [1000, 1100, 1200]))
    assert got == want


def test_seed_kind_grid_has_250_shapes() -> None:
    shapes = parse_shapes("M=16..8192x2 N=1024..16384x2 K=1024..16384x2")
    assert len(shapes) == 250 and min(s[0] for s in shapes) == 16
    assert max(s[1] for s in shapes) == 16384


@pytest.mark.parametrize("text", ["256 1024 2048\n# a comment\n\n16x4096x4096\n",
                                  "M,N,K\n256,1024,2048\n16,4096,4096\n"])
def test_shape_files(tmp_path: Path, text: str) -> None:
    f = tmp_path / "shapes.txt"
    f.write_text(text)
    assert parse_shapes(str(f)) == [(256, 1024, 2048), (16, 4096, 4096)]
    j = tmp_path / "shapes.json"
    j.write_text(json.dumps([[256, 1024, 2048], {"M": 16, "N": 4096, "K": 4096}]))
    assert parse_shapes(str(j)) == [(256, 1024, 2048), (16, 4096, 4096)]


@pytest.mark.parametrize(("spec", "msg"), [
    ("M=16 N=1024", "no values for K"), ("M=16 N=1024 K=0", "positive"),
    ("M=16 N=1024 K=8..4", "range"), ("M=a N=1 K=1", "integer or a range"),
    ("no-such-file.txt", "neither a file nor a grid"), ("M=1 M=2 N=1 K=1", "twice")])
def test_bad_shapes_say_why(spec: str, msg: str) -> None:
    with pytest.raises(ShapeError, match=msg):
        parse_shapes(spec)


def _rules(shapes: list[tuple[int, int, int]], radius: float = 1.0) -> Rules:
    return Rules.from_data({"format": FORMAT, "schedule": "g.py", "schedule_key": "k",
                            "radius": radius, "rules": [
                                {"M": m, "N": n, "K": k, "params": {"BM": i}}
                                for i, (m, n, k) in enumerate(shapes)]})


dims = st.sampled_from([16, 24, 64, 100, 256, 1000, 1024, 4096, 16384])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(dims, dims, dims), min_size=1, max_size=8, unique=True),
       st.tuples(dims, dims, dims), st.sampled_from([0.0, 0.5, 1.0, 3.0]))
def test_lookup_is_the_nearest_rule_within_the_radius(rules, q, radius) -> None:
    r = _rules(rules, radius)
    got = r.lookup(*q)
    dist = [math.dist([math.log2(v) for v in s], [math.log2(v) for v in q]) for s in rules]
    best = min(range(len(rules)), key=lambda i: (dist[i], i))
    if q in rules:
        assert got is not None and got[0] == {"BM": rules.index(q)} and "exact" in got[1]
    elif dist[best] > radius:
        assert got is None
    else:
        assert got is not None and got[0] == {"BM": best}
        assert "nearest tuned shape" in got[1] and f"{dist[best]:.2f}" in got[1]


def test_lookup_says_when_the_schedule_changed() -> None:
    r = _rules([(256, 1024, 1024)])
    assert "another version" in r.lookup(256, 1024, 1024, "other-key")[1]
    assert "another version" not in r.lookup(256, 1024, 1024, "k")[1]


@pytest.mark.parametrize(("data", "msg"), [
    ({"rules": []}, "not a tilec rules file"),
    ({"format": FORMAT, "rules": [{"M": 1, "N": 2}]}, "rule 0 must have M, N, K and params"),
    ({"format": FORMAT, "rules": [{"M": 0, "N": 2, "K": 2, "params": {}}]}, "positive"),
    ({"format": FORMAT, "radius": -1, "rules": []}, "radius"),
])
def test_bad_rules_files(tmp_path: Path, data: dict, msg: str) -> None:
    f = tmp_path / "r.json"
    f.write_text(json.dumps(data))
    with pytest.raises(RulesError, match=msg):
        Rules.load(f)
    f.write_text("{not json")
    with pytest.raises(RulesError, match="not JSON"):
        Rules.load(f)


def test_exported_rules_choose_the_auto_knobs(tmp_path: Path) -> None:
    """--export of a (cost-model) sweep, read back by the loader as `tilec gen --rules` does."""
    from tilec.app.cli import main
    from tilec.runtime.loader import load_schedule
    from tilec.runtime.rules import TILE_KNOBS
    from tilec.transforms.heuristic import KNOBS, Source

    ex = str(Path(__file__).resolve().parents[2] / "examples" / "gemm_decomposition.py")
    db, out = tmp_path / "s.sqlite", tmp_path / "rules.json"
    assert main(["sweep", ex, "--shapes", "M=256 N=4096 K=16384", "--model", "--limit",
                 "3", "--db", str(db), "--export", str(out), "-o", str(tmp_path / "s.txt")]) == 0
    rules = Rules.load(out)
    data = json.loads(out.read_text())
    [want] = [r["params"] for r in data["rules"]]
    near = load_schedule(ex, {"M": 300, "N": 4096, "K": 16384}, tuned=False, rules=rules)
    lent, _ = rules.lookup(300, 4096, 16384)  # the rule's tile; its decomposition re-chosen
    for k in KNOBS:
        if k not in ("LOAD", "SWAP_AB"):  # (SWAP_AB: not in the example's PARAMS)
            assert near.params[k] == (want if k in TILE_KNOBS else lent)[k]
            assert near.resolution.choice(k).source is Source.RULES
    assert "nearest tuned shape 256x4096x16384" in near.resolution.choice("BM").why
    far = load_schedule(ex, {"M": 4096, "N": 4096, "K": 16384}, tuned=False, rules=rules)
    assert far.resolution.choice("BM").source is Source.HEURISTIC  # out of the radius
