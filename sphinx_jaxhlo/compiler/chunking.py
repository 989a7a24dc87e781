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

Before building it, :func:`~sphinx_jaxhlo.compiler.chunk_proof.check_chunkable`
proves on the function's jaxpr that the rewrite keeps the result (the rules are
in :mod:`sphinx_jaxhlo.compiler.chunk_proof`);
:func:`~sphinx_jaxhlo.core.chunks.chunked_source` writes the same rewrite as
plain JAX code; :func:`verify_chunked` is the second guard, a numerical
comparison on small random inputs on the CPU.

Importing this module does not import jax; its functions do.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

from sphinx_jaxhlo.compiler.chunk_proof import ChunkError, check_chunkable, chunk_axes
from sphinx_jaxhlo.core.chunks import function_name, normalize_chunking

__all__ = ["ChunkCheck", "chunked", "combine_identity", "prove_and_check", "verify_chunked"]


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
                    check: dict[str, Any]) -> ChunkCheck:
    """What the compile worker runs for a ``:chunk:`` variant: the proof on the
    jaxpr (:func:`check_chunkable`), then the numerical check (:func:`verify_chunked`).

    :raises ChunkError: the proof refuses, or the numbers differ.
    """
    nums = tuple(check["argnums"])
    axis = int(check["axis"])
    check_chunkable(fn, *args, argnums=nums, axis=axis, combine=check["combine"], **kwargs)
    result = verify_chunked(fn, *args, argnums=nums, size=int(check["size"]), axis=axis,
                            combine=check["combine"], **kwargs)
    if not result.passed:
        raise ChunkError(f"chunked({check['of']}): the numerical check failed: {result.describe()}")
    return result


# -- the numerical check -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChunkCheck:
    """What :func:`verify_chunked` compared.

    :ivar shapes: the argument shapes it ran, as spec strings (``f32[37,3]``).
    :ivar size: the chunk length it used; ``chunks``: how many chunks, the remainder included.
    :ivar error: the largest absolute difference, over the largest magnitude of the original's result.
    :ivar tolerance: the bound ``error`` had to stay under (from the result's dtype).
    """

    shapes: tuple[str, ...]
    size: int
    chunks: int
    error: float
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.error <= self.tolerance

    def describe(self) -> str:
        verdict = "equal within" if self.passed else "DIFFERENT: over"
        return (f"checked on random {', '.join(self.shapes)} in {self.chunks} chunks of {self.size}: relative error "
                f"{self.error:.1e}, {verdict} the tolerance {self.tolerance:.0e}")


def _spec_text(dtype: str, shape: Sequence[int]) -> str:
    from sphinx_jaxhlo.core.specs import DTYPES

    short = next((k for k, (name, _) in DTYPES.items() if name == dtype), dtype)
    return f"{short}[{','.join(map(str, shape))}]"


_TOLERANCE = {"float64": 1e-10, "float32": 1e-4, "bfloat16": 3e-2, "float16": 3e-3}


def small_shapes(shapes: Sequence[tuple[int, ...]], nums: Sequence[int], axes: Sequence[int], size: int,
                 max_dim: int = 64) -> tuple[list[tuple[int, ...]], int]:
    """Shapes small enough to run on the CPU at once, and a chunk size for them.

    Every dimension is clipped to ``max_dim`` (equal dimensions stay equal); the
    chunked axis gets room for two chunks and a remainder of a chunk size of at most 16.
    """
    n = shapes[nums[0]][axes[0]]
    step = min(size, 16, n)
    n_small = min(n, 2 * step + max(1, step // 3)) if step < n else step
    out: list[tuple[int, ...]] = []
    for i, shape in enumerate(shapes):
        dims = [min(d, max_dim) for d in shape]
        if i in nums:
            dims[axes[nums.index(i)] % len(shape)] = n_small
        out.append(tuple(dims))
    return out, step


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
    import jax
    import jax.numpy as jnp
    import numpy as np

    nums, axes = normalize_chunking(argnums, axis, size, combine)
    shapes = [tuple(getattr(a, "shape", ())) for a in args]
    chunk_axes(args, nums, axes, function_name(fn))
    small, step = small_shapes(shapes, nums, axes, size, max_dim)
    rng = np.random.default_rng(seed)
    cpu = jax.devices("cpu")[0]
    values: list[Any] = []
    for arg, shape in zip(args, small, strict=True):
        if not (hasattr(arg, "shape") and hasattr(arg, "dtype")):
            values.append(arg)
            continue
        dtype = np.dtype(arg.dtype)
        data: Any
        if np.issubdtype(dtype, np.floating):
            data = rng.standard_normal(shape).astype(np.float32)
        elif np.issubdtype(dtype, np.integer):
            data = rng.integers(0, 8, shape)
        elif dtype == np.bool_:
            data = rng.random(shape) < 0.5
        else:
            raise ValueError(f"verify_chunked: cannot make random values of dtype {dtype}")
        values.append(jax.device_put(jnp.asarray(data, dtype=arg.dtype), cpu))
    with jax.default_device(cpu):
        want = jax.jit(lambda *a: fn(*a, **kwargs))(*values)
        got = jax.jit(lambda *a: chunked(fn, nums, step, axes, combine)(*a, **kwargs))(*values)
    error = 0.0
    bound = 0.0
    for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got), strict=True):
        w64 = np.asarray(w, dtype=np.float64)
        g64 = np.asarray(g, dtype=np.float64)
        scale = float(np.max(np.abs(w64))) if w64.size else 0.0
        diff = float(np.max(np.abs(w64 - g64))) if w64.size else 0.0
        error = max(error, diff / scale if scale > 0 else diff)
        bound = max(bound, _TOLERANCE.get(np.dtype(w.dtype).name, 0.0))
    n_small = small[nums[0]][axes[0]]
    spec_text = tuple(_spec_text(np.dtype(arg.dtype).name, shape) if hasattr(arg, "dtype") else repr(arg)
                      for arg, shape in zip(args, small, strict=True))
    return ChunkCheck(shapes=spec_text, size=step, chunks=-(-n_small // step),
                      error=error, tolerance=tolerance if tolerance is not None else bound)
