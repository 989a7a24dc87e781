"""Build-wide compile scheduling: the forecast, the shared pool, ``-j``, snapshots, no cache, timeouts.

The examples of ``tests/roots/test-schedule`` sleep while they are defined,
so each compile takes a while in its worker.  What the tests count are the
scheduler's events (which key, on which lane, from when to when) and the
moments the documents were processed: orderings, never durations.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sphinx_jaxhlo.compiler.client import CompileWorker, Limits
from sphinx_jaxhlo.core.request import CompileRequest
from sphinx_jaxhlo.core.specs import parse_args
from sphinx_jaxhlo.core.targets import TARGETS
from sphinx_jaxhlo.pipeline import schedule
from sphinx_jaxhlo.pipeline.scan import cell_and_line, find_examples, find_notebook_examples
from sphinx_jaxhlo.sphinxext.state import build_state, document_data

#: (document, function) of every compile the test root asks for.
EXPECTED = {("first", "first"), ("second", "second"), ("third", "third"), ("third", "one"), ("third", "two"),
            ("fourth", "fourth")}


def _records(app: Any) -> list[Any]:
    return document_data(app.env).all_records()


def _watch_documents(app: Any) -> dict[str, float]:
    """When each document's examples were done (its ``doctree-read`` handlers ran)."""
    done: dict[str, float] = {}
    app.connect("doctree-read", lambda app, doctree: done.setdefault(app.env.docname, time.monotonic()),
                priority=900)
    return done


def _app(make_app: Any, rootdir: Path, tmp_path: Path, **kwargs: Any) -> Any:
    """A fresh copy of the test root, with a cache of its own."""
    import shutil

    src = tmp_path / "src"
    if not src.exists():
        shutil.copytree(rootdir / "test-schedule", src)
    overrides = {"jaxhlo_cache_dir": str(tmp_path / "cache"), **kwargs.pop("confoverrides", {})}
    return make_app("html", srcdir=src, freshenv=True, confoverrides=overrides, **kwargs)


def _last_events(app: Any) -> list[schedule.Event]:
    last = build_state(app).last_scheduler
    assert last is not None, "the build forecast no compile"
    return last.events


def test_compiles_start_before_their_page_and_overlap(make_app: Any, rootdir: Path, tmp_path: Path) -> None:
    app = _app(make_app, rootdir, tmp_path)
    done = _watch_documents(app)
    app.build()
    records = _records(app)
    assert {(r.docname, r.function) for r in records} == EXPECTED
    # every compile was forecast (reST, MyST with either fence and YAML options, a
    # file argument, an example nested in another directive): none was left to its page
    assert all(r.origin == "compiled" and r.prefetched for r in records), records
    events = _last_events(app)
    assert sorted(Counter(e.key for e in events).values()) == [1] * len(records)
    # the two lanes compiled at once
    assert any(a.start < b.end and b.start < a.end for a in events for b in events if a is not b)
    # the second document's compile started before the first document was done:
    # compiles do not wait for their page
    second = min(e.start for e in events if e.docname == "second")
    assert second < done["first"]
    assert "compiled ahead of their page" in app.status.getvalue()
    assert "WARNING" not in app.warning.getvalue(), app.warning.getvalue()


def test_parallel_readers_neither_repeat_nor_lose_compiles(make_app: Any, rootdir: Path, tmp_path: Path) -> None:
    app = _app(make_app, rootdir, tmp_path, parallel=2)
    app.build()
    records = _records(app)
    assert {(r.docname, r.function) for r in records} == EXPECTED
    # the forked readers took every result from the scheduler of the main process
    assert all(r.origin == "compiled" and r.prefetched for r in records), records
    events = _last_events(app)
    assert len(events) == len(records) == len({e.key for e in events})
    html = (Path(app.outdir) / "third.html").read_text(encoding="utf-8")
    assert html.count('class="jaxhlo') >= 2


