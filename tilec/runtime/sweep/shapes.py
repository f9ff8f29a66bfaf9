"""The shapes a sweep measures: a file of ``M N K`` lines or a grid.

A **grid** names each dimension's values, dimensions separated by spaces or ``;``::

    M=16,128,1024 N=4096 K=1024..16384x2

``A..BxF`` is the geometric range ``A, A*F, A*F*F, ...`` up to ``B`` (``x2`` doubles);
``A..B+S`` the arithmetic one. The shapes are every combination, M slowest.

A **file** holds one shape per line: ``M N K``, ``MxNxK`` or ``M,N,K`` (a CSV with a header
``M,N,K`` too); ``#`` starts a comment. A JSON file holds a list of ``[M, N, K]`` or
``{"M": .., "N": .., "K": ..}``.

Example::

    >>> parse_shapes("M=16,32 N=1024 K=1024..4096x2")
    [(16, 1024, 1024), (16, 1024, 2048), (16, 1024, 4096), (32, 1024, 1024), (32, 1024, 2048), (32, 1024, 4096)]
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from tilec.errors import TilecError

__all__ = ["Shape", "parse_shapes"]

Shape = tuple[int, int, int]
_RANGE = re.compile(r"^(\d+)\.\.(\d+)(?:([x+])(\d+))?$")


class ShapeError(TilecError):
    """A ``--shapes`` grid or file that does not say which shapes to measure."""


def parse_shapes(spec: str) -> list[Shape]:
    """The shapes of ``spec`` (a grid, or the path of a shapes file), duplicates removed."""
    if Path(spec).is_file():
        shapes = _read_file(Path(spec))
    elif "=" in spec:
        shapes = _grid(spec)
    else:
        raise ShapeError(f"--shapes {spec!r} is neither a file nor a grid like "
                         f"'M=16,128 N=1024..16384x2 K=4096'")
    if not shapes:
        raise ShapeError(f"--shapes {spec!r} holds no shape")
    for s in shapes:
        if min(s) < 1:
            raise ShapeError(f"--shapes: every size must be a positive integer but got "
                             f"M={s[0]}, N={s[1]}, K={s[2]}")
    return list(dict.fromkeys(shapes))


def _grid(spec: str) -> list[Shape]:
    dims: dict[str, list[int]] = {}
    for part in re.split(r"[\s;]+", spec.strip()):
        name, sep, values = part.partition("=")
        name = name.strip().upper()
        if not sep or name not in ("M", "N", "K"):
            raise ShapeError(f"--shapes grid: {part!r} must look like M=16,32 or N=1024..16384x2")
        if name in dims:
            raise ShapeError(f"--shapes grid: {name} is given twice")
        dims[name] = [v for item in values.split(",") if item for v in _values(name, item)]
    missing = [d for d in "MNK" if d not in dims]
    if missing:
        raise ShapeError(f"--shapes grid {spec!r} gives no values for {', '.join(missing)}")
    return list(itertools.product(dims["M"], dims["N"], dims["K"]))


def _values(name: str, item: str) -> list[int]:
    if item.isdigit():
        return [int(item)]
    m = _RANGE.match(item)
    if not m:
        raise ShapeError(f"--shapes grid: {name} value {item!r} must be an integer or a range "
                         f"A..BxF (geometric) or A..B+S (arithmetic)")
    lo, hi, op, step = int(m[1]), int(m[2]), m[3] or "x", int(m[4] or 2)
    if lo < 1 or hi < lo or (op == "x" and step < 2) or (op == "+" and step < 1):
        raise ShapeError(f"--shapes grid: {name} range {item!r} needs 1 <= A <= B and a factor "
                         f">= 2 (x) or a step >= 1 (+)")
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v = v * step if op == "x" else v + step
    return out


def _read_file(path: Path) -> list[Shape]:
    text = path.read_text()
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ShapeError(f"--shapes {str(path)!r} is not JSON: {e}") from None
        items = data.get("shapes", data) if isinstance(data, dict) else data
        try:
            return [(int(s["M"]), int(s["N"]), int(s["K"])) if isinstance(s, dict)
                    else (int(s[0]), int(s[1]), int(s[2])) for s in items]
        except (KeyError, IndexError, TypeError, ValueError):
            raise ShapeError(f"--shapes {str(path)!r} must hold a list of [M, N, K] or "
                             f"{{\"M\": .., \"N\": .., \"K\": ..}}") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line or line.replace(" ", "").upper() == "M,N,K":
            continue
        parts = [p for p in re.split(r"[\s,x]+", line) if p]
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ShapeError(f"{path}:{n}: a shape line must be 'M N K' (or MxNxK, M,N,K) but "
                             f"got {line!r}")
        out.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return out
