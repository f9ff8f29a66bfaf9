"""Built libraries: a schedule as a standalone Python module serving every shape.

``tilec build SCHEDULE -o mygemm.py`` (:mod:`tilec.app.commands.build`) writes a module with
``matmul(a, b, out=None)`` for any M, N, K, a torch custom op for torch.compile and CUDA graphs,
``explain(M, N, K)`` and ``stats()``; docs/library.md is the guide.

* :mod:`tilec.library.table`: the dispatch table (shape buckets and exact shapes -> configs,
  resolved in gen's order at build time);
* :mod:`tilec.library.build`: the kernels of the configs and the module's text;
* :mod:`tilec.library.checks`, :mod:`tilec.library.runtime`: the run-time code copied into the
  module (input checks and operands; dispatch, compile cache, explain, stats, the custom op).
"""

from tilec.library.build import BuildError, Library, build_library, module_text

__all__ = ["BuildError", "Library", "build_library", "module_text"]