def test_without_a_cache_results_still_come_from_the_scheduler(make_app: Any, rootdir: Path,
                                                               tmp_path: Path) -> None:
    app = _app(make_app, rootdir, tmp_path, confoverrides={"jaxhlo_cache": False})
    app.build()
    records = _records(app)
    assert all(r.prefetched for r in records) and len(records) == len(EXPECTED)
    assert not (tmp_path / "cache").exists()


def test_nothing_compiles_where_snapshots_answer(make_app: Any, rootdir: Path, tmp_path: Path) -> None:
    overrides = {"jaxhlo_snapshot_dir": str(tmp_path / "snapshots"), "jaxhlo_cache": False}
    first = _app(make_app, rootdir, tmp_path, confoverrides=overrides)
    first.build()
    assert all(r.prefetched for r in _records(first))
    second = _app(make_app, rootdir, tmp_path, confoverrides=overrides)
    second.build()
    assert {r.origin for r in _records(second)} == {"snapshot"}
    assert build_state(second).last_scheduler is None  # the forecast found nothing to compile


def test_forecast_reads_directives_as_the_parsers_do() -> None:
    rest = (".. note::\n\n   .. jax-hlo:: ../mod.py\n      :args: f32[3],\n         f32[4]\n      :name: x\n\n"
            "   text\n\n.. jax-hlo::\n   :args: f32[2]\n\n   def f(x):\n\n       return x\n\n\nAfter.\n")
    found = find_examples(rest, markdown=False)
    assert [(f.line, f.argument) for f in found] == [(3, "../mod.py"), (10, "")]
    assert found[0].options == {"args": "f32[3],\nf32[4]", "name": "x"} and found[0].content == ""
    assert found[1].content == "def f(x):\n\n    return x"
    myst = ("````{jax-hlo}\n:args: f32[2]\n\ndef f(x):\n    return x\n\n````\n\n:::{jax-hlo}\n---\nargs: 'f32[3]'\n"
            "---\ndef g(y):\n    return y\n:::\n")
    found = find_examples(myst, markdown=True)
    assert [(f.line, f.options) for f in found] == [(1, {"args": "f32[2]"}), (9, {"args": "f32[3]"})]
    assert found[0].content == "def f(x):\n    return x\n" and found[1].content == "def g(y):\n    return y"


def test_a_directive_shown_as_code_is_no_example_and_one_in_a_note_is() -> None:
    """A ``jax-hlo`` fence inside a code block is text the page shows (the reference and the
    quick start show how to write one); inside a note or a tab it is an example."""
    myst = ("```{note}\ntext\n```\n\n```{jax-hlo}\n:args: f32[3]\n\ndef f(x):\n    return x\n```\n\n"
            "````md\n```{jax-hlo}\n:args: f32[4]\n\ndef shown(x):\n    return x\n```\n````\n\n"
            "~~~\n```{jax-hlo}\ndef shown_too(x):\n    return x\n```\n~~~\n\n"
            ":::{tip}\n````{tab-item} A\n```{jax-hlo}\n:args: f32[5]\n\ndef h(x):\n    return x\n```\n````\n:::\n")
    found = find_examples(myst, markdown=True)
    assert [(f.line, f.options["args"]) for f in found] == [(5, "f32[3]"), (30, "f32[5]")]


