"""The tuning knobs of a GEMM schedule and one point of their space: :data:`KNOBS`,
:class:`Config` (one value per knob), :func:`parse_knob` (a knob's value as a Config holds it),
and :class:`Source` (where a resolved value came from).  The heuristic
(:mod:`tilec.transforms.heuristic`) chooses them; rules files, tuned records and the built
library store them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from tilec.errors import ParamError
from tilec.ir.types import (
    MAX_CLUSTER,  # CTAs a multicast mask addresses (more than 8: non-portable)
)
from tilec.policy import PolicyEnum
from tilec.transforms.plan import Decomposition, Fixup, LoadKind

__all__ = ["AUTO", "DEFERRED", "FLAGS", "KNOBS", "LATER_KNOBS", "Config", "Source",
           "parse_knob"]

AUTO = "auto"
KNOBS = ("BM", "BN", "BK", "GROUP_M", "DECOMP", "SPLITS", "SK_WAVES", "FIXUP", "STAGES", "WARPS",
         "LOAD", "SWAP_AB", "CM", "CN")
# knobs added after rules files and tuned records were first written, with the value such a
# record meant by leaving them out (no cluster, no swapped operands)
LATER_KNOBS: Mapping[str, Any] = {"CM": 1, "CN": 1, "SWAP_AB": 0}
# 0/1 knobs (SWAP_AB: the CUDA kernel computes each tile as C^T = B^T A^T, our M on wgmma's N)
FLAGS = frozenset({"SWAP_AB"})
DEFERRED = frozenset({"LOAD"})  # knobs the heuristic may leave "auto": lowering decides them
_ENUMS: dict[str, type[PolicyEnum]] = {"DECOMP": Decomposition, "FIXUP": Fixup, "LOAD": LoadKind}


class Source(PolicyEnum, label="parameter source"):
    """Where a parameter's value came from."""

    USER = "user"  # given by the user: the file's PARAMS, --param, --params-file
    TUNED = "tuned"  # a `tilec tune` record of this schedule at this shape
    RULES = "rules"  # a rules file (`tilec sweep --export`)
    HEURISTIC = "heuristic"  # shape rules + the decomposition cost model


@dataclass(frozen=True)
class Config:
    """One value per knob: a point of the tuning space.

    ``LOAD=None`` leaves the load kind to lowering (TMA where the strides allow it).
    ``SWAP_AB=1``: the CUDA kernel's swapped operands (``set_kernel(swap_ab=True)``: our N on
    wgmma's M, our M on its N, so BM is any multiple of 8); the heuristic leaves it 0.
    """

    BM: int = 128
    BN: int = 256
    BK: int = 64
    GROUP_M: int = 8
    DECOMP: Decomposition = Decomposition.DATA_PARALLEL
    SPLITS: int = 1
    SK_WAVES: int = 1
    FIXUP: Fixup = Fixup.DETERMINISTIC
    STAGES: int = 3
    WARPS: int = 8
    LOAD: LoadKind | None = None
    SWAP_AB: int = 0
    CM: int = 1
    CN: int = 1

    def params(self) -> dict[str, Any]:
        """The schedule parameters this config sets (enums as their strings)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = AUTO if v is None else (v.value if isinstance(v, PolicyEnum) else v)
        return out

    def short(self) -> str:
        """``128x256x64 g8 dp s3 w8`` (decomposition numbers and fix-up only where they count;
        the cluster, `` c2x1``, only where there is one; `` swap`` only with SWAP_AB=1)."""
        d = self.DECOMP.value
        if self.DECOMP is Decomposition.SPLIT_K:
            d += str(self.SPLITS)
        if self.DECOMP is Decomposition.STREAM_K_PP:
            d += f"w{self.SK_WAVES}"
        if self.DECOMP is not Decomposition.DATA_PARALLEL:
            d += f" {self.FIXUP.value}"
        load = f" {self.LOAD.value}" if self.LOAD is not None else ""
        cluster = f" c{self.CM}x{self.CN}" if (self.CM, self.CN) != (1, 1) else ""
        swap = " swap" if self.SWAP_AB else ""
        return (f"{self.BM}x{self.BN}x{self.BK} g{self.GROUP_M} {d} s{self.STAGES} w{self.WARPS}"
                f"{load}{swap}{cluster}")


def parse_knob(name: str, value: Any) -> Any:
    """A knob's value as :class:`Config` holds it (``"auto"`` stays ``"auto"``).

    >>> parse_knob("DECOMP", "SplitK"), parse_knob("BM", "auto"), parse_knob("CM", 2)
    (<Decomposition.SPLIT_K: 'splitk'>, 'auto', 2)
    >>> parse_knob("SWAP_AB", 0), parse_knob("SWAP_AB", True)
    (0, 1)
    """
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    enum = _ENUMS.get(name)
    if enum is not None:
        return enum.parse(value, extra=(AUTO,))
    if name in FLAGS:
        if value not in (0, 1):  # (True and False too)
            raise ParamError(f"parameter {name} must be 0, 1 or 'auto' but got {value!r}")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        if name in ("SK_WAVES",) and value == 0:
            return 0
        raise ParamError(f"parameter {name} must be a positive integer or 'auto' but got {value!r}")
    if name in ("CM", "CN") and value > MAX_CLUSTER:
        raise ParamError(f"parameter {name} must be at most {MAX_CLUSTER} (a cluster has at most "
                         f"{MAX_CLUSTER} CTAs) or 'auto' but got {value}")
    return value
