"""A library whose kernels are torch code (the runtime's contract: ``run(a, b, out=None)`` for any
shape), so the run-time half is tested without Triton: dispatch, checks, op, explain, stats."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path
from types import ModuleType

from tilec.library import Library, module_text
from tilec.library.table import ConfigSet, Table, shape_class

KERNEL = '''
import torch

B_LAYOUT = {layout!r}
CALLS = []


def run(a, b, out=None):
    """What a generated kernel computes: a @ b (b given N x K for an nk build) into out, a new
    tensor when None; no autograd (as a Triton launch records none)."""
    CALLS.append((tuple(a.shape), tuple(b.shape), a.is_contiguous(), b.is_contiguous()))
    bb = b.t() if B_LAYOUT == "nk" else b
    if out is None:
        out = torch.empty((a.shape[0], bb.shape[1]), dtype=a.dtype, device=a.device)
    with torch.no_grad():
        out.copy_((a.double() @ bb.double()).to(out.dtype))
    return out
'''


# the head of a script run in a fresh process, as where tilec is not installed: importing tilec
# fails (a built module must not need it); a script adds its own lines after it
NO_TILEC = r'''
import importlib.abc, json, sys


class NoTilec(importlib.abc.MetaPathFinder):  # as where tilec is not installed
    def find_spec(self, name, path, target=None):
        if name == "tilec" or name.startswith("tilec."):
            raise ImportError("no tilec here")


sys.meta_path.insert(0, NoTilec())
'''


def fake_library(name: str = "fakegemm", *, layout: str = "kn", dtype: str = "float32",
                 classes: int = 8, tma: tuple[bool, bool] = (True, True)) -> Library:
    """Two configs: 16x16x16 for M <= 16 (class <= 4), 32x32x32 above; an exact entry
    100x100x100 -> config 0."""
    configs = ConfigSet()
    small = configs.add({"BM": 16, "BN": 16, "BK": 16}, (16, 16, 16))
    big = configs.add({"BM": 32, "BN": 32, "BK": 32}, (64, 64, 64))
    table = Table("default", classes)
    why_small, why_big = table.reason("test rule: small M"), table.reason("test rule: large M")
    for cm in range(classes):
        for _cn in range(classes):
            for _ck in range(classes):
                table.grid.append(small if cm <= shape_class(16) else big)
                table.grid_why.append(why_small if cm <= shape_class(16) else why_big)
    table.exact[(100, 100, 100)] = (small, table.reason("exact test entry"))
    src = KERNEL.format(layout=layout)
    cfgs = [{"label": f"{p['BM']}x{p['BN']}x{p['BK']}", "params": p,
             "tile": (p["BM"], p["BN"], p["BK"]), "kernel": "k0",
             "tma": tma,
             "facts": [(f"{d} % {p['B' + d]} == 0", f"{d} % {p['B' + d]} == 0") for d in "MNK"]}
            for p in configs.params]
    return Library(name=name, schedule="fake.py", target="triton", dtype=dtype,
                   out_dtype=dtype, b_layout=layout, kernels={"k0": src},
                   configs=cfgs, tables={"default": table.data()})


def import_module(text: str, folder: Path, name: str) -> ModuleType:
    """Write ``text`` to ``folder/name.py`` and import it under a fresh module name."""
    path = folder / f"{name}.py"
    path.write_text(text)
    unique = f"{name}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(unique, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[unique] = mod
    spec.loader.exec_module(mod)
    return mod


def fake_module(tmp: Path, **kw: object) -> ModuleType:
    lib = fake_library(**kw)  # type: ignore[arg-type]
    return import_module(module_text(lib, built="test"), tmp, lib.name)


def heuristic_module(tmp: Path, name: str, configs: ConfigSet, heuristic: dict, *,
                     target: str = "triton") -> ModuleType:
    """A module (torch kernels) whose configs are ``configs`` and which carries ``heuristic``
    (what tilec build gives the module's copy of gen's heuristic, ``target``'s), its tables
    empty: every shape asks the copy."""
    cfgs = [{"label": str(i), "params": p, "tile": (p["BM"], p["BN"], p["BK"]), "kernel": "k0",
             "tma": (False, False), "facts": []} for i, p in enumerate(configs.params)]
    table = {"classes": 1, "grid": [0], "grid_why": [0], "exact": {}, "reasons": ["t"],
             "rules": []}
    dtype = "bfloat16" if target == "cuda" else "float32"
    lib = Library(name=name, schedule="g.py", target=target, dtype=dtype, out_dtype=dtype,
                  b_layout="kn", kernels={"k0": KERNEL.format(layout="kn")}, configs=cfgs,
                  tables={"default": table}, heuristic=heuristic)
    return import_module(module_text(lib, built="test"), tmp, name)
