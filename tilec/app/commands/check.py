"""``tilec check SCHEDULE``: the multicast oracle of :mod:`tilec.testing` over drawn launches.

Two passes, each a hypothesis run of ``--examples`` launches (``--seed`` makes it repeatable):

1. **Launches.** Parameter values drawn for the schedule (sizes and tiles small, the cluster
   shape and every ``--param`` kept); at each, tilec's derivation (table and forms, each mode)
   against the brute force. A closed form of scope ``launch`` is checked here, at its launch.
2. **Proved forms.** Each distinct closed form of scope ``proved`` seen in pass 1 is evaluated
   at other launches drawn to meet its facts, against the brute force there.

One line per operand; exit status 0 when every check passed, 1 when one failed (the line
says where: the launch, the CTA, what tilec said and what it needs), 2 on a user error.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tilec.app.commands.common import nonnegative_int, overrides, positive_int, write_output
from tilec.errors import TilecError

if TYPE_CHECKING:
    from tilec.runtime.session import Session

MAX_PROVED = 4  # distinct proved forms per operand and mode checked in pass 2
REFUSED_FIRST = 10  # refusals before the first accepted launch that end the run (a user error)
# the scopes that claim something at other launches (tilec.testing.launch.CARRIED; not imported
# here: every tilec command imports this module, and tilec.testing imports sympy and hypothesis)
CARRIED = ("proved", "narrowing")


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--examples", type=positive_int, default=100, metavar="N",
                   help="launches drawn per pass (default 100)")
    p.add_argument("--mode", choices=["leader", "sliced", "both"], default="both",
                   help="multicast mode checked (default: both)")
    p.add_argument("--cluster", type=cluster_dims, metavar="X[,Y[,Z]]",
                   help="check the schedule under set_cluster(X, Y, Z) (a schedule that binds "
                        "blockIdx and leaves the cluster to the launch)")
    p.add_argument("--max-size", type=positive_int, default=64, metavar="S",
                   help="largest M, N, K drawn (default 64)")
    p.add_argument("--seed", type=nonnegative_int, default=0,
                   help="hypothesis seed (default 0: the same launches every run)")


def cluster_dims(text: str) -> tuple[int, ...]:
    """argparse type: ``2`` or ``2,1`` or ``2,2,1``."""
    try:
        dims = tuple(int(t) for t in text.split(","))
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise argparse.ArgumentTypeError(f"must be X[,Y[,Z]] of positive integers but got {text!r}")
    return dims


class _Refused(Exception):
    """tilec refused every one of the first draws: the schedule, not the draws, is at fault."""


class _Found(Exception):
    def __init__(self, mismatch: Any) -> None:
        self.mismatch = mismatch


@dataclass
class _Tally:
    """What the passes saw, per operand."""

    launches: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    forms: dict[str, Counter[str]] = field(default_factory=dict)  # operand -> scope -> count
    proved: dict[tuple[str, ...], Any] = field(default_factory=dict)  # key -> verdict
    held: Counter[tuple[str, ...]] = field(default_factory=Counter)  # key -> launches held
    unmet: list[tuple[str, ...]] = field(default_factory=list)  # keys no draw met
    why_refused: str = ""  # the first refusal's message
    failure: Any = None


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec check``: per operand, ok or the first launch where tilec is wrong."""
    from tilec.ir import infer_launch
    from tilec.runtime.build import nothing_multicast
    from tilec.testing.launch import load
    from tilec.testing.strategies import Kind, kinds

    try:
        import hypothesis  # noqa: F401  (the strategies and the runs are hypothesis's)
    except ImportError:
        raise TilecError("tilec check needs hypothesis: pip install hypothesis (or "
                         "pip install 'tilec[test]')") from None
    fixed = overrides(args)
    cluster = args.cluster
    loaded = load(args.schedule, fixed, cluster)
    why = nothing_multicast(loaded.fusion)
    if why is not None:
        write_output(args, json.dumps({"schedule": args.schedule, "ok": True, "multicast": False,
                                       "reason": why}) if args.json
                     else f"nothing is multicast: {why}")
        return 0
    # the cluster shape is kept: its factors at the values of this launch
    fixed |= {k: v for k, v in loaded.params.items()
              if kinds(loaded.params).get(k) is Kind.CLUSTER and k not in fixed}
    cs = infer_launch(loaded.fusion).cluster_size
    tally = _Tally()
    _launches(args, fixed, cluster, tally)
    if tally.failure is None:
        _proved(args, fixed, cluster, tally)
    operands = ("A", "B")
    lines = [_verdict(name, tally) for name in operands]
    if args.json:
        write_output(args, json.dumps(_json(args, fixed, cs, tally, lines), default=str))
    else:
        head = (f"{args.schedule}: clusters of {cs} CTAs; kept "
                + (" ".join(f"{k}={v}" for k, v in fixed.items()) or "nothing")
                + f"; {args.mode} mode{'s' if args.mode == 'both' else ''}")
        if tally.refused:
            head += "; draws tilec refused: " + ", ".join(
                f"{n} ({k})" for k, n in tally.refused.most_common())
        write_output(args, "\n".join([head, *lines]))
    return 1 if tally.failure is not None else 0


