"""The command line: ``python -m sphinx_jaxhlo FILE.py:FUNCTION --args ...`` (or ``jaxhlo``).

``python -m sphinx_jaxhlo compilers install|status`` manages the GPU and TPU
compilers of the compile workers (see :mod:`sphinx_jaxhlo.core.compilers`);
``python -m sphinx_jaxhlo example seed.py`` writes an example file that ships
in the package (the README's, for an install without a clone);
``python -m sphinx_jaxhlo predict FILE.py:FUNCTION --args ...`` gives the guide's answer from the
jaxpr, without compiling (:mod:`sphinx_jaxhlo.predict.command`).

Otherwise it compiles a function of a file for each target, from argument shapes, in the
compile worker (exactly as the directive compiles an example), prints the
summary per target or the JSON reports, and checks expectations.  Exit codes:
0 when everything compiled and every expectation held, 1 when an expectation
failed (or a target gave no report, or a compile failed unexpectedly), 2 on
bad input.  See ``--help``.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from sphinx_jaxhlo.core import compilers as plugins
from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core import options as declared
from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.example import COMMAND_LINE, OptionProblem, parse_example, parse_show, parse_view
from sphinx_jaxhlo.core.request import SHOW_PARTS
from sphinx_jaxhlo.core.version import __version__

#: Failure kinds that mean the input was wrong (exit 2), not the compile.
BAD_INPUT_KINDS = frozenset({"function", "syntax", "empty", "args", "option", "example"})

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2

DESCRIPTION = """\
Compile a JAX function for the CPU, NVIDIA GPUs and TPUs from argument shapes,
without running it and without the hardware, and show what XLA made of it:
temp and peak memory, the fusions, the buffers materialized between them and
whether each reduction was fused with the computation of its data.

The file is run in a separate compile worker, as the jax-hlo directive runs an
example; the function is compiled, never called."""

EPILOG = """\
examples:
  %(prog)s seed.py:with_dot --args "f32[100000,3], f32[50000,3]"
      summary table for the default targets (cpu, gpu:h100, tpu:v5e: those installed)
  %(prog)s seed.py:with_dot --args "f32[100000,3], f32[50000,3]" --targets gpu:h100 --show summary,memory,hlo
      one target, with the memory table and the optimized HLO
  %(prog)s kernels.py:chunked --args "f32[100000,3], f32[50000,3]" --static chunk=1000
      a static argument (a Python literal), passed by name
  %(prog)s seed.py:with_dot --args "f32[100000,3], f32[50000,3]" \\
          --expect-reduction fused --expect-max-temp "cpu=1GB, gpu:h100=64MiB"
      exit 1 when XLA did not fuse the reduction or temp memory is larger
  %(prog)s seed.py:with_dot --args "f32[100000,3], f32[50000,3]" --grad hkl
      the function and its gradient with respect to hkl (with_dot_grad), on each target
  %(prog)s seed.py:with_dot --args "f32[100000,3], f32[50000,3]" --json > reports.json
      the reports as JSON (sphinx_jaxhlo.Reports.from_json reads it back)
  %(prog)s --hlo-file module_0001.jit_f.cpu_after_optimizations.txt
      analyse a saved optimized HLO module (no memory figures: they need the compiler)

argument specs (--args):
  DTYPE[DIM,...] per argument, comma separated: f32[100000,3], bf16[8,128], i32[], bool[4];
  keyword arguments as name=spec after the positional ones: scale=f32[];
  pytrees as (spec, spec), [spec, spec] or {key: spec}.
  on a target of several devices (gpu:h100x8, tpu:v5e-8...), with --mesh "data=4, model=2":
  "f32[8192,8192] @ P(data, None)" splits dimension 0 over the axis data; no @: replicated.
  dtypes: f64 f32 f16 bf16 i64 i32 i16 i8 (or s64...) u64 u32 u16 u8 bool c64 c128

