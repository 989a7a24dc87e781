"""Every ``jaxhlo_*`` setting: its type, default, check and help, in one place,
and :class:`Settings`, the value a build reads them into once.

The Sphinx extension registers :data:`SETTINGS`, checks each value with its
own :meth:`Setting.problem` (a bad value warns ``jaxhlo.config`` and falls back
to the default), and hands the pipeline one :class:`Settings`; the docs'
configuration reference is generated from :data:`SETTINGS`, so the three
cannot drift apart.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sphinx_jaxhlo.core.options import OPTIONS
from sphinx_jaxhlo.core.request import DEFAULT_SHOW, SHOW_PARTS
from sphinx_jaxhlo.core.view_options import VIEW_OPTIONS

#: Snapshot modes: compile what no snapshot of this toolchain answers and store it;
#: compile everything and store it; compile nothing; compile everything and compare.
SNAPSHOT_MODES = ("update", "refresh", "use", "check")
#: The modes that write snapshots.
WRITING_MODES = ("update", "refresh")
#: The environment variable that overrides ``jaxhlo_snapshot_mode`` (for CI and docs hosts).
MODE_VARIABLE = "JAXHLO_SNAPSHOT_MODE"
#: ``jaxhlo_executor``: the address of a Dask scheduler.
DASK_SCHEME = "dask://"


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    types: tuple[type, ...]
    help: str
    #: Sphinx's "rebuild" value: which environments a change invalidates.
    rebuild: str = "env"
    #: Why a value of the right type cannot be used, or ``None``.
    check: Callable[[Any], str | None] | None = None

    @property
    def option(self) -> str:
        """The example's option that overrides it (``rows`` for ``jaxhlo_table_rows``), as the option
        table declares it (:attr:`sphinx_jaxhlo.core.options.Option.setting`); ``""``: none."""
        return OVERRIDDEN_BY.get(self.name, "")

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not acceptable for this setting, or ``None``: a view setting (``jaxhlo_table_rows``)
        is checked by the parser of the option that overrides it (``:rows:``)."""
        if not isinstance(value, self.types) or (isinstance(value, bool) and bool not in self.types):
            names = " or ".join(t.__name__ if t is not type(None) else "None" for t in self.types)
            return f"{self.name} must be {names}, not {type(value).__name__}"
        if self.check is not None:
            return self.check(value)
        parser = VIEW_OPTIONS.get(self.option)
        if parser is not None:
            try:
                parser(value)
            except ValueError as exc:
                return f"{self.name}: {exc}"
        return None


#: Setting -> the option that overrides it for one example, from the option table.
OVERRIDDEN_BY = {option.setting: option.name for option in OPTIONS if option.setting}


def _positive(name: str) -> Callable[[Any], str | None]:
    return lambda value: f"{name} must be positive" if isinstance(value, (int, float)) and value <= 0 else None


def _one_of(name: str, choices: tuple[str, ...]) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in choices else f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r}"

    return check


