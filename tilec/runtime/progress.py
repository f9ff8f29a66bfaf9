"""Progress on stderr for long runs: bars (:func:`bar`, tqdm's) for autotuning, sweeps, checks
and benches, and :class:`Status`, one line saying what a step of unknown length is doing.

Both draw only where someone watches: off when the stream is not a terminal; ``TILEC_PROGRESS=0``
turns them off everywhere, ``TILEC_PROGRESS=1`` forces them on (for logs). When off, iterating a
bar is iterating its items; nothing is written.

Example::

    >>> out = io.StringIO()
    >>> [x * x for x in bar(range(3), "squares", stream=out, enabled=True)]
    [0, 1, 4]
    >>> "squares" in out.getvalue() and "3/3" in out.getvalue()
    True
    >>> list(bar(range(3), stream=io.StringIO()))  # not a TTY: silent
    [0, 1, 2]
"""

from __future__ import annotations

import io  # noqa: F401  (the doctests write to io.StringIO)
import os
import sys
import threading
import time
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["Status", "bar", "enabled_for"]

X = TypeVar("X")


def enabled_for(stream: TextIO) -> bool:
    """Whether progress should draw on ``stream``: ``TILEC_PROGRESS`` if set, else ``isatty()``."""
    env = os.environ.get("TILEC_PROGRESS", "").strip()
    if env in ("0", "false", "no", "off"):
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def bar(items: Iterable[X] | None = None, label: str = "", *, total: int | None = None,
        unit: str = "it", stream: TextIO | None = None, enabled: bool | None = None
        ) -> tqdm[X]:
    """``for x in bar(items, "tuning"):`` draws ``tuning:  38%|###  | 3/8 [00:12<00:20, ...]``
    on stderr (``set_postfix_str`` shows the current item); without ``items``, a bar of
    ``total`` driven by ``update(n)``. ``enabled=None``: :func:`enabled_for` the stream."""
    from tqdm import tqdm  # (not at import: the command starts without it)

    out = stream or sys.stderr
    on = enabled_for(out) if enabled is None else enabled
    return tqdm(items, desc=label, total=total, unit=unit, file=out, disable=not on,
                mininterval=0.1, dynamic_ncols=True)


class Status:
    """``with Status("explain: deriving the multicast forms"):`` says on stderr what a long step
    is doing and for how long (``tilec: explain: deriving the multicast forms... 12s``), from
    ``after`` seconds on, where bars draw (a terminal, or ``TILEC_PROGRESS=1``); the line is
    cleared when the block ends. A step of unknown length has no bar: this line is its progress
    (tqdm draws only when its caller reports progress, which such a step cannot).

    >>> out = io.StringIO()
    >>> with Status("deriving", stream=out, enabled=True, after=0.0, every=0.01):
    ...     time.sleep(0.05)
    >>> out.getvalue().split(chr(13))[1].startswith("tilec: deriving... 0s")
    True
    """

    def __init__(self, label: str, *, stream: TextIO | None = None, enabled: bool | None = None,
                 after: float = 2.0, every: float = 0.5) -> None:
        self.label = label
        self.stream: TextIO = stream or sys.stderr
        self.enabled = enabled_for(self.stream) if enabled is None else enabled
        self.after, self.every = after, every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = 0

    def __enter__(self) -> Status:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="tilec-status", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self._drawn:
                self.stream.write("\r" + " " * self._drawn + "\r")
                self.stream.flush()

    def _run(self) -> None:
        t0 = time.monotonic()
        if self._stop.wait(self.after):
            return
        while True:
            text = f"tilec: {self.label}... {time.monotonic() - t0:.0f}s"
            self.stream.write("\r" + text + " " * max(self._drawn - len(text), 0))
            self.stream.flush()
            self._drawn = max(self._drawn, len(text))
            if self._stop.wait(self.every):
                return


def skipped(b: tqdm[Any], n: int = 1) -> None:
    """Count ``n`` items done by an earlier run (a resumed sweep): shown done, left out of the
    rate, which measures this run."""
    if b.disable:
        return  # (a disabled tqdm keeps no counts)
    b.n += n
    b.initial += n
    b.refresh()
