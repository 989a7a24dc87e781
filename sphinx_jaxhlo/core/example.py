"""The example value: what one ``jax-hlo`` directive, one call of
:func:`sphinx_jaxhlo.analyze_source` or one ``python -m sphinx_jaxhlo`` run asks for.

:func:`parse_example` builds it from options, with one set of checks and one
set of messages for every front; a :class:`Spelling` names the options as
the front's users write them (``:static:`` in a page, ``--static`` on the
command line, ``static`` in Python).  Nothing here compiles, renders or
imports Sphinx: the directive, the build's forecast, the API and the command
line all plan from the same value (:func:`sphinx_jaxhlo.pipeline.plan.plan`).
"""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sphinx_jaxhlo.chunking.source import ChunkOption, add_variant, parse_chunk_option, variant_name
from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core.bisection import DEFAULT_BUDGET, parse_budget
from sphinx_jaxhlo.core.request import DEFAULT_SHOW, SHOW_PARTS, default_function
from sphinx_jaxhlo.core.settings import as_list
from sphinx_jaxhlo.core.specs import (
    ArgSpecs,
    MeshSpec,
    SpecError,
    format_tree,
    iter_array_specs,
    parse_args,
    parse_mesh,
    sharding_problems,
    size_symbols,
)
from sphinx_jaxhlo.core.sweeps import Point, Sweep, SweepError, parse_flip_claim, parse_sweep
from sphinx_jaxhlo.core.view_options import VIEW_OPTIONS, parse_assignments
from sphinx_jaxhlo.gradient.option import grad_variant_names, grad_wrt, parse_grad_option, resolve_wrt, undifferentiable
from sphinx_jaxhlo.gradient.source import add_grad_variant

__all__ = ["DEFAULT_SHOW", "SHOW_PARTS", "Example", "OptionProblem", "Spelling", "parse_example"]


class OptionProblem(ValueError):
    """An option of an example that cannot be used: ``subtype`` names the warning."""

    def __init__(self, subtype: str, message: str) -> None:
        super().__init__(message)
        self.subtype, self.message = subtype, message


@dataclass(frozen=True)
class Spelling:
    """How a front's users write an option's name in a message: the
    directive's ``:args:``, the command line's ``--args``, Python's ``args``."""

    prefix: str = ":"
    suffix: str = ":"
    #: Python spells ``xla-flags`` as ``xla_flags``.
    underscores: bool = False

    def __call__(self, option: str) -> str:
        name = option.replace("-", "_") if self.underscores else option
        return f"{self.prefix}{name}{self.suffix}"


DIRECTIVE = Spelling()
COMMAND_LINE = Spelling("--", ":")
PYTHON = Spelling("", ":", underscores=True)


