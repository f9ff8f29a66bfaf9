"""A small tqdm: progress bars for long runs (autotuning, benchmark sweeps), drawn on stderr.

A bar draws only where someone watches: it is off when its stream is not a terminal, and
``TILEC_PROGRESS=0`` turns it off everywhere (``TILEC_PROGRESS=1`` forces it on, for logs).
When off, iterating a :class:`Progress` is iterating its items; nothing is written.

Example::

    >>> out = io.StringIO()
    >>> [x * x for x in Progress(range(3), "squares", stream=out, enabled=True)]
    [0, 1, 4]
    >>> out.getvalue().splitlines()[-1].split(" 0s")[0]
    'squares [########################] 3/3'
    >>> list(Progress(range(3), stream=io.StringIO()))  # not a TTY: silent
    [0, 1, 2]

A bar driven by events (``update``) with a ``unit`` shows the rate and the time left::

    >>> bar = Progress(range(100), "sweep", stream=out, enabled=True, unit="shapes")
    >>> bar.t0 -= 60.0  # as if a minute had passed
    >>> bar.update(25)
    >>> out.getvalue().rsplit("\\r", 1)[-1].split("  ")[1].strip()
    '25.0 shapes/min, 3m00s left'

"""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Generic, TextIO, TypeVar

__all__ = ["Progress", "Status", "enabled_for"]

X = TypeVar("X")
WIDTH = 24


def enabled_for(stream: TextIO) -> bool:
    """Whether a bar should draw on ``stream``: ``TILEC_PROGRESS`` if set, else ``isatty()``."""
    env = os.environ.get("TILEC_PROGRESS", "").strip()
    if env in ("0", "false", "no", "off"):
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress(Generic[X]):
    """``for x in Progress(items, "tuning"):`` draws ``tuning [#####...] 3/8 12s  <postfix>``.

    ``set_postfix(text)`` shows what the current item is (a config name, a size); ``write(line)``
    prints a line above the bar without breaking it.
    """

    def __init__(self, items: Iterable[X], label: str = "", *, stream: TextIO | None = None,
                 enabled: bool | None = None, unit: str = "", initial: int = 0) -> None:
        self.items = list(items)
        self.unit = unit  # when set, the bar shows the rate (per minute) and the time left
        self.initial = initial  # items done before this run began (a resumed sweep)
        self.label = label
        self.stream: TextIO = stream or sys.stderr
        self.enabled = enabled_for(self.stream) if enabled is None else enabled
        self.postfix = ""
        self.done = initial
        self.t0 = time.monotonic()
        self._last_len = 0

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[X]:
        n = len(self.items)
        try:
            for i, x in enumerate(self.items):
                self.done = i
                self._draw()
                yield x
            self.done = n
            self._draw()
        finally:
            if self.enabled:
                self.stream.write("\n")
                self.stream.flush()

    def update(self, done: int) -> None:
        """Set how many items are done (a bar driven by events rather than by iteration)."""
        self.done = done
        self._draw()

    def close(self) -> None:
        """End the bar's line (an event-driven bar; iterating ends it by itself)."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def rate(self) -> float | None:
        """Items per minute done in this run (None before the first)."""
        elapsed = time.monotonic() - self.t0
        now = self.done - self.initial
        return now / elapsed * 60.0 if now > 0 and elapsed > 0 else None

    def set_postfix(self, text: str) -> None:
        self.postfix = text
        self._draw()

    def write(self, line: str) -> None:
        """Print ``line`` on its own (above the bar when drawing)."""
        if self.enabled:
            self.stream.write("\r" + " " * self._last_len + "\r")
        self.stream.write(line + "\n")
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        n = len(self.items)
        fill = WIDTH * self.done // max(n, 1)
        text = (f"{self.label} [{'#' * fill}{'.' * (WIDTH - fill)}] {self.done}/{n} "
                f"{time.monotonic() - self.t0:.0f}s")
        rate = self.rate() if self.unit else None
        if rate:
            left = (n - self.done) / rate * 60.0
            text += f"  {rate:.1f} {self.unit}/min, {_duration(left)} left"
        if self.postfix:
            text += f"  {self.postfix}"
        pad = max(self._last_len - len(text), 0)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._last_len = len(text)


class Status:
    """``with Status("explain: deriving the multicast forms"):`` says on stderr what a long step
    is doing and for how long (``tilec: explain: deriving the multicast forms... 12s``), from
    ``after`` seconds on, where bars draw (a terminal, or ``TILEC_PROGRESS=1``); the line is
    cleared when the block ends. A step of unknown length has no bar: this line is its progress.

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


def _duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h10m``."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"
