"""The results of a sweep on disk: one SQLite file, one row per (shape, config) as it finishes.

Only the driver process writes (the workers send their rows back), one transaction per row, in
WAL mode: a sweep killed at any moment (``kill -9``, a GPU fault, a power cut of the driver's
process) keeps every row that was committed, and a rerun skips them (:meth:`Store.done`), so it
loses at most the configs that were in flight. A config that failed (wrong result, compile
error, timeout, crashed worker) has its row too, with ``ok = 0`` and the error: it is done.

A *sweep* is a schedule (its content: :func:`~tilec.runtime.records.schedule_key`), the target,
the parameters the user fixed and the baseline; its id (:func:`sweep_id`) keys the rows, so one
file can hold several sweeps and a changed schedule file never reuses an old file's timings.

Example::

    >>> import tempfile, pathlib
    >>> st = Store(pathlib.Path(tempfile.mkdtemp()) / "s.sqlite")
    >>> sid = st.begin("k1", "gemm.py", "triton", {"DTYPE": "fp16"}, {"DECOMP": "splitk"})
    >>> st.add(Row(sid, 64, 64, 64, "tuned", '{"BM": 64}', "64x64", "dp", True, 0.5))
    >>> st.done(sid) == {(64, 64, 64, "tuned", '{"BM": 64}')}
    True
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from tilec.errors import TilecError

__all__ = ["ROLES", "Row", "Store", "canonical", "sweep_id"]

ROLES = ("tuned", "baseline", "cublas")  # a config of the space, the baseline, torch.matmul

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sweeps (
    id       TEXT PRIMARY KEY,  -- sweep_id(schedule key, target, fixed, baseline)
    schedule TEXT NOT NULL,     -- schedule_key(file text, target)
    path     TEXT NOT NULL,     -- the schedule file when the sweep began
    target   TEXT NOT NULL,
    fixed    TEXT NOT NULL,     -- JSON: the parameters the user fixed (the shape aside)
    baseline TEXT NOT NULL,     -- JSON: the baseline's parameters
    made     REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    sweep   TEXT NOT NULL,
    M INTEGER NOT NULL, N INTEGER NOT NULL, K INTEGER NOT NULL,
    role    TEXT NOT NULL,      -- tuned | baseline | cublas
    config  TEXT NOT NULL,      -- JSON: the knob values measured ({} for cublas)
    label   TEXT NOT NULL,      -- Config.short(), 'baseline ...', 'cuBLAS'
    decomp  TEXT,               -- the decomposition of a tuned config
    ok      INTEGER NOT NULL,   -- built, correct (and timed on a GPU)
    ms      REAL,
    tflops  REAL,
    rel_err REAL,
    error   TEXT,
    seconds REAL,               -- wall time of the task (build, check, timing)
    device  TEXT,
    worker  TEXT,               -- host:pid of the process that measured it
    made    REAL NOT NULL,
    PRIMARY KEY (sweep, M, N, K, role, config)
);
"""


def canonical(values: Mapping[str, Any]) -> str:
    """The JSON text that identifies a set of parameter values (sorted keys)."""
    return json.dumps(dict(values), sort_keys=True, default=str)


def sweep_id(schedule: str, target: str, fixed: Mapping[str, Any],
             baseline: Mapping[str, Any]) -> str:
    """The id of a sweep: the schedule's content key, the target, the fixed parameters and the
    baseline (a sweep with another baseline or other fixed parameters is another sweep)."""
    text = "\n".join((schedule, target, canonical(fixed), canonical(baseline)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Row:
    """One measured (shape, config): what :meth:`Store.add` writes."""

    sweep: str
    M: int
    N: int
    K: int
    role: str
    config: str
    label: str
    decomp: str | None
    ok: bool
    ms: float | None = None
    tflops: float | None = None
    rel_err: float | None = None
    error: str | None = None
    seconds: float | None = None
    device: str | None = None
    worker: str | None = None
    made: float = 0.0

    @property
    def key(self) -> tuple[int, int, int, str, str]:
        return (self.M, self.N, self.K, self.role, self.config)

    @property
    def params(self) -> dict[str, Any]:
        return dict(json.loads(self.config))


_COLUMNS = [f.name for f in fields(Row)]


class Store:
    """The results file at ``path`` (created, with its tables, when opened)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            if self.path.parent != Path(""):
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self.con.execute("PRAGMA journal_mode=WAL")
            # NORMAL: a committed row survives the death of this process (not of the machine)
            self.con.execute("PRAGMA synchronous=NORMAL")
            self.con.executescript(_SCHEMA)
        except sqlite3.Error as e:
            raise TilecError(f"--db {str(self.path)!r}: cannot open it as a SQLite results "
                             f"file: {e}") from None

    def close(self) -> None:
        self.con.close()

    def begin(self, schedule: str, path: str, target: str, fixed: Mapping[str, Any],
              baseline: Mapping[str, Any]) -> str:
        """Register the sweep (once) and return its id."""
        sid = sweep_id(schedule, target, fixed, baseline)
        self.con.execute("INSERT OR IGNORE INTO sweeps VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (sid, schedule, path, target, canonical(fixed), canonical(baseline),
                          time.time()))
        return sid

    def add(self, row: Row) -> None:
        """Commit ``row``; a row already there (the same shape and config) is kept."""
        values = (*astuple(row)[:-1], row.made or time.time())
        self.con.execute(f"INSERT OR IGNORE INTO results ({', '.join(_COLUMNS)}) VALUES "
                         f"({', '.join('?' * len(_COLUMNS))})", values)

    def done(self, sweep: str) -> set[tuple[int, int, int, str, str]]:
        """The (M, N, K, role, config) already measured in ``sweep``."""
        cur = self.con.execute("SELECT M, N, K, role, config FROM results WHERE sweep = ?",
                               (sweep,))
        return {(r[0], r[1], r[2], r[3], r[4]) for r in cur}

    def rows(self, sweep: str) -> Iterator[Row]:
        """Every row of ``sweep``, in the order they finished."""
        cur = self.con.execute(f"SELECT {', '.join(_COLUMNS)} FROM results WHERE sweep = ? "
                               f"ORDER BY made, rowid", (sweep,))
        for r in cur:
            yield Row(*r[:8], bool(r[8]), *r[9:])  # type: ignore[call-arg]

    def sweeps(self) -> list[dict[str, Any]]:
        """What the file holds: one dict per sweep, with its row count."""
        cur = self.con.execute(
            "SELECT s.id, s.path, s.target, s.fixed, s.baseline, s.schedule, "
            "(SELECT COUNT(*) FROM results r WHERE r.sweep = s.id) FROM sweeps s ORDER BY made")
        return [dict(zip(("id", "path", "target", "fixed", "baseline", "schedule", "rows"), r,
                         strict=True)) for r in cur]