@dataclass(frozen=True)
class Example:
    """One example: its code, what to compile it for and how to show it.

    Values are as checked by :func:`parse_example`; ``None`` for ``targets``,
    ``show`` and ``timeout`` means "as the configuration says".
    """

    source: str
    #: The file name the source is compiled under (the HLO's metadata names it).
    source_name: str = "example.py"
    #: The functions to compile; ``""`` is the module's last top-level ``def``.
    functions: tuple[str, ...] = ("",)
    specs: ArgSpecs = field(default_factory=lambda: ArgSpecs(()))
    mesh: MeshSpec | None = None
    #: Static arguments as ``(name, Python literal text)``.
    static: tuple[tuple[str, str], ...] = ()
    donate: tuple[str, ...] = ()
    xla_flags: tuple[tuple[str, str], ...] = ()
    targets: tuple[str, ...] | None = None
    show: tuple[str, ...] | None = None
    timeout: float | None = None
    expectations: tuple[exp.Expectation, ...] = ()
    #: The view options given (``rows``, ``findings``...), parsed.
    view: tuple[tuple[str, Any], ...] = ()
    #: ``:chunk:``, and the variants it added: ``(variant, what to prove, as JSON)``.
    chunk: ChunkOption | None = None
    chunk_checks: tuple[tuple[str, str], ...] = ()
    caption: str = ""
    #: ``:name:``: names the example's snapshot slots and its label.
    name: str = ""
    # -- where it is
    docname: str = ""
    #: The line of the directive in its document.
    line: int = 0
    #: The document line of the code's first line (0: the code is a file).
    first_line: int = 0
    #: The example's file, relative to the source folder, when it is one.
    file_path: str = ""
    #: Its place among its document's examples (1, 2, ...).
    ordinal: int = 0
    #: ``:grad:``: the arguments (names or positions) each function's gradient variant is taken
    #: with respect to; and the variants :meth:`with_grad_variants` added.
    grad: tuple[str, ...] = ()
    grad_variants: tuple[str, ...] = ()
    #: The first line of the code :meth:`with_grad_variants` appended to the source (0: none):
    #: what the reader did not write, shown apart from what they did.
    generated_from: int = 0
    #: ``:sweep:``: the sizes it is compiled at; ``None``: the one size of ``specs``.
    sweep: Sweep | None = None
    #: ``:bisect:``: the most probes a sweep compiles to locate its flips (:mod:`sphinx_jaxhlo.core.bisection`).
    bisect: int = DEFAULT_BUDGET
    #: For one point of a sweep (:func:`sphinx_jaxhlo.pipeline.plan.sweep_points`): its values.
    point: Point | None = None
    #: ``:guide-limit:``: the functions (``f``, or ``f@target``) whose disagreement with the guide's rule
    #: is a limit the page states (``("all",)``: every one); no ``jaxhlo.predict`` warning for them.
    guide_limit: tuple[str, ...] = ()

    @property
    def location(self) -> tuple[str, int]:
        return self.docname, self.line

    @property
    def slot_name(self) -> str:
        """The name its snapshot slots start with: ``:name:``, else its place in the document;
        a point of a sweep adds its values (``-n4096``)."""
        base = self.name or f"example-{self.ordinal or self.line}"
        return f"{base}-{self.point.slot}" if self.point is not None else base

    def expectation_set(self) -> exp.Expectations:
        return exp.Expectations(list(self.expectations))

    def view_options(self) -> dict[str, Any]:
        return dict(self.view)

    def chunk_check(self, function: str) -> str:
        """What compiling ``function`` must prove (a ``:chunk:`` variant), as JSON, or ``""``."""
        return dict(self.chunk_checks).get(function, "")

    def with_chunk_variants(self, spell: Spelling = DIRECTIVE) -> Example:
        """With ``:chunk:``, the example with the chunked variant of each
        function appended to its source and listed after it.

        :raises OptionProblem: (``chunk``) a function the option cannot apply to, the option
            named as ``spell`` writes it.
        """
        if self.chunk is None or self.chunk_checks:
            return self
        functions = list(self.functions)
        source = self.source
        try:
            if functions == [""]:
                defs = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
                if not defs:
                    raise ValueError(":chunk: the example defines no top-level function")
                functions = [defs[-1]]
            out: list[str] = []
            checks: list[tuple[str, str]] = []
            for function in functions:
                source, check = add_variant(source, function, self.chunk)
                out += [function, variant_name(function)]
                checks.append((variant_name(function), json.dumps(check, sort_keys=True)))
        except (ValueError, SyntaxError) as exc:
            raise chunk_problem(exc, spell) from None
        return dataclasses.replace(self, source=source, functions=tuple(out), chunk_checks=tuple(checks))


    def with_grad_variants(self, spell: Spelling = DIRECTIVE) -> Example:
        """With ``:grad:``, the example with the gradient variant of each function
        (a chunked variant's too) appended to its source and listed after the functions
        (:mod:`sphinx_jaxhlo.gradient`).  A chunked variant's gradient proves what the
        chunked variant proves.

        :raises OptionProblem: (``grad``) a function the option cannot apply to, named as
            ``spell`` writes the option.
        """
        if not self.grad or self.grad_variants:
            return self
        functions = list(self.functions)
        source = self.source
        generated_from = len(source.rstrip("\n").split("\n")) + 1
        try:
            if functions == [""]:
                defs = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
                if not defs:
                    raise ValueError(f"{spell('grad')} the example defines no top-level function")
                functions = [defs[-1]]
            added = []
            for function in functions:
                self._check_differentiable(source, function, spell)
                source = add_grad_variant(source, function, self.grad, spell("grad"))
                added += grad_variant_names(function, self.grad)
        except (ValueError, SyntaxError) as exc:
            raise OptionProblem("grad", str(exc)) from None
        checks = dict(self.chunk_checks)
        more = tuple((name, checks[f]) for f in functions if f in checks for name in grad_variant_names(f, self.grad))
        return dataclasses.replace(self, source=source, functions=(*functions, *added),
                                   chunk_checks=(*self.chunk_checks, *more), grad_variants=tuple(added),
                                   generated_from=generated_from)


    def _check_differentiable(self, source: str, function: str, spell: Spelling) -> None:
        """``:grad:`` naming an argument whose spec ``jax.grad`` refuses (an integer...).

        :raises ValueError: with the argument, its dtype and the fix.
        """
        nodes = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == function]
        if not nodes:
            return  # add_grad_variant says so
        a = nodes[-1].args
        positional = [p.arg for p in (*a.posonlyargs, *a.args)]
        names = resolve_wrt(function, positional, [p.arg for p in a.kwonlyargs], grad_wrt(self.grad), spell("grad"))
        keywords = dict(self.specs.kwargs)
        for name in names:
            index = positional.index(name) if name in positional else None
            tree = (self.specs.args[index] if index is not None and index < len(self.specs.args)
                    else keywords.get(name))
            if tree is None:
                continue
            dtypes = [spec.dtype for _, spec in iter_array_specs(ArgSpecs((tree,)))]
            problem = undifferentiable(spell("grad"), function, name, dtypes)
            if problem:
                raise ValueError(problem)


