"""The compile worker: a separate process that imports jax once and compiles examples.

Started by :class:`sphinx_jaxhlo.compiler.client.CompileWorker` as
``python -m sphinx_jaxhlo.compiler.worker``.  Requests arrive one JSON document per line
on stdin, answers leave one per line on the original stdout.  Everything the
examples, jax or libtpu print goes to a log file instead, so it cannot corrupt
the protocol or reach the build log.

Each example runs in a fresh namespace, in a fresh temporary working folder;
``jax.config`` is restored after it, so examples do not affect each other.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from typing import Any

from sphinx_jaxhlo.core.report import CompileError, Cost, Memory, Report


class ExampleFailure(Exception):
    """The example itself is wrong: ``kind`` names the warning subtype."""

    def __init__(self, kind: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


def _example_line(tb: Any, source_name: str) -> int | None:
    """The innermost line of the example in a traceback."""
    line = None
    for frame in traceback.extract_tb(tb):
        if frame.filename == source_name or os.path.basename(frame.filename) == source_name:
            line = frame.lineno
    return line


def _format_exception(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    # jax appends a long note on traceback filtering; it only helps interactive users.
    text = text.split("\n--------------------")[0]
    return text[:3000]


def default_function(source: str) -> str | None:
    """The last top-level ``def`` of the example."""
    tree = ast.parse(source)
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return names[-1] if names else None


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


@contextlib.contextmanager
def _isolated_config() -> Iterator[None]:
    import jax

    holders = jax.config._value_holders
    before = {name: holder.value for name, holder in holders.items()}
    try:
        yield
    finally:
        for name, value in before.items():
            holder = holders.get(name)
            if holder is not None and holder.value != value:
                with contextlib.suppress(Exception):
                    jax.config.update(name, value)
        with contextlib.suppress(Exception):
            jax.clear_caches()


def compile_request(data: dict[str, Any]) -> Report:
    """Run one request: an example's source (the directive, the command line,
    ``analyze_source``) or a function sent pickled (``analyze``).  The
    function is compiled, never run."""
    if data.get("kind") == "call":
        return compile_call(data)
    from sphinx_jaxhlo.core import targets as targets_mod
    from sphinx_jaxhlo.core.request import CompileRequest
    from sphinx_jaxhlo.core.specs import to_shape_dtype_structs

    req = CompileRequest.from_json(data)
    name = req.source_name
    source = req.source
    if not source.strip() or all(not ln.strip() or ln.lstrip().startswith("#") for ln in source.splitlines()):
        raise ExampleFailure("empty", "the example has no code")
    try:
        code = compile(source, name, "exec")
    except SyntaxError as exc:
        raise ExampleFailure("syntax", f"SyntaxError: {exc.msg}", exc.lineno) from None
    function = req.function or default_function(source)
    if not function:
        raise ExampleFailure("function", "the example defines no top-level function; "
                             "define one with def, or name a callable with :function:", None)
    namespace: dict[str, Any] = {"__name__": "__jaxhlo_example__", "__file__": name}
    target = targets_mod.get_target(req.target)
    mesh = _mesh(target, req)
    try:
        with targets_mod.mesh_context(mesh):
            exec(code, namespace)
    except BaseException as exc:  # the example's own error, whatever it is
        if isinstance(exc, (KeyboardInterrupt,)):
            raise
        raise ExampleFailure("example", f"while running the example: {_format_exception(exc)}",
                             _example_line(exc.__traceback__, name)) from None
    fn = namespace.get(function)
    if fn is None:
        defined = sorted(k for k, v in namespace.items() if callable(v) and not k.startswith("__")
                         and getattr(v, "__module__", None) == "__jaxhlo_example__")
        raise ExampleFailure("function", f"function {function!r} is not defined by the example"
                             + (f" (it defines: {', '.join(defined)})" if defined else ""))
    if not callable(fn):
        raise ExampleFailure("function", f"{function!r} is not callable (its type is {type(fn).__name__})")

    static: dict[str, Any] = {}
    for key, text in req.static:
        try:
            static[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError) as exc:
            raise ExampleFailure("option", f":static: {key}={text} is not a Python literal ({exc})") from None

    args, kwargs = to_shape_dtype_structs(req.specs, mesh if target.device_count > 1 else None)
    kwargs.update(static)
    chunk_check = _prove_variant(namespace, req.chunk, args, kwargs, name) if req.chunk else ""
    jitted = jit_function(fn, static_argnames=tuple(static), donate=req.donate)
    report = Report(function=function, target=target.name, target_description=target.description,
                    versions=targets_mod.package_versions(), source=source, chunk_check=chunk_check)
    with targets_mod.mesh_context(mesh):
        report = _compile_and_analyze(report, target, jitted, args, kwargs, dict(req.xla_flags), req.extras, name,
                                      function, arguments=":args:", mesh=mesh)
    if not req.chunk and target.device_count == 1:
        report.chunk_suggestion = _suggest_chunking(report, fn, args, kwargs, req.chunk_budget, function)
    return report


def _suggest_chunking(report: Report, fn: Any, args: Any, kwargs: dict[str, Any], budget: int, function: str) -> str:
    """The report's chunking suggestion: for the largest user reduction that reads a stored
    intermediate over the budget, a chunking of an argument's axis that the proof accepts."""
    from sphinx_jaxhlo.compiler.chunking import suggest_chunking
    from sphinx_jaxhlo.core.chunks import DEFAULT_CHUNK_BUDGET

    budget = budget or DEFAULT_CHUNK_BUDGET
    sizes = {m.name: m.bytes for m in report.materialized}
    stored = [sizes.get(r.input_materialized, r.input_bytes) for r in report.reductions
              if r.is_users and not r.fused and r.partial_of is None and r.input_materialized is not None]
    if not stored or max(stored) <= budget:
        return ""
    try:
        return suggest_chunking(fn, args, kwargs, max(stored), budget, function)
    except Exception:  # a suggestion is a courtesy: never a failure of the report
        return ""


