"""The ``jax-hlo`` directive: parse its options into an example node; never compile.

Usage (reStructuredText; in MyST the same options go on ``:name: value`` lines)::

    .. jax-hlo:: [optional/path/to/example.py]
       :args: f32[100000,3], f32[50000,3]
       :function: with_dot
       :targets: cpu, gpu:h100, tpu:v5e
       :expect-max-temp: gpu:h100=25GB, tpu:v5e=64MiB

       import jax, jax.numpy as jnp

       def with_dot(pos, hkl):
           return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)

Options:

``:args:``         positional and keyword argument specs, ``f32[100000,3], scale=f32[]``;
                   on a mesh, ``f32[8192,8192] @ P(data, None)`` (replicated without ``@``)
``:mesh:``         the mesh's axes and sizes, ``data=4, model=2`` (targets of several devices)
``:function:``     the function(s) to compile, comma separated; default: the last ``def``
``:static:``       static arguments as Python literals, ``chunk=1000, axis=0``
``:donate:``       arguments to donate (their buffers may hold the output), by name or position: ``params, 1``
``:targets:``      targets to compile for; default: the ``jaxhlo_targets`` setting
``:show:``         parts to render: ``source, summary, graph, memory, cost, hlo, stablehlo, jaxpr``
``:xla-flags:``    compiler options, ``xla_cpu_experimental_ynn_fusion_type=`` (comma separated)
``:timeout:``      seconds before a stuck compile is stopped
``:expect-max-temp:`` / ``:expect-min-temp:``  bounds on temp memory (``64MiB``, ``10GB``)
``:expect-max-peak:``  a bound on peak memory (arguments, output and temporaries)
``:expect-reduction:``  ``fused`` or ``unfused``
``:expect-materialized:``  a shape such as ``f32[50000,100000]``, or ``none``
``:expect-error:``  a status such as ``RESOURCE_EXHAUSTED``: the compile must fail so
``:expect-collectives:``  ``all-gather=0, all-reduce<=1``, ``reduce-scatter<=64MiB``, or ``none``
``:caption:``, ``:name:``, ``:class:``  as for other Sphinx blocks
``:rows:``         rows per detail table, largest first (a number or ``all``)
``:problem-min-size:`` / ``:problem-io-factor:``  when stored data is shown as a problem
``:chart-scale:``  ``auto``, ``linear`` or ``log`` for the chart of several functions
``:chunk:``        ``pos=1000``: add each function's variant that runs over chunks of 1000 of ``pos``
                   (``sphinx_jaxhlo.chunked``), proved and checked numerically at build time;
                   ``axis=`` and ``combine=`` (``sum``, ``mean``, ``max``, ``min``) as for ``chunked``

Every expectation takes a bare value (all targets) or ``target=value`` pairs.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.typing import OptionSpec

from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core.request import SHOW_PARTS
from sphinx_jaxhlo.core.settings import as_list
from sphinx_jaxhlo.core.specs import SpecError, parse_args, parse_mesh, sharding_problems
from sphinx_jaxhlo.core.view_options import VIEW_OPTIONS, parse_assignments
from sphinx_jaxhlo.render.nodes import jaxhlo_block

if TYPE_CHECKING:
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)


class jaxhlo_example(nodes.General, nodes.Element):
    """Placeholder for one example; replaced by its rendering when the document is read."""


def error_box(title: str, detail: str = "") -> nodes.Element:
    """An admonition that shows a failure in the page, in every builder."""
    box = nodes.error(classes=["jaxhlo-error"])
    box += nodes.paragraph(text=title)
    if detail:
        box += nodes.literal_block(detail, detail, language="text")
    return box


class OptionProblem(ValueError):
    """An option of an example that cannot be used: ``subtype`` names the warning."""

    def __init__(self, subtype: str, message: str) -> None:
        super().__init__(message)
        self.subtype, self.message = subtype, message


def example_fields(options: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an example node that its options give: what the directive
    stores, and what the build's compile forecast (:mod:`sphinx_jaxhlo.pipeline.schedule`)
    derives from the raw text of the same options.

    :param options: option name to value (text; ``class`` may be a list).
    :raises OptionProblem: for an option that cannot be used.
    """
    try:
        specs = parse_args(options.get("args", "") or "")
    except SpecError as exc:
        raise OptionProblem("args", f":args: {exc}") from None
    try:
        mesh = parse_mesh(options["mesh"]) if options.get("mesh") is not None else None
    except SpecError as exc:
        raise OptionProblem("args", f":mesh: {exc}") from None
    problems = sharding_problems(specs, mesh)
    if problems:
        raise OptionProblem("args", f":args: {problems[0]}")
    try:
        expectations = exp.parse_expectations({k: v for k, v in options.items() if k.startswith("expect-")})
    except exp.ExpectationSyntaxError as exc:
        raise OptionProblem("option", str(exc)) from None
    try:
        static = parse_assignments(options.get("static", "") or "", ":static")
        for key, value in static:
            try:
                ast.literal_eval(value)
            except (ValueError, SyntaxError):
                raise ValueError(f":static: {key}={value} is not a Python literal") from None
        xla_flags = parse_assignments(options.get("xla-flags", "") or "", ":xla-flags")
        donate = as_list(options.get("donate", "") or "")
        for item in donate:
            if not (item.isidentifier() or item.isdigit()):
                raise ValueError(f":donate: {item!r} is neither an argument name nor a position")
    except ValueError as exc:
        raise OptionProblem("option", str(exc)) from None
    show = as_list(options["show"]) if "show" in options else None
    unknown = [p for p in show or [] if p not in SHOW_PARTS]
    if unknown:
        raise OptionProblem("option", f":show: unknown part {', '.join(map(repr, unknown))} "
                            f"(known: {', '.join(SHOW_PARTS)})")
    timeout = None
    if "timeout" in options:
        try:
            timeout = float(options["timeout"])
            if timeout <= 0:
                raise ValueError
        except ValueError:
            raise OptionProblem("option", f":timeout: {options['timeout']!r} is not a positive number of seconds") \
                from None
    view_options = {}
    for name, (_, parser) in VIEW_OPTIONS.items():
        if name in options:
            try:
                view_options[name] = parser(options[name])
            except ValueError as exc:
                raise OptionProblem("option", f":{name}: {exc}") from None
    chunk = None
    if options.get("chunk") is not None:
        from sphinx_jaxhlo.core.chunks import parse_chunk_option

        try:
            chunk = dataclasses.asdict(parse_chunk_option(options["chunk"]))
        except ValueError as exc:
            raise OptionProblem("chunk", str(exc)) from None
    return {
        "chunk_option": chunk,
        "functions": as_list(options.get("function")) or [""],
        "specs": specs.to_json(),
        "mesh": mesh.to_json() if mesh is not None else None,
        "static": static,
        "donate": donate,
        "xla_flags": xla_flags,
        "targets": as_list(options["targets"]) if "targets" in options else None,
        "show": show,
        "timeout": timeout,
        "expectations": [(e.kind, e.target, e.value, e.function) for e in expectations.items],
        "caption": options.get("caption", "") or "",
        "view_options": view_options,
    }


