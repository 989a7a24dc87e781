"""Benchmark of the guide's predictor: generated programs compiled deviceless, the package's analysis as truth.

Two families of JAX programs, each program a small module whose function ``f`` reduces a large
intermediate (the *table*) in one of the ways people write it:

- ``main``: producers x reductions x axes (with transposes) x shapes x dtypes x readers x loops x
  gradients, from one generator; the predictor's rules were tuned on it;
- ``holdout``: written differently (method syntax, ``einsum``/``dot_general``, norms, softmax,
  ``vmap`` of row functions, ``keepdims``, odd sizes, ``value_and_grad``/``vjp``, ``jnp.split`` loops...)
  by a second generator with another seed; the rules were not tuned on it.

**Ground truth** (per program and target), from ``sphinx_jaxhlo.analyze_source``'s report:

- the *table* ``E`` is the largest operand of a reduction primitive in the program's jaxpr
  (``reduce_sum``/``max``/``min``/``prod``/``and``/``or``, ``argmax``/``argmin``, ``reduce``,
  ``top_k``, ``approx_top_k``); inside a ``scan``/``while`` body it counts its per-step size
  times the trip count (the whole table that the loop walks over in chunks);
- **stored** is true when the compiled program writes to memory an intermediate (a buffer another
  kernel reads: the report's ``materialized``, argument copies excluded) with at least 0.9 E
  elements, or, on the CPU and the H100, when XLA's temp memory holds at least 0.9 E elements of
  the table's element size (a program that keeps many chunk buffers live at once: a Python loop or
  an unrolled scan).  The TPU's temp figure is left out of the rule (``memory_analysis`` gives 0 B
  for most TPU programs, see FACTS).  Elements, not bytes: a ``convert`` changes the bytes, not
  which values went to memory.
- **operand copy** (H100 only): an argument copy (the report's ``argument_copies``), or a buffer
  written by a kernel that only pads or copies, with at least 0.9 of the elements of the largest
  dot operand (the H100 pads a narrow contraction's K to a multiple of 32).

Run (resumable: each compile's truth is kept in ``benchmarks/data/guide_predictor_truth.jsonl``)::

    python benchmarks/guide_predictor_family.py compile --targets cpu,gpu:h100
    nice python benchmarks/guide_predictor_family.py compile --targets tpu:v5e   # ~5 s a program
    python benchmarks/guide_predictor_family.py report    # writes guide_predictor_results.json

``report`` runs the predictor (jaxpr only) on every program and writes
``benchmarks/guide_predictor_results.json``: per program its source, specs, family, classes and per
target the truth, the prediction, the rule and whether they agree; per family and target the
accuracy; and every miss.
"""

# ruff: noqa: E501 - each program's text stays as written: its hash keys the committed truth file

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sphinx_jaxhlo.core.view_options import split_top_level  # noqa: E402

TRUTH_FILE = ROOT / "benchmarks" / "data" / "guide_predictor_truth.jsonl"
#: A holdout's accuracy the first time it was evaluated, before any rule was changed for its misses.
FIRST_LOOKS_FILE = ROOT / "benchmarks" / "data" / "guide_predictor_first_looks.json"
RESULTS_FILE = ROOT / "benchmarks" / "guide_predictor_results.json"
TARGETS = ("cpu", "gpu:h100", "tpu:v5e")
#: Share of the table's elements a stored buffer (or the temp memory) must reach.
STORED_FRACTION = 0.9

HEADER = "import functools\n\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n\n"


@dataclass
class Program:
    """One generated program: a module whose function ``f`` is compiled for ``specs``."""

    name: str
    family: str
    source: str
    specs: str
    #: Words that say which classes the program exercises (``producer=cos``, ``loop=scan``...).
    classes: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.source}\n{self.specs}".encode()).hexdigest()[:16]


def _module(body: str) -> str:
    return HEADER + body.strip("\n") + "\n"


# -- the main family ----------------------------------------------------------------------------

#: Elementwise producers of the table ``t``: (name, expression, dtypes it applies to).
PRODUCERS_MAIN: list[tuple[str, str]] = [
    ("id", "t"),
    ("mul2", "t * 2"),
    ("exp", "jnp.exp(t)"),
    ("cos", "jnp.cos(t)"),
    ("tanh", "jnp.tanh(t)"),
    ("log", "jnp.log(t)"),
    ("sqrt", "jnp.sqrt(t)"),
    ("where", "jnp.where(t > 0, t, 0.0)"),
    ("clip", "jnp.clip(t, -1.0, 1.0)"),
    ("softplus", "jax.nn.softplus(t)"),
    ("gelu", "jax.nn.gelu(t)"),
    ("sin_exp", "jnp.sin(t) * jnp.exp(t)"),
    ("rprec", "lax.reduce_precision(t, exponent_bits=5, mantissa_bits=10)"),
    ("abs", "jnp.abs(t)"),
    ("square", "t * t"),
    ("sigmoid", "jax.nn.sigmoid(t)"),
    ("gauss", "jnp.exp(-t * t)"),
    ("relu_mask", "t * (t > 0)"),
    ("tan", "jnp.tan(t)"),
    ("sinh", "jnp.sinh(t)"),
    ("arctan", "jnp.arctan(t)"),
    ("log1p", "jnp.log1p(t)"),
    ("rsqrt", "lax.rsqrt(t)"),
    ("cbrt", "jnp.cbrt(t)"),
]

#: Reductions of ``u`` over ``AX`` (``{ax}`` is ``axis=...``).
REDUCTIONS_MAIN: dict[str, str] = {
    "sum": "jnp.sum(u, {ax})",
    "mean": "jnp.mean(u, {ax})",
    "max": "jnp.max(u, {ax})",
    "min": "jnp.min(u, {ax})",
    "prod": "jnp.prod(u, {ax})",
    "any": "jnp.any(u > 0.5, {ax})",
    "argmax": "jnp.argmax(u, {ax})",
    "argmin": "jnp.argmin(u, {ax})",
    "sum+max": "jnp.sum(u, {ax}) + jnp.max(u, {ax})",
    "lse": "jax.nn.logsumexp(u, {ax})",
    "var": "jnp.var(u, {ax})",
}

SHAPES_MAIN = [(4096, 4096), (1024, 8192), (8192, 1024), (2048, 2048), (256, 4096), (113, 16384),
               (16384, 512), (64, 8192), (8, 16384), (20000, 2000), (512, 512), (4096, 256)]


def _axis_text(axis: int | None) -> str:
    return "axis=None" if axis is None else f"axis={axis}"


def _source_expr(source: str) -> tuple[str, str, list[str]]:
    """(signature, table expression, spec templates) of a table source; ``{R}``, ``{L}``, ``{K}``, ``{dt}``."""
    if source == "arg":
        return "x", "x", ["{dt}[{R},{L}]"]
    if source == "argT":
        return "x", "x.T", ["{dt}[{L},{R}]"]
    if source == "outer":
        return "x, y", "x[:, None] * y[None, :]", ["{dt}[{R}]", "{dt}[{L}]"]
    if source == "outer3":
        return ("pos, hkl", "pos[:, 0, None] * hkl[None, :, 0] + pos[:, 1, None] * hkl[None, :, 1]"
                " + pos[:, 2, None] * hkl[None, :, 2]", ["{dt}[{R},3]", "{dt}[{L},3]"])
    if source == "gemm":
        return "a, b", "a @ b", ["{dt}[{R},{K}]", "{dt}[{K},{L}]"]
    if source == "gemmT":
        return "a, b", "a @ b.T", ["{dt}[{R},{K}]", "{dt}[{L},{K}]"]
    raise ValueError(source)


