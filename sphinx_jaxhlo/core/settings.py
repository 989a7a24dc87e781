"""Every ``jaxhlo_*`` setting: its type, default and help, in one place.

:func:`sphinx_jaxhlo.sphinxext.extension.setup` registers these, the config handler
validates them (a bad value warns ``jaxhlo.config`` and falls back to the
default), and the docs' configuration reference is generated from
:data:`SETTINGS`, so the three cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sphinx_jaxhlo.core.request import DEFAULT_SHOW, SHOW_PARTS
from sphinx_jaxhlo.core.view_options import VIEW_OPTIONS


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    types: tuple[type, ...]
    help: str
    #: Sphinx's "rebuild" value: which environments a change invalidates.
    rebuild: str = "env"


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
            "it is reported. A number set here (or ``:timeout:``) is the limit, with no retry."),
    Setting("jaxhlo_workers", None, (int, type(None)),
            "Compile workers of the build. Every example's compiles go to one pool as soon as the build starts "
            "(before Sphinx reads the documents, whatever ``-j``), longest first. ``None``: as many as the machine "
            "holds: one per CPU core, at most one per 0.5 GB of available memory (a worker with the TPU compiler "
            "loaded holds about that).", rebuild=""),
    Setting("jaxhlo_cache", True, (bool,),
            "Whether reports and each example's rendered HTML are cached between builds."),
    Setting("jaxhlo_cache_dir", None, (str, type(None)),
            "Folder of the cache. ``None``: ``jaxhlo-cache`` beside the doctrees (``_build/jaxhlo-cache`` "
            "with ``sphinx-build -M``), or inside the hidden ``.doctrees`` folder when the doctrees sit in the "
            "output folder (``-b``): do not upload that folder with the site. A relative path is relative "
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
            "``JAXHLO_SNAPSHOT_MODE`` overrides it."),
    Setting("jaxhlo_drift_tolerance", 0.05, (int, float),
            "When a fresh report differs from the one stored before it (a snapshot, or the cache's last report "
            "of the example, made by another toolchain), how far temp memory may move, as a fraction of the "
            "larger of the two figures, before ``jaxhlo.drift`` warns; a change of verdict always warns."),
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
            "``'64MiB'``) and the report can prove a chunking of an argument's axis "
            "(:func:`sphinx_jaxhlo.chunked`), it suggests one whose chunks store at most this much."),
    Setting("jaxhlo_findings", "all", (str, list, tuple),
            "Kinds of findings each example reports in its target panels: any of ``memory`` (the largest "
            "intermediate, or that none is stored), ``reductions`` (each reduction's verdict, fused or not) and "
            "``communication`` (the collectives of a program on several devices), comma separated, or ``'all'`` "
            "(the default) or ``'none'``. The tables stay. An example's ``:findings:`` overrides it."),
    # -- where compiles run (sphinx_jaxhlo.compiler.executors)
    Setting("jaxhlo_executor", None, (str, type(None), object),
            "Where compiles run. ``None``: compile workers on this machine (``jaxhlo_workers``). "
            "``'dask://scheduler:8786'``, or a ``distributed.Client`` object made in ``conf.py``: the workers "
            "of a Dask cluster (``pip install 'sphinx-jaxhlo[dask]'``, and the extension installed on every Dask "
            "worker, with the GPU/TPU compilers its targets need). Each request goes out as data (source, argument "
            "specs, target, options) and comes back as a report; every Dask worker compiles in its own compile "
            "worker process, with the same timeouts; the cache stays where ``jaxhlo_cache_dir`` says.",
            rebuild=""),
)

BY_NAME = {s.name: s for s in SETTINGS}


def validate(name: str, value: Any) -> str | None:
    """Return why ``value`` is not acceptable for setting ``name``, or ``None``."""
    setting = BY_NAME[name]
    if not isinstance(value, setting.types) or (isinstance(value, bool) and bool not in setting.types):
        names = " or ".join(t.__name__ if t is not type(None) else "None" for t in setting.types)
        return f"{name} must be {names}, not {type(value).__name__}"
    if name in ("jaxhlo_timeout", "jaxhlo_workers") and isinstance(value, (int, float)) and value <= 0:
        return f"{name} must be positive"
    if name == "jaxhlo_executor":
        from sphinx_jaxhlo.compiler.executors import executor_problem

        return executor_problem(value)
    if name == "jaxhlo_snapshot_mode":
        from sphinx_jaxhlo.store.snapshots import MODES

        if value not in MODES:
            return f"{name} must be one of {', '.join(map(repr, MODES))}, not {value!r}"
    if name == "jaxhlo_drift_tolerance" and value < 0:
        return f"{name} must be 0 or more"
    parser = _VIEW_PARSERS.get(name)
    if parser is not None:
        try:
            parser(value)
        except ValueError as exc:
            return f"{name}: {exc}"
    return None


#: The view settings' parsers (they also parse the directive's options of the same names).
_VIEW_PARSERS = {setting: parser for setting, parser in VIEW_OPTIONS.values()}


def as_list(value: Any) -> list[str]:
    """A comma string or a sequence of strings, as a clean list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v).strip() for v in value if str(v).strip()]
