"""The picture of a thread-level (SIMT) schedule (``tilec viz --kind threads``): which lane of
which warp touches which element of each global access, computed first as data
(:func:`thread_map`, every lane evaluated from the plan's index) and then drawn
(:func:`draw_threads`) with the pictures' size and format rules of :mod:`tilec.app.viz`."""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from matplotlib.figure import Figure

from tilec.app.viz import DEFAULT_SIZE, DPI, check_size, save
from tilec.errors import TilecError
from tilec.ir import ceil_div

if TYPE_CHECKING:
    from matplotlib.figure import SubFigure

    from tilec.transforms.simt.lower import SimtPlan

__all__ = ["ThreadAccess", "draw_threads", "render_threads", "thread_map"]


@dataclass
class ThreadAccess:
    """Which lane of which warp touches which element of one global access of a SIMT kernel.

    ``cells[(row, col)]`` lists the ``(warp, lane)`` pairs that read or write element
    ``tensor[row, col]`` (row-major, ``cols`` per row) at the loop point ``point`` (block 0, every
    loop and register index 0 unless given) for the warps drawn.
    """

    tensor: str
    kind: str
    what: str
    rows: int
    cols: int
    width: int
    warps: tuple[int, ...]
    point: dict[str, int]
    cells: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)
    sectors: dict[int, int] = field(default_factory=dict)  # warp -> distinct 32-byte sectors
    verdict: str = ""


