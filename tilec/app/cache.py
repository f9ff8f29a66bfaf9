"""tilec's on-disk cache of derived results (no sympy here: a hit must be cheap).

Everything lives under ``$TILEC_CACHE`` (default ``~/.cache/tilec``; ``TILEC_CACHE=off``
disables the multicast cache). A multicast derivation is keyed by the schedule file's text,
the ``--param`` overrides, the mode and a hash of tilec's own source, so a change to any of
them derives anew. (A schedule file that imports a helper module of its own is keyed by its
own text only: after editing such a helper, remove ``$TILEC_CACHE/multicast``.)

Example::

    >>> key = masks_key("examples/seed004_persistent_cluster.py", {"CN": 2}, "leader")
    >>> key is None or (key.parent.name, key.suffix)
    ('multicast', '.json')
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

_FINGERPRINT: list[str] = []


def root() -> Path | None:
    value = os.environ.get("TILEC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tilec")
    return None if value == "off" else Path(value)


def code_fingerprint() -> str:
    """A hash of tilec's own source: cached results are valid only for the code that made them."""
    if not _FINGERPRINT:
        h = hashlib.sha256()
        package = Path(__file__).resolve().parents[1]  # all of tilec, not only app/
        for f in sorted(package.rglob("*.py")):
            h.update(f.relative_to(package).as_posix().encode())
            h.update(f.read_bytes())
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


def masks_key(path: str | Path, overrides: dict[str, Any], mode: str) -> Path | None:
    """Where ``tilec masks --json`` of this schedule, overrides and mode is kept."""
    base = root()
    if base is None:
        return None
    h = hashlib.sha256()
    for part in (Path(path).read_bytes(), json.dumps(overrides, sort_keys=True, default=str).encode(),
                 mode.encode(), code_fingerprint().encode()):
        h.update(part)
        h.update(b"\0")
    return base / "multicast" / f"{h.hexdigest()}.json"


def read(key: Path | None) -> str | None:
    if key is None or not key.is_file():
        return None
    try:
        text = key.read_text()
    except OSError:
        return None
    return text if text.startswith("{") and text.endswith("}") else None  # torn file: miss


def write(key: Path | None, text: str) -> None:
    if key is None:
        return
    try:
        key.parent.mkdir(parents=True, exist_ok=True)
        tmp = key.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(key)
    except OSError:
        pass  # a read-only cache directory: no cache, same result


def masks_json(path: str | Path, overrides: dict[str, Any] | None = None, mode: str = "leader") -> str:
    """``tilec masks --json`` as text, kept on disk between runs (derived on a miss only)."""
    key = masks_key(path, dict(overrides or {}), str(getattr(mode, "value", mode)))
    text = read(key)
    if text is None:
        from tilec.app.loader import derive_from_file

        text = json.dumps(derive_from_file(path, overrides, mode).to_json(), separators=(",", ":"))
        write(key, text)
    return text