def _notebook(*cells: tuple[str, str, list[str]]) -> dict[str, Any]:
    """An nbformat 4 notebook of (kind, source, tags) cells."""
    return {"cells": [{"cell_type": kind, "metadata": {"tags": tags} if tags else {}, "source": source,
                       **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                      for kind, source, tags in cells],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 4}


EXAMPLE_CELL = "Intro\n\n```{jax-hlo}\n:args: f32[8]\n:expect-kernels: 7\n\nimport jax.numpy as jnp\n\n" \
               "def f(x):\n    return jnp.sum(jnp.cos(x))\n```\n"


def test_forecast_reads_notebook_cells_as_myst_nb_numbers_them() -> None:
    notebook = _notebook(("markdown", "# Title\n", []), ("code", "x = 1\n", []), ("markdown", "", []),
                         ("markdown", EXAMPLE_CELL.replace("f32[8]", "f32[4]"), ["remove-cell"]),
                         ("markdown", EXAMPLE_CELL, []))
    found = find_notebook_examples(notebook["cells"])
    # the fifth cell's fence is its third line; MyST-NB numbers that cell's lines from 50001
    assert [(f.line, f.options["args"]) for f in found] == [(50004, "f32[8]")]
    assert cell_and_line(50004) == (5, 3) and cell_and_line(42) is None
    # a notebook read from text (MyST-NB's source_map): its cells start at real lines
    assert [f.line for f in find_notebook_examples(notebook["cells"], [0, 3, 5, 6, 20])] == [24]


@pytest.mark.slow
def test_a_notebooks_examples_compile_ahead_and_warn_at_their_cell(make_app: Any, tmp_path: Path) -> None:
    pytest.importorskip("myst_nb")
    import json

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_nb", "sphinx_jaxhlo"]\nnb_execution_mode = "off"\n'
                                 'jaxhlo_targets = ["cpu"]\n')
    (src / "index.ipynb").write_text(json.dumps(_notebook(("markdown", "# Notebook\n", []),
                                                          ("code", "x = 1\n", []), ("markdown", EXAMPLE_CELL, []))))
    app = make_app("html", srcdir=src, freshenv=True, confoverrides={"jaxhlo_cache_dir": str(tmp_path / "cache")},
                   parallel=2)
    app.build()
    records = _records(app)
    # compiled by the build's scheduler before the notebook was read, at the line the directive has
    assert [(r.line, r.prefetched, r.origin) for r in records] == [(30004, True, "compiled")], records
    warnings = app.warning.getvalue()
    assert "index.ipynb:cell 3, line 3: WARNING: jax-hlo: f on cpu: expected kernels 7" in warnings, warnings
    assert "30004" not in warnings


# -- limits and retries ----------------------------------------------------------------------

def test_default_limits_fit_the_target_and_the_example() -> None:
    cpu, tpu = Limits.fitting(TARGETS["cpu"], None), Limits.fitting(TARGETS["tpu:v5e"], None)
    assert cpu.first < tpu.first and cpu.retry is not None and cpu.retry > cpu.first
    # an example the cache saw take 200 s gets more than the TPU default
    slow = Limits.fitting(TARGETS["tpu:v5e"], None, observed=200.0)
    assert slow.first > tpu.first and slow.retry is not None and slow.retry > slow.first
    # :timeout: and jaxhlo_timeout are the limit when set: no retry
    assert Limits.fitting(TARGETS["tpu:v5e"], 7.0, observed=200.0) == Limits(7.0, None)


SLOW_UNTIL_MARKED = """\
import os, time
import jax.numpy as jnp

MARK = {mark!r}
if not os.path.exists(MARK):
    open(MARK, "w").close()
    time.sleep(60)

def slow_once(x):
    return jnp.sum(x)
"""


def test_a_timed_out_compile_is_tried_again_with_a_longer_limit(tmp_path: Path) -> None:
    request = CompileRequest(source=SLOW_UNTIL_MARKED.format(mark=str(tmp_path / "mark")), function="slow_once",
                             specs=parse_args("f32[8]"), target="cpu")
    worker = CompileWorker()
    try:
        # a started worker first, so the slow import runs (and marks) within the first limit, not after it
        warm = CompileRequest(source="def f(x):\n    return x\n", function="f", specs=parse_args("f32[8]"),
                              target="cpu")
        assert worker.compile(warm, 120.0).failure is None
        outcome = worker.compile_within(request, Limits(2.0, 180.0), "slow_once for cpu")
        assert (tmp_path / "mark").exists()
        assert outcome.failure is None and outcome.report is not None, outcome.failure
        assert worker.started == 2  # the first worker was stopped, a fresh one compiled it
        assert outcome.seconds < 60  # the fresh worker did not wait out the first one's sleep
    finally:
        worker.close()


@pytest.mark.sphinx("html", testroot="workers", freshenv=True)
def test_timeout_warning_names_function_target_and_seconds(app: Any) -> None:
    app.build()
    warnings = app.warning.getvalue()
    assert "compiling f for cpu took longer than 3 s; the worker was stopped" in warnings, warnings