def executor_problem(value: Any) -> str | None:
    """Why a ``jaxhlo_executor`` value cannot be used, or ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.startswith(DASK_SCHEME) and len(value) > len(DASK_SCHEME):
            return None
        return f"jaxhlo_executor must be None, 'dask://host:port' or a distributed.Client, not {value!r}"
    if callable(getattr(value, "submit", None)) and callable(getattr(value, "scheduler_info", None)):
        return None
    return f"jaxhlo_executor must be None, 'dask://host:port' or a distributed.Client, not a {type(value).__name__}"


SETTINGS: tuple[Setting, ...] = (
    Setting("jaxhlo_targets", None, (list, tuple, str, type(None)),
            "Targets every example compiles for, unless it says ``:targets:``. A list such as "
            "``['cpu', 'gpu:h100', 'tpu:v5e']`` or a comma string. ``None`` (the default) means "
            "``cpu, gpu:h100, tpu:v5e``, keeping those whose compiler is installed."),
    Setting("jaxhlo_show", list(DEFAULT_SHOW), (list, tuple, str),
            "Parts each example shows unless it says ``:show:``: any of ``" + ", ".join(SHOW_PARTS) + "``."),
    Setting("jaxhlo_hlo_collapsed", True, (bool,),
            "Whether the optimized HLO starts collapsed in HTML.", rebuild="html"),
    Setting("jaxhlo_timeout", None, (int, float, type(None)),
            "Seconds one compile may take before its worker is stopped (``jaxhlo.timeout``). An example's "
            "``:timeout:`` overrides it. ``None`` (the default): a limit per target, 60 s for the CPU, 90 s for a "
            "GPU, 300 s for a TPU, or four times what the same example took the last time the cache saw it compile, "
            "if that is longer; a compile that runs past it is tried once more with three times the limit before "
            "it is reported. A number set here (or ``:timeout:``) is the limit, with no retry.",
            check=_positive("jaxhlo_timeout")),
    Setting("jaxhlo_workers", None, (int, type(None)),
            "Compile workers of the build. Every example's compiles go to one pool as soon as the build starts "
            "(before Sphinx reads the documents, whatever ``-j``), longest first. ``None``: as many as the machine "
            "holds: one per CPU core, at most one per 0.5 GB of available memory (a worker with the TPU compiler "
            "loaded holds about that).", rebuild="",
            check=_positive("jaxhlo_workers")),
    Setting("jaxhlo_cache", True, (bool,),
            "Whether reports and each example's rendered HTML are cached between builds."),
    Setting("jaxhlo_cache_dir", None, (str, type(None)),
            "Folder of the cache. ``None``: ``jaxhlo-cache`` beside the doctrees (``_build/jaxhlo-cache`` "
            "with ``sphinx-build -M html docs _build``), or beside the output folder when the doctrees sit inside "
            "it (``docs/build/jaxhlo-cache`` with ``sphinx-build -b html docs docs/build/html``): never inside what "
            "gets published. A relative path is relative "
            "to the folder of ``conf.py``. Persist it in CI to share compile work between builds and machines. "
            "Also the URL of any fsspec filesystem (``s3://bucket/prefix``, ``gs://...``, ``file://...``; "
            "``https://...`` only read), with ``pip install 'sphinx-jaxhlo[remote]'`` and the filesystem's package "
            "(``s3fs``, ``gcsfs``); the rendered HTML of examples then stays in the local default folder.",
            rebuild=""),
    Setting("jaxhlo_xla_flags", {}, (dict,),
            "XLA options passed to ``compile()`` for every example, before the example's own "
            "``:xla-flags:``, e.g. ``{'xla_cpu_experimental_ynn_fusion_type': ''}``."),
    Setting("jaxhlo_cache_options", {}, (dict,),
            "Storage options passed to fsspec when ``jaxhlo_cache_dir`` is a URL, e.g. "
            "``{'endpoint_url': 'https://minio.example.org'}`` or ``{'anon': True}`` for a public bucket. "
            "Leave credentials to the filesystem's own environment variables and files.", rebuild=""),
    Setting("jaxhlo_snapshot_dir", None, (str, type(None)),
            "Folder of snapshots committed with the docs: one JSON report per example, function and target "
            "(see the Snapshots page). A relative path is relative to the folder of ``conf.py``. "
            "``None``: no snapshots."),
    Setting("jaxhlo_snapshot_mode", "update", (str,),
            "With ``jaxhlo_snapshot_dir``: ``update`` uses the snapshots this toolchain made, compiles the "
            "rest (and a target whose compiler is missing shows its snapshot, whoever made it) and writes "
            "their snapshots; ``use`` compiles nothing and shows every target from its snapshot (a docs host "
            "without the GPU/TPU compilers, or without jax); ``check`` compiles everything and warns "
            "``jaxhlo.snapshot`` where a snapshot is missing, stale or differs (CI). The environment variable "
            "``JAXHLO_SNAPSHOT_MODE`` overrides it.",
            check=_one_of("jaxhlo_snapshot_mode", SNAPSHOT_MODES)),
    Setting("jaxhlo_hardware_dir", None, (str, type(None)),
            "Folder of hardware records (``tools/hardware_check.py`` writes one per device, on a machine that has "
            "it): an example it measured, unchanged since, shows what the device held while it ran and how long "
            "it took, beside the deviceless figures. A relative path is relative to the folder of ``conf.py``. "
            "``None``: no measurements shown."),
    Setting("jaxhlo_drift_tolerance", 0.05, (int, float),
            "When a fresh report differs from the one stored before it (a snapshot, or the cache's last report "
            "of the example, made by another toolchain), how far temp memory may move, as a fraction of the "
            "larger of the two figures, before ``jaxhlo.drift`` warns; a change of verdict always warns.",
            check=lambda value: "jaxhlo_drift_tolerance must be 0 or more" if value < 0 else None),
    # -- how examples are shown (sphinx_jaxhlo.render.rows); each has a directive option of the same name
    Setting("jaxhlo_table_rows", 8, (int, str, type(None)),
            "Rows each detail table (fusions, materialized buffers, reductions) shows, largest first; the "
            "rest are counted (\"4 more, 14 in total\"). Scalars, loop and branch instructions, copies of "
            "arguments and reductions the compiler added are left out unless it is ``'all'`` (or ``None``), "
            "which lists every row. An example's ``:rows:`` overrides it."),
    Setting("jaxhlo_problem_min_size", "1MiB", (int, str),
            "Stored data smaller than this (bytes, or a size such as ``'1MiB'``) is never shown as a problem: "
            "an unfused reduction reading it is listed neutrally. An example's ``:problem-min-size:`` overrides it."),
    Setting("jaxhlo_problem_io_factor", 1.0, (int, float),
            "Stored data is shown as a problem (red) only when it is at least this many times the program's "
            "arguments and outputs together (and at least ``jaxhlo_problem_min_size``). "
            "An example's ``:problem-io-factor:`` overrides it."),
    Setting("jaxhlo_chart_scale", "auto", (str,),
            "Scale of the temp-memory chart of examples with several functions: ``'linear'``, ``'log'``, or "
            "``'auto'``: linear when the values are within 100x of each other. Each bar is labelled with its "
            "value and its ratio to the smallest. An example's ``:chart-scale:`` overrides it."),
    Setting("jaxhlo_chunk_budget", "64MiB", (int, str),
            "When a reduction reads a stored intermediate larger than this (bytes, or a size such as "
            "``'64MiB'``), or the temp memory is larger, and the report can prove a chunking of its arguments' "
            "axis (:func:`sphinx_jaxhlo.chunked`), check it numerically and compile it, it suggests the largest "
            "chunk size whose compiled temp memory is at most this much."),
    Setting("jaxhlo_findings", "memory, reductions, communication", (str, list, tuple),
            "Kinds of findings each example reports in its target panels: any of ``memory`` (the largest "
            "intermediate, or that none is stored), ``reductions`` (each reduction's verdict, fused or not), "
            "``communication`` (the collectives of a program on several devices) and ``peak`` (what is live at "
            "the peak, with the memory timeline, folded), comma separated, or ``'all'`` or ``'none'``. The "
            "default is every kind but ``peak``. The tables stay. An example's ``:findings:`` overrides it."),
    # -- links into this package's guide (sphinx_jaxhlo.sphinxext.links)
    Setting("jaxhlo_guide_url", None, (str, type(None)),
            "Where this package's guide is published (its address, ``https://...``), for links into it: the "
            "examples' reasons link their bounded alternatives there, and ``sphinx.ext.intersphinx`` (which must "
            "be in ``extensions``) gets the ``jaxhlo`` inventory, so that pages and docstrings can link to the "
            "guide's labels (see the Linking page). The labels are read from the ``objects.inv`` "
            "published there, and from the inventory shipped in the package (the installed release's) when it "
            "cannot be read: a build offline, or before the site is served, still resolves them, without a "
            "warning. ``None`` (the default): nothing links out; an alternative is shown as its title. "
            "An ``intersphinx_mapping`` entry of your own named ``jaxhlo`` is left as it is.",
            check=lambda value: None if value is None or re.match(r"[a-z][a-z0-9+.-]*://\S+$", value) else
            f"jaxhlo_guide_url must be an address such as 'https://host/path/', not {value!r}"),
    Setting("jaxhlo_guide_pages", [], (list, tuple),
            "Documents (names, or prefixes ending in ``/``: ``'guide/'``) whose examples the guide's rules must "
            "explain: there, an example whose largest table XLA treats otherwise than the rule that "
            "names it (:mod:`sphinx_jaxhlo.predict`) warns ``jaxhlo.predict``, unless the example marks it as a "
            "stated limit. Every build counts the agreement over all its examples in its last lines."),
    # -- where compiles run (sphinx_jaxhlo.compiler.executors)
    Setting("jaxhlo_executor", None, (str, type(None), object),
            "Where compiles run. ``None``: compile workers on this machine (``jaxhlo_workers``). "
            "``'dask://scheduler:8786'``, or a ``distributed.Client`` object made in ``conf.py``: the workers "
            "of a Dask cluster (``pip install 'sphinx-jaxhlo[dask]'``, and the extension installed on every Dask "
            "worker, with the GPU/TPU compilers its targets need). Each request goes out as data (source, argument "
            "specs, target, options) and comes back as a report; every Dask worker compiles in its own compile "
            "worker process, with the same timeouts; the cache stays where ``jaxhlo_cache_dir`` says.",
            rebuild="",
            check=executor_problem),
)

BY_NAME = {s.name: s for s in SETTINGS}


class Settings:
    """The ``jaxhlo_*`` values of one build, read once (``settings.timeout`` is
    ``jaxhlo_timeout``); what the pipeline reads instead of Sphinx's config.
    A setting not given has its default."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        given = dict(values or {})
        unknown = set(given) - set(BY_NAME)
        if unknown:
            raise KeyError(f"not jaxhlo settings: {', '.join(sorted(unknown))}")
        self._values = {s.name: given[s.name] if s.name in given else copy.deepcopy(s.default) for s in SETTINGS}

    @classmethod
    def from_config(cls, config: Any) -> Settings:
        """From Sphinx's config (or any object with the settings as attributes)."""
        return cls({s.name: getattr(config, s.name) for s in SETTINGS})

    def __getattr__(self, name: str) -> Any:
        """``settings.timeout``, or by the setting's full name, ``settings.jaxhlo_timeout``."""
        if name.startswith("_"):
            raise AttributeError(name)
        full = name if name.startswith("jaxhlo_") else "jaxhlo_" + name
        try:
            return self._values[full]
        except KeyError:
            raise AttributeError(f"no setting {full}") from None

    def __getstate__(self) -> dict[str, Any]:
        return self._values

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._values = state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and self._values == other._values

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Settings({self._values!r})"

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (short names: ``timeout=30``)."""
        return Settings({**self._values, **{f"jaxhlo_{k}": v for k, v in changes.items()}})


def as_list(value: Any) -> list[str]:
    """A comma string or a sequence of strings, as a clean list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v).strip() for v in value if str(v).strip()]