expectations (--expect-*):
  each takes a value for every target, or target=value pairs: "cpu=25GB, gpu:h100=64MiB".
  sizes: a number with B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB.
  --expect-materialized takes a shape (f32[50000,100000]) that must be materialized, or none;
  --expect-error a status (RESOURCE_EXHAUSTED) the compile must fail with, or none;
  --expect-kernels a count of kernels, N or OP N: 1, "<=3", "cpu=1, tpu:v5e<=2";
  --expect-peak-top the largest buffer live at the peak: "dot_general", "line 4",
  "gpu:h100=dot_general on line 4".
  with --sweep, an item may end with "for CONDITION": "gpu:h100=fused for n>=5000";
  --expect-flip says where a decision flips: "between 4096 and 5000", "none".

exit status:
  0  every target compiled and every expectation held
  1  an expectation failed, a target produced no report (timeout, crash, an error while
     tracing), or a compile failed without --expect-error
  2  bad input: unreadable file, syntax error, unknown function, bad spec or option,
     unknown target or one whose compiler is not installed

bundled examples:
  %(prog)s example seed.py
      write the README's example file (docs/examples/seed.py of the repository) into this
      folder, then: %(prog)s seed.py:with_dot --args "f32[100000,3], f32[50000,3]"

compilers:
  %(prog)s compilers install [--gpu] [--tpu]
      install the GPU and TPU compilers into the private folder that only compile workers
      load (so `import jax` elsewhere in this environment stays quiet); see `compilers --help`
  %(prog)s compilers status
      what each worker will load, from where; exit 1 when a compiler is missing

cache:
  reports are cached by everything that decides them (source, function, specs, options,
  target, compiler versions) in $XDG_CACHE_HOME/sphinx-jaxhlo (default
  ~/.cache/sphinx-jaxhlo); --cache-dir changes the folder, --no-cache turns it off.
