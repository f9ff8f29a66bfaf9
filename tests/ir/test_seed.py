"""The seed schedule (examples/seed004_persistent_cluster.py) against the tile order of the
multicast discussion, written out independently in helpers.seed_tile:

    I    = i_rt * SMS + cidx * CLUSTER + rank
    i_bm = I / (CM*CN) / RN * CM + I % (CM*CN) / CN
    i_bn = I / (CM*CN) % RN * CN + I % CN,     RN = ceil(ceil(N/BN) / CN)

checked by enumerating every CTA of the persistent grid for concrete sizes."""

from __future__ import annotations

import pytest
import sympy

from tilec.runtime.loader import load_schedule
from tilec.ir import ParallelType, index_map, infer_launch

from .helpers import SEED, cdiv, seed_ctas, seed_tile, symbols_by_axis

BASE = dict(M=64, N=64, K=32, BM=16, BN=16, BK=16, CM=2, CN=1, SMS=6, CLUSTER=2)
PARAM_SETS = [
    BASE,                                                                  # all divisible
    BASE | dict(CN=2),
    BASE | dict(M=70, N=50, K=40, CM=2, CN=2),                             # ragged M, N, K
    BASE | dict(M=100, N=36, BM=32, BN=8, CM=1, CN=2, SMS=7, CLUSTER=1),   # CN does not divide tiles
    BASE | dict(M=90, N=100, BM=16, BN=32, CM=3, CN=2, SMS=8, CLUSTER=4),  # CM, CN both ragged
    BASE | dict(M=50, N=60, CM=2, CN=2, SMS=10, CLUSTER=4),                # SMS % CLUSTER != 0
    BASE | dict(M=1000, N=1000, K=64, BM=128, BN=64, BK=64, CM=2, CN=2, SMS=132, CLUSTER=2),
]


def _id(p: dict[str, int]) -> str:
    return "-".join(f"{k}{v}" for k, v in p.items() if BASE.get(k) != v) or "base"


def _cta_points(p: dict[str, int]):
    """(I, cta, substitution) for every CTA, with all non-grid loop indices at 0."""
    f = load_schedule(SEED, p).fusion
    im = index_map(f.c)
    sym = symbols_by_axis(im)
    zero = {s: 0 for name, s in sym.items() if name not in ("rt", "cluster", "rank")}
    for rt, cidx, rank in seed_ctas(p):
        point = {sym["rt"]: rt, sym["cluster"]: cidx, sym["rank"]: rank} | zero
        yield rt * p["SMS"] + cidx * p["CLUSTER"] + rank, (rt, cidx, rank), point, im


