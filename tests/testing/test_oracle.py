"""The oracle of tilec.testing: its brute force against hand-computed sharing, and its power to
fail: a wrong mask, issue, slice or table row, a crash of the derivation, and a closed form taken
to a launch where it does not hold are each caught and named."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sympy

import tilec.testing.launch as launch
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P
from tilec.proofs import Fact, FactKind
from tilec.testing import MaskMismatch, brute_force, check, derive_at, expected, oracle
from tilec.testing.brute import compare, delivers

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed004_persistent_cluster.py")
GROUPED = str(ROOT / "examples" / "grouped_raster.py")
SMALL = dict(M=40, N=48, K=16, BM=8, BN=8, BK=8, SMS=6)  # B shared, then not (general form)
RANK = sympy.Symbol("rank", integer=True, nonnegative=True)


def grid2d(cx: int, cy: int) -> GemmFusion:
    """Tile rows on blockIdx.y, columns on blockIdx.x, clusters of cx x cy."""
    f = GemmFusion(M=8 * cy * 2, N=8 * cx * 3, K=16, dtype="fp16")
    f.c.split(0, 8).split(2, 8).split(4, 8).reorder([0, 2, 4, 1, 3, 5])
    f.c.parallelize(0, P.BIDy).parallelize(1, P.BIDx)
    f.c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    f.set_cluster(cx, cy)
    f.propagate()
    return f


@pytest.mark.parametrize("cx,cy", [(2, 2), (4, 1), (1, 4), (2, 4)])
def test_brute_force_by_hand(cx: int, cy: int) -> None:
    """A is shared along x (one tile row), B along y (one tile column): rank = x + cx*y."""
    f = grid2d(cx, cy)
    for name in ("A", "B"):
        truth = brute_force(f, name)
        assert truth.cluster_size == cx * cy and truth.points
        for _, origins in truth.points:
            for r, want in enumerate(expected(origins, "leader")):
                x, y = r % cx, r // cx
                group = [q for q in range(cx * cy) if (q // cx == y if name == "A" else q % cx == x)]
                assert want.mask == sum(1 << q for q in group), (name, r)
                assert want.issue == (r == group[0])
            sliced = expected(origins, "sliced")
            assert sorted(w.slice_index for w in sliced if w.mask == sliced[0].mask) == list(
                range(sliced[0].slice_count))


def test_dead_ctas_of_a_ragged_last_wave() -> None:
    """Seed order at M=40 (5 tile rows, CM=2): the last wave's padded tiles are dead."""
    d = derive_at(SEED, SMALL, "leader")
    truth = launch.truth_at(SEED, SMALL, "A")
    dead = [(p, r) for p, o in truth.points for r, x in enumerate(o) if x is None]
    assert dead
    rows = {tuple(sorted(r.point.items())): r for r in d.operands["A"].table}
    for p, r in dead:
        row = rows[tuple(sorted({**{k: v for k, v in p.items() if k != "i_Ko"}, "rank": r}.items()))]
        assert not row.alive and not row.issue and row.mask == 0


def _with_forms(op, **forms):
    return dataclasses.replace(op, closed=dataclasses.replace(op.closed, **forms))


