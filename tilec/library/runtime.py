"""The run-time half of a built library: this file's text is copied into every module that
``tilec build`` writes, after the data block (``NAME``, ``KERNELS``, ``CONFIGS``, ``TABLES``, ...),
followed by :mod:`tilec.library.ops` (the custom ops; the module ends with its ``_setup()``). It
imports torch (and Triton, lazily, through the kernels), never
tilec: the built module runs where tilec is not installed.

Per call, :func:`matmul` checks its tensors (:mod:`tilec.library.checks`, copied ahead of this
file), finds the configuration of the shape (:func:`_choose`: an exact entry of the card's
table, else a rules file's rule, a nearest one's decomposition re-chosen at the shape by a copy
of tilec's cost model; else a copy of gen's heuristic at the shape, both in
:mod:`tilec.library.model`, copied after this file; else the shape's bucket), loads that configuration's kernel on first
use (the embedded source written to a cache folder and imported: Triton's JIT compiles each
variant on its first launch and keeps it in memory and in its own disk cache), and runs it. What
was chosen for a shape is remembered (one dictionary look-up on later calls).

Read as a tilec module this file defines functions only; the data names it reads exist in the
built module alone.
"""
# ruff: noqa: F821  (the data block's names: NAME, KERNELS, CONFIGS, TABLES, ... )

from __future__ import annotations

# ruff: noqa: I001 (the imports above the marker below are tilec's; the built module copies
# the text after it, so an import sorted past the marker would break it)

from tilec.library.checks import TilecError, _check, _check_overlap, _on_cpu_ok, _operands

# ---- the built module's code: copied from here on (tilec.library.build.module_text) ----
import hashlib
import math
import os
import sys
import time

import torch

_MEMO_MAX = 4096  # shapes remembered (memo, fast), at most


class _State:
    """Everything the module remembers between calls, in one place: ``clear()`` forgets it all
    (a fresh process's state; compiled kernels stay in Triton's caches). The dictionaries are
    only ever cleared in place, never replaced, so a name bound to one (``_FAST_GET``) stays
    valid."""

    __slots__ = ("memo", "loaded", "seen", "logged", "fact_fns", "fast", "card", "stats", "libs")

    def __init__(self) -> None:
        self.memo: dict = {}  # (M, N, K) -> _Choice, at most _MEMO_MAX shapes
        self.loaded: dict = {}  # runner -> the imported kernel module (CUDA: config's launch)
        self.libs: dict = {}  # CUDA: kernel id -> its nvcc-built launcher (ctypes function)
        self.seen: dict = {}  # _variant() -> seconds its first call took (compile included)
        self.logged: set = set()  # shapes TILEC_LOG has printed
        self.fact_fns: dict = {}  # a fact's Python condition -> its compiled lambda
        self.fast: dict = {}  # _key() of a checked call -> a function doing what it did
        self.card: str | None = None  # the card's table name, detected once
        self.stats: dict = {"calls": 0, "kernels_loaded": 0, "variants": 0, "compile_s": 0.0,
                            "copies": 0}

    def clear(self) -> None:
        """Forget every remembered choice, kernel, variant, fast path and the card; zero counts."""
        for table in (self.memo, self.loaded, self.seen, self.logged, self.fact_fns, self.fast,
                      self.libs):
            table.clear()
        self.card = None
        self.stats.update((k, 0.0 if k == "compile_s" else 0) for k in self.stats)


_STATE = _State()
_STATS = _STATE.stats  # the counters, bound once (the hot paths count calls)


# --------------------------------------------------------------------------------------------
# dispatch
# --------------------------------------------------------------------------------------------


def card() -> str:
    """The name of the table this process uses: ``TILEC_CARD`` if set, else the CUDA card's
    (``h100``, ``h200``) when the build embedded a table for it, else ``default``."""
    if _STATE.card is None:
        name = os.environ.get("TILEC_CARD", "").lower()
        if not name and torch.cuda.is_available():
            dev = torch.cuda.get_device_name().lower()
            name = next((c for c in TABLES if c != "default" and c in dev), "")
        _STATE.card = name if name in TABLES else "default"
    return _STATE.card


