"""seed 004's persistent clustered walk from a schedule that cannot be built over symbols: it
needs integer sizes (as gemm_decomposition.py's clustered walk did at c1e8f94, whose
``fusion.decompose(splits=SPLITS)`` refused a symbolic SPLITS). ``tilec masks`` then derives
over this launch's numbers; tests/multicast/test_scope_over_numbers.py checks that no such form
is reported proved, and that the forms a kernel uses hold at other launches."""

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=320, N=384, K=64, BM=64, BN=64, BK=64, CM=2, CN=1, SMS=6, CLUSTER=2)


def schedule(M: int, N: int, K: int, BM: int, BN: int, BK: int, CM: int, CN: int, SMS: int,
             CLUSTER: int) -> GemmFusion:
    if not all(isinstance(v, int) for v in (M, N, K, BM, BN, BK, CM, CN, SMS, CLUSTER)):
        raise TypeError("this schedule takes integer parameters only")
    fusion = GemmFusion(M, N, K, dtype="fp16", b_layout="nk")
    c = fusion.c
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni"))
    c.split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])
    c.split(0, CM, names=("RM", "CM")).split(2, CN, names=("RN", "CN"))
    c.reorder([0, 2, 1, 3, 4, 5, 6, 7])
    c.merge(0).merge(0).merge(0)
    c.split(0, SMS, names=("rt", "sms"))
    c.split(1, CLUSTER, names=("cluster", "rank"))
    c.parallelize(1, P.CIDx).parallelize(2, P.RankX)
    c.parallelize(4, P.Mma).parallelize(5, P.Mma).parallelize(6, P.Mma)
    fusion.propagate()
    return fusion
