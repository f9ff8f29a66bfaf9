"""TensorView: a tensor with a logical domain and a scheduled loop domain.

Scheduling verbs follow nvFuser (``split``, ``merge``, ``reorder``, ``parallelize``,
``broadcast``, plus ``swizzle`` for tile orders).  Each returns the view, so calls chain; negative
axes count from the end; every call on a view owned by a fusion is recorded in its schedule trace.

Example (before -> after)::

    >>> from tilec.ir import GemmFusion, ParallelType
    >>> f = GemmFusion(M=256, N=128, K=64)
    >>> print(f.c)
    C[iS.M{256}, iS.N{128}, rS.K{64}]
    >>> print(f.c.split(0, 128).split(2, 64))
    C[iS.Mo{2}, iS.Mi{128}, iS.No{2}, iS.Ni{64}, rS.K{64}]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sympy

from tilec.errors import (
    AxisError,
    AxisNameError,
    MergeError,
    ParallelizeError,
    ReorderError,
    ScheduleError,
    SplitFactorError,
    SwizzleError,
)
from tilec.ir.iterdomain import IterDomain, Merge, Split, Swizzle, Transform, as_extent
from tilec.ir.types import DType, IterType, MemoryType, ParallelType

if TYPE_CHECKING:
    from tilec.ir.trace import Schedule


class TensorView:
    """A tensor: ``logical`` axes (what it is) and ``loop`` axes (how it is iterated)."""

    def __init__(
        self,
        name: str,
        logical: Sequence[IterDomain],
        *,
        dtype: DType = DType.BF16,
        memory: MemoryType = MemoryType.GLOBAL,
        trace: Schedule | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise AxisNameError(f"a TensorView's name must be a non-empty string but got {name!r}")
        if isinstance(logical, str | bytes) or not isinstance(logical, Iterable):
            raise ScheduleError(f"{name}: logical axes must be a list of IterDomains but got {logical!r}")
        logical = tuple(logical)
        bad = [a for a in logical if not isinstance(a, IterDomain)]
        if bad:
            raise ScheduleError(f"{name}: logical axes must be IterDomains but got {bad[0]!r}")
        if not isinstance(dtype, DType) or not isinstance(memory, MemoryType):
            raise ScheduleError(f"{name}: dtype must be a DType and memory a MemoryType but got "
                                f"{dtype!r} and {memory!r}")
        self.name = name
        self.logical: tuple[IterDomain, ...] = logical
        self.loop: list[IterDomain] = list(logical)
        self.transforms: list[Transform] = []
        self.dtype = dtype
        self.memory = memory
        self._trace = trace

    # -- queries -------------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.loop)

    def _pos(self, axis: int, what: str = "axis") -> int:
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise AxisError(f"{self.name}: {what} must be an int but got {axis!r}")
        n = len(self.loop)
        if not -n <= axis < n:
            raise AxisError(
                f"{self.name}: {what} {axis} is out of range for a loop domain of {n} axes "
                f"(valid: {-n}..{n - 1}); loop domain is {self.loop_str()}"
            )
        return axis % n

    def __getitem__(self, axis: int) -> IterDomain:
        return self.loop[self._pos(axis)]

    def axis(self, axis: int) -> AxisRef:
        """A handle on loop axis ``axis`` with nvFuser's ``.parallelize(ptype)``."""
        return AxisRef(self, self._pos(axis))

    def loop_str(self) -> str:
        return "[" + ", ".join(str(a) for a in self.loop) + "]"

    def __str__(self) -> str:
        return f"{self.name}{self.loop_str()}"

    def __repr__(self) -> str:
        return f"TensorView({self})"

    def all_axes(self) -> list[IterDomain]:
        """Every axis of the view's transform graph (logical, intermediate, loop), current ptypes."""
        seen: dict[int, IterDomain] = {a.uid: a for a in self.logical}
        for t in self.transforms:
            for a in (*t.inputs, *t.outputs):
                seen.setdefault(a.uid, a)
        for a in self.loop:
            seen[a.uid] = a
        return list(seen.values())

    # -- recording -----------------------------------------------------------------------

    def _record(self, method: str, *args: Any, **kwargs: Any) -> None:
        if self._trace is not None:
            self._trace.record(self.name, method, args, kwargs)

    def _replace_transform_axis(self, old: IterDomain, new: IterDomain) -> None:
        """Keep the graph's copy of an axis in step with its current ptype (same uid)."""
        self.loop = [new if a == old else a for a in self.loop]

    # -- scheduling verbs ----------------------------------------------------------------

    def split(
        self,
        axis: int,
        factor: int | sympy.Expr | str,
        inner: bool = True,
        names: tuple[str, str] | None = None,
    ) -> TensorView:
        """Split loop axis ``axis`` by ``factor``.

        Inner split (default): ``E -> [ceil(E/f), f]``; outer split: ``E -> [f, ceil(E/f)]``.
        Example: ``[iM{100}] -> split(0, 32) -> [iMo{4}, iMi{32}]`` (predicate ``M-index < 100``).
        """
        pos = self._pos(axis)
        f = _check_factor(self.name, pos, factor)
        if not isinstance(inner, bool):
            raise ScheduleError(
                f"{self.name}: split: inner of axis {pos} must be True (inner split) or False "
                f"(outer split) but got {inner!r}")
        if names is not None:
            if isinstance(names, str) or not isinstance(names, Sequence) or len(names) != 2 or not all(
                    isinstance(n, str) for n in names):
                raise AxisNameError(
                    f"{self.name}: split: names of axis {pos} must be two strings (outer, inner) "
                    f"but got {names!r}")
            for n in names:
                _check_name(self.name, f"split: each name of axis {pos}", n)
            names = (names[0], names[1])
        self._record("split", axis, _plain(factor), inner=inner, names=names)
        t = Split.make(self.loop[pos], f, inner, names)
        self.transforms.append(t)
        self.loop[pos : pos + 1] = [t.outer, t.inner]
        return self

    def merge(self, axis_o: int, axis_i: int | None = None, name: str | None = None) -> TensorView:
        """Merge ``axis_o`` with ``axis_i`` (default: the next axis) into one axis at ``axis_o``.

        Example: ``[iA{4}, iB{8}] -> merge(0) -> [iA_B{32}]``, ``A = AB / 8``, ``B = AB % 8``.
        """
        po = self._pos(axis_o, "outer axis")
        pi = self._pos(po + 1 if axis_i is None else axis_i, "inner axis")
        if po == pi:
            raise MergeError(f"{self.name}: cannot merge axis {po} with itself")
        if name is not None:
            _check_name(self.name, f"merge: the name of axes {po} and {pi}", name)
        o, i = self.loop[po], self.loop[pi]
        kinds = {o.iter_type, i.iter_type}
        if kinds == {IterType.REDUCTION, IterType.ITERATION}:
            raise MergeError(
                f"{self.name}: cannot merge reduction axis {(o if o.is_reduction else i)} "
                f"(position {po if o.is_reduction else pi}) with iteration axis "
                f"{(i if o.is_reduction else o)} (position {pi if o.is_reduction else po})"
            )
        self._record("merge", axis_o, *(() if axis_i is None else (axis_i,)), name=name)
        t = Merge.make(o, i, name)
        self.transforms.append(t)
        first, second = sorted((po, pi))
        del self.loop[second]
        self.loop[first] = t.out
        return self

    def reorder(self, mapping: Mapping[int, int] | Sequence[int]) -> TensorView:
        """Permute the loop domain.

        ``mapping`` is nvFuser's ``{old_position: new_position}`` (axes not named keep their
        relative order in the free slots) or a full list ``new_order[i] = old position``.
        Example: ``[a, b, c] -> reorder({2: 0}) -> [c, a, b]``; ``reorder([1, 0, 2]) -> [b, a, c]``.
        """
        n = len(self.loop)
        if isinstance(mapping, Mapping):
            old_new: dict[int, int] = {}
            for k, v in mapping.items():
                src, dst = self._pos(k, "reorder source"), self._pos(v, "reorder target")
                if src in old_new:
                    raise ReorderError(
                        f"{self.name}: reorder {dict(mapping)} is not a permutation: axis {src} "
                        f"is moved twice")
                old_new[src] = dst
            if len(set(old_new.values())) != len(old_new):
                target = next(t for t in old_new.values() if list(old_new.values()).count(t) > 1)
                clash = [o for o, t in old_new.items() if t == target]
                raise ReorderError(
                    f"{self.name}: reorder {dict(mapping)} is not a permutation: axes "
                    f"{clash[0]} and {clash[1]} both move to position {target}"
                )
            order: list[int | None] = [None] * n
            for old, new in old_new.items():
                order[new] = old
            rest = iter(p for p in range(n) if p not in old_new)
            new_order = [p if p is not None else next(rest) for p in order]
        elif isinstance(mapping, Sequence) and not isinstance(mapping, str | bytes):
            new_order = [self._pos(p, "reorder entry") for p in mapping]
            if sorted(new_order) != list(range(n)):
                missing = [p for p in range(n) if p not in new_order]
                twice = sorted({p for p in new_order if new_order.count(p) > 1})
                raise ReorderError(
                    f"{self.name}: reorder {list(mapping)} is not a permutation of the "
                    f"{n} loop axes 0..{n - 1}: axes {missing} are missing"
                    + (f", axes {twice} appear twice" if twice else "")
                )
        else:
            raise ReorderError(
                f"{self.name}: reorder takes a dict {{old_position: new_position}} or a list of "
                f"the {n} old positions in their new order but got {mapping!r}")
        self._record("reorder", _plain_mapping(mapping))
        self.loop = [self.loop[p] for p in new_order]
        return self

    def parallelize(self, axis: int, ptype: ParallelType) -> TensorView:
        """Bind loop axis ``axis`` to ``ptype``.

        A hardware index may be bound once per view; a broadcast axis never launches work.
        """
        pos = self._pos(axis)
        if not isinstance(ptype, ParallelType):
            raise ParallelizeError(
                f"{self.name}: axis {pos} must be bound to a ParallelType but got {ptype!r}"
            )
        ax = self.loop[pos]
        if ax.is_broadcast and ptype.is_hardware_index:
            raise ParallelizeError(
                f"{self.name}: broadcast axis {ax} (position {pos}) cannot be bound to "
                f"{ptype.name}: a broadcast launches no work; bind the consumer's axis instead"
            )
        self._check_unique(pos, ptype)
        self._record("parallelize", axis, ptype)
        self._bind(pos, ptype)
        return self

    def _check_unique(self, pos: int, ptype: ParallelType) -> None:
        if not ptype.is_hardware_index:
            return
        for j, other in enumerate(self.loop):
            if j != pos and other.ptype is ptype:
                raise ParallelizeError(
                    f"{self.name}: {ptype.name} is already bound to axis {j} ({other}); "
                    f"cannot bind it to axis {pos} ({self.loop[pos]}) as well"
                )
            roads = {_grid_road(ptype), _grid_road(other.ptype)}
            if j != pos and other.ptype.dim == ptype.dim and roads == {"block", "cluster"}:
                d = "xyz"[ptype.dim or 0]
                raise ParallelizeError(
                    f"{self.name}: cannot bind axis {pos} ({self.loop[pos]}) to {ptype.name}: "
                    f"axis {j} ({other}) is bound to {other.ptype.name}, and BID{d} = CID{d} * "
                    f"clusterDim.{d} + Rank{d.upper()}; bind BID{d}, or CID{d} and Rank{d.upper()}"
                )

    def _bind(self, pos: int, ptype: ParallelType) -> None:
        self.loop[pos] = self.loop[pos].with_ptype(ptype)

    def broadcast(self, axis: int, extent: int | sympy.Expr | str = 1,
                  name: str | None = None) -> TensorView:
        """Insert a new broadcast axis at loop (and logical) position ``axis``.

        ``axis`` may equal ``ndim`` (append). ``name`` must differ from the view's logical axes
        (an index map has one entry per logical name); by default it is the first free of ``b``,
        ``b2``, ``b3``, ... Example: ``[iM, iK] -> broadcast(1) -> [iM, bb{1}, iK]``.
        """
        n = len(self.loop)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise AxisError(f"{self.name}: broadcast position must be an int but got {axis!r}")
        if not -n - 1 <= axis <= n:
            raise AxisError(
                f"{self.name}: broadcast position {axis!r} is out of range (valid: {-n - 1}..{n})"
            )
        pos = axis % (n + 1)
        ext = _check_factor(self.name, pos, extent, what="broadcast extent")
        taken = {a.name: a for a in self.logical}
        if name is None:
            name = next(c for c in ("b", *(f"b{k}" for k in range(2, n + 3))) if c not in taken)
        _check_name(self.name, "broadcast: name", name)
        if name in taken:
            raise AxisNameError(
                f"{self.name}: broadcast: name {name!r} is the name of logical axis "
                f"{taken[name]}; a new logical axis needs a name of its own (taken: "
                f"{', '.join(taken)})")
        self._record("broadcast", axis, _plain(extent), name=name)
        b = IterDomain(name, ext, IterType.BROADCAST, expanded=ext != 1)
        self.loop.insert(pos, b)
        self.logical = (*self.logical, b)
        return self

    def swizzle(self, axis_x: int, axis_y: int, group: int | sympy.Expr | str) -> TensorView:
        """Grouped raster of the tile grid (``axis_x`` rows, ``axis_y`` columns).

        Consecutive loop iterations walk ``group`` rows column by column (Triton's GROUP_SIZE_M).
        A reduction axis swizzles only with a reduction axis: mixed with an iteration axis, the
        output's index would depend on the reduction loop.
        Example: ``[iMo{8}, iNo{8}] -> swizzle(0, 1, 4) -> [iMog{8}, iNog{8}]``.
        """
        px, py = self._pos(axis_x, "swizzle row axis"), self._pos(axis_y, "swizzle column axis")
        if px == py:
            raise AxisError(f"{self.name}: swizzle needs two different axes but got {px} twice")
        x, y = self.loop[px], self.loop[py]
        if {x.iter_type, y.iter_type} == {IterType.REDUCTION, IterType.ITERATION}:
            (r, pr), (i, pi) = sorted([(x, px), (y, py)], key=lambda a: not a[0].is_reduction)
            raise SwizzleError(
                f"{self.name}: cannot swizzle reduction axis {r} (position {pr}) with iteration "
                f"axis {i} (position {pi}): the iteration axis's index would depend on the "
                f"reduction loop")
        g = _check_factor(self.name, px, group, what="swizzle group")
        self._record("swizzle", axis_x, axis_y, _plain(group))
        t = Swizzle.make(x, y, g)
        self.transforms.append(t)
        self.loop[px], self.loop[py] = t.x_out, t.y_out
        return self

    # -- replay (used by propagation) -----------------------------------------------------

    def replay_transform(self, t: Transform, amap: dict[int, IterDomain]) -> None:
        """Apply ``t`` (from another view) to this view's axes ``amap[uid]``; extend ``amap``."""
        if isinstance(t, Split):
            src = amap[t.input.uid]
            pos = self.loop.index(src)
            s = Split.make(src, t.factor, t.inner_split, (t.outer.name, t.inner.name))
            self.transforms.append(s)
            self.loop[pos : pos + 1] = [s.outer, s.inner]
            amap[t.outer.uid], amap[t.inner.uid] = s.outer, s.inner
        elif isinstance(t, Merge):
            o, i = amap[t.outer.uid], amap[t.inner.uid]
            m = Merge.make(o, i, t.out.name)
            po, pi = self.loop.index(o), self.loop.index(i)
            self.transforms.append(m)
            first, second = sorted((po, pi))
            del self.loop[second]
            self.loop[first] = m.out
            amap[t.out.uid] = m.out
        else:
            x, y = amap[t.x.uid], amap[t.y.uid]
            sw = Swizzle.make(x, y, t.group)
            px, py = self.loop.index(x), self.loop.index(y)
            self.transforms.append(sw)
            self.loop[px], self.loop[py] = sw.x_out, sw.y_out
            amap[t.x_out.uid], amap[t.y_out.uid] = sw.x_out, sw.y_out

    # -- structure -----------------------------------------------------------------------

    def structure(self) -> tuple[Any, ...]:
        """A canonical, uid-free description: equal for views built by the same schedule."""
        canon: dict[int, int] = {}

        def cid(a: IterDomain) -> int:
            return canon.setdefault(a.uid, len(canon))

        def desc(a: IterDomain) -> tuple[Any, ...]:
            # the extent itself: sympy compares and hashes it by content (assumptions included)
            return (cid(a), a.name, a.extent, a.iter_type, a.ptype, a.expanded)

        logical = tuple(desc(a) for a in self.logical)
        trans = []
        for t in self.transforms:
            extra = (t.factor, t.inner_split) if isinstance(t, Split) else (
                (t.group,) if isinstance(t, Swizzle) else ())
            trans.append((type(t).__name__, tuple(cid(a) for a in t.inputs),
                          tuple(desc(a)[:4] for a in t.outputs), extra))
        loop = tuple(desc(a) for a in self.loop)
        return (self.name, self.dtype, self.memory, logical, tuple(trans), loop)