# -- options -> values: each accepts the text of a directive or of the command line,
#    and the Python values the API takes


def parse_specs(value: str | ArgSpecs | None, spell: Spelling = DIRECTIVE) -> ArgSpecs:
    if isinstance(value, ArgSpecs):
        return value
    try:
        return parse_args(value or "")
    except SpecError as exc:
        raise OptionProblem("args", f"{spell('args')} {exc}") from None


def parse_mesh_option(value: str | Mapping[str, int] | MeshSpec | None, spell: Spelling = DIRECTIVE) -> MeshSpec | None:
    if value is None or isinstance(value, MeshSpec):
        return value
    try:
        if isinstance(value, Mapping):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        return parse_mesh(str(value))
    except SpecError as exc:
        raise OptionProblem("args", f"{spell('mesh')} {exc}") from None


def parse_static(value: str | Mapping[str, Any] | None, spell: Spelling = DIRECTIVE) -> tuple[tuple[str, str], ...]:
    """Static arguments as ``(name, literal text)``; a mapping's values must be
    Python literals (they travel to the worker as text)."""
    if not value:
        return ()
    name = spell("static")
    if isinstance(value, str):
        try:
            pairs = parse_assignments(value, name.removesuffix(":"))
        except ValueError as exc:
            raise OptionProblem("option", str(exc)) from None
        for key, text in pairs:
            try:
                ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise OptionProblem("option", f"{name} {key}={text} is not a Python literal") from None
        return tuple(pairs)
    out: list[tuple[str, str]] = []
    for key, item in value.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise OptionProblem("option", f"{name} {key!r} is not an argument name")
        text = repr(item)
        try:
            same = ast.literal_eval(text) == item and type(ast.literal_eval(text)) is type(item)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            same = False
        if not same:
            raise OptionProblem("option", f"{name} values must be Python literals to be compiled from source")
        out.append((key, text))
    return tuple(out)


def parse_xla_flags(value: str | Mapping[str, Any] | None, spell: Spelling = DIRECTIVE) -> tuple[tuple[str, str], ...]:
    """Compiler options as ``(name, text)``, in the order given."""
    if not value:
        return ()
    if isinstance(value, str):
        try:
            return tuple(parse_assignments(value, spell("xla-flags").removesuffix(":")))
        except ValueError as exc:
            raise OptionProblem("option", str(exc)) from None
    return tuple((str(k), ("true" if v else "false") if isinstance(v, bool) else str(v)) for k, v in value.items())


def parse_donate(value: str | Sequence[str] | None, spell: Spelling = DIRECTIVE) -> tuple[str, ...]:
    items = tuple(as_list(value))
    for item in items:
        if not (item.isidentifier() or item.isdigit()):
            raise OptionProblem("option", f"{spell('donate')} {item!r} is neither an argument name nor a position")
    return items