def chunk_variants(source: str, functions: list[str],
                   option: Mapping[str, Any]) -> tuple[str, list[str], dict[str, dict[str, Any]]]:
    """The example with the ``:chunk:`` variant of each function appended (the
    plain-JAX code of :func:`sphinx_jaxhlo.chunked_source`).

    :return: ``(source, functions with their variants after them, variant -> what to prove)``.
    :raises ValueError: a function the option cannot apply to.
    """
    from sphinx_jaxhlo.core.chunks import ChunkOption, add_variant, variant_name

    chunk = ChunkOption(tuple(option["args"]), int(option["size"]), int(option["axis"]), str(option["combine"]))
    if functions == [""]:
        tree = ast.parse(source)
        defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        if not defs:
            raise ValueError(":chunk: the example defines no top-level function")
        functions = [defs[-1]]
    out: list[str] = []
    checks: dict[str, dict[str, Any]] = {}
    for function in functions:
        source, check = add_variant(source, function, chunk)
        out += [function, variant_name(function)]
        checks[variant_name(function)] = check
    return source, out, checks


def read_example_file(env: BuildEnvironment, argument: str, docname: str) -> tuple[str | None, str, str]:
    """The text of an example given as a file argument.

    :return: ``(text, file name, path relative to the source folder)``, or
        ``(None, why not, "")``.
    """
    rel, path = env.relfn2path(argument, docname)
    srcdir = Path(env.srcdir).resolve()
    resolved = Path(path).resolve()
    if not resolved.is_relative_to(srcdir):
        return None, f"{argument!r} is outside the source directory; refusing to read it", ""
    try:
        text = resolved.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"{rel}: not UTF-8 ({exc.reason} at byte {exc.start})", ""
    except OSError as exc:
        return None, f"cannot read {rel}: {exc.strerror}", ""
    return text, resolved.name, rel