"""


class _UsageError(Exception):
    """Bad input: exit 2 with this message."""


def _prog(argv0: str) -> str:
    name = os.path.basename(argv0 or "")
    if name in ("__main__.py", "") or name.endswith(".py"):
        return "python -m sphinx_jaxhlo"
    return name


def build_parser(prog: str = "python -m sphinx_jaxhlo") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [options] FILE.py[:FUNCTION] --args SPECS\n"
              "       %(prog)s [options] --hlo-file DUMP.txt [FILE.py]\n"
              "       %(prog)s compilers {install,status} ...\n"
              "       %(prog)s example NAME [-o PATH]",
    )
    parser.add_argument("example", nargs="?", metavar="FILE.py[:FUNCTION]",
                        help="the file and the function to compile; default function: the file's last "
                             "top-level def. With --hlo-file: the source file the module was traced from "
                             "(its lines are mapped), optional.")
    what = parser.add_argument_group("what to compile")
    what.add_argument("--args", default="", metavar="SPECS",
                      help='argument shapes, e.g. "f32[100000,3], f32[50000,3]" (see below)')
    what.add_argument("--targets", metavar="LIST",
                      help=f"comma-separated targets (known: {', '.join(targets_mod.TARGETS)}); default: "
                           f"{', '.join(targets_mod.DEFAULT_TARGETS)}, those whose compiler is installed")
    what.add_argument("--mesh", metavar="AXES",
                      help='the mesh of a target of several devices, e.g. "data=4, model=2" (Auto axes) or '
                           '"X=8 explicit" (an axis kind after its size: auto, explicit, manual); specs may '
                           'then say how they are split: "f32[8192,8192] @ P(data, None)"')
    what.add_argument("--static", action="append", default=[], metavar="NAME=VALUE",
                      help="a static argument as a Python literal, e.g. chunk=1000; repeat it or give a "
                           "comma list")
    what.add_argument("--donate", action="append", default=[], metavar="ARG",
                      help="an argument to donate (its buffer may hold the output), by name or position; "
                           "repeat it or give a comma list")
    what.add_argument("--xla-flags", action="append", default=[], metavar="NAME=VALUE",
                      help="an XLA compiler option for compile(), e.g. xla_cpu_experimental_ynn_fusion_type=; "
                           "repeat it or give a comma list")
    what.add_argument("--grad", metavar="ARGS",
                      help="also compile the function's gradient with respect to these arguments (names or "
                           "positions, comma separated: hkl, or 1), as FUNCTION_grad (jax.value_and_grad); with "
                           "jax.grad among them ('hkl, jax.grad'), as FUNCTION_grad_only (the gradient alone); "
                           "a vjp with a cotangent of ones for a non-scalar output")
    what.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                      help="seconds one compile may take before the worker is stopped (default: the directive's rule, "
                           "a limit per target, 60 s for the CPU, 90 s for a GPU, 300 s for a TPU, with one retry "
                           "on a fresh worker)")
    what.add_argument("--sweep", metavar="SYMBOLS",
                      help='compile at many sizes: the values of the sizes --args names by symbols, e.g. '
                           '--args "f32[n,3], f32[d,3]" --sweep "n=1000..100000, d=n" (8 sizes on a log scale; '
                           'n=1000..100000/12, n=1024..16384*2, n=1000,4096,5000); prints the table of points and '
                           'where the decisions flip')
    what.add_argument("--bisect", metavar="COUNT",
                      help="with --sweep: the most sizes to compile between neighbours whose decisions differ, "
                           "to locate each flip exactly (default 48; 0: none)")
    _declared_flag(what, "chunk")
    what.add_argument("--hlo-file", metavar="DUMP.txt",
                      help="analyse this saved optimized HLO module instead of compiling ('-': standard "
                           "input); --targets may name one target to label it")
    out = parser.add_argument_group("output")
    out.add_argument("--show", default="summary", metavar="PARTS",
                     help=f"parts printed per target, comma separated, among {', '.join(SHOW_PARTS)} "
                          "(default: summary)")
    _declared_flag(out, "findings")
    _declared_flag(out, "rows")
    out.add_argument("--json", action="store_true",
                     help="print the reports (and the checked expectations) as JSON instead")
    out.add_argument("--html", metavar="FILE.html",
                     help="also write the directive's rendering as a self-contained HTML page")
    checks = parser.add_argument_group("expectations (exit 1 when one fails)")
    for option in declared.for_front("cli"):  # each claim as declared once (sphinx_jaxhlo.core.options)
        if option.is_claim:
            _declared_flag(checks, option.name)
    cache = parser.add_argument_group("cache")
    cache.add_argument("--cache-dir", metavar="DIR", help="cache folder (default: $XDG_CACHE_HOME/sphinx-jaxhlo "
                                                          "or ~/.cache/sphinx-jaxhlo)")
    cache.add_argument("--no-cache", action="store_true", help="neither read nor write cached reports")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _declared_flag(group: argparse._ArgumentGroup, name: str) -> None:
    """The flag of an option, its value and help as declared once (:mod:`sphinx_jaxhlo.core.options`)."""
    option = declared.by_name(name)
    group.add_argument(f"--{option.name}", metavar=option.value, help=option.help)


def _split_example(text: str) -> tuple[str, str]:
    """``path.py:function`` -> ``(path, function)``; a colon that starts no
    function name (``C:\\x.py``) is part of the path."""
    head, sep, tail = text.rpartition(":")
    if sep and head and tail and all(p.strip().isidentifier() for p in tail.split(",")):
        return head, tail.strip()
    return text, ""


def _read(path: str, what: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        return Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _UsageError(f"{what} {path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise _UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _top_level_names(tree: ast.Module) -> set[str] | None:
    """Names a module binds at its top level; ``None`` when it cannot be known
    (a star import)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
    return names


def _expect_options(ns: argparse.Namespace) -> dict[str, str]:
    options = {}
    for option in exp.OPTIONS:
        value = getattr(ns, option.replace("-", "_"))
        if value is not None:
            options[option] = value
    return options