def _elementwise_program(family: str, source: str, producer: tuple[str, str], reduction: str, axis: int | None,
                         shape: tuple[int, int], dtype: str = "f32", k: int = 64,
                         reductions: dict[str, str] = REDUCTIONS_MAIN) -> Program:
    sig, table, spec_t = _source_expr(source)
    r, length = shape
    red = reductions[reduction].format(ax=_axis_text(axis))
    body = f"def f({sig}):\n    t = {table}\n    u = {producer[1]}\n    return {red}\n"
    specs = ", ".join(s.format(R=r, L=length, K=k, dt=dtype) for s in spec_t)
    name = f"{source}/{producer[0]}/{reduction}/ax{axis}/{r}x{length}/{dtype}" + (f"/k{k}" if "gemm" in source else "")
    return Program(name, family, _module(body), specs,
                   [f"source={source}", f"producer={producer[0]}", f"reduction={reduction}", f"axis={axis}",
                    f"dtype={dtype}", f"shape={r}x{length}"])


def _matvec_program(family: str, producer: tuple[str, str], reduction: str, n: int, k: int, dtype: str = "f32",
                    vec_first: bool = False) -> Program:
    if vec_first:
        body = f"def f(v, a):\n    t = v @ a\n    u = {producer[1]}\n    return {REDUCTIONS_MAIN[reduction].format(ax='axis=None')}\n"
        specs = f"{dtype}[{k}], {dtype}[{k},{n}]"
    else:
        body = f"def f(a, v):\n    t = a @ v\n    u = {producer[1]}\n    return {REDUCTIONS_MAIN[reduction].format(ax='axis=None')}\n"
        specs = f"{dtype}[{n},{k}], {dtype}[{k}]"
    kind = "vecmat" if vec_first else "matvec"
    return Program(f"{kind}/{producer[0]}/{reduction}/{n}x{k}/{dtype}", family, _module(body), specs,
                   [f"source={kind}", f"producer={producer[0]}", f"reduction={reduction}", f"dtype={dtype}",
                    f"shape={n}x{k}"])


def _topk_program(family: str, source: str, producer: tuple[str, str], shape: tuple[int, int], approx: bool,
                  k: int = 64) -> Program:
    sig, table, spec_t = _source_expr(source)
    call = "lax.approx_max_k(u, 8)[0]" if approx else "lax.top_k(u, 8)[0]"
    body = f"def f({sig}):\n    t = {table}\n    u = {producer[1]}\n    return {call}\n"
    r, length = shape
    specs = ", ".join(s.format(R=r, L=length, K=k, dt="f32") for s in spec_t)
    red = "approx_max_k" if approx else "top_k"
    return Program(f"{source}/{producer[0]}/{red}/{r}x{length}", family, _module(body), specs,
                   [f"source={source}", f"producer={producer[0]}", f"reduction={red}", f"shape={r}x{length}"])


def _loop_program(family: str, loop: str, source: str, producer: tuple[str, str], n: int, m: int, chunk: int,
                  k: int = 64) -> Program:
    """A reduction of the ``n x m`` table ``producer(source)`` over chunks of ``chunk`` rows."""
    nc = n // chunk
    if source == "gemm":
        sig, specs = "a, b", f"f32[{n},{k}], f32[{k},{m}]"
        rows, full, piece = "a", f"a.reshape({nc}, {chunk}, {k})", "c @ b"
    else:  # outer
        sig, specs = "x, y", f"f32[{n}], f32[{m}]"
        rows, full, piece = "x", f"x.reshape({nc}, {chunk})", "c[:, None] * y[None, :]"
    expr = re.sub(r"\bt\b", "(" + piece + ")", producer[1]) if producer[0] != "id" else piece
    if loop in ("scan", "scan_unroll", "scan_unroll2"):
        unroll = {"scan": "", "scan_unroll": ", unroll=True", "scan_unroll2": ", unroll=2"}[loop]
        body = (f"def f({sig}):\n    def step(total, c):\n        return total + jnp.sum({expr}, axis=0), None\n\n"
                f"    init = jnp.zeros(({m},), jnp.float32)\n"
                f"    return lax.scan(step, init, {full}{unroll})[0]\n")
    elif loop == "fori":
        body = (f"def f({sig}):\n    def step(i, total):\n"
                f"        c = lax.dynamic_slice_in_dim({rows}, i * {chunk}, {chunk})\n"
                f"        return total + jnp.sum({expr}, axis=0)\n\n"
                f"    return lax.fori_loop(0, {nc}, step, jnp.zeros(({m},), jnp.float32))\n")
    elif loop == "map_inside":
        body = f"def f({sig}):\n    return jnp.sum(lax.map(lambda c: jnp.sum({expr}, axis=0), {full}), axis=0)\n"
    elif loop == "map_after":
        body = (f"def f({sig}):\n    tables = lax.map(lambda c: {expr}, {full})\n"
                f"    return jnp.sum(tables, axis=(0, 1))\n")
    elif loop == "python":
        body = (f"def f({sig}):\n    total = jnp.zeros(({m},), jnp.float32)\n    for i in range({nc}):\n"
                f"        c = {rows}[i * {chunk}:(i + 1) * {chunk}]\n"
                f"        total = total + jnp.sum({expr}, axis=0)\n    return total\n")
    else:
        raise ValueError(loop)
    return Program(f"loop/{loop}/{source}/{producer[0]}/{n}x{m}/c{chunk}", family, _module(body), specs,
                   [f"loop={loop}", f"source={source}", f"producer={producer[0]}", f"shape={n}x{m}"])


def _grad_program(family: str, source: str, producer: tuple[str, str], loss: str, shape: tuple[int, int],
                  axis: int = 0, k: int = 64, reduction: str = "sum") -> Program:
    """The gradient of a loss of the reduction, with respect to the first argument."""
    sig, table, spec_t = _source_expr(source)
    first = sig.split(",")[0]
    red = {"sum": f"jnp.sum(u, axis={axis})", "max": f"jnp.max(u, axis={axis})",
           "lse": f"jax.nn.logsumexp(u, axis={axis})", "mean": f"jnp.mean(u, axis={axis})"}[reduction]
    inner = f"def stats({sig}):\n    t = {table}\n    u = {producer[1]}\n    return {red}\n\n\n"
    if loss == "linear":
        outer = f"def f({sig}):\n    return jax.grad(lambda {first}: jnp.sum(stats({sig})))({first})\n"
    elif loss == "square":
        outer = f"def f({sig}):\n    return jax.grad(lambda {first}: jnp.sum(stats({sig}) ** 2))({first})\n"
    elif loss == "checkpoint":
        outer = (f"def f({sig}):\n    return jax.grad(lambda {first}: jnp.sum(jax.checkpoint(stats)({sig}) ** 2))"
                 f"({first})\n")
    else:
        raise ValueError(loss)
    r, length = shape
    specs = ", ".join(s.format(R=r, L=length, K=k, dt="f32") for s in spec_t)
    return Program(f"grad/{loss}/{source}/{producer[0]}/{reduction}/{r}x{length}", family, _module(inner + outer),
                   specs, [f"grad={loss}", f"source={source}", f"producer={producer[0]}", f"reduction={reduction}",
                           f"shape={r}x{length}"])