def test_tilec_agrees_at_a_small_seed_launch() -> None:
    r = check(SEED, SMALL)
    assert r.ok and len(r.verdicts) == 4
    assert {v.form for v in r.verdicts if v.operand == "B"} == {"general"}


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_a_wrong_mask_is_caught(mode: str) -> None:
    """Row-major tiles, clusters of 2: both CTAs of a cluster share A (one tile row); a mask of
    the rank's own bit only is caught, and named unsound where a CTA would miss its box."""
    p = dict(M=16, N=32, K=16, BM=8, BN=16, BK=8, GROUP_M=1)
    d = derive_at(GROUPED, p, mode, (2, 1, 1))
    op = d.operands["A"]
    assert op.closed_form
    truth = launch.truth_at(GROUPED, p, "A", (2, 1, 1))
    full = launch.load(GROUPED, p, (2, 1, 1)).params
    assert compare(op, truth, full, mode) == []
    wrong = _with_forms(op, mask=2**RANK)
    found = compare(wrong, truth, full, mode, table=False)
    assert len(found) == 1 and found[0].field == "mask" and found[0].rank == 0
    assert found[0].got == 1 and found[0].want == 3
    assert not found[0].sound
    assert "A: FAIL at M=16, N=32" in str(found[0]) and "got mask 0b01 but needs 0b11" in str(
        found[0])
    if mode == "leader":
        # every CTA loading its own box is sound (a narrowing), but not what tilec claims
        narrow = compare(_with_forms(op, issue=sympy.true, mask=2**RANK), truth, full, mode,
                         table=False)
        assert narrow and narrow[0].sound and "sound, loses sharing" in str(narrow[0])
        # rank 1 issuing for both is sound (any member may lead) but not the lowest rank
        late = compare(_with_forms(op, issue=sympy.Eq(RANK, 1)), truth, full, mode, table=False)
        assert late[0].field == "issue" and late[0].sound
        nobody = compare(_with_forms(op, issue=sympy.false), truth, full, mode, table=False)
        assert nobody[0].field == "issue" and not nobody[0].sound
    else:
        swapped = compare(_with_forms(op, slice_index=1 - sympy.Mod(RANK, 2)), truth, full, mode,
                          table=False)
        assert swapped[0].field == "slice" and swapped[0].sound
        twice = compare(_with_forms(op, slice_index=sympy.Integer(0)), truth, full, mode,
                        table=False)
        assert twice[0].field == "slice" and not twice[0].sound


def test_a_wrong_table_row_is_caught() -> None:
    d = derive_at(SEED, SMALL, "leader")
    op = d.operands["B"]
    rows = list(op.table)
    i = next(i for i, r in enumerate(rows) if r.alive and r.mask == 3)
    rows[i] = rows[i]._replace(mask=1)
    truth = launch.truth_at(SEED, SMALL, "B")
    full = launch.load(SEED, SMALL).params
    found = compare(dataclasses.replace(op, table=tuple(rows)), truth, full, "leader")
    assert found and found[0].source == "table" and found[0].field == "mask"
    rows[i] = rows[i]._replace(mask=3, alive=False)
    found = compare(dataclasses.replace(op, table=tuple(rows)), truth, full, "leader")
    assert found[0].field == "alive"


def test_check_raises_with_the_launch_and_the_cta(monkeypatch: pytest.MonkeyPatch) -> None:
    p = dict(M=16, N=32, K=16, BM=8, BN=16, BK=8, GROUP_M=1)
    real = launch.derive_at

    def corrupted(path, params, mode="leader", cluster=None):
        d = real(path, params, mode, cluster)
        ops = dict(d.operands)
        ops["A"] = _with_forms(ops["A"], mask=2**RANK)
        return dataclasses.replace(d, operands=ops)

    monkeypatch.setattr(launch, "derive_at", corrupted)
    with pytest.raises(MaskMismatch, match=r"^A: FAIL at M=16, N=32, K=16, BM=8, BN=16, BK=8, "
                       r"GROUP_M=1: rank 0 got mask 0b01 but needs 0b11 \(closed form, leader"):
        check(GROUPED, p, mode="leader", cluster=(2, 1, 1))


def test_a_crash_of_the_derivation_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args, **kw):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(launch, "derive_at", crash)
    r = oracle(SEED, SMALL, mode="sliced")
    assert not r.ok and "tilec raised RecursionError" in str(r.mismatches[0])


