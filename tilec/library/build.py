"""``tilec build``: a schedule file as a standalone Python module with ``matmul(a, b, out=None)``
for any shape (see :mod:`tilec.library`).

The module holds, in this order: a docstring (what was built, its configurations and how shapes
find them), the data block (``NAME``, ``DTYPE``, ``KERNELS``: the generated kernel sources,
``MODEL``: the cost model's constants, ``HEURISTIC``: what the copy of gen's heuristic reads,
``CONFIGS`` (a lent config's ``menu``: the configs of its
tile with each decomposition the run-time re-choice may pick), ``TABLES``: one dispatch table per
card, :mod:`tilec.library.table`), the run-time
code (:mod:`tilec.library.checks`, :mod:`tilec.library.runtime`, :mod:`tilec.library.model`
and :mod:`tilec.library.ops`,
copied from their marker line on) and ``_setup()``, which registers the custom op.
"""

from __future__ import annotations

import json
import pprint
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilec.codegen.cuda.launch import NVCC_FLAGS
from tilec.codegen.cuda.printer.file import LAUNCH_ERRORS
from tilec.dtypes import TORCH_NAME
from tilec.errors import TilecError
from tilec.ir import ceil_div
from tilec.library.cuda import cuda_entry
from tilec.library.cuda_model import cuda_heuristic_data
from tilec.library.table import (
    CARDS,
    ConfigSet,
    build_tables,
    card_of,
    heuristic_data,
    tuned_shapes,
)

__all__ = ["BuildError", "Library", "build_library", "module_text"]



class BuildError(TilecError):
    """A library that cannot be built (target, card, printer) from these arguments."""


