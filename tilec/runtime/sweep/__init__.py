"""``tilec sweep``: tune a schedule over many shapes on every GPU at hand and picture the result
(the study of seed 001 at scale). docs/sweep.md tells the whole story.

* :mod:`tilec.runtime.sweep.shapes`: the shapes (a file or a grid);
* :mod:`tilec.runtime.sweep.run`: the driver, :func:`~tilec.runtime.sweep.run.run_sweep`;
* :mod:`tilec.runtime.sweep.worker`: what a worker does with one task (shared by both pools);
* :mod:`tilec.runtime.sweep.pool`: one process per GPU of this host; :mod:`tilec.runtime.sweep.ray_pool`: Ray;
* :mod:`tilec.runtime.sweep.store`: the SQLite results file, one row per (shape, config);
* :mod:`tilec.runtime.sweep.summary`, :mod:`tilec.runtime.sweep.plot`: the seed's numbers and its map;
* :mod:`tilec.runtime.sweep.model`: the cost model in place of a GPU (``--model``, tests);
* :mod:`tilec.runtime.rules`: the rules file ``--export`` writes and ``tilec gen --rules`` reads.
"""
