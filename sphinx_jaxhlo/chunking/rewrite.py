"""A bounded rewrite: run a reduction over an argument's axis in chunks, after proving it may.

XLA does not "do the sum as the vmap proceeds": a program that reduces a large
intermediate over an axis of an argument stores the whole intermediate unless
its fusions happen to hold it.  :func:`chunked` writes the program the other way
round: it splits the argument(s) along the axis, calls the function on each
chunk inside :func:`jax.lax.scan` and combines the partial results, so only one
chunk's intermediate lives at a time.  Each chunk's call is checkpointed
(:func:`jax.checkpoint`), so that the same holds under differentiation:
autodiff of a scan otherwise keeps every step's intermediates for the backward
pass, as much as the unchunked program stores, or more.

Before building it, :func:`~sphinx_jaxhlo.chunking.proof.check_chunkable`
proves on the function's jaxpr that the rewrite keeps the result (the rules are
in :mod:`sphinx_jaxhlo.chunking.proof`);
:func:`~sphinx_jaxhlo.chunking.source.chunked_source` writes the same rewrite as
plain JAX code; :func:`verify_chunked` is the second guard, a numerical
comparison on small random inputs on the CPU, and :func:`verify_chunked_source`
runs the code text itself, as a reader would paste it.

Importing this module does not import jax; its functions do.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

from sphinx_jaxhlo.chunking.proof import ChunkError, check_chunkable, chunk_axes
from sphinx_jaxhlo.chunking.source import chunked_source as write_chunked_source
from sphinx_jaxhlo.chunking.source import function_name, normalize_chunking

__all__ = ["ChunkCheck", "LowPrecisionGradientWarning", "chunked", "chunked_source", "combine_identity",
           "prove_and_check", "run_as_shown",
           "source_check", "verify_chunked", "verify_chunked_source"]


def chunked(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, size: int = 1000,
            axis: int | Sequence[int] = 0, combine: str = "sum", *, check: bool = True,
            checkpoint: bool = True) -> Callable[..., Any]:
    """``fn``, computed ``size`` elements of an axis of its argument(s) at a time.

    The returned function splits ``args[argnums]`` along ``axis`` into chunks of
    ``size`` (a last, shorter chunk holds the remainder), calls ``fn`` on each
    chunk inside :func:`jax.lax.scan` and combines the results with ``combine``:
    ``"sum"``, ``"max"``, ``"min"``, or ``"mean"`` (each chunk's mean weighted by
    its length).  The scan starts from the combine's identity (zeros, or
    ``-inf``/``+inf`` for a maximum/minimum), so every full chunk is computed
    inside the loop; only the remainder, shorter than a chunk, is computed after it.
    Shapes are static; it traces under :func:`jax.jit`, ``jax.grad`` and
    ``jax.vmap`` like any JAX function.

    :param fn: a function whose result(s) reduce over the chunked axis.
    :param argnums: the positional argument (or arguments, all split alike) to chunk.
    :param size: the chunk length (clipped to the axis length).
    :param axis: the axis to split, one for all ``argnums`` or one per argnum.
    :param combine: how the partial results make the whole.
    :param check: run :func:`check_chunkable` when the function is traced; it raises
        :class:`ChunkError` for a function it cannot prove.
    :param checkpoint: wrap each chunk's call in :func:`jax.checkpoint`, so that a
        gradient keeps only each chunk's inputs and computes the chunk again in the
        backward pass.  Without it, autodiff of the scan saves every chunk's
        intermediates (the residuals), which together are as large as the
        unchunked intermediate or larger: the gradient would not be bounded.
        A forward pass compiles the same either way.
    :raises ValueError: a bad ``argnums``, ``axis``, ``size`` or ``combine``.
    """
    nums, axes = normalize_chunking(argnums, axis, size, combine)
    name = function_name(fn)

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        import jax
        import jax.numpy as jnp
        from jax import lax

        n, axes_list = chunk_axes(args, nums, axes, name)
        if check:
            check_chunkable(fn, *args, argnums=nums, axis=tuple(axes_list), combine=combine, **kwargs)
        step = min(size, n)
        k, r = divmod(n, step)
        _warn_low_precision_gradient(name, args, kwargs, nums, k + (1 if r else 0))
        merge = {"sum": jnp.add, "mean": jnp.add, "max": jnp.maximum, "min": jnp.minimum}[combine]

        def split(x: Any, a: int) -> Any:
            if a == 0:
                return x[:k * step].reshape(k, step, *x.shape[1:])
            main = lax.slice_in_dim(x, 0, k * step, axis=a)
            return jnp.moveaxis(main.reshape(*x.shape[:a], k, step, *x.shape[a + 1:]), a, 0)

        def rest(x: Any, a: int) -> Any:
            return x[k * step:] if a == 0 else lax.slice_in_dim(x, k * step, None, axis=a)

        def part(*parts: Any) -> Any:
            values = list(args)
            for num, value in zip(nums, parts, strict=True):
                values[num] = value
            return fn(*values, **kwargs)

        if checkpoint:
            part = jax.checkpoint(part, prevent_cse=False)

        def call(parts: Sequence[Any], length: int) -> Any:
            out = part(*parts)
            return jax.tree.map(lambda m: m * length, out) if combine == "mean" else out

        stacks = [split(args[num], a) for num, a in zip(nums, axes_list, strict=True)]

        def body(total: Any, parts: Any) -> tuple[Any, None]:
            return jax.tree.map(merge, total, call(parts, step)), None

        shapes = jax.eval_shape(part, *[s[0] for s in stacks])
        total = jax.tree.map(lambda s: jnp.full(s.shape, combine_identity(combine, s.dtype), s.dtype), shapes)
        total, _ = lax.scan(body, total, stacks)
        if r:
            tail = [rest(args[num], a) for num, a in zip(nums, axes_list, strict=True)]
            total = jax.tree.map(merge, total, call(tail, r))
        if combine == "mean":
            total = jax.tree.map(lambda t: t / n, total)
        return total

    return run


#: The chunk count from which a low-precision gradient's accumulation is warned of (:func:`chunked`).
LOW_PRECISION_CHUNKS = 8


class LowPrecisionGradientWarning(UserWarning):
    """A bf16/f16 argument that :func:`chunked` does not split is differentiated: its gradient is
    summed over the chunks in its own dtype, one rounding per chunk."""


def _warn_low_precision_gradient(name: str, args: Sequence[Any], kwargs: dict[str, Any], nums: Sequence[int],
                                 chunks: int) -> None:
    """Warn when an argument not split, of a 16-bit float dtype, is being differentiated (a tracer of
    ``jax.grad``): the backward pass of the scan adds its gradient up chunk by chunk in that dtype
    (the guide's precision page measures it: 1.7e-3 in one chunk, 1.7e-2 in 128, on the CPU)."""
    import warnings

    import jax
    import jax.numpy as jnp

    if chunks < LOW_PRECISION_CHUNKS:
        return
    leaves = [(str(i), a) for i, a in enumerate(args) if i not in nums] + list(kwargs.items())
    for label, value in leaves:
        for leaf in jax.tree.leaves(value):
            dtype = getattr(leaf, "dtype", None)
            if (type(leaf).__name__ in ("JVPTracer", "LinearizeTracer") and dtype is not None
                    and jnp.issubdtype(dtype, jnp.floating) and jnp.finfo(dtype).bits == 16):
                warnings.warn(
                    f"chunked({name}): argument {label} is {jnp.dtype(dtype).name} and differentiated: its gradient "
                    f"is summed over the {chunks} chunks in {jnp.dtype(dtype).name}, one rounding per chunk (a bf16 "
                    "weight's error grew from 1.7e-3 in one chunk to 1.7e-2 in 128, on the CPU); pass it as "
                    "float32 (w.astype(jnp.float32)) and cast it back inside the function, which keeps the sum in "
                    "float32 at the cost of an f32 copy and time (+86 % at 128 chunks on a TPU v5e), or take "
                    "fewer, larger chunks",
                    LowPrecisionGradientWarning, stacklevel=4)
                return


def chunked_source(fn: Callable[..., Any] | str, argnums: int | Sequence[int] = 0, size: int = 1000,
                   axis: int | Sequence[int] = 0, combine: str = "sum", *, args: Sequence[Any] | None = None,
                   kwargs: dict[str, Any] | None = None, name: str | None = None,
                   arg_names: Sequence[str] | None = None, checkpoint: bool = True, scope: Any = None,
                   keywords: bool | None = None, fn_name: str | None = None) -> str:
    """The plain-JAX code of ``chunked(fn, argnums, size, axis, combine, checkpoint=checkpoint)``,
    checked as it is shown: a function to paste into code that does not depend on this package.

    With ``args`` (``fn``'s positional arguments: arrays, or :class:`jax.ShapeDtypeStruct`), the
    rewrite is proved on ``fn``'s jaxpr (:func:`~sphinx_jaxhlo.check_chunkable`) and the text
    itself runs against ``fn`` (:func:`verify_chunked_source`, its chunk size included) before it
    is returned; a comment above the function says what ran.  Without them (or with ``fn`` given
    as a name) nothing can run it: the comment says it is not checked, and why.  The code calls
    ``fn`` by its name, takes the same positional arguments and computes what :func:`chunked`
    computes, with the same operations; every name it introduces is fresh against ``fn``'s
    parameters, its name, its free variables and globals, and ``scope``
    (``sphinx_jaxhlo.chunking.source.chunked_source`` writes it; its parameters are this
    function's).

    :param args: ``fn``'s positional arguments, to check the code on (only shapes and dtypes are used).
    :param kwargs: ``fn``'s keyword arguments for the check.
    :raises ValueError: bad parameters, or a function the code could not call.
    :raises ChunkError: with ``args``: the proof refuses, or the code shown does not compute
        ``fn``'s result (its check's words); no code is handed out then.
    """
    code = write_chunked_source(fn, argnums, size, axis, combine, name=name, arg_names=arg_names,
                                checkpoint=checkpoint, scope=scope, keywords=keywords, fn_name=fn_name)
    if isinstance(fn, str) or args is None:
        why = ("was given the function's name, not the function" if isinstance(fn, str) else
               "was given no arguments to run it on (args=...)")
        return _above_def(code, f"Not checked: chunked_source {why}; sphinx_jaxhlo.verify_chunked_source checks it.")
    nums, axes = normalize_chunking(argnums, axis, size, combine)
    check_chunkable(fn, *args, argnums=nums, axis=axes, combine=combine, **(kwargs or {}))
    result = verify_chunked_source(fn, code, *args, argnums=nums, size=size, axis=axes, combine=combine,
                                   fn_name=fn_name, **(kwargs or {}))
    if not result.passed:
        raise ChunkError(f"chunked_source({fn_name or function_name(fn)}): the code written does not pass its "
                         f"check, so it is not handed out: {result.describe()}")
    return _above_def(code, f"Checked by sphinx_jaxhlo: {result.describe()}.")


def _above_def(code: str, comment: str) -> str:
    """``code`` with ``comment`` (wrapped) on the lines above its last top-level ``def``."""
    import textwrap

    lines = code.split("\n")
    at = max(i for i, line in enumerate(lines) if line.startswith("def "))
    note = textwrap.wrap(comment, 96, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False)
    return "\n".join([*lines[:at], *note, *lines[at:]])


def combine_identity(combine: str, dtype: Any) -> Any:
    """The value a combine starts from: ``0`` for a sum or mean, the lowest value of
    ``dtype`` for a maximum (``-inf`` for a float, ``False`` for a bool), the highest for a minimum."""
    import jax.numpy as jnp

    if combine in ("sum", "mean"):
        return 0
    high = combine == "min"
    if jnp.issubdtype(dtype, jnp.inexact):
        return jnp.inf if high else -jnp.inf
    if jnp.dtype(dtype) == jnp.bool_:
        return high
    info = jnp.iinfo(dtype)
    return info.max if high else info.min


def prove_and_check(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                    check: dict[str, Any], variant: Callable[..., Any] | None = None) -> ChunkCheck:
    """What the compile worker runs for a ``:chunk:`` variant: the proof on the
    jaxpr (:func:`check_chunkable`), then the numerical check of ``variant``, the
    function the example's source defines from the code shown (:func:`run_as_shown`;
    without it, of :func:`chunked`: :func:`verify_chunked`).

    :raises ChunkError: the proof refuses, or the numbers differ.
    """
    nums = tuple(check["argnums"])
    axis = int(check["axis"])
    check_chunkable(fn, *args, argnums=nums, axis=axis, combine=check["combine"], **kwargs)
    if variant is None:
        result = verify_chunked(fn, *args, argnums=nums, size=int(check["size"]), axis=axis,
                                combine=check["combine"], **kwargs)
    else:
        result = run_as_shown(fn, variant, args, kwargs, argnums=nums, size=int(check["size"]), axis=axis,
                              combine=check["combine"], name=str(check.get("variant") or function_name(variant)))
    if not result.passed:
        raise ChunkError(f"{result.ran}: the numerical check failed: {result.describe()}")
    return result


# -- the numerical check -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChunkCheck:
    """What :func:`~sphinx_jaxhlo.verify_chunked` or :func:`~sphinx_jaxhlo.verify_chunked_source` compared.

    :ivar shapes: the argument shapes it ran, as spec strings (``f32[37,3]``).
    :ivar size: the chunk length it used; ``chunks``: how many chunks, the remainder included.
    :ivar error: the largest absolute difference, over the largest magnitude of the original's result.
    :ivar tolerance: the bound ``error`` had to stay under (from the result's dtype).
    :ivar ran: what ran against the original: ``"chunked(f)"``, or the name of the code shown
        (``"f_chunked"``) when ``as_shown``.
    :ivar original: the original's name.
    :ivar as_shown: the code a reader sees (or pastes) ran, with the chunk size it shows.
    :ivar remainder: the length of the last, shorter chunk (0: none).
    :ivar failure: what went wrong when the code or the original could not run (its error, in
        words); ``""`` when both ran.  A check with a failure has not passed.
    """

    shapes: tuple[str, ...]
    size: int
    chunks: int
    error: float
    tolerance: float
    ran: str = ""
    original: str = ""
    as_shown: bool = False
    remainder: int = 0
    failure: str = ""

    @property
    def passed(self) -> bool:
        return not self.failure and self.error <= self.tolerance

    def describe(self) -> str:
        verdict = "equal within" if self.passed else "DIFFERENT: over"
        full = self.chunks - (1 if self.remainder else 0)
        split = (f"{self.chunks} chunk{'s' if self.chunks != 1 else ''} of {self.size}" if not self.remainder else
                 f"{self.chunks} chunks ({full} of {self.size} and one of {self.remainder})")
        error = (f"relative error {self.error:.1e}, {verdict} the tolerance {self.tolerance:.0e}")
        if self.failure:
            shown = f"the code shown ({self.ran})" if self.as_shown else self.ran or "chunked()"
            on = f" on random {', '.join(self.shapes)}" if self.shapes else ""
            return f"{shown} FAILED the check{on}: {self.failure}"
        if self.as_shown:
            return (f"the code shown ({self.ran}) ran as written on random {', '.join(self.shapes)}, in "
                    f"{split}, against {self.original or 'the original'}: {error}")
        return f"{self.ran or 'chunked()'} checked on random {', '.join(self.shapes)} in {split}: {error}"


def _spec_text(dtype: str, shape: Sequence[int]) -> str:
    from sphinx_jaxhlo.core.specs import DTYPES

    short = next((k for k, (name, _) in DTYPES.items() if name == dtype), dtype)
    return f"{short}[{','.join(map(str, shape))}]"


_TOLERANCE = {"float64": 1e-10, "float32": 1e-4, "bfloat16": 3e-2, "float16": 3e-3}

#: The most elements an array of the check may have (the arguments and every value of the
#: original's jaxpr): a check at the size shown clips the other dimensions until it fits.
CHECK_ELEMENTS = 2**24


def small_shapes(shapes: Sequence[tuple[int, ...]], nums: Sequence[int], axes: Sequence[int], size: int,
                 max_dim: int = 64) -> tuple[list[tuple[int, ...]], int]:
    """Shapes small enough to run on the CPU at once, and a chunk size for them.

    Every dimension is clipped to ``max_dim`` (equal dimensions stay equal); the
    chunked axis gets room for two chunks and a remainder of a chunk size of at most 16.
    """
    return _check_shapes(shapes, nums, axes, min(size, 16), max_dim)


def _check_shapes(shapes: Sequence[tuple[int, ...]], nums: Sequence[int], axes: Sequence[int], size: int,
                  max_dim: int) -> tuple[list[tuple[int, ...]], int]:
    """Every dimension clipped to ``max_dim`` but the chunked axis, which holds two chunks of
    ``size`` and a remainder (within its length), and the chunk size that gives."""
    n = shapes[nums[0]][axes[0]]
    step = min(size, n)
    n_small = min(n, 2 * step + max(1, step // 3)) if step < n else min(n, max_dim)
    step = min(step, n_small)
    out: list[tuple[int, ...]] = []
    for i, shape in enumerate(shapes):
        dims = [min(d, max_dim) for d in shape]
        if i in nums:
            dims[axes[nums.index(i)] % len(shape)] = n_small
        out.append(tuple(dims))
    return out, step


def _largest_value(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    """The most elements of any argument or value of ``fn``'s jaxpr at these arguments."""
    import jax
    import numpy as np

    def walk(jaxpr: Any) -> int:
        most = 0
        for var in [*jaxpr.invars, *jaxpr.outvars]:
            most = max(most, int(np.prod(getattr(getattr(var, "aval", None), "shape", ()) or (1,))))
        for eqn in jaxpr.eqns:
            for var in eqn.outvars:
                most = max(most, int(np.prod(getattr(var.aval, "shape", ()) or (1,))))
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        most = max(most, walk(inner))
        return most

    return walk(jax.make_jaxpr(lambda *a: fn(*a, **kwargs))(*args).jaxpr)


def _random_values(args: Sequence[Any], shapes: Sequence[tuple[int, ...]], seed: int) -> list[Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(seed)
    cpu = jax.devices("cpu")[0]
    values: list[Any] = []
    for arg, shape in zip(args, shapes, strict=True):
        if not (hasattr(arg, "shape") and hasattr(arg, "dtype")):
            values.append(arg)
            continue
        dtype = np.dtype(arg.dtype)
        data: Any
        if jnp.issubdtype(dtype, jnp.floating):  # bfloat16 and float16 too: made in f32, then cast
            data = rng.standard_normal(shape).astype(np.float32)
        elif np.issubdtype(dtype, np.integer):
            data = rng.integers(0, 8, shape)
        elif dtype == np.bool_:
            data = rng.random(shape) < 0.5
        else:
            raise ValueError(f"the numerical check cannot make random values of dtype {dtype}")
        values.append(jax.device_put(jnp.asarray(data, dtype=arg.dtype), cpu))
    return values


def _compare(want: Any, got: Any, tolerance: float | None) -> tuple[float, float]:
    """(the relative error, the tolerance): values equal on both sides (an infinity, a NaN)
    count as no difference."""
    import jax
    import numpy as np

    error = 0.0
    bound = 0.0
    for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got), strict=True):
        w64 = np.asarray(w, dtype=np.float64)
        g64 = np.asarray(g, dtype=np.float64)
        if w64.shape != g64.shape:
            return float("inf"), tolerance if tolerance is not None else 0.0
        same = (w64 == g64) | (np.isnan(w64) & np.isnan(g64))
        finite = np.abs(w64[np.isfinite(w64)])
        scale = float(np.max(finite)) if finite.size else 0.0
        diff = np.abs(w64 - g64)
        diff = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
        worst = float(np.max(diff)) if diff.size else 0.0
        error = max(error, worst / scale if scale > 0 else worst)
        bound = max(bound, _TOLERANCE.get(np.dtype(w.dtype).name, 0.0))
    return error, tolerance if tolerance is not None else bound


def _run_check(fn: Callable[..., Any], rewritten: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
               small: Sequence[tuple[int, ...]], step: int, n_small: int, seed: int,
               tolerance: float | None, **describe: Any) -> ChunkCheck:
    """Run both on random values of the ``small`` shapes and compare; for the code shown
    (``as_shown``), an error of either is the check's failure, reported, not raised."""
    import jax
    import numpy as np

    spec_text = tuple(_spec_text(np.dtype(arg.dtype).name, shape) if hasattr(arg, "dtype") else repr(arg)
                      for arg, shape in zip(args, small, strict=True))
    result = ChunkCheck(shapes=spec_text, size=step, chunks=-(-n_small // step), error=0.0, tolerance=0.0,
                        remainder=n_small % step, original=function_name(fn), **describe)
    values = _random_values(args, small, seed)
    cpu = jax.devices("cpu")[0]
    which = f"{result.original or 'the original'}"
    try:
        with jax.default_device(cpu):
            want = jax.jit(lambda *a: fn(*a, **kwargs))(*values)
            which = f"the code ({result.ran})" if result.as_shown else result.ran or "chunked()"
            got = jax.jit(lambda *a: rewritten(*a, **kwargs))(*values)
        error, bound = _compare(want, got, tolerance)
    except Exception as exc:  # the user's error while running: a failed check, in words
        if not result.as_shown:
            raise
        return dataclasses.replace(result, failure=f"{which} raised {_error_words(exc)}")
    return dataclasses.replace(result, error=error, tolerance=bound)


def _error_words(exc: BaseException) -> str:
    """``TypeError: unsupported operand...``: an error's type and first line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def verify_chunked(fn: Callable[..., Any], *args: Any, argnums: int | Sequence[int] = 0, size: int = 1000,
                   axis: int | Sequence[int] = 0, combine: str = "sum", seed: int = 0, max_dim: int = 64,
                   tolerance: float | None = None, **kwargs: Any) -> ChunkCheck:
    """Run ``fn`` and ``chunked(fn, ...)`` on the CPU, on random inputs of small
    shapes derived from ``args``, and compare the results.

    :param args: arrays or shape-and-dtype structs; their shapes are clipped to ``max_dim`` per
        dimension and the chunk size to 16, so that the check runs in moments and still has
        several chunks and a remainder.
    :param tolerance: the relative error allowed (default: from the result's dtype,
        ``1e-4`` for f32).
    :returns: a :class:`ChunkCheck`; its ``passed`` says whether the results agree.
    :raises ChunkError: when the static proof (:func:`check_chunkable`) refuses.
    """
    nums, axes = normalize_chunking(argnums, axis, size, combine)
    shapes = [tuple(getattr(a, "shape", ())) for a in args]
    chunk_axes(args, nums, axes, function_name(fn))
    small, step = small_shapes(shapes, nums, axes, size, max_dim)
    return _run_check(fn, chunked(fn, nums, step, axes, combine), args, kwargs, small, step,
                      small[nums[0]][axes[0]], seed, tolerance, ran=f"chunked({function_name(fn)})")


def run_as_shown(fn: Callable[..., Any], variant: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                 *, argnums: int | Sequence[int] = 0, size: int = 1000, axis: int | Sequence[int] = 0,
                 combine: str = "sum", name: str = "", seed: int = 0, max_dim: int = 64,
                 tolerance: float | None = None) -> ChunkCheck:
    """Run ``variant``, a function defined by the code a reader sees, as it is (its chunk size
    ``size`` written in it) against ``fn`` on the CPU, on random inputs, and compare.

    The chunked axis holds two chunks of ``size`` and a remainder (within its length); the
    other dimensions are clipped to ``max_dim``, and halved while an argument or a value of
    ``fn``'s jaxpr would hold more than :data:`CHECK_ELEMENTS` elements.

    :param name: the variant's name, for the words.
    :returns: a :class:`ChunkCheck` (``as_shown``); when even dimensions of 2 are too large,
        the check of :func:`~sphinx_jaxhlo.verify_chunked` (chunks of 16), not ``as_shown``.
    """
    import jax

    nums, axes = normalize_chunking(argnums, axis, size, combine)
    shapes = [tuple(getattr(a, "shape", ())) for a in args]
    _, axes_list = chunk_axes(args, nums, axes, function_name(fn))
    dim = max_dim
    while dim >= 2:
        small, step = _check_shapes(shapes, nums, tuple(axes_list), size, dim)
        specs = [jax.ShapeDtypeStruct(shape, arg.dtype) if hasattr(arg, "dtype") else arg
                 for arg, shape in zip(args, small, strict=True)]
        if _largest_value(fn, specs, kwargs) <= CHECK_ELEMENTS:
            return _run_check(fn, variant, args, kwargs, small, step, small[nums[0]][axes_list[0]], seed,
                              tolerance, ran=name or function_name(variant), as_shown=True)
        dim //= 2
    result = verify_chunked(fn, *args, argnums=nums, size=size, axis=axes, combine=combine, seed=seed,
                            max_dim=max_dim, tolerance=tolerance, **kwargs)
    return dataclasses.replace(result, ran=f"{result.ran}, in place of the code shown (its chunks of {size} are "
                                           "too large to run here),")


def verify_chunked_source(fn: Callable[..., Any], code: str, *args: Any, argnums: int | Sequence[int] = 0,
                          size: int = 1000, axis: int | Sequence[int] = 0, combine: str = "sum",
                          seed: int = 0, max_dim: int = 64, tolerance: float | None = None,
                          fn_name: str | None = None, **kwargs: Any) -> ChunkCheck:
    """Run ``code`` (what :func:`~sphinx_jaxhlo.chunked_source` wrote, as a reader pastes it
    beside ``fn``) against ``fn``, on random inputs on the CPU, and compare.

    The code runs as written, its chunk size included, in a copy of ``fn``'s globals with
    ``fn`` under its name; its last top-level function is the one compared (see
    ``run_as_shown`` for the shapes).  ``argnums``, ``size``, ``axis`` and ``combine`` are
    those the code was written with: they size the inputs; ``fn_name``: the name the code calls
    ``fn`` by (default: its ``__name__``).

    :returns: a :class:`ChunkCheck`; its ``passed`` says whether the results agree.  Code that
        does not run (a ``TypeError`` inside it, or in the original) is a check that failed,
        with the error in its words (its ``failure``): never raised as it is.
    :raises ValueError: code that defines no function, or bad ``argnums``, ``size``, ``axis``, ``combine``.
    """
    return source_check(fn, code, args, kwargs, argnums=argnums, size=size, axis=axis, combine=combine, seed=seed,
                        max_dim=max_dim, tolerance=tolerance, fn_name=fn_name)


def source_check(fn: Callable[..., Any], code: str, args: Sequence[Any], kwargs: dict[str, Any], *,
                 argnums: int | Sequence[int] = 0, size: int = 1000, axis: int | Sequence[int] = 0,
                 combine: str = "sum", seed: int = 0, max_dim: int = 64, tolerance: float | None = None,
                 fn_name: str | None = None, pick: str | None = None,
                 original: Callable[..., Any] | None = None) -> ChunkCheck:
    """:func:`verify_chunked_source`, with ``pick``: the name the code binds to compare (default:
    its last top-level function), and ``original``: what it is compared against (default: ``fn``,
    which the code calls; a gradient of ``fn`` for code that ends with the gradient of its rewrite)."""
    import ast
    import functools as _functools

    try:
        defs = [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]
    except SyntaxError as exc:
        defs, problem = ["the code"], f"it does not parse: {_error_words(exc)}"
    else:
        problem = ""
        if not defs:
            raise ValueError("verify_chunked_source: the code defines no function")
    nums, axes = normalize_chunking(argnums, axis, size, combine)
    chunk_axes(args, nums, axes, function_name(fn))
    inner = fn
    while isinstance(inner, _functools.partial) or hasattr(inner, "__wrapped__"):
        inner = inner.func if isinstance(inner, _functools.partial) else inner.__wrapped__
    namespace: dict[str, Any] = dict(getattr(inner, "__globals__", None) or {})
    namespace[fn_name or function_name(fn)] = fn
    if pick and not problem:
        defs.append(pick)
    if not problem:
        try:
            exec(compile(code, f"<{defs[-1]}>", "exec"), namespace)
        except Exception as exc:  # the code's own error at its top level
            problem = f"defining it raised {_error_words(exc)}"
    if not problem:
        try:
            return run_as_shown(original or fn, namespace[defs[-1]], args, kwargs, argnums=argnums, size=size,
                                axis=axis, combine=combine, name=defs[-1], seed=seed, max_dim=max_dim,
                                tolerance=tolerance)
        except Exception as exc:  # tracing the original at the check's shapes, say
            problem = f"running it raised {_error_words(exc)}"
    return ChunkCheck(shapes=(), size=size, chunks=0, error=0.0, tolerance=0.0, ran=defs[-1],
                      original=function_name(original or fn), as_shown=True, failure=problem)
