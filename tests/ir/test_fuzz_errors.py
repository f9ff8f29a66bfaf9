"""Fuzz: random sequences of scheduling verbs with random arguments, valid and invalid.

Three properties, checked after every call (hypothesis, a few hundred sequences):

1. nothing but a TilecError escapes a public verb, constructor or query (a TypeError or
   ValueError from deep inside would be a missing check at the boundary);
2. a call that raises changes nothing: the views, the trace, the decomposition, the kernel
   options and the cluster are as before (docs/errors.md promises it);
3. what was accepted replays: the recorded trace rebuilds the same fusion.

The oracle for (1) is the exception's class; for (2) the views' canonical structure before and
after; for (3) the structure of the replayed fusion.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import sympy
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tilec.runtime.loader import load_schedule, parse_params
from tilec.errors import TilecError
from tilec.ir import (
    GemmFusion,
    IterDomain,
    IterType,
    ParallelType,
    TensorView,
    index_map,
    infer_launch,
)
from tilec.transforms.pipeline import Target
from tilec.transforms.plan import Decomposition, Fixup, InputPrecision, LoadKind, MulticastMode

from .helpers import ROOT

EXAMPLES = int(os.environ.get("TILEC_FUZZ_EXAMPLES", "300"))
S = sympy.Symbol("S", integer=True, positive=True)

# values of the wrong type or range for every argument: what a hurried user passes
JUNK = st.sampled_from([None, "x", "0", "", "8k", "x y", 1.5, -0.0, float("nan"), True, False,
                        -1, 0, 10**12, (), [], {}, (1,), ("a", "b", "c"), object(),
                        sympy.Integer(-2), sympy.Rational(1, 2), sympy.Symbol("u"),
                        ParallelType.BIDx])


def mostly(valid: st.SearchStrategy[Any], *invalid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``valid`` three times in four: sequences must get somewhere to find deep mistakes."""
    return st.one_of(valid, valid, valid, st.one_of(*invalid, JUNK))


def axis(n: int) -> st.SearchStrategy[Any]:
    return mostly(st.integers(-n, n - 1), st.integers(-8, 8))


FACTOR = mostly(st.one_of(st.integers(1, 300), st.sampled_from(["BM", "M", S, sympy.Integer(4)])),
                st.integers(-2, 0))
NAME = mostly(st.sampled_from(["Mo", "Mi", "x_1", "rank"]), st.sampled_from(["M", "N", "K", "b"]))
NAMES = mostly(st.one_of(st.none(), st.tuples(NAME, NAME)), st.tuples(NAME),
               st.lists(NAME, max_size=3))
PTYPE = mostly(st.sampled_from(list(ParallelType)), st.sampled_from(["BIDx", 0]))


def mapping(n: int) -> st.SearchStrategy[Any]:
    return mostly(st.one_of(st.permutations(range(n)),
                            st.dictionaries(st.integers(-n, n - 1), st.integers(-n, n - 1), max_size=3)),
                  st.dictionaries(st.integers(-6, 6), st.integers(-6, 6), max_size=4),
                  st.lists(st.integers(-6, 6), max_size=7))
SIZE = st.one_of(st.integers(-1, 600), st.sampled_from(["M", "N", "K", "8k", S]), JUNK)
POLICY = st.one_of(st.sampled_from(["bf16", "FP16", "float32", "kn", "NK", "mk", "dp", "auto",
                                    "splitk", "streamk", "skpp", "bogus", "atomic",
                                    "deterministic", "leader", "sliced", "broadcast", " dp "]),
                   JUNK)


def snapshot(f: GemmFusion) -> tuple[Any, ...]:
    views = [f.c.structure()]
    views += [v.structure() for v in (f.a_smem, f.b_smem) if v is not None]
    return (tuple(views), len(f.schedule.calls), f.decomposition, f.kernel_options,
            f.cluster_dims)


