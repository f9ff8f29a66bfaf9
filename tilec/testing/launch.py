"""One launch of a schedule file checked: tilec's derivation there against the brute force, and
the proved closed forms of another launch (``base``) wherever their facts hold here.

    >>> SEED = "examples/seed004_persistent_cluster.py"
    >>> small = dict(M=40, N=48, K=16, BM=8, BN=8, BK=8, SMS=6)
    >>> r = check(SEED, small, mode="leader")
    >>> r.ok, sorted((v.operand, v.form) for v in r.verdicts)[1]
    (True, ('B', 'general'))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilec.errors import TilecError
from tilec.testing.brute import Mismatch, Truth, brute_force, compare
from tilec.testing.facts import holds

MODES = ("leader", "sliced")


class MaskMismatch(AssertionError):
    """tilec's multicast tables or forms disagree with the brute force (``.report`` says where)."""

    def __init__(self, report: Report) -> None:
        self.report = report
        super().__init__(str(report.mismatches[0]))


CARRIED = ("proved", "narrowing")  # scopes that claim something at other launches


def scope_of(op: Any) -> str:
    """``"proved"`` (equal to the truth at every launch meeting its facts), ``"narrowing"``
    (sound at every launch meeting its facts, exact at its own), ``"launch"`` (checked at the
    launch it was derived at) or ``"general"`` (no closed form). A closed form that does not
    state its scope is taken as checked at its launch only."""
    if not op.closed_form:
        return "general"
    s = getattr(op, "scope", None) or getattr(op.closed, "scope", None)
    s = str(getattr(s, "value", s))
    return s if s in CARRIED else "launch"


@dataclass(frozen=True)
class Verdict:
    """One operand in one mode: what tilec said and what the brute force found."""

    operand: str
    mode: str
    form: str  # proved, narrowing, launch, general (:func:`scope_of`)
    facts: tuple[str, ...]
    key: tuple[str, ...]  # the forms as text with their facts: equal keys, the same closed form
    mismatches: tuple[Mismatch, ...]
    derived_at: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Report:
    """A launch checked. ``verdicts``: its own derivation per operand and mode; ``proved``: the
    base launch's proved forms whose facts hold here, evaluated here; ``nothing``: why nothing is
    multicast (then there is nothing to check)."""

    params: dict[str, Any]
    cluster_size: int
    verdicts: tuple[Verdict, ...] = ()
    proved: tuple[Verdict, ...] = ()
    nothing: str | None = None

    @property
    def mismatches(self) -> list[Mismatch]:
        return [m for v in (*self.verdicts, *self.proved) for m in v.mismatches]

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _key(path: str | Path, params: Mapping[str, Any], *rest: Any) -> tuple[Any, ...]:
    return (Path(path).read_bytes(), tuple(sorted((k, repr(v)) for k, v in params.items())),
            *rest)


def load(path: str | Path, params: Mapping[str, Any], cluster: tuple[int, ...] | None = None
         ) -> Any:
    """The schedule loaded at ``params`` (with ``set_cluster(*cluster)`` if given)."""
    from tilec.runtime.loader import load_schedule

    loaded = load_schedule(path, dict(params))
    if cluster is not None:
        loaded.fusion.set_cluster(*cluster)
    return loaded


def derive_at(path: str | Path, params: Mapping[str, Any], mode: str = "leader",
              cluster: tuple[int, ...] | None = None) -> Any:
    """tilec's derivation at ``params``, as ``tilec masks`` makes it (over symbols, proved)."""
    from tilec.runtime.session import SESSION, get_or
    from tilec.transforms.multicast.derive import derive_loaded, symbolic_build

    def make() -> Any:
        loaded = load(path, params, cluster)
        if cluster is None:
            return derive_loaded(loaded, mode, symbolic=SESSION.symbolic(loaded))
        sym = symbolic_build(loaded.module.schedule, loaded.params)
        if sym.fusion is not None:
            sym.fusion.set_cluster(*cluster)
        return derive_loaded(loaded, mode, symbolic=sym)

    return get_or(SESSION.oracle_derived, _key(path, params, mode, cluster), make)


def truth_at(path: str | Path, params: Mapping[str, Any], operand: str,
             cluster: tuple[int, ...] | None = None) -> Truth:
    """The brute force of ``operand`` at ``params``."""
    from tilec.runtime.session import SESSION, get_or

    truth: Truth = get_or(
        SESSION.oracle_truth,
        _key(path, params, operand, cluster),
        lambda: brute_force(load(path, params, cluster).fusion, operand))
    return truth


