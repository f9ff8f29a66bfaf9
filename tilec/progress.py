"""A small tqdm: progress bars for long runs (autotuning, benchmark sweeps), drawn on stderr.

A bar draws only where someone watches: it is off when its stream is not a terminal, and
``TILEC_PROGRESS=0`` turns it off everywhere (``TILEC_PROGRESS=1`` forces it on, for logs).
When off, iterating a :class:`Progress` is iterating its items; nothing is written.

Example::

    >>> import io
    >>> out = io.StringIO()
    >>> [x * x for x in Progress(range(3), "squares", stream=out, enabled=True)]
    [0, 1, 4]
    >>> out.getvalue().splitlines()[-1].split(" 0s")[0]
    'squares [########################] 3/3'
    >>> list(Progress(range(3), stream=io.StringIO()))  # not a TTY: silent
    [0, 1, 2]
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Generic, TextIO, TypeVar

__all__ = ["Progress", "enabled_for"]

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
                 enabled: bool | None = None) -> None:
        self.items = list(items)
        self.label = label
        self.stream: TextIO = stream or sys.stderr
        self.enabled = enabled_for(self.stream) if enabled is None else enabled
        self.postfix = ""
        self.done = 0
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
        if self.postfix:
            text += f"  {self.postfix}"
        pad = max(self._last_len - len(text), 0)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._last_len = len(text)