def _prove_variant(namespace: dict[str, Any], chunk: str, args: Any, kwargs: dict[str, Any], name: str) -> str:
    """For a ``:chunk:`` variant: prove the rewrite on the original function's
    jaxpr and check it numerically on small CPU inputs.

    :return: the numerical check, in words, for the page.
    :raises ExampleFailure: (``chunk``) the proof refuses or the numbers differ; located at the
        refused operation's line when it is one of the example's.
    """
    from sphinx_jaxhlo.compiler.chunk_proof import ChunkError
    from sphinx_jaxhlo.compiler.chunking import prove_and_check

    check = json.loads(chunk)
    try:
        return prove_and_check(namespace[check["of"]], args, kwargs, check).describe()
    except ChunkError as exc:
        found = re.search(re.escape(name) + r":(\d+)", exc.where)
        raise ExampleFailure("chunk", str(exc), int(found.group(1)) if found else None) from None
    except Exception as exc:  # the example's own error while tracing or running it small
        raise ExampleFailure("chunk", f"the chunked variant of {check['of']} could not be checked: "
                             f"{_format_exception(exc)}") from None


def _mesh(target: Any, req: Any) -> Any:
    """The jax mesh of a request (:func:`sphinx_jaxhlo.core.targets.mesh_for`),
    after checking the specs' shardings against it."""
    from sphinx_jaxhlo.core import targets as targets_mod
    from sphinx_jaxhlo.core.specs import sharding_problems

    problems = sharding_problems(req.specs, req.mesh)
    if problems:
        raise ExampleFailure("args", problems[0])
    try:
        return targets_mod.mesh_for(target, req.mesh)
    except ValueError as exc:
        raise ExampleFailure("args", str(exc)) from None


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
        raise ExampleFailure("option", f"jax.jit refused the options {opts}: {_format_exception(exc)}") from None


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


def compile_call(data: dict[str, Any]) -> Report:
    """A function sent by :func:`sphinx_jaxhlo.analyze`: unpickle, jit, compile.

    With a ``cache_dir``, the cache key is made here from the lowered module
    (see :func:`sphinx_jaxhlo.core.request.lowered_cache_key`): the function's code
    is not text the caller could hash, but what it lowers to is.
    """
    import base64
    import pickle

    from sphinx_jaxhlo.compiler.calls import Call, abstract_arguments
    from sphinx_jaxhlo.core import targets as targets_mod

    try:
        call = pickle.loads(base64.b64decode(data["payload"]))
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ExampleFailure("example", f"the compile worker could not load the function: "
                             f"{_format_exception(exc)}") from None
    assert isinstance(call, Call)
    target = targets_mod.get_target(data["target"])
    report = Report(function=data["function"], target=target.name, target_description=target.description,
                    versions=targets_mod.package_versions(), source=data.get("source", ""))
    for name, value in call.config.items():
        with contextlib.suppress(Exception):
            import jax

            jax.config.update(name, value)
    mesh = _call_mesh(target, call)
    args, kwargs = abstract_arguments(call, mesh if target.device_count > 1 else None)
    jitted = jit_function(call.fn, static_argnames=tuple(call.static), options=call.jit_options)
    kwargs.update(call.static)
    with targets_mod.mesh_context(mesh):
        report = _compile_call(data, report, target, jitted, args, kwargs, mesh)
    if target.device_count == 1 and not report.chunk_suggestion:
        report.chunk_suggestion = _suggest_chunking(report, call.fn, args, kwargs, 0, data["function"])
    return report