def shape_class(x: int) -> int:
    """The bucket of a size: ``c`` with ``2**(c-1) < x <= 2**c`` (0 for 0 and 1)."""
    return (x - 1).bit_length() if x > 1 else 0


class _Choice:
    """What runs for one shape: the config, its kernel, the facts that hold, and why."""

    __slots__ = ("config", "kernel", "facts", "variant", "why", "where", "copy_note", "runner")

    def __init__(self, config, kernel, facts, variant, why, where, copy_note):
        self.config, self.kernel, self.facts, self.variant = config, kernel, facts, variant
        self.why, self.where, self.copy_note = why, where, copy_note
        self.runner = config if TARGET == "cuda" else kernel  # what _kernel loads, by key


def _facts(cfg: dict, M: int, N: int, K: int) -> tuple:
    """The facts the config's specialized variant assumes (the plan's, embedded as Python
    conditions on M, N, K), each with whether it holds at (M, N, K)."""
    out, fns = [], _STATE.fact_fns
    for text, expr in cfg["facts"]:
        fn = fns.get(expr)
        if fn is None:
            fn = fns[expr] = eval(f"lambda M, N, K: bool({expr})")  # noqa: S307
        out.append((text, fn(M, N, K)))
    return tuple(out)


def _rows_aligned(N: int, K: int) -> tuple:
    """Whether A's and B's rows (in the layout the kernel reads) are 16-byte multiples."""
    size = _DTYPE.itemsize
    return (K * size) % 16 == 0, ((K if B_LAYOUT == "nk" else N) * size) % 16 == 0


def _choose(M: int, N: int, K: int) -> _Choice:
    table = TABLES[card()]
    exact = table["exact"].get((M, N, K))
    ruled = None if exact is not None else _nearest_rule(table, M, N, K)
    gen = _heuristic(M, N, K) if exact is None and ruled is None else None
    how = ""
    if exact is not None:
        index, why, where = exact[0], table["reasons"][exact[1]], f"exact entry {M}x{N}x{K}"
    elif ruled is not None:
        index, why, near = ruled
        where = "the rules file's nearest rule, looked up at this shape"
        if near:  # its tile lent, its decomposition re-chosen at the shape
            index, how = _rechoose(index, M, N, K, MODEL["KEEP_MARGIN"])
    elif gen is not None:  # gen's heuristic at the shape, where the module carries its tile
        (index, why), where = gen, "the heuristic at this shape (the module's copy)"
    else:
        top = table["classes"] - 1
        cm, cn, ck = (min(shape_class(x), top) for x in (M, N, K))
        flat = (cm * table["classes"] + cn) * table["classes"] + ck
        index, why = table["grid"][flat], table["reasons"][table["grid_why"][flat]]
        where = (f"bucket (M, N, K) classes ({cm}, {cn}, {ck}): "
                 + ", ".join(_bucket_text(d, c, top) for d, c in zip("MNK", (cm, cn, ck))))
    cfg = CONFIGS[index]
    kernel = cfg["kernel"]
    unaligned = [f"{name}'s rows ({rows} x {_DTYPE.itemsize} bytes)"
                 for name, rows, ok, tma in zip(("A", "B"), (K, K if B_LAYOUT == "nk" else N),
                                                _rows_aligned(N, K), cfg["tma"])
                 if tma and not ok]
    copy_note = (" and ".join(unaligned) + " are not 16-byte multiples, which TMA cannot load in "
                 "place: the kernel's launcher takes them its own way (see its run())"
                 if unaligned else "")
    facts = _facts(cfg, M, N, K)
    return _Choice(index, kernel, facts, _variant(kernel, facts, M, N, K),
                   f"{why}; {how}" if how else why, where, copy_note)


