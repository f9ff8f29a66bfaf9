"""The CUDA sm_90a backend: the printer of a KernelPlan (:mod:`.printer`), its index expressions
(:mod:`.expr`), the build and launch of the kernels (:mod:`.launch`, :mod:`.runtime`) and the
SIMT fp32 printer (:mod:`.simt`)."""