def call(f: GemmFusion, fn: Any, *args: Any, **kwargs: Any) -> bool:
    """Run one verb: True if it was accepted; a TilecError must leave ``f`` unchanged."""
    before = snapshot(f)
    try:
        fn(*args, **kwargs)
    except TilecError:
        assert snapshot(f) == before, ("a refused call changed the fusion", fn, args, kwargs)
        return False
    return True


def queries(f: GemmFusion) -> None:
    """The read-only API on whatever was built: only TilecErrors."""
    for q in (lambda: infer_launch(f), lambda: index_map(f.c), lambda: str(f), f.dims):
        with contextlib.suppress(TilecError):
            q()


@st.composite
def fusions(draw: st.DrawFn) -> GemmFusion:
    """Mostly a valid fusion (a sequence needs one to go on); one in four tries a bad argument."""
    good = st.one_of(st.integers(1, 600), st.sampled_from(["M", "N", "K", S]))
    while True:
        bad = draw(st.integers(0, 3)) == 0
        kw: dict[str, Any] = {k: draw(SIZE if bad else good) for k in "MNK"}
        if draw(st.booleans()):
            kw["dtype"] = draw(POLICY if bad else st.sampled_from(["bf16", "fp16", "float32"]))
        if draw(st.booleans()):
            kw["b_layout"] = draw(POLICY if bad else st.sampled_from(["kn", "NK"]))
        if draw(st.booleans()):
            kw["non_portable_cluster"] = draw(mostly(st.booleans()) if bad else st.booleans())
        try:
            return GemmFusion(**kw)
        except TilecError:
            assert bad, kw


VERBS = ["split", "merge", "reorder", "parallelize", "axis_parallelize", "broadcast", "swizzle",
         "decompose", "set_kernel", "set_cluster", "propagate", "operand", "getitem"]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), f=fusions())
def test_random_verbs_raise_only_tilec_errors(data: st.DataObject, f: GemmFusion) -> None:
    accepted = 0
    for _ in range(data.draw(st.integers(4, 14), label="steps")):
        verb = data.draw(st.sampled_from(VERBS), label="verb")
        view = f.c
        if verb == "operand" and f.a_smem is not None:
            # the operand tiles take the verbs too (unrecorded: propagation rebuilds them)
            view = data.draw(st.sampled_from([f.a_smem, f.b_smem]))
            verb = data.draw(st.sampled_from(["split", "parallelize", "broadcast", "merge"]))
        d = data.draw
        if verb == "split":
            kw: dict[str, Any] = {}
            if d(st.booleans()):
                kw["inner"] = d(st.one_of(st.booleans(), JUNK))
            if d(st.booleans()):
                kw["names"] = d(NAMES)
            accepted += call(f, view.split, d(axis(view.ndim)), d(FACTOR), **kw)
        elif verb == "merge":
            args = [d(axis(view.ndim))] + ([d(axis(view.ndim))] if d(st.booleans()) else [])
            accepted += call(f, view.merge, *args, **({"name": d(NAME)} if d(st.booleans()) else {}))
        elif verb == "reorder":
            accepted += call(f, view.reorder, d(mapping(view.ndim)))
        elif verb == "parallelize":
            accepted += call(f, view.parallelize, d(axis(view.ndim)), d(PTYPE))
        elif verb == "axis_parallelize":
            accepted += call(f, lambda a, p, v=view: v.axis(a).parallelize(p),
                             d(axis(view.ndim)), d(PTYPE))
        elif verb == "broadcast":
            kw = {"name": d(NAME)} if d(st.booleans()) else {}
            extent = [d(FACTOR)] if d(st.booleans()) else []
            accepted += call(f, view.broadcast, d(axis(view.ndim + 1)), *extent, **kw)
        elif verb == "swizzle":
            accepted += call(f, view.swizzle, d(axis(view.ndim)), d(axis(view.ndim)), d(FACTOR))
        elif verb == "decompose":
            options = {"splits": mostly(st.integers(1, 20), st.integers(-1, 0)),
                       "sk_waves": mostly(st.integers(0, 7), st.integers(8, 9)),
                       "fixup": POLICY, "sms": mostly(st.integers(1, 200), st.integers(-1, 0))}
            kw = {k: d(v) for k, v in options.items() if d(st.booleans())}
            accepted += call(f, f.decompose, d(POLICY), **kw)
        elif verb == "set_kernel":
            options = {"stages": mostly(st.integers(1, 16), st.integers(-1, 17)),
                       "warps": mostly(st.integers(1, 32), st.integers(-1, 33)),
                       "load": st.sampled_from(["pointer", "tma", "auto", "TMA", "ldg", None])}
            kw = {k: d(v) for k, v in options.items() if d(st.booleans())}
            accepted += call(f, f.set_kernel, **kw)
        elif verb == "set_cluster":
            dims = d(st.lists(mostly(st.integers(1, 4), st.integers(-1, 17)), min_size=1,
                              max_size=3))
            accepted += call(f, f.set_cluster, *dims)
        elif verb == "propagate":
            accepted += call(f, f.propagate)
        else:
            accepted += call(f, lambda a, v=view: v[a], d(axis(view.ndim)))
        queries(f)
    event(f"{accepted} calls accepted" if accepted < 5 else "5+ calls accepted")
    g = GemmFusion.replay(f.schedule)
    assert g.c.structure() == f.c.structure()
    assert (g.decomposition, g.kernel_options, g.cluster_dims) == (
        f.decomposition, f.kernel_options, f.cluster_dims)


