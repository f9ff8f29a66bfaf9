"""Pictures of a schedule (``tilec viz``): the tile grid per round, multicast groups, SM timeline.

Three pictures, each computed first as plain data (tested against the plan and the
derivation) and then drawn with matplotlib's Agg backend:

* :func:`tile_assignment` -- which CTA and cluster computes each C tile, per persistent round.
  From the lowered plan's :class:`~tilec.transforms.plan.TileOrder`: the tile of linear index
  ``t`` is ``(tile_m(t), tile_n(t))``, computed by CTA ``t % grid`` in round ``t // grid``; its
  cluster is ``CTA // cluster_size`` and its rank ``CTA % cluster_size``.
* :func:`multicast_patterns` -- per operand, the sharing groups of the cluster's ranks at each
  loop point of the derivation's table, with who issues (leader mode: the group's lowest rank;
  sliced mode: every member, one slice each) and the mask.
* :func:`timeline` -- per SM, the work units of the decomposition in execution order, as the
  cost model that chose the decomposition times them
  (:func:`~tilec.transforms.cost_model.simulate`): each unit its modeled cost, a partial tile
  (split-K part, Stream-K range) followed by its fix-up block, each SM's idle tail running to the
  makespan.

Example::

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.pipeline import lower
    >>> s = load_schedule("examples/gemm_basic.py", {"M": 256, "N": 384, "K": 128})
    >>> cells = tile_assignment(lower(s.fusion), grid=6, cluster_size=1)
    >>> [(c.tile_m, c.tile_n, c.cta, c.round) for c in cells[:4]]
    [(0, 0, 0, 0), (0, 1, 1, 0), (0, 2, 2, 0), (1, 0, 3, 0)]
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import matplotlib

matplotlib.use("Agg")  # no display: render to files only

from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tilec.errors import TilecError
from tilec.transforms.cost_model import Timeline, plan_timeline
from tilec.transforms.plan import KernelPlan

__all__ = [
    "KINDS", "Pattern", "ThreadAccess", "TileCell", "multicast_patterns",
    "render", "render_threads", "thread_map", "tile_assignment", "timeline",
]

KINDS = ("tiles", "multicast", "timeline", "all")
DEFAULT_SIZE = {"tiles": (1600, 1000), "multicast": (1400, 900), "timeline": (1600, 1000),
                "all": (1800, 2600), "threads": (1800, 1000)}
DPI = 100
UNIT_COLORS = {"dp": "#4c72b0", "splitk": "#dd8452", "streamk": "#55a868", "fixup": "#c44e52",
               "reduce": "#8172b3", "idle": "#d9d9d9"}
UNIT_LABELS = {"dp": "data-parallel tile", "splitk": "split-K part", "streamk": "Stream-K range",
               "fixup": "fix-up", "reduce": "reduce kernel", "idle": "idle tail"}


# -- data -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TileCell:
    t: int
    tile_m: int
    tile_n: int
    cta: int
    round: int
    cluster: int
    rank: int


def tile_assignment(plan: KernelPlan, grid: int, cluster_size: int) -> list[TileCell]:
    """Every alive C tile with the CTA, round, cluster and rank that compute it (by ``t``)."""
    if grid < 1 or cluster_size < 1 or grid % cluster_size:
        raise TilecError(f"viz: grid {grid} must be a positive multiple of the cluster size "
                         f"{cluster_size}")
    cells = []
    for t, (tm, tn) in plan.order.alive_tiles().items():
        cta = t % grid
        cells.append(TileCell(t, tm, tn, cta, t // grid, cta // cluster_size, cta % cluster_size))
    return cells


@dataclass
class Pattern:
    """One sharing pattern of an operand over the cluster's ranks, at ``points`` loop points."""

    point: dict[str, int]  # the first loop point (i_rt, cidx, ...) with this pattern
    count: int  # how many loop points of the table show it
    alive: list[bool]
    issue: list[bool]
    mask: list[int]
    slice_index: list[int | None]
    slice_count: list[int | None]

    def groups(self) -> list[list[int]]:
        """The sharing groups (ranks whose masks are equal), alive ranks only, lowest first."""
        seen: dict[int, list[int]] = {}
        for r, (live, m) in enumerate(zip(self.alive, self.mask, strict=True)):
            if live:
                seen.setdefault(m, []).append(r)
        return sorted(seen.values())


