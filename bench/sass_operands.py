"""Register-file reads of the FFMAs in a kernel's SASS (``cuobjdump -sass`` or Nsight Compute's
per-PC SASS): which source operands an FFMA takes from the operand reuse cache and which from the
register file, and whether those register-file reads fall in one bank.

The model (reverse-engineered, not documented by NVIDIA): registers sit in two banks by parity
(``R2n``, ``R2n+1``); the reuse cache keeps, per operand slot and bank, the register last read
there with ``.reuse``, and an operand whose slot's entry for its bank holds it is not read from
the register file.  ptxas sets the flags that way: ``FFMA R77, R14.reuse, R18.reuse, R77`` then
``FFMA R78, R14, R19.reuse, R78`` then ``FFMA R86, R13.reuse, R18.reuse, R86`` (R18 and R19 both
cached in slot 2).  ``rf`` counts an FFMA's register-file reads; ``pair`` is true when two of them
share a bank; ``all3`` when all three do.  Nsight Compute's SASS has no flags: :func:`infer_reuse`
sets them as ptxas does (checked against cuobjdump's in the tests).  What they cost on the H200 is
what the per-PC stall samples say (``bench_simt.py sources``, :func:`stall_table`;
docs/coalescing.md).

    python bench/sass_operands.py KERNEL.sass     # counts for the K-tile loop
    python bench/sass_operands.py SOURCES.json    # stall tables of bench_simt.py sources' dump
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


def ffmas(ins: list[tuple[int, str, list[str]]], banks: int = 2, clear: bool = False) -> list[Ffma]:
    """Every FFMA with its register-file reads under the reuse model (module docstring): the
    reuse cache holds, per operand slot and register bank, the register last read there with
    ``.reuse``; an operand hits when its slot's entry for its bank holds it.  Any other read in
    that slot and bank replaces the entry (flagged) or empties it (not flagged)."""
    out = []
    cache: dict[tuple[int, int], int] = {}
    for pc, op, ops in ins:
        if op != "FFMA":
            if clear and any(_REG.match(o) for o in ops[1:]):
                cache.clear()  # another instruction's operands pass through the collector
            continue
        rf, reused = [], 0
        for slot, o in enumerate(ops[1:4], start=1):
            m = _REG.match(o)
            if not m:
                continue
            r = int(m.group(1))
            key = (slot, r % banks)
            if cache.get(key) == r:
                reused += 1
            else:
                rf.append(r)
            if m.group(2):
                cache[key] = r
            else:
                cache.pop(key, None)
        out.append(Ffma(pc, f"{op} {', '.join(ops)}", tuple(rf), reused))
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


STALL = "smsp__pcsamp_warps_issue_stalled_"


def infer_reuse(ins: list[tuple[int, str, list[str]]], banks: int = 2,
                skip: bool = True) -> list[tuple[int, str, list[str]]]:
    """``.reuse`` flags as ptxas sets them where a listing has none (Nsight Compute's SASS): on
    an FFMA operand whose register the next FFMA reading that slot and bank reads again (before
    any other instruction; checked against ``cuobjdump``'s flags in the tests)."""
    out = [(pc, op, list(ops)) for pc, op, ops in ins]
    for i, (_, op, ops) in enumerate(out):
        if op != "FFMA":
            continue
        for slot in (1, 2, 3):
            m = _REG.match(ops[slot]) if slot < len(ops) else None
            if not m:
                continue
            r = int(m.group(1))
            for _, op2, ops2 in out[i + 1:]:
                if op2 != "FFMA":
                    if skip:
                        continue
                    break
                m2 = _REG.match(ops2[slot]) if slot < len(ops2) else None
                if m2 and int(m2.group(1)) % banks == r % banks:
                    if int(m2.group(1)) == r:
                        ops[slot] = f"R{r}.reuse"
                    break
    return out


def stall_table(kernel: dict) -> dict:
    """One kernel of ``bench_simt.py sources``' JSON: its per-PC stall samples summed by reason,
    per issued instruction (``selected`` samples), for the whole kernel, per opcode, and for the
    FFMAs by register-file reads (``rf2``, ``rf3``; ``C``: two reads in one bank of four,
    ``reg % 4``).  Nsight Compute's SASS carries no ``.reuse`` flags: they are inferred as
    ptxas sets them (an operand the next FFMA reads in the same slot), which reproduces the
    flags of ``cuobjdump`` exactly on tilec's kernels."""
    per: dict[int, dict[str, float]] = {}
    for name, m in kernel["metrics"].items():
        if name.startswith(STALL) and not name.endswith("not_issued"):
            for pc, v in m.items():
                per.setdefault(int(pc), {})[name[len(STALL):]] = v
    text = {int(pc): t for pc, t in kernel["sass"].items() if int(pc) > 1 << 20}
    ins = from_pcs(text)
    flagged = infer_reuse(ins)

    def norm(groups: dict[str, dict[str, float]], n: Counter) -> dict:
        return {g: {"instructions": n[g], **{r: round(x / max(v.get("selected", 0), 1), 3)
                                              for r, x in sorted(v.items()) if x}}
                for g, v in sorted(groups.items())}

    total: dict[str, float] = {}
    by_op: dict[str, dict[str, float]] = {}
    n_op: Counter = Counter()
    for pc, op, _ in ins:
        n_op[op] += 1
        for r, x in per.get(pc, {}).items():
            total[r] = total.get(r, 0) + x
            by_op.setdefault(op, {})[r] = by_op.get(op, {}).get(r, 0) + x
    by_kind: dict[str, dict[str, float]] = {}
    n_kind: Counter = Counter()
    for f in ffmas(flagged):
        banks4 = len(f.rf) >= 2 and max(Counter(r % 4 for r in f.rf).values()) >= 2
        k = f"rf{len(f.rf)}" + ("C" if banks4 else "")
        n_kind[k] += 1
        for r, x in per.get(f.pc, {}).items():
            by_kind.setdefault(k, {})[r] = by_kind.get(k, {}).get(r, 0) + x
    top_ops = dict(sorted(by_op.items(), key=lambda kv: -sum(kv[1].values()))[:12])
    fs = ffmas(flagged)
    return {"kernel": kernel["kernel"][:120],
            "rf_reads_per_ffma": round(sum(len(f.rf) for f in fs) / max(len(fs), 1), 3),
            "per_issue": {r: round(x / total["selected"], 3) for r, x in sorted(total.items()) if x},
            "ffma_by_rf_reads": norm(by_kind, n_kind), "by_opcode": norm(top_ops, n_op)}


if __name__ == "__main__":
    import json
    from pathlib import Path

    for path in sys.argv[1:]:
        text = Path(path).read_text()
        if path.endswith(".json"):
            print(json.dumps([stall_table(k) for k in json.loads(text)], indent=1))
        else:
            print(path, loop_counts(text))