class JaxHloDirective(SphinxDirective):
    """Compile an embedded JAX example and show what XLA made of it."""

    has_content = True
    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = False
    option_spec: ClassVar[OptionSpec] = {
        "args": directives.unchanged,
        "mesh": directives.unchanged_required,
        "function": directives.unchanged_required,
        "static": directives.unchanged,
        "donate": directives.unchanged,
        "targets": directives.unchanged_required,
        "show": directives.unchanged,
        "xla-flags": directives.unchanged,
        "timeout": directives.unchanged_required,
        **dict.fromkeys(exp.OPTIONS, directives.unchanged_required),
        "caption": directives.unchanged_required,
        "name": directives.unchanged,
        "class": directives.class_option,
        "chunk": directives.unchanged_required,
        # -- how the example is shown: each overrides the jaxhlo_* setting of options.VIEW_OPTIONS
        **dict.fromkeys(VIEW_OPTIONS, directives.unchanged_required),
    }

    def fail(self, subtype: str, message: str, line: int | None = None, detail: str = "") -> list[nodes.Node]:
        logger.warning("jax-hlo: %s", message, location=(self.env.docname, line or self.lineno),
                       type="jaxhlo", subtype=subtype)
        return [error_box(f"jax-hlo example could not be built: {message}", detail)]

    def run(self) -> list[nodes.Node]:
        # the example's place in its document, counted before anything can fail (names snapshot slots)
        data = self.env.temp_data
        ordinal = (data.get("jaxhlo_examples") or 0) + 1
        data["jaxhlo_examples"] = ordinal
        source, source_name, first_line, file_path = self._source()
        if source is None:
            return self.fail("file", source_name)
        if all(not ln.strip() or ln.lstrip().startswith("#") for ln in source.splitlines()):
            return self.fail("empty", "the example has no code" + (f" ({file_path})" if file_path else ""))
        try:
            fields = example_fields(self.options)
        except OptionProblem as exc:
            return self.fail(exc.subtype, exc.message)
        if fields["chunk_option"] is not None:
            try:
                source, fields["functions"], fields["chunk"] = chunk_variants(
                    source, fields["functions"], fields["chunk_option"])
            except (ValueError, SyntaxError) as exc:
                return self.fail("chunk", str(exc))

        node = jaxhlo_example()
        node.source, node.line = self.get_source_info()
        node["source_text"] = source
        node["source_name"] = source_name
        node["first_line"] = first_line
        node["file_path"] = file_path
        for key, value in fields.items():
            node[key] = value
        node["docname"] = self.env.docname
        node["lineno"] = self.lineno
        node["ordinal"] = ordinal
        block = jaxhlo_block(classes=list(self.options.get("class", [])))
        block.source, block.line = node.source, node.line
        if node["caption"]:
            block += nodes.caption(node["caption"], node["caption"])
        block += node
        self.add_name(block)
        return [block]

    def _source(self) -> tuple[str | None, str, int, str]:
        """(source, name to compile it under, document line of its first line, file path or "")."""
        if self.arguments:
            text, name, rel = read_example_file(self.env, self.arguments[0], self.env.docname)
            if text is None:
                return None, name, 0, ""
            self.env.note_dependency(rel)
            if self.content:
                logger.warning("jax-hlo: both a file argument and content given; the content is ignored",
                               location=(self.env.docname, self.lineno), type="jaxhlo", subtype="option")
            return text, name, 0, rel
        return "\n".join(self.content), "example.py", self._first_content_line(), ""

    def _first_content_line(self) -> int:
        """The document line (1-based) of the content's first line."""
        if type(self.state).__module__.startswith("myst_parser"):
            # MyST counts content_offset from the line after the opening fence.
            return self.lineno + 1 + self.content_offset
        return self.content_offset + 1
