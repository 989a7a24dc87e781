"""Compile workers: timeouts, crashes, isolation between examples."""

from __future__ import annotations

import os
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


#: Run in a fresh interpreter (a deadlock must end in a timeout, not hang the suite): a thread
#: of this package holds a lock, or is importing a module, while the main thread forks.
_FORK_SCRIPT = r'''
import os, sys, threading, time
sys.path.insert(0, sys.argv[1])
from sphinx_jaxhlo.compiler.client import FORK_GATE

def fork_and_check(child) -> bool:
    pid = os.fork()
    if pid == 0:
        os._exit(0 if child() else 1)
    return os.waitpid(pid, 0)[1] == 0

# 1. a lock held while working: the fork waits until it is released, the child can take it
lock, entered = threading.Lock(), threading.Event()
def works():
    with FORK_GATE.working(), lock:
        entered.set()
        time.sleep(0.3)
t = threading.Thread(target=works)
t.start()
entered.wait()
print("lock", fork_and_check(lambda: lock.acquire(timeout=5)))
t.join()

# 2. a module being imported while working (the -j hang of issue 30): the child imports it too
entered.clear()
def imports():
    with FORK_GATE.working():
        entered.set()
        import slow_module  # noqa: F401
t = threading.Thread(target=imports)
t.start()
entered.wait()
time.sleep(0.05)  # the import is under way
def child_imports():
    done = threading.Event()
    def run():
        import slow_module  # noqa: F401
        done.set()
    threading.Thread(target=run, daemon=True).start()
    return done.wait(5)
print("import", fork_and_check(child_imports))
t.join()

# 3. a thread waiting for its worker lets the process fork meanwhile
release = threading.Event()
def waits():
    with FORK_GATE.working(), FORK_GATE.waiting():
        release.wait()
t = threading.Thread(target=waits)
t.start()
time.sleep(0.05)
print("waiting", fork_and_check(lambda: True))
release.set()
t.join()
'''


def test_no_fork_happens_while_a_thread_of_ours_works(tmp_path: Path) -> None:
    """Sphinx forks ``-j`` readers while the scheduler's lanes run: a child must
    inherit no lock a lane holds (the import lock of a module a lane was
    importing hung forked readers), and a lane waiting for its worker must not
    hold forks up."""
    import subprocess
    import sys

    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(0.5)\n")
    script = tmp_path / "fork.py"
    script.write_text(_FORK_SCRIPT)
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(script), str(repo)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.stdout.split("\n")[:3] == ["lock True", "import True", "waiting True"], proc.stdout + proc.stderr
