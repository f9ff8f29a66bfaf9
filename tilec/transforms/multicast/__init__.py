"""The TMA multicast derivation: per operand, which CTAs of a cluster share a tile, who issues
the load and its mask (:mod:`.derive`), and the closed forms (:mod:`.closed`)."""