def main_family(seed: int = 20261206) -> list[Program]:
    """The family the rules were tuned on (about 380 programs)."""
    rng = random.Random(seed)
    fam = "main"
    progs: list[Program] = []
    prods = dict(PRODUCERS_MAIN)
    p = lambda name: (name, prods[name])  # noqa: E731
    # A. elementwise producers of an argument table, every reduction kind and axis
    for name, expr in PRODUCERS_MAIN:
        for reduction in rng.sample(["sum", "max", "mean", "min", "prod", "any", "argmax", "argmin"], 4):
            axis = rng.choice([0, 1, None])
            shape = rng.choice(SHAPES_MAIN)
            progs.append(_elementwise_program(fam, "arg", (name, expr), reduction, axis, shape))
    # B. physical layout: a transpose before the reduction
    for name in ("cos", "exp", "tanh", "id", "where", "log"):
        for axis in (0, 1):
            shape = rng.choice([(4096, 4096), (1024, 8192), (8192, 1024), (113, 16384)])
            progs.append(_elementwise_program(fam, "argT", p(name), rng.choice(["sum", "max"]), axis, shape))
    # C. rows and kept length on the H100: one- and two-stage reductions of cheap and costly producers
    for name in ("exp", "cos", "tanh", "log", "mul2", "sqrt"):
        for shape in ([(8, 16384), (8, 32768), (64, 4096), (256, 1024), (4096, 64), (8192, 64), (1024, 1024),
                       (113, 16384), (4096, 8192)]):
            if rng.random() < 0.5:
                progs.append(_elementwise_program(fam, "arg", p(name), "sum", rng.choice([0, 1]), shape))
    # D. written-out tables (outer products, the seed's form)
    for name in ("cos", "exp", "id", "tanh", "gauss", "where"):
        for reduction in ("sum", "max", "argmax", "sum+max"):
            shape = rng.choice([(4096, 4096), (20000, 2000), (2048, 8192), (8192, 2048)])
            src = rng.choice(["outer", "outer3"])
            progs.append(_elementwise_program(fam, src, p(name), reduction, rng.choice([0, 1]), shape))
    # E. real contractions
    for src in ("gemm", "gemmT"):
        for name in ("id", "exp", "cos", "tanh", "where", "gauss", "square"):
            for reduction in rng.sample(["sum", "max", "argmax", "prod", "any", "lse", "sum+max", "mean"], 3):
                shape = rng.choice([(4096, 4096), (2048, 8192), (1024, 1024), (8192, 512)])
                kk = rng.choice([3, 64, 512])
                progs.append(_elementwise_program(fam, src, p(name), reduction, rng.choice([0, 1, None]), shape,
                                                  k=kk))
    # F. strength-reduced contractions: matrix-vector and vector-matrix products (aligned and odd K)
    for name in ("id", "cos", "exp"):
        for n, kk in ((8192, 8192), (8192, 8191), (4096, 4096), (20000, 19999), (1000, 50000)):
            progs.append(_matvec_program(fam, p(name), rng.choice(["sum", "max"]), n, kk,
                                         vec_first=rng.random() < 0.3))
    for n, m, kk in ((8192, 4096, 8191), (4096, 4096, 4095), (2048, 4096, 9999)):
        progs.append(_elementwise_program(fam, "gemm", p("id"), "sum", 0, (n, m), k=kk))
    # G. readers: two reductions of one table, two passes, and readers in the gradient
    for src in ("arg", "outer", "gemm"):
        for name in ("exp", "cos", "tanh", "mul2", "id"):
            for reduction in ("sum+max", "var", "lse"):
                if rng.random() < 0.6:
                    shape = rng.choice([(4096, 4096), (20000, 2000), (2048, 2048)])
                    progs.append(_elementwise_program(fam, src, p(name), reduction, 1, shape))
    # H. dtypes
    for dtype, names in (("bf16", ("exp", "cos", "id", "tanh")), ("f16", ("exp", "id", "cos")),
                         ("i32", ("id", "square", "abs")), ("c64", ("id", "exp", "square"))):
        for name in names:
            for src in ("arg", "gemm"):
                reduction = rng.choice(["sum", "max"] if dtype != "c64" else ["sum"])
                progs.append(_elementwise_program(fam, src, p(name), reduction, rng.choice([0, 1]),
                                                  rng.choice([(4096, 4096), (2048, 2048)]), dtype=dtype))
    # I. top-k
    for src in ("arg", "gemmT", "outer"):
        for name in ("id", "cos"):
            for approx in (False, True):
                progs.append(_topk_program(fam, src, p(name), (4096, 4096), approx))
    # J. loops over chunks
    for loop in ("scan", "scan_unroll", "scan_unroll2", "fori", "map_inside", "map_after", "python"):
        for src in ("gemm", "outer"):
            for name in ("cos", "exp"):
                progs.append(_loop_program(fam, loop, src, p(name), 20000, 4096, 1000))
    # K. gradients
    for src in ("arg", "outer", "gemm"):
        for name in ("cos", "exp", "tanh", "square"):
            for loss in ("linear", "square", "checkpoint"):
                if rng.random() < 0.6:
                    progs.append(_grad_program(fam, src, p(name), loss, rng.choice([(2048, 2048), (4096, 1024)]),
                                               axis=rng.choice([0, 1])))
    return _dedupe(progs)


# -- the holdout family -------------------------------------------------------------------------

#: Producers written differently from the main family's, some of other ops.
PRODUCERS_HOLDOUT: list[tuple[str, str]] = [
    ("sin2", "jnp.sin(t) ** 2"),
    ("lorentz", "1.0 / (1.0 + t * t)"),
    ("softplus_manual", "jnp.log1p(jnp.exp(t))"),
    ("relu", "jnp.maximum(t, 0.0)"),
    ("sign", "jnp.sign(t)"),
    ("cos_plus_sin", "jnp.cos(t) + jnp.sin(t)"),
    ("expm1", "jnp.expm1(t)"),
    ("exp2", "jnp.exp2(t)"),
    ("erf", "jax.scipy.special.erf(t)"),
    ("silu", "jax.nn.silu(t)"),
    ("gelu_exact", "jax.nn.gelu(t, approximate=False)"),
    ("div", "t / 3.0"),
    ("affine", "2.0 * t + 1.0"),
    ("tanh_scaled", "jnp.tanh(0.5 * t)"),
    ("cosh", "jnp.cosh(t)"),
    ("floor", "jnp.floor(t)"),
    ("log_abs", "jnp.log(jnp.abs(t) + 1.0)"),
    ("pow", "jnp.power(jnp.abs(t), 1.5)"),
    ("is_pos", "(t > 0).astype(jnp.float32)"),
    ("minimum", "jnp.minimum(t, 1.0)"),
]

SHAPES_HOLDOUT = [(3000, 5000), (777, 12345), (100, 30000), (6000, 6000), (50000, 300), (12000, 1500),
                  (30, 20000), (1500, 1500), (5000, 777)]


def _holdout_reduction(kind: str, axis: int) -> str:
    """Reductions written as people write them, over ``axis`` (0 or 1, or -1 for the last)."""
    ax = -1 if axis == 1 else 0
    return {
        "sum_method": f"u.sum(axis={ax})",
        "max_method": f"u.max(axis={ax})",
        "mean_keepdims": f"jnp.mean(u, axis={ax}, keepdims=True)",
        "norm": f"jnp.linalg.norm(u, axis={ax})",
        "std": f"jnp.std(u, axis={ax})",
        "softmax_sum": f"jnp.sum(jax.nn.softmax(u, axis={ax}) * u, axis={ax})",
        "log_softmax_max": f"jnp.max(jax.nn.log_softmax(u, axis={ax}), axis={ax})",
        "lax_reduce": f"lax.reduce(u, 0.0, lax.add, ({axis},))",
        "argmin_method": f"u.argmin(axis={ax})",
        "min_method": f"u.min(axis={ax})",
        "count": f"jnp.count_nonzero(u > 0, axis={ax})",
        "all": f"jnp.all(u < 2.0, axis={ax})",
        "sum_sq": f"jnp.sum(u ** 2, axis={ax})",
        "mean_max": f"jnp.mean(u, axis={ax}) - jnp.max(u, axis={ax})",
    }[kind]


