"""tilec: a cluster of 17 CTAs."""

from __future__ import annotations

from tilec.errors import LaunchError

EXPECT = LaunchError, "cluster (17, 1, 1) (RankX at C axis 2 (iRankX.rank{17})) has 17 CTAs; a multicast mask addresses at most 16 (16-bit ctaMask)"
ARGV = ["masks", "{examples}/seed004_persistent_cluster.py", "--param", "CLUSTER=17"]
