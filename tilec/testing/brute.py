"""The multicast oracle's brute force from first principles, and the comparison with tilec.

The brute force (:func:`brute_force`) reads nothing of the derivation. It walks every CTA of the
launch (its hardware indices: ``blockIdx = clusterIdx * clusterDim + rank`` under
``set_cluster``, ``%cluster_ctarank = x + X*(y + Y*z)``) at every serial loop point, evaluates the
operand's index map with the box (Bulk) indices at 0, and calls the CTA *alive* there when every
split predicate holds. Two CTAs of one cluster share when both are alive and their box origins
agree on every non-broadcast axis; from those groups (:func:`expected`): leader mode, the lowest
rank issues the group's mask; sliced mode, every member issues slice ``i`` of ``n``.

:func:`compare` checks a derivation's table and the forms a kernel would use (closed where
reported, else general) at every point of that launch; it also checks a closed form derived at
*another* launch (a proved one, at launches meeting its facts). A difference is a
:class:`Mismatch`, which says whether the forms would still deliver each CTA exactly its own box
(a narrowing: sound, loses sharing) or not.

Example (a cluster of 2 along x over a 4 x 2 tile grid: B's tile column is shared)::

    >>> from tilec.ir import GemmFusion, ParallelType as P
    >>> f = GemmFusion(M=64, N=32, K=16, dtype="fp16")
    >>> _ = f.c.split(0, 16).split(2, 16).split(4, 16).reorder([0, 2, 4, 1, 3, 5])
    >>> _ = f.c.parallelize(0, P.BIDx).parallelize(1, P.BIDy)
    >>> _ = f.c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    >>> _ = f.set_cluster(2); f.propagate()
    >>> truth = brute_force(f, "B")
    >>> point, origins = truth.points[0]
    >>> point, origins
    ({'bidy': 0, 'cidx': 0, 'i_Ko': 0}, ((0, 0), (0, 0)))
    >>> expected(origins, "leader")
    (Want(alive=True, issue=True, mask=3, slice_index=0, slice_count=2), Want(alive=True, issue=False, mask=3, slice_index=1, slice_count=2))
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import sympy

from tilec.ir import GemmFusion, ParallelType, index_map, infer_launch
from tilec.proofs.evaluate import compile_int

Origin = tuple[int, ...]

_SKIP = (ParallelType.Bulk, ParallelType.Multicast)


@dataclass(frozen=True)
class Truth:
    """One operand at one launch: per loop point (the CTA's indices but its rank, and the serial
    loop indices), each rank's box origin, or None where the CTA is dead."""

    operand: str
    cluster_size: int
    points: tuple[tuple[dict[str, int], tuple[Origin | None, ...]], ...]


class Want(NamedTuple):
    alive: bool
    issue: bool
    mask: int
    slice_index: int
    slice_count: int


def brute_force(fusion: GemmFusion, operand: str) -> Truth:
    """Every CTA of ``fusion``'s launch at every serial loop point: its box origin or dead."""
    view = fusion.operands()[0 if operand == "A" else 1]
    cl = infer_launch(fusion).cluster
    cs = cl[0] * cl[1] * cl[2]
    im = index_map(view)
    syms = im.symbols
    names = [n for n in im.logical if n not in im.broadcast]
    origin_at = compile_int([im.logical[n] for n in names], syms)
    preds = compile_int([*im.predicates, sympy.true], syms)
    walked = [(ax, s) for ax, s in im.loop if ax.ptype not in _SKIP]
    out: dict[tuple[tuple[str, int], ...], list[Origin | None]] = {}
    for values in itertools.product(*[range(int(ax.extent)) for ax, _ in walked]):
        at = dict(zip([s for _, s in walked], values, strict=True))
        rank, named = _hardware(walked, at, cl)
        full = [at.get(s, 0) for s in syms]
        alive = all(preds(*full))
        # the origin only where the CTA is alive: a padded tile's map may divide by zero
        origin = tuple(int(v) for v in origin_at(*full)) if alive else None
        out.setdefault(tuple(sorted(named.items())), [None] * cs)[rank] = origin
    return Truth(operand, cs, tuple((dict(k), tuple(v)) for k, v in out.items()))


def _hardware(walked: list[tuple[Any, sympy.Symbol]], at: dict[sympy.Symbol, int],
              cl: tuple[int, int, int]) -> tuple[int, dict[str, int]]:
    """The CTA's linear rank in its cluster and its other indices by name."""
    rank_xyz, cid = [0, 0, 0], {}
    named: dict[str, int] = {}
    for ax, s in walked:
        pt, d = ax.ptype, ax.ptype.dim
        if pt.is_rank:
            rank_xyz[d] = at[s]
        elif pt.is_cluster:
            cid[d] = at[s]
        elif pt.is_block and cl[d] > 1:  # blockIdx = clusterIdx * clusterDim + rank
            cid[d], rank_xyz[d] = divmod(at[s], cl[d])
        else:
            named[str(s)] = at[s]
    named.update({f"cid{'xyz'[d]}": c for d, c in cid.items()})
    return rank_xyz[0] + cl[0] * (rank_xyz[1] + cl[1] * rank_xyz[2]), named


