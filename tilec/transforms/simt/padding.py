"""The SIMT launcher's padding decision: which variant a launch runs, at which padded sizes,
with which operands copied (:func:`padding`), from the variants' facts and the cost model's
time.  Planning only: nothing here touches a tensor; the launcher
(:mod:`tilec.codegen.cuda.simt.launch`) does the copies (``run_padded``) and the launch."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tilec.errors import KernelArgumentError
from tilec.ir import ceil_div

__all__ = ["COPY_LAUNCH", "MARGIN", "PAD_MODES", "Padding", "holds", "needs", "padding"]

PAD_MODES = ("auto", "never", "tiles", "ragged_n", "aligned")
COPY_LAUNCH = 5e-6  # seconds per copy or zero-fill kernel (launch and tail), H100/H200
MARGIN = 0.03  # pad only for an expected gain past the model's error (1-2% on its points)
_MULTIPLE = re.compile(r"^(M|N|K|lda|ldb|ldc) % (\d+) == 0$")
# the pointers' addresses: ``(A | B | C) % 16 == 0`` (every one), ``B % 16 == 0``
_POINTERS = re.compile(r"^\(?([ABC](?: \| [ABC])*)\)? % (\d+) == 0$")


def holds(facts: Sequence[str], M: int, N: int, K: int, lda: int, ldb: int, ldc: int,
          A: int, B: int, C: int) -> bool:
    """The variant's facts (its ``SimtVariant.facts``, the C of ``pick_variant``) hold at a
    launch (``A``, ``B``, ``C`` the pointers' addresses)."""
    env = dict(M=M, N=N, K=K, lda=lda, ldb=ldb, ldc=ldc, A=A, B=B, C=C)
    for f in facts:
        m, p = _MULTIPLE.match(f), _POINTERS.match(f)
        assert m or p, f"launcher: a fact it cannot read: {f!r}"
        if m and env[m[1]] % int(m[2]):
            return False
        if p and any(env[x] % int(p[2]) for x in p[1].split(" | ")):
            return False
    return True


def needs(facts: Sequence[str]) -> tuple[dict[str, int], dict[str, int]]:
    """``(multiples, alignments)`` a variant's facts ask for: of M, N, K and the leading
    dimensions (elements), of the pointers ``A``, ``B``, ``C`` (bytes); 1 where unnamed.

    >>> needs(["M % 128 == 0", "ldb % 4 == 0", "B % 16 == 0"])
    ({'M': 128, 'ldb': 4}, {'B': 16})
    """
    need: dict[str, int] = {}
    align: dict[str, int] = {}
    for f in facts:
        if m := _MULTIPLE.match(f):
            need[m[1]] = math.lcm(need.get(m[1], 1), int(m[2]))
        elif p := _POINTERS.match(f):
            for x in p[1].split(" | "):
                align[x] = math.lcm(align.get(x, 1), int(p[2]))
    return need, align


@dataclass(frozen=True)
class Padding:
    """What a launch runs: ``variant`` at sizes ``M x N x K``, with A, B (zero-padded) and C
    in workspace buffers where ``copy_a`` / ``copy_b`` / ``copy_c`` (B's and C's buffers rows
    of ``b_cols`` and ``c_cols`` elements, the launch their first ``N`` columns; 0: ``N``);
    ``seconds`` the model's time, ``options`` every choice weighed (``(name, seconds)``,
    ``name`` a variant the launch meets as it is, or ``pad:<variant>``), ``why`` one line."""

    variant: str
    M: int
    N: int
    K: int
    copy_a: bool = False
    copy_b: bool = False
    copy_c: bool = False
    seconds: float = 0.0
    options: tuple[tuple[str, float], ...] = ()
    why: str = ""
    b_cols: int = 0
    c_cols: int = 0

    @property
    def padded(self) -> bool:
        return self.copy_a or self.copy_b or self.copy_c


def _up(x: int, f: int) -> int:
    return ceil_div(x, f) * f


def padding(M: int, N: int, K: int, lda: int, ldb: int, ldc: int, ptrs: tuple[int, int, int],
            variants: Sequence[tuple[str, Sequence[str]]],
            estimate: Callable[[str, int, int, int], float], dram: float,
            mode: str = "auto") -> Padding:
    """How to run ``C = A @ B`` (sizes, leading dimensions, the pointers' addresses ``ptrs``)
    with a library of ``variants`` (``(name, facts)``, fastest first, the last always
    correct): the first variant whose facts hold, or a padded launch of a faster one (see the
    module docstring; ``auto`` pads only where the model expects :data:`MARGIN` or more
    gained).  ``estimate(variant, M, N, K)`` is the kernel's time in seconds, ``dram`` the
    copies' bandwidth in bytes/s.

    A padded launch copies an operand only where it misses the variant's facts: A to
    ``M' x K'`` (``K'`` a multiple of the K and ``lda`` facts), B to ``K' x N'`` rows of
    ``b_cols`` (a multiple of the ``ldb`` fact), C to ``M' x N'`` rows of ``c_cols``, where
    ``M'``, ``N'`` are M and N rounded up to the M and N facts.  A variant whose facts name
    neither ``ldc`` nor C's pointer (``ragged_n``) writes the caller's C: it is weighed only
    where M and N already meet its facts, and moves no C byte.

    >>> V = [("tiles", ["M % 128 == 0", "N % 128 == 0", "K % 32 == 0", "lda % 4 == 0",
    ...                 "ldb % 4 == 0", "ldc % 4 == 0", "(A | B | C) % 16 == 0"]),
    ...      ("aligned", ["N % 4 == 0", "K % 4 == 0", "lda % 4 == 0", "ldb % 4 == 0",
    ...                   "ldc % 4 == 0", "(A | B | C) % 16 == 0"]), ("general", [])]
    >>> t = lambda v, M, N, K: 2 * M * N * K / 50e12 * {"tiles": 1, "aligned": 1.1, "general": 1.24,
    ...                                                 "ragged_n": 1.01}[v]
    >>> p = padding(4096, 4095, 4096, 4096, 4095, 4095, (0, 0, 0), V, t, 2.7e12)
    >>> (p.variant, p.M, p.N, p.K, p.copy_a, p.copy_b, p.copy_c)
    ('tiles', 4096, 4096, 4096, False, True, True)
    >>> padding(300, 301, 302, 302, 301, 301, (0, 0, 0), V, t, 2.7e12).variant  # small: as is
    'general'
    >>> R = V[:1] + [("ragged_n", ["M % 128 == 0", "K % 32 == 0", "ldb % 4 == 0", "B % 16 == 0"])] + V[1:]
    >>> p = padding(4096, 4095, 4096, 4096, 4095, 4095, (0, 0, 0), R, t, 2.7e12)
    >>> (p.variant, p.M, p.N, p.K, p.copy_a, p.copy_b, p.copy_c, p.b_cols)  # B to rows of 4096
    ('ragged_n', 4096, 4095, 4096, False, True, False, 4096)
    """
    if mode not in PAD_MODES:
        raise KernelArgumentError(f"SIMT kernel: pad must be one of {', '.join(PAD_MODES)} but got "
                                  f"{mode!r}")
    A, B, C = ptrs
    sizes = (M, N, K, lda, ldb, ldc, A, B, C)
    meets = next(name for name, facts in variants if holds(facts, *sizes))
    plain = Padding(meets, M, N, K, seconds=estimate(meets, M, N, K))
    if min(M, N, K) <= 0 or mode == "never":
        return Padding(**{**plain.__dict__, "options": ((meets, plain.seconds),),
                          "why": "sizes as given" + (" (pad=never)" if mode == "never" else "")})
    options = [plain]
    targets = [meets]  # the variant each option pads for
    names = [n for n, _ in variants]
    for name, facts in variants[:names.index(meets)]:  # the variants faster than the one met
        need, align = needs(facts)
        Mp = _up(M, need.get("M", 1))
        Kp = _up(K, math.lcm(need.get("K", 1), need.get("lda", 1)))
        in_place = "ldc" not in need and "C" not in align  # C's rows: anything
        if in_place and (M % need.get("M", 1) or N % need.get("N", 1)):
            continue  # it would need C padded: the other variants do that better
        # the kernel's N: N rounded up to the N fact (in place: N itself); B's and C's rows
        Nk = _up(N, need.get("N", 1)) if in_place else _up(
            N, math.lcm(need.get("N", 1), need.get("ldb", 1), need.get("ldc", 1)))
        wb, wc = _up(Nk, need.get("ldb", 1)), _up(Nk, need.get("ldc", 1))
        ok = {x: v % need.get(x, 1) == 0 for x, v in (("lda", lda), ("ldb", ldb), ("ldc", ldc))}
        ca = not (Mp == M and Kp == K and ok["lda"] and A % align.get("A", 1) == 0)
        cb = not (Kp == K and Nk == N and ok["ldb"] and B % align.get("B", 1) == 0)
        cc = not (Mp == M and Nk == N and ok["ldc"] and C % align.get("C", 1) == 0)
        assert not (in_place and cc)
        # the library runs the first variant whose facts the padded launch meets (the
        # workspaces' pointers are aligned): this one, or a faster one the padding also reached
        padded = (Mp, Nk, Kp, Kp if ca else lda, wb if cb else ldb, wc if cc else ldc,
                  0 if ca else A, 0 if cb else B, 0 if cc else C)
        runs = next(n for n, f in variants if holds(f, *padded))
        moved = (ca * (M * K + Mp * Kp) + cb * (K * N + Kp * wb) + cc * 2 * M * N) * 4
        kernels = ca * (1 + (Kp > K)) + cb * (1 + (Kp > K)) + cc
        t = estimate(runs, Mp, Nk, Kp) + moved / dram + kernels * COPY_LAUNCH
        options.append(Padding(runs, Mp, Nk, Kp, ca, cb, cc, t, b_cols=wb if cb else 0,
                               c_cols=wc if cc else 0))
        targets.append(name)
    table = tuple((o.variant if not o.padded else f"pad:{o.variant}", o.seconds) for o in options)
    if mode == "auto":
        best = min(options, key=lambda o: o.seconds)
        if best.seconds > (1 - MARGIN) * plain.seconds:
            best = plain
        why = (f"model: {dict((k, f'{v * 1e6:.1f} us') for k, v in table)}")
    else:
        forced = [o for o, v in zip(options, targets, strict=True) if v == mode and o.padded]
        best = forced[0] if forced else plain
        why = f"pad={mode}" + ("" if forced else f": the launch meets {meets} as it is")
    return Padding(**{**best.__dict__, "options": table, "why": why})