def parse_show(value: str | Sequence[str] | None, spell: Spelling = DIRECTIVE) -> tuple[str, ...] | None:
    if value is None:
        return None
    parts = tuple(as_list(value))
    unknown = [p for p in parts if p not in SHOW_PARTS]
    if unknown:
        raise OptionProblem("option", f"{spell('show')} unknown part {', '.join(map(repr, unknown))} "
                            f"(known: {', '.join(SHOW_PARTS)})")
    return parts


def parse_timeout(value: str | float | None, spell: Spelling = DIRECTIVE) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
        if not seconds > 0:
            raise ValueError
    except (TypeError, ValueError):
        shown = f"{value:g}" if isinstance(value, (int, float)) else repr(value)
        raise OptionProblem("option", f"{spell('timeout')} {shown} is not a positive number of seconds") from None
    return seconds


def parse_view(options: Mapping[str, Any], spell: Spelling = DIRECTIVE) -> tuple[tuple[str, Any], ...]:
    out = []
    for name, parser in VIEW_OPTIONS.items():
        if name in options:
            try:
                out.append((name, parser(options[name])))
            except ValueError as exc:
                raise OptionProblem("option", f"{spell(name)} {exc}") from None
    return tuple(out)


def parse_chunk(value: str | None, spell: Spelling = DIRECTIVE) -> ChunkOption | None:
    if value is None:
        return None
    try:
        return parse_chunk_option(value)
    except ValueError as exc:
        raise chunk_problem(exc, spell) from None


def chunk_problem(exc: BaseException, spell: Spelling) -> OptionProblem:
    """A ``:chunk:`` problem (the chunking's messages name the directive's option) named as ``spell``
    writes the option: ``--chunk: ...`` on the command line, ``chunk: ...`` in the API."""
    text = str(exc)
    return OptionProblem("chunk", spell("chunk") + text.removeprefix(":chunk:") if text.startswith(":chunk:")
                         else text)


def one_list_of_specs(specs: ArgSpecs, source: str, function: str, spell: Spelling = DIRECTIVE) -> str:
    """The message for specs written as one list (``[f32[100,3], f32[100,3]]``: one argument, a
    list) where the function takes that many positional arguments and needs more than one; else ``""``."""
    if len(specs.args) != 1 or not isinstance(specs.args[0], (list, tuple)) or specs.kwargs:
        return ""
    try:
        nodes = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == function]
    except SyntaxError:
        return ""
    if not nodes or nodes[-1].args.vararg is not None:
        return ""
    a = nodes[-1].args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    required = len(positional) - len(a.defaults)
    given = specs.args[0]
    if required < 2 or not required <= len(given) <= len(positional):
        return ""
    inner = ", ".join(format_tree(t) for t in given)
    return (f"{spell('args')} {format_tree(given)} is one argument (a list), but {function}() takes {required} "
            f"({', '.join(positional[:required])}): write one spec per argument, without the brackets: {inner}")


def parse_grad(value: str | int | Sequence[str | int] | None, spell: Spelling = DIRECTIVE) -> tuple[str, ...]:
    """``:grad:`` as argument names and positions (as text)."""
    if value is None:
        return ()
    try:
        return parse_grad_option(value, spell("grad"))
    except ValueError as exc:
        raise OptionProblem("grad", str(exc)) from None


def parse_bisect(value: Any, sweep: Sweep | None, spell: Spelling = DIRECTIVE) -> int:
    """``:bisect:``: the bisection budget of a sweep (:func:`sphinx_jaxhlo.core.bisection.parse_budget`)."""
    if value is None or value == "":
        return DEFAULT_BUDGET
    if sweep is None:
        raise OptionProblem("option", f"{spell('bisect')} {value}: bisection locates the flips of a sweep; it "
                                      f"needs {spell('sweep')}")
    try:
        return parse_budget(value, spell("bisect"))
    except ValueError as exc:
        raise OptionProblem("option", str(exc)) from None


def normalized_name(value: str | None) -> str:
    """``:name:`` as docutils normalizes a target name (case and spaces)."""
    return " ".join(str(value or "").lower().split())


#: Option -> how it is read (the rest: ``function``, ``targets``, ``expect-*``,
#: ``caption``, ``name``).
_READERS: dict[str, Callable[[Any, Spelling], Any]] = {
    "static": parse_static, "xla-flags": parse_xla_flags, "donate": parse_donate,
    "show": parse_show, "timeout": parse_timeout,
}