def _check_expectations(options: dict[str, str]) -> None:
    try:
        expectations = exp.parse_expectations(options)
    except exp.ExpectationSyntaxError as exc:
        raise _UsageError(exc.spelled(lambda option: declared.spelled(option, "cli"))) from None
    unknown = sorted(t for t in expectations.targets_named() if t not in targets_mod.TARGETS)
    if unknown:
        raise _UsageError(f"an expectation names unknown target {', '.join(map(repr, unknown))} "
                          f"(known: {', '.join(targets_mod.TARGETS)})")


def _error(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    prog = _prog(sys.argv[0])
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["compilers"]:
        return compilers_main(args[1:], prog)
    if args[:1] == ["example"]:
        return example_main(args[1:], prog)
    if args[:1] == ["predict"]:
        from sphinx_jaxhlo.predict.command import main as predict_main

        return predict_main(args[1:], prog)
    parser = build_parser(prog)
    ns = parser.parse_args(_joined_values(parser, args))
    try:
        return _run(ns, parser, prog)
    except _UsageError as exc:
        return _error(prog, str(exc))
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


def _joined_values(parser: argparse.ArgumentParser, args: Sequence[str]) -> list[str]:
    """``--expect-max-device -5MB`` as ``--expect-max-device=-5MB``: a value that starts with ``-``
    and is no option of ours reaches the option, whose own check says what is wrong with it
    (argparse would take it for an option and say only "expected one argument")."""
    takes_value = {o for a in parser._actions if a.option_strings and a.nargs != 0 for o in a.option_strings}
    known = set(parser._option_string_actions)
    out: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        following = args[index + 1] if index + 1 < len(args) else None
        if (arg in takes_value and following is not None and following.startswith("-") and following != "-"
                and following.split("=", 1)[0] not in known):
            out.append(f"{arg}={following}")
            index += 2
            continue
        out.append(arg)
        index += 1
    return out


def _run(ns: argparse.Namespace, parser: argparse.ArgumentParser, prog: str) -> int:
    from sphinx_jaxhlo.api.functions import compile_example, default_cache_dir, resolve_targets
    from sphinx_jaxhlo.api.keywords import given_view
    from sphinx_jaxhlo.api.reports import REPORTS_SHOW, display_of

    try:
        parts = parse_show(ns.show, COMMAND_LINE)
    except OptionProblem as exc:
        raise _UsageError(exc.message) from None
    show = list(parts) if parts is not None else list(REPORTS_SHOW)
    if ns.timeout is not None and not ns.timeout > 0:
        raise _UsageError(f"--timeout: {ns.timeout:g} is not a positive number of seconds")
    expect = _expect_options(ns)
    _check_expectations(expect)

    try:  # checked first, as the directive checks its options: by the same parsers
        view = dict(parse_view(given_view(findings=ns.findings, rows=ns.rows), COMMAND_LINE))
    except OptionProblem as exc:
        raise _UsageError(exc.message) from None

    if ns.hlo_file is not None:
        reports = _hlo_file(ns, show)
        reports.display = display_of(view)
    else:
        if not ns.example:
            parser.print_usage(sys.stderr)
            raise _UsageError("give FILE.py[:FUNCTION] to compile, or --hlo-file DUMP.txt to analyse")
        path, function = _split_example(ns.example)
        if "," in function:
            raise _UsageError(f"{ns.example}: name one function")
        source = _read(path, "file")
        try:
            tree = ast.parse(source, filename=path)
        except SyntaxError as exc:
            raise _UsageError(f"{path}, line {exc.lineno}: SyntaxError: {exc.msg}") from None
        names = _top_level_names(tree)
        if function and names is not None and function not in names:
            defs = sorted(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
            raise _UsageError(f"{path} defines no {function!r}"
                              + (f" (its functions: {', '.join(defs)})" if defs else " (it defines no function)"))
        if not function and not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in tree.body):
            raise _UsageError(f"{path} has no top-level def: name the function, FILE.py:FUNCTION")
        try:
            example = parse_example(source, {
                "function": function, "args": ns.args, "mesh": ns.mesh, "static": ", ".join(ns.static),
                "xla-flags": ", ".join(ns.xla_flags), "donate": ", ".join(ns.donate),
                "timeout": ns.timeout, "grad": ns.grad, "sweep": ns.sweep, "bisect": ns.bisect,
                **given_view(chunk=ns.chunk, findings=ns.findings, rows=ns.rows)},
                spell=COMMAND_LINE,
                source_name=os.path.basename(path)).with_chunk_variants(COMMAND_LINE).with_grad_variants(COMMAND_LINE)
        except OptionProblem as exc:
            raise _UsageError(exc.message) from None
        try:
            targets = resolve_targets(ns.targets)
        except ValueError as exc:
            raise _UsageError(f"--targets: {exc}" if ns.targets is not None else str(exc)) from None
        cache_dir = None if ns.no_cache else (ns.cache_dir or default_cache_dir())
        progress = (lambda line: print(line, file=sys.stderr)) if sys.stderr.isatty() and not ns.json else None
        folder = os.path.dirname(os.path.abspath(path))
        if example.sweep is not None:
            return _sweep(ns, prog, example, targets, show, expect, cache_dir=cache_dir, pythonpath=[folder],
                          progress=progress)
        reports = compile_example(example, targets, show, cache_dir=cache_dir, pythonpath=[folder],
                                  progress=progress)

    bad = [f for f in reports.failures if f.kind in BAD_INPUT_KINDS]
    outcomes, problems = _checked_and_written(ns, reports, expect)
    if ns.json:
        doc: dict[str, Any] = reports.to_dict()
        doc["checks"] = [{"target": o.target, "function": o.function, "expectation": o.expectation.kind,
                          "expected": o.expectation.value, "found": o.actual, "passed": o.passed,
                          "message": o.message} for o in outcomes]
        doc["problems"] = problems
        import json

        print(json.dumps(doc, indent=1, sort_keys=True))
    else:
        sys.stdout.write(reports.to_text(show))
        if outcomes:
            print("\nExpectations")
            for o in outcomes:
                print(f"  {o.message}")
    if bad:
        for f in bad:
            print(f"{prog}: error: {f.describe().replace(':args:', '--args')}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if problems:
        for p in problems:
            print(f"{prog}: FAILED: {p}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _checked_and_written(ns: argparse.Namespace, result: Any, expect: dict[str, str]) -> tuple[list[Any], list[str]]:
    """The claims of ``--expect-*`` checked on ``result`` (reports or a sweep's), and ``--html``
    written: the claims' outcomes and the problems found."""
    try:
        outcomes, problems = result.evaluate_options(expect)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    if ns.html:
        try:
            Path(ns.html).write_text(result.to_html(full_page=True), encoding="utf-8")
        except OSError as exc:
            raise _UsageError(f"cannot write {ns.html}: {exc.strerror or exc}") from None
    return outcomes, problems


def _sweep(ns: argparse.Namespace, prog: str, example: Any, targets: Any, show: list[str], expect: dict[str, str],
           **options: Any) -> int:
    """``--sweep``: every point compiled, the table of points and the flips printed, the claims checked."""
    from sphinx_jaxhlo.api.functions import compile_example
    from sphinx_jaxhlo.api.sweep_reports import compile_sweep

    given = [flag for flag, value in (("--findings", ns.findings), ("--rows", ns.rows)) if value is not None]
    if given and not ns.json:  # said, not silently ignored: the text of a sweep is its table of points
        raise _UsageError(f"{' and '.join(given)} shape{'s' if len(given) == 1 else ''} each point's reports, which "
                          "the text of a sweep does not "
                          "print (it prints the table of points and the flips): add --json, where each point's "
                          "reports list their findings, or leave --sweep out")
    sweep = compile_sweep(example, targets, show, compile_example, **options)
    outcomes, problems = _checked_and_written(ns, sweep, expect)
    if ns.json:
        import json

        doc = sweep.to_dict()
        doc["checks"] = [{"target": o.target, "function": o.function, "point": o.point, "expectation":
                          o.expectation.kind, "expected": o.expectation.value, "where": o.expectation.where,
                          "found": o.actual, "passed": o.passed, "resolved": not o.unresolved,
                          "message": o.message} for o in outcomes]
        doc["problems"] = problems
        print(json.dumps(doc, indent=1, sort_keys=True))
    else:
        sys.stdout.write(sweep.to_text())
        if outcomes:
            print("\nExpectations")
            for o in outcomes:
                print(f"  {o.message}")
    bad = [f for reports in sweep for f in reports.failures if f.kind in BAD_INPUT_KINDS - {"args"}]
    if bad:
        print(f"{prog}: error: {bad[0].describe()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for p in problems:
        print(f"{prog}: FAILED: {p}", file=sys.stderr)
    return EXIT_FAILED if problems else EXIT_OK


def _hlo_file(ns: argparse.Namespace, show: list[str]) -> Any:
    from sphinx_jaxhlo.api.functions import analyze_hlo

    for option, value in (("--args", ns.args), ("--static", ns.static), ("--xla-flags", ns.xla_flags),
                          ("--grad", ns.grad), ("--chunk", ns.chunk)):
        if value:
            raise _UsageError(f"{option} is not used with --hlo-file (the module is already compiled)")
    labels = [t.strip() for t in (ns.targets or "").split(",") if t.strip()]
    if len(labels) > 1:
        raise _UsageError("--targets: name at most one target to label a saved module")
    label = labels[0] if labels else "hlo"
    if labels:
        try:
            label = targets_mod.get_target(label).name
        except targets_mod.UnknownTargetError as exc:
            raise _UsageError(f"--targets: {exc}") from None
    text = _read(ns.hlo_file, "HLO file")
    source_file = source = None
    if ns.example:
        source_path, _ = _split_example(ns.example)
        source = _read(source_path, "source file")
        source_file = os.path.basename(source_path)
    name = "standard input" if ns.hlo_file == "-" else os.path.basename(ns.hlo_file)
    try:
        return analyze_hlo(text, source_file, target=label, source=source, show=show, origin=name)
    except ValueError as exc:
        raise _UsageError(f"{ns.hlo_file}: {exc}") from None


# -- python -m sphinx_jaxhlo compilers ---------------------------------------------------------

COMPILERS_DESCRIPTION = """\
The GPU compiler (jax-cuda12-plugin, jax-cuda12-pjrt and nvidia-cuda-nvcc-cu12's ptxas
and libdevice) and the TPU compiler (libtpu) are installed into a private folder that
only the compile workers put on their path: `import jax` in Sphinx, notebook kernels and
autodoc loads neither (no CUDA or TPU messages), and the directive, the command line
and the API still compile for GPUs and TPUs. The versions are those the installed jax
asks for; the folder is per jax version, so after upgrading jax run install again."""

COMPILERS_EPILOG = f"""\
folder:
  ${plugins.ENV_VARIABLE} if set, else $XDG_CACHE_HOME/sphinx-jaxhlo/compilers
  (~/.cache/sphinx-jaxhlo/compilers), then jax-VERSION/gpu and jax-VERSION/tpu.
  Compilers installed in the environment itself (jax[tpu], jax-cuda12-plugin) are used
  when the folder lacks them, but they make every `import jax` there print CUDA and
  TPU errors on a machine without the hardware.

exit status:
  install: 0 when every kit is installed (or already was), 1 when pip (or uv) failed
  status:  0 when the GPU and TPU compilers are both usable, 1 otherwise
"""


def build_compilers_parser(prog: str = "python -m sphinx_jaxhlo") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{prog} compilers", description=COMPILERS_DESCRIPTION, epilog=COMPILERS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="{install,status}")
    install = commands.add_parser("install", help="install the compilers (both unless --gpu or --tpu)",
                                  description="Install the compilers into the private folder with pip "
                                              "install --target, pinned to the installed jax.")
    install.add_argument("--gpu", action="store_true", help="the GPU compiler (about 0.6 GB)")
    install.add_argument("--tpu", action="store_true", help="the TPU compiler (about 0.7 GB)")
    install.add_argument("--force", action="store_true", help="reinstall even when the folder matches")
    install.add_argument("--dry-run", action="store_true", help="say what would be installed where, do nothing")
    commands.add_parser("status", help="say which compilers a worker loads, from where",
                        description="Say which compilers a compile worker loads, from where.")
    return parser


def compilers_main(argv: Sequence[str], prog: str = "python -m sphinx_jaxhlo") -> int:
    """``python -m sphinx_jaxhlo compilers install|status``; returns the exit status."""
    ns = build_compilers_parser(prog).parse_args(argv)
    if ns.command == "install":
        kits = [k for k in plugins.KITS if getattr(ns, k)]
        try:
            return plugins.install(kits, force=ns.force, dry_run=ns.dry_run)
        except LookupError as exc:
            return _error(prog, f"compilers install: {exc}")
    try:
        print(f"compilers folder: {plugins.kit_dir('gpu').parent}  (${plugins.ENV_VARIABLE} moves it)")
    except LookupError as exc:
        return _error(prog, f"compilers status: {exc}")
    status = EXIT_OK
    for kit in plugins.KITS:
        found = plugins.state(kit)
        versions = ", ".join(f"{d} {v}" for d, v in sorted(found.versions.items()))
        if found.folder is not None:
            print(f"{kit}: {versions}, from {found.folder}")
        elif found.in_environment:
            print(f"{kit}: {versions}, installed in this environment (every `import jax` here loads it; "
                  f"`{plugins.install_command([kit])}` keeps it to the workers)")
        else:
            print(f"{kit}: {found.problem}")
            status = EXIT_FAILED
    return status


# -- python -m sphinx_jaxhlo example ----------------------------------------------------------

#: The folder of the example files that ship in the package.
BUNDLED = Path(__file__).parent / "bundled"


def bundled_examples() -> list[str]:
    """The names of the example files that ship in the package."""
    return sorted(p.name for p in BUNDLED.glob("*.py"))


def example_main(argv: Sequence[str], prog: str = "python -m sphinx_jaxhlo") -> int:
    """``python -m sphinx_jaxhlo example NAME [-o PATH]``: write a bundled example file
    (into the current folder by default, never over an existing file); ``-o -`` prints it."""
    names = bundled_examples()
    parser = argparse.ArgumentParser(
        prog=f"{prog} example",
        description="Write an example file that ships with sphinx-jaxhlo, to compile it with "
                    f"`{prog} FILE.py:FUNCTION --args ...` without a clone of the repository.")
    parser.add_argument("name", choices=names, metavar="NAME", help=f"one of: {', '.join(names)}")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="where to write it (default: NAME in the current folder; - prints it)")
    ns = parser.parse_args(argv)
    text = (BUNDLED / ns.name).read_text(encoding="utf-8")
    if ns.output == "-":
        sys.stdout.write(text)
        return EXIT_OK
    path = Path(ns.output or ns.name)
    if path.is_dir():
        path = path / ns.name
    if path.exists():
        return _error(prog, f"example: {path} exists; remove it or give another path with -o")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        return _error(prog, f"example: cannot write {path}: {exc.strerror or exc}")
    print(f"wrote {path}; compile it with: {prog} {path}:with_dot --args \"f32[100000,3], f32[50000,3]\""
          if ns.name == "seed.py" else f"wrote {path}")
    return EXIT_OK


def run() -> NoReturn:
    """Entry point of ``python -m sphinx_jaxhlo`` (the ``jaxhlo`` script calls :func:`main`)."""
    raise SystemExit(main())
