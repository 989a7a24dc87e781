"""Compiling one function for one target and filling its report (the compile side: imports jax, lazily).

The worker (:mod:`sphinx_jaxhlo.compiler.worker`) hands over a function, its
arguments as jax values and the target; this module jits the function with the
example's options, lowers and compiles it (:mod:`sphinx_jaxhlo.compiler.lowering`),
and reads the report's figures off what XLA gave: the optimized HLO and its
analysis, memory and cost, the fusion decisions, the layouts and the
collectives.  An example that is itself wrong raises :class:`ExampleFailure`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
import traceback
from typing import Any, NamedTuple

from sphinx_jaxhlo.compiler.arguments import describe_shardings
from sphinx_jaxhlo.compiler.lowering import UnsupportedTargetError, compile_options, lower_for
from sphinx_jaxhlo.core.report import CompileError, Cost, Memory, Report, Sharding
from sphinx_jaxhlo.hlo.report_analysis import fill_analysis, read_dump_folder

__all__ = ["BUFFERS_VARIABLE", "DECISIONS_VARIABLE", "ExampleFailure", "compile_and_analyze", "compiler_options",
           "example_line", "format_exception", "jit_function", "parse_oom"]


class ExampleFailure(Exception):
    """The example itself is wrong: ``kind`` names the warning subtype."""

    def __init__(self, kind: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


def example_line(tb: Any, source_name: str) -> int | None:
    """The innermost line of the example in a traceback."""
    line = None
    for frame in traceback.extract_tb(tb):
        if frame.filename == source_name or os.path.basename(frame.filename) == source_name:
            line = frame.lineno
    return line


def format_exception(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    # jax appends a long note on traceback filtering; it only helps interactive users.
    text = text.split("\n--------------------")[0]
    return text[:3000]


def parse_oom(message: str) -> tuple[int | None, int | None]:
    """Bytes needed and available from a compile-time out-of-memory message."""
    units = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}

    def size(num: str, unit: str) -> int:
        return round(float(num) * units[unit.upper()])

    num = r"([0-9]+(?:\.[0-9]+)?)([KMGT]?)i?B?"
    m = re.search(r"[Uu]sed " + num + r" of " + num, message)
    if m:
        return size(m.group(1), m.group(2)), size(m.group(3), m.group(4))
    needed = (re.search(r"temporaries\s*\(" + num + r"\)", message)
              or re.search(num + r" of (?:temporar|memory)", message) or re.search(r"needs? " + num, message))
    avail = re.search(r"available (?:HBM|memory)?\s*\(?" + num, message) or re.search(
        r"exceeds? (?:the )?available \w* ?\(" + num, message)
    return (size(needed.group(1), needed.group(2)) if needed else None,
            size(avail.group(1), avail.group(2)) if avail else None)


def _status(exc: BaseException) -> str:
    m = re.match(r"\s*([A-Z][A-Z_]+[A-Z]):", str(exc))
    return m.group(1) if m else type(exc).__name__


def jit_function(fn: Any, static_argnames: tuple[str, ...] = (), donate: tuple[str, ...] = (),
                 options: dict[str, Any] | None = None) -> Any:
    """``jax.jit`` of ``fn``, keeping what a ``jax.jit`` wrapper of it already says.

    :param static_argnames: arguments to make static.
    :param donate: arguments to donate, by name or position (``"0"``).
    :param options: ``jax.jit`` options of a jitted function the caller
        unwrapped (see :mod:`sphinx_jaxhlo.compiler.calls`).
    :raises ExampleFailure: (``option``) for a donated name or position the
        function does not have.
    """
    import jax

    opts: dict[str, Any] = dict(options or {})
    info = getattr(fn, "_jit_info", None)
    inner = getattr(fn, "_fun", None)
    if info is not None and inner is not None:
        # Already jitted: re-jit its own function with its own options, so
        # that its static arguments and donations stay.
        for attr in ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames", "keep_unused",
                     "inline"):
            value = getattr(info, attr, None)
            if value is not None and attr not in opts:
                opts[attr] = value
        compiler_options = dict(getattr(info, "compiler_options_kvs", ()) or ())
        if compiler_options:
            opts.setdefault("compiler_options", compiler_options)
        fn = inner
    names = tuple(d for d in donate if not d.isdigit())
    nums = tuple(int(d) for d in donate if d.isdigit())
    if static_argnames:
        opts["static_argnames"] = tuple(dict.fromkeys((*opts.get("static_argnames", ()), *static_argnames)))
    for kind, more_nums, more_names in (("donate", nums, names), ("static", (), ())):
        all_nums = tuple(dict.fromkeys((*_as_tuple(opts.pop(f"{kind}_argnums", None)), *more_nums)))
        all_names = tuple(dict.fromkeys((*_as_tuple(opts.pop(f"{kind}_argnames", None)), *more_names)))
        # jax infers one from the other only when one is missing: give both,
        # complete, so that an argument counts whether passed by position or name
        all_nums, all_names = _both_ways(fn, all_nums, all_names)
        if all_nums:
            opts[f"{kind}_argnums"] = all_nums
        if all_names:
            opts[f"{kind}_argnames"] = all_names
    try:
        return jax.jit(fn, **opts)
    except (ValueError, TypeError) as exc:
        raise ExampleFailure("option", f"jax.jit refused the options {opts}: {format_exception(exc)}") from None


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (int, str)):
        return (value,)
    return tuple(value)


def _both_ways(fn: Any, nums: tuple[int, ...], names: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Argument positions and names, each completed with the other through
    ``fn``'s signature (as ``jax.jit`` does when given only one of them)."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    by_name = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    out_nums = list(nums) + [positional.index(n) for n in names if n in positional]
    out_names = list(names) + [positional[i] for i in nums if 0 <= i < len(positional) and positional[i] in by_name]
    return tuple(dict.fromkeys(out_nums)), tuple(dict.fromkeys(out_names))


def compiler_options(flags: dict[str, str]) -> dict[str, Any]:
    """Option texts as XLA takes them: ``true``/``false`` (any case) become
    booleans, which XLA's option parser wants; everything else stays text."""
    out: dict[str, Any] = {}
    for name, value in flags.items():
        lowered = value.strip().lower() if isinstance(value, str) else value
        out[name] = {"true": True, "false": False}.get(lowered, value) if isinstance(lowered, str) else value
    return out


