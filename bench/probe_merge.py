"""Merge the runs of one device call's ``bench/dispatch_cuda.py --candidates`` probes into one
JSON under bench/results: per run ``TAG.log`` and, where it came back from the device,
``TAG/dispatch_cuda_*.json`` (the device returns a bounded number of files; a run whose JSON did
not come back is read from its log's table: name, M, N, K, x_cublas, correct, ms, ms_cublas,
config, variant, and the candidate's knobs).

    python bench/probe_merge.py --out bench/results/cuda_probe_X.json --script S --tree T DIR:TAG ...
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import sys
from pathlib import Path

ROW = re.compile(r"^(?:  \+ (?P<knobs>\S+)|(?P<name>\w+))\s+(?P<M>\d+)\s+(?P<N>\d+)\s+(?P<K>\d+)\s+"
                 r"(?P<x>[\d.]+)\s+(?P<ok>yes|no)\s+(?P<ms>[\d.]+)\s+(?P<cb>[\d.]+)\s+(?P<rest>.*)$")


def params_of(label: str, knobs: str | None = None) -> dict:
    """The knobs a config label (``Config.short()`` plus `` sms132``) names, with a candidate's
    own knobs (``EPILOGUE=tma``) on top.

    >>> params_of("168x64x64 g8 dp s7 w8 sms132 swap")["SWAP_AB"]
    1
    >>> p = params_of("128x256x64 g8 splitk16 reduce_kernel s4 w12 sms132 c2x1")
    >>> p["SPLITS"], p["FIXUP"], p["CM"], p["STAGES"]
    (16, 'reduce_kernel', 2, 4)
    """
    words = label.split()
    bm, bn, bk = (int(x) for x in words[0].split("x"))
    out: dict = {"BM": bm, "BN": bn, "BK": bk, "DECOMP": "dp", "SPLITS": 1, "SK_WAVES": 1,
                 "FIXUP": "deterministic", "CM": 1, "CN": 1, "SWAP_AB": 0}
    for w in words[1:]:
        if m := re.fullmatch(r"splitk(\d+)", w):
            out.update(DECOMP="splitk", SPLITS=int(m[1]))
        elif m := re.fullmatch(r"skppw(\d+)", w):
            out.update(DECOMP="skpp", SK_WAVES=int(m[1]))
        elif w in ("deterministic", "atomic", "reduce_kernel"):
            out["FIXUP"] = w
        elif m := re.fullmatch(r"c(\d+)x(\d+)", w):
            out.update(CM=int(m[1]), CN=int(m[2]))
        elif m := re.fullmatch(r"(g|s|w|sms)(\d+)", w):
            out[{"g": "GROUP_M", "s": "STAGES", "w": "WARPS", "sms": "SMS"}[m[1]]] = int(m[2])
        elif w == "swap":
            out["SWAP_AB"] = 1
        elif w not in ("dp",):
            out["DECOMP"] = w
    for kv in (knobs or "").split(","):
        k, _, v = kv.partition("=")
        if k and k not in out:
            out[k] = int(v) if v.isdigit() else v
    return out


def from_log(text: str) -> tuple[list[dict], list[dict]]:
    """The rows and candidate rows of a dispatch_cuda.py log's table."""
    rows: list[dict] = []
    cands: list[dict] = []
    name = None
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        config, _, variant = m["rest"].partition(" / ")
        r = {"M": int(m["M"]), "N": int(m["N"]), "K": int(m["K"]), "x_cublas": float(m["x"]),
             "correct": m["ok"] == "yes", "ms": float(m["ms"]), "ms_cublas": float(m["cb"]),
             "config": config.strip(), "variant": variant.split()[0] if variant else None,
             "params": params_of(config.strip(), m["knobs"]), "from_log": True}
        if m["knobs"]:
            cands.append({"name": name, "candidate": m["knobs"], **r})
        else:
            name = m["name"]
            rows.append({"name": name, "path": "cuda", **r})
    return rows, cands


def merge(parts: list[tuple[Path, str]]) -> dict:
    out: dict = {"rows": [], "candidates": [], "runs": []}
    for d, tag in parts:
        found = sorted(glob.glob(str(d / tag / "dispatch_cuda_*.json")))
        if found:
            data = json.loads(Path(found[0]).read_text())
            rows, cands = data["rows"], data.get("candidates", [])
            for k in ("device", "date", "clocks", "sms", "rounds", "method"):
                out.setdefault(k, data.get(k))
        else:
            rows, cands = from_log((d / f"{tag}.log").read_text())
        for r in rows + cands:
            r["run"] = tag
        out["rows"] += rows
        out["candidates"] += cands
        out["runs"].append({"tag": tag, "source": "json" if found else "log",
                            "shapes": sorted({r["name"] for r in rows})})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("parts", nargs="+", help="DIR:TAG, a device result folder and a run's tag")
    p.add_argument("--out", required=True)
    p.add_argument("--script", required=True)
    p.add_argument("--tree", required=True)
    a = p.parse_args(argv)
    parts = [(Path(s.rsplit(":", 1)[0]), s.rsplit(":", 1)[1]) for s in a.parts]
    data = merge(parts)
    data = {"device": data.pop("device", None), "date": data.pop("date", None),
            "script": a.script, "tree": a.tree, **data}
    Path(a.out).write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {a.out}: {len(data['rows'])} rows, {len(data['candidates'])} candidates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