def expected(origins: tuple[Origin | None, ...], mode: str) -> tuple[Want, ...]:
    """Per rank, what a correct derivation says at one loop point."""
    out = []
    for r, o in enumerate(origins):
        if o is None:
            out.append(Want(False, False, 0, 0, 0))
            continue
        members = [q for q, p in enumerate(origins) if p == o]
        out.append(Want(True, mode == "sliced" or members[0] == r,
                        sum(1 << q for q in members), members.index(r), len(members)))
    return tuple(out)


def delivers(got: list[Want], origins: tuple[Origin | None, ...], mode: str) -> bool:
    """Whether ``got`` (per rank: issue, mask, slice) hands every alive CTA its own box exactly
    once (whole, or each slice once) and a dead CTA nothing: the property a kernel needs."""
    cs = len(origins)
    for r, o in enumerate(origins):
        senders = [q for q in range(cs) if got[q].issue and got[q].mask >> r & 1]
        if o is None:
            if got[r].issue or senders:
                return False
            continue
        if any(got[q].mask >> cs or origins[q] != o for q in senders):
            return False
        if mode == "leader" and len(senders) != 1:
            return False
        if mode == "sliced":
            counts = {got[q].slice_count for q in senders}
            if len(counts) != 1 or sorted(got[q].slice_index for q in senders) != list(
                    range(counts.pop())):
                return False
    return True


@dataclass(frozen=True)
class Mismatch:
    """tilec and the brute force disagree about one CTA at one loop point of one launch."""

    operand: str
    mode: str
    source: str  # "table", "closed form", "general form", "proved form (derived at ...)"
    params: dict[str, Any]
    point: dict[str, int]
    rank: int
    field: str  # alive, issue, mask, slice, or "error" (the form could not be evaluated)
    got: Any
    want: Any
    sound: bool  # the forms at this point still deliver each CTA its box exactly once

    def __str__(self) -> str:
        at = ", ".join(f"{k}={v}" for k, v in self.params.items() if _is_int(v))
        where = " ".join(f"{k}={v}" for k, v in self.point.items())
        if self.field == "error":
            return f"{self.operand}: FAIL at {at}: {self.got} ({self.source}, {self.mode} mode)"
        width = max(_bits(self.got), _bits(self.want)) if self.field == "mask" else 0
        got, want = (_show(self.field, v, width) for v in (self.got, self.want))
        why = ("sound, loses sharing" if self.sound else
               "unsound: a CTA would miss its box, get it twice or get another's")
        return (f"{self.operand}: FAIL at {at}: rank {self.rank} got {self.field} {got} but needs "
                f"{want} ({self.source}, {self.mode} mode, at {where or 'the only loop point'}; "
                f"{why})")


def _bits(v: Any) -> int:
    return max(int(v).bit_length(), 1) if _is_int(v) else 1