def oracle(path: str | Path, params: Mapping[str, Any], *, mode: str = "both",
           cluster: tuple[int, ...] | None = None, base: Mapping[str, Any] | None = None,
           limit: int = 1) -> Report:
    """The :class:`Report` of one launch (``mode``: leader, sliced or both). A user error
    (a TilecError: the launch is refused) propagates; any other exception of the derivation is
    a finding, reported as a mismatch."""
    from tilec.ir import infer_launch
    from tilec.runtime.build import nothing_multicast

    modes = MODES if mode == "both" else (mode,)
    if mode not in (*MODES, "both"):
        raise TilecError(f"mode must be leader, sliced or both but got {mode!r}")
    loaded = load(path, params, cluster)
    params = dict(loaded.params)  # every parameter, the file's defaults included
    if base is not None:
        base = dict(load(path, base, cluster).params)
    fusion = loaded.fusion
    cs = infer_launch(fusion).cluster_size
    why = nothing_multicast(fusion)
    if why is not None:
        return Report(params, cs, nothing=why)
    verdicts: list[Verdict] = []
    proved: list[Verdict] = []
    for m in modes:
        try:
            d = derive_at(path, params, m, cluster)
        except TilecError:
            raise
        except Exception as e:  # tilec's own failure at this launch: what the check is for
            verdicts += [_crash(name, m, params, e) for name in ("A", "B")]
            continue
        for name, op in d.operands.items():
            found = compare(op, truth_at(path, params, name, cluster), params, m, limit=limit)
            verdicts.append(_verdict(op, m, found, params))
        if base is not None and dict(base) != params:
            proved += _proved_elsewhere(path, dict(base), params, m, cluster, limit)
    return Report(params, cs, tuple(verdicts), tuple(proved))


def check(path: str | Path, params: Mapping[str, Any], *, mode: str = "both",
          cluster: tuple[int, ...] | None = None, base: Mapping[str, Any] | None = None
          ) -> Report:
    """:func:`oracle`, raising :class:`MaskMismatch` (an AssertionError) on a disagreement:
    the call a ``@given`` test makes."""
    report = oracle(path, params, mode=mode, cluster=cluster, base=base)
    if not report.ok:
        raise MaskMismatch(report)
    return report


def proved_forms(path: str | Path, base: Mapping[str, Any], mode: str,
                 cluster: tuple[int, ...] | None = None) -> list[Any]:
    """The operands of the derivation at ``base`` whose closed form claims something at other
    launches meeting its facts (scope proved or narrowing)."""
    return [op for op in derive_at(path, base, mode, cluster).operands.values()
            if scope_of(op) in CARRIED]


def _proved_elsewhere(path: str | Path, base: dict[str, Any], params: dict[str, Any], mode: str,
                      cluster: tuple[int, ...] | None, limit: int) -> list[Verdict]:
    if _kept(base) != _kept(params):  # another schedule structure: the forms say nothing here
        return []
    out = []
    for op in proved_forms(path, base, mode, cluster):
        if not holds(op.facts, params) or not _pins_hold(op, params):
            continue
        scope = scope_of(op)
        found = compare(op, truth_at(path, params, op.operand, cluster), params, mode,
                        table=False, source=f"{scope} form derived at {_text(base)}",
                        limit=limit, sound_only=scope == "narrowing")
        out.append(_verdict(op, mode, found, base))
    return out


def _kept(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a derivation keeps as values (not a positive integer: a string, a flag,
    0; :func:`~tilec.transforms.multicast.derive.symbolic_instance`): its forms hold only where
    these are the same (``WALK="rows"`` and ``"cols"`` are two schedules)."""
    return {k: v for k, v in params.items()
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0}


def _pins_hold(op: Any, params: Mapping[str, Any]) -> bool:
    """Every parameter the form was derived with as a number has that value here."""
    pinned = getattr(op.closed, "pinned", ())
    return all(params.get(p.name) == v for p, v in pinned)


def _verdict(op: Any, mode: str, found: list[Mismatch], derived_at: dict[str, Any]) -> Verdict:
    facts = tuple(str(f) for f in op.facts)
    key = (op.operand, mode, *(str(f) for f in op.forms()), *facts) if op.closed_form else ()
    return Verdict(op.operand, mode, scope_of(op), facts, key, tuple(found), derived_at)


def _crash(name: str, mode: str, params: dict[str, Any], e: Exception) -> Verdict:
    text = " ".join(str(e).split())[:200]
    m = Mismatch(name, mode, "derivation", params, {}, -1, "error",
                 f"tilec raised {type(e).__name__}: {text}", None, False)
    return Verdict(name, mode, "general", (), (), (m,), params)


def _text(params: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items()
                    if isinstance(v, int) and not isinstance(v, bool))
