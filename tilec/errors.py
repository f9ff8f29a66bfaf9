"""Errors tilec raises.

Two kinds, as in nvFuser (NVF_CHECK vs NVF_ERROR) and Halide (user vs internal errors):

* :class:`TilecError` and its subclasses: the user asked for something tilec cannot do. The message
  names the tensor, the axis and the value, and says what was expected. The CLI prints it as one
  line and exits with status 2.
* :class:`InternalError` (and plain ``assert``): a broken invariant inside tilec, a bug.

Validation happens at the boundary (every public verb checks its arguments before it changes
anything), in the Triton frontend's style::

    >>> from tilec.ir import GemmFusion
    >>> GemmFusion(M=256, N=128, K=64).c.split(0, 64, names=("Mo",))
    Traceback (most recent call last):
    ...
    tilec.errors.AxisNameError: C: split: names of axis 0 must be two strings (outer, inner) but got ('Mo',)

The full catalogue, with one example message each, is docs/errors.md; tests/must_fail/ holds one
program per class of mistake.
"""

from __future__ import annotations


class TilecError(Exception):
    """Base of every error a user can cause."""


class ScheduleError(TilecError):
    """A scheduling primitive was called with arguments it cannot take (axis, factor, mapping).

    Raised as itself for an argument that fits none of the subclasses (``split``'s ``inner``
    flag that is not a bool)."""


class AxisError(ScheduleError):
    """An axis position is not an int or is out of range for the view's loop domain."""


class AxisNameError(ScheduleError):
    """An axis name is not an identifier, names come in the wrong number, or a new logical axis
    takes the name of one the view already has."""


class SplitFactorError(ScheduleError):
    """A split factor, swizzle group or broadcast extent is not a positive integer (or a positive
    integer symbol)."""


class MergeError(ScheduleError):
    """Two axes cannot be merged (e.g. a reduction with an iteration axis)."""


class ReorderError(ScheduleError):
    """A reorder mapping is not a permutation of the loop domain (or not a mapping at all)."""


class SwizzleError(ScheduleError):
    """Two axes cannot be swizzled (a reduction with an iteration axis)."""


class ParallelizeError(ScheduleError):
    """An axis cannot take a parallel type (a broadcast bound to a type that launches work)."""


class LaunchError(TilecError):
    """The bound axes do not give one consistent, launchable grid / cluster / block."""


class KernelArgumentError(TilecError, ValueError):
    """A built kernel called with arguments it cannot run on: the tensor, its shape and strides,
    and what is allowed (dtype, device, layout, TMA's 16-byte rows, mismatched K, overlap)."""


class FusionError(TilecError):
    """The GEMM fusion was built with bad sizes or options, or decomposed with bad numbers."""


class PolicyError(TilecError, ValueError):
    """A policy value (dtype, B layout, decomposition, fix-up, multicast mode, load kind, target)
    is not one of its enum's values. Also a ``ValueError``, what ``Enum(value)`` raised before."""


class ParamError(TilecError):
    """A schedule parameter (``--param NAME=VALUE``) is unknown, malformed, missing or of the
    wrong type."""


class ScheduleFileError(TilecError):
    """A schedule file cannot be used: it does not exist, does not import, raises, has no
    ``schedule`` function or a malformed ``PARAMS``, or ``schedule()`` returns no GemmFusion."""


class UnsupportedError(TilecError):
    """A backend refuses a plan feature it cannot print (never silently dropped)."""


class InternalError(Exception):
    """A tilec invariant was broken: a bug, not a user mistake."""