def holdout_family(seed: int = 77) -> list[Program]:
    """Programs written differently (forms, ops, sizes), not used to tune the rules (about 160)."""
    rng = random.Random(seed)
    fam = "holdout"
    progs: list[Program] = []
    kinds = ["sum_method", "max_method", "mean_keepdims", "norm", "std", "softmax_sum", "log_softmax_max",
             "lax_reduce", "argmin_method", "min_method", "count", "all", "sum_sq", "mean_max"]
    # tables from arguments, transposed arguments and 3-D reshapes
    for name, expr in PRODUCERS_HOLDOUT:
        for _ in range(3):
            kind = rng.choice(kinds)
            axis = rng.choice([0, 1])
            r, length = rng.choice(SHAPES_HOLDOUT)
            form = rng.choice(["plain", "swap", "transpose"])
            table = {"plain": "x", "swap": "jnp.swapaxes(x, 0, 1)", "transpose": "jnp.transpose(x)"}[form]
            shape = f"f32[{r},{length}]" if form == "plain" else f"f32[{length},{r}]"
            body = f"def f(x):\n    t = {table}\n    u = {expr}\n    return {_holdout_reduction(kind, axis)}\n"
            progs.append(Program(f"h/{form}/{name}/{kind}/ax{axis}/{r}x{length}", fam, _module(body), shape,
                                 [f"source={form}", f"producer={name}", f"reduction={kind}", f"axis={axis}"]))
    # contractions written with einsum, dot_general, jnp.dot, matmul, and batched
    contractions = [
        ("einsum", "jnp.einsum('ik,jk->ij', a, b)", "f32[{R},{K}], f32[{L},{K}]"),
        ("dot_general", "lax.dot_general(a, b, (((1,), (0,)), ((), ())))", "f32[{R},{K}], f32[{K},{L}]"),
        ("jnp_dot", "jnp.dot(a, b)", "f32[{R},{K}], f32[{K},{L}]"),
        ("matmul", "jnp.matmul(a, b.T)", "f32[{R},{K}], f32[{L},{K}]"),
        ("einsum_mv", "jnp.einsum('ij,j->i', a, b)", "f32[{R},{K}], f32[{K}]"),
        ("vmap_dot", "jax.vmap(lambda row: b @ row)(a)", "f32[{R},{K}], f32[{L},{K}]"),
    ]
    for cname, cexpr, cspec in contractions:
        for name, expr in rng.sample(PRODUCERS_HOLDOUT, 4):
            kind = rng.choice(["sum_method", "max_method", "softmax_sum", "argmin_method", "norm", "count"])
            r, length = rng.choice([(3000, 5000), (1500, 1500), (6000, 6000), (12000, 1500)])
            kk = rng.choice([7, 100, 300])
            vector = cname == "einsum_mv"
            red = "u.sum()" if vector else _holdout_reduction(kind, rng.choice([0, 1]))
            body = f"def f(a, b):\n    t = {cexpr}\n    u = {expr}\n    return {red}\n"
            progs.append(Program(f"h/{cname}/{name}/{kind if not vector else 'sum'}/{r}x{length}/k{kk}", fam,
                                 _module(body), cspec.format(R=r, L=length, K=kk),
                                 [f"source={cname}", f"producer={name}", f"reduction={kind}"]))
    # vmap of a row function, and reductions over a middle axis of a 3-D array
    for name, expr in rng.sample(PRODUCERS_HOLDOUT, 8):
        r, length = rng.choice(SHAPES_HOLDOUT)
        body = (f"def f(x):\n    def row(t):\n        u = {expr}\n        return jnp.sum(u)\n\n"
                f"    return jax.vmap(row)(x)\n")
        progs.append(Program(f"h/vmap_row/{name}/{r}x{length}", fam, _module(body), f"f32[{r},{length}]",
                             ["source=vmap_row", f"producer={name}"]))
    for name, expr in rng.sample(PRODUCERS_HOLDOUT, 8):
        body = f"def f(x):\n    t = x\n    u = {expr}\n    return jnp.sum(u, axis=1)\n"
        progs.append(Program(f"h/3d_middle/{name}", fam, _module(body), "f32[64,4096,256]",
                             ["source=3d", f"producer={name}"]))
    # dtypes
    for dtype in ("bf16", "f16", "i32", "c64"):
        for name, expr in (("affine", "2 * t + 1"), ("exp", "jnp.exp(t)"), ("sq", "t * t")):
            if dtype == "i32" and name == "exp":
                continue
            red = "jnp.sum(u, axis=-1)" if dtype != "c64" else "jnp.sum(jnp.abs(u), axis=-1)"
            for src, sig, table, spec in (("arg", "x", "x", "{dt}[3000,5000]"),
                                          ("dot", "a, b", "jnp.dot(a, b)", "{dt}[3000,100], {dt}[100,5000]")):
                body = f"def f({sig}):\n    t = {table}\n    u = {expr}\n    return {red}\n"
                progs.append(Program(f"h/dtype/{dtype}/{src}/{name}", fam, _module(body), spec.format(dt=dtype),
                                     [f"dtype={dtype}", f"source={src}", f"producer={name}"]))
    # loops written differently
    loops = {
        "fori_acc": ("def f(a, b):\n    def body(i, acc):\n        c = lax.dynamic_slice(a, (i * 500, 0), (500, 100))\n"
                     "        return acc + jnp.sum({e}, axis=0)\n\n"
                     "    return lax.fori_loop(0, 24, body, jnp.zeros(5000))\n"),
        "map_batch": ("def f(a, b):\n    rows = lax.map(lambda c: jnp.sum({e_row}), a, batch_size=500)\n"
                      "    return rows.sum()\n"),
        "split_loop": ("def f(a, b):\n    acc = 0.0\n    for c in jnp.split(a, 12):\n"
                       "        acc = acc + jnp.sum({e})\n    return acc\n"),
        "scan_carry_max": ("def f(a, b):\n    def body(m, c):\n        return jnp.maximum(m, jnp.max({e}, axis=0)), None\n\n"
                           "    return lax.scan(body, jnp.full(5000, -jnp.inf), a.reshape(12, 1000, 100))[0]\n"),
        "scan_full_unroll": ("def f(a, b):\n    def body(acc, c):\n        return acc + jnp.sum({e}), None\n\n"
                             "    return lax.scan(body, 0.0, a.reshape(12, 1000, 100), unroll=12)[0]\n"),
        "map_stack": ("def f(a, b):\n    blocks = lax.map(lambda c: {e}, a.reshape(12, 1000, 100))\n"
                      "    return blocks.max(axis=(0, 1))\n"),
    }
    for lname, template in loops.items():
        for name, expr in (("sin2", "jnp.sin(t) ** 2"), ("lorentz", "1.0 / (1.0 + t * t)"),
                           ("exp2", "jnp.exp2(t)")):
            e = re.sub(r"\bt\b", "(c @ b)", expr) if lname != "map_batch" else ""
            e_row = re.sub(r"\bt\b", "(c @ b)", expr)
            n = 12000
            body = template.format(e=e, e_row=e_row)
            progs.append(Program(f"h/loop/{lname}/{name}", fam, _module(body), f"f32[{n},100], f32[100,5000]",
                                 [f"loop={lname}", f"producer={name}"]))
    # gradients written differently
    grads = {
        "value_and_grad_mse": ("def f(w, x):\n    def loss(w):\n        u = {e}\n        return jnp.mean(jnp.sum(u, axis=1) ** 2)\n\n"
                               "    return jax.value_and_grad(loss)(w)[1]\n"),
        "vjp_sum": ("def f(w, x):\n    s, pull = jax.vjp(lambda w: jnp.sum({e}, axis=0), w)\n"
                    "    return pull(jnp.ones_like(s))[0]\n"),
        "grad_mean": ("def f(w, x):\n    return jax.grad(lambda w: jnp.mean({e}))(w)\n"),
        "grad_remat_policy": ("def f(w, x):\n    stats = jax.checkpoint(lambda w: jnp.sum({e}, axis=1),\n"
                              "                           policy=jax.checkpoint_policies.nothing_saveable)\n"
                              "    return jax.grad(lambda w: jnp.sum(stats(w) ** 2))(w)\n"),
    }
    for gname, template in grads.items():
        for name, expr, src, spec in (("lorentz", "1.0 / (1.0 + t * t)", "x @ w", "f32[100,3000], f32[5000,100]"),
                                      ("sin2", "jnp.sin(t) ** 2", "x @ w", "f32[100,3000], f32[5000,100]"),
                                      ("relu", "jnp.maximum(t, 0.0)", "x * w", "f32[3000,2000], f32[3000,2000]"),
                                      ("expm1", "jnp.expm1(t)", "x * w", "f32[3000,2000], f32[3000,2000]")):
            e = re.sub(r"\bt\b", f"({src})", expr)
            progs.append(Program(f"h/grad/{gname}/{name}", fam, _module(template.format(e=e)), spec,
                                 [f"grad={gname}", f"producer={name}"]))
    # top-k and attention-like softmax
    for name, body, spec in (
        ("topk_scores", "def f(q, k):\n    return lax.top_k(jnp.einsum('id,jd->ij', q, k), 16)[1]\n",
         "f32[3000,64], f32[5000,64]"),
        ("approx_topk_scores", "def f(q, k):\n    return lax.approx_max_k(jnp.einsum('id,jd->ij', q, k), 16)[1]\n",
         "f32[3000,64], f32[5000,64]"),
        ("attention_bf16", "def f(q, k, v):\n    s = jnp.einsum('id,jd->ij', q, k) / 8.0\n"
                           "    return jax.nn.softmax(s, axis=-1) @ v\n", "bf16[4096,64], bf16[4096,64], bf16[4096,64]"),
        ("attention_f32", "def f(q, k, v):\n    s = jnp.einsum('id,jd->ij', q, k) / 8.0\n"
                          "    return jax.nn.softmax(s, axis=-1) @ v\n", "f32[4096,64], f32[4096,64], f32[4096,64]"),
        ("xent", "def f(h, w, y):\n    logits = h @ w\n"
                 "    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))\n",
         "f32[1024,512], f32[512,30000], f32[1024,30000]"),
        ("rbf_matvec", "def f(x, y, v):\n    d2 = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)\n"
                       "    return jnp.exp(-d2) @ v\n", "f32[3000,3], f32[5000,3], f32[5000]"),
    ):
        progs.append(Program(f"h/special/{name}", fam, _module(body), spec, [f"special={name}"]))
    return _dedupe(progs)


