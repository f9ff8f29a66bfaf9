"""Issue 13's speed bench: cold ``tilec masks --json`` beside the floor ``python -c "import sympy"``.

    python bench/bench_masks.py [--rounds 7]

For the seed schedule (examples/seed004_persistent_cluster.py) and the tutorial's
(examples/my_gemm.py --param M=4096 --param N=8192), each round runs, alternating so that the
machine's load hits every command alike: the floor, then each schedule *cold* (a fresh process,
``TILEC_CACHE`` a new empty directory: everything derived and proved) and *warm* (the same
command again: the disk cache hit). Target: the derivation itself, cold minus the floor, under
0.3 s.

Reported per command: the median and spread of the wall time and of the CPU time (user + system
of the child, from ``getrusage``): on a machine shared with other jobs the CPU time is the steadier
of the two. ``tilec`` leaves without the interpreter's teardown (``os._exit`` after the exit
handlers) while the floor pays sympy's: the derivation is also reported against a second floor,
``import sympy`` then ``os._exit(0)`` (the stricter figure). tilec's bytecode is cached as after an install (``PYTHONDONTWRITEBYTECODE`` is
dropped for the children and one untimed run writes it), as sympy's is in site-packages.

Writes bench/results/masks_cold_<date>.json (with the load average before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.3
CASES = {
    "seed": ["examples/seed004_persistent_cluster.py"],
    "tutorial": ["examples/my_gemm.py", "--param", "M=4096", "--param", "N=8192"],
}


def _env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "TILEC_CACHE": cache}


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _stats(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def measure(rounds: int) -> dict:
    py = sys.executable
    tilec = [py, "-c", "from tilec.app.cli import entry; entry()", "masks"]
    floors = {"floor": [py, "-c", "import sympy"],
              "floor without teardown": [py, "-c", "import os, sympy; os._exit(0)"]}
    with tempfile.TemporaryDirectory() as tmp:  # untimed: write tilec's bytecode
        for args in CASES.values():
            _run([*tilec, *args, "--json"], _env(tmp))
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}

    def note(name: str, w: float, c: float) -> None:
        wall.setdefault(name, []).append(w)
        cpu.setdefault(name, []).append(c)

    for _ in range(rounds):
        for name, argv in floors.items():
            note(name, *_run(argv, _env("off")))
        for name, args in CASES.items():
            with tempfile.TemporaryDirectory() as tmp:
                env = _env(tmp)  # a new empty cache: cold
                note(f"{name} cold", *_run([*tilec, *args, "--json"], env))
                note(f"{name} warm", *_run([*tilec, *args, "--json"], env))
    out: dict = {"wall_s": {k: _stats(v) for k, v in wall.items()},
                 "cpu_s": {k: _stats(v) for k, v in cpu.items()}, "all_wall_s": wall,
                 "all_cpu_s": cpu}
    for kind in ("wall_s", "cpu_s"):
        for f in floors:
            floor = out[kind][f]["median"]
            out[f"derivation_{kind} (cold median minus {f} median)"] = {
                name: out[kind][f"{name} cold"]["median"] - floor for name in CASES}
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    load_before = os.getloadavg()
    res = measure(args.rounds)
    date = time.strftime("%Y-%m-%d")
    out = {"date": date, "device": f"this CPU machine: {platform.machine()}, {os.cpu_count()} "
                                    f"cores shared with other agents, no GPU",
           "python": platform.python_version(), "rounds": args.rounds,
           "commands": {"floor": 'python -c "import sympy"',
                        "floor without teardown": 'python -c "import os, sympy; os._exit(0)"',
                        **{k: "tilec masks " + " ".join(v) + " --json" for k, v in CASES.items()}},
           "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
           "target_s": TARGET_S, **res}
    print(f"{'command':<24} {'wall median':>12} {'cpu median':>11}")
    for k in res["wall_s"]:
        print(f"{k:<24} {res['wall_s'][k]['median']:>11.3f}s {res['cpu_s'][k]['median']:>10.3f}s")
    for name in CASES:
        for f in ("floor", "floor without teardown"):
            w = res[f"derivation_wall_s (cold median minus {f} median)"][name]
            c = res[f"derivation_cpu_s (cold median minus {f} median)"][name]
            print(f"{name}: derivation {w:.3f} s wall, {c:.3f} s cpu over the {f} "
                  f"(target < {TARGET_S} s: {'met' if max(w, c) < TARGET_S else 'MISSED'})")
    print(f"load average before {load_before}, after {out['loadavg_after']}")
    path = args.output or ROOT / "bench" / "results" / f"masks_cold_{date}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
