"""Every option of an example, declared once: its name, the value it takes, its help, the
fronts that take it and the setting it overrides.

The fronts read their options from here: the directive's ``option_spec``
(:mod:`sphinx_jaxhlo.sphinxext.directive`), the command line's ``--expect-*``, ``--chunk``,
``--findings`` and ``--rows`` flags and their help (:mod:`sphinx_jaxhlo.cli`).  A claim's
option is made from its kind's one declaration (:data:`sphinx_jaxhlo.core.claim_kinds.CLAIMS`:
its value, help, parser and checker), as are ``check()``'s keywords.  The tests hold the
command line's other flags, the API's keyword arguments and the reference page
(``docs/reference/directive.md``) to this table, so a new option, or one a front lacks,
cannot slip in unnoticed.  Each front spells an option its own way in its messages
(:data:`FRONT_SPELLING`): ``:expect-max-device:`` in the directive,
``--expect-max-device`` on the command line, ``max_device=`` in ``check()``, ``timeout=``
in ``analyze()``.

What a value means, and how it is checked, is said where it is parsed (the parser named
in :attr:`Option.parser`); this table is about where an option can be given.

Nothing here imports anything outside ``sphinx_jaxhlo.core``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sphinx_jaxhlo.core.claim_kinds import CLAIMS
from sphinx_jaxhlo.core.claim_kinds import OPTIONS as CLAIM_OPTIONS

__all__ = ["FRONTS", "FRONT_SPELLING", "OPTIONS", "Option", "by_name", "for_front", "spelled"]

#: The fronts an option can be given in: the directive, the command line, the API's
#: ``analyze``/``analyze_source`` (and, for a claim, ``check()``).
FRONTS = ("directive", "cli", "api")


@dataclass(frozen=True)
class Option:
    """One option of an example (in the style of a config dataclass's fields: each with its
    type, default, validation and help)."""

    #: As the directive writes it: ``expect-max-temp``, ``xla-flags``.
    name: str
    #: What the value is, as help texts show it: ``SIZE``, ``SPECS``.
    value: str
    #: One line of help (the command line's; the reference page says more).
    help: str
    #: The fronts that take it (:data:`FRONTS`).
    fronts: tuple[str, ...] = FRONTS
    #: What the directive's option spec requires: ``required`` (a value), ``optional`` (may be
    #: empty), ``class`` (CSS class names).
    spec: str = "required"
    #: The ``jaxhlo_*`` setting it overrides for one example (``""``: none).
    setting: str = ""
    #: Where its value is checked (a function of ``sphinx_jaxhlo.core``), for the reader.
    parser: str = ""
    #: Its default, in words (``""``: none, or the setting's).
    default: str = ""

    @property
    def is_claim(self) -> bool:
        return self.name in CLAIM_OPTIONS

    @property
    def keyword(self) -> str:
        """The API's keyword: ``xla_flags``; a claim's, as ``check()`` takes it: ``max_temp``."""
        return self.name.removeprefix("expect-").replace("-", "_") if self.is_claim else self.name.replace("-", "_")


#: How each front names an option in a message.
FRONT_SPELLING: Mapping[str, Callable[[Option], str]] = {
    "directive": lambda option: f":{option.name}:",
    "cli": lambda option: f"--{option.name}",
    "api": lambda option: f"{option.keyword}=",
}

def _parser_of(function: Callable[..., object]) -> str:
    """``core.sizes.parse_size``: where a function of the package is, as :attr:`Option.parser` says it."""
    return f"{function.__module__.removeprefix('sphinx_jaxhlo.')}.{function.__qualname__}"


#: Every option, in the order the reference page gives them.
OPTIONS: tuple[Option, ...] = (
    Option("args", "SPECS", "positional and keyword argument specs: f32[100000,3], scale=f32[]; on a mesh, "
           "f32[8192,8192] @ P(data, None)", spec="optional", parser="core.specs.parse_args"),
    Option("mesh", "AXES", "the mesh's axes and sizes, data=4, model=2 (targets of several devices)",
           parser="core.example.parse_mesh_option"),
    Option("function", "NAMES", "the function(s) to compile, comma separated (the command line: FILE.py:NAMES)",
           default="the last def"),
    Option("static", "NAME=VALUE", "static arguments as Python literals: chunk=1000, axis=0", spec="optional",
           parser="core.example.parse_static"),
    Option("donate", "ARGS", "arguments to donate (their buffers may hold the output), by name or position",
           spec="optional"),
    Option("targets", "TARGETS", "targets to compile for: cpu, gpu:h100, tpu:v5e", setting="jaxhlo_targets"),
    Option("show", "PARTS", "parts to render: source, summary, graph, memory, cost, hlo, stablehlo, jaxpr",
           spec="optional", setting="jaxhlo_show", parser="core.example.parse_show"),
    Option("xla-flags", "NAME=VALUE", "compiler options, xla_cpu_experimental_ynn_fusion_type= (comma separated)",
           spec="optional", parser="core.example.parse_xla_flags"),
    Option("timeout", "SECONDS", "seconds one compile may take before its worker is stopped",
           setting="jaxhlo_timeout", default="a limit per target (60 s CPU, 90 s GPU, 300 s TPU), one retry"),
    # each claim kind as declared once, with its parser and checker (sphinx_jaxhlo.core.claim_kinds)
    *(Option(claim.option, claim.value, claim.help, parser=_parser_of(claim.parse)) for claim in CLAIMS),
    Option("caption", "TEXT", "a caption, as for other Sphinx blocks", fronts=("directive",)),
    Option("name", "LABEL", "a label to refer to the example by", fronts=("directive",), spec="optional"),
    Option("class", "CLASSES", "CSS classes of the example's block", fronts=("directive",), spec="class"),
    Option("chunk", "ARG=SIZE", "add each function's variant over chunks of one argument, FUNCTION_chunked "
           "(pos=1000; axis=1, combine=sum|mean|max|min), proved on the jaxpr and checked numerically by the "
           "compile worker", parser="core.example.parse_chunk"),
    Option("grad", "ARGS", "add each function's gradient with respect to these arguments (names or positions)",
           parser="gradient.option.parse_grad_option"),
    Option("sweep", "SYMBOLS", "compile at many sizes: n=1000..100000, d=n; the map of the verdicts over them",
           parser="core.sweeps.parse_sweep"),
    Option("bisect", "COUNT", "with a sweep, the most sizes compiled to locate each flip (0: none)",
           parser="core.bisection.parse_budget", default="48"),
    Option("guide-limit", "FUNCTIONS", "functions (f, or f@target) whose disagreement with the guide's rule the "
           "page states as a limit of the rules", fronts=("directive",), spec="optional"),
    Option("rows", "N|all", "rows per detail table, largest first (the command line and the API: 8 unless told)",
           setting="jaxhlo_table_rows", parser="core.view_options.parse_rows"),
    Option("problem-min-size", "SIZE", "the smallest stored buffer shown as a problem", fronts=("directive",),
           setting="jaxhlo_problem_min_size", parser="core.view_options.parse_min_size"),
    Option("problem-io-factor", "FACTOR", "how much larger than the inputs and outputs a stored buffer is a "
           "problem", fronts=("directive",), setting="jaxhlo_problem_io_factor",
           parser="core.view_options.parse_factor"),
    Option("chart-scale", "auto|linear|log", "the scale of the chart of several functions", fronts=("directive",),
           setting="jaxhlo_chart_scale", parser="core.view_options.parse_chart_scale"),
    Option("findings", "KINDS", "the findings reported, in the text and the JSON: memory, reductions, "
           "communication, peak, comma separated, or all, or none (the command line and the API: all unless told)",
           setting="jaxhlo_findings", parser="core.view_options.parse_findings"),
)


def by_name(name: str) -> Option:
    """The option of this name (as the directive writes it). :raises KeyError: no such option."""
    for option in OPTIONS:
        if option.name == name:
            return option
    raise KeyError(name)


def for_front(front: str) -> tuple[Option, ...]:
    """The options one front takes (:data:`FRONTS`)."""
    return tuple(o for o in OPTIONS if front in o.fronts)


def spelled(name: str, front: str) -> str:
    """``spelled("expect-max-device", "api")`` -> ``max_device=``: the option as a front names it."""
    return FRONT_SPELLING[front](by_name(name))
