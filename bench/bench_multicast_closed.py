"""Issue 13's bench: closed-form hit rate and soundness over a fixed random sample of schedules
built through the verbs (the cold ``tilec masks --json`` time is bench/bench_masks.py's).

    python bench/bench_multicast_closed.py [--cases 100]

Hit rate: over the operands whose sharing the first-principles brute force of
tests/multicast/test_random_schedules.py finds uniform (the same groups at every loop point),
the share that gets a closed form; unsound: rows (any operand, both modes) where the forms a
kernel would use differ from the brute force. Writes bench/results/multicast_closed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.multicast.test_random_schedules import (  # noqa: E402
    Case,
    _forms_at,
    _uniform,
    brute_force,
    build,
    expected,
)
from tilec.ir import infer_launch  # noqa: E402
from tilec.transforms.multicast.derive import derive  # noqa: E402


def sample(n: int, seed: int = 13) -> list[Case]:
    """The same draws as the tests' strategy, from a fixed seed."""
    rnd = random.Random(seed)
    out = []
    while len(out) < n:
        order = rnd.choice(["row", "col", "swizzle", "persistent", "seed", "splitk"])
        BM, BN, BK = (rnd.choice([2, 3, 4, 8]) for _ in range(3))
        M, N, K = rnd.randint(1, 40), rnd.randint(1, 48), rnd.randint(1, 24)
        cs = rnd.choice([1, 2, 3, 4, 6, 8, 16])
        tiles = -(-M // BM) * -(-N // BN)
        if order in ("persistent", "seed"):
            sms = cs * rnd.randint(1, 4) + rnd.choice([0, 0, 1])
            cm, cn = (rnd.randint(1, 3), rnd.randint(1, 3)) if order == "seed" else (1, 1)
            out.append(Case(order, M, N, K, BM, BN, BK, (cs, 1, 1), sms, cm, cn))
            continue
        cs = next(d for d in (16, 8, 6, 4, 3, 2, 1) if tiles % d == 0 and d <= cs)
        extra = rnd.randint(1, 4) if order == "swizzle" else (
            rnd.randint(1, max(1, -(-K // BK))) if order == "splitk" else 1)
        out.append(Case(order, M, N, K, BM, BN, BK, (cs, 1, 1), extra))
    return out


def hit_rate(cases: list[Case]) -> dict:
    uniform = closed = unsound_rows = closed_not_uniform = operands = 0
    per_order: dict[str, list[int]] = {}
    for c in cases:
        f = build(c)
        cs = infer_launch(f).cluster_size
        for mode in ("leader", "sliced"):
            d = derive(f, mode)
            for name, op in d.operands.items():
                operands += 1
                truth = brute_force(f, name)
                u = _uniform(truth, cs)
                uniform += u
                closed += u and op.closed_form
                closed_not_uniform += op.closed_form and not u
                st = per_order.setdefault(c.order, [0, 0])
                st[0] += u
                st[1] += u and op.closed_form
                names = [str(v) for v in op.variables if str(v) != "rank"]
                got = {}
                for row, vals in _forms_at(op, op.table):
                    got[(tuple(row.point[n] for n in names), row.point["rank"])] = vals
                for key, groups in truth.items():
                    at = dict(key)
                    want = expected(groups, cs, mode)
                    for r in range(cs):
                        ci, cm, si, sc = got[(tuple(at[n] for n in names), r)]
                        w = want[r]
                        bad = (bool(ci), int(cm)) != (w[0], w[1]) or (
                            mode == "sliced" and w[1] and (int(si), int(sc)) != (w[2], w[3]))
                        unsound_rows += bad
    return {"cases": len(cases), "operand_derivations": operands, "uniform": uniform,
            "closed_of_uniform": closed, "hit_rate": closed / uniform if uniform else None,
            "closed_where_not_uniform": closed_not_uniform, "unsound_rows": unsound_rows,
            "per_order_uniform_closed": per_order}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=100)
    args = ap.parse_args()
    t = time.perf_counter()
    hr = hit_rate(sample(args.cases))
    hr["seconds"] = time.perf_counter() - t
    out = {"date": datetime.now(UTC).isoformat(timespec="seconds"),
           "machine": f"{os.cpu_count()} cores, no GPU (shared by other agents)",
           "closed_forms": hr}
    path = ROOT / "bench" / "results" / "multicast_closed.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