def multicast_patterns(derivation: Any) -> dict[str, list[Pattern]]:
    """Per operand, the distinct (alive, issue, mask, slice) patterns over ranks in the table."""
    out: dict[str, list[Pattern]] = {}
    cs = derivation.cluster_size
    for name, op in derivation.operands.items():
        by_point: dict[tuple[tuple[str, int], ...], list[Any]] = {}
        for row in op.table:
            key = tuple(sorted((k, v) for k, v in row.point.items() if k != "rank"))
            by_point.setdefault(key, [None] * cs)[row.point["rank"]] = row
        pats: dict[tuple[Any, ...], Pattern] = {}
        for key, rows in by_point.items():
            if any(r is None for r in rows):
                raise TilecError(f"viz: the multicast table of {name} misses ranks at {dict(key)}")
            sig = tuple((r.alive, r.issue, r.mask, r.slice_index, r.slice_count) for r in rows)
            if sig in pats:
                pats[sig].count += 1
            else:
                pats[sig] = Pattern(dict(key), 1, [r.alive for r in rows], [r.issue for r in rows],
                                    [r.mask for r in rows], [r.slice_index for r in rows],
                                    [r.slice_count for r in rows])
        out[name] = list(pats.values())
    return out


def timeline(plan: KernelPlan, sms: int) -> Timeline:
    """Per SM, the decomposition's units as the cost model runs them (see the module docstring)."""
    if sms < 1:
        raise TilecError(f"viz: --sms must be a positive integer but got {sms}")
    return plan_timeline(plan, sms)


# -- drawing ----------------------------------------------------------------------------------


def _cluster_color(cluster: int, rank: int, cluster_size: int) -> tuple[float, float, float]:
    """A hue per cluster (golden-ratio steps), lighter for higher ranks inside it."""
    hue = (cluster * 0.61803398875) % 1.0
    light = 0.42 + 0.33 * (rank / max(cluster_size - 1, 1) if cluster_size > 1 else 0.0)
    return colorsys.hls_to_rgb(hue, light, 0.75)


def _rounds_to_show(rounds: int, max_panels: int) -> list[int]:
    if rounds <= max_panels:
        return list(range(rounds))
    return [*range(max_panels - 1), rounds - 1]


def draw_tiles(fig: Any, plan: KernelPlan, cells: Sequence[TileCell], cluster_size: int,
               max_rounds: int = 4) -> None:
    import numpy as np

    tm, tn = plan.order.concrete().tiles_m, plan.order.concrete().tiles_n
    rounds = max((c.round for c in cells), default=0) + 1
    shown = _rounds_to_show(rounds, max_rounds)
    axes = fig.subplots(1, len(shown), squeeze=False)[0]
    label = tm * tn <= 400
    for ax, r in zip(axes, shown, strict=True):
        img = np.ones((tm, tn, 3))
        for c in cells:
            if c.round < r:
                img[c.tile_m, c.tile_n] = (0.82, 0.82, 0.82)
            elif c.round == r:
                img[c.tile_m, c.tile_n] = _cluster_color(c.cluster, c.rank, cluster_size)
        ax.imshow(img, interpolation="nearest", aspect="equal")
        now = [c for c in cells if c.round == r]
        by_pos = {(c.tile_m, c.tile_n): c.cluster for c in now}
        segs = []  # thick edges between tiles of different clusters
        for (m, n), cl in by_pos.items():
            for dm, dn, seg in ((0, 1, [(n + 0.5, m - 0.5), (n + 0.5, m + 0.5)]),
                                (1, 0, [(n - 0.5, m + 0.5), (n + 0.5, m + 0.5)])):
                if by_pos.get((m + dm, n + dn), cl) != cl:
                    segs.append(seg)
        if segs:
            from matplotlib.collections import LineCollection

            ax.add_collection(LineCollection(segs, colors="black", linewidths=1.6))
        if label:
            for c in now:
                ax.text(c.tile_n, c.tile_m, str(c.cta), ha="center", va="center", fontsize=7)
        ax.set_title(f"round {r}: {len(now)} tiles", fontsize=10)
        ax.set_xlabel("tile_n")
        ax.set_ylabel("tile_m")
    more = f" (rounds {', '.join(map(str, shown))} of {rounds})" if len(shown) < rounds else ""
    fig.suptitle(f"C tiles {tm} x {tn}: colour = cluster, shade = rank in cluster (cluster of "
                 f"{cluster_size}), number = CTA; grey = earlier rounds{more}", fontsize=11)


