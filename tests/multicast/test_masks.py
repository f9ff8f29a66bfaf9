"""Multicast masks against an independent brute force of the seed schedule's tile assignment.

The oracle enumerates tiles straight from M, N, BM, BN, CM, CN, SMS and CLUSTER (mixed-radix digits
of the linear tile index), never through tilec's index maps; then it simulates the TMA loads the
derived table asks for and checks who receives what.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sympy
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tilec.proofs.evaluate import compile_int
from tilec.runtime.session import derive_from_file

SEED = Path(__file__).resolve().parents[2] / "examples" / "seed004_persistent_cluster.py"
MANY = int(os.environ.get("TILEC_HYPOTHESIS_EXAMPLES", "0"))
# each example derives a whole launch: report the failing example as drawn, do not shrink it
NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]


def grouped(pid, rows, cols, group):
    """Triton's grouped raster (the matmul tutorial): ``group`` rows walked column by column,
    the last band as many rows as are left."""
    band, within = divmod(pid, group * cols)
    first = band * group
    size = min(rows - first, group)
    return first + within % size, within // size


def oracle(M, N, BM, BN, CM, CN, SMS, CLUSTER, GROUP=None):
    """{(i_rt, cidx, rank): (tile_m, tile_n) or None if dead}, for every CTA of the launch;
    ``GROUP``: the cluster groups in a grouped raster (the seed's ORDER="grouped")."""
    tiles_m, tiles_n = -(-M // BM), -(-N // BN)
    RM, RN = -(-tiles_m // CM), -(-tiles_n // CN)
    total = RM * RN * CM * CN
    ctas = -(-SMS // CLUSTER) * CLUSTER
    rounds = -(-total // SMS)
    out = {}
    for i_rt in range(rounds):
        for sms in range(ctas):
            cidx, rank = divmod(sms, CLUSTER)
            idx = i_rt * SMS + sms
            cn, rest = idx % CN, idx // CN
            cm, rest = rest % CM, rest // CM
            rn, rm = rest % RN, rest // RN
            if GROUP is not None and idx < total:
                rm, rn = grouped(rest, RM, RN, GROUP)
            tm, tn = rm * CM + cm, rn * CN + cn
            alive = sms < SMS and idx < total and tm < tiles_m and tn < tiles_n
            out[(i_rt, cidx, rank)] = (tm, tn) if alive else None
    return out


def check_delivery(table, tiles, operand, mode, cluster):
    """Every alive CTA gets each byte of its box once, from CTAs loading that box; dead get none."""
    box_of = (lambda t: t[0]) if operand == "A" else (lambda t: t[1])
    by_group: dict[tuple[int, ...], list[dict]] = {}
    for row in table:
        by_group.setdefault((row["i_rt"], row["cidx"]), []).append(row)
    for (i_rt, cidx), rows in by_group.items():
        received: dict[int, list[tuple[int, int, int]]] = {r: [] for r in range(cluster)}
        for row in rows:
            rank = row["rank"]
            assert row["alive"] == (tiles[(i_rt, cidx, rank)] is not None), row
            if not row["issue"]:
                continue
            assert row["alive"], f"dead CTA issues: {row}"
            mask = row["mask"]
            assert mask >> rank & 1, f"issuer {rank} not in its own mask {mask:b}"
            if mode == "sliced":
                assert row["slice_count"] == bin(mask).count("1"), row
            n = row["slice_count"] if mode == "sliced" else 1
            k = row["slice_index"] if mode == "sliced" else 0
            for dst in range(cluster):
                if mask >> dst & 1:
                    received[dst].append((box_of(tiles[(i_rt, cidx, rank)]), k, n))
        for rank in range(cluster):
            tile = tiles[(i_rt, cidx, rank)]
            got = received[rank]
            if tile is None:
                assert not got, f"dead CTA {rank} at {(i_rt, cidx)} receives {got}"
                continue
            assert got, f"alive CTA {rank} at {(i_rt, cidx)} receives nothing"
            assert all(box == box_of(tile) for box, _, _ in got), (rank, tile, got)
            counts = {n for _, _, n in got}
            assert len(counts) == 1, got
            (n,) = counts
            assert sorted(k for _, k, _ in got) == list(range(n)), f"slices {got} at {rank}"


def sharing_groups(tiles, operand, i_rt, cidx, cluster):
    box_of = (lambda t: t[0]) if operand == "A" else (lambda t: t[1])
    groups: dict[int, set[int]] = {}
    for r in range(cluster):
        t = tiles[(i_rt, cidx, r)]
        groups[r] = {q for q in range(cluster) if t is not None and tiles[(i_rt, cidx, q)]
                     is not None and box_of(tiles[(i_rt, cidx, q)]) == box_of(t)}
    return groups


params_st = st.fixed_dictionaries({
    "M": st.integers(1, 700), "N": st.integers(1, 700),
    "BM": st.sampled_from([32, 64, 128]), "BN": st.sampled_from([32, 64, 128]),
    "CM": st.integers(1, 4), "CN": st.integers(1, 4),
    "CLUSTER": st.integers(1, 16),
    "SMS_MUL": st.integers(1, 6), "SMS_EXTRA": st.integers(0, 3),
})


def _params(p):
    q = dict(p)
    q["SMS"] = q.pop("SMS_MUL") * q["CLUSTER"] + q.pop("SMS_EXTRA")
    q["K"] = 64
    return q


def _run(q, mode, closed):
    d = derive_from_file(SEED, q, mode=mode, closed=closed)
    data = d.to_json()
    tiles = oracle(q["M"], q["N"], q["BM"], q["BN"], q["CM"], q["CN"], q["SMS"], q["CLUSTER"],
                   q["GROUP"] if q.get("ORDER") == "grouped" else None)
    for name in ("A", "B"):
        table = data["operands"][name]["table"]
        keys = {(r["i_rt"], r["cidx"], r["rank"]) for r in table}
        assert keys == set(tiles), "the table must cover every CTA of every round"
        check_delivery(table, tiles, name, mode, q["CLUSTER"])
        # leader/sliced general forms share maximally: masks are exactly the sharing groups
        for row in table:
            if row["alive"]:
                group = sharing_groups(tiles, name, row["i_rt"], row["cidx"], q["CLUSTER"])[row["rank"]]
                assert row["mask"] == sum(1 << g for g in group), (name, row)
    return d, data, tiles


@pytest.mark.parametrize("mode", ["leader", "sliced"])
@settings(max_examples=max(MANY, 1000), deadline=None, suppress_health_check=list(HealthCheck),
          phases=NO_SHRINK)
@given(p=params_st)
def test_general_form_delivers_every_box_once(p, mode):
    q = _params(p)
    if q["CLUSTER"] == 1:
        return
    _run(q, mode, closed=False)


def _eval_json(op_json, table, params):
    """Evaluate the JSON expressions (as sympify reads them) at every table row."""
    names = ["rank", *[v for v in op_json["variables"] if v != "rank"]]
    syms = {n: sympy.Symbol(n, integer=True, nonnegative=True) for n in names}
    psyms = {k: sympy.Symbol(k, integer=True, positive=True) for k, v in params.items()
             if isinstance(v, int)}
    local = {**syms, **psyms}
    exprs = [sympy.sympify(op_json[k], locals=local) for k in ("issue_predicate", "mask")]
    fn = compile_int(exprs, [syms[n] for n in names] + list(psyms.values()))
    pv = [params[k] for k in psyms]
    for row in table:
        issue, mask = fn(*[row[n] for n in names], *pv)
        yield row, bool(issue), int(mask)


@settings(max_examples=max(MANY // 10, 40), deadline=None, suppress_health_check=list(HealthCheck),
          phases=NO_SHRINK)
@given(p=params_st, mode=st.sampled_from(["leader", "sliced"]))
def test_closed_form_equals_general_form(p, mode):
    q = _params(p)
    if q["CLUSTER"] == 1:
        return
    _, data, _ = _run(q, mode, closed=True)
    for name in ("A", "B"):
        op = data["operands"][name]
        if not op["closed_form"]:
            continue
        for row, issue, mask in _eval_json(op, op["table"], q):
            assert (issue, mask) == (row["issue"], row["mask"]), (name, row, op["issue_predicate"])


@pytest.mark.parametrize("CM,CN", [(1, 2), (2, 1), (2, 2), (1, 4), (4, 1)])
def test_fully_divisible_closed_form_shares_every_pair(CM, CN):
    q = dict(M=128 * CM * 3, N=64 * CN * 5, K=64, BM=128, BN=64, CM=CM, CN=CN,
             CLUSTER=CM * CN, SMS=CM * CN * 4)
    d, data, tiles = _run(q, "leader", closed=True)
    for name in ("A", "B"):
        op = data["operands"][name]
        assert op["closed_form"], (name, d.operands[name].notes)
        for row, _issue, mask in _eval_json(op, op["table"], q):
            group = sharing_groups(tiles, name, row["i_rt"], row["cidx"], q["CLUSTER"])[row["rank"]]
            assert mask == sum(1 << g for g in group)


def test_seed_closed_form_for_A_matches_the_corrected_text():
    """A: issue iff rank % CN == 0, mask ((1 << CN) - 1) << (CN * (rank // CN))."""
    q = dict(M=1024, N=2048, K=64, BM=128, BN=256, CM=1, CN=4, CLUSTER=4, SMS=132)
    d = derive_from_file(SEED, q)
    op = d.operands["A"]
    assert op.closed_form
    assert any("CN" in str(f) and "SMS" in str(f) for f in op.facts)
    theorems = [s["theorem"] for s in op.proof]
    assert "2.15.1" in theorems
    for row in op.table:
        if row.alive:
            r = row.point["rank"]
            assert row.issue == (r % 4 == 0)
            assert row.mask == ((1 << 4) - 1) << (4 * (r // 4))


@settings(max_examples=max(MANY // 10, 60), deadline=None, suppress_health_check=list(HealthCheck),
          phases=NO_SHRINK)
@given(p=params_st, group=st.integers(1, 5), mode=st.sampled_from(["leader", "sliced"]),
       closed=st.booleans())
def test_grouped_order_delivers_every_box_once(p, group, mode, closed):
    # the grouped raster's last band is short (a Min), and padded tiles past it divide by a
    # band of zero or fewer rows: the table and the closed forms read the origin only where alive
    q = {**_params(p), "ORDER": "grouped", "GROUP": group}
    if q["CLUSTER"] == 1:
        return
    _run(q, mode, closed=closed)


def test_grouped_order_with_a_padded_last_round():
    # the seed at its own size: 2048 tiles over 16 rounds of 132 CTAs, 64 padded
    q = dict(M=8192, N=8192, K=64, BM=128, BN=256, CM=2, CN=1, CLUSTER=2, SMS=132,
             ORDER="grouped", GROUP=8)
    _, _, tiles = _run(q, "leader", closed=True)
    assert sum(v is None for v in tiles.values()) == 16 * 132 - 2048


def test_dead_ctas_never_issue_and_are_in_no_mask():
    q = dict(M=300, N=500, K=64, BM=64, BN=64, CM=2, CN=2, CLUSTER=4, SMS=12)
    _, data, tiles = _run(q, "leader", closed=True)
    dead = {k for k, v in tiles.items() if v is None}
    assert dead, "the case must have a partial last round"
    for name in ("A", "B"):
        for row in data["operands"][name]["table"]:
            if (row["i_rt"], row["cidx"], row["rank"]) in dead:
                assert not row["issue"]
            for other in data["operands"][name]["table"]:
                same_point = (other["i_rt"], other["cidx"]) == (row["i_rt"], row["cidx"])
                if same_point and other["issue"] and (row["i_rt"], row["cidx"], row["rank"]) in dead:
                    assert not other["mask"] >> row["rank"] & 1


def test_a_cluster_of_one_is_the_trivial_table():
    d = derive_from_file(SEED, dict(CLUSTER=1, CM=1, SMS=6, M=512, N=512))
    tiles = oracle(512, 512, 128, 256, 1, 1, 6, 1)
    assert d.cluster_size == 1
    for op in d.operands.values():
        assert op.closed_form
        assert {(r.point["i_rt"], r.point["cidx"], r.point["rank"]) for r in op.table} == set(tiles)
        for row in op.table:
            live = tiles[(row.point["i_rt"], row.point["cidx"], 0)] is not None
            assert (row.alive, row.issue, row.mask) == (live, live, int(live))


def test_more_than_16_ctas_is_refused():
    from tilec.errors import LaunchError

    with pytest.raises(LaunchError, match="17 CTAs"):
        derive_from_file(SEED, dict(CLUSTER=17, SMS=34))
