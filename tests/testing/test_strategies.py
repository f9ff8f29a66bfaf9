"""tilec.testing.params: what is drawn, what is kept, facts met (or failed) and only launches
that build."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilec.errors import ParamError
from tilec.ir import infer_launch
from tilec.testing import holds, kinds, params
from tilec.testing.launch import load

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed004_persistent_cluster.py")
GROUPED = str(ROOT / "examples" / "grouped_raster.py")
FAST = settings(max_examples=25, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])


def test_kinds_of_the_examples() -> None:
    from tilec.testing.strategies import defaults

    k = {n: v.value for n, v in kinds(defaults(SEED)).items()}
    assert [n for n, v in k.items() if v == "size"] == ["M", "N", "K"]
    assert [n for n, v in k.items() if v == "tile"] == ["BM", "BN", "BK"]
    assert [n for n, v in k.items() if v == "cluster"] == ["CM", "CN", "CLUSTER"]
    assert k["SMS"] == "other" and k["DTYPE"] == k["STAGES"] == k["ORDER"] == "kept"


@FAST
@given(p=params(SEED, facts=["M % BM == 0", "N % BN == 0", "SMS % CLUSTER == 0"]))
def test_facts_are_met_and_the_cluster_kept(p: dict) -> None:
    assert p["M"] % p["BM"] == 0 and p["N"] % p["BN"] == 0 and p["SMS"] % p["CLUSTER"] == 0
    assert (p["CM"], p["CN"], p["CLUSTER"], p["DTYPE"], p["ORDER"]) == (2, 1, 2, "bf16", "rows")
    assert 1 <= p["M"] <= 64 and p["BM"] in (1, 2, 3, 4, 8, 16)


@FAST
@given(p=params(SEED, facts=["M % BM == 0", "N % BN == 0"], meet=False, max_size=20))
def test_meet_false_fails_a_fact(p: dict) -> None:
    assert p["M"] % p["BM"] or p["N"] % p["BN"]
    assert p["M"] <= 20 and p["N"] <= 20


@FAST
@given(p=params(SEED, fixed={"CLUSTER": 4, "CM": 2, "CN": 2},
                strategies={"SMS": st.sampled_from([4, 8])}))
def test_fixed_and_own_strategies(p: dict) -> None:
    assert (p["CLUSTER"], p["CM"], p["CN"]) == (4, 2, 2) and p["SMS"] in (4, 8)


@FAST
@given(p=params(GROUPED, cluster=(2, 1, 1)))
def test_only_launches_that_build(p: dict) -> None:
    """A cluster of 2 must divide the grid of tiles: every draw meets it."""
    tiles = -(-p["M"] // p["BM"]) * -(-p["N"] // p["BN"])
    assert tiles % 2 == 0
    assert infer_launch(load(GROUPED, p, (2, 1, 1)).fusion).cluster_size == 2


def test_facts_of_a_derivation_are_objects_too() -> None:
    """tilec's Fact objects (what op.facts holds) and sympy conditions evaluate exactly."""
    import sympy

    from tilec.proofs import Fact, FactKind

    M, BM, SMS, CN = (sympy.Symbol(n, integer=True, positive=True) for n in ("M", "BM", "SMS", "CN"))
    facts = [Fact(FactKind.DIVISIBLE, sympy.ceiling(M / BM), CN), Fact(FactKind.POSITIVE, SMS),
             Fact(FactKind.BOUND, CN, SMS), sympy.Eq(sympy.Mod(SMS, CN), 0)]
    assert holds(facts, {"M": 40, "BM": 8, "CN": 5, "SMS": 10})
    assert not holds(facts, {"M": 41, "BM": 8, "CN": 5, "SMS": 10})  # ceil(41/8) = 6
    assert not holds(facts, {"M": 40, "BM": 8, "CN": 5, "SMS": 5})  # CN < SMS fails
    assert holds([lambda p: p["M"] > 1], {"M": 2}) and not holds(["M > 2"], {"M": 2})
    assert not holds(["M % BM == 0"], {"M": 4, "BM": 0})  # a division by zero fails


def test_user_errors() -> None:
    with pytest.raises(ParamError, match="unknown parameter 'BLOCK'"):
        params(SEED, fixed={"BLOCK": 2})
    with pytest.raises(ParamError, match="fact M % Q == 0 names Q"):
        params(SEED, facts=["M % Q == 0"])
    with pytest.raises(ParamError, match="is not a condition"):
        params(SEED, facts=["M +"])
