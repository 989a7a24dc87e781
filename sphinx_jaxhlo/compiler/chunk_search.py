"""The report's chunking suggestion: searched, proved, checked and compiled before it is shown.

When a user reduction reads a stored intermediate larger than the budget
(``jaxhlo_chunk_budget``), or the temp memory is larger than it in a program
with reductions, the compile worker looks for a call of
:func:`sphinx_jaxhlo.chunked` that bounds it.  A suggestion is shown only when
all of these hold, in this order:

- **the arguments**: every set of positional array arguments that share an
  axis of one length is a candidate (one argument, then two together, and so
  on: N-body forces chunk their sources and masses together), longest axis
  first; an axis shorter than both 64 and the stored intermediate over the
  budget is not tried (a chunk of one would still be over the budget);
- **the proof**: :func:`~sphinx_jaxhlo.compiler.chunk_proof.proved_combine`
  accepts the candidate on the jaxpr, and gives the combine that rebuilds the
  result (a mean is combined as a mean, a sum as a sum);
- **the numbers**: :func:`~sphinx_jaxhlo.compiler.chunking.verify_chunked`
  finds the chunked call equal to the original on small random inputs;
- **the compile**: the chunked call is compiled for the report's target at the
  example's shapes; the size suggested is the largest of 1, 2, 5, 10, 20,
  50... below the axis length whose compiled temp memory is within the budget
  (starting from the estimate that the intermediate scales with the chunk),
  and the figure shown is that compile's.  When no size meets the budget, the
  suggestion says so, with the smallest size's figure, if that is below the
  unchunked function's temp memory (else chunking does not help: nothing is shown).

A candidate that fails a step is dropped and the next one tried; when none
passes the proof and the numbers, nothing is shown.  The search is bounded:
at most :data:`MAX_PROOFS` argument sets and :data:`MAX_COMPILES` compiles.
The compile worker does not search on a TPU: a TPU compile takes 4 to 40 s,
and the TPU's temp figure, 0 B for most programs, is not the memory that
matters there (the peak is).  Importing this module
does not import jax.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sphinx_jaxhlo.compiler.chunk_proof import ChunkError, proved_combine
from sphinx_jaxhlo.compiler.chunking import ChunkCheck, chunked, verify_chunked
from sphinx_jaxhlo.core.chunks import DEFAULT_CHUNK_BUDGET, chunked_source, function_name, positional_parameters
from sphinx_jaxhlo.core.sizes import format_bytes

__all__ = ["Candidate", "candidates", "round_sizes", "suggest_chunking"]

#: The most argument sets the proof is tried on, and the most compiles one suggestion may take.
MAX_PROOFS = 24
MAX_COMPILES = 6


@dataclass(frozen=True)
class Candidate:
    """Arguments (by position) chunked together, one axis each, all ``length`` long."""

    argnums: tuple[int, ...]
    axes: tuple[int, ...]
    length: int


def candidates(args: Sequence[Any], min_length: int = 2) -> list[Candidate]:
    """The argument sets to try: longest axis first, then fewer arguments first.

    :param min_length: shorter axes are left out.
    """
    by_length: dict[int, list[tuple[int, int]]] = {}
    for i, arg in enumerate(args):
        if not (hasattr(arg, "shape") and hasattr(arg, "dtype")):
            continue
        for a, d in enumerate(arg.shape):
            if int(d) >= max(2, min_length):
                by_length.setdefault(int(d), []).append((i, a))
    out: list[Candidate] = []
    for n in sorted(by_length, reverse=True):
        pairs = by_length[n]
        for k in range(1, len({i for i, _ in pairs}) + 1):
            for combo in itertools.combinations(pairs, k):
                nums = tuple(i for i, _ in combo)
                if len(set(nums)) == k:
                    out.append(Candidate(nums, tuple(a for _, a in combo), n))
    return out


def round_sizes(n: int) -> list[int]:
    """1, 2, 5, 10, 20, 50... below ``n``."""
    out: list[int] = []
    scale = 1
    while scale < n:
        out += [s * scale for s in (1, 2, 5) if s * scale < n]
        scale *= 10
    return out


def _default_temp(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    """The temp memory of ``fn`` compiled for the CPU (when no target is given)."""
    import jax

    static = tuple(k for k, v in kwargs.items() if not hasattr(v, "shape"))
    compiled = jax.jit(fn, static_argnames=static).trace(*args, **kwargs).lower().compile()
    return int(compiled.memory_analysis().temp_size_in_bytes)


@dataclass
class _Found:
    candidate: Candidate
    combine: str
    check: ChunkCheck
    size: int
    temp: int
    fits: bool


def _largest_fitting(temp: Callable[[int], int | None], n: int, estimate: int, budget: int) -> tuple[int, int, bool]:
    """(size, its compiled temp, whether it is within the budget): the largest round size whose
    compiled temp is within the budget, searched from ``estimate`` with at most :data:`MAX_COMPILES`
    compiles (a compile that fails counts as over the budget); else the smallest size tried."""
    sizes = round_sizes(n)
    known: dict[int, int | None] = {}

    def fits(i: int) -> bool:
        if sizes[i] not in known:
            known[sizes[i]] = temp(sizes[i])
        value = known[sizes[i]]
        return value is not None and value <= budget

    start = max((i for i, s in enumerate(sizes) if s <= estimate), default=0)
    best: int | None = None
    if fits(start):
        best = start
        while best + 1 < len(sizes) and len(known) < MAX_COMPILES and fits(best + 1):
            best += 1
    else:
        low, high = 0, start - 1
        while low <= high and len(known) < MAX_COMPILES:
            middle = (low + high) // 2
            if fits(middle):
                best, low = middle, middle + 1
            else:
                high = middle - 1
    if best is not None:
        return sizes[best], int(known[sizes[best]] or 0), True
    tried = min(known)
    return tried, int(known[tried] or 0), False


def _search(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], stored_bytes: int, budget: int,
            temp_of: Callable[[Callable[..., Any]], int | None], original_temp: int | None) -> _Found | None:
    proofs = 0
    fallback: _Found | None = None
    # an axis shorter than the intermediate over the budget cannot bring it within the budget, but
    # may still bound it some: only the shortest (coordinates, heads) are left out
    needed = -(-stored_bytes // budget) if budget > 0 else 2
    for candidate in candidates(args, min_length=min(needed, 64)):
        if proofs >= MAX_PROOFS:
            break
        proofs += 1
        try:
            combine = proved_combine(fn, *args, argnums=candidate.argnums, axis=candidate.axes, **kwargs).op
            check = verify_chunked(fn, *args, argnums=candidate.argnums, axis=candidate.axes, combine=combine,
                                   size=16, **kwargs)
        except (ChunkError, ValueError, TypeError):
            continue
        if not check.passed:
            continue

        def temp(size: int, candidate: Candidate = candidate, combine: str = combine) -> int | None:
            return temp_of(chunked(fn, candidate.argnums, size, candidate.axes, combine, check=False))

        estimate = max(1, int(budget * candidate.length / stored_bytes)) if stored_bytes > 0 else 1
        size, figure, fits = _largest_fitting(temp, candidate.length, estimate, budget)
        found = _Found(candidate, combine, check, size, figure, fits)
        if fits:
            return found
        if original_temp is None or figure < original_temp:
            fallback = fallback or found
    return fallback


def suggest_chunking(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], stored_bytes: int,
                     budget: int = DEFAULT_CHUNK_BUDGET, name: str | None = None, *,
                     temp_of: Callable[[Callable[..., Any]], int | None] | None = None,
                     original_temp: int | None = None, target: str = "cpu") -> str:
    """A chunking that bounds a stored intermediate of ``stored_bytes`` to ``budget``:
    words, the ``chunked(...)`` call and its plain-JAX code, one per line group; or
    ``""`` when no candidate passes the proof and the numerical check.

    :param temp_of: the compiled temp memory of a function at ``args`` and ``kwargs`` on the
        report's target (``None`` when the compile fails); default: a CPU compile.
    :param original_temp: the unchunked function's temp memory, for the words.
    :param target: the target's name, for the words.
    """
    fname = name or function_name(fn)

    def default(f: Callable[..., Any]) -> int | None:
        try:
            return _default_temp(f, args, kwargs)
        except Exception:
            return None

    found = _search(fn, args, kwargs, stored_bytes, budget, temp_of or default, original_temp)
    if found is None:
        return ""
    nums, axes = found.candidate.argnums, found.candidate.axes
    params, _ = positional_parameters(fn)
    names = [params[i] if i < len(params) else f"argument {i}" for i in nums]
    what = " and ".join(f"axis {a} of {n}" for n, a in zip(names, axes, strict=True)) if len(set(axes)) > 1 \
        else f"axis {axes[0]} of {' and '.join(names)}"
    argnums = str(nums[0]) if len(nums) == 1 else str(nums)
    axis = str(axes[0]) if len(set(axes)) == 1 else str(axes)
    call = (f"sphinx_jaxhlo.chunked({fname}, argnums={argnums}, size={found.size}, axis={axis}, "
            f"combine={found.combine!r})")
    try:
        code = chunked_source(fn, nums, found.size, axes, found.combine, name=f"{fname}_chunked") \
            if fname.isidentifier() else ""
    except ValueError:
        code = ""
    instead = f" instead of {format_bytes(original_temp)}" if original_temp else ""
    check = found.check
    checked = (f"equal to the original on small random inputs (relative error {check.error:.1e} on "
               f"{', '.join(check.shapes)} in {check.chunks} chunks of {check.size})")
    length = found.candidate.length
    if found.fits:
        words = (f"Chunking would bound it: the result reduces over {what} ({length} long), and chunked() over "
                 f"chunks of {found.size} is proved on the jaxpr (combine={found.combine!r}), {checked} and, "
                 f"compiled for {target}, needs {format_bytes(found.temp)} of temp memory{instead} "
                 f"(budget {format_bytes(budget)}).")
    else:
        words = (f"Chunking over {what} ({length} long) is proved on the jaxpr (combine={found.combine!r}) and "
                 f"{checked}, but no chunk size brings the compiled temp memory within the budget of "
                 f"{format_bytes(budget)}: over chunks of {found.size}, compiled for {target}, it still needs "
                 f"{format_bytes(found.temp)}{instead}.")
    return "\n".join([words, call, code]).rstrip("\n")
