"""The Triton backend: the printer of a KernelPlan (:mod:`.printer`) and its index expressions
(:mod:`.expr`)."""
