"""One Sphinx build's pipeline: where its cache and snapshots are, its
:class:`~sphinx_jaxhlo.pipeline.build.Build` in each process, and the
scheduler that compiles ahead of the documents.

Before Sphinx reads (``env-before-read-docs``), the extension finds the
examples in the documents about to be read, notebooks included
(:func:`examples_in`, the same :func:`~sphinx_jaxhlo.core.example.parse_example`
the directive uses), and
:func:`start` forecasts their compiles and starts them; :func:`stop` and :func:`finish`
end it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.util import logging

from sphinx_jaxhlo.compiler.client import get_pool
from sphinx_jaxhlo.compiler.executors import DaskExecutor, Executor, LocalExecutor
from sphinx_jaxhlo.core.example import Example, OptionProblem, parse_example
from sphinx_jaxhlo.pipeline.build import Build
from sphinx_jaxhlo.pipeline.forecast import forecast
from sphinx_jaxhlo.pipeline.scan import FoundExample, find_examples, find_notebook_examples
from sphinx_jaxhlo.pipeline.schedule import Scheduler, machine_workers
from sphinx_jaxhlo.sphinxext.directive import read_example_file
from sphinx_jaxhlo.sphinxext.state import SphinxReporter, build_state
from sphinx_jaxhlo.store.cache import ReportCache, is_url
from sphinx_jaxhlo.store.hardware import read_records

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)


def default_cache_folder(app: Sphinx) -> Path:
    """``jaxhlo-cache`` beside the doctrees, never inside the published output.

    ``sphinx-build -M html docs _build`` keeps the doctrees in ``_build/doctrees``:
    the cache is ``_build/jaxhlo-cache``.  ``sphinx-build -b html docs
    docs/build/html`` (JAX's command) keeps them inside the output folder
    (``.doctrees``), which is published: the cache goes beside that folder
    instead, ``docs/build/jaxhlo-cache``, where MyST-NB keeps its ``.jupyter_cache``.
    """
    doctrees = Path(app.doctreedir).resolve()
    outdir = Path(app.outdir).resolve()
    if doctrees == outdir or outdir in doctrees.parents:
        return outdir.parent / "jaxhlo-cache"
    return doctrees.parent / "jaxhlo-cache"


def cache_location(app: Sphinx) -> str | Path:
    """``jaxhlo_cache_dir`` as a URL, or as a folder (relative to ``conf.py``)."""
    configured = build_state(app).settings.cache_dir
    if configured and is_url(configured):
        return str(configured)
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else Path(app.confdir) / path
    return default_cache_folder(app)


def cache_for(app: Sphinx) -> ReportCache | None:
    """The build's cache object in this process (a forked reader gets its own)."""
    state = build_state(app)
    if not state.settings.cache:
        return None
    location = cache_location(app)
    key = (str(location), os.getpid())
    if key not in state.caches:
        try:
            state.caches[key] = ReportCache(location, state.settings.cache_options)
        except ImportError:  # fsspec went missing after the settings were checked
            state.caches[key] = ReportCache(default_cache_folder(app))
    return state.caches[key]


def fragment_folder(app: Sphinx) -> Path | None:
    """Where the rendered HTML of examples is kept: always a local folder, even
    when the reports come from a URL (HTML is never taken from a shared store)."""
    if not build_state(app).settings.cache:
        return None
    location = cache_location(app)
    return (location if isinstance(location, Path) else default_cache_folder(app)) / "html"


def snapshot_root(app: Sphinx) -> Path | None:
    configured = build_state(app).settings.snapshot_dir
    if not configured:
        return None
    path = Path(configured)
    return path if path.is_absolute() else Path(app.confdir) / path


def worker_count(app: Sphinx) -> int:
    """``jaxhlo_workers``, or by default what the machine holds
    (:func:`sphinx_jaxhlo.pipeline.schedule.machine_workers`); a reader forked by
    ``-j`` compiles only what the build's forecast missed, with one worker."""
    state = build_state(app)
    if state.settings.workers:
        return int(state.settings.workers)
    if state.forked and (state.scheduler is not None or getattr(app, "parallel", 0) > 1):
        return 1
    return machine_workers()


def build_for(app: Sphinx) -> Build:
    """The pipeline's :class:`Build` of this process."""
    state = build_state(app)
    pid = os.getpid()
    build = state.builds.get(pid)
    if build is None:
        def compile_batch(batch: Any) -> Any:
            return get_pool(worker_count(app)).compile_all(list(batch))

        build = Build(state.settings, SphinxReporter(state.recorder), compile_batch, cache=cache_for(app),
                      snapshot_root=snapshot_root(app), confdir=Path(app.confdir) if app.confdir else None,
                      peak_when_needed=True)
        hardware = state.settings.hardware_dir
        if hardware:
            folder = Path(hardware) if Path(hardware).is_absolute() else Path(app.confdir) / hardware
            build.hardware, build.hardware_problems = read_records(folder)
        state.builds[pid] = build
    build.scheduler = state.scheduler
    return build


def examples_in(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> Iterator[Example]:
    """The examples of the documents, read from their text as the directive
    will read them (an example whose options are wrong is left to the
    directive to report); a notebook's from its Markdown cells
    (:func:`notebook_examples`)."""
    for docname in docnames:
        path = Path(env.doc2path(docname))
        found = notebook_examples(app, path)
        if found is None:
            markdown = app.config.source_suffix.get(path.suffix, "") != "restructuredtext" and path.suffix != ".rst"
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            found = find_examples(text, markdown)
        for ordinal, example in enumerate(found, 1):
            if example.argument:
                source, source_name, file_path = read_example_file(env, example.argument, docname)
                if source is None:
                    continue
            else:
                source, source_name, file_path = example.content, "example.py", ""
            try:
                yield parse_example(source, example.options, docname=docname, line=example.line, ordinal=ordinal,
                                    source_name=source_name, file_path=file_path
                                    ).with_chunk_variants().with_grad_variants()
            except OptionProblem:
                continue


def notebook_examples(app: Sphinx, path: Path) -> list[FoundExample] | None:
    """The examples of a notebook, at the lines MyST-NB gives them; ``None``
    when ``path`` is not one.

    A ``.ipynb`` file is read as JSON (its Markdown cells are all the forecast
    needs; nbformat's validation of every output would cost more than the
    compiles it starts early); a suffix of ``nb_custom_formats`` (a Jupytext
    script, say) through MyST-NB's own reader.  A notebook that cannot be read
    is left to its reader to report: nothing is forecast for it.
    """
    if path.suffix == ".ipynb":
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            return []
    else:
        notebook = custom_format_notebook(app, path)
        if notebook is None:
            return None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return []
    metadata = notebook.get("metadata")
    source_map = metadata.get("source_map") if isinstance(metadata, dict) else None
    ok = isinstance(source_map, list) and all(isinstance(n, int) for n in source_map)
    return find_notebook_examples(notebook["cells"], source_map if ok else None)


def custom_format_notebook(app: Sphinx, path: Path) -> dict[str, Any] | None:
    """A notebook of one of MyST-NB's ``nb_custom_formats`` (not ``.ipynb``, not
    MyST Markdown, which is scanned as text), read by MyST-NB's reader, as JSON data."""
    formats = getattr(app.config, "nb_custom_formats", None)
    config = getattr(app.env, "mystnb_config", None)
    if not formats or config is None or not any(str(path).endswith(suffix) for suffix in formats):
        return None
    try:
        from myst_nb.core.read import create_nb_reader

        text = path.read_text(encoding="utf-8")
        markdown = getattr(app.env, "myst_config", None)
        if markdown is None:
            return None
        reader = create_nb_reader(str(path), markdown, config, None)
        if reader is None:
            return None
        return dict(json.loads(json.dumps(reader.read(text))))
    except Exception:  # a reader that fails here fails in MyST-NB too, which says why
        return {}


def executor_for(app: Sphinx, size: int) -> Executor:
    """The executor ``jaxhlo_executor`` names (local compile workers by default)."""
    state = build_state(app)
    setting = state.settings.executor
    if setting is None:
        return LocalExecutor(get_pool(size))
    try:
        return DaskExecutor(state.clients.get(setting, setting))
    except ImportError:
        logger.warning("jax-hlo: jaxhlo_executor is %r but dask.distributed is not installed "
                       "(pip install 'sphinx-jaxhlo[dask]'); compiling on this machine", setting,
                       type="jaxhlo", subtype="config")
    except Exception as exc:
        logger.warning("jax-hlo: cannot reach the Dask cluster of jaxhlo_executor (%r): %s; compiling on this "
                       "machine", setting, exc, type="jaxhlo", subtype="config")
    return LocalExecutor(get_pool(size))


def remember_client(app: Sphinx, client: Any) -> str:
    """Keep a ``distributed.Client`` of ``conf.py``; return the ``dask://``
    address that stands for it in the configuration (a client cannot be
    pickled with the environment)."""
    address = str(getattr(getattr(client, "scheduler", None), "address", "") or f"client-{id(client)}")
    name = "dask://" + address.split("://", 1)[-1]
    build_state(app).clients[name] = client
    return name


def start(app: Sphinx, examples: list[Example]) -> None:
    """Forecast the compiles of the examples about to be read, and start them."""
    finish(app)
    state = build_state(app)
    build = build_for(app)
    planned = forecast(build, examples)
    if not planned:
        return
    scheduler = Scheduler(executor_for(app, worker_count(app)), build.cache, shared=app.parallel > 1)
    scheduler.start(planned)
    state.scheduler = build.scheduler = scheduler


def stop(app: Sphinx) -> None:
    """Every document is read: compiles nobody asked for do not start."""
    scheduler = build_state(app).scheduler
    if scheduler is not None and not scheduler.forked:
        scheduler.stop()


def finish(app: Sphinx) -> None:
    """The end of a build (and the start of one): close the scheduler."""
    state = build_state(app)
    if state.scheduler is not None:
        state.scheduler.close()
        state.last_scheduler = state.scheduler
    state.scheduler = None
    for build in state.builds.values():
        build.scheduler = None