def compile_and_analyze(report: Report, target: Any, jitted: Any, args: Any, kwargs: dict[str, Any],
                        flags: dict[str, str], extras: tuple[str, ...], source_name: str, function: str,
                        lowered: Any = None, arguments: str = "arguments", mesh: Any = None) -> Report:
    """Lower (unless given) and compile for the target, then fill the report: what XLA wrote in the
    dump folder and the analysis (:mod:`sphinx_jaxhlo.hlo.report_analysis`, as for a snapshot)."""
    start = time.perf_counter()
    options = compiler_options(flags)
    dump = _dump_plan(target, flags)
    record_folder = dump.folder
    if record_folder is not None:
        from sphinx_jaxhlo.hlo.decisions.collect import collection_options

        options["xla_dump_to"] = record_folder
        if dump.decisions:
            options.update(collection_options(target.platform, record_folder, everything=dump.everything))
    try:
        if lowered is None:
            lowered = lower_for(target, jitted, args, kwargs, mesh)
        compiled = lowered.compile(compile_options(target, options) or None)
    except BaseException as exc:
        try:
            if isinstance(exc, KeyboardInterrupt):
                raise
            if isinstance(exc, UnsupportedTargetError):
                raise ExampleFailure("target", str(exc)) from None
            line = example_line(exc.__traceback__, source_name)
            if type(exc).__name__ in ("XlaRuntimeError", "JaxRuntimeError") and line is None:
                message = str(exc)
                status = _status(exc)
                needed, available = parse_oom(message) if status == "RESOURCE_EXHAUSTED" else (None, None)
                report.error = CompileError(status, message[:4000], needed, available)
                report.compile_seconds = time.perf_counter() - start
                if status == "RESOURCE_EXHAUSTED":
                    _out_of_memory_record(report, dump, target.platform, source_name)
                return report
        finally:
            if record_folder is not None:
                shutil.rmtree(record_folder, ignore_errors=True)
        if isinstance(exc, TypeError) and line is None:
            raise ExampleFailure("args", f"calling {function} with the given {arguments} failed: "
                                 f"{format_exception(exc)}") from None
        raise ExampleFailure("trace", f"while tracing {function}: {format_exception(exc)}", line) from None
    report.compile_seconds = time.perf_counter() - start
    report.hlo = compiled.as_text() or ""
    from sphinx_jaxhlo.hlo.model import HloParseError
    from sphinx_jaxhlo.hlo.parse import parse_module

    module: Any = None
    with contextlib.suppress(HloParseError):  # once, for the records and the analysis (which says why not)
        module = parse_module(report.hlo)
    report.fusion_decisions_note, report.buffer_assignment_note = dump.decisions_note, dump.buffers_note
    if record_folder is not None:
        try:
            read_dump_folder(report, record_folder, target.platform, decisions=dump.decisions, buffers=dump.buffers,
                             module=module)
        finally:
            shutil.rmtree(record_folder, ignore_errors=True)
    if "stablehlo" in extras:
        report.stablehlo = lowered.as_text()
    if "jaxpr" in extras:
        with contextlib.suppress(Exception):
            report.jaxpr = str(jitted.trace(*args, **kwargs).jaxpr)
    report.memory = _memory(compiled)
    report.memory.settle(target.platform)
    report.cost = _cost(compiled)
    _add_mesh(report, target, compiled, args, kwargs, mesh)
    fill_analysis(report, source_name, module)
    from sphinx_jaxhlo.predict.hook import attach_prediction  # the guide's rule, from the jaxpr

    attach_prediction(report, jitted, args, kwargs, source_name, flags)
    return report


