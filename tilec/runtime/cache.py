"""tilec's folder on disk (no sympy here: a hit must be cheap).

Everything lives under ``$TILEC_CACHE`` (default: the user's cache folder, ``~/.cache/tilec`` on
Linux, from platformdirs; ``TILEC_CACHE=off`` disables it): the tuned records
(:mod:`tilec.runtime.records`), the generated Triton files, and ``tilec masks --json`` of a
schedule (:class:`~tilec.runtime.session.Session` reads and writes it). A multicast derivation
is keyed by the schedule file's text, the ``--param`` overrides, the mode and a hash of tilec's
own source, so a change to any of them derives anew. (A schedule file that imports a helper
module of its own is keyed by its own text only: after editing such a helper, remove
``$TILEC_CACHE/multicast``.)

Example::

    >>> key = masks_key("examples/seed004_persistent_cluster.py", {"CN": 2}, "leader", "0" * 64)
    >>> key is None or (key.parent.name, key.suffix)
    ('multicast', '.json')
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import platformdirs

__all__ = ["code_fingerprint", "masks_key", "read", "root", "write"]


def root() -> Path | None:
    """``$TILEC_CACHE``, else the user's cache folder for tilec; None for ``TILEC_CACHE=off``."""
    value = os.environ.get("TILEC_CACHE") or platformdirs.user_cache_dir("tilec", appauthor=False)
    return None if value == "off" else Path(value)


def code_fingerprint() -> str:
    """A hash of tilec's own source: cached results are valid only for the code that made them
    (a :class:`~tilec.runtime.session.Session` computes it once)."""
    h = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]  # all of tilec, not only runtime/
    for f in sorted(package.rglob("*.py")):
        h.update(f.relative_to(package).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def masks_key(path: str | Path, overrides: dict[str, Any], mode: str, fingerprint: str
              ) -> Path | None:
    """Where ``tilec masks --json`` of this schedule, overrides and mode is kept, for the code
    of ``fingerprint`` (:func:`code_fingerprint`)."""
    base = root()
    if base is None:
        return None
    h = hashlib.sha256()
    for part in (Path(path).read_bytes(), json.dumps(overrides, sort_keys=True, default=str).encode(),
                 mode.encode(), fingerprint.encode()):
        h.update(part)
        h.update(b"\0")
    return base / "multicast" / f"{h.hexdigest()}.json"


def read(key: Path | None) -> str | None:
    """The JSON text kept at ``key``; None when there is none (or it is torn)."""
    if key is None or not key.is_file():
        return None
    try:
        text = key.read_text()
    except OSError:
        return None
    return text if text.startswith("{") and text.endswith("}") else None  # torn file: miss


def write(key: Path | None, text: str) -> None:
    """Keep ``text`` at ``key`` (written whole: a temporary file renamed onto it)."""
    if key is None:
        return
    try:
        key.parent.mkdir(parents=True, exist_ok=True)
        tmp = key.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(key)
    except OSError:
        pass  # a read-only cache directory: no cache, same result