def thread_map(plan: SimtPlan, warps: Sequence[int] = (0, 1),
               point: dict[str, int] | None = None) -> list[ThreadAccess]:
    """One :class:`ThreadAccess` per global access of a :class:`~tilec.transforms.simt.lower.SimtPlan`
    (the seed's coalescing pictures as data; every lane evaluated from the plan's index).

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.simt.lower import lower_simt
    >>> plan = lower_simt(load_schedule("examples/coalescing_naive.py", {"M": 64, "N": 64, "K": 64}).fusion)
    >>> a = thread_map(plan, warps=(0,))[0]
    >>> a.tensor, sorted(a.cells)[:3], a.cells[(1, 0)], a.sectors
    ('A', [(0, 0), (1, 0), (2, 0)], [(0, 1)], {0: 32})
    """
    import numpy as np
    import sympy

    from tilec.proofs import evaluate_grid
    from tilec.transforms.simt.coalescing import analyze

    dx, dy, dz = plan.block
    threads = dx * dy * dz
    nwarps = ceil_div(threads, 32)
    bad = [w for w in warps if not 0 <= w < nwarps]
    if bad or not warps:
        raise TilecError(f"viz: warps must be in 0..{nwarps - 1} (the block has {threads} "
                         f"threads) but got {list(warps)}")
    bounds = plan.access_bounds()
    given = {str(k): v for k, v in (point or {}).items()}
    names = {str(s) for s in bounds}
    unknown = sorted(set(given) - names)
    if unknown:
        raise TilecError(f"viz: unknown loop symbol(s) {unknown}; the kernel's are {sorted(names)}")
    shapes = {"A": (plan.M, plan.K), "B": (plan.K, plan.N), "C": (plan.M, plan.N)}
    reports = analyze(plan, prove=False)
    tids = np.array([t for w in warps for t in range(32 * w, min(32 * w + 32, threads))])
    tsyms = list(plan.thread_axes())
    coords = [tids % dx, (tids // dx) % dy, tids // (dx * dy)]
    out = []
    for acc, rep in zip(plan.global_accesses(), reports, strict=True):
        rest = sorted(acc.index.free_symbols - set(tsyms), key=str)
        at = {s: given.get(str(s), 0) for s in rest}
        for s, v in at.items():
            if not 0 <= v < int(bounds[s]):
                raise TilecError(f"viz: {s}={v} is out of its range 0..{int(bounds[s]) - 1}")
        idx = acc.index.xreplace({s: sympy.Integer(v) for s, v in at.items()})
        vals = evaluate_grid(idx, tsyms, coords)  # exact, at each thread drawn
        vals = np.broadcast_to(vals, tids.shape)
        rows, cols = shapes[acc.tensor]
        ta = ThreadAccess(acc.tensor, acc.kind, acc.what, rows, cols, acc.width, tuple(warps),
                          {str(s): v for s, v in at.items()}, verdict=rep.verdict)
        secs: dict[int, set[int]] = {}
        for tid, e in zip(tids.tolist(), vals.tolist(), strict=True):
            for j in range(acc.width):
                r, c = divmod(e + j, cols)
                if r < rows:  # a predicated-off lane past the last row touches nothing
                    ta.cells.setdefault((r, c), []).append((tid // 32, tid % 32))
                    secs.setdefault(tid // 32, set()).add((4 * (e + j)) // 32)
        ta.sectors = {w: len(v) for w, v in secs.items()}
        out.append(ta)
    return out


def _warp_color(warp: int, shade: float = 0.0) -> tuple[float, float, float]:
    hue = (0.58 + warp * 0.61803398875) % 1.0
    return colorsys.hls_to_rgb(hue, 0.55 + 0.3 * shade, 0.7)


def draw_threads(fig: Figure | SubFigure, maps: Sequence[ThreadAccess], max_cells: int = 64) -> None:
    """One panel per access: the touched window of the tensor (whole 32-byte sectors wide), a
    cell per element, coloured by the lowest warp that touches it (lighter when several of its
    lanes share it), labelled with the lane (``xN``: N lanes; ``+``: other warps drawn touch it
    too); thick vertical lines are 32-byte sector boundaries along the row."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    axes = fig.subplots(1, len(maps), squeeze=False)[0]
    for ax, ta in zip(axes, maps, strict=True):
        if not ta.cells:
            ax.set_axis_off()
            ax.set_title(f"{ta.tensor} {ta.kind}: no element at this point", fontsize=10)
            continue
        r0 = min(r for r, _ in ta.cells)
        r1 = min(max(r for r, _ in ta.cells), r0 + max_cells - 1)
        c0 = min(c for _, c in ta.cells)
        c0 -= c0 % 8  # whole sectors (the tensor's rows start 32-byte aligned when cols % 8 == 0)
        c1 = min(max(c for _, c in ta.cells), c0 + max_cells - 1)
        c1 = min(c1 + 7 - (c1 - c0) % 8, ta.cols - 1)
        nr, nc = r1 - r0 + 1, c1 - c0 + 1
        img = np.ones((nr, nc, 3))
        for (r, c), who in ta.cells.items():
            if r0 <= r <= r1 and c0 <= c <= c1:
                first = min(w for w, _ in who)
                lanes = {lane for w, lane in who if w == first}
                img[r - r0, c - c0] = _warp_color(first, 1.0 if len(lanes) > 1 else 0.0)
        ax.imshow(img, interpolation="nearest", aspect="auto",
                  extent=(c0 - 0.5, c1 + 0.5, r1 + 0.5, r0 - 0.5))
        ax.set_box_aspect(min(max(nr / nc, 0.35), 3.0))  # a row of 32 lanes stays readable
        if nr * nc <= max_cells * max_cells:
            fs = max(3.0, min(8.0, 300 / max(nr, nc)))
            for (r, c), who in ta.cells.items():
                if r0 <= r <= r1 and c0 <= c <= c1:
                    first = min(w for w, _ in who)
                    own = sorted({lane for w, lane in who if w == first})
                    text = str(own[0]) if len(own) == 1 else f"x{len(own)}"
                    if any(w != first for w, _ in who):
                        text += "+"
                    ax.text(c, r, text, ha="center", va="center", fontsize=fs)
        for x in range(c0, c1 + 2, 8):
            ax.axvline(x - 0.5, color="black", linewidth=1.4)
        ax.set_xlim(c0 - 0.5, c1 + 0.5)
        ax.set_ylim(r1 + 0.5, r0 - 0.5)
        for axis, lo, hi in ((ax.xaxis, c0, c1), (ax.yaxis, r0, r1)):
            if hi - lo < 16:
                axis.set_ticks(range(lo, hi + 1))
            else:
                axis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(f"column of {ta.tensor} ({ta.cols} per row)")
        ax.set_ylabel(f"row of {ta.tensor}")
        secs = ", ".join(f"warp {w}: {n}" for w, n in sorted(ta.sectors.items()))
        ax.set_title(f"{ta.tensor} {ta.kind}, {32 * ta.width}-bit per lane: {ta.verdict}\n"
                     f"32-byte sectors per request: {secs}", fontsize=9)
    where = ", ".join(f"{k}={v}" for k, v in maps[0].point.items()) if maps else ""
    fig.suptitle(f"which lane of which warp touches which element: warps "
                 f"{', '.join(map(str, maps[0].warps)) if maps else ''}"
                 f"{' at ' + where if where else ''}\ncolour = warp (light: shared by several "
                 f"lanes), number = lane, xN = N lanes, + = other warps too; thick lines = "
                 f"32-byte sectors", fontsize=10)


def render_threads(out: str | Path, plan: SimtPlan, warps: Sequence[int] = (0, 1),
                   point: dict[str, int] | None = None,
                   size: tuple[int, int] | None = None, fmt: str = "png"
                   ) -> tuple[Path | BinaryIO, list[ThreadAccess]]:
    """Draw :func:`thread_map` of a SIMT plan into ``out`` (PNG); returns the path and the data."""
    maps = thread_map(plan, warps, point)
    w, h = check_size(size or DEFAULT_SIZE["threads"])
    fig = Figure(figsize=(w / DPI, h / DPI), dpi=DPI, layout="constrained")
    draw_threads(fig, maps)
    return save(fig, out, fmt), maps
