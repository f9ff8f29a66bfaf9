"""Tuned choices on disk: one SQLite file, ``$TILEC_CACHE/tuned.sqlite``.

``tilec tune`` records, for a schedule (identified by its file's text and the target) and the
parameters the user fixed (the shape among them), the knob values that won; ``tilec gen`` of the
same schedule with the same fixed parameters reads them back (:class:`Records`). The newest
record wins; ``TILEC_CACHE=off`` turns recording and lookup off.

Example::

    >>> import tempfile, pathlib
    >>> rec = Records(pathlib.Path(tempfile.mkdtemp()) / "tuned.sqlite")
    >>> key = schedule_key("PARAMS = dict(M=64)", "triton")
    >>> rec.record(key, {"M": 64, "BM": "auto"}, {"BM": 32}, ms=0.5, device="test")
    >>> rec.lookup(key, {"M": 64, "BM": "auto"})
    {'BM': 32}
    >>> rec.lookup(key, {"M": 128, "BM": "auto"}) is None
    True
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tilec.runtime import cache

__all__ = ["Records", "default_records", "fixed_params", "schedule_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tuned (
    schedule TEXT NOT NULL,     -- schedule_key(file text, target)
    fixed    TEXT NOT NULL,     -- JSON of the parameters the user fixed (shape included)
    choice   TEXT NOT NULL,     -- JSON of the knob values that won
    ms       REAL,
    device   TEXT,
    made     REAL NOT NULL      -- seconds since the epoch
);
CREATE INDEX IF NOT EXISTS tuned_key ON tuned (schedule, fixed);
"""


def schedule_key(text: str, target: str) -> str:
    """A schedule file's identity: the hash of its text and the target."""
    return hashlib.sha256(f"{target}\n{text}".encode()).hexdigest()[:24]


def fixed_params(params: Mapping[str, Any]) -> str:
    """The canonical text of the parameters a user fixed: all but those left ``"auto"``."""
    kept = {k: v for k, v in params.items() if not (isinstance(v, str) and v.lower() == "auto")}
    return json.dumps(kept, sort_keys=True, default=str)


class Records:
    """The tuned-records file at ``path`` (created on first write)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=30)
        con.executescript(_SCHEMA)
        return con

    def record(self, key: str, params: Mapping[str, Any], choice: Mapping[str, Any], *,
               ms: float | None = None, device: str | None = None) -> None:
        """Remember that ``choice`` won for the schedule ``key`` at ``params``."""
        with self._connect() as con:
            con.execute("INSERT INTO tuned VALUES (?, ?, ?, ?, ?, ?)",
                        (key, fixed_params(params), json.dumps(dict(choice), sort_keys=True),
                         ms, device, time.time()))
        con.close()

    def lookup(self, key: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """The newest choice recorded for the schedule ``key`` at ``params``, or None."""
        if not self.path.exists():
            return None
        try:
            con = sqlite3.connect(self.path, timeout=30)
            row = con.execute("SELECT choice FROM tuned WHERE schedule = ? AND fixed = ? "
                              "ORDER BY made DESC, rowid DESC LIMIT 1",
                              (key, fixed_params(params))).fetchone()
            con.close()
        except sqlite3.Error:
            return None  # an unreadable file is no record
        return dict(json.loads(row[0])) if row else None


def default_records() -> Records | None:
    """``$TILEC_CACHE/tuned.sqlite``, or None when ``TILEC_CACHE=off``."""
    root = cache.root()
    return None if root is None else Records(root / "tuned.sqlite")
