"""What runs a schedule file: loading it, building its kernel, timing and tuning it, and what a
run keeps (in memory and on disk).

* :mod:`tilec.runtime.loader`: the schedule file loaded, its parameters checked and resolved;
* :mod:`tilec.runtime.session`: one run's caches, and the one road to the multicast derivation;
* :mod:`tilec.runtime.build`: the kernel plan, source and callable kernel of a loaded schedule;
* :mod:`tilec.runtime.autotune`: :func:`~tilec.runtime.autotune.space`,
  :func:`~tilec.runtime.autotune.measure`, :func:`~tilec.runtime.autotune.tune`;
* :mod:`tilec.runtime.records`: the SQLite file of tuned choices ``tilec gen`` reads back;
* :mod:`tilec.runtime.cache`: tilec's folder on disk; :mod:`tilec.runtime.progress`: bars.
"""
