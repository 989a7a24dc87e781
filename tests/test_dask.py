"""The Dask executor: compiles sent to the worker processes of a cluster give the pages a local build gives."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from sphinx_jaxhlo.compiler.executors import DaskExecutor
from sphinx_jaxhlo.sphinxext.state import build_state, document_data

distributed = pytest.importorskip("distributed")


def _pages(outdir: Path) -> dict[str, bytes]:
    """Every page and module text of a build, by path."""
    return {str(p.relative_to(outdir)): p.read_bytes() for p in sorted(outdir.rglob("*"))
            if p.is_file() and (p.suffix in (".html", ".txt")) and "_sources" not in p.parts}


def test_a_cluster_build_gives_the_pages_of_a_local_build(make_app: Any, rootdir: Path, tmp_path: Path) -> None:
    outputs = {}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  scheduler_port=0) as cluster, distributed.Client(cluster) as client:
        for how, executor in (("local", None), ("dask", client)):
            src = tmp_path / how / "src"
            shutil.copytree(rootdir / "test-schedule", src)
            overrides: dict[str, Any] = {"jaxhlo_cache_dir": str(tmp_path / how / "cache")}
            if executor is not None:
                overrides["jaxhlo_executor"] = executor
            app = make_app("html", srcdir=src, freshenv=True, confoverrides=overrides)
            app.build()
            assert "jax-hlo:" not in app.warning.getvalue(), app.warning.getvalue()
            records = document_data(app.env).all_records()
            assert len(records) == 6 and all(r.origin == "compiled" and r.prefetched for r in records)
            last = build_state(app).last_scheduler
            assert last is not None
            assert isinstance(last.executor, DaskExecutor) == (executor is not None)
            # the cache is filled where jaxhlo_cache_dir says, whichever machine compiled
            assert len(list((tmp_path / how / "cache").glob("??/*.json"))) == 6
            outputs[how] = _pages(Path(app.outdir))
    assert outputs["local"].keys() == outputs["dask"].keys() and outputs["local"]
    different = [name for name in outputs["local"] if outputs["local"][name] != outputs["dask"][name]]
    assert not different, different


def test_executor_settings_are_checked() -> None:
    from sphinx_jaxhlo.core.settings import executor_problem

    assert executor_problem("dask://scheduler:8786") is None
    assert executor_problem(None) is None
    assert "jaxhlo_executor must be" in (executor_problem("tcp://x:1") or "")
    assert "jaxhlo_executor must be" in (executor_problem(42) or "")
