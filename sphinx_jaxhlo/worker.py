"""The compile worker: a separate process that imports jax once and compiles examples.

Started by :class:`sphinx_jaxhlo.compiler.CompileWorker` as
``python -m sphinx_jaxhlo.worker``.  Requests arrive one JSON document per line
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

from .report import CompileError, Cost, Memory, Report


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
        if frame.filename == source_name:
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
    """Run one request (the example is executed, the function compiled, never run)."""
    import jax

    from . import targets as targets_mod
    from .analysis import analyze_module
    from .request import CompileRequest
    from .specs import to_shape_dtype_structs

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
    try:
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

    target = targets_mod.get_target(req.target)
    args, kwargs = to_shape_dtype_structs(req.specs)
    kwargs.update(static)
    report = Report(function=function, target=target.name, target_description=target.description,
                    versions=targets_mod.package_versions(), source=source)
    jitted = jax.jit(fn, static_argnames=tuple(static))
    start = time.perf_counter()
    try:
        lowered, compiled = targets_mod.compile_for(target, jitted, args, kwargs, dict(req.xla_flags))
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        line = _example_line(exc.__traceback__, name)
        if type(exc).__name__ in ("XlaRuntimeError", "JaxRuntimeError") and line is None:
            message = str(exc)
            status = _status(exc)
            needed, available = parse_oom(message) if status == "RESOURCE_EXHAUSTED" else (None, None)
            report.error = CompileError(status, message[:4000], needed, available)
            report.compile_seconds = time.perf_counter() - start
            return report
        if isinstance(exc, TypeError) and line is None:
            raise ExampleFailure("args", f"calling {function} with the given :args: failed: "
                                 f"{_format_exception(exc)}") from None
        raise ExampleFailure("trace", f"while tracing {function}: {_format_exception(exc)}", line) from None
    report.compile_seconds = time.perf_counter() - start
    report.hlo = compiled.as_text() or ""
    if "stablehlo" in req.extras:
        report.stablehlo = lowered.as_text()
    if "jaxpr" in req.extras:
        with contextlib.suppress(Exception):
            report.jaxpr = str(jitted.trace(*args, **kwargs).jaxpr)
    report.memory = _memory(compiled)
    report.cost = _cost(compiled)
    try:
        analysis = analyze_module(report.hlo, name)
    except ValueError as exc:  # HloParseError: keep the figures, say what failed
        report.analysis_error = str(exc)
    else:
        report.fusions, report.materialized, report.reductions = (
            analysis.fusions, analysis.materialized, analysis.reductions)
    return report


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

    from .targets import exclude_own_frames

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
