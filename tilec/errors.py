"""Errors tilec raises.

Two kinds, as in nvFuser (NVF_CHECK vs NVF_ERROR) and Halide (user vs internal errors):

* :class:`TilecError` and its subclasses: the user asked for something tilec cannot do. The message
  names the tensor, the axis and the value, and says what was expected. The CLI prints it as one
  line and exits with status 2.
* :class:`InternalError` (and plain ``assert``): a broken invariant inside tilec, a bug.

The full catalogue, with one example message each, is docs/errors.md.
"""

from __future__ import annotations


class TilecError(Exception):
    """Base of every error a user can cause."""


class ScheduleError(TilecError):
    """A scheduling primitive was called with arguments it cannot take (axis, factor, mapping)."""


class AxisError(ScheduleError):
    """An axis position is out of range for the view's loop domain."""


class SplitFactorError(ScheduleError):
    """A split factor is not a positive integer (or a positive symbol)."""


class MergeError(ScheduleError):
    """Two axes cannot be merged (e.g. a reduction with an iteration axis)."""


class ReorderError(ScheduleError):
    """A reorder mapping is not a permutation of the loop domain."""


class ParallelizeError(ScheduleError):
    """An axis cannot take a parallel type (a broadcast bound to a type that launches work)."""


class LaunchError(TilecError):
    """The bound axes do not give one consistent, launchable grid / cluster / block."""


class FusionError(TilecError):
    """The GEMM fusion was built with bad sizes, dtypes or layouts."""


class ParamError(TilecError):
    """A schedule parameter (``--param NAME=VALUE``) is unknown or malformed."""


class UnsupportedError(TilecError):
    """A backend refuses a plan feature it cannot print (never silently dropped)."""


class InternalError(Exception):
    """A tilec invariant was broken: a bug, not a user mistake."""