@pytest.mark.parametrize("p", PARAM_SETS, ids=_id)
def test_tile_row_and_column(p: dict[str, int]) -> None:
    n = 0
    for I, cta, point, im in _cta_points(p):  # noqa: E741
        m0 = int(im.logical["M"].xreplace(point))
        n0 = int(im.logical["N"].xreplace(point))
        assert m0 % p["BM"] == 0 and n0 % p["BN"] == 0, cta
        assert (m0 // p["BM"], n0 // p["BN"]) == seed_tile(I, p), cta
        n += 1
    assert n == len(seed_ctas(p)) > 0


@pytest.mark.parametrize("p", PARAM_SETS, ids=_id)
def test_alive_predicate_is_the_tile_grid(p: dict[str, int]) -> None:
    """Predicates at bulk indices 0 hold exactly for real CTAs whose tile is in the M x N grid."""
    tiles_m, tiles_n = cdiv(p["M"], p["BM"]), cdiv(p["N"], p["BN"])
    alive_tiles = []
    for I, (_, cidx, rank), point, im in _cta_points(p):  # noqa: E741
        got = all(bool(q.xreplace(point)) for q in im.predicates)
        i_bm, i_bn = seed_tile(I, p)
        real_cta = cidx * p["CLUSTER"] + rank < p["SMS"]  # a padded last cluster has no SM
        want = real_cta and i_bm < tiles_m and i_bn < tiles_n
        assert got == want, (I, cidx, rank)
        if want:
            alive_tiles.append((i_bm, i_bn))
    # and the alive CTAs cover each tile of the grid exactly once
    assert sorted(alive_tiles) == [(i, j) for i in range(tiles_m) for j in range(tiles_n)]


@pytest.mark.parametrize("p", [PARAM_SETS[0], PARAM_SETS[4], {}], ids=["base", "ragged", "defaults"])
def test_operand_tiles_share_cs_indices(p: dict[str, int]) -> None:
    f = load_schedule(SEED, p).fusion
    c, a, b = (index_map(v) for v in f.views())
    assert (c.broadcast, a.broadcast, b.broadcast) == (set(), {"N"}, {"M"})
    assert list(a.logical) == ["M", "K", "N"] and list(b.logical) == ["M", "K", "N"]
    for op in (a, b):
        for dim in "MNK":
            assert sympy.simplify(op.logical[dim] - c.logical[dim]) == 0, (op.view, dim)
    # C's Mma axes are the operands' TMA box (Bulk); the grid axes keep their binding
    ptypes = [[ax.ptype for ax in v.loop] for v in f.views()]
    P = ParallelType
    assert ptypes[0][1:] == [P.CIDx, P.RankX, P.SERIAL, P.Mma, P.Mma, P.Mma]
    assert ptypes[1][1:] == ptypes[2][1:] == [P.CIDx, P.RankX, P.SERIAL, P.Bulk, P.Bulk, P.Bulk]
    # the broadcast axis of each operand's box is marked broadcast in its loop domain
    assert [ax.is_broadcast for ax in f.a_smem.loop[4:]] == [False, True, False]
    assert [ax.is_broadcast for ax in f.b_smem.loop[4:]] == [True, False, False]


@pytest.mark.parametrize("p", PARAM_SETS[2:6], ids=_id)
def test_operand_predicates_are_the_tile_grid(p: dict[str, int]) -> None:
    """An operand tile's expanded broadcast stands for C's axis: A_smem and B_smem are alive at
    bulk indices 0 exactly for the CTAs whose C tile is inside the M x N tile grid."""
    f = load_schedule(SEED, p).fusion
    a, b = (index_map(v) for v in f.operands())
    tiles_m, tiles_n = cdiv(p["M"], p["BM"]), cdiv(p["N"], p["BN"])
    for I, (_, cidx, rank), point, _c in _cta_points(p):  # noqa: E741
        i_bm, i_bn = seed_tile(I, p)
        want = cidx * p["CLUSTER"] + rank < p["SMS"] and i_bm < tiles_m and i_bn < tiles_n
        for im in (a, b):
            at = {s: point[s] for s in im.symbols}  # same loop-index symbols as C
            assert all(bool(q.xreplace(at)) for q in im.predicates) == want, (im.view, I)


def test_operand_graph_links_m_n_k() -> None:
    f = load_schedule(SEED, {}).fusion
    dims = f.dims()
    assert dims["M"] >= {("A", "M"), ("C", "M"), ("A_smem", "M"), ("B_smem", "M")}
    assert dims["N"] >= {("B", "N"), ("C", "N"), ("A_smem", "N"), ("B_smem", "N")}
    assert dims["K"] >= {("A", "K"), ("B", "K"), ("C", "K")}
    assert not dims["M"] & dims["N"]


@pytest.mark.parametrize("sms,cluster", [(132, 2), (132, 4), (128, 8), (114, 1), (8, 8)])
def test_seed_launch(sms: int, cluster: int) -> None:
    f = load_schedule(SEED, {"SMS": sms, "CLUSTER": cluster}).fusion
    launch = infer_launch(f)
    assert launch.grid == (sms, 1, 1)
    assert launch.cluster == (cluster, 1, 1)
    assert launch.block == (1, 1, 1)
    assert launch.requirements == ()


def test_seed_launch_rounds_a_ragged_grid_up_to_whole_clusters() -> None:
    launch = infer_launch(load_schedule(SEED, {"SMS": 10, "CLUSTER": 4}).fusion)
    assert launch.grid == (12, 1, 1) and launch.cluster == (4, 1, 1)


def test_seed_launch_symbolic_sizes() -> None:
    launch = infer_launch(load_schedule(SEED, {"M": "M", "N": "N", "K": "K"}).fusion)
    assert launch.grid == (132, 1, 1) and launch.cluster == (2, 1, 1)
