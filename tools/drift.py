"""Compile the docs' examples with the installed jax into a snapshot folder of its own (``nox -s drift``).

Run in an environment with an older jax and its compilers
(``python -m sphinx_jaxhlo compilers install``)::

    python tools/drift.py [--out docs/_drift/jax-<version>] [--page guide/seed ...] [--resume]
                          [--targets cpu,gpu:h100]

Each page that has snapshots in ``docs/_snapshots`` is built on its own, the
smallest first: a Sphinx build of a copy of the docs (without the committed
snapshots and the build folder) whose root is that page and which reads no
other, every example compiled afresh (``JAXHLO_SNAPSHOT_MODE=refresh``).  As
each page's build ends, its snapshots replace that page's folder in ``--out``
(default: ``docs/_drift/jax-<the installed version>``), so a run stopped half
way leaves whole pages behind (the others keep what an earlier run wrote;
``pages.txt`` in ``--out`` lists those it finished), and ``--resume`` goes on
with the pages not finished yet.  The compiles are kept in a report cache of their own
(``--cache``), so a page whose build was stopped compiles only what it had
not.  A compile that fails is a snapshot too (its error recorded): the drift
page names what the release could not compile and why.  Commit the folder;
the drift page (docs/drift.md) compares it with ``docs/_snapshots`` when the
docs build, without this jax.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CURRENT = DOCS / "_snapshots"
#: What the copy of the docs leaves out: the current release's snapshots, the older
#: releases' (the drift page then warns that it has none), the build.
LEFT_OUT = ("_build", "_snapshots", "_drift", "__pycache__", "jupyter_execute")
#: The pages a whole run (not a ``--targets`` pass) finished, one a line, beside the snapshots.
DONE = "pages.txt"
#: The docs' own exclude_patterns (conf.py), kept when a page's build excludes the other pages.
EXCLUDED = ("_build", "examples/README.md")


def pages() -> list[str]:
    """The documents that have snapshots, the fewest first (their folders in ``docs/_snapshots``)."""
    counts: dict[str, int] = {}
    for path in CURRENT.rglob("*.json"):
        docname = path.parent.relative_to(CURRENT).as_posix()
        counts[docname] = counts.get(docname, 0) + 1
    return sorted(counts, key=lambda name: (counts[name], name))


def sources(src: Path) -> list[str]:
    """Every page of the copy, as a path relative to it."""
    return sorted(p.relative_to(src).as_posix() for p in src.rglob("*.md")
                  if not any(part in LEFT_OUT for part in p.relative_to(src).parts))


def build_page(src: Path, docname: str, staging: Path, cache: Path, work: Path,
               targets: str = "") -> tuple[int, int, float, float]:
    """Build one page of the copy; its snapshots land in ``staging/<docname>``.

    :return: the snapshots written, how many of them hold a failed compile, the seconds it took
        and the CPU seconds it used (Sphinx and its compile workers).
    """
    others = [p for p in sources(src) if p.removesuffix(".md") != docname]
    command = [sys.executable, "-m", "sphinx", "-b", "html", str(src), str(work / "html"), "-E", "-q",
               "--keep-going", "-D", "html_theme=alabaster", "-D", f"root_doc={docname}",
               "-D", f"exclude_patterns={','.join((*EXCLUDED, *others))}",
               "-D", f"jaxhlo_snapshot_dir={staging}", "-D", f"jaxhlo_cache_dir={cache}",
               # what a page built alone cannot resolve (links to the other pages, the docs' theme options)
               "-D", "suppress_warnings=ref,toc,config"]
    if targets:
        command += ["-D", f"jaxhlo_targets={targets}"]
    env = {**os.environ, "JAXHLO_SNAPSHOT_MODE": "refresh"}
    start, cpu = time.perf_counter(), _children_cpu()
    subprocess.run(command, env=env, check=False)
    seconds = time.perf_counter() - start
    written = sorted((staging / docname).glob("*.json"))
    failed = sum(json.loads(path.read_text(encoding="utf-8"))["facts"].get("error") is not None for path in written)
    return len(written), failed, seconds, _children_cpu() - cpu


def _children_cpu() -> float:
    """CPU seconds of this process's ended children and theirs (the compile workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def prune(out: Path) -> int:
    """Remove from ``out`` the slots the docs no longer have (no snapshot in ``docs/_snapshots``):
    examples since removed or renamed, and the sizes only an earlier run's bisection probed,
    whose older figures nothing compares (the run writes its own probes again).

    :return: how many slots went.
    """
    gone = 0
    for path in sorted(out.rglob("*.json")):
        rel = path.relative_to(out)
        if not (CURRENT / rel).exists():
            slot = path.name.removesuffix(".json")
            for file in path.parent.glob(f"{slot}.*"):
                file.unlink()
            gone += 1
    for folder in sorted({p for p in out.rglob("*") if p.is_dir()}, reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return gone


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the snapshot folder to write (page by page)")
    parser.add_argument("--page", action="append", default=[],
                        help="only this page (e.g. guide/seed; repeatable); default: every page with snapshots")
    parser.add_argument("--resume", action="store_true", help="build only the pages --out/pages.txt does not list")
    parser.add_argument("--targets", default="",
                        help="the default targets of the examples that name none, e.g. cpu,gpu:h100 "
                             "(default: conf.py's): a first pass without the slow TPU compiles, the cache "
                             "keeping them for the whole run that follows")
    parser.add_argument("--cache", type=Path,
                        help="the report cache of the compiles (default: ~/.cache/sphinx-jaxhlo/drift/jax-<version>)")
    opts = parser.parse_args(argv)
    version = importlib.metadata.version("jax")
    out = (opts.out or DOCS / "_drift" / f"jax-{version}").resolve()
    cache = (opts.cache or Path.home() / ".cache" / "sphinx-jaxhlo" / "drift" / f"jax-{version}").resolve()
    todo = opts.page or pages()
    done = out / DONE
    # a whole run starts the list again; --resume and --page add to it
    finished = set(done.read_text(encoding="utf-8").split()) if done.exists() and (opts.resume or opts.page) else set()
    if done.exists():
        done.write_text("".join(f"{name}\n" for name in sorted(finished)), encoding="utf-8")
    if opts.resume:
        todo = [name for name in todo if name not in finished]
    prune(out)
    total = time.perf_counter()
    made = 0
    with tempfile.TemporaryDirectory(prefix="jaxhlo-drift-") as tmp:
        src = Path(tmp) / "src"
        # a copy: the build writes nothing into the docs, and a directive reads no file outside its source folder
        shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns(*LEFT_OUT))
        print(f"compiling {len(todo)} pages with jax {version} ...", flush=True)
        for i, docname in enumerate(todo, 1):
            staging, work = Path(tmp) / "snapshots", Path(tmp) / "work"
            for folder in (staging, work):
                shutil.rmtree(folder, ignore_errors=True)
            count, failed, seconds, cpu = build_page(src, docname, staging, cache, work, opts.targets)
            print(f"[{i}/{len(todo)}] {docname}: {count} snapshots ({failed} of a failed compile) "
                  f"in {seconds:.0f} s, {cpu:.0f} s of CPU", flush=True)
            if count and opts.targets:  # a first pass: its slots replace theirs, the other targets' stay
                for path in sorted((staging / docname).glob("*.json")):
                    slot = path.name.removesuffix(".json")
                    for old in (out / docname).glob(f"{slot}.*"):
                        old.unlink()
                shutil.copytree(staging / docname, out / docname, dirs_exist_ok=True)
            elif count:
                shutil.rmtree(out / docname, ignore_errors=True)
                shutil.copytree(staging / docname, out / docname)
                finished.add(docname)
                done.write_text("".join(f"{name}\n" for name in sorted(finished)), encoding="utf-8")
            made += count
    print(f"wrote {made} snapshots into {out} in {time.perf_counter() - total:.0f} s, "
          f"{_children_cpu():.0f} s of CPU")
    return 0 if made else 1


if __name__ == "__main__":
    sys.exit(main())