def test_a_closed_form_taken_to_another_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28's example: a set_cluster(2) schedule with one tile column shares B between
    consecutive ranks; stated as proved under M % BM == 0 and N % BN == 0 (the facts printed for
    it then), at N=10 (5 columns) the facts hold and the form is wrong: the oracle finds it."""
    base = dict(M=24, N=2, K=8, BM=4, BN=2, BK=8, GROUP_M=1)
    other = {**base, "N": 10}
    op = derive_at(GROUPED, base, "leader", (2, 1, 1)).operands["B"]
    assert op.closed_form
    M, N, BM, BN = (sympy.Symbol(n, integer=True, positive=True) for n in ("M", "N", "BM", "BN"))
    claimed = dataclasses.replace(op, closed=dataclasses.replace(
        op.closed, facts=(Fact(FactKind.DIVISIBLE, M, BM), Fact(FactKind.DIVISIBLE, N, BN))))
    assert oracle(GROUPED, other, cluster=(2, 1, 1)).ok  # tilec is right at each launch
    monkeypatch.setattr(launch, "proved_forms", lambda *a: [claimed])
    r = oracle(GROUPED, other, cluster=(2, 1, 1), base=base, mode="leader")
    assert not r.ok and [v.operand for v in r.proved] == ["B"]
    m = r.mismatches[0]
    # (the derivation proves this form now, under facts that fail at N=10 such as
    # 2 % (GROUP_M*ceiling(N/BN)) == 0; the claimed facts above carry it there anyway)
    assert m.source.split(" form derived at ")[0] in ("launch", "proved")
    assert m.source.split(" form derived at ")[1].startswith("M=24 N=2") and m.params["N"] == 10
    assert m.field == "mask" and m.want == 1 and m.got != m.want and not m.sound
    monkeypatch.setattr(launch, "scope_of", lambda o: "narrowing")  # sound-only: still caught
    assert not oracle(GROUPED, other, cluster=(2, 1, 1), base=base, mode="leader").ok
    # where its facts fail it is not taken there
    assert oracle(GROUPED, {**other, "N": 11}, cluster=(2, 1, 1), base=base).proved == ()


def test_only_carried_scopes_go_to_other_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    base = dict(M=24, N=2, K=8, BM=4, BN=2, BK=8, GROUP_M=1)
    for scope, carried in (("launch", False), ("general", False), ("proved", True),
                           ("narrowing", True)):
        monkeypatch.setattr(launch, "scope_of", lambda o, s=scope: s)
        forms = launch.proved_forms(GROUPED, base, "leader", (2, 1, 1))
        assert (len(forms) == 2) is carried, scope


def test_scope_is_read_where_the_derivation_states_it() -> None:
    """A closed form without a stated scope counts as checked at its launch only."""
    op = derive_at(SEED, SMALL, "leader").operands["A"]
    assert op.closed_form
    assert launch.scope_of(op) == getattr(getattr(op, "scope", None) or getattr(
        op.closed, "scope", None), "value", "launch")
    assert launch.scope_of(dataclasses.replace(op, closed=None)) == "general"
    tagged = dataclasses.replace(op, closed=dataclasses.replace(op.closed))
    object.__setattr__(tagged.closed, "scope", "proved")
    assert launch.scope_of(tagged) == "proved"


def test_delivers_is_the_exactly_once_property() -> None:
    from tilec.testing.brute import Want

    origins = ((0,), (0,), None)
    ok = [Want(True, True, 3, 0, 2), Want(True, False, 3, 1, 2), Want(False, False, 0, 0, 0)]
    assert delivers(ok, origins, "leader")
    twice = [Want(True, True, 3, 0, 2), Want(True, True, 3, 1, 2), Want(False, False, 0, 0, 0)]
    assert not delivers(twice, origins, "leader") and delivers(twice, origins, "sliced")
    to_dead = [Want(True, True, 7, 0, 2), Want(True, False, 3, 1, 2), Want(False, False, 0, 0, 0)]
    assert not delivers(to_dead, origins, "leader")


def test_the_proved_grouped_form_holds_where_its_own_facts_do() -> None:
    """The same schedule's B form as tilec derives it (proved since swizzled orders are proved
    band by band): carried to other launches by its own facts it holds there, both modes, and at
    N=10 (5 tile columns) its fact 2 % (GROUP_M*ceiling(N/BN)) == 0 fails, so it is not taken."""
    base = dict(M=24, N=2, K=8, BM=4, BN=2, BK=8, GROUP_M=1)
    op = derive_at(GROUPED, base, "leader", (2, 1, 1)).operands["B"]
    assert op.closed_form
    for n in (2, 4, 10):
        for mode in ("leader", "sliced"):
            r = oracle(GROUPED, {**base, "N": n}, cluster=(2, 1, 1), base=base, mode=mode)
            assert r.ok, (n, mode, [str(m) for m in r.mismatches[:1]])
