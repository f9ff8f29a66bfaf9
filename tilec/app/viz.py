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

The picture of a thread-level schedule (which lane touches which element) is
:mod:`tilec.app.viz_threads`.

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import matplotlib

matplotlib.use("Agg")  # no display: render to files only

from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tilec.errors import TilecError
from tilec.transforms.cost_model import Timeline, plan_timeline
from tilec.transforms.plan import KernelPlan

if TYPE_CHECKING:
    from matplotlib.figure import SubFigure

    from tilec.transforms.multicast.derive import MulticastDerivation

__all__ = [
    "KINDS", "Pattern", "TileCell", "multicast_patterns", "render", "tile_assignment",
    "timeline",
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


def multicast_patterns(derivation: MulticastDerivation) -> dict[str, list[Pattern]]:
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


def draw_tiles(fig: Figure | SubFigure, plan: KernelPlan, cells: Sequence[TileCell], cluster_size: int,
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


def draw_multicast(fig: Figure | SubFigure, patterns: dict[str, list[Pattern]], cluster_size: int, mode: str,
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


def draw_timeline(fig: Figure | SubFigure, plan: KernelPlan, tl: Timeline) -> None:
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
           derivation: MulticastDerivation | None = None, mode: str = "leader", sms: int = 132,
           size: tuple[int, int] | None = None, max_rounds: int = 4, fmt: str = "png"
           ) -> Path | BinaryIO:
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


def save(fig: Figure, out: str | Path | BinaryIO, fmt: str = "png") -> Path | BinaryIO:
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