def parse_example(source: str, options: Mapping[str, Any], *, spell: Spelling = DIRECTIVE,
                  **where: Any) -> Example:
    """The example of ``source`` with ``options`` (the directive's option
    names: ``args``, ``mesh``, ``function``, ``static``, ``xla-flags``, ...),
    checked.  ``where``: :class:`Example`'s place fields (``docname``, ``line``...)
    and ``source_name``.

    :raises OptionProblem: the first option that cannot be used, named as
        ``spell`` writes it.
    """
    sweep, specs = parse_sweep_specs(options.get("sweep"), options.get("args"), spell)
    mesh = parse_mesh_option(options.get("mesh"), spell)
    problems = sharding_problems(specs, mesh)
    if problems:
        raise OptionProblem("args", f"{spell('args')} {problems[0]}")
    try:
        expectations = exp.parse_expectations({k: v for k, v in options.items() if k.startswith("expect-")})
    except exp.ExpectationSyntaxError as exc:
        raise OptionProblem("option", str(exc)) from None
    values = {name: read(options.get(name), spell) for name, read in _READERS.items()}
    targets = options.get("targets")
    functions = tuple(as_list(options.get("function"))) or ("",)
    for function in functions:
        problem = one_list_of_specs(specs, source, function or default_function(source) or "", spell)
        if problem:
            raise OptionProblem("args", problem)
    sweep = check_sweep(sweep, expectations, values["static"], functions, source, spell)
    return Example(
        source=source,
        functions=functions,
        specs=specs, mesh=mesh, static=values["static"], donate=values["donate"], xla_flags=values["xla-flags"],
        targets=tuple(as_list(targets)) if targets is not None else None,
        show=values["show"], timeout=values["timeout"], expectations=tuple(expectations.items),
        view=parse_view(options, spell), chunk=parse_chunk(options.get("chunk"), spell),
        caption=str(options.get("caption") or ""), name=normalized_name(options.get("name")),
        grad=parse_grad(options.get("grad"), spell), sweep=sweep,
        bisect=parse_bisect(options.get("bisect"), sweep, spell),
        guide_limit=(tuple(as_list(options["guide-limit"])) or ("all",)) if "guide-limit" in options else (),
        **where)


# -- sweeps: ``:sweep:``, sizes named by symbols in ``:args:``, claims over ranges


def sweep_text(value: str | Mapping[str, Any]) -> str:
    """A sweep as the API takes it (``{"n": [1000, 4096], "d": "n"}``, ``{"n": "1000..100000"}``)
    as ``:sweep:`` text."""
    if isinstance(value, str):
        return value
    items = []
    for name, values in value.items():
        if isinstance(values, (str, int)) and not isinstance(values, bool):
            items.append(f"{name}={values}")
        elif isinstance(values, Sequence) and values and all(isinstance(v, int) and not isinstance(v, bool)
                                                             for v in values):
            items.append(f"{name}=" + ",".join(str(v) for v in values))
        else:
            raise OptionProblem("sweep", f"sweep: {name!r}: give a list of ints, a range such as "
                                         f"'1000..100000', or another symbol's name, not {values!r}")
    return ", ".join(items)


def parse_sweep_specs(sweep_value: str | Mapping[str, Any] | Sweep | None, args: str | ArgSpecs | None,
                      spell: Spelling = DIRECTIVE) -> tuple[Sweep | None, ArgSpecs]:
    """``:sweep:`` and ``:args:`` together: the sweep (with the ``:args:`` text whose sizes its
    symbols give, and the symbols that are static arguments), and the specs at its first point;
    without a sweep, the specs.

    :raises OptionProblem: a malformed sweep, a size of ``:args:`` that the sweep does not give.
    """
    if sweep_value is None or sweep_value == "":
        try:
            return None, parse_specs(args, spell)
        except OptionProblem:
            used = _symbols_of(args)
            if used:
                name, col = used[0]
                raise OptionProblem("args", f"{spell('args')} dimension {name!r} at column {col + 1} is not a "
                                            f"number: a size named by a symbol needs its values, given by "
                                            f"{spell('sweep')} {name}=1000..100000") from None
            raise
    if isinstance(sweep_value, Sweep):
        sweep = sweep_value
    else:
        text = sweep_text(sweep_value)
        try:
            sweep = parse_sweep(text)
        except SweepError as exc:
            shown = "" if isinstance(sweep_value, str) else f" (in {text!r})"
            raise OptionProblem("sweep", f"{spell('sweep')} {exc}{shown}") from None
    if isinstance(args, ArgSpecs):
        return dataclasses.replace(sweep, args=str(args), static=sweep.symbols), args
    text = args or ""
    try:
        used = size_symbols(text)
    except SpecError as exc:
        raise OptionProblem("args", f"{spell('args')} {exc}") from None
    for name, col in used:
        if name not in sweep.symbols:
            raise OptionProblem("args", f"{spell('args')} size {name!r} at column {col + 1} has no value: "
                                        f"the sweep gives {', '.join(sweep.symbols)}")
    named = {name for name, _ in used}
    sweep = dataclasses.replace(sweep, args=text, static=tuple(s for s in sweep.symbols if s not in named))
    first = sweep.points()[0]
    try:
        return sweep, parse_args(text, first.as_dict())
    except SpecError as exc:
        raise OptionProblem("args", f"{spell('args')} at {first.label}: {exc}") from None


