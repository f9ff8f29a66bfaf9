"""Register-file reads of the FFMAs in a kernel's SASS (``cuobjdump -sass`` or Nsight Compute's
per-PC SASS): which source operands an FFMA takes from the operand reuse cache and which from the
register file, and whether those register-file reads fall in one bank.

The model (reverse-engineered, not documented by NVIDIA; Volta and later): an operand slot whose
register the instruction just before named in the same slot with ``.reuse`` comes from the reuse
cache; every other register operand is read from the register file, whose registers sit in two
banks by parity (``R2n`` and ``R2n+1``).  ``rf`` counts an FFMA's register-file reads; ``pair``
is true when two of them share a bank (with 3 reads always, by pigeonhole); ``all3`` when all
three do (the conflict that Jia et al. measured on Volta).  Which of these costs an issue cycle on
the H200 is what the per-PC stall samples (``bench_simt.py sources``) say.

    python bench/sass_operands.py KERNEL.sass     # counts for the K-tile loop
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass

_INS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+((?:@!?U?P\w+\s+)?)([A-Z][\w.]*)\s*([^;]*);")
_BRA = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?BRA (?:`\()?0x([0-9a-f]+)")
_REG = re.compile(r"^-?\|?R(\d+)(\.reuse)?\|?$")


@dataclass(frozen=True)
class Ffma:
    pc: int
    text: str
    rf: tuple[int, ...]  # registers read from the register file
    reused: int  # operands served by the reuse cache

    @property
    def pair(self) -> bool:
        return len(self.rf) >= 2 and len({r % 2 for r in self.rf}) < len(self.rf)

    @property
    def all3(self) -> bool:
        return len(self.rf) == 3 and len({r % 2 for r in self.rf}) == 1

    @property
    def kind(self) -> str:
        """``rf3``, ``rf2-pair`` (two reads, one bank), ``rf2``, ``rf1``, ``rf0``."""
        return f"rf{len(self.rf)}" + ("-pair" if len(self.rf) == 2 and self.pair else "")


def instructions(sass: str) -> list[tuple[int, str, list[str]]]:
    """``(pc, opcode, operands)`` of a ``cuobjdump -sass`` listing, in address order."""
    return [(int(m.group(1), 16), m.group(3), [o.strip() for o in m.group(4).split(",")])
            for m in _INS.finditer(sass)]


def from_pcs(sass_by_pc: dict[int, str]) -> list[tuple[int, str, list[str]]]:
    """The same from ``{pc: "FFMA R1, R2, R3, R4"}`` (Nsight Compute's per-PC SASS)."""
    out = []
    for pc in sorted(sass_by_pc):
        text = re.sub(r"^@!?U?P\w+\s+", "", sass_by_pc[pc].strip().rstrip(";"))
        op, _, rest = text.partition(" ")
        out.append((pc, op, [o.strip() for o in rest.split(",")] if rest else []))
    return out


def k_tile_loop(sass: str) -> tuple[int, int]:
    """``(first, last)`` PC of the longest backward branch's body (the K-tile loop)."""
    back = [(int(a, 16), int(t, 16)) for a, t in _BRA.findall(sass)]
    end, start = max(((a, t) for a, t in back if t < a), key=lambda x: x[0] - x[1])
    return start, end


def ffmas(ins: list[tuple[int, str, list[str]]]) -> list[Ffma]:
    """Every FFMA with its register-file reads under the reuse model (module docstring)."""
    out, prev = [], None
    for pc, op, ops in ins:
        if op == "FFMA":
            rf, reused = [], 0
            for slot, o in enumerate(ops[1:4], start=1):
                m = _REG.match(o)
                if not m:
                    continue
                r = int(m.group(1))
                hit = prev is not None and slot < len(prev) and (pm := _REG.match(prev[slot])) \
                    and pm.group(2) and int(pm.group(1)) == r
                if hit:
                    reused += 1
                else:
                    rf.append(r)
            out.append(Ffma(pc, f"{op} {', '.join(ops)}", tuple(rf), reused))
        prev = ops
    return out


def counts(fs: list[Ffma]) -> dict[str, int]:
    c = Counter(f.kind for f in fs)
    return {"ffma": len(fs), **dict(sorted(c.items())), "pair": sum(f.pair for f in fs),
            "all3": sum(f.all3 for f in fs)}


def loop_counts(sass: str) -> dict[str, int]:
    """:func:`counts` of the K-tile loop's FFMAs, plus its instruction count."""
    lo, hi = k_tile_loop(sass)
    ins = [i for i in instructions(sass) if lo <= i[0] <= hi]
    return {"instructions": len(ins), **counts(ffmas(ins))}


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(path, loop_counts(open(path).read()))