class AxisRef:
    """``tv.axis(i)``: a position in a view's loop domain (nvFuser's ``tv->axis(i)``)."""

    def __init__(self, view: TensorView, pos: int) -> None:
        self.view, self.pos = view, pos

    @property
    def domain(self) -> IterDomain:
        return self.view.loop[self.pos]

    def parallelize(self, ptype: ParallelType) -> TensorView:
        return self.view.parallelize(self.pos, ptype)

    def __getattr__(self, item: str) -> Any:
        return getattr(self.view.loop[self.pos], item)

    def __str__(self) -> str:
        return str(self.domain)


def _grid_road(ptype: ParallelType) -> str | None:
    """How a type reaches a grid dimension: "block" (BIDd) or "cluster" (CIDd, RankD)."""
    if ptype.is_block:
        return "block"
    return "cluster" if ptype.is_cluster or ptype.is_rank else None


def _check_name(view: str, what: str, name: object) -> str:
    """An axis name: a Python identifier (it becomes a loop symbol and a trace argument)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise AxisNameError(f"{view}: {what} must be an identifier (letters, digits and _, not "
                            f"starting with a digit) but got {name!r}")
    return name


def _check_factor(view: str, pos: int, factor: object, what: str = "split factor") -> sympy.Expr:
    if isinstance(factor, bool):
        raise SplitFactorError(f"{view}: {what} of axis {pos} must be a positive integer but got {factor!r}")
    if isinstance(factor, int):
        if factor <= 0:
            raise SplitFactorError(
                f"{view}: {what} of axis {pos} must be a positive integer but got {factor}"
            )
        return sympy.Integer(factor)
    if isinstance(factor, str) and factor.isidentifier():
        return as_extent(factor)
    if isinstance(factor, sympy.Expr) and factor.is_positive and factor.is_integer:
        return factor
    raise SplitFactorError(
        f"{view}: {what} of axis {pos} must be a positive integer (or a positive integer "
        f"symbol) but got {factor!r}"
    )


def _plain(value: object) -> object:
    """Trace arguments as plain Python where possible (ints, names)."""
    if isinstance(value, sympy.Integer):
        return int(value)
    if isinstance(value, sympy.Symbol):
        return value.name
    return value


def _plain_mapping(mapping: Mapping[int, int] | Sequence[int]) -> object:
    return dict(mapping) if isinstance(mapping, Mapping) else list(mapping)


def map_axes(views: Iterable[TensorView], fn: Callable[[IterDomain], bool]) -> list[IterDomain]:
    return [a for v in views for a in v.loop if fn(a)]
