"""A build that reads its examples' HTML from a filled cache indexes the same words
for the search as the build that filled it: the code that ``:grad:`` generates
stays out of the index both ways (it is the package's code, not the reader's)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PAGE = textwrap.dedent("""\
    Gradients
    =========

    .. jax-hlo::
       :args: f32[16,3], f32[8,3]
       :grad: hkl

       import jax, jax.numpy as jnp

       def with_dot(pos, hkl):
           return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)
    """)


def sphinx(src: Path, out: Path, cache: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-b", "html", "-d", str(out / "doctrees"),
                           "-D", f"jaxhlo_cache_dir={cache}", str(src), str(out / "html")],
                          capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in log, log


def test_a_cached_build_indexes_what_the_build_without_the_cache_did(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n')
    (src / "index.rst").write_text(PAGE)
    cache = tmp_path / "cache"
    sphinx(src, tmp_path / "filling", cache)  # compiles, and keeps each example's HTML in the cache
    sphinx(src, tmp_path / "reading", cache)  # takes that HTML back
    filling = (tmp_path / "filling" / "html" / "searchindex.js").read_text()
    reading = (tmp_path / "reading" / "html" / "searchindex.js").read_text()
    page = (tmp_path / "filling" / "html" / "index.html").read_text()
    assert "with_dot_grad" in page  # the generated code is on the page, folded
    assert (tmp_path / "reading" / "html" / "index.html").read_text() == page
    # the reader's code is searchable both ways; the generated code's names neither way
    assert '"with_dot"' in filling or "with_dot" in filling
    assert "grad_hkl" not in filling
    assert reading == filling
