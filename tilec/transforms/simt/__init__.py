"""Thread-level (SIMT fp32) schedules: lowering to a SimtPlan (:mod:`.lower`), coalescing
(:mod:`.coalescing`) and shared-memory bank analyses (:mod:`.banks`)."""