def _nearest_rule(table: dict, M: int, N: int, K: int) -> tuple | None:
    """gen's rules step at M x N x K (tilec.runtime.rules.Rules.lookup): the first rules file
    with a rule of this shape, or one within its radius (euclidean distance of the log2 sizes),
    the nearest; its config and why. None where no file answers, or where the answering rule
    leaves a knob to gen's heuristic (the heuristic's copy or the bucket answers)."""
    at = (math.log2(M), math.log2(N), math.log2(K))
    for f in table.get("rules", ()):
        if not f["rules"]:
            continue
        hit = next((r for r in f["rules"] if (r[0], r[1], r[2]) == (M, N, K)), None)
        near = hit is None
        if hit is not None:
            text = f"rules {f['name']}: exact shape {M}x{N}x{K}"
        else:
            d, i = min((math.dist((math.log2(r[0]), math.log2(r[1]), math.log2(r[2])), at), i)
                       for i, r in enumerate(f["rules"]))
            if d > f["radius"]:
                continue
            hit = f["rules"][i]
            text = (f"rules {f['name']}: nearest tuned shape {hit[0]}x{hit[1]}x{hit[2]} "
                    f"(log2 distance {d:.2f} <= radius {f['radius']:.2g})")
        return (hit[3], text, near) if hit[3] >= 0 else None
    return None


def _variant(kernel: str, facts: tuple, M: int, N: int, K: int) -> tuple:
    """What one compiled kernel serves, as the kernel's launcher keys its compiles: the kernel,
    which facts hold (EVEN_M, EVEN_N, EVEN_K: one flag each), int64 offsets, the leading
    dimensions' divisibility by 16 (Triton specializes integer arguments on it) for operands
    in the kernel's layout, and whether A's and B's rows are 16-byte multiples (TMA's rule)."""
    lda, ldb, ldc = K, (K if B_LAYOUT == "nk" else N), N
    wide = max(M * lda, (N if B_LAYOUT == "nk" else K) * ldb, M * ldc) + K + N >= 2 ** 31
    return (kernel, tuple(held for _, held in facts), wide,
            lda % 16 == 0, ldb % 16 == 0, ldc % 16 == 0, *_rows_aligned(N, K))


def _bucket_text(dim: str, c: int, top: int) -> str:
    lo = 2 ** (c - 1) if c else 0
    return f"{dim} > {lo}" if c == top else f"{dim} in ({lo}, {2 ** c}]"


def _kernel(kid: str | int) -> object:
    """What runs a choice (its ``runner``): kernel ``kid``'s file imported (Triton), config
    ``kid``'s launch (CUDA, tilec/library/cuda.py); loaded once."""
    mod = _STATE.loaded.get(kid)
    if mod is None and TARGET == "cuda":
        mod = _STATE.loaded[kid] = _CudaRun(kid)
    elif mod is None:
        import importlib.util

        src = KERNELS[kid]
        digest = hashlib.sha1(src.encode()).hexdigest()[:16]
        name = f"{NAME}_{kid}_{digest}"
        path = os.path.join(_cache_folder(), name + ".py")
        if not os.path.exists(path):
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                f.write(src)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # Triton's JIT reads the kernels' source through the module
        spec.loader.exec_module(mod)
        _STATE.loaded[kid] = mod
        _STATS["kernels_loaded"] += 1
    return mod


