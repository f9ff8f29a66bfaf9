"""Thread-level (SIMT fp32) schedules: lowering to a SimtPlan (:mod:`.lower`), the
CUTLASS block / warp / thread hierarchy written and read back (:mod:`.hierarchy`), coalescing
(:mod:`.coalescing`) and shared-memory bank analyses (:mod:`.banks`)."""