def _call_mesh(target: Any, call: Any) -> Any:
    """The jax mesh of a call (see :func:`_mesh`)."""
    from sphinx_jaxhlo.compiler.calls import sharding_problems_of
    from sphinx_jaxhlo.core import targets as targets_mod

    problems = sharding_problems_of(call)
    if problems:
        raise ExampleFailure("args", problems[0])
    try:
        return targets_mod.mesh_for(target, getattr(call, "mesh", None))
    except ValueError as exc:
        raise ExampleFailure("args", str(exc)) from None


def _compile_call(data: dict[str, Any], report: Report, target: Any, jitted: Any, args: Any,
                  kwargs: dict[str, Any], mesh: Any) -> Report:
    """:func:`compile_call` once the function and its arguments are ready."""
    from sphinx_jaxhlo.core import targets as targets_mod

    cache_dir = data.get("cache_dir")
    if not cache_dir:
        return _compile_and_analyze(report, target, jitted, args, kwargs, dict(data.get("xla_flags", {})),
                                    tuple(data.get("extras", ())), data.get("source_name", "example.py"),
                                    data["function"], mesh=mesh)
    from sphinx_jaxhlo.core.request import lowered_cache_key
    from sphinx_jaxhlo.store.cache import ReportCache, is_deterministic

    flags = dict(data.get("xla_flags", {}))
    extras = tuple(data.get("extras", ()))
    try:
        lowered = targets_mod.lower_for(target, jitted, args, kwargs, mesh)
        text = lowered.as_text(debug_info=True)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ExampleFailure("trace", f"while tracing {data['function']}: {_format_exception(exc)}",
                             _example_line(exc.__traceback__, data.get("source_name", ""))) from None
    key = lowered_cache_key(text, target.name, target.fingerprint(), flags, extras, data.get("source_name", ""))
    cache = ReportCache(cache_dir)
    cached = cache.get(key)
    if cached is not None:
        cached.source = report.source
        return cached
    report = _compile_and_analyze(report, target, jitted, args, kwargs, flags, extras,
                                  data.get("source_name", "example.py"), data["function"], lowered=lowered,
                                  mesh=mesh)
    if is_deterministic(report):
        cache.put(key, report)
    return report


def compiler_options(flags: dict[str, str]) -> dict[str, Any]:
    """Option texts as XLA takes them: ``true``/``false`` (any case) become
    booleans, which XLA's option parser wants; everything else stays text."""
    out: dict[str, Any] = {}
    for name, value in flags.items():
        lowered = value.strip().lower() if isinstance(value, str) else value
        out[name] = {"true": True, "false": False}.get(lowered, value) if isinstance(lowered, str) else value
    return out


