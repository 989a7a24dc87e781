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
- **the proof**: ``proved_combine``
  accepts the candidate on the jaxpr, and gives the combine that rebuilds the
  result (a mean is combined as a mean, a sum as a sum);
- **the numbers**: :func:`~sphinx_jaxhlo.verify_chunked`
  finds the chunked call equal to the original on small random inputs (chunks
  of 16), before any compile;
- **the compile**: the chunked call is compiled for the report's target at the
  example's shapes; the size suggested is the largest divisor of the axis
  length whose compiled temp memory is within the budget, unless a size that
  does not divide it (a power of two, or 1, 2, 5 times a power of ten) fits and
  is more than four times as large (starting from the estimate that the
  intermediate scales with the chunk), and the figure shown is that compile's.
  A divisor is preferred: the shorter last chunk that another size leaves is
  computed from a slice of the argument, which XLA may copy whole.  When no
  size meets the budget, the suggestion says so, with the smallest size's
  figure, if that is at most half the unchunked function's temp memory (else
  chunking is not worth its loop: one line says so); the smallest size is
  the one that keeps the loop within the trips ``trip_cap`` allows (at most
  1,024, fewer where each trip reads much again);
- **the code as shown**: :func:`~sphinx_jaxhlo.chunked_source` writes the
  plain-JAX code for that size, and
  :func:`~sphinx_jaxhlo.verify_chunked_source` runs that text,
  as a reader would paste it, against the original on random inputs with two
  chunks of that size and a remainder; the words say what ran.

A candidate that fails a step is dropped and the next one tried; when none
passes the proof and the numbers, nothing is shown.  The search is bounded:
at most ``MAX_PROOFS`` argument sets and ``MAX_COMPILES`` compiles for
each.  On a TPU the compile worker searches only where XLA's temp memory itself
is over the budget (the TPU's temp figure, 0 B for most programs, says nothing
of a chunking there otherwise), with at most ``MAX_TPU_COMPILES`` compiles:
a TPU compile takes 4 to 40 s.  When the proof refuses every set of arguments,
the suggestion is one line that says where it refuses the first.  Importing this
module does not import jax.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sphinx_jaxhlo.chunking.proof import ChunkError, proved_combine
from sphinx_jaxhlo.chunking.rewrite import ChunkCheck, chunked, source_check, verify_chunked
from sphinx_jaxhlo.chunking.source import DEFAULT_CHUNK_BUDGET, chunked_source, function_name, positional_parameters
from sphinx_jaxhlo.core.sizes import format_bytes

__all__ = ["Candidate", "candidates", "chunk_sizes", "divisors", "powers_of_two", "round_sizes",
           "suggest_chunking"]

#: The most argument sets the proof is tried on, and the most compiles one suggestion may take.
MAX_PROOFS = 24
MAX_COMPILES = 12
MAX_TPU_COMPILES = 3


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


def divisors(n: int) -> list[int]:
    """The sizes that divide ``n``, below it, ascending (1 always)."""
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)} - {n}) or [1]


def powers_of_two(n: int) -> list[int]:
    """1, 2, 4, 8... below ``n``."""
    return [2 ** i for i in range(max(1, n - 1).bit_length()) if 2 ** i < n]


def chunk_sizes(n: int) -> list[int]:
    """Every size a suggestion may take for an axis ``n`` long, ascending: its divisors, the powers of
    two and the round sizes below it."""
    return sorted({*divisors(n), *powers_of_two(n), *round_sizes(n)})


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