def draw_multicast(fig: Any, patterns: dict[str, list[Pattern]], cluster_size: int, mode: str,
                   max_patterns: int = 3) -> None:
    rows = [(name, p) for name, pats in patterns.items() for p in pats[:max_patterns]]
    axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
    for ax, (name, p) in zip(axes, rows, strict=True):
        groups = p.groups()
        gid = {r: i for i, g in enumerate(groups) for r in g}
        for r in range(cluster_size):
            live = p.alive[r]
            color = _cluster_color(gid[r], 0, 1) if live else (0.85, 0.85, 0.85)
            ax.add_patch(Rectangle((r + 0.08, 0.1), 0.84, 0.8, facecolor=color,
                                   edgecolor="black", linewidth=3.0 if p.issue[r] else 0.8,
                                   hatch=None if live else "//"))
            text = f"rank {r}\nmask {p.mask[r]:0{cluster_size}b}"
            if p.issue[r]:
                text += "\nissues" + (f" {p.slice_index[r]}/{p.slice_count[r]}"
                                      if mode == "sliced" else " box")
            elif not live:
                text += "\nnot alive"
            ax.text(r + 0.5, 0.5, text, ha="center", va="center", fontsize=8)
        if mode == "leader":
            for g in groups:
                for r in g[1:]:
                    ax.annotate("", xy=(r + 0.5, 0.92), xytext=(g[0] + 0.5, 0.92),
                                arrowprops=dict(arrowstyle="->", connectionstyle="arc3,rad=-0.3",
                                                color="black", lw=1.2))
        where = ", ".join(f"{k}={v}" for k, v in p.point.items())
        ax.set_title(f"operand {name}: {len(groups)} sharing group(s) at {where} "
                     f"(and {p.count - 1} more loop points alike)", fontsize=10)
        ax.set_xlim(0, cluster_size)
        ax.set_ylim(0, 1.35)
        ax.set_axis_off()
    fig.suptitle(f"TMA multicast on a cluster of {cluster_size} ({mode} mode): colour = sharing "
                 f"group, thick edge = issues, arrow = leader -> receivers", fontsize=11)


def draw_timeline(fig: Any, plan: KernelPlan, tl: Timeline) -> None:
    ax = fig.subplots(1, 1)
    label = len(tl.blocks) <= 400
    # one collection per kind: a patch per block took minutes at 100,000 tiles
    for kind in UNIT_COLORS:
        rects = [Rectangle((b.start, b.sm - 0.4), b.end - b.start, 0.8)
                 for b in tl.blocks if b.kind == kind]
        if rects:
            ax.add_collection(PatchCollection(
                rects, facecolor=UNIT_COLORS[kind], edgecolor="white", linewidth=0.4,
                hatch="//" if kind == "idle" else None))
    for b in tl.blocks:
        if label and b.kind in ("dp", "splitk", "streamk") and b.end - b.start > 0.04 * tl.makespan:
            ax.text((b.start + b.end) / 2, b.sm, f"t{b.tile}", ha="center", va="center",
                    fontsize=6, color="white")
    ax.set_xlim(0, max(tl.makespan, 1.0) * 1.01)
    ax.set_ylim(tl.sms - 0.5, -0.5)
    ax.set_xlabel("time (k-iterations of one CTA)")
    ax.set_ylabel("SM")
    handles = [Rectangle((0, 0), 1, 1, facecolor=UNIT_COLORS[k]) for k in UNIT_COLORS]
    ax.legend(handles, [UNIT_LABELS[k] for k in UNIT_COLORS], loc="upper right", fontsize=8)
    util = tl.busy() / (tl.sms * tl.makespan) if tl.makespan else 1.0
    ax.set_title(f"{plan.work.kind.value} ({plan.work.fixup.value} fix-up): {plan.tiles} tiles x "
                 f"{tl.k_iters} k-iterations on {tl.sms} SMs; makespan {tl.makespan:.1f}, "
                 f"utilisation {100 * util:.0f}%; fix-up = {tl.fixup:.1f} k-iterations",
                 fontsize=10)


