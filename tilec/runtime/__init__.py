"""What runs on (or for) a GPU: building a schedule's kernel, timing it, tuning its parameters and
the records of what was tuned.

* :mod:`tilec.runtime.build`: the kernel plan and the callable kernel of a loaded schedule;
* :mod:`tilec.runtime.autotune`: :func:`~tilec.runtime.autotune.space`,
  :func:`~tilec.runtime.autotune.measure`, :func:`~tilec.runtime.autotune.tune`;
* :mod:`tilec.runtime.records`: the SQLite file of tuned choices ``tilec gen`` reads back.
"""
