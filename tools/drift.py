"""Compile the guide with the installed jax into a snapshot folder of its own (``nox -s drift``).

Run in an environment with an older jax and its compilers
(``python -m sphinx_jaxhlo compilers install``)::

    python tools/drift.py [--out docs/_drift/jax-<version>]

It builds a small Sphinx project made of the docs' ``conf.py`` and the guide
(``docs/guide``, ``docs/examples``), every example compiled afresh
(``JAXHLO_SNAPSHOT_MODE=refresh``), and writes the snapshots into ``--out``
(default: ``docs/_drift/jax-<the installed version>``).  Commit that folder;
the drift page (docs/drift.md) compares it with ``docs/_snapshots`` when the
docs build, without this jax.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: What the guide's pages read besides themselves.
LINKED = ("guide", "examples", "_ext", "_inventories")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the snapshot folder to write (replaced)")
    parser.add_argument("--under", default="guide", help="the docs folder to compile (default: %(default)s)")
    opts = parser.parse_args(argv)
    version = importlib.metadata.version("jax")
    out = (opts.out or DOCS / "_drift" / f"jax-{version}").resolve()
    with tempfile.TemporaryDirectory(prefix="jaxhlo-drift-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        shutil.copy(DOCS / "conf.py", src / "conf.py")
        for name in LINKED:  # copies: the directive reads no file outside the source folder
            shutil.copytree(DOCS / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        (src / "index.md").write_text(f"# The guide, compiled with jax {version}\n\n```{{toctree}}\n"
                                      f"{opts.under}/index\n```\n", encoding="utf-8")
        staging = Path(tmp) / "snapshots"
        command = [sys.executable, "-m", "sphinx", "-b", "html", str(src), str(Path(tmp) / "html"), "-E", "-q",
                   "--keep-going", "-D", "html_theme=alabaster", "-D", f"jaxhlo_snapshot_dir={staging}",
                   "-D", "jaxhlo_cache=0"]
        env = {**os.environ, "JAXHLO_SNAPSHOT_MODE": "refresh"}
        start = time.perf_counter()
        print(f"compiling {opts.under} with jax {version} ...", flush=True)
        run = subprocess.run(command, env=env, check=False)
        seconds = time.perf_counter() - start
        written = sorted(staging.rglob("*.json"))
        print(f"{len(written)} snapshots in {seconds:.0f} s (sphinx exit status {run.returncode})", flush=True)
        if not written:
            return 1
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(staging / opts.under, out / opts.under)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