def _compile_and_analyze(report: Report, target: Any, jitted: Any, args: Any, kwargs: dict[str, Any],
                         flags: dict[str, str], extras: tuple[str, ...], source_name: str, function: str,
                         lowered: Any = None, arguments: str = "arguments", mesh: Any = None) -> Report:
    """Lower (unless given) and compile for the target, then fill the report."""
    from sphinx_jaxhlo.core import targets as targets_mod
    from sphinx_jaxhlo.hlo.fusion import analyze_module

    start = time.perf_counter()
    options = compiler_options(flags)
    record_folder, record_note = _record_folder(target, flags)
    if record_folder is not None:
        from sphinx_jaxhlo.hlo.decisions import collection_options

        options.update(collection_options(target.platform, record_folder,
                                          everything=os.environ.get(DECISIONS_VARIABLE, "").strip().lower() == "all"))
    try:
        if lowered is None:
            lowered = targets_mod.lower_for(target, jitted, args, kwargs, mesh)
        compiled = lowered.compile(targets_mod.compile_options(target, options) or None)
    except BaseException as exc:
        if record_folder is not None:
            shutil.rmtree(record_folder, ignore_errors=True)
        if isinstance(exc, KeyboardInterrupt):
            raise
        if isinstance(exc, targets_mod.UnsupportedTargetError):
            raise ExampleFailure("target", str(exc)) from None
        line = _example_line(exc.__traceback__, source_name)
        if type(exc).__name__ in ("XlaRuntimeError", "JaxRuntimeError") and line is None:
            message = str(exc)
            status = _status(exc)
            needed, available = parse_oom(message) if status == "RESOURCE_EXHAUSTED" else (None, None)
            report.error = CompileError(status, message[:4000], needed, available)
            report.compile_seconds = time.perf_counter() - start
            return report
        if isinstance(exc, TypeError) and line is None:
            raise ExampleFailure("args", f"calling {function} with the given {arguments} failed: "
                                 f"{_format_exception(exc)}") from None
        raise ExampleFailure("trace", f"while tracing {function}: {_format_exception(exc)}", line) from None
    report.compile_seconds = time.perf_counter() - start
    report.hlo = compiled.as_text() or ""
    from sphinx_jaxhlo.hlo.parse import HloParseError, parse_module

    try:  # once, for the decisions and the analysis
        module: Any = parse_module(report.hlo)
    except HloParseError:
        module = report.hlo  # the analysis says why it does not parse
    if record_folder is not None:
        from sphinx_jaxhlo.hlo.decisions import collect

        try:
            report.fusion_decisions, report.fusion_decisions_note = collect(target.platform, record_folder, module)
        finally:
            shutil.rmtree(record_folder, ignore_errors=True)
    else:
        report.fusion_decisions_note = record_note
    if "stablehlo" in extras:
        report.stablehlo = lowered.as_text()
    if "jaxpr" in extras:
        with contextlib.suppress(Exception):
            report.jaxpr = str(jitted.trace(*args, **kwargs).jaxpr)
    report.memory = _memory(compiled)
    report.cost = _cost(compiled)
    try:
        analysis = analyze_module(module, source_name, target=report.target)
    except ValueError as exc:  # HloParseError: keep the figures, say what failed
        report.analysis_error = str(exc)
    else:
        report.fusions, report.materialized, report.reductions = (
            analysis.fusions, analysis.materialized, analysis.reductions)
        report.argument_copies = analysis.argument_copies
        report.host_buffers, report.host_fusions = analysis.host_buffers, analysis.host_fusions
        from sphinx_jaxhlo.hlo.decisions import attach_quotes

        attach_quotes(report)
    _add_mesh(report, target, compiled, args, kwargs, mesh, source_name)
    return report


#: Which of XLA's records of its fusion decisions a compile worker collects
#: (:mod:`sphinx_jaxhlo.hlo.decisions`): unset or ``1``, the GPU's (cheap);
#: ``all``, the CPU's and TPU's too (costly); ``0``, none (the benchmark and
#: the tests that check the collection changes nothing compare the ways).
DECISIONS_VARIABLE = "JAXHLO_FUSION_DECISIONS"


def _record_folder(target: Any, flags: dict[str, str]) -> tuple[str | None, str]:
    """A new private folder for XLA's record of its fusion decisions
    (:mod:`sphinx_jaxhlo.hlo.decisions`), or ``None`` and why there is none."""
    from sphinx_jaxhlo.hlo.decisions import COSTLY, collection_options, collection_refused

    setting = os.environ.get(DECISIONS_VARIABLE, "1").strip().lower()
    if setting in ("0", "false", "no", "off"):
        return None, f"not collected: {DECISIONS_VARIABLE} is off"
    refused = collection_refused(flags, os.environ.get("XLA_FLAGS", ""))
    if refused is not None:
        return None, refused
    if not collection_options(target.platform, "", everything=setting == "all"):
        if collection_options(target.platform, "", everything=True):
            return None, COSTLY.format(platform=target.platform.upper())
        return None, f"no decision record is known for the platform {target.platform}"
    return tempfile.mkdtemp(prefix="jaxhlo-decisions-"), ""


