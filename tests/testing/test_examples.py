"""tilec.testing as a kernel engineer uses it: ``@given`` tests of the examples' masks against
the brute force, both modes, at drawn launches (the cluster shape kept)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings

from tilec.testing import check, params

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed004_persistent_cluster.py")
GROUPED = str(ROOT / "examples" / "grouped_raster.py")
FEW = settings(max_examples=6, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow])


@FEW
@given(p=params(SEED, fixed={"CLUSTER": 2, "CM": 2, "CN": 1}, max_size=48))
def test_seed_order_cluster_of_2(p: dict) -> None:
    check(SEED, p)


@FEW
@given(p=params(SEED, fixed={"CLUSTER": 4, "CM": 2, "CN": 2}, facts=["SMS % CLUSTER == 0"],
                max_size=48))
def test_seed_order_cluster_of_2x2(p: dict) -> None:
    check(SEED, p)


@FEW
@given(p=params(GROUPED, cluster=(2, 1, 1), max_size=48))
def test_grouped_raster_in_clusters_of_2(p: dict) -> None:
    """The grouped raster leaves the cluster to the launch: tested under set_cluster(2)."""
    check(GROUPED, p, cluster=(2, 1, 1))