#: Which of XLA's records of its fusion decisions a compile worker collects
#: (:mod:`sphinx_jaxhlo.hlo.decisions.quotes`): unset or ``1``, the GPU's (cheap);
#: ``all``, the CPU's and TPU's too (costly); ``0``, none (the benchmark and
#: the tests that check the collection changes nothing compare the ways).
DECISIONS_VARIABLE = "JAXHLO_FUSION_DECISIONS"
#: Whether a compile worker collects XLA's buffer assignment and live ranges
#: (:mod:`sphinx_jaxhlo.hlo.buffer_assignment`, for what is live at the peak): unset or ``1``,
#: on every target; ``0``, not (the benchmark of its cost compares the two).
BUFFERS_VARIABLE = "JAXHLO_LIVE_BUFFERS"

_OFF = ("0", "false", "no", "off")


class _DumpPlan(NamedTuple):
    """What a compile asks XLA to write, in one private folder (``None``: nothing), and why not."""

    folder: str | None
    decisions: bool
    everything: bool
    decisions_note: str
    buffers: bool
    buffers_note: str


def _dump_plan(target: Any, flags: dict[str, str]) -> _DumpPlan:
    """A new private folder for XLA's records, when one is collected: the fusion decisions
    (:mod:`sphinx_jaxhlo.hlo.decisions`) and the buffer assignment
    (:mod:`sphinx_jaxhlo.hlo.buffer_assignment`); for each one not collected, why."""
    from sphinx_jaxhlo.hlo.decisions.collect import COSTLY, collection_options, collection_refused

    setting = os.environ.get(DECISIONS_VARIABLE, "1").strip().lower()
    everything = setting == "all"
    refused = collection_refused(flags, os.environ.get("XLA_FLAGS", ""))
    if setting in _OFF:
        decisions, decisions_note = False, f"not collected: {DECISIONS_VARIABLE} is off"
    elif refused is not None:
        decisions, decisions_note = False, refused
    elif collection_options(target.platform, "", everything=everything):
        decisions, decisions_note = True, ""
    elif collection_options(target.platform, "", everything=True):
        decisions, decisions_note = False, COSTLY.format(platform=target.platform.upper())
    else:
        decisions, decisions_note = False, f"no decision record is known for the platform {target.platform}"
    if os.environ.get(BUFFERS_VARIABLE, "1").strip().lower() in _OFF:
        buffers, buffers_note = False, f"not collected: {BUFFERS_VARIABLE} is off"
    elif refused is not None:
        buffers, buffers_note = False, refused
    else:
        buffers, buffers_note = True, ""
    # in a compile worker, inside its own folder: a worker whose build was killed removes that folder,
    # records of a compile it was in the middle of included
    folder = (tempfile.mkdtemp(prefix="jaxhlo-records-", dir=os.environ.get("JAXHLO_WORKDIR") or None)
              if decisions or buffers else None)
    return _DumpPlan(folder, decisions, everything, decisions_note, buffers, buffers_note)


def _out_of_memory_record(report: Report, dump: _DumpPlan, platform: str, source_name: str) -> None:
    """What a compile that ran out of memory left (:func:`~sphinx_jaxhlo.hlo.report_analysis.read_dump_folder`):
    what is live at the peak it refused."""
    if dump.folder is None or not dump.buffers:
        report.buffer_assignment_note = dump.buffers_note
        return
    read_dump_folder(report, dump.folder, platform, decisions=False, buffers=True)
    fill_analysis(report, source_name)


def _add_mesh(report: Report, target: Any, compiled: Any, args: Any, kwargs: dict[str, Any], mesh: Any) -> None:
    """The mesh and the layouts (the collectives over the mesh are part of the analysis)."""
    report.devices = target.device_count
    kinds = [str(getattr(kind, "name", kind)).lower() for kind in getattr(mesh, "axis_types", ())]
    report.mesh = [[str(name), int(size)] + ([kinds[i]] if i < len(kinds) and kinds[i] != "auto" else [])
                   for i, (name, size) in enumerate(mesh.shape.items())] if mesh is not None else []
    if target.device_count > 1:
        inputs, outputs = describe_shardings(compiled, args, kwargs)
        report.input_shardings = [Sharding(**row) for row in inputs]
        report.output_shardings = [Sharding(**row) for row in outputs]


def _memory(compiled: Any) -> Memory:
    try:
        stats = compiled.memory_analysis()
    except Exception:
        stats = None
    if stats is None:
        return Memory()

    def get(attr: str) -> int | None:
        value = getattr(stats, attr, None)
        return int(value) if value is not None else None

    mem = Memory(argument_bytes=get("argument_size_in_bytes"), output_bytes=get("output_size_in_bytes"),
                 alias_bytes=get("alias_size_in_bytes"), temp_bytes=get("temp_size_in_bytes"),
                 generated_code_bytes=get("generated_code_size_in_bytes"))
    # XLA's peak as it says it; Memory.settle decides whether it holds the temporaries
    mem.peak_bytes = get("peak_memory_in_bytes") or None
    return mem


def _cost(compiled: Any) -> Cost:
    try:
        cost = compiled.cost_analysis()
    except Exception:
        return Cost()
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else None
    if not cost:
        return Cost()

    def get(key: str) -> float | None:
        value = cost.get(key)
        return float(value) if value is not None else None

    return Cost(flops=get("flops"), transcendentals=get("transcendentals"), bytes_accessed=get("bytes accessed"))
