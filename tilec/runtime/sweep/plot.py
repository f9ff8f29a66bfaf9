"""The seed's picture of a sweep: a map of the speedup over the baseline (x: the K-N pairs, y: M,
green where the tuned schedule gains, red where it loses, diverging around 1.0), and beside it
which decomposition won each shape.

:func:`figure` builds the matplotlib figure (Agg, no display) so that its axes can be checked;
:func:`render` writes it as a PNG.

Example::

    >>> from tilec.runtime.sweep.summary import ShapeResult
    >>> from tilec.runtime.sweep.store import Row
    >>> best = Row("s", 64, 1024, 2048, "tuned", "{}", "t", "dp", True, 1.0)
    >>> fig = figure([ShapeResult(64, 1024, 2048, best, 1.25, 0.9, 1, 0)])
    >>> [ax.get_xlabel() for ax in fig.axes[:2]]
    ['K-N pair (K, N)', 'K-N pair (K, N)']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: render to files only

import numpy as np
from matplotlib.colors import ListedColormap, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from tilec.runtime.sweep.summary import ShapeResult

__all__ = ["DECOMP_COLORS", "figure", "render"]

DPI = 100
DECOMP_COLORS = {"dp": "#4c72b0", "splitk": "#dd8452", "streamk": "#55a868", "dp_1sk": "#c44e52",
                 "sk2_dp": "#8172b3", "skpp": "#937860", "none": "#d9d9d9"}
_EXTRA = ("#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")


def _size_label(v: int) -> str:
    return f"{v // 1024}k" if v >= 1024 and v % 1024 == 0 else str(v)


def _grid(results: Sequence[ShapeResult]) -> tuple[list[int], list[tuple[int, int]]]:
    ms = sorted({r.M for r in results})
    kn = sorted({(r.K, r.N) for r in results})
    return ms, kn


def figure(results: Sequence[ShapeResult], *, title: str = "", baseline: str = "baseline"
           ) -> Figure:
    """The two panels as a Figure: speedup map (with its colour bar) and the winners."""
    ms, kn = _grid(results)
    iy = {m: i for i, m in enumerate(ms)}
    ix = {p: i for i, p in enumerate(kn)}
    speed = np.full((len(ms), len(kn)), np.nan)
    decomps = sorted({r.winner for r in results if r.winner})
    code = np.full((len(ms), len(kn)), np.nan)
    for r in results:
        y, x = iy[r.M], ix[(r.K, r.N)]
        if r.speedup is not None:
            speed[y, x] = r.speedup
        if r.winner:
            code[y, x] = decomps.index(r.winner)
    width = max(12.0, 0.42 * len(kn) + 4.0)
    height = max(9.0, 0.5 * len(ms) * 2 + 3.0)
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    ax, ax2 = fig.subplots(2, 1)
    finite = speed[np.isfinite(speed)]
    lo = float(finite.min()) if finite.size else 1.0
    hi = float(finite.max()) if finite.size else 1.0
    norm = TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 0.99), vmax=max(hi, 1.01))
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#eeeeee")
    im = ax.imshow(np.ma.masked_invalid(speed), cmap=cmap, norm=norm, aspect="auto",
                   origin="lower", interpolation="nearest")
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.01)
    cb.set_label("speedup (baseline time / tuned time)")
    if len(ms) * len(kn) <= 600:
        for (y, x), v in np.ndenumerate(speed):
            if math.isfinite(v):
                r, g, b, _ = im.to_rgba(v)
                light = 0.299 * r + 0.587 * g + 0.114 * b > 0.5  # dark text on light cells
                ax.text(x, y, f"{v:.2f}", ha="center", va="center", fontsize=6,
                        color="black" if light else "white")
    colors = [DECOMP_COLORS.get(d, _EXTRA[i % len(_EXTRA)]) for i, d in enumerate(decomps)]
    cmap2 = ListedColormap(colors or ["#d9d9d9"]).with_extremes(bad="#eeeeee")
    ax2.imshow(np.ma.masked_invalid(code), cmap=cmap2, vmin=-0.5,
               vmax=max(len(decomps), 1) - 0.5, aspect="auto", origin="lower",
               interpolation="nearest")
    ax2.legend(handles=[Patch(color=c, label=d) for d, c in zip(decomps, colors, strict=True)],
               title="fastest decomposition", loc="upper left", bbox_to_anchor=(1.005, 1.0),
               fontsize=8)
    for a, what in ((ax, f"speedup of the tuned schedule over {baseline}"),
                    (ax2, "which decomposition won each shape")):
        a.set_xticks(range(len(kn)))
        a.set_xticklabels([f"{_size_label(k)},{_size_label(n)}" for k, n in kn], rotation=90,
                          fontsize=7)
        a.set_yticks(range(len(ms)))
        a.set_yticklabels([str(m) for m in ms], fontsize=7)
        a.set_xlabel("K-N pair (K, N)")
        a.set_ylabel("M")
        a.set_title(what, fontsize=10)
    if title:
        fig.suptitle(title, fontsize=12)
    return fig


def render(results: Sequence[ShapeResult], path: str | Path, **kw: str) -> tuple[int, int]:
    """Write the picture to ``path`` (PNG); its size in pixels."""
    fig = figure(results, **kw)
    fig.savefig(path, dpi=DPI, format="png")
    w, h = fig.get_size_inches()
    return round(w * DPI), round(h * DPI)
