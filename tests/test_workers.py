"""Compile workers: timeouts, crashes, isolation between examples."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from conftest import with_texts


@pytest.mark.sphinx("html", testroot="workers")
def test_stuck_crashed_and_noisy_examples(app: Any) -> None:
    app.build()
    warnings = app.warning.getvalue()
    page = Path(app.outdir) / "index.html"
    soup = with_texts(BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser"), page)
    # a stuck example is stopped at its timeout and reported at its line
    assert re.search(r"index\.rst:7: WARNING: jax-hlo: compiling f for cpu took longer than 3 s.*\[jaxhlo\.timeout\]",
                     warnings)
    # a worker that dies is reported with its signal, and the next example gets a fresh worker
    assert re.search(
        r"index\.rst:20: WARNING: jax-hlo: the compile worker was killed by SIGSEGV.*\[jaxhlo\.crash\]", warnings
    )
    # jax.config changes stay inside their example
    config = soup.find("section", id="config").select("div.jaxhlo")
    assert "f64[3]" in config[0].select_one("details.jaxhlo-lazy").get_text()
    second = config[1].select_one("details.jaxhlo-lazy").get_text()
    assert "f64[3]" not in second and "f32[3]" in second
    # megabytes printed by an example do not reach the build log; files it writes stay out of the source tree
    noise = soup.find("section", id="noise")
    assert "HloModule jit_f" in noise.get_text()
    assert "xxxxxxxxxx" not in warnings and "yyyyyyyyyy" not in warnings
    assert not list(Path(app.srcdir).rglob("written-by-example.txt"))
    assert "After all." in soup.get_text()
    assert warnings.count("[jaxhlo.") == 2, warnings


def test_compile_time_out_of_memory_message_is_parsed() -> None:
    from sphinx_jaxhlo.compiler.compiling import parse_oom

    text = (Path(__file__).parent / "data" / "hlo" / "tpu_v5e__broadcast.error.txt").read_text()
    needed, available = parse_oom(text)
    assert needed is not None and available is not None
    assert (round(needed / 2**30, 2), round(available / 2**30, 2)) == (18.65, 15.75)
    assert parse_oom("RESOURCE_EXHAUSTED: Used 3.5G of 2G hbm") == (round(3.5 * 2**30), 2 * 2**30)


def test_pool_workers_survive_the_threads_that_started_them() -> None:
    from sphinx_jaxhlo.compiler.client import WorkerPool
    from sphinx_jaxhlo.core.request import CompileRequest
    from sphinx_jaxhlo.core.specs import parse_args

    source = "import jax.numpy as jnp\n\ndef f(x):\n    return jnp.sum(jnp.cos(x))\n"
    jobs = [(CompileRequest(source=source, function="f", specs=parse_args(f"f32[{n}]"), target="cpu"), 60.0)
            for n in (8, 16, 32)]
    pool = WorkerPool(2)
    try:
        for _ in range(2):  # the compile threads end between the rounds; the workers must not
            outcomes = pool.compile_all(jobs)
            assert [o.failure for o in outcomes] == [None, None, None]
            assert [o.report.memory.argument_bytes for o in outcomes if o.report] == [32, 64, 128]
        assert [w.started for w in pool.workers] == [1, 1]
    finally:
        pool.close()