def _default_temp_or_none(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> int | None:
    try:
        return _default_temp(fn, args, kwargs)
    except Exception:
        return None


def _trip_words(found: _Found, trips: int, unsplit: Sequence[str]) -> str:
    """What the chunks cost in time: the trips through the loop, each reading the unsplit arguments,
    and, where the trip cap (:func:`trip_cap`) chose the size, which cap."""
    said = f"The loop takes {trips} trips"
    if found.unsplit and unsplit:
        said += (f", each reading all of {' and '.join(unsplit)} ({format_bytes(found.unsplit)}) again: "
                 f"{format_bytes(trips * found.unsplit)} in all")
    if found.floor > 1 and found.size < 2 * found.floor:  # the trip cap chose the size
        if not found.unsplit or REREAD_BYTES // found.unsplit >= MAX_TRIPS:
            said += f"; smaller chunks are not suggested: over {MAX_TRIPS:,} trips cost time by themselves"
        else:
            said += (f"; smaller chunks are not suggested: more trips would read over "
                     f"{format_bytes(REREAD_BYTES)} again, and each trip costs time")
    return said + "."


def _scalar_output(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    import jax

    try:
        out = jax.eval_shape(lambda *a: fn(*a, **kwargs), *args)
    except Exception:
        return False
    leaves = jax.tree.leaves(out)
    return len(leaves) == 1 and tuple(leaves[0].shape) == ()


def gradient(fn: Callable[..., Any], wrt: Sequence[int], value: bool) -> Callable[..., Any]:
    """``jax.value_and_grad(fn, argnums=wrt)`` (``value``) or ``jax.grad``, for a scalar ``fn``."""
    import jax

    nums = wrt[0] if len(wrt) == 1 else tuple(wrt)
    differentiated = (jax.value_and_grad if value else jax.grad)(fn, argnums=nums)

    def out(*args: Any, **kwargs: Any) -> Any:
        return differentiated(*args, **kwargs)

    out.__name__ = f"{function_name(fn)}_{'grad' if value else 'grad_only'}"
    return out


def _with_gradient(code: str, fn: Callable[..., Any], wrt: Sequence[int], value: bool) -> tuple[str, str]:
    """The chunked code with one line more, its gradient as the ``:grad:`` variant takes it, and
    that line's name (fresh against the code and ``fn``'s scope)."""
    import ast

    from sphinx_jaxhlo.core.hygiene import NamePool, scope_of_function

    tree = ast.parse(code)
    chunked_name = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)][-1]
    jax_name = next((a.asname or a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names
                     if a.name == "jax"), "jax")
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {chunked_name, *scope_of_function(fn)}
    name = NamePool(taken).take(f"{chunked_name}_{'grad' if value else 'grad_only'}")
    nums = str(wrt[0]) if len(wrt) == 1 else str(tuple(wrt))
    form = "value_and_grad" if value else "grad"
    return (f"{code.rstrip()}\n\n\n# its gradient: the function is chunked first, then differentiated\n"
            f"{name} = {jax_name}.{form}({chunked_name}, argnums={nums})\n"), name


@dataclass
class _Found:
    candidate: Candidate
    combine: str
    check: ChunkCheck
    size: int
    temp: int
    fits: bool
    #: the plain-JAX code shown ("" for a function that has no name to call), and its run as shown
    code: str = ""
    shown: ChunkCheck | None = None
    #: the bytes of the arguments not split (each trip reads them); the smallest size the trip cap allows
    unsplit: int = 0
    floor: int = 1


def _largest_fitting(temp: Callable[[int], int | None], n: int, estimate: int, budget: int,
                     max_compiles: int = MAX_COMPILES, floor: int = 1) -> tuple[int, int, bool]:
    """(size, its compiled temp, whether it is within the budget): the largest size that divides ``n``
    whose compiled temp is within the budget, or a size of :func:`chunk_sizes` that does not divide
    ``n`` when it is more than four times as large (a prime length: its divisors are 1 and itself);
    searched from ``estimate`` with at most ``max_compiles`` compiles (a compile that fails counts
    as over the budget); else the smallest size tried.

    A size that divides the axis is preferred because one that does not leaves a shorter chunk that
    the code computes after the loop, from a slice of the argument: XLA may copy the argument for it
    (``batched_gram_sum`` on f32[65536,32,16], H100: 134 MB at chunks of 5 to 1000, 25 MB at 4096).
    No size below ``floor`` is tried (:func:`trip_cap`).
    """
    known: dict[int, int | None] = {}

    def fits(size: int) -> bool:
        if size not in known:
            known[size] = temp(size)
        value = known[size]
        return value is not None and value <= budget

    def largest(sizes: list[int]) -> int | None:
        """The largest fitting size of ``sizes`` (ascending; fitting assumed to hold below a size that fits)."""
        if not sizes:
            return None
        start = max((i for i, size in enumerate(sizes) if size <= estimate), default=0)
        low, high = 0, len(sizes) - 1  # the answer's index lies in [low - 1, high]
        if fits(sizes[start]):
            low, jump = start + 1, 1
            while low <= high and len(known) < max_compiles:  # gallop up, then bisect
                probe = min(high, start + jump)
                if fits(sizes[probe]):
                    low, start, jump = probe + 1, probe, jump * 2
                else:
                    high = probe - 1
                    break
        else:
            high = start - 1
        while low <= high and len(known) < max_compiles:
            middle = (low + high) // 2
            if fits(sizes[middle]):
                low = middle + 1
            else:
                high = middle - 1
        found = [size for size in sizes if known.get(size) is not None and fits(size)]
        return max(found) if found else None

    dividing = [size for size in divisors(n) if size >= floor]
    best = largest(dividing)
    others = [size for size in chunk_sizes(n) if n % size and size > 4 * (best or 0) and size >= floor]
    better = largest(others)
    if better is not None:
        best = better
    if best is not None:
        return best, int(known[best] or 0), True
    tried = min(known)
    return tried, int(known[tried] or 0), False