@settings(max_examples=EXAMPLES // 3, deadline=None)
@given(name=st.one_of(NAME, st.text(max_size=4)), extent=SIZE,
       itype=st.one_of(st.sampled_from(list(IterType)), JUNK),
       ptype=PTYPE, logical=st.one_of(st.just("axes"), JUNK))
def test_hand_built_views_raise_only_tilec_errors(name: Any, extent: Any, itype: Any, ptype: Any,
                                                   logical: Any) -> None:
    try:
        ax = IterDomain(name, extent, itype, ptype)
    except TilecError:
        return
    try:
        view = TensorView(name, [ax] if logical == "axes" else logical)
    except TilecError:
        return
    # anything but a TilecError (a TypeError, a sympy error, ...) escapes and fails the test
    for q in (lambda: infer_launch([view]), lambda: index_map(view)):
        with contextlib.suppress(TilecError):
            q()
    with contextlib.suppress(TilecError):
        assert str(name) in str(view)  # a view that prints names itself


POLICY_ENUMS = [Decomposition, Fixup, MulticastMode, LoadKind, InputPrecision, Target]


@settings(max_examples=EXAMPLES // 3, deadline=None)
@given(value=st.one_of(POLICY, st.text(max_size=12)), which=st.sampled_from(POLICY_ENUMS))
def test_policy_values_parse_or_raise_a_tilec_error(value: Any, which: Any) -> None:
    try:
        member = which.parse(value)
    except TilecError as e:
        assert repr(value) in str(e) and all(m.value in str(e) for m in which)
        return
    assert isinstance(member, which)
    assert member.value == str(value).strip().lower() or isinstance(value, which)


BASIC = ROOT / "examples" / "gemm_basic.py"
PARAM_TEXT = st.one_of(
    st.sampled_from(["M=256", "M=0", "M=-4", "M=abc", "M=M", "BM=64", "BM=bm", "BMM=3", "bm=64",
                     "DTYPE=fp16", "DTYPE=int8", "B_LAYOUT=nk", "B_LAYOUT=mk", "K=0x40", "N=1e3",
                     "=3", "M", "M=", "K=true"]),
    st.from_regex(r"[A-Za-z_]{1,4}=[-0-9a-z.]{0,4}", fullmatch=True))


@settings(max_examples=EXAMPLES // 3, deadline=None)
@given(items=st.lists(PARAM_TEXT, max_size=3))
def test_random_params_raise_only_tilec_errors(items: list[str]) -> None:
    # anything but a TilecError escapes and fails the test; what loads keeps every value given
    with contextlib.suppress(TilecError):
        given_ = parse_params(items)
        loaded = load_schedule(BASIC, given_)
        assert all(loaded.raw_params[k] == v for k, v in given_.items())