def _hypothesis_run(args: argparse.Namespace, strategy: Any, body: Any) -> bool:
    """Run ``body`` over ``strategy``; False when no example met the strategy's filters."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
    from hypothesis.errors import Unsatisfiable

    test = seed(args.seed)(settings(
        max_examples=args.examples, deadline=None, database=None, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
        print_blob=False)(given(strategy)(body)))
    try:
        test()
    except Unsatisfiable:
        return False
    return True


def _launches(args: argparse.Namespace, fixed: dict[str, Any], cluster: Any,
              tally: _Tally) -> None:
    from hypothesis import reject

    from tilec.runtime.progress import bar as progress_bar
    from tilec.testing import oracle, params

    bar = progress_bar(total=args.examples, label="launches", unit="launches")
    strategy = params(args.schedule, fixed=fixed, max_size=args.max_size, cluster=cluster)

    def body(p: dict[str, Any]) -> None:
        try:
            report = oracle(args.schedule, p, mode=args.mode, cluster=cluster)
        except TilecError as e:
            tally.refused[type(e).__name__] += 1
            tally.why_refused = tally.why_refused or str(e)
            if not tally.launches and sum(tally.refused.values()) >= REFUSED_FIRST:
                raise _Refused from None
            reject()
        tally.launches += 1
        bar.update(1)
        for v in report.verdicts:
            tally.forms.setdefault(v.operand, Counter())[v.form] += 1
            if v.form in CARRIED and v.key not in tally.proved:
                tally.proved[v.key] = v
        if not report.ok:
            raise _Found(report.mismatches[0])

    try:
        if not _hypothesis_run(args, strategy, body):
            if tally.why_refused:
                raise TilecError(f"{args.schedule}: tilec refused every drawn launch, e.g.: "
                                 f"{tally.why_refused}")
            raise TilecError(f"{args.schedule}: no drawn parameter values build a valid launch "
                             f"with {fixed}: give more of them with --param")
    except _Found as e:
        tally.failure = e.mismatch
    except _Refused:
        raise TilecError(f"{args.schedule}: tilec refused the first {REFUSED_FIRST} drawn "
                         f"launches, e.g.: {tally.why_refused}") from None
    finally:
        bar.close()


def _proved(args: argparse.Namespace, fixed: dict[str, Any], cluster: Any,
            tally: _Tally) -> None:
    from tilec.runtime.progress import bar as progress_bar
    from tilec.testing import params

    chosen: list[Any] = []
    per: Counter[tuple[str, str]] = Counter()
    for v in tally.proved.values():
        if per[(v.operand, v.mode)] < MAX_PROVED:
            per[(v.operand, v.mode)] += 1
            chosen.append(v)
    if not chosen:
        return
    from tilec.testing.launch import derive_at

    bar = progress_bar(total=args.examples * len(chosen), label="proved forms", unit="launches")
    try:
        for v in chosen:
            op = derive_at(args.schedule, v.derived_at, v.mode, cluster).operands[v.operand]
            where = " ".join(f"{k}={x}" for k, x in v.derived_at.items()
                             if isinstance(x, int) and not isinstance(x, bool))

            body = _proved_body(args, op, v, where, cluster, tally, bar)
            strategy = params(args.schedule, fixed=fixed, max_size=args.max_size,
                              cluster=cluster, facts=list(op.facts))
            if not _hypothesis_run(args, strategy, body):
                tally.unmet.append(v.key)
    except _Found as e:
        tally.failure = e.mismatch
    finally:
        bar.close()


def _proved_body(args: argparse.Namespace, op: Any, v: Any, where: str, cluster: Any,
                 tally: _Tally, bar: Any) -> Any:
    """Pass 2's test body for one proved form: the form evaluated at a drawn launch."""
    from hypothesis import reject

    from tilec.testing.brute import compare
    from tilec.testing.launch import load, truth_at

    def body(p: dict[str, Any]) -> None:
        try:
            full = load(args.schedule, p, cluster).params
            truth = truth_at(args.schedule, p, v.operand, cluster)
        except TilecError as e:
            tally.refused[type(e).__name__] += 1
            reject()
        found = compare(op, truth, full, v.mode, table=False,
                        source=f"{v.form} form derived at {where}",
                        sound_only=v.form == "narrowing")
        tally.held[v.key] += not found
        bar.update(1)
        if found:
            raise _Found(found[0])

    return body