def render(kind: str, out: str | Path, *, plan: KernelPlan, grid: int, cluster_size: int,
           derivation: Any = None, mode: str = "leader", sms: int = 132,
           size: tuple[int, int] | None = None, max_rounds: int = 4, fmt: str = "png") -> Any:
    """Draw ``kind`` (tiles, multicast, timeline, or all three in one picture) into ``out`` (a
    path or a binary stream) as ``fmt`` (:data:`FORMATS`)."""
    if kind not in KINDS:
        raise TilecError(f"viz: --kind must be one of {', '.join(KINDS)} but got {kind!r}")
    if kind == "multicast" and derivation is None:
        raise TilecError("viz: the schedule launches no cluster (cluster of 1 CTA): there is "
                         "no multicast to draw; use --kind tiles or timeline")
    w, h = check_size(size or DEFAULT_SIZE[kind])
    fig = Figure(figsize=(w / DPI, h / DPI), dpi=DPI, layout="constrained")
    if kind == "all":
        subs: Any = fig.subfigures(3, 1, height_ratios=[1.1, 0.9 if derivation else 0.2, 1.2])
        parts: list[tuple[str, Any]] = list(zip(("tiles", "multicast", "timeline"), subs,
                                                strict=True))
    else:
        parts = [(kind, fig)]
    for part, target in parts:
        if part == "tiles":
            draw_tiles(target, plan, tile_assignment(plan, grid, cluster_size), cluster_size,
                       max_rounds)
        elif part == "multicast":
            if derivation is None:
                ax = target.subplots(1, 1)
                ax.set_axis_off()
                ax.text(0.5, 0.5, "no cluster: nothing is multicast", ha="center", va="center")
            else:
                draw_multicast(target, multicast_patterns(derivation), cluster_size, mode)
        else:
            draw_timeline(target, plan, timeline(plan, sms))
    return save(fig, out, fmt)


# -- threads (SIMT schedules) -----------------------------------------------------------------


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


def thread_map(plan: Any, warps: Sequence[int] = (0, 1),
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
    nwarps = -(-threads // 32)
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


def draw_threads(fig: Any, maps: Sequence[ThreadAccess], max_cells: int = 64) -> None:
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
                    lanes = sorted({lane for w, lane in who if w == first})
                    text = str(lanes[0]) if len(lanes) == 1 else f"x{len(lanes)}"
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


def render_threads(out: str | Path, plan: Any, warps: Sequence[int] = (0, 1),
                   point: dict[str, int] | None = None,
                   size: tuple[int, int] | None = None, fmt: str = "png"
                   ) -> tuple[Any, list[ThreadAccess]]:
    """Draw :func:`thread_map` of a SIMT plan into ``out`` (PNG); returns the path and the data."""
    maps = thread_map(plan, warps, point)
    w, h = check_size(size or DEFAULT_SIZE["threads"])
    fig = Figure(figsize=(w / DPI, h / DPI), dpi=DPI, layout="constrained")
    draw_threads(fig, maps)
    return save(fig, out, fmt), maps


def save(fig: Figure, out: str | Path | BinaryIO, fmt: str = "png") -> Any:
    """Write ``fig`` as ``fmt`` (:data:`FORMATS`) to a path or a binary stream."""
    if isinstance(out, (str, Path)):
        out = Path(out)
    try:
        fig.savefig(out, dpi=DPI, format=fmt)
    except OSError as e:
        raise TilecError(f"viz: cannot write {str(out)!r}: {e.strerror or e}") from None
    return out


FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf", ".jpg": "jpeg", ".jpeg": "jpeg"}
MAX_TIMELINE_TILES = 65536  # tilec viz: a timeline of more is slow (10 s) and unreadable
MAX_SIDE = 8000  # pixels: past it matplotlib's buffers run into gigabytes


def picture_format(name: str) -> str:
    """The picture format of an output file name, by its extension (``-``: PNG on stdout).

    >>> picture_format("out.svg"), picture_format("timeline.JPG"), picture_format("-")
    ('svg', 'jpeg', 'png')
    """
    if name == "-":
        return "png"
    fmt = FORMATS.get(Path(name).suffix.lower())
    if fmt is None:
        raise TilecError(f"viz: cannot tell the picture format of {name!r} from its extension: "
                         f"name it {', '.join(FORMATS)} (or -o - for PNG on stdout)")
    return fmt


def check_size(size: tuple[int, int]) -> tuple[int, int]:
    """A picture size in pixels, each side in [200, :data:`MAX_SIDE`]."""
    w, h = size
    if w < 200 or h < 200:
        raise TilecError(f"viz: --size must be at least 200x200 pixels but got {w}x{h}")
    if w > MAX_SIDE or h > MAX_SIDE:
        raise TilecError(f"viz: --size must be at most {MAX_SIDE}x{MAX_SIDE} pixels but got "
                         f"{w}x{h}")
    return w, h
