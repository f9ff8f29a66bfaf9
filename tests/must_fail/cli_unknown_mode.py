"""tilec: an unknown --mode."""

from __future__ import annotations

EXPECT = "usage", "argument --mode: invalid choice: 'broadcast' (choose from 'leader', 'sliced')"
ARGV = ["masks", "{examples}/seed004_persistent_cluster.py", "--mode", "broadcast"]