def holdout2_family(seed: int = 4242) -> list[Program]:
    """A second holdout, written after the rules were fixed and evaluated once: whole computations
    people write (k-NN, kernel sums, mixtures, layer norms, attention scores, cross-entropy, pairwise
    distances, batched products), other sizes, none of the main family's templates."""
    rng = random.Random(seed)
    fam = "holdout2"
    progs: list[Program] = []
    sizes = [(2500, 6000), (10000, 1000), (640, 640), (96, 20480), (16384, 96), (333, 33333), (7000, 7000),
             (1200, 24000)]
    templates: list[tuple[str, str, str]] = [
        ("knn_min", "def f(q, r):\n    d2 = jnp.sum(q * q, 1)[:, None] - 2 * q @ r.T + jnp.sum(r * r, 1)[None, :]\n"
                    "    return jnp.min(d2, axis=1)\n", "f32[{n},{k}], f32[{m},{k}]"),
        ("knn_argmin", "def f(q, r):\n    d2 = jnp.sum((q[:, None, :] - r[None, :, :]) ** 2, axis=-1)\n"
                       "    return jnp.argmin(d2, axis=1)\n", "f32[{n},3], f32[{m},3]"),
        ("kde", "def f(x, y):\n    d2 = (x[:, None] - y[None, :]) ** 2\n    return jnp.mean(jnp.exp(-d2 / 0.1), axis=1)\n",
         "f32[{n}], f32[{m}]"),
        ("kde_dot", "def f(x, y):\n    s = x @ y.T\n    return jnp.sum(jnp.exp(s - 1.0), axis=0)\n",
         "f32[{n},{k}], f32[{m},{k}]"),
        ("mixture_nll", "def f(x, mu):\n    logp = -0.5 * (x[:, None] - mu[None, :]) ** 2\n"
                        "    return -jnp.sum(jax.nn.logsumexp(logp, axis=1))\n", "f32[{n}], f32[{m}]"),
        ("layernorm_stats", "def f(x):\n    mu = x.mean(-1, keepdims=True)\n    var = ((x - mu) ** 2).mean(-1)\n"
                            "    return var\n", "f32[{n},{m}]"),
        ("scores_max", "def f(q, k):\n    return jnp.max(jnp.einsum('qd,kd->qk', q, k) * 0.125, axis=-1)\n",
         "f32[{n},{k}], f32[{m},{k}]"),
        ("xent_labels", "def f(logits, labels):\n    lse = jax.nn.logsumexp(logits, axis=-1)\n"
                        "    picked = jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]\n"
                        "    return jnp.mean(lse - picked)\n", "f32[{n},{m}], i32[{n}]"),
        ("cos_sim_max", "def f(a, b):\n    an = a / jnp.linalg.norm(a, axis=1, keepdims=True)\n"
                        "    bn = b / jnp.linalg.norm(b, axis=1, keepdims=True)\n"
                        "    return jnp.max(an @ bn.T, axis=1)\n", "f32[{n},{k}], f32[{m},{k}]"),
        ("histogram", "def f(x, edges):\n    return jnp.sum(x[:, None] < edges[None, :], axis=0)\n",
         "f32[{n}], f32[{m}]"),
        ("poly_features", "def f(x, c):\n    p = x[:, None] ** 2 * c[None, :] + jnp.sin(x[:, None] * c[None, :])\n"
                          "    return jnp.sum(p, axis=0)\n", "f32[{n}], f32[{m}]"),
        ("tensordot_sum", "def f(a, b):\n    return jnp.sum(jnp.tanh(jnp.tensordot(a, b, axes=1)), axis=1)\n",
         "f32[{n},{k}], f32[{k},{m}]"),
        ("bmm_norm", "def f(a, b):\n    return jnp.linalg.norm(jnp.matmul(a, b), axis=(1, 2))\n",
         "f32[8,{n8},{k}], f32[8,{k},{m8}]"),
        ("rowwise_energy", "def f(x):\n    return jnp.sum(jnp.abs(x) ** 3, axis=1) / jnp.max(jnp.abs(x), axis=1)\n",
         "f32[{n},{m}]"),
        ("soft_count", "def f(x, t):\n    return jnp.sum(jax.nn.sigmoid((x[:, None] - t[None, :]) * 10.0), axis=0)\n",
         "f32[{n}], f32[{m}]"),
        ("logcosh_loss", "def f(a, b):\n    r = a[:, None] - b[None, :]\n    return jnp.mean(jnp.log(jnp.cosh(r)), axis=0)\n",
         "f32[{n}], f32[{m}]"),
        ("col_minmax", "def f(x):\n    y = jnp.log1p(x * x)\n    return jnp.max(y, axis=0) - jnp.min(y, axis=0)\n",
         "f32[{n},{m}]"),
        ("transposed_norm", "def f(x):\n    return jnp.sqrt(jnp.sum(jnp.square(x.T - 1.0), axis=1))\n",
         "f32[{n},{m}]"),
    ]
    for name, body, spec in templates:
        for _ in range(7):
            n, m = rng.choice(sizes)
            k = rng.choice([3, 16, 96, 256])
            specs = spec.format(n=n, m=m, k=k, n8=max(8, n // 8), m8=max(8, m // 8))
            progs.append(Program(f"h2/{name}/{n}x{m}/k{k}", fam, _module(body), specs, [f"form={name}"]))
    # dtypes
    for dtype in ("bf16", "f16"):
        for name, body, spec in (("layernorm_stats", templates[5][1], "{dt}[4096,2048]"),
                                 ("scores_max", templates[6][1], "{dt}[4096,64], {dt}[4096,64]"),
                                 ("col_minmax", templates[16][1], "{dt}[8192,1024]")):
            progs.append(Program(f"h2/{dtype}/{name}", fam, _module(body), spec.format(dt=dtype),
                                 [f"form={name}", f"dtype={dtype}"]))
    # gradients of whole losses
    grads = [
        ("grad_mixture", "def f(x, mu):\n    def nll(mu):\n        logp = -0.5 * (x[:, None] - mu[None, :]) ** 2\n"
                         "        return -jnp.sum(jax.nn.logsumexp(logp, axis=1))\n\n    return jax.grad(nll)(mu)\n",
         "f32[20000], f32[2000]"),
        ("grad_kde_dot", "def f(x, y):\n    return jax.grad(lambda x: jnp.sum(jnp.exp(x @ y.T - 1.0)))(x)\n",
         "f32[4096,64], f32[4096,64]"),
        ("grad_scores_sq", "def f(q, k):\n    s = lambda q: jnp.max(q @ k.T, axis=1)\n"
                           "    return jax.grad(lambda q: jnp.sum(s(q) ** 2))(q)\n", "f32[4096,64], f32[4096,64]"),
        ("grad_poly", "def f(x, c):\n    def loss(c):\n        p = jnp.sin(x[:, None] * c[None, :])\n"
                      "        return jnp.sum(jnp.sum(p, axis=0) ** 2)\n\n    return jax.grad(loss)(c)\n",
         "f32[8192], f32[4096]"),
        ("grad_layernorm", "def f(x):\n    def loss(x):\n        mu = x.mean(-1, keepdims=True)\n"
                           "        return jnp.sum(((x - mu) ** 2).mean(-1))\n\n    return jax.grad(loss)(x)\n",
         "f32[4096,2048]"),
        ("grad_remat_kde", "def f(x, y):\n    dens = jax.checkpoint(lambda x: jnp.sum(jnp.exp(x @ y.T), axis=1))\n"
                           "    return jax.grad(lambda x: jnp.sum(jnp.log(dens(x))))(x)\n", "f32[4096,64], f32[4096,64]"),
    ]
    for name, body, spec in grads:
        progs.append(Program(f"h2/{name}", fam, _module(body), spec, [f"grad={name}"]))
    # loops
    loops = [
        ("knn_scan", "def f(q, r):\n    def step(_, qc):\n        d2 = jnp.sum(qc * qc, 1)[:, None] - 2 * qc @ r.T\n"
                     "        return None, jnp.min(d2, axis=1)\n\n    return lax.scan(step, None, q.reshape(10, 1000, 64))[1]\n",
         "f32[10000,64], f32[8000,64]"),
        ("kde_map", "def f(x, y):\n    return lax.map(lambda xc: jnp.sum(jnp.exp(-(xc[:, None] - y[None, :]) ** 2), axis=1),\n"
                    "                   x.reshape(16, 1000)).reshape(-1)\n", "f32[16000], f32[8000]"),
        ("kde_pyloop", "def f(x, y):\n    parts = [jnp.sum(jnp.exp(-(x[i:i + 1000, None] - y[None, :]) ** 2), axis=1)\n"
                       "             for i in range(0, 16000, 1000)]\n    return jnp.concatenate(parts)\n",
         "f32[16000], f32[8000]"),
        ("knn_unrolled", "def f(q, r):\n    def step(_, qc):\n        return None, jnp.min(jnp.sum(qc * qc, 1)[:, None] - 2 * qc @ r.T, axis=1)\n\n"
                         "    return lax.scan(step, None, q.reshape(10, 1000, 64), unroll=True)[1]\n",
         "f32[10000,64], f32[8000,64]"),
        ("energy_fori", "def f(x, y):\n    def body(i, acc):\n        xc = lax.dynamic_slice_in_dim(x, i * 2000, 2000)\n"
                        "        return acc + jnp.sum(jnp.cos(xc[:, None] - y[None, :]))\n\n"
                        "    return lax.fori_loop(0, 8, body, 0.0)\n", "f32[16000], f32[8000]"),
        ("stack_then_max", "def f(x, y):\n    tabs = lax.map(lambda xc: jnp.tanh(xc[:, None] * y[None, :]), x.reshape(8, 2000))\n"
                           "    return tabs.max(axis=(0, 1))\n", "f32[16000], f32[8000]"),
    ]
    for name, body, spec in loops:
        progs.append(Program(f"h2/loop/{name}", fam, _module(body), spec, [f"loop={name}"]))
    return _dedupe(progs)


def holdout3_family(seed: int = 9001) -> list[Program]:
    """A third holdout, written after holdout2's misses were fixed and evaluated once: physics,
    statistics, signal and network code (pairwise energies, logistic losses, DFTs by matrix, masked
    attention, an HMM forward pass), other sizes."""
    rng = random.Random(seed)
    fam = "holdout3"
    progs: list[Program] = []
    sizes = [(3072, 4096), (1536, 1536), (50000, 256), (256, 50000), (9000, 3000), (4000, 12000), (128, 65536)]
    templates: list[tuple[str, str, str]] = [
        ("lennard_jones", "def f(a, b):\n    r2 = (a[:, None] - b[None, :]) ** 2 + 1.0\n    inv6 = 1.0 / r2 ** 3\n"
                          "    return jnp.sum(inv6 * inv6 - inv6, axis=1)\n", "f32[{n}], f32[{m}]"),
        ("coulomb", "def f(q, p):\n    r = jnp.abs(q[:, None] - p[None, :]) + 0.1\n    return (1.0 / r).sum(axis=0)\n",
         "f32[{n}], f32[{m}]"),
        ("logistic_loss", "def f(X, w, y):\n    z = X @ w\n    return jnp.sum(jnp.log1p(jnp.exp(-y * z)))\n",
         "f32[{n},{m}], f32[{m}], f32[{n}]"),
        ("hinge", "def f(X, W):\n    s = X @ W\n    return jnp.mean(jnp.maximum(0.0, 1.0 - s), axis=1)\n",
         "f32[{n},{k}], f32[{k},{m}]"),
        ("softmax_regression", "def f(X, W, Y):\n    logits = jnp.dot(X, W)\n"
                               "    return -jnp.sum(Y * jax.nn.log_softmax(logits, axis=1))\n",
         "f32[{n},{k}], f32[{k},{m}], f32[{n},{m}]"),
        ("dft_power", "def f(t, fr, x):\n    ph = t[:, None] * fr[None, :]\n"
                      "    re = jnp.sum(jnp.cos(ph) * x[:, None], axis=0)\n    im = jnp.sum(jnp.sin(ph) * x[:, None], axis=0)\n"
                      "    return re ** 2 + im ** 2\n", "f32[{n}], f32[{m}], f32[{n}]"),
        ("masked_scores", "def f(q, k):\n    s = q @ k.T\n    mask = jnp.arange(s.shape[1])[None, :] <= jnp.arange(s.shape[0])[:, None]\n"
                          "    s = jnp.where(mask, s, -1e9)\n    return jax.nn.logsumexp(s, axis=1)\n",
         "f32[{n},{k}], f32[{n},{k}]"),
        ("autocorr", "def f(x, lags):\n    prod = x[:, None] * jnp.roll(x, 1)[:, None] * lags[None, :]\n"
                     "    return jnp.mean(prod, axis=0)\n", "f32[{n}], f32[{m}]"),
        ("rms_rows", "def f(x):\n    return jnp.sqrt(jnp.mean(jnp.square(x), axis=-1))\n", "f32[{n},{m}]"),
        ("max_abs_cols", "def f(x):\n    return jnp.max(jnp.abs(jnp.tanh(x)), axis=0)\n", "f32[{n},{m}]"),
        ("mlp_pool", "def f(x, w1, w2):\n    h = jax.nn.relu(x @ w1)\n    return jnp.mean(h @ w2, axis=0)\n",
         "f32[{n},{k}], f32[{k},{m}], f32[{m},{k}]"),
        ("gauss_ll", "def f(x, mu):\n    d = x[:, None, :] - mu[None, :, :]\n    return jnp.max(-0.5 * jnp.sum(d * d, axis=-1), axis=1)\n",
         "f32[{n},4], f32[{m},4]"),
        ("any_close", "def f(a, b):\n    return jnp.any(jnp.abs(a[:, None] - b[None, :]) < 1e-3, axis=1)\n",
         "f32[{n}], f32[{m}]"),
        ("prod_sigmoid", "def f(a, b):\n    return jnp.prod(jax.nn.sigmoid(a @ b), axis=1)\n", "f32[{n},{k}], f32[{k},{m}]"),
    ]
    for name, body, spec in templates:
        for _ in range(7):
            n, m = rng.choice(sizes)
            k = rng.choice([4, 32, 128, 500])
            progs.append(Program(f"h3/{name}/{n}x{m}/k{k}", fam, _module(body), spec.format(n=n, m=m, k=k),
                                 [f"form={name}"]))
    for dtype in ("bf16", "f16"):
        for name, body, spec in (("mlp_pool", templates[10][1], "{dt}[4096,256], {dt}[256,4096], {dt}[4096,256]"),
                                 ("rms_rows", templates[8][1], "{dt}[8192,4096]"),
                                 ("hinge", templates[3][1], "{dt}[4096,64], {dt}[64,8192]")):
            progs.append(Program(f"h3/{dtype}/{name}", fam, _module(body), spec.format(dt=dtype),
                                 [f"form={name}", f"dtype={dtype}"]))
    extra = [
        ("grad_logistic", "def f(X, w, y):\n    loss = lambda w: jnp.sum(jnp.log1p(jnp.exp(-y * (X @ w))))\n"
                          "    return jax.grad(loss)(w)\n", "f32[20000,512], f32[512], f32[20000]"),
        ("grad_softmax_regression", "def f(X, W, Y):\n    loss = lambda W: -jnp.sum(Y * jax.nn.log_softmax(X @ W, axis=1))\n"
                                    "    return jax.grad(loss)(W)\n", "f32[4096,128], f32[128,8192], f32[4096,8192]"),
        ("grad_lj", "def f(a, b):\n    e = lambda a: jnp.sum(jnp.sum(1.0 / ((a[:, None] - b[None, :]) ** 2 + 1.0) ** 6, axis=1))\n"
                    "    return jax.grad(e)(a)\n", "f32[8192], f32[8192]"),
        ("grad_dft", "def f(t, fr, x):\n    def p(fr):\n        ph = t[:, None] * fr[None, :]\n"
                     "        return jnp.sum(jnp.sum(jnp.cos(ph) * x[:, None], axis=0) ** 2)\n\n"
                     "    return jax.grad(p)(fr)\n", "f32[8192], f32[4096], f32[8192]"),
        ("hmm_forward", "def f(log_a, log_b):\n    def step(alpha, lb):\n"
                        "        return jax.nn.logsumexp(alpha[:, None] + log_a, axis=0) + lb, None\n\n"
                        "    return lax.scan(step, jnp.zeros(log_a.shape[0]), log_b)[0]\n", "f32[2048,2048], f32[100,2048]"),
        ("layers_fori", "def f(ws, x):\n    def body(i, h):\n        return jnp.tanh(h @ ws[i]) - jnp.mean(h, axis=0)\n\n"
                        "    return jnp.sum(lax.fori_loop(0, 4, body, x), axis=1)\n", "f32[4,1024,1024], f32[4096,1024]"),
        ("energy_map", "def f(a, b):\n    e = lax.map(lambda c: jnp.sum(1.0 / (jnp.abs(c[:, None] - b[None, :]) + 1.0)), a.reshape(8, 2048))\n"
                       "    return e.sum()\n", "f32[16384], f32[16384]"),
        ("energy_pyloop", "def f(a, b):\n    tot = 0.0\n    for i in range(8):\n"
                          "        c = a[i * 2048:(i + 1) * 2048]\n        tot = tot + jnp.sum(1.0 / (jnp.abs(c[:, None] - b[None, :]) + 1.0))\n"
                          "    return tot\n", "f32[16384], f32[16384]"),
        ("dft_unrolled", "def f(t, fr):\n    def step(acc, tc):\n        return acc + jnp.sum(jnp.cos(tc[:, None] * fr[None, :]), axis=0), None\n\n"
                         "    return lax.scan(step, jnp.zeros(fr.shape[0]), t.reshape(8, 1024), unroll=True)[0]\n",
         "f32[8192], f32[8192]"),
    ]
    for name, body, spec in extra:
        progs.append(Program(f"h3/{name}", fam, _module(body), spec, [f"form={name}"]))
    return _dedupe(progs)


def _dedupe(progs: list[Program]) -> list[Program]:
    seen: set[str] = set()
    out = []
    for prog in progs:
        if prog.key not in seen:
            seen.add(prog.key)
            out.append(prog)
    return out


def families() -> dict[str, list[Program]]:
    return {"main": main_family(), "holdout": holdout_family(), "holdout2": holdout2_family(),
            "holdout3": holdout3_family()}


# -- ground truth -------------------------------------------------------------------------------

#: Reduction primitives whose operand is "a table feeding a reduction".
REDUCTION_PRIMITIVES = frozenset({"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
                                  "reduce_or", "reduce_xor", "argmax", "argmin", "reduce", "top_k",
                                  "approx_top_k"})


def table_elements(jaxpr: Any, scale: int = 1) -> tuple[int, str]:
    """The elements of the largest operand of a reduction primitive (a loop body's times its trips) and its dtype."""
    best = (0, "")
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in REDUCTION_PRIMITIVES and eqn.invars:
            aval = eqn.invars[0].aval
            n = math.prod(aval.shape) * scale
            if n > best[0]:
                best = (n, str(aval.dtype))
        for sub, trips in _subjaxprs(eqn):
            best = max(best, table_elements(sub, scale * trips))
    return best


def _subjaxprs(eqn: Any) -> Iterator[tuple[Any, int]]:
    params = eqn.params
    if eqn.primitive.name == "scan":
        yield params["jaxpr"].jaxpr, int(params["length"])
        return
    if eqn.primitive.name == "while":
        yield params["body_jaxpr"].jaxpr, _while_trips(eqn)
        return
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(item, "jaxpr", None)
            if inner is not None and hasattr(inner, "eqns"):
                yield inner, 1
            elif hasattr(item, "eqns"):
                yield item, 1


def _while_trips(eqn: Any) -> int:
    """A ``fori_loop``'s trip count from its bounds when they are literals (1 when unknown)."""
    cond = eqn.params["cond_jaxpr"].jaxpr
    for ceqn in cond.eqns:
        if ceqn.primitive.name == "lt":
            bound = ceqn.invars[1]
            value = getattr(bound, "val", None)
            if value is not None:
                return int(value)
    ncond = eqn.params["cond_nconsts"]
    consts = eqn.invars[:ncond]
    for c in consts:
        value = getattr(c, "val", None)
        if value is not None:
            return int(value)
    return 1


def _elements(shape: str) -> int:
    m = re.search(r"\[([\d,]*)\]", shape)
    if not m or not m.group(1):
        return 1
    return math.prod(int(x) for x in m.group(1).split(","))


_ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "bfloat16": 2, "float16": 2, "float32": 4, "int32": 4,
             "uint32": 4, "float64": 8, "int64": 8, "complex64": 8, "complex128": 16}


def truth_of(report: Any, table: int, table_dtype: str, dot_operand: int) -> dict[str, Any]:
    """The ground truth of one report (see the module's docstring)."""
    if report.error is not None:
        return {"error": report.error.message.splitlines()[0][:300] if report.error.message else "error"}
    need = STORED_FRACTION * table
    stored_buffers = [m for m in report.materialized if _elements(m.shape) >= need]
    biggest = max(stored_buffers, key=lambda m: m.bytes, default=None)
    temp = report.memory.temp_bytes or 0
    by_temp = (report.target != "tpu:v5e" and table > 0
               and temp >= need * min(_ITEMSIZE.get(table_dtype, 4), 4))
    pads = {f.name for f in report.fusions if "pad" in f.ops and set(f.ops) <= {"pad", "copy", "bitcast", "broadcast"}}
    copies = [m for m in [*report.argument_copies, *report.materialized]
              if dot_operand and _elements(m.shape) >= STORED_FRACTION * dot_operand
              and (m in report.argument_copies or m.producer in pads)]
    # the buffer's own layout: a multi-output fusion's tuple has none, its elements each have theirs
    memory_space = biggest.memory_space if biggest is not None else 0
    return {
        "stored": bool(stored_buffers) or by_temp,
        "by": "buffer" if stored_buffers else ("temp" if by_temp else ""),
        "buffer": f"{biggest.shape} ({biggest.bytes} B, {biggest.producer_op or biggest.producer})" if biggest else "",
        "memory_space": memory_space,
        "temp_bytes": temp,
        "table_elements": table,
        "operand_copy": bool(copies),
        "verdict_unfused": any(not r.fused for r in report.deciding_reductions),
        "compile_seconds": round(report.compile_seconds, 2),
    }


def _dot_operand_elements(jaxpr: Any) -> int:
    best = 0
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            best = max(best, *(math.prod(v.aval.shape) for v in eqn.invars))
        for sub, _ in _subjaxprs(eqn):
            best = max(best, _dot_operand_elements(sub))
    return best


def jaxpr_facts(prog: Program) -> dict[str, Any]:
    """Table size, dtype and the largest dot operand, from the program's jaxpr."""
    import jax
    from guide_predictor import load_function, structs_of

    fn = load_function(prog.source, "f")
    structs = structs_of(prog.specs)
    closed = jax.make_jaxpr(fn)(*structs)
    table, dtype = table_elements(closed.jaxpr)
    return {"table": table, "dtype": dtype, "dot_operand": _dot_operand_elements(closed.jaxpr)}


# -- the compile runs ---------------------------------------------------------------------------


def load_truth(path: Path = TRUTH_FILE) -> dict[tuple[str, str], dict[str, Any]]:
    """The compiled truth in ``path`` (one JSON record a line), by (program key, target)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                out[(rec["key"], rec["target"])] = rec
    return out


def compile_truth(progs: list[Program], targets: list[str], path: Path, timeout: float,
                  limit: int | None = None) -> None:
    """Compile each program not yet in the truth file ``path``, for each target, and append what
    the optimized HLO says (:func:`truth_of`) as it goes: the holdout uses it too."""
    import sphinx_jaxhlo

    have = load_truth(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    todo = [(p, t) for t in targets for p in progs if (p.key, t) not in have]
    if limit:
        todo = todo[:limit]
    print(f"{len(todo)} compiles to do ({len(progs)} programs)", flush=True)
    facts_cache: dict[str, dict[str, Any]] = {}
    for i, (prog, target) in enumerate(todo):
        facts = facts_cache.get(prog.key) or jaxpr_facts(prog)
        facts_cache[prog.key] = facts
        start = time.time()
        try:
            reports = sphinx_jaxhlo.analyze_source(prog.source, "f", prog.specs, targets=[target], timeout=timeout)
            report = reports.get(target)
            if report is None:
                failure = reports.failures[0].describe() if reports.failures else "no report"
                truth = {"error": failure.splitlines()[0][:300]}
            else:
                truth = truth_of(report, facts["table"], facts["dtype"], facts["dot_operand"])
        except Exception as exc:
            truth = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}
        rec = {"key": prog.key, "name": prog.name, "family": prog.family, "target": target, **truth,
               "seconds": round(time.time() - start, 2)}
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, sort_keys=True) + "\n")
        print(f"[{i + 1}/{len(todo)}] {target} {prog.name}: {truth.get('stored', truth.get('error'))} "
              f"({rec['seconds']} s)", flush=True)


def compile_family(targets: list[str], only: str | None, limit: int | None, timeout: float) -> None:
    """Compile every program not yet in the truth file, for each target; appends as it goes."""
    progs = [p for fam, ps in families().items() if only in (None, fam) for p in ps]
    compile_truth(progs, targets, TRUTH_FILE, timeout, limit)


def predicted(prog: Program, target: str, calibrated: bool = True) -> dict[str, Any]:
    """The predictor's answer for one program (jaxpr only), as JSON; a failure of the rules is an answer
    that decides nothing (``rule: error``), never an exception: the holdout scores with it too.
    ``calibrated=False``: the rules' own answer, before the calibration's gate."""
    from guide_predictor import predict

    try:
        return predict(prog.source, *_split_specs(prog.specs), target=target, calibrated=calibrated).to_dict()
    except Exception as exc:
        return {"stored": None, "certain": False, "rule": "error", "why": f"{type(exc).__name__}: {exc}", "where": ""}


def write_report() -> dict[str, Any]:
    """Predict every program (jaxpr only), compare with the truth, write the results file."""

    truth = load_truth()
    programs = []
    summary: dict[str, dict[str, dict[str, Any]]] = {}
    for fam, progs in families().items():
        for prog in progs:
            entry: dict[str, Any] = {"name": prog.name, "family": fam, "key": prog.key, "source": prog.source,
                                     "specs": prog.specs, "classes": prog.classes, "targets": {}}
            for target in TARGETS:
                rec = truth.get((prog.key, target))
                if rec is None or "error" in rec:
                    entry["targets"][target] = {"truth": None, "error": rec.get("error") if rec else "not compiled"}
                    continue
                pred = predicted(prog, target, calibrated=False)  # the rules' own record
                # an answer the rules do not give ("compile it") is no agreement: it is counted apart
                answered = bool(pred["certain"]) and pred["stored"] is not None
                agree = pred["stored"] == rec["stored"] if answered else None
                row = {"truth": rec["stored"], "truth_buffer": rec["buffer"], "truth_by": rec["by"],
                       "temp_bytes": rec["temp_bytes"], "memory_space": rec["memory_space"],
                       "prediction": pred["stored"], "certain": bool(pred["certain"]), "rule": pred["rule"],
                       "why": pred.get("why", ""), "agree": agree}
                if target == "gpu:h100":
                    row["operand_copy"] = rec["operand_copy"]
                    row["predicted_operand_copy"] = pred.get("operand_copy", False)
                entry["targets"][target] = row
                stats = summary.setdefault(fam, {}).setdefault(target, {"programs": 0, "agree": 0, "misses": [],
                                                                         "answered": 0, "abstained": []})
                stats["programs"] += 1
                stats["answered"] += int(agree is not None)
                stats["agree"] += int(bool(agree))
                if agree is False:
                    stats["misses"].append(prog.name)
                elif agree is None:
                    stats["abstained"].append(prog.name)
            programs.append(entry)
    for fam in summary.values():
        for stats in fam.values():
            # right of the answers given; the share answered beside it
            stats["accuracy"] = round(stats["agree"] / stats["answered"], 4) if stats["answered"] else None
            stats["answered_share"] = round(stats["answered"] / stats["programs"], 4) if stats["programs"] else None
    import jax

    copies: dict[str, dict[str, int]] = {}
    rules: dict[str, dict[str, dict[str, int]]] = {}
    for entry in programs:
        for target, row in entry["targets"].items():
            if row.get("truth") is None:
                continue
            counts = rules.setdefault(target, {}).setdefault(row["rule"], {"programs": 0, "agree": 0, "answered": 0})
            counts["programs"] += 1
            counts["answered"] += int(row["agree"] is not None)
            counts["agree"] += int(bool(row["agree"]))
            if "operand_copy" in row:
                c = copies.setdefault(entry["family"], {"programs": 0, "agree": 0})
                c["programs"] += 1
                c["agree"] += int(row["operand_copy"] == row["predicted_operand_copy"])
    first_looks = json.loads(FIRST_LOOKS_FILE.read_text(encoding="utf-8")) if FIRST_LOOKS_FILE.exists() else {}
    result = {"generated": time.strftime("%Y-%m-%d"), "jax": jax.__version__,
              "truth_rule": ("stored: an intermediate of >= 0.9 x the table's elements is written to memory "
                             "(report.materialized), or on cpu/gpu:h100 XLA's temp holds >= 0.9 x the table's "
                             "elements; the table is the largest operand of a reduction primitive in the jaxpr, "
                             "a loop body's counted times its trips"),
              "accuracy": {fam: {t: s["accuracy"] for t, s in stats.items()} for fam, stats in summary.items()},
              "first_evaluation": first_looks, "operand_copy_h100": copies, "by_rule": rules,
              "summary": summary, "programs": programs}
    RESULTS_FILE.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return result


def _split_specs(specs: str) -> list[str]:
    """Split ``"f32[3,4], f32[4]"`` into one spec a positional argument."""
    return [part.strip() for part in split_top_level(specs) if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile the programs not in the truth file yet")
    c.add_argument("--targets", default=",".join(TARGETS))
    c.add_argument("--family", choices=["main", "holdout", "holdout2", "holdout3"])
    c.add_argument("--limit", type=int)
    c.add_argument("--timeout", type=float, default=400)
    sub.add_parser("report", help="predict every program and write the results file")
    sub.add_parser("list", help="list the programs")
    args = parser.parse_args(argv)
    if args.cmd == "compile":
        compile_family([t.strip() for t in args.targets.split(",")], args.family, args.limit, args.timeout)
    elif args.cmd == "report":
        result = write_report()
        print(json.dumps(result["accuracy"], indent=1))
        for fam, stats in result["summary"].items():
            for target, s in stats.items():
                print(f"{fam} {target}: {s['agree']}/{s['programs']} misses: {s['misses']}")
    else:
        for fam, progs in families().items():
            print(fam, len(progs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
