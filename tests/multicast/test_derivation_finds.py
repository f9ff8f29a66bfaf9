"""The derivation finds non-sharing by itself: CTAs of a cluster at different K offsets never
share, and a DP schedule clustered with set_cluster shares along the right operand."""

from __future__ import annotations

import pytest

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P
from tilec.transforms.multicast.derive import derive


def split_k_cluster(M=256, N=512, K=1024, BM=64, BN=64, BK=64, S=2):
    """The S split-K partners of one C tile form the cluster (RankX on the K split)."""
    f = GemmFusion(M, N, K, dtype="fp16")
    c = f.c
    c.split(0, BM).split(2, BN).split(4, BK)          # [Mo, Mi, No, Ni, rKo, rKi]
    c.split(4, S, inner=False, names=("Ks", "Kr"))   # [Mo, Mi, No, Ni, rKs, rKr, rKi]
    c.reorder([0, 2, 4, 5, 1, 3, 6])                  # [Mo, No, rKs, rKr, Mi, Ni, rKi]
    c.parallelize(0, P.BIDy).parallelize(1, P.CIDx).parallelize(2, P.RankX)
    c.parallelize(4, P.Mma).parallelize(5, P.Mma).parallelize(6, P.Mma)
    f.propagate()
    return f


@pytest.mark.parametrize("S", [2, 4])
def test_split_k_partners_never_share(S):
    d = derive(split_k_cluster(S=S), "leader", params={})
    assert d.cluster_size == S
    for name in ("A", "B"):
        op = d.operands[name]
        assert op.table, name
        for row in op.table:
            # every CTA loads its own K range: it issues, and its mask is itself alone
            assert row.alive and row.issue, (name, row)
            assert row.mask == 1 << row.point["rank"], (name, row)


def dp_clustered(M=512, N=512, K=128, BM=64, BN=64, BK=64, CX=2):
    """Tile rows on blockIdx.y, columns on blockIdx.x, clusters of CX along x (set_cluster)."""
    f = GemmFusion(M, N, K, dtype="fp16")
    c = f.c
    c.split(0, BM).split(2, BN).split(4, BK).reorder([0, 2, 4, 1, 3, 5])
    c.parallelize(0, P.BIDy).parallelize(1, P.BIDx)
    c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    f.set_cluster(CX)
    f.propagate()
    return f


@pytest.mark.parametrize("CX", [2, 4])
def test_set_cluster_along_x_shares_A_not_B(CX):
    d = derive(dp_clustered(CX=CX), "leader", params={})
    full = (1 << CX) - 1
    for row in d.operands["A"].table:  # same tile row: every CTA of the cluster shares A
        assert row.mask == full and row.issue == (row.point["rank"] == 0), row
    for row in d.operands["B"].table:  # different tile columns: nobody shares B
        assert row.mask == 1 << row.point["rank"] and row.issue, row


def test_guard_is_the_conjunction_of_the_facts():
    """The run-time guard of a closed form holds at the parameters it was derived at and fails
    where one of its divisibility facts fails (SMS not a multiple of the cluster)."""
    from pathlib import Path

    import sympy

    from tilec.runtime.session import derive_from_file

    seed = Path(__file__).resolve().parents[2] / "examples" / "seed004_persistent_cluster.py"
    params = dict(M=8192, N=8192, BM=128, BN=256, CM=2, CN=2, SMS=128, CLUSTER=4)
    d = derive_from_file(seed, {"CN": 2, "CLUSTER": 4, "SMS": 128})
    for name, op in d.operands.items():
        assert op.closed_form, (name, op.notes)
        assert "SMS % CLUSTER == 0" in map(str, op.facts), (name, op.facts)
        at = {s: params[str(s)] for s in op.guard.free_symbols}
        assert op.guard.xreplace(at) is sympy.true, name
        assert op.guard.xreplace({**at, **{s: 130 for s in at if str(s) == "SMS"}}) is sympy.false
