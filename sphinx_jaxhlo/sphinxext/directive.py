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
``:expect-max-peak:``  a bound on XLA's peak memory (on a TPU it counts on-chip buffers, not HBM)
``:expect-max-device:``  a bound on what the device holds: arguments, outputs, temp and code (a TPU's HBM)
``:expect-reduction:``  ``fused`` or ``unfused``
``:expect-materialized:``  a shape such as ``f32[50000,100000]``, or ``none``
``:expect-error:``  a status such as ``RESOURCE_EXHAUSTED``: the compile must fail so
``:expect-collectives:``  ``all-gather=0, all-reduce<=1``, ``reduce-scatter<=64MiB``, or ``none``
``:expect-peak-top:``  the largest buffer live at the peak: ``dot_general``, ``line 4``, ``cos on line 4``
``:caption:``, ``:name:``, ``:class:``  as for other Sphinx blocks
``:rows:``         rows per detail table, largest first (a number or ``all``)
``:problem-min-size:`` / ``:problem-io-factor:``  when stored data is shown as a problem
``:chart-scale:``  ``auto``, ``linear`` or ``log`` for the chart of several functions
``:chunk:``        ``pos=1000``: add each function's variant that runs over chunks of 1000 of ``pos``
                   (``sphinx_jaxhlo.chunked``), proved and checked numerically at build time;
                   ``axis=`` and ``combine=`` (``sum``, ``mean``, ``max``, ``min``) as for ``chunked``
``:grad:``         ``hkl`` or ``1`` (names or positions, comma separated): add each function's gradient
                   with respect to them (a chunked variant's too): ``<function>_grad``, ``jax.value_and_grad``
                   (the default); with ``jax.grad`` among them, ``<function>_grad_only``, the gradient
                   alone; a ``vjp`` with a cotangent of ones for a non-scalar output
``:sweep:``        the values of the sizes ``:args:`` names by symbols (``f32[n,3]``): ``n=1000..100000``
                   (8 sizes on a log scale), ``n=1000..100000/12``, ``n=1024..16384*2``, ``n=1000,4096,5000``;
                   ``d=n`` ties a symbol, two symbols make a grid; each point is an ordinary compile, and
                   the page draws the map of the verdicts over the sizes (``sphinx_jaxhlo.core.sweeps``)
``:bisect:``       with ``:sweep:``, the most sizes to compile between neighbours whose decisions differ, to
                   locate each flip exactly (default 48; ``0``: none; ``sphinx_jaxhlo.core.bisection``)

Every expectation takes a bare value (all targets) or ``target=value`` pairs; over a sweep,
an item may end with ``for n>=5000`` (a claim over a range of sizes), and ``:expect-flip:``
says where a decision flips (``gpu:h100=between 4096 and 5000``, ``none``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.typing import OptionSpec

from sphinx_jaxhlo.core import expectations as exp
from sphinx_jaxhlo.core.example import OptionProblem, parse_example
from sphinx_jaxhlo.core.view_options import VIEW_OPTIONS
from sphinx_jaxhlo.render.nodes import jaxhlo_block

if TYPE_CHECKING:
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)


class jaxhlo_example(nodes.General, nodes.Element):
    """Placeholder for one example (``node["example"]``: its
    :class:`~sphinx_jaxhlo.core.example.Example`); replaced by its rendering
    when the document is read."""


def error_box(title: str, detail: str = "") -> nodes.Element:
    """An admonition that shows a failure in the page, in every builder."""
    box = nodes.error(classes=["jaxhlo-error"])
    box += nodes.paragraph(text=title)
    if detail:
        box += nodes.literal_block(detail, detail, language="text")
    return box


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
        "grad": directives.unchanged_required,
        "sweep": directives.unchanged_required,
        "bisect": directives.unchanged_required,
        "guide-limit": directives.unchanged,  # a disagreement with the guide's rule the page states
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
            example = parse_example(
                source, self.options, docname=self.env.docname, line=self.lineno, ordinal=ordinal,
                source_name=source_name, first_line=first_line, file_path=file_path)
            example = example.with_chunk_variants().with_grad_variants()
        except OptionProblem as exc:
            return self.fail(exc.subtype, exc.message)

        node = jaxhlo_example()
        node.source, node.line = self.get_source_info()
        node["example"] = example
        block = jaxhlo_block(classes=list(self.options.get("class", [])))
        block.source, block.line = node.source, node.line
        if example.caption:
            block += nodes.caption(example.caption, example.caption)
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