def _add_mesh(report: Report, target: Any, compiled: Any, args: Any, kwargs: dict[str, Any], mesh: Any,
              source_name: str) -> None:
    """The mesh, the layouts and the collectives (:mod:`sphinx_jaxhlo.hlo.collectives`)."""
    from sphinx_jaxhlo.core import targets as targets_mod
    from sphinx_jaxhlo.core.report import Sharding
    from sphinx_jaxhlo.hlo.collectives import analyze_collectives

    report.devices = target.device_count
    kinds = [str(getattr(kind, "name", kind)).lower() for kind in getattr(mesh, "axis_types", ())]
    report.mesh = [[str(name), int(size)] + ([kinds[i]] if i < len(kinds) and kinds[i] != "auto" else [])
                   for i, (name, size) in enumerate(mesh.shape.items())] if mesh is not None else []
    if target.device_count > 1:
        inputs, outputs = targets_mod.describe_shardings(compiled, args, kwargs)
        report.input_shardings = [Sharding(**row) for row in inputs]
        report.output_shardings = [Sharding(**row) for row in outputs]
    if report.analysis_error is None:
        try:
            report.collectives = analyze_collectives(report.hlo, [(a[0], a[1]) for a in report.mesh], source_name)
        except ValueError as exc:
            report.analysis_error = f"collectives: {exc}"


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
    peak = get("peak_memory_in_bytes")
    # Some backends (this CPU compiler) leave temp out of their peak; trust the
    # reported figure only when it covers the temporaries.
    if peak and peak >= (mem.temp_bytes or 0):
        mem.peak_bytes = peak
    elif None not in (mem.argument_bytes, mem.output_bytes, mem.temp_bytes):
        mem.peak_bytes = ((mem.argument_bytes or 0) + (mem.output_bytes or 0) + (mem.temp_bytes or 0)
                          - (mem.alias_bytes or 0))
        mem.peak_is_estimate = True
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


def _exit_with_parent(workdir: str) -> None:
    """End this worker, and remove its folder, when the build that started it is gone.

    The worker runs in a session of its own (so a Ctrl-C meant for the build
    does not kill a compile half-way), which also means nothing else stops it
    if the build dies: a watcher thread checks that its parent process is
    still there.  (Linux's parent-death signal would be quicker, but it fires
    when the *thread* that started the worker ends, and compile threads come
    and go.)
    """
    import signal
    import threading

    parent = os.getppid()

    def leave(*_: object) -> None:
        shutil.rmtree(workdir, ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, leave)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                leave()

    threading.Thread(target=watch, name="jaxhlo-parent-watch", daemon=True).start()


def main() -> None:
    # The environment was prepared by the parent (targets.prepare_environment).
    # The protocol keeps the original stdin/stdout; everything else goes to a log.
    # These stay open for the worker's whole life.
    proto_in = open(os.dup(0), encoding="utf-8", newline="\n")  # noqa: SIM115
    proto_out = open(os.dup(1), "w", encoding="utf-8", newline="\n")  # noqa: SIM115
    workdir = os.environ.get("JAXHLO_WORKDIR") or tempfile.mkdtemp(prefix="jaxhlo-worker-")
    os.makedirs(workdir, exist_ok=True)
    _exit_with_parent(workdir)
    log_path = os.path.join(workdir, "output.log")
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    sys.stdin = open(os.devnull)  # noqa: SIM115
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    sys.stderr = sys.stdout
    import jax  # noqa: F401  (once, before the first request)

    from sphinx_jaxhlo.core.targets import exclude_own_frames

    exclude_own_frames()

    count = 0
    for line in proto_in:
        if not line.strip():
            continue
        count += 1
        os.ftruncate(log_fd, 0)
        rundir = os.path.join(workdir, f"example-{count}")
        os.mkdir(rundir)
        os.chdir(rundir)
        try:
            data = json.loads(line)
            with _isolated_config():
                report = compile_request(data)
            answer: dict[str, Any] = {"report": report.to_dict()}
        except ExampleFailure as exc:
            answer = {"failure": {"kind": exc.kind, "message": exc.message, "line": exc.line}}
        except BaseException as exc:  # a bug of ours or an exit() in the example: say so, keep serving
            if isinstance(exc, KeyboardInterrupt):
                break
            answer = {"failure": {"kind": "example", "message": f"{_format_exception(exc)}",
                                  "line": _example_line(exc.__traceback__, "example.py")}}
        finally:
            os.chdir(workdir)
            shutil.rmtree(rundir, ignore_errors=True)
        try:
            proto_out.write(json.dumps(answer) + "\n")
            proto_out.flush()
        except OSError:  # the build went away: nobody to answer
            break
    shutil.rmtree(workdir, ignore_errors=True)
    os._exit(0)  # skip interpreter teardown (and its writes to a closed pipe)


if __name__ == "__main__":
    main()