def _symbols_of(args: str | ArgSpecs | None) -> list[tuple[str, int]]:
    if not isinstance(args, str):
        return []
    try:
        return size_symbols(args)
    except SpecError:
        return []


def check_sweep(sweep: Sweep | None, expectations: exp.Expectations, static: tuple[tuple[str, str], ...],
                functions: tuple[str, ...], source: str, spell: Spelling = DIRECTIVE) -> Sweep | None:
    """Check what the other options say of the sweep's symbols: a claim over a range needs
    a sweep and names only its symbols; a flip claim on a grid names its axis; a symbol
    passed as a static argument is not given by ``:static:`` too, and is a parameter of
    each function (when the source says so).

    :raises OptionProblem: the first problem, in the front's spelling.
    """
    ranged = expectations.over_ranges
    if sweep is None:
        if ranged:
            e = ranged[0]
            what = f"{e.value} for {e.where}" if e.where else e.value
            raise OptionProblem("option", f"{spell('expect-' + e.kind)} {what}: a claim over a range of sizes "
                                          f"needs {spell('sweep')}")
        return None
    for e in ranged:
        names = (e.condition.names if e.condition else set())
        claim = parse_flip_claim(e.value) if e.kind == "flip" else None
        if claim is not None and claim.symbol:
            names = names | {claim.symbol}
        unknown = sorted(names - set(sweep.symbols))
        if unknown:
            raise OptionProblem("option", f"{spell('expect-' + e.kind)} {e.value}"
                                          f"{' for ' + e.where if e.where else ''}: {unknown[0]!r} is not swept "
                                          f"({spell('sweep')} gives {', '.join(sweep.symbols)})")
        if claim is not None and sweep.is_grid and not claim.symbol and not claim.expects_none:
            axes = " or ".join(a.name for a in sweep.axes)
            raise OptionProblem("option", f"{spell('expect-flip')} {e.value}: on a grid, name the axis the sizes "
                                          f"are on ({axes}): between {sweep.axes[1].name}=A and "
                                          f"{sweep.axes[1].name}=B")
    given = dict(static)
    for name in sweep.symbols:
        if name in given and name not in sweep.static:
            raise OptionProblem("option", f"{spell('static')} {name}={given[name]}: {name} is a size of the "
                                          f"arguments, given by the sweep; remove {name}={given[name]}")
    for name in sweep.static:
        if name in given:
            raise OptionProblem("option", f"{spell('static')} {name} is swept by {spell('sweep')} too: "
                                          "give it in one of them")
        for function in functions:
            found = _parameters(source, function)
            if found is not None and name not in found[1]:
                raise OptionProblem("sweep", f"{spell('sweep')} {name!r} is neither a size of {spell('args')} nor "
                                             f"a parameter of {found[0]}")
    return sweep


def _parameters(source: str, function: str) -> tuple[str, set[str]] | None:
    """The name and parameter names of a top-level function of ``source`` (``""``: the last
    ``def``); ``None`` when they cannot be known (no such def, ``**kwargs``, a syntax error)."""
    try:
        defs = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    except SyntaxError:
        return None
    found = [d for d in defs if d.name == function] if function else defs[-1:]
    if not found or found[-1].args.kwarg is not None:
        return None
    a = found[-1].args
    return found[-1].name, {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
