"""Issue 28's bench: random API schedules through the multicast derivation and its JSON, both
modes, the way ``tilec masks --json`` derives a schedule file (built over symbols, evaluated at
its parameters, every closed form proved where the theorems reach).

    python bench/bench_masks_random.py [--cases 1000] [--seed 28] [--out PATH]

Per schedule and mode: internal errors (any exception that is not a TilecError: a bug), closed
forms and their scopes (proved / narrowing / launch), and the cold derivation time (tilec's and
sympy's caches emptied first; the imports are paid once per process, so this is the derivation
alone, not the process start). For a form checked at its launch only, whether it names the
facts that would prove it (``would_prove``) or why none was found (``why_launch``), per class of
launch (tiny grid, short last band, partial rounds, no digit pattern, other); the JSON lists
them all, with the narrowing forms (``not_proved_forms``). The sample is fixed by the seed (row-major, column-major, swizzled, persistent, seed-order,
split-K and 2-D grids; clusters of 1 to 16). Writes bench/results/masks_random_<date>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sympy  # noqa: E402

from tests.multicast.test_random_schedules import Case, build, params, symbols  # noqa: E402
from tilec.errors import TilecError  # noqa: E402
from tilec.transforms.multicast.closing import launch_class_key  # noqa: E402
from tilec.transforms.multicast.derive import derive  # noqa: E402
from tilec.transforms.multicast.records import Scope  # noqa: E402

ORDERS = ["row", "col", "swizzle", "persistent", "seed", "splitk", "grid2d"]


def sample(n: int, seed: int = 28) -> list[Case]:
    """A fixed random sample (the test strategy's draws, plus 2-D grids with 2-D clusters)."""
    rnd = random.Random(seed)
    out: list[Case] = []
    while len(out) < n:
        order = rnd.choice(ORDERS)
        BM, BN, BK = (rnd.choice([2, 3, 4, 8]) for _ in range(3))
        M, N, K = rnd.randint(1, 40), rnd.randint(1, 48), rnd.randint(1, 24)
        cs = rnd.choice([1, 2, 3, 4, 6, 8, 16])
        tm, tn = -(-M // BM), -(-N // BN)
        if order in ("persistent", "seed"):
            sms = cs * rnd.randint(1, 4) + rnd.choice([0, 0, 1])
            cm, cn = (rnd.randint(1, 3), rnd.randint(1, 3)) if order == "seed" else (1, 1)
            out.append(Case(order, M, N, K, BM, BN, BK, (cs, 1, 1), sms, cm, cn))
            continue
        if order == "grid2d":
            cx = next(d for d in (4, 2, 1) if tn % d == 0 and d <= rnd.choice([1, 2, 4]))
            cy = next(d for d in (4, 2, 1) if tm % d == 0 and d <= rnd.choice([1, 2, 4]))
            out.append(Case(order, M, N, K, BM, BN, BK, (cx, cy, 1), 1))
            continue
        cs = next(d for d in (16, 8, 6, 4, 3, 2, 1) if (tm * tn) % d == 0 and d <= cs)
        extra = rnd.randint(1, 4) if order == "swizzle" else (
            rnd.randint(1, max(1, -(-K // BK))) if order == "splitk" else 1)
        out.append(Case(order, M, N, K, BM, BN, BK, (cs, 1, 1), extra))
    return out


def cold() -> None:
    """Forget every result kept across derivations (tilec's and sympy's caches)."""
    import sympy.core.cache

    from tilec.runtime.session import clear_caches

    clear_caches()  # the session's, the transforms' (multicast's among them) and the proofs'
    sympy.core.cache.clear_cache()


def literals(c: Case, i: int) -> frozenset[str]:
    """The parameters a schedule writes as numbers (one schedule in three keeps a random few,
    as a user writes ``split(1, 3)``): fixed per case by its index."""
    rnd = random.Random(i)
    names = sorted(params(c))
    return frozenset(rnd.sample(names, rnd.randint(1, 3))) if rnd.random() < 1 / 3 else frozenset()


def run_one(c: Case, mode: str, literal: frozenset[str] = frozenset()) -> dict:
    """Derive and write the JSON of one schedule in one mode, cold; ``literal``: parameters the
    schedule writes as numbers (built so over symbols too)."""
    cold()
    t = time.perf_counter()
    try:
        try:
            sym = build(c, {k: v for k, v in symbols(c).items() if k not in literal})
        except (TilecError, TypeError, ValueError):
            sym = None  # as tilec masks: closed forms over numbers
        d = derive(build(c), mode, symbolic=sym, params=params(c))
        json.dumps(d.to_json(), separators=(",", ":"))
    except TilecError as e:
        return {"user_error": f"{type(e).__name__}: {e}", "seconds": time.perf_counter() - t}
    except Exception as e:
        return {"internal_error": f"{type(e).__name__}: {str(e)[:200]}",
                "where": traceback.format_exc().splitlines()[-3][:200],
                "seconds": time.perf_counter() - t}
    dt = time.perf_counter() - t
    ops = {}
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in params(c).items()}
    for name, op in d.operands.items():
        ops[name] = {"closed": op.closed_form, "scope": op.scope.value if op.scope else None,
                     "cluster_size": op.cluster_size,
                     "would_prove": [str(f) for f in op.closed.would_prove] if op.closed else [],
                     "why_launch": op.closed.why_launch if op.closed else ""}
        if op.scope is Scope.LAUNCH:
            ops[name]["class"] = launch_class_key(op, values)
        elif op.scope is Scope.NARROWING:
            ops[name]["class"] = "narrowing"
    return {"seconds": dt, "operands": ops}


def summarize(results: list[dict]) -> dict:
    runs = len(results)
    internal = [r for r in results if "internal_error" in r]
    user = [r for r in results if "user_error" in r]
    forms = [op for r in results for op in r.get("operands", {}).values() if op["closed"]]
    clustered = [op for op in forms if op["cluster_size"] > 1]
    by = {s: sum(op["scope"] == s for op in forms) for s in ("proved", "narrowing", "launch")}
    by_c = {s: sum(op["scope"] == s for op in clustered) for s in ("proved", "narrowing", "launch")}
    not_proved = [op for op in clustered if op["scope"] != "proved"]
    secs = sorted(r["seconds"] for r in results)
    per_order: dict[str, dict[str, int]] = {}
    for r in results:
        order = r.get("case", "Case(order='?'").split("'")[1]
        for op in r.get("operands", {}).values():
            if op["closed"] and op["cluster_size"] > 1:
                st = per_order.setdefault(order, {"proved": 0, "narrowing": 0, "launch": 0})
                st[op["scope"]] += 1
    return {
        "derivations": runs, "internal_errors": len(internal), "user_errors": len(user),
        "closed_forms": len(forms), "scopes": by,
        "proved_share": by["proved"] / len(forms) if forms else None,
        "clustered_closed_forms": len(clustered), "clustered_scopes": by_c,
        "clustered_proved_share": by_c["proved"] / len(clustered) if clustered else None,
        "not_proved_with_would_prove": sum(bool(op["would_prove"]) for op in not_proved),
        **_launch_summary(forms),
        "max_seconds": secs[-1] if secs else None,
        "median_seconds": secs[len(secs) // 2] if secs else None,
        "over_2s": sum(s > 2 for s in secs),
        "internal_error_kinds": sorted({r["internal_error"].split(":")[0] for r in internal}),
        "clustered_scopes_per_order": per_order,
    }


def _launch_summary(forms: list[dict]) -> dict:
    """The forms checked at their launch only: how many name facts that would prove them, how
    many a reason, per class of launch (closing.LAUNCH_CLASSES); none should have neither."""
    launch = [op for op in forms if op["scope"] == "launch"]
    per: dict[str, dict[str, int]] = {}
    for op in launch:
        st = per.setdefault(op["class"], {"would_prove": 0, "reason": 0, "neither": 0})
        st["would_prove" if op["would_prove"] else "reason" if op["why_launch"]
           else "neither"] += 1
    return {"launch_forms": len(launch),
            "launch_with_would_prove": sum(bool(op["would_prove"]) for op in launch),
            "launch_with_reason": sum(bool(op["why_launch"]) and not op["would_prove"]
                                      for op in launch),
            "launch_with_neither": sum(not op["would_prove"] and not op["why_launch"]
                                       for op in launch),
            "launch_per_class": per,
            "narrowing_forms": sum(op["scope"] == "narrowing" for op in forms),
            "narrowing_with_would_prove": sum(op["scope"] == "narrowing" and bool(
                op["would_prove"]) for op in forms),
            "narrowing_with_reason": sum(op["scope"] == "narrowing" and not op["would_prove"]
                                         and bool(op["why_launch"]) for op in forms)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    cases = sample(args.cases, args.seed)
    results = []
    t0 = time.perf_counter()
    for i, c in enumerate(cases):
        lit = literals(c, i)
        for mode in ("leader", "sliced"):
            r = run_one(c, mode, lit)
            r.update(case=repr(c), mode=mode, literal=sorted(lit))
            results.append(r)
            if "internal_error" in r:
                print(f"internal error: {c} {mode}: {r['internal_error']} at {r['where']}",
                      file=sys.stderr)
        if (i + 1) % 50 == 0:
            print(f"{i + 1}/{len(cases)} schedules, {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr)
    s = summarize(results)
    s["wall_seconds"] = time.perf_counter() - t0
    rows = [("schedules", len(cases)), ("derivations (x2 modes)", s["derivations"]),
            ("internal errors", s["internal_errors"]), ("user errors", s["user_errors"]),
            ("closed forms", s["closed_forms"]),
            ("  proved / narrowing / launch", "{proved} / {narrowing} / {launch}".format(
                **s["scopes"])),
            ("proved share", f"{s['proved_share']:.1%}" if s["proved_share"] is not None else "-"),
            ("closed forms in clusters > 1", s["clustered_closed_forms"]),
            ("  proved / narrowing / launch", "{proved} / {narrowing} / {launch}".format(
                **s["clustered_scopes"])),
            ("proved share (clusters > 1)", f"{s['clustered_proved_share']:.1%}"
             if s["clustered_proved_share"] is not None else "-"),
            ("not proved, naming a fact that would prove it", s["not_proved_with_would_prove"]),
            ("launch forms: would_prove / a named reason / neither",
             f"{s['launch_with_would_prove']} / {s['launch_with_reason']} / "
             f"{s['launch_with_neither']} (of {s['launch_forms']})"),
            *[(f"  {k}", f"{v['would_prove']} / {v['reason']} / {v['neither']}")
              for k, v in sorted(s["launch_per_class"].items())],
            ("narrowing forms: would_prove / a named reason",
             f"{s['narrowing_with_would_prove']} / {s['narrowing_with_reason']} "
             f"(of {s['narrowing_forms']})"),
            ("cold derivation + JSON: median / max", f"{s['median_seconds']:.3f} s / "
                                                    f"{s['max_seconds']:.3f} s"),
            ("derivations over 2 s", s["over_2s"]), ("wall", f"{s['wall_seconds']:.0f} s")]
    w = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{w}}  {v}" for k, v in rows))
    out = {"date": datetime.now(UTC).isoformat(timespec="seconds"),
           "machine": f"{os.cpu_count()} cores, no GPU (shared by other agents)",
           "cases": args.cases, "seed": args.seed, "summary": s,
           "failures": [r for r in results if "internal_error" in r],
           "not_proved_forms": [{"case": r["case"], "mode": r["mode"], "literal": r["literal"],
                                 "operand": name, "scope": op["scope"], "class": op["class"],
                                 "would_prove": op["would_prove"],
                                 "why_launch": op["why_launch"]}
                                for r in results for name, op in r.get("operands", {}).items()
                                if op["scope"] in ("launch", "narrowing")],
           "slowest": sorted(results, key=lambda r: -r["seconds"])[:10]}
    for r in out["slowest"]:
        r.pop("operands", None)
    path = Path(args.out) if args.out else (
        ROOT / "bench" / "results" / f"masks_random_{datetime.now(UTC).date()}.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