#: The most bytes a chunking may read again, over all its trips, from the arguments it does not split,
#: and the trips it may take in any case (:func:`trip_cap`).
REREAD_BYTES = 4 * 2**30
MIN_TRIP_CAP = 16
#: The most trips a suggested chunking may take whatever it reads again: each trip costs time by
#: itself (its kernels' launches, the loop's step).  On a TPU v5e the K-chunked product of
#: f32[128, 8192] and f32[8192, 4096] takes 0.73 ms in one call, 1.9 ms in 1,024 trips and 13.2 ms in
#: 8,192 trips of one column (``benchmarks/trip_cost.py``, medians of 20 calls: 1.2 to 1.5 us a trip
#: from 256 trips on); on this 2-core CPU 1,024 trips make it 2.7 times as long.
MAX_TRIPS = 1024


def trip_cap(unsplit_bytes: int) -> int:
    """The most trips through the loop a suggested chunking may take: every trip reads the arguments it
    does not split again (a 128k vocabulary's bf16[1024,131072] weight: 268 MB a trip), so the cap keeps
    those reads under :data:`REREAD_BYTES` in all, and allows :data:`MIN_TRIP_CAP` trips whatever they
    read, and never more than :data:`MAX_TRIPS`.  A budget met only by smaller chunks costs time: for
    a bf16 cross-entropy over 8,192 tokens and 131,072 classes on a TPU v5e, 64-token chunks (128
    trips) made its value and gradient 7.7 times as long as unchunked, chunks of 1,024 (8 trips) 1.6
    times (the guide's bounded page, its ladder's costs)."""
    if unsplit_bytes <= 0:  # nothing is read again: the trips' own cost is the bound
        return MAX_TRIPS
    return min(MAX_TRIPS, max(MIN_TRIP_CAP, REREAD_BYTES // unsplit_bytes))


def _unsplit_bytes(args: Sequence[Any], kwargs: dict[str, Any], nums: Sequence[int]) -> int:
    """The bytes of the array arguments a candidate does not split (each trip reads them)."""
    import numpy as np

    leaves = [a for i, a in enumerate(args) if i not in nums] + list(kwargs.values())
    return sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in leaves
               if hasattr(a, "shape") and hasattr(a, "dtype"))


def _search(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], stored_bytes: int, budget: int,
            temp_of: Callable[[Callable[..., Any]], int | None], original_temp: int | None,
            accept: Callable[[_Found], bool], declined: list[tuple[Candidate, ChunkError | _Found]],
            max_compiles: int = MAX_COMPILES) -> _Found | None:
    """The first candidate that fits the budget, else the first that at least halves the temp memory;
    ``declined`` gets each candidate the proof refused, and each proved one that does not halve it."""
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
        except ChunkError as exc:
            declined.append((candidate, exc))
            continue
        except (ValueError, TypeError):
            continue
        if not check.passed:
            continue

        def temp(size: int, candidate: Candidate = candidate, combine: str = combine) -> int | None:
            return temp_of(chunked(fn, candidate.argnums, size, candidate.axes, combine, check=False))

        estimate = max(1, int(budget * candidate.length / stored_bytes)) if stored_bytes > 0 else 1
        unsplit = _unsplit_bytes(args, kwargs, candidate.argnums)
        floor = -(-candidate.length // trip_cap(unsplit))
        size, figure, fits = _largest_fitting(temp, candidate.length, estimate, budget, max_compiles, floor)
        found = _Found(candidate, combine, check, size, figure, fits, unsplit=unsplit, floor=floor)
        if fits:
            if accept(found):
                return found
        elif original_temp is not None and 2 * figure > original_temp:  # not worth a loop: not half the temp
            declined.append((candidate, found))
        elif fallback is None and accept(found):
            fallback = found
    return fallback


def suggest_chunking(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], stored_bytes: int,
                     budget: int = DEFAULT_CHUNK_BUDGET, name: str | None = None, *,
                     temp_of: Callable[[Callable[..., Any]], int | None] | None = None,
                     original_temp: int | None = None, target: str = "cpu",
                     max_compiles: int = MAX_COMPILES, failed: str = "",
                     grad: tuple[tuple[int, ...], bool] | None = None) -> str:
    """A chunking that bounds a stored intermediate of ``stored_bytes`` to ``budget``:
    words, the ``chunked(...)`` call and its plain-JAX code, one per line group; when
    the proof refuses every candidate, one line that says where it refuses the first
    (the longest axis); else ``""`` (no candidate, or none passes the numerical check).

    :param temp_of: the compiled temp memory of a function at ``args`` and ``kwargs`` on the
        report's target (``None`` when the compile fails); default: a CPU compile.
    :param original_temp: the unchunked function's temp memory, for the words.
    :param target: the target's name, for the words.
    :param max_compiles: the most compiles the search of a size may take for one set of arguments.
    :param failed: why the unchunked program did not compile (``RESOURCE_EXHAUSTED...``), for the words:
        the search runs all the same, it is where the reader is stuck.
    :param grad: for a gradient (``:grad:``): the arguments it is taken with respect to, and whether
        the value comes with it (``jax.value_and_grad``, else ``jax.grad``).  ``fn`` is then the
        function before differentiation: it is chunked first, and the gradient of the chunked
        function is compiled, checked as shown and suggested (the gradient function itself keeps
        the axis it differentiates along, which no chunking of it rebuilds).
    """
    fname = name or function_name(fn)
    if grad is not None:
        if not _scalar_output(fn, args, kwargs):
            return ""
        differentiate = grad

        def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
            return gradient(f, *differentiate)

        inner_temp = temp_of or (lambda f: _default_temp_or_none(f, args, kwargs))

        def grad_temp(f: Callable[..., Any]) -> int | None:
            return inner_temp(wrap(f))

        temp_of = grad_temp

    def default(f: Callable[..., Any]) -> int | None:
        return _default_temp_or_none(f, args, kwargs)

    def accept(found: _Found) -> bool:
        """Write the code for the size found and run it as shown against ``fn`` (the code a reader
        pastes is what is checked); a function without a name to call shows the call alone."""
        nums, axes = found.candidate.argnums, found.candidate.axes
        if not fname.isidentifier():
            return True
        try:
            found.code = chunked_source(fn, nums, found.size, axes, found.combine, fn_name=fname)
            pick = original = None
            if grad is not None:
                found.code, pick = _with_gradient(found.code, fn, *grad)
                original = gradient(fn, *grad)
            found.shown = source_check(fn, found.code, args, kwargs, argnums=nums, size=found.size, axis=axes,
                                       combine=found.combine, fn_name=fname, pick=pick, original=original)
        except Exception:  # the code does not run as shown: no suggestion from this candidate
            return False
        return found.shown.passed

    declined: list[tuple[Candidate, ChunkError | _Found]] = []
    found = _search(fn, args, kwargs, stored_bytes, budget, temp_of or default, original_temp, accept, declined,
                    max_compiles)
    params, _ = positional_parameters(fn)

    def what_of(nums: Sequence[int], axes: Sequence[int]) -> str:
        names = [params[i] if i < len(params) else f"argument {i}" for i in nums]
        return " and ".join(f"axis {a} of {n}" for n, a in zip(names, axes, strict=True)) if len(set(axes)) > 1 \
            else f"axis {axes[0]} of {' and '.join(names)}"

    if found is None:
        if not declined:
            return ""
        said = []
        # a proved chunking that lowers nothing first: it is the nearest to a suggestion
        declined.sort(key=lambda item: isinstance(item[1], ChunkError))
        for candidate, why in declined[:2]:
            over = f"over {what_of(candidate.argnums, candidate.axes)} ({candidate.length} long)"
            if isinstance(why, ChunkError):
                text = str(why).removeprefix(f"chunked({function_name(fn)}): ")
                verb = "cannot prove it" if why.unknown else "refuses"
                said.append(f"{over}, the proof on the jaxpr {verb}: {text}")
            else:
                than = "no less than" if why.temp >= (original_temp or 0) else "over half of"
                said.append(f"{over}, chunked() is proved on the jaxpr (combine={why.combine!r}), but compiled for "
                            f"{target} over chunks of {why.size} it needs {format_bytes(why.temp)} of temp memory, "
                            f"{than} the unchunked {format_bytes(original_temp or 0)}")
        more = len(declined) - len(said)
        others = f" ({more} other set{'s' if more > 1 else ''} of arguments declined too)" if more else ""
        return f"No chunking to suggest: {'; '.join(said)}{others}."
    nums, axes = found.candidate.argnums, found.candidate.axes
    what = what_of(nums, axes)
    argnums = str(nums[0]) if len(nums) == 1 else str(nums)
    axis = str(axes[0]) if len(set(axes)) == 1 else str(axes)
    call = (f"sphinx_jaxhlo.chunked({fname}, argnums={argnums}, size={found.size}, axis={axis}, "
            f"combine={found.combine!r})")
    of = ""
    if grad is not None:
        wrt = str(grad[0][0]) if len(grad[0]) == 1 else str(grad[0])
        call = f"jax.{'value_and_grad' if grad[1] else 'grad'}({call}, argnums={wrt})"
        of = f"the gradient of {fname} chunked before differentiation: "
    instead = f" instead of {format_bytes(original_temp)}" if original_temp else ""
    budget_words = f" (budget {format_bytes(budget)})"
    if failed:
        instead = ""
        budget_words += f", where the unchunked program does not compile for {target} ({failed})"
    length = found.candidate.length
    divides = "" if length % found.size == 0 else f", the last one {length % found.size} long"
    trips = -(-length // found.size)
    chunks = f"{trips} chunks of {found.size}{divides}"
    if found.fits:
        words = (f"Chunking would bound it: {of}the result reduces over {what} ({length} long), and chunked() over "
                 f"{chunks} is proved on the jaxpr (combine={found.combine!r}) and, compiled for {target}, needs "
                 f"{format_bytes(found.temp)} of temp memory{instead}{budget_words}.")
    else:
        smallest = f"no chunk size of at most {-(-length // found.floor)} trips" if found.floor > 1 else \
            "no chunk size"
        words = (f"Chunking {of}over {what} ({length} long) is proved on the jaxpr (combine={found.combine!r}), but "
                 f"{smallest} brings the compiled temp memory within the budget of {format_bytes(budget)}: over "
                 f"{chunks}, compiled for {target}, it still needs {format_bytes(found.temp)}{instead}"
                 f"{budget_words if failed else ''}.")
    words += " " + _trip_words(found, trips, [params[i] if i < len(params) else f"argument {i}"
                                               for i in range(len(args)) if i not in nums and
                                               hasattr(args[i], "shape")])
    if found.shown is not None:
        words += f" Checked: {found.shown.describe()}."
    else:
        check = found.check
        words += (f" Checked: {check.describe()} (a function without a name has no code to show).")
    return "\n".join([words, call, found.code]).rstrip("\n")


def gradient_variant_of(source: str, function: str, known: frozenset[str] = frozenset()
                        ) -> tuple[str, tuple[int, ...], bool] | None:
    """For ``function``, a ``:grad:`` variant of an example's source (``energy_grad``): the function
    it differentiates, the positions of the arguments it differentiates with respect to, and
    whether the value comes with the gradient; ``None`` for any other function.

    Read from the variant's code (:mod:`sphinx_jaxhlo.gradient.source`): a function named by a form's
    suffix whose first statement defines the function of the differentiated arguments, which
    calls the original: a top-level ``def`` of the source, or one of ``known`` (the name the code of
    ``analyze(fn, grad=...)`` binds the function object to)."""
    import ast

    from sphinx_jaxhlo.gradient.option import FORMS, grad_variant_name

    tree = ast.parse(source)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    node = defs.get(function)
    if node is None or not node.body or not isinstance(node.body[0], ast.FunctionDef):
        return None
    inner = node.body[0]
    call = inner.body[-1].value if inner.body and isinstance(inner.body[-1], ast.Return) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id not in {*defs, *known}:
        return None
    base = call.func.id
    form = next((f for f in FORMS if grad_variant_name(base, f) == function), None)
    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    wrt = [a.arg for a in inner.args.args]
    if form is None or not wrt or any(w not in params for w in wrt):
        return None
    return base, tuple(params.index(w) for w in wrt), form == "jax.value_and_grad"
