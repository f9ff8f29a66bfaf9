"""Draw the pictures of docs/img/ with ``tilec viz``, and record what each shows.

    python scripts/make_docs_pictures.py            # redraw every picture and pictures.json
    python scripts/make_docs_pictures.py --check    # exit 1 if one is out of date (no drawing kept)

Each picture is one ``tilec viz`` command (:data:`PICTURES`, the same commands docs/tutorial.md
shows). Besides the PNG, ``docs/img/pictures.json`` records for each the command, the numbers its
caption states (a timeline's makespan and utilisation, tile and block counts) and a digest of
everything drawn (``tilec viz --json``'s data). ``tests/docs/test_pictures.py`` recomputes that
record from today's code and fails when it differs: a picture whose schedule, plan or cost model
changed must be redrawn (pixels are not compared: matplotlib's rendering varies by version).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
RECORD = IMG / "pictures.json"

# picture file -> the tilec viz arguments that draw it (without -o), run from the repository root
PICTURES: dict[str, list[str]] = {
    "my_gemm.png": ["examples/my_gemm.py", "--param", "M=1024", "--param", "N=2048",
                    "--param", "SMS=8"],
    "dp_1sk_timeline.png": ["examples/stream_k.py", "--param", "M=640", "--param", "N=640",
                            "--param", "K=1024", "--param", "SMS=12", "--param",
                            "DECOMP=dp_1sk", "--kind", "timeline"],
    "threads_naive.png": ["examples/coalescing_naive.py", "--param", "M=256", "--param",
                          "N=256", "--param", "K=256", "--kind", "threads"],
    "threads_coalesced.png": ["examples/coalescing_coalesced.py", "--param", "M=256",
                              "--param", "N=256", "--param", "K=256", "--kind", "threads"],
}


def command(name: str) -> str:
    """The shell command of a picture, as the docs show it."""
    return "tilec viz " + " ".join(PICTURES[name]) + f" -o docs/img/{name}"


def draw(name: str, out: Path) -> dict[str, Any]:
    """Draw picture ``name`` into ``out`` and return its record (:func:`record`)."""
    from tilec.app.cli import main

    buf, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)  # the examples' paths as the docs give them
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            status = main(["viz", *PICTURES[name], "--json", "-o", str(out)])
    finally:
        os.chdir(cwd)
    if status != 0:
        raise SystemExit(f"{command(name)} failed: {err.getvalue().strip()}")
    return record(name, json.loads(buf.getvalue()))


def record(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """What a picture shows: its command, the numbers its caption states, a digest of the data
    drawn (the file name and the size left out)."""
    drawn = {k: v for k, v in data.items() if k not in ("file",)}
    digest = hashlib.sha256(json.dumps(drawn, sort_keys=True).encode()).hexdigest()[:16]
    out: dict[str, Any] = {"command": command(name), "kind": data["kind"], "digest": digest}
    if "tiles" in data:
        out["tiles"] = len(data["tiles"])
    tl = data.get("timeline")
    if tl:
        busy = sum(b["end"] - b["start"] for b in tl["blocks"] if b["kind"] != "idle")
        out["timeline"] = {"sms": tl["sms"], "blocks": len(tl["blocks"]),
                           "makespan": round(tl["makespan"], 1),
                           "utilisation_percent": round(100 * busy / (tl["sms"] * tl["makespan"]))}
    if "accesses" in data:
        out["accesses"] = [{"tensor": a["tensor"], "kind": a["kind"], "verdict": a["verdict"],
                            "sectors": a["sectors"]} for a in data["accesses"]]
    return out


def records(out_dir: Path) -> dict[str, dict[str, Any]]:
    """Every picture drawn into ``out_dir``, with its record."""
    return {name: draw(name, out_dir / name) for name in PICTURES}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with docs/img/pictures.json; draw nothing into docs/img")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            now = records(Path(tmp))
        old = json.loads(RECORD.read_text()) if RECORD.exists() else {}
        stale = sorted(n for n in PICTURES if old.get(n) != now[n])
        for n in stale:
            print(f"docs/img/{n} is out of date: {json.dumps(now[n])}")
        return 1 if stale else 0
    now = records(IMG)
    RECORD.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
    print(f"drew {', '.join(PICTURES)} and wrote {RECORD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