@dataclass
class Library:
    """What a built module embeds (the inputs of :func:`module_text`)."""

    name: str
    schedule: str
    target: str
    dtype: str  # torch dtype name of A and B
    out_dtype: str
    b_layout: str  # "kn" or "nk"
    kernels: dict[str, str]
    configs: list[dict[str, Any]]
    tables: dict[str, dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    model: dict[str, float] = field(default_factory=dict)  # the cost model's constants
    heuristic: dict[str, Any] | None = None  # what the module's copy of gen's heuristic reads


def _label(params: dict[str, Any]) -> str:
    """A config in a few words, as the heuristic's ``Config.short`` writes it.

    >>> _label({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8, "DECOMP": "splitk", "SPLITS": 4,
    ...         "SK_WAVES": 1, "FIXUP": "deterministic", "STAGES": 3, "WARPS": 8, "LOAD": "auto",
    ...         "SMS": 132, "DTYPE": "bf16"})
    '128x256x64 g8 splitk4 deterministic s3 w8 sms132'
    >>> _label({"BM": 128, "BN": 128, "BK": 64, "DECOMP": "splitk", "SPLITS": 16,
    ...         "FIXUP": "reduce_kernel", "CM": 2, "CN": 1, "SWAP_AB": 0})
    '128x128x64 splitk16 reduce_kernel c2x1'
    """
    out = [f"{params.get('BM')}x{params.get('BN')}x{params.get('BK')}"]
    if "GROUP_M" in params:
        out.append(f"g{params['GROUP_M']}")
    decomp = params.get("DECOMP")
    if decomp is not None:
        out.append(f"{decomp}{params.get('SPLITS', '') if decomp == 'splitk' else ''}"
                   f"{'w' + str(params.get('SK_WAVES')) if decomp == 'skpp' else ''}")
        if decomp != "dp" and "FIXUP" in params:
            out.append(str(params["FIXUP"]))
    out += [f"{p}{params[k]}" for k, p in (("STAGES", "s"), ("WARPS", "w")) if k in params]
    if params.get("LOAD", "auto") != "auto":
        out.append(str(params["LOAD"]))
    if (params.get("CM"), params.get("CN")) not in ((1, 1), (None, None), ("auto", "auto")):
        out.append(f"c{params.get('CM')}x{params.get('CN')}")
    if params.get("SWAP_AB") == 1:
        out.append("swap")
    if "SMS" in params:
        out.append(f"sms{params['SMS']}")
    return " ".join(out)


def _lower(path: Path, params: dict[str, Any], shape: tuple[int, int, int], target: str) -> Any:
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule

    loaded = load_schedule(path, dict(params, M=shape[0], N=shape[1], K=shape[2]),
                           target=target, tuned=False)
    return kernel_plan(loaded, target=target)


def _kernels_of(path: Path, params: dict[str, Any], shape: tuple[int, int, int], target: str
                ) -> tuple[Any, str]:
    """The plan of one config at ``shape`` (N and K rounded up to multiples of 16) and its
    kernel source, checked to be shape-generic. Triton: the source lowered at another shape (M
    odd, N and K doubled) must be the same text. CUDA: the text may hold closed variants of
    facts that held at ``shape`` (multicast forms, the exact stage release), which its launcher
    checks per launch (the general variant serves everywhere else; the paths of its
    decomposition are the rule's, whatever ``shape`` gives: printer/work.py's ``cuts_k``); the
    plan must carry its work-split rule (:func:`tilec.library.cuda.cuda_entry`)."""
    from tilec.runtime.build import kernel_source

    M, N, K = shape[0], ceil_div(shape[1], 16) * 16, ceil_div(shape[2], 16) * 16
    plan = _lower(path, params, (M, N, K), target)
    src = kernel_source(plan, target)
    if target == "cuda":
        return plan, src
    other = _lower(path, params, (2 * M + 1, 2 * N, 2 * K), target)
    if kernel_source(other, target) != src:
        raise BuildError(
            f"tilec build needs shape-generic kernels, but the {target} printer printed "
            f"different kernels for config {_label(params)} at {M}x{N}x{K} and "
            f"{2 * M + 1}x{2 * N}x{2 * K} (the problem size is baked in: issue 26)")
    return plan, src


def build_library(schedule: str | Path, overrides: dict[str, Any] | None = None, *,
                  target: str = "triton", rules: Sequence[str | Path] = (), card: str = "auto",
                  shapes: Sequence[tuple[int, int, int]] = (), max_size: int = 16384,
                  tuned: bool = True, name: str | None = None, jobs: int = 1) -> Library:
    """Resolve the tables and generate the kernels of a library (see the module docstring).

    ``rules``: rules files (``tilec sweep --export``); a file's ``device`` names its card, and
    with ``card="auto"`` each card with rules gets its own table beside the ``default`` one
    (rules without a device count for every card). ``shapes``: exact entries resolved at the
    shape itself. ``max_size``: the last size class (larger sizes share its bucket).
    ``jobs``: processes resolving the buckets and generating the configs' kernels.
    """
    from tilec.runtime.loader import load_schedule
    from tilec.runtime.records import default_records, schedule_key
    from tilec.runtime.rules import Rules

    if target not in ("triton", "cuda"):
        raise BuildError(f"tilec build --target must be triton or cuda but got {target!r}")
    if target == "cuda" and rules:
        raise BuildError("tilec build --target cuda takes no --rules: rules files hold Triton "
                         "sweeps (tilec sweep), whose configs are not the CUDA kernels'")
    if card not in ("auto", *CARDS):
        raise BuildError(f"--card must be auto, h100 or h200 but got {card!r}")
    if max_size < 1:
        raise BuildError(f"--max-size must be >= 1 but got {max_size}")
    path = Path(schedule)
    base = load_schedule(path, overrides, target=target, tuned=False)
    raw = dict(base.raw_params)
    key = schedule_key(path.read_text(), target)
    loaded_rules = []
    for f in rules:
        r = Rules.load(f)
        try:
            device = json.loads(Path(f).read_text()).get("device")
        except (OSError, ValueError, AttributeError):
            device = None
        loaded_rules.append((card_of(device), r))
    records = default_records() if tuned else None
    tuned_by_shape = tuned_shapes(records.path if records else None, key, raw)
    configs = ConfigSet()
    tables, notes = build_tables(raw, target=target, key=key, configs=configs,
                                 rules=loaded_rules, card=card, tuned=tuned_by_shape,
                                 shapes=shapes, max_size=max_size, jobs=jobs)
    # before the kernels (these are configs too)
    heuristic = (heuristic_data if target == "triton" else cuda_heuristic_data)(raw, configs)
    menus = configs.alternatives()
    kernels: dict[str, str] = {}
    by_source: dict[str, str] = {}

    def intern(src: str) -> str:
        if src not in by_source:
            by_source[src] = f"k{len(kernels)}"
            kernels[by_source[src]] = src
        return by_source[src]

    groups = _kernel_groups(configs.params, target)
    work = [(path, configs.params[g[0]], configs.first_shape[g[0]], target,
             [_split_knobs(configs.params[i]) for i in g]) for g in groups]
    if jobs > 1 and len(work) > 1:
        import concurrent.futures
        import multiprocessing

        with concurrent.futures.ProcessPoolExecutor(
                min(jobs, len(work)), mp_context=multiprocessing.get_context("spawn")) as pool:
            grouped = list(pool.map(_config_kernels, work))
    else:
        grouped = [_config_kernels(w) for w in work]
    made: list[dict[str, Any]] = [{} for _ in configs.params]
    for g, outs in zip(groups, grouped, strict=True):
        for i, one in zip(g, outs, strict=True):
            made[i] = one
    out_configs = []
    for i, (params, one) in enumerate(zip(configs.params, made, strict=True)):
        out_configs.append({
            "label": _label(params), "params": params, "tile": one["tile"],
            "kernel": intern(one["source"]), "tma": one["tma"], "facts": one["facts"],
            **({"cuda": one["cuda"]} if target == "cuda" else {})})
        if i in menus:
            out_configs[-1]["menu"] = menus[i]
    first = made[0]
    return Library(
        name=name or path.stem, schedule=path.name, target=target,
        dtype=first["dtype"], out_dtype=first["out_dtype"], b_layout=first["b_layout"],
        kernels=kernels, configs=out_configs,
        tables={c: t.data() for c, t in tables.items()}, notes=notes, model=model_constants(),
        heuristic=heuristic)


def model_constants() -> dict[str, float]:
    """The cost model's constants that the module's copy of the re-choice reads
    (tilec/library/runtime.py, ``_modeled``), taken from tilec's model here."""
    from tilec.runtime.rules import KEEP_MARGIN
    from tilec.transforms import cost_model as cm
    from tilec.transforms.heuristic import REDUCE_MARGIN

    return {"UNIT_OVERHEAD": cm.UNIT_OVERHEAD, "REDUCE_LAUNCH": cm.REDUCE_LAUNCH,
            "SK_L2_PENALTY": cm.SK_L2_PENALTY, "SK_L2_PENALTY_WIDE": cm.SK_L2_PENALTY_WIDE,
            "FIXUP_SCALE": cm.FIXUP_SCALE, "REDUCE_MARGIN": REDUCE_MARGIN,
            "KEEP_MARGIN": KEEP_MARGIN}


def _split_knobs(params: dict[str, Any]) -> tuple[Any, Any]:
    """The knobs a group's configs differ in (:func:`_kernel_groups`)."""
    return params.get("SPLITS"), params.get("SK_WAVES")


def _kernel_groups(params: list[dict[str, Any]], target: str) -> list[list[int]]:
    """The configs lowered together, as lists of indices (the first is lowered): CUDA configs
    that differ only in SPLITS and SK_WAVES share one kernel (the launch passes the work
    split's numbers), so each group is lowered once and each config's numbers come from its own
    rule (:func:`_config_kernels`); Triton configs one by one."""
    if target != "cuda":
        return [[i] for i in range(len(params))]
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(params):
        key = json.dumps({k: v for k, v in p.items() if k not in ("SPLITS", "SK_WAVES")},
                         sort_keys=True, default=str)
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _config_kernels(args: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The kernels of a group of configs (:func:`_kernel_groups`) and what the module records of
    each (plain data: it may come from another process): the first config lowered, the others'
    work-split rules its rule with their SPLITS and SK_WAVES."""
    from dataclasses import replace

    from tilec.library.cuda import cuda_numbers
    from tilec.transforms.plan import LoadKind

    path, params, shape, target, members = args
    plan, src = _kernels_of(path, params, shape, target)
    try:
        cuda = cuda_entry(plan) if target == "cuda" else None
    except TilecError as e:
        raise BuildError(f"config {_label(params)}: {e}") from None
    one = {"source": src, "tile": (plan.BM, plan.BN, plan.BK), "cuda": cuda,
           "tma": (plan.a.kind is LoadKind.TMA, plan.b.kind is LoadKind.TMA),
           "facts": facts_of(plan), "dtype": TORCH_NAME[plan.dtype],
           "out_dtype": TORCH_NAME[plan.c_dtype],
           "b_layout": "nk" if plan.b.transposed else "kn"}
    out = []
    for splits, waves in members:
        if (splits, waves) == _split_knobs(params):
            out.append(one)
        else:
            rule = replace(plan.split, splits=splits, sk_waves=waves)
            out.append({**one, "cuda": {**one["cuda"], "numbers": cuda_numbers(rule)}})
    return out


def facts_of(plan: Any) -> list[tuple[str, str]]:
    """The plan's facts (the conditions on M, N, K its facts variant assumes) as (text, Python
    condition) pairs; the tiles dividing M, N, K where the plan names none.

    >>> from tests.plans import plan
    >>> facts_of(plan(64, 64, 64, 32, 32, 16))[2]
    ('(K % 16) == 0', '((K % 16) == 0)')
    """
    import sympy

    # tilec.transforms.plan.SIZE_M, SIZE_N, SIZE_K (GENERIC.md): these symbols, equal to them
    SIZE_M, SIZE_N, SIZE_K = sympy.symbols("M N K", integer=True, positive=True)
    facts = getattr(plan, "facts", None)
    if facts is None:
        facts = tuple(sympy.Eq(sympy.Mod(s, t), 0) for s, t in
                      ((SIZE_M, plan.BM), (SIZE_N, plan.BN), (SIZE_K, plan.BK)))
    from tilec.codegen.triton.expr import TritonExprPrinter

    # Triton's // and % print as Python's: the printer emits them where both agree
    printer = TritonExprPrinter({SIZE_M: "M", SIZE_N: "N", SIZE_K: "K"})
    out = []
    for f in facts:
        expr = printer.doprint(f)
        out.append((expr[1:-1] if expr.startswith("(") and expr.endswith(")") else expr, expr))
    return out


def _string(src: str) -> str:
    """``src`` as a Python literal: a raw triple-quoted string where it can be one."""
    if "'''" not in src and not src.endswith("\\"):
        return "r'''" + src + "'''"
    return repr(src)


def _usage(lib: Library) -> str:
    lines = []
    for i, cfg in enumerate(lib.configs):
        counts = {c: sum(1 for x in t["grid"] if x == i) for c, t in lib.tables.items()}
        exact = {c: sum(1 for x, _ in t["exact"].values() if x == i)
                 for c, t in lib.tables.items()}
        where = "; ".join(f"{c}: {counts[c]} buckets" + (f", {exact[c]} exact shapes"
                                                          if exact[c] else "")
                          for c in lib.tables)
        lines.append(f"    {i:2d}  {cfg['label']}  (kernel {cfg['kernel']})  [{where}]")
    return "\n".join(lines)


_MARK = "# ---- the built module's code: copied from here on"


def _copied(name: str) -> str:
    """The part of tilec/library/NAME that the built module holds (after its marker line)."""
    text = (Path(__file__).parent / name).read_text()
    start = text.index(_MARK)
    return text[text.index("\n", start) + 1:]


def module_text(lib: Library, *, built: str | None = None) -> str:
    """The built module's source (see the module docstring)."""
    cuda = lib.target == "cuda"
    runtime = "\n\n".join(_copied(name) for name in (
        "checks.py", "runtime.py", "model.py", *(["cuda_model.py", "cuda.py"] if cuda else []),
        "ops.py"))
    any_table = next(iter(lib.tables.values()))
    top = any_table["classes"] - 1
    layout = "N x K" if lib.b_layout == "nk" else "K x N"
    gen = ("the shape's bucket answers" if not lib.heuristic else
           "tilec gen's CUDA heuristic runs at the shape (copied: _cuda_heuristic, its rules as "
           "shape tests, the weighed tiles' rates and the configs it may choose in HEURISTIC)"
           if cuda else
           "tilec gen's heuristic runs at the shape (copied: _heuristic, its tile rules, the "
           "large tiles' rates and each tile's configs in HEURISTIC)")
    doc = f'''"""{lib.name}: C = A @ B for any M, N, K, {lib.dtype}, B {layout} in memory.

Built by tilec build from {lib.schedule} (target {lib.target}) at {built or time.strftime(
    "%Y-%m-%d %H:%M UTC", time.gmtime())}. Standalone: needs torch and {
    "nvcc (each kernel is built on first use; build_kernels() builds them ahead) and an "
    "sm_90a GPU" if cuda else "Triton"}, not tilec.

    import {lib.name}
    c = {lib.name}.matmul(a, b)            # a: M x K, b: K x N; out= to write into a tensor
    print({lib.name}.explain(M, N, K))     # which config and variant run, and why
    {lib.name}.stats()                      # calls, kernels loaded, variants compiled
    TILEC_LOG=1                          # log each new shape's choice to stderr

How a shape finds its configuration, in tilec gen's order: the table of this card (TABLES; the
card is detected at run time from torch.cuda.get_device_name(), TILEC_CARD overrides, else
"default"; tables here: {", ".join(lib.tables)}) maps an exact (M, N, K) entry if it has one
(tuned records, rules of that shape, --shape); else a rules file's nearest rule within its
radius lends its tile, its decomposition re-chosen at the shape by tilec's cost model (copied:
_rechoose, MODEL) among the kernels of its "menu" (its own kept within MODEL["KEEP_MARGIN"] of
the model's best); else {gen}. Buckets: per dimension the class c with 2**(c-1) < x <= 2**c (0
for x <= 1), classes 0..{top} (larger sizes take class {top}), each resolved at build time at
its largest shape (2**c per dimension){" (used only where the heuristic's copy carries no tile)"
if lib.heuristic else ""}.
The config's kernel runs, its variant chosen by the facts that hold at the shape.

Configurations (index, label, kernels, how many buckets / exact shapes choose it):
{_usage(lib)}
"""
'''
    notes = "".join(f"# note: {n}\n" for n in lib.notes)
    data = [
        f"NAME = {lib.name!r}",
        f"SCHEDULE = {lib.schedule!r}",
        f"TARGET = {lib.target!r}",
        f"DTYPE = {lib.dtype!r}",
        f"OUT_DTYPE = {lib.out_dtype!r}",
        f"B_LAYOUT = {lib.b_layout!r}",
        f"CUDA_FLAGS = {NVCC_FLAGS!r}  # nvcc's flags for the CUDA kernels",
        "# the CUDA launchers' refusals (tilec/codegen/cuda/printer/file.py, LAUNCH_ERRORS)\n"
        "CUDA_ERRORS = " + pprint.pformat({rc: f"operand {op}: {what}" if op else what
                                           for rc, (op, what) in LAUNCH_ERRORS.items()},
                                          width=100),
        "# the cost model's constants (tilec.transforms.cost_model): the run-time re-choice\n"
        "MODEL = " + pprint.pformat(lib.model or model_constants(), width=100, sort_dicts=False),
        ("# gen's CUDA heuristic at the shape (_cuda_heuristic): SMs, weighed tiles, per tile\n"
         "# (BM, BN, BK, WARPS, STAGES, SWAP_AB) its configs in MENU order, and every config\n"
         "# the copy may choose by its knobs (_cuda_key)\n" if cuda else
         "# gen's heuristic at the shape (runtime's _heuristic): SMs, pins, large tiles, and\n"
         "# per tile (BM, BN, BK, STAGES, WARPS, GROUP_M, LOAD) its configs in MENU order\n")
        + "HEURISTIC = " + pprint.pformat(lib.heuristic, width=100, compact=True, sort_dicts=False),
        "CONFIGS = " + pprint.pformat(lib.configs, width=100, sort_dicts=False),
        "# one table per card: grid[(cm * classes + cn) * classes + ck] -> config index,\n"
        "# grid_why -> reason index; exact: (M, N, K) -> (config, reason)\n"
        "TABLES = " + pprint.pformat(lib.tables, width=100, compact=True, sort_dicts=False),
        "KERNELS = {\n" + "".join(f"{k!r}: {_string(v)},\n" for k, v in lib.kernels.items())
        + "}",
    ]
    return doc + notes + "\n".join(data) + "\n\n" + runtime + "\n\n_setup()\n"