def _cache_folder() -> str:
    root = os.environ.get("TILEC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                         "tilec")
    folder = os.path.join(root, "library")
    try:
        os.makedirs(folder, exist_ok=True)
        return folder
    except OSError:
        import tempfile

        return tempfile.mkdtemp(prefix="tilec_library_")


# --------------------------------------------------------------------------------------------
# the call
# --------------------------------------------------------------------------------------------


def _run(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    """The checked call (2-D a): every check, the choice, the kernel; ``_copied`` says whether an
    operand was copied (the fast path takes only calls that copy nothing)."""
    if (out is None and type(a) is torch.Tensor and type(b) is torch.Tensor
            and a.dtype is _DTYPE and b.dtype is _DTYPE and a.dim() == 2 and b.dim() == 2
            and a.shape[1] == b.shape[0] and a.is_cuda and a.device == b.device):
        (M, K), N = a.shape, b.shape[1]  # every check of _check passes: skip it
    else:
        M, N, K = _check(a, b, out)
    if out is None:
        out = torch.empty((M, N), dtype=_OUT_DTYPE, device=a.device)
    else:
        _check_overlap(a, b, out)
    _STATS["calls"] += 1
    _COPIED[0] = True  # no fast path for empty problems
    if M == 0 or N == 0:
        return out
    if K == 0:
        return out.zero_()
    memo, seen = _STATE.memo, _STATE.seen
    choice = memo.get((M, N, K))
    if choice is None:
        choice = _choose(M, N, K)
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        memo[(M, N, K)] = choice
    a_k, b_k, copies = _operands(a, b)
    _STATS["copies"] += copies
    _COPIED[0] = bool(copies)
    key = choice.variant
    mod = _STATE.loaded.get(choice.runner) or _kernel(choice.runner)
    if key in seen:
        mod.run(a_k, b_k, out=out)
    else:
        t0 = time.perf_counter()
        mod.run(a_k, b_k, out=out)
        seen[key] = time.perf_counter() - t0
        _STATS["variants"] += 1
        _STATS["compile_s"] += seen[key]
    logged = _STATE.logged
    if _LOG and (M, N, K) not in logged and len(logged) < _MEMO_MAX:
        logged.add((M, N, K))
        print(f"tilec[{NAME}]: " + explain(M, N, K).replace("\n", "\n  "), file=sys.stderr)
    return out


# --------------------------------------------------------------------------------------------
# the fast path: a call like one checked before
# --------------------------------------------------------------------------------------------

_FAST_GET = _STATE.fast.get  # bound once: the fast path is one dictionary look-up
_COPIED = [False]  # whether the last _run copied an operand (or ran no kernel)
_TENSOR = torch.Tensor
_compiling = torch.compiler.is_compiling


def _key(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> tuple:
    """Everything the checks of a call read but the addresses: the operands' (and out's) shapes,
    strides, dtypes and devices. A call with the key of one that passed them passes them."""
    if out is None:
        return (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device)
    return (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device,
            out.shape, out.stride(), out.dtype, out.device)


def _extent(x: torch.Tensor) -> int:
    """Bytes from x's first element to one past its last (strides are never negative)."""
    return (sum((n - 1) * s for n, s in zip(x.shape, x.stride())) + 1) * x.element_size()


def _fast_call(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None):
    """The function that repeats a checked call for every later call with its _key(): the
    kernel's run() on the operands as they are (none was copied), with the per-call checks the
    key cannot carry: 16-byte aligned bases (else the checked path copies) and, with out, no
    overlap of out with a or b (else the checked path raises). None where no fast path applies."""
    if a.dim() < 2 or a.numel() == 0 or b.numel() == 0:
        return None
    choice = _STATE.memo[(a.numel() // a.shape[-1], b.shape[1], b.shape[0])]
    mod = _STATE.loaded[choice.runner]
    nk = B_LAYOUT == "nk"
    cpu = a.device.type != "cuda"  # the interpreter: TRITON_INTERPRET is read again per call
    K, lead = a.shape[-1], (tuple(a.shape[:-1]) if a.dim() > 2 else None)
    # the kernel file's own fast function for these operands (its key: the shapes, strides,
    # dtypes and devices this key fixes), where its run() left one: skips its look-up
    direct = getattr(mod, "_FAST", None)
    if direct is not None:
        direct = direct.get(mod._key(a.view(-1, K) if lead else a, b.t() if nk else b,
                                     None if out is None else out.view(-1, out.shape[-1])))
    run = direct or mod.run  # both take (a, b, out) positionally
    slow = _matmul
    calls = _STATS

    if out is None and lead is None:
        def fast(a, b, out):
            if (a.data_ptr() | b.data_ptr()) & 15 or (cpu and not _on_cpu_ok()):
                return slow(a, b, out)
            calls["calls"] += 1
            return run(a, b.t() if nk else b, None)
        return fast
    if out is None:
        def fast_lead(a, b, out):
            if (a.data_ptr() | b.data_ptr()) & 15 or (cpu and not _on_cpu_ok()):
                return slow(a, b, out)
            calls["calls"] += 1
            res = run(a.view(-1, K), b.t() if nk else b, None)
            return res.view(*lead, res.shape[-1])
        return fast_lead
    a_ext, b_ext, o_ext = _extent(a), _extent(b), _extent(out)

    def fast_out(a, b, out):
        pa, pb, po = a.data_ptr(), b.data_ptr(), out.data_ptr()
        if ((pa | pb) & 15 or (pa < po + o_ext and po < pa + a_ext)
                or (pb < po + o_ext and po < pb + b_ext) or (cpu and not _on_cpu_ok())):
            return slow(a, b, out)
        calls["calls"] += 1
        if lead is None:
            run(a, b.t() if nk else b, out)
        else:
            run(a.view(-1, K), b.t() if nk else b, out.view(-1, out.shape[-1]))
        return out
    return fast_out


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None
           ) -> torch.Tensor:
    """``a @ b``: a is M x K, b is K x N, both of this build's dtype on one CUDA device; returns
    ``out`` (M x N, contiguous; a new tensor when None). Any M, N, K >= 0.

    a may have more than two dimensions (``x`` of shape (batch, seq, K)): its leading ones are
    flattened and come back in the result (out then has shape (..., N)). An operand whose
    layout is not the one the kernel reads (a not row-major, b not row-major for a kn build or
    not column-major for an nk build, or a base address not 16-byte aligned) is copied first:
    correct, one extra pass over it (``stats()['copies']`` counts them). Runs as the custom op
    ``torch.ops.<OP_NAMESPACE>.matmul`` inside torch.compile graphs and where a or b requires
    grad (its backward runs torch.matmul).

    A call whose operands have the shapes, strides, dtypes and devices of one checked before
    (and out likewise, or no out in both) takes the fast path: one dictionary look-up, then
    the kernel's run(); only the addresses are checked again (alignment, out's overlap).
    """
    if (type(a) is _TENSOR and type(b) is _TENSOR and (out is None or type(out) is _TENSOR)
            and not _compiling()):
        fast = _FAST_GET(_key(a, b, out))
        if fast is not None and not (a.requires_grad or b.requires_grad):
            return fast(a, b, out)
    return _matmul(a, b, out)


def _matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    """matmul's checked path; a call that ran its kernel on the operands as given leaves a
    fast path for its _key()."""
    lead, given, orig_a = None, out, a
    if isinstance(a, torch.Tensor) and a.dim() > 2:
        lead = tuple(a.shape[:-1])
        a = a.reshape(-1, a.shape[-1])
        if out is not None:
            if not isinstance(out, torch.Tensor) or tuple(out.shape[:-1]) != lead:
                raise TilecError(f"{NAME}.matmul: out must have shape {lead + ('N',)} for an a "
                                 f"of shape {lead + (a.shape[-1],)}")
            out = out.view(-1, out.shape[-1])
    if _tracing(a):
        res = _OPS[0](a, b) if out is None else (_OPS[1](a, b, out), out)[1]
    elif (torch.is_grad_enabled() and isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
          and (a.requires_grad or b.requires_grad)):
        if out is not None:
            raise TilecError(f"{NAME}.matmul: out= takes no part in autograd, but "
                             f"{'a' if a.requires_grad else 'b'} requires grad (as for "
                             f"torch.matmul); call matmul(a, b) without out")
        res = _OPS[0](a, b)  # the op's backward: torch.matmul
    else:
        res = _run(a, b, out)
        if (not _COPIED[0] and type(orig_a) is _TENSOR and type(b) is _TENSOR
                and (given is None or type(given) is _TENSOR)
                and a.data_ptr() == orig_a.data_ptr()):  # a's reshape (if any) is a view
            table = _STATE.fast
            if len(table) >= _MEMO_MAX:
                table.clear()
            fast = _fast_call(orig_a, b, given)
            if fast is not None:
                table[_key(orig_a, b, given)] = fast
    if lead is None:
        return res
    return given if given is not None else res.view(*lead, res.shape[-1])


def _tracing(a: object) -> bool:
    if torch.compiler.is_compiling():
        return True
    return isinstance(a, torch.Tensor) and type(a) is not torch.Tensor and hasattr(a, "fake_mode")


def explain(M: int, N: int, K: int) -> str:
    """Which config and kernel variant runs for an M x N x K problem on this card, and why."""
    if min(M, N, K) < 0:
        raise TilecError(f"{NAME}.explain: sizes must be >= 0 but got {M}x{N}x{K}")
    if M == 0 or N == 0:
        return f"{M}x{N}x{K}: empty result, no kernel runs"
    if K == 0:
        return f"{M}x{N}x{K}: K = 0, out is zeroed, no kernel runs"
    c = _choose(M, N, K)
    cfg = CONFIGS[c.config]
    facts = ", ".join(f"{f} {'holds' if held else 'fails'}" for f, held in c.facts)
    wide, *aligned = c.variant[2:6]
    lds = ", ".join(f"{n} {'% 16 == 0' if ok else 'not a multiple of 16'}"
                    for n, ok in zip(("lda", "ldb", "ldc"), aligned))
    how = ("built by nvcc for sm_90a" if TARGET == "cuda"
           else f"compiled with {'int64' if wide else 'int32'} offsets, {lds}")
    lines = [f"{M}x{N}x{K} on table {card()!r}: config {c.config} {cfg['label']} "
             f"(kernel {c.kernel})", f"why: {c.why} [{c.where}]",
             f"facts: {facts} -> variant {_variant_name(c.facts)}",
             f"{how} ({'run before in this process' if c.variant in _STATE.seen else 'not run yet'})"]
    if c.copy_note:
        lines.append(c.copy_note)
    return "\n".join(lines)


def _variant_name(facts: tuple) -> str:
    """``facts`` (every fact holds: no boundary mask), ``general`` (none), else the facts the
    variant assumes."""
    held = [f for f, h in facts if h]
    if len(held) == len(facts):
        return "facts"
    return "general" if not held else "assuming " + " and ".join(held)


def stats() -> dict:
    """Counters of this process: calls, kernels loaded (one per config used), variants run
    (one compile each: kernel, which facts hold, int64 offsets, leading dimensions % 16), seconds
    their first calls took
    (compile and first launch), operand copies;
    ``triton_compiles``: kernels in Triton's in-memory caches (None under the interpreter)."""
    out = dict(_STATS)
    out["triton_compiles"] = _triton_compiles()
    return out


def _triton_compiles() -> int | None:
    total, found = 0, False
    for mod in _STATE.loaded.values():
        for obj in vars(mod).values():
            caches = getattr(obj, "device_caches", None)
            if isinstance(caches, dict):
                found = True
                for entry in caches.values():
                    total += len(entry[0]) if isinstance(entry, tuple) else len(entry)
            elif isinstance(getattr(obj, "cache", None), dict) and hasattr(obj, "run"):
                found = True
                total += sum(len(v) for v in obj.cache.values())
    return total if found else None


def reset_stats() -> None:
    """Zero the counters (the compiled kernels stay cached)."""
    for k in _STATS:
        _STATS[k] = 0.0 if k == "compile_s" else 0
