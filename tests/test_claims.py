"""Claims stay enforced: a failing expectation fails every build, full or incremental,
whether its report was compiled, cached or read from a snapshot; rebuilds see no
changed configuration; a new toolchain reads the examples again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = """Claims
======

Prose.

.. jax-hlo::
   :args: f32[64,8], f32[8]
   :expect-max-temp: {limit}

   import jax.numpy as jnp

   def first(a, b):
       return jnp.sum(jnp.cos(a @ b))

.. jax-hlo::
   :args: f32[nope]

   def broken(x):
       return x
"""

OTHER = """Other
=====

.. jax-hlo::
   :args: f32[16]

   import jax.numpy as jnp

   def third(x):
       return jnp.sum(jnp.exp(x))
"""


def write_project(src: Path, limit: str = "10B", extra_conf: str = "") -> None:
    src.mkdir(parents=True, exist_ok=True)
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n' + extra_conf)
    (src / "index.rst").write_text(PAGE.format(limit=limit) + "\n.. toctree::\n\n   other\n")
    (src / "other.rst").write_text(OTHER)


def sphinx(src: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    # --no-color: a CI that forces colour (FORCE_COLOR) must not change the log's lines
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--no-color",
           "-d", str(out.parent / (out.name + "-doctrees")), *args, str(src), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout + proc.stderr


def claim_warnings(log: str) -> list[str]:
    return sorted(re.sub(r"^.*?(index|other)\.rst", r"\1.rst", ln) for ln in log.splitlines() if "WARNING" in ln)


EXPECTED = [
    "index.rst:15: WARNING: jax-hlo: :args: dimension 'nope'",
    "index.rst:6: WARNING: jax-hlo: first on cpu: expected max temp 10B, found temp",
]


def assert_claims(log: str) -> None:
    ws = claim_warnings(log)
    assert len(ws) == 2, log
    assert ws[0].startswith(EXPECTED[0]) and ws[0].endswith("[jaxhlo.args]"), ws
    assert ws[1].startswith(EXPECTED[1]) and ws[1].endswith("[FAILED] [jaxhlo.expectation]"), ws


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_failed_claim_fails_every_build_until_it_is_fixed(tmp_path: Path, jobs: str) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    write_project(src)
    rc, first = sphinx(src, out, "-j", jobs)
    assert rc == 1, first
    assert_claims(first)
    for _ in range(2):  # the second and third builds read nothing again
        rc, log = sphinx(src, out, "-j", jobs)
        assert "0 added, 0 changed, 0 removed" in log, log
        assert rc == 1, log
        assert claim_warnings(log) == claim_warnings(first)
        assert "The configuration has changed" not in log and "[config changed" not in log, log
    # prose edited in another document: still reported, from the stored warnings
    (src / "other.rst").write_text(OTHER + "\nMore prose.\n")
    rc, log = sphinx(src, out, "-j", jobs)
    assert rc == 1 and claim_warnings(log) == claim_warnings(first), log
    # the claim fixed: the warning is gone at once
    (src / "index.rst").write_text(PAGE.format(limit="100MB").replace("f32[nope]", "f32[3]")
                                   + "\n.. toctree::\n\n   other\n")
    rc, log = sphinx(src, out, "-j", jobs)
    assert rc == 0 and claim_warnings(log) == [], log
    rc, log = sphinx(src, out, "-j", jobs)
    assert rc == 0 and claim_warnings(log) == [], log


def test_a_claim_checked_on_a_cached_or_stored_report_fails_too(tmp_path: Path) -> None:
    src = tmp_path / "src"
    write_project(src, extra_conf='jaxhlo_snapshot_dir = "_snapshots"\n')
    cache = f"jaxhlo_cache_dir={tmp_path / 'cache'}"
    rc, log = sphinx(src, tmp_path / "out1", "-D", cache)
    assert rc == 1 and "jax-hlo: 2 compiled" in log, log
    # a fresh environment, the report from the cache (snapshots off for this build)
    rc, log = sphinx(src, tmp_path / "out2", "-D", cache, "-D", "jaxhlo_snapshot_dir=")
    assert rc == 1 and "0 compiled, 2 from cache" in log, log
    assert_claims(log)
    rc, log = sphinx(src, tmp_path / "out2", "-D", cache, "-D", "jaxhlo_snapshot_dir=")
    assert rc == 1 and "0 added, 0 changed, 0 removed" in log, log
    assert_claims(log)
    # a fresh environment on a host that only has the snapshots
    for _ in range(2):
        rc, log = sphinx(src, tmp_path / "out3", env={"JAXHLO_SNAPSHOT_MODE": "use"})
        assert rc == 1, log
        assert_claims(log)
    assert "from snapshots" not in log  # the second build read nothing again and still failed


def test_a_new_toolchain_reads_the_examples_again(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    write_project(src, limit="100MB")
    (src / "index.rst").write_text((src / "index.rst").read_text().replace("f32[nope]", "f32[3]"))
    rc, log = sphinx(src, out)
    assert rc == 0, log
    rc, log = sphinx(src, out)
    assert "0 added, 0 changed, 0 removed" in log
    # XLA_FLAGS reach the compiler, like a new jax: every document with examples is read again, and recompiled
    rc, log = sphinx(src, out, env={"XLA_FLAGS": "--xla_dump_hlo_as_text"})
    assert rc == 0, log
    assert "0 added, 2 changed, 0 removed" in log and "jax-hlo: 3 compiled" in log, log