def _show(field: str, v: Any, width: int = 0) -> str:
    if field == "mask":
        return "0b" + format(v, f"0{width}b")
    if field == "slice":
        return f"{v[0]}/{v[1]}"
    return "yes" if v is True else "no" if v is False else str(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def compare(op: Any, truth: Truth, params: dict[str, Any], mode: str, *, table: bool = True,
            source: str | None = None, limit: int = 1, sound_only: bool = False
            ) -> list[Mismatch]:
    """Up to ``limit`` disagreements of the operand derivation ``op`` with ``truth``.

    ``table``: check ``op.table`` (the derivation belongs to this launch). The forms ``op.forms()``
    are evaluated at every point of ``truth`` with the parameters ``params`` (those of the launch
    of ``truth``, which may differ from those ``op`` was derived at); ``source`` names them.
    ``sound_only``: a form that shares less than the truth but still hands every CTA its own box
    exactly once passes (what a narrowing claims away from its launch)."""
    out: list[Mismatch] = []
    if table and op.table:
        out += _table_mismatches(op, truth, params, mode, limit)
    if len(out) < limit:
        kind = source or ("closed form" if op.closed_form else "general form")
        out += _form_mismatches(op, truth, params, mode, kind, limit - len(out), sound_only)
    return out


def _loop_names(op: Any) -> list[str]:
    return [str(v) for v in op.variables if str(v) != "rank"]


def _table_mismatches(op: Any, truth: Truth, params: dict[str, Any], mode: str,
                      limit: int) -> list[Mismatch]:
    names = _loop_names(op)
    if (gone := _missing(truth, names)) is not None:
        return [_error(op, truth, params, mode, "table", {},
                       f"the table's loop variable {gone} is not an index of this launch")]
    rows: dict[tuple[int, ...], dict[int, Any]] = {}
    for row in op.table:
        rows.setdefault(tuple(row.point[n] for n in names), {})[row.point["rank"]] = row
    out: list[Mismatch] = []
    for point, _, want in _walk(truth, names, mode):
        at = rows.get(point, {})
        if len(at) != truth.cluster_size:
            return [*out, _error(op, truth, params, mode, "table", point_of(names, point),
                                 f"the table has no row for this loop point ({names})")]
        gw = [Want(g.alive, g.issue, g.mask, g.slice_index or 0, g.slice_count or 0)
              for g in (at[r] for r in range(truth.cluster_size))]
        bad = _first_difference(gw, want, mode, table=True)
        if bad is not None:
            r, field, g, w = bad
            out.append(Mismatch(op.operand, mode, "table", params, point_of(names, point), r,
                                field, g, w, False))
            if len(out) >= limit:
                break
    return out


def _walk(truth: Truth, names: list[str], mode: str
          ) -> Iterator[tuple[tuple[int, ...], tuple[Origin | None, ...], tuple[Want, ...]]]:
    for point, origins in truth.points:
        yield tuple(point[n] for n in names), origins, expected(origins, mode)


def _missing(truth: Truth, names: list[str]) -> str | None:
    """A loop variable of the derivation that the launch does not have."""
    have = truth.points[0][0] if truth.points else {}
    return next((n for n in names if n not in have), None)


def point_of(names: list[str], values: tuple[int, ...]) -> dict[str, int]:
    return dict(zip(names, values, strict=True))


def _first_difference(got: list[Want], want: tuple[Want, ...], mode: str, table: bool
                      ) -> tuple[int, str, Any, Any] | None:
    for r, (g, w) in enumerate(zip(got, want, strict=True)):
        if table and g.alive != w.alive:
            return r, "alive", g.alive, w.alive
        if g.issue != w.issue:
            return r, "issue", g.issue, w.issue
        if g.mask != w.mask:
            return r, "mask", g.mask, w.mask
        if mode == "sliced" and w.alive and (g.slice_index, g.slice_count) != (
                w.slice_index, w.slice_count):
            return r, "slice", (g.slice_index, g.slice_count), (w.slice_index, w.slice_count)
    return None


def _form_mismatches(op: Any, truth: Truth, params: dict[str, Any], mode: str, source: str,
                     limit: int, sound_only: bool = False) -> list[Mismatch]:
    issue, mask, sidx, scount = op.forms()
    exprs = [sympy.sympify(issue), sympy.sympify(mask),
             sympy.sympify(sidx if sidx is not None else 0),
             sympy.sympify(scount if scount is not None else 0)]
    variables = list(op.variables)
    names = _loop_names(op)
    taken = {str(v) for v in variables}
    consts = sorted({s for e in exprs for s in e.free_symbols if str(s) not in taken}, key=str)
    unknown = [str(s) for s in consts if not _is_int(params.get(str(s)))]
    if unknown:
        return [_error(op, truth, params, mode, source, {},
                       f"the form names {unknown[0]}, neither a loop variable nor an integer "
                       f"parameter of this launch")]
    fn = compile_int(exprs, [*variables, *consts])
    pvals = [params[str(s)] for s in consts]
    order = [names.index(str(v)) if str(v) != "rank" else -1 for v in variables]
    if (gone := _missing(truth, names)) is not None:
        return [_error(op, truth, params, mode, source, {},
                       f"the form's loop variable {gone} is not an index of this launch")]
    out: list[Mismatch] = []
    for point, origins, want in _walk(truth, names, mode):
        got = []
        for r in range(truth.cluster_size):
            args = [r if i < 0 else point[i] for i in order]
            try:
                i_, m, si, sc = fn(*args, *pvals)
            except (ZeroDivisionError, ValueError, TypeError) as e:
                return [*out, _error(op, truth, params, mode, source, point_of(names, point),
                                     f"the form cannot be evaluated at rank {r}: {e}")]
            got.append(Want(origins[r] is not None, bool(i_), int(m), int(si), int(sc)))
        bad = _first_difference(got, want, mode, table=False)
        if bad is not None:
            r, field, g, w = bad
            sound = delivers(got, origins, mode)
            if sound and sound_only:
                continue
            out.append(Mismatch(op.operand, mode, source, params, point_of(names, point), r,
                                field, g, w, sound))
            if len(out) >= limit:
                break
    return out


def _error(op: Any, truth: Truth, params: dict[str, Any], mode: str, source: str,
           point: dict[str, int], what: str) -> Mismatch:
    return Mismatch(op.operand, mode, source, params, point, -1, "error", what, None, False)