def _verdict(name: str, tally: _Tally) -> str:
    """``B: ok, 200 launches, closed form proved, held at all 200 ...`` or the failure."""
    f = tally.failure
    if f is not None and f.operand == name:
        return str(f)
    forms = tally.forms.get(name, Counter())
    words = {"proved": "closed form proved", "launch": "closed form checked at its launch",
             "narrowing": "closed form a narrowing (sound where its facts hold)",
             "general": "general form"}
    if len(forms) <= 1:
        kinds = words[next(iter(forms))] if forms else "nothing derived"
    else:
        kinds = ", ".join(f"{words[k]} at {n}" for k, n in forms.most_common())
        kinds += " (launches x modes)"
    if f is not None:
        return f"{name}: no failure in the {tally.launches} launches before the stop, {kinds}"
    keys = [k for k, v in tally.proved.items() if v.operand == name]
    checked = [k for k in keys if k not in tally.unmet and tally.held[k]]
    text = f"{name}: ok, {tally.launches} launches, {kinds}"
    if checked:
        n = sum(tally.held[k] for k in checked)
        what = ("proved" if all(tally.proved[k].form == "proved" for k in checked)
                else "proved or narrowing")
        text += (f", held at all {n} other launches meeting its facts" if len(checked) == 1 else
                 f"; {len(checked)} {what} forms, each held wherever its facts did "
                 f"({n} launches)")
    if any(k in tally.unmet for k in keys):
        text += "; no drawn launch met the facts of a proved form (not checked elsewhere)"
    return text


def _json(args: argparse.Namespace, fixed: dict[str, Any], cs: int, tally: _Tally,
          lines: list[str]) -> dict[str, Any]:
    f = tally.failure
    ops = {}
    for name, line in zip(("A", "B"), lines, strict=True):
        keys = [k for k, v in tally.proved.items() if v.operand == name]
        ops[name] = {
            "ok": f is None or f.operand != name, "verdict": line, "launches": tally.launches,
            "forms": dict(tally.forms.get(name, {})),
            "proved_forms": len(keys), "proved_held": sum(tally.held[k] for k in keys),
            "failure": None if f is None or f.operand != name else {
                "mode": f.mode, "source": f.source, "params": f.params, "point": f.point,
                "rank": f.rank, "field": f.field, "got": f.got, "needs": f.want,
                "sound": f.sound, "text": str(f)},
        }
    return {"schedule": args.schedule, "ok": f is None, "multicast": True, "cluster_size": cs,
            "kept": fixed, "mode": args.mode, "examples": args.examples, "seed": args.seed,
            "refused": dict(tally.refused), "operands": ops}
