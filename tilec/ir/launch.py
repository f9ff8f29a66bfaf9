"""Launch inference: grid, cluster and block dims from the bound axes, validated.

For each of x, y, z:

* ``BIDd`` bound: ``grid.d`` is its extent; a cluster along d (from :meth:`GemmFusion.set_cluster`)
  must divide it.
* ``CIDd`` and/or ``RankD`` bound: ``grid.d = extent(CIDd) * extent(RankD)``,
  ``cluster.d = extent(RankD)`` (BIDd = CIDd * clusterDim.d + RankD).  Binding BIDd as well is
  ambiguous and refused.
* ``TIDd`` bound: ``block.d`` is its extent.

One hardware index per view at most once; every view that binds a type binds the same extent; at
most 16 CTAs per cluster (a 16-bit multicast mask), at most 8 unless the fusion is marked
``non_portable_cluster``.

Example::

    >>> from tilec.ir import GemmFusion, ParallelType as P
    >>> f = GemmFusion(M=512, N=512, K=64)
    >>> _ = f.c.split(0, 128).split(2, 128).parallelize(0, P.BIDy).parallelize(2, P.BIDx)
    >>> infer_launch(f).grid
    (4, 4, 1)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from tilec.errors import LaunchError
from tilec.ir.fusion import GemmFusion
from tilec.ir.tensorview import TensorView
from tilec.ir.types import MAX_CLUSTER, PORTABLE_CLUSTER, ParallelType

_P = ParallelType
_BID = (_P.BIDx, _P.BIDy, _P.BIDz)
_CID = (_P.CIDx, _P.CIDy, _P.CIDz)
_RANK = (_P.RankX, _P.RankY, _P.RankZ)
_TID = (_P.TIDx, _P.TIDy, _P.TIDz)


@dataclass(frozen=True)
class LaunchDims:
    grid: tuple[sympy.Expr, sympy.Expr, sympy.Expr]
    cluster: tuple[int, int, int]
    block: tuple[sympy.Expr, sympy.Expr, sympy.Expr]
    bindings: dict[ParallelType, sympy.Expr]
    requirements: tuple[sympy.Boolean, ...] = ()  # must hold at launch (symbolic sizes)

    @property
    def cluster_size(self) -> int:
        x, y, z = self.cluster
        return x * y * z

    @property
    def num_ctas(self) -> sympy.Expr:
        x, y, z = self.grid
        return sympy.Mul(x, y, z)

    def __str__(self) -> str:
        g = ", ".join(str(v) for v in self.grid)
        c = ", ".join(str(v) for v in self.cluster)
        b = ", ".join(str(v) for v in self.block)
        text = f"grid=({g}) cluster=({c}) block=({b})"
        if self.requirements:
            text += " requires " + " & ".join(str(r) for r in self.requirements)
        return text


def _bindings(views: list[TensorView]) -> dict[ParallelType, tuple[sympy.Expr, str]]:
    found: dict[ParallelType, tuple[sympy.Expr, str]] = {}
    for v in views:
        seen: dict[ParallelType, int] = {}
        for pos, a in enumerate(v.loop):
            pt = a.ptype
            if not pt.is_hardware_index:
                continue
            if pt in seen:
                raise LaunchError(
                    f"{v.name}: {pt.name} is bound twice, to axis {seen[pt]} ({v.loop[seen[pt]]}) "
                    f"and axis {pos} ({a})"
                )
            seen[pt] = pos
            where = f"{v.name} axis {pos} ({a})"
            if pt in found and sympy.simplify(found[pt][0] - a.extent) != 0:
                raise LaunchError(
                    f"{pt.name} is bound to different extents: {found[pt][0]} at {found[pt][1]} "
                    f"but {a.extent} at {where}"
                )
            found.setdefault(pt, (a.extent, where))
    return found


def infer_launch(fusion: GemmFusion | list[TensorView], non_portable: bool | None = None) -> LaunchDims:
    """Grid / cluster / block dims of a fusion (or of a list of views), validated."""
    if non_portable is not None and not isinstance(non_portable, bool):
        raise LaunchError(f"infer_launch: non_portable must be True, False or None but got "
                          f"{non_portable!r}")
    if isinstance(fusion, list):
        if not all(isinstance(v, TensorView) for v in fusion):
            raise LaunchError(f"infer_launch takes a GemmFusion or a list of TensorViews but got "
                              f"a list holding {next(v for v in fusion if not isinstance(v, TensorView))!r}")
        views, explicit, np_flag = fusion, (1, 1, 1), bool(non_portable)
    elif isinstance(fusion, GemmFusion):
        views = fusion.views()
        explicit = fusion.cluster_dims
        np_flag = fusion.non_portable_cluster if non_portable is None else non_portable
    else:
        raise LaunchError(f"infer_launch takes a GemmFusion or a list of TensorViews but got "
                          f"{fusion!r}")
    found = _bindings(views)
    ext = {pt: e for pt, (e, _) in found.items()}
    grid: list[sympy.Expr] = []
    cluster: list[int] = []
    reqs: list[sympy.Boolean] = []
    for d in range(3):
        bid, cid, rank = _BID[d], _CID[d], _RANK[d]
        if bid in found and (cid in found or rank in found):
            other = cid if cid in found else rank
            raise LaunchError(
                f"{bid.name} ({found[bid][1]}) and {other.name} ({found[other][1]}) are both bound: "
                f"{bid.name} = {_CID[d].name} * clusterDim + {_RANK[d].name}; bind one or the other"
            )
        if cid in found or rank in found:
            c = ext.get(rank, sympy.Integer(1))
            if not c.is_Integer:
                raise LaunchError(f"{rank.name} ({found[rank][1]}) must have a constant extent but got {c}")
            if explicit[d] not in (1, int(c)):
                bound = (f"{rank.name} is bound to extent {c} ({found[rank][1]})" if rank in found
                         else f"{rank.name} is not bound, so it is 1 ({cid.name} at {found[cid][1]})")
                raise LaunchError(f"cluster dim {'xyz'[d]} is set to {explicit[d]} but {bound}")
            grid.append(ext.get(cid, sympy.Integer(1)) * c)
            cluster.append(int(c))
        else:
            g = ext.get(bid, sympy.Integer(1))
            c = explicit[d]
            rem = sympy.Mod(g, c)
            if rem.is_Integer and rem != 0:
                raise LaunchError(
                    f"cluster dim {'xyz'[d]} = {c} does not divide grid dim {'xyz'[d]} = {g} "
                    f"({found[bid][1] if bid in found else 'unbound, 1'})"
                )
            if not rem.is_Integer:
                reqs.append(sympy.Eq(rem, 0))
            grid.append(g)
            cluster.append(c)
    size = cluster[0] * cluster[1] * cluster[2]
    # name where the cluster dims come from: the Rank axes, or set_cluster
    origin = "; ".join(f"{r.name} at {found[r][1]}" for r in _RANK if r in found) or (
        f"set_cluster{tuple(explicit)}")
    if size > MAX_CLUSTER:
        raise LaunchError(
            f"cluster {tuple(cluster)} ({origin}) has {size} CTAs; a multicast mask addresses "
            f"at most {MAX_CLUSTER} (16-bit ctaMask)"
        )
    if size > PORTABLE_CLUSTER and not np_flag:
        raise LaunchError(
            f"cluster {tuple(cluster)} ({origin}) has {size} CTAs; the portable limit is "
            f"{PORTABLE_CLUSTER}: pass non_portable_cluster=True to GemmFusion to allow up to "
            f"{MAX_CLUSTER}"
        )
    block = tuple(ext.get(t, sympy.Integer(1)) for t in _TID)
    return LaunchDims(
        grid=(grid[0], grid[1], grid[2]),
        cluster=(cluster[0], cluster[1], cluster[2]),
        block=(block[0], block[1], block[2]),
        bindings=ext,
        requirements=tuple(reqs),
    )
