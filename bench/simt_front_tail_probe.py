"""Probe (an experiment, not a tilec feature): does a Stream-K tail whose workers walk K in step
beat the data-parallel grid on the SIMT path?

``docs/coalescing.md`` ("The last wave") measured that ``dp_1sk`` removes the SIMT kernel's tail
but its Stream-K workers, each starting anywhere in a tile's K range, read 1.5x the DRAM bytes
and cost 2.4% more SM cycles.  This probe rewrites the work section of a generated ``dp_1sk``
kernel (between ``WORK_BEGIN`` and ``WORK_END``) by hand into a *front/tail* split of the
partial wave's ``T`` tiles over ``W`` workers (``T <= W``):

* worker ``c < T`` runs the front ``[0, A)`` of tile ``c`` (all ``T`` fronts walk K together);
* the ``W - T`` other workers share the tails ``[A, K_ITERS)`` of the ``T`` tiles as Stream-K
  (contiguous ranges of the ``T * (K_ITERS - A)`` tail iterations);
* ``A`` balances the two: the least ``max(A, ceil(T * (K_ITERS - A) / (W - T)))``.

Each tile has its front and one or two tail pieces as partials (deterministic: slot ``4 f + i``
in K order).  The rewritten walk is checked on the host (g++) before it is written: every
(tile, k-iteration) once, partials numbered in K order.

    python bench/simt_front_tail_probe.py GEN_DIR [--np] NAME...   # rewrites GEN_DIR/NAME.cu

``--np``: the data-parallel tiles run one CTA each (not walked by the persistent workers), the
Stream-K workers launched after them.

    python bench/simt_front_tail_probe.py --ablate SRC_DIR OUT_DIR PREFIX

copies the ``warp_*`` kernels and the rewritten ``PREFIX_*`` ones of SRC_DIR into OUT_DIR with two
ablations of each rewritten one (timing only: their C is wrong where tiles have partials):
``nf_`` skips the fix-up (every unit writes C), ``fe_`` keeps its fence, barriers and ticket but
stores and sums no partial.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tilec.codegen.cuda.runtime import INDEX_HELPERS  # noqa: E402
from tilec.codegen.cuda.simt import WORK_BEGIN, WORK_END  # noqa: E402

MAXC = 4  # partials per tile (a front and up to three tail pieces)
# the data-parallel tiles: walked by the WORKERS persistent CTAs (the WorkSplit's walk), or
# (--np) one CTA each, launched before the WORKERS Stream-K CTAs (a grid of DP_TILES + WORKERS)
PERSISTENT = """  const int n_dp = w < DP_TILES ? (DP_TILES - w + WORKERS - 1) / WORKERS : 0;
  if (j < n_dp) {{ g = DP_START + w + j * WORKERS; kb0 = 0; kb1 = K_ITERS; return true; }}
  const int sj = j - n_dp;"""
ONE_EACH = """  if (w < DP_TILES) {{ g = w; kb0 = 0; kb1 = K_ITERS; return j == 0; }}
  w -= DP_TILES;
  const int sj = j;"""

SECTION = """{begin}
namespace {name} {{
constexpr int WORKERS = {W}, GROUPS = {G}, K_ITERS = {KI}, SK_TILES = {T}, SK_START = {S};
constexpr int DP_START = 0, DP_TILES = {S}, FRONT = {A}, D = {D}, TAIL_W = {TW}, TAIL_L = {L};
// front/tail: worker c < SK_TILES runs k in [0, FRONT) of tile SK_START + c; the others share
// the tails [FRONT, K_ITERS) of the SK_TILES tiles, TAIL_L iterations cut evenly over TAIL_W
static_assert((long long)(WORKERS + 1) * (TAIL_L + 1) < 2147483647LL, "32-bit tail arithmetic");
TILEC_HD int tail_begin(int t) {{ return t * TAIL_L / TAIL_W; }}
// the tail worker whose range holds tail iteration x: the largest t with tail_begin(t) <= x
TILEC_HD int tail_worker(int x) {{ return ((x + 1) * TAIL_W - 1) / TAIL_L; }}
TILEC_HD bool work_unit(int w, int j, int& g, int& kb0, int& kb1) {{
{walk}
  if (w < SK_TILES) {{
    if (sj > 0) return false;
    g = SK_START + w; kb0 = 0; kb1 = FRONT; return true;
  }}
  const int t = w - SK_TILES, b = tail_begin(t), e = tail_begin(t + 1);
  const int tile = b / D + sj;
  if (tile * D >= e) return false;
  const int lo = tilec_max(b, tile * D), hi = tilec_min(e, (tile + 1) * D);
  g = SK_START + tile; kb0 = FRONT + lo - tile * D; kb1 = FRONT + hi - tile * D;
  return true;
}}
TILEC_HD int fix_slot(int f, int i) {{ return f * {MAXC} + i; }}
TILEC_HD void fix_of(int w, int j, int g, int& f, int& ord, int& cnt, int& slot) {{
  (void)j;{shift}
  f = g - SK_START;
  const int first = tail_worker(f * D), last = tail_worker((f + 1) * D - 1);
  ord = w < SK_TILES ? 0 : 1 + (w - SK_TILES) - first;
  cnt = 2 + last - first;
  slot = fix_slot(f, ord);
}}
}}  // namespace
{end}"""

HARNESS = r"""
#include <cstdio>
%s
%s
using namespace %s;
int main() {
  for (int w = 0; w < %d; ++w)
    for (int j = 0; ; ++j) {
      int g, kb0, kb1, f = -1, ord = -1, cnt = -1, slot = -1;
      if (!work_unit(w, j, g, kb0, kb1)) break;
      if (kb0 != 0 || kb1 != K_ITERS) fix_of(w, j, g, f, ord, cnt, slot);
      std::printf("%%d %%d %%d %%d %%d %%d %%d\n", w, g, kb0, kb1, ord, cnt, slot);
    }
}
"""


def rewrite(src: str, name: str, one_each: bool) -> tuple[str, dict]:
    consts = dict(re.findall(r"constexpr int (\w+) = (\d+);", src[src.index(WORK_BEGIN):]))
    W, G, KI = int(consts["WORKERS"]), int(consts["GROUPS"]), int(consts["K_ITERS"])
    T, S = int(consts["SK_TILES"]), int(consts["SK_START"])
    assert T < W and S + T == G, (T, W, S, G)
    TW = W - T
    A = min(range(1, KI), key=lambda a: max(a, -(-T * (KI - a) // TW)))
    D, L = KI - A, T * (KI - A)
    walk = (ONE_EACH if one_each else PERSISTENT).format()
    shift = "\n  if (w >= DP_TILES) w -= DP_TILES;" if one_each else ""
    section = SECTION.format(begin=WORK_BEGIN, end=WORK_END, name=name, W=W, G=G, KI=KI, T=T,
                             S=S, A=A, D=D, TW=TW, L=L, MAXC=MAXC, walk=walk, shift=shift)
    out = src[:src.index(WORK_BEGIN)] + section + src[src.index(WORK_END) + len(WORK_END):]
    # the workspace: MAXC slots of a register tile per Stream-K tile
    slot = re.search(r"ws \+ \(size_t\)slot \* (\d+)", src)  # deterministic: a workspace
    if slot:
        tile_words = int(slot.group(1))
        out = re.sub(r"cudaMalloc\(&ws, \d+ull", f"cudaMalloc(&ws, {T * MAXC * tile_words}ull", out)
        out = re.sub(r"cudaMemset\(ws, 0, \d+ull", f"cudaMemset(ws, 0, {T * MAXC * tile_words}ull", out)
    grid = S + W if one_each else W
    if one_each:
        out = out.replace(f"kernel<<<dim3({W}, 1, 1)", f"kernel<<<dim3({grid}, 1, 1)")
    check(section, name, grid, G, KI)
    return out, dict(W=W, T=T, front=A, tail=D, tail_workers=TW, tail_per_worker=L / TW,
                     grid=grid, dp_one_cta_each=one_each)


def check(section: str, name: str, grid: int, G: int, KI: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        cpp, exe = Path(d) / "w.cpp", Path(d) / "w"
        cpp.write_text(HARNESS % (INDEX_HELPERS, section, name, grid))
        subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", str(cpp), "-o", str(exe)], check=True)
        rows = [tuple(map(int, r.split())) for r in
                subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n") if r]
    cover: dict[tuple[int, int], int] = {}
    parts: dict[int, list[tuple[int, int, int, int]]] = {}
    for _w, g, kb0, kb1, ord_, cnt, slot in rows:
        for k in range(kb0, kb1):
            cover[(g, k)] = cover.get((g, k), 0) + 1
        if ord_ >= 0:
            parts.setdefault(g, []).append((kb0, ord_, cnt, slot))
    assert cover == {(g, k): 1 for g in range(G) for k in range(KI)}, "coverage"
    for units in parts.values():
        units.sort()
        assert [u[1] for u in units] == list(range(len(units))), units
        assert {u[2] for u in units} == {len(units)} and len(units) <= MAXC, units
    print(f"{name}: walk checked: {len(rows)} units, {len(parts)} tiles with partials")


def ablate(src_dir: Path, out_dir: Path, prefix: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for j in json.loads((src_dir / "manifest.json").read_text()):
        if not j["timed"] or not j["name"].startswith(("warp_", prefix + "_")):
            continue
        s = (src_dir / j["file"]).read_text()
        out.append(j)
        (out_dir / j["file"]).write_text(s)
        if j["name"].startswith("warp_"):
            continue
        size = j["name"][len(prefix) + 1:]
        cond = "if (kb0 != 0 || kb1 != K_ITERS) {  // part of the tile's K range"
        nf = s.replace(f"{prefix}_{size}", f"nf_{size}").replace(cond, "if (false) {  // PROBE: no fix-up")
        fe = re.sub(r"for \(int q = 0; q < \d+; \+\+q\) __stcg\(mine \+ q \* \d+ \+ tid, [^;]*;",
                    "(void)mine;  // PROBE: no partial stores", s.replace(f"{prefix}_{size}", f"fe_{size}"))
        fe = fe.replace("for (int i = 0; i < cnt; ++i) {", "for (int i = 0; i < 0; ++i) {  // PROBE: no sum")
        assert cond in s and "PROBE: no partial stores" in fe and "PROBE: no sum" in fe
        for k, text in (("nf", nf), ("fe", fe)):
            name = f"{k}_{size}"
            (out_dir / f"{name}.cu").write_text(text)
            out.append({**j, "name": name, "kernel": k, "file": f"{name}.cu", "bitwise": False})
    (out_dir / "manifest.json").write_text(json.dumps(out, indent=1))
    print("ablations:", [j["name"] for j in out])


def main() -> int:
    if sys.argv[1] == "--ablate":
        ablate(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
        return 0
    one_each = "--np" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--np"]
    gen, names = Path(args[0]), args[1:]
    info = json.loads((gen / "front_tail.json").read_text()) if (gen / "front_tail.json").exists() else {}
    for name in names:
        cu = gen / f"{name}.cu"
        out, info[name] = rewrite(cu.read_text(), name, one_each)
        cu.write_text(out)
        print(name, info[name])
    (gen / "front_tail.json").write_text(json.dumps(info, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
