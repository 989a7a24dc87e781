"""JAX's own docs pages, built cold, alone and with ``jax-hlo`` examples added: what the extension
costs a JAX docs build.

Takes JAX's ``docs/`` folder (a JAX clone's, or extracted from a git directory such as the one the
``fetch`` tool leaves), copies its ``conf.py``, ``sphinxext/``, ``_static/`` and ``_templates/`` and four
of its pages (gradient-checkpointing, jit-compilation, aot and the autodiff cookbook) into a temporary
project with an index of its own, and trims JAX's ``conf.py`` only where it cannot build offline here:
no intersphinx inventories fetched, extensions that are not installed left out (each trim is listed in
the results).  Notebooks are executed as JAX's ``conf.py`` says (``nb_execution_mode``), unless
``--no-execute``.

Then it builds the project cold (a fresh output folder each time) with JAX's command line
(``sphinx-build -b html -j auto``) under JAX's pins (``--python``: by default the ``jaxdocs`` nox
session's environment), alternating:

(i)  JAX alone: the pages as they are;
(ii) with ``sphinx_jaxhlo`` in ``extensions`` and one ``jax-hlo`` example appended to each page
     (:data:`EXAMPLES`), for a CPU, an H100 and a TPU v5e, shown from the snapshots committed in
     ``benchmarks/data/jax_pages_snapshots`` (``JAXHLO_SNAPSHOT_MODE=use``: nothing compiles, as on a
     docs host).

It reports the median of each, their ratio and the extra seconds (of the wall clock, and of the
processor time the builds used, the steadier figure on a busy machine), plus the fixed cost of the
extension (an empty page built with and without it) and whether the docs build imported jax in
Sphinx's own process; it writes them to ``benchmarks/jax_pages_results.json``.

    python benchmarks/jax_pages.py --jax-git-dir /path/to/jax/.git
    python benchmarks/jax_pages.py --jax-docs /path/to/jax/docs --reps 5 --no-execute

``--write-snapshots`` compiles the examples once and writes their snapshots (needs the GPU and TPU
compilers: ``python -m sphinx_jaxhlo compilers install``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SNAPSHOTS = REPO / "benchmarks" / "data" / "jax_pages_snapshots"
RESULTS = REPO / "benchmarks" / "jax_pages_results.json"
JAXDOCS_PYTHON = Path("/work/main/.nox/jaxdocs/bin/python")
TARGETS = ["cpu", "gpu:h100", "tpu:v5e"]

#: JAX's pages built, relative to its docs folder.
PAGES = ("gradient-checkpointing.md", "jit-compilation.md", "aot.md", "notebooks/autodiff_cookbook.ipynb")

#: The example appended to each page (our own words and code), as MyST text.
EXAMPLES: dict[str, str] = {
    "gradient-checkpointing.md": """
        ## What each variant keeps, as XLA compiles it

        The gradient of a two-layer network, once as it is and once with its first layer
        wrapped in `jax.checkpoint`: the report shows how much memory each program holds.

        ```{jax-hlo}
        :args: f32[512,1024], f32[1024,512], f32[256,512]
        :function: grad_kept, grad_recomputed
        :show: summary, memory
        :caption: A two-layer gradient, with and without jax.checkpoint

        import jax
        import jax.numpy as jnp

        def layer(w, x):
            return jnp.sin(x @ w)

        def net(w1, w2, x, first=layer):
            return jnp.sum(layer(w2, first(w1, x)))

        def grad_kept(w1, w2, x):
            return jax.grad(net, argnums=(0, 1))(w1, w2, x)

        def grad_recomputed(w1, w2, x):
            return jax.grad(net, argnums=(0, 1))(w1, w2, x, jax.checkpoint(layer))
        ```
        """,
    "jit-compilation.md": """
        ## The compiled `selu`

        What XLA makes of the `selu` above for three targets, read from the compiler without
        running anything:

        ```{jax-hlo}
        :args: f32[1000000]
        :function: selu
        :caption: selu, compiled for a CPU, an H100 and a TPU v5e

        import jax.numpy as jnp

        def selu(x, alpha=1.67, lmbda=1.05):
            return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
        ```
        """,
    "aot.md": """
        ## Reading the compiled program

        The `compiled` object above can be read without running it; here is the same kind of
        reading for a small product and its activation:

        ```{jax-hlo}
        :args: f32[1024,512], f32[512,256]
        :function: dense
        :caption: A dense layer compiled ahead of time

        import jax.numpy as jnp

        def dense(x, w):
            return jnp.tanh(x @ w) + 1.0
        ```
        """,
    "notebooks/autodiff_cookbook.ipynb": """
        ## Forward or reverse: the compiled Jacobians

        For a map from 128 inputs to 256 outputs, both ways of building its Jacobian, as XLA
        compiles them:

        ```{jax-hlo}
        :args: f32[256,128], f32[128]
        :function: jac_forward, jac_reverse
        :caption: jacfwd and jacrev of the same function

        import jax
        import jax.numpy as jnp

        def f(w, x):
            return jnp.tanh(w @ x)

        def jac_forward(w, x):
            return jax.jacfwd(f, argnums=1)(w, x)

        def jac_reverse(w, x):
            return jax.jacrev(f, argnums=1)(w, x)
        ```
        """,
}

INDEX = """\
JAX pages
=========

.. toctree::
   :maxdepth: 1

{pages}
"""


def extract_docs(git_dir: Path, dest: Path) -> Path:
    """JAX's ``docs/`` folder at ``HEAD`` of ``git_dir``, extracted into ``dest``; returns it."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "HEAD", "docs"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "docs"


def installed(python: str, module: str) -> bool:
    code = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", code], capture_output=True).returncode == 0


def trim_conf(text: str, python: str, execute: bool) -> tuple[str, list[str]]:
    """JAX's conf.py, trimmed only to build offline here; returns it and what was trimmed."""
    trims: list[str] = []

    def cut(pattern: str, replacement: str, why: str) -> None:
        nonlocal text
        new, count = re.subn(pattern, replacement, text, flags=re.M)
        if count == 0:
            raise SystemExit(f"JAX's conf.py changed: {why!r} no longer applies ({pattern!r})")
        text = new
        trims.append(why)

    cut(r"^\s*'sphinx\.ext\.intersphinx',\n", "", "sphinx.ext.intersphinx left out (no network)")
    cut(r"^for name, \(url, \(inv_path, _\)\) in intersphinx_mapping\.items\(\):",
        "for name, (url, (inv_path, _)) in {}.items():", "no intersphinx inventory downloaded")
    for module, entry in (("matplotlib", "matplotlib.sphinxext.plot_directive"),):
        if not installed(python, module):
            cut(rf"^\s*'{re.escape(entry)}',\n", "", f"{entry} left out ({module} is not installed)")
    if not installed(python, "portpicker"):
        cut(r"^from jupyter_client\.provisioning import KernelProvisionerFactory\n(.*\n)*"
            r"KernelProvisionerFactory\.default_provisioner_name = .*\n?", "",
            "the portpicker kernel provisioner left out (portpicker is not installed)")
    text += "\nrediraffe_redirects = {}\n"
    trims.append("JAX's redirects left out (their pages are not built)")
    if not execute:
        text += '\nnb_execution_mode = "off"\n'
        trims.append("notebooks not executed (--no-execute)")
    return text, trims


def make_project(docs: Path, root: Path, python: str, execute: bool, with_jaxhlo: bool) -> tuple[Path, list[str]]:
    """A project of JAX's :data:`PAGES` under ``root/src``; with ``with_jaxhlo`` the extension is on
    and each page ends with its example."""
    src = root / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for folder in ("sphinxext", "_static", "_templates"):
        if (docs / folder).is_dir():
            shutil.copytree(docs / folder, src / folder)
    conf, trims = trim_conf((docs / "conf.py").read_text(encoding="utf-8"), python, execute)
    if with_jaxhlo:
        conf += textwrap.dedent(f"""
            # added by benchmarks/jax_pages.py
            extensions.append("sphinx_jaxhlo")
            jaxhlo_targets = {TARGETS!r}
            jaxhlo_snapshot_dir = {str(SNAPSHOTS)!r}
            """)
    (src / "conf.py").write_text(conf, encoding="utf-8")
    for page in PAGES:
        target = src / page
        target.parent.mkdir(parents=True, exist_ok=True)
        text = (docs / page).read_text(encoding="utf-8")
        if with_jaxhlo:
            added = textwrap.dedent(EXAMPLES[page]).strip("\n") + "\n"
            if page.endswith(".ipynb"):
                notebook = json.loads(text)
                notebook["cells"].append({"cell_type": "markdown", "metadata": {},
                                          "source": added.splitlines(keepends=True)})
                text = json.dumps(notebook, indent=1)
            else:
                text = text.rstrip("\n") + "\n\n" + added
        target.write_text(text, encoding="utf-8")
    names = "\n".join(f"   {page.rsplit('.', 1)[0]}" for page in PAGES)
    (src / "index.rst").write_text(INDEX.format(pages=names), encoding="utf-8")
    return src, trims


def build(python: str, src: Path, out: Path, env: dict[str, str], jobs: str = "auto") -> dict[str, Any]:
    """One cold build in a fresh process: seconds, warnings, whether Sphinx's process imported jax."""
    if out.exists():
        shutil.rmtree(out)
    probe = out.parent / f"{out.name}-modules.txt"
    # Sphinx's own process writes whether jax was imported once the build ends (build-finished)
    runner = textwrap.dedent(f"""
        import sys, atexit
        def _report():
            open({str(probe)!r}, "w").write("jax" if "jax" in sys.modules else "")
        atexit.register(_report)
        from sphinx.cmd.build import main
        sys.exit(main(sys.argv[1:]))
        """)
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([python, "-c", runner, "-b", "html", "-j", jobs, "-q", str(src), str(out),
                           "-d", str(out / ".doctrees")], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the processor time of the build and the processes it waited for (its -j workers): what a
    # busy machine changes least
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"the build of {src} failed:\n{done.stderr[-4000:]}")
    warnings = [line.replace(str(src), "") for line in done.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    jax_imported = probe.read_text() == "jax" if probe.exists() else None
    return {"seconds": round(seconds, 3), "cpu_s": round(cpu, 3), "warnings": warnings,
            "jax_in_sphinx_process": jax_imported}


def fixed_cost(python: str, root: Path, env: dict[str, str], reps: int) -> dict[str, Any]:
    """An empty one-page project built with and without the extension (what it adds before any page)."""
    times: dict[str, list[float]] = {"alone": [], "with": []}
    cpu: dict[str, list[float]] = {"alone": [], "with": []}
    for variant in ("alone", "with"):
        src = root / f"empty-{variant}"
        src.mkdir(parents=True, exist_ok=True)
        exts = '["sphinx_jaxhlo"]' if variant == "with" else "[]"
        (src / "conf.py").write_text(f"extensions = {exts}\njaxhlo_targets = {TARGETS!r}\n")
        (src / "index.rst").write_text("Empty\n=====\n\nNothing here.\n")
    for _ in range(reps):
        for variant in ("alone", "with"):
            result = build(python, root / f"empty-{variant}", root / f"empty-{variant}-out", env, jobs="1")
            times[variant].append(result["seconds"])
            cpu[variant].append(result["cpu_s"])
    alone, with_ = statistics.median(times["alone"]), statistics.median(times["with"])
    extra_cpu = statistics.median(cpu["with"]) - statistics.median(cpu["alone"])
    return {"alone_s": alone, "with_s": with_, "extra_s": round(with_ - alone, 3),
            "extra_cpu_s": round(extra_cpu, 3), "runs": times, "cpu_runs": cpu}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--jax-git-dir", type=Path, help="a git directory of JAX (its docs/ at HEAD)")
    where.add_argument("--jax-docs", type=Path, help="JAX's docs/ folder")
    parser.add_argument("--python", default=str(JAXDOCS_PYTHON) if JAXDOCS_PYTHON.exists() else sys.executable,
                        help="the Python of an environment with JAX's docs pins (default: the jaxdocs nox session's)")
    parser.add_argument("--reps", type=int, default=3, help="measured builds of each variant (after one warm-up pair)")
    parser.add_argument("--no-execute", action="store_true", help="do not execute the notebooks")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="compile every module from source in each build (PYTHONDONTWRITEBYTECODE=1), "
                             "not from bytecode as pip installs it")
    parser.add_argument("--write-snapshots", action="store_true",
                        help="compile the examples once and write their snapshots, then stop")
    parser.add_argument("--label", default="", help="a word saying what this measurement is (kept in the results)")
    parser.add_argument("--site", type=Path, help="build the pages with their examples once into SITE/html "
                        "(from the snapshots), to look at in a browser, then stop")
    parser.add_argument("--output", type=Path, default=RESULTS)
    options = parser.parse_args(argv)
    python = options.python
    execute = not options.no_execute
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONHASHSEED"] = "0"
    with tempfile.TemporaryDirectory(prefix="jax-pages-") as tmp_name:
        tmp = Path(tmp_name)
        if options.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            # the modules' bytecode, as pip leaves it beside an install, written by the warm-up builds
            # into a folder of this run's (the environment and the clone are left as they are)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        docs = options.jax_docs or extract_docs(options.jax_git_dir, tmp / "jax")
        alone_src, trims = make_project(docs, tmp / "alone", python, execute, with_jaxhlo=False)
        with_src, _ = make_project(docs, tmp / "with", python, execute, with_jaxhlo=True)
        if options.write_snapshots:
            SNAPSHOTS.mkdir(parents=True, exist_ok=True)
            env.pop("JAXHLO_SNAPSHOT_MODE", None)
            result = build(python, with_src, tmp / "with" / "out", env)
            print(f"snapshots written to {SNAPSHOTS} in {result['seconds']} s; warnings: {result['warnings']}")
            return
        env["JAXHLO_SNAPSHOT_MODE"] = "use"
        if options.site:
            shutil.rmtree(options.site / "src", ignore_errors=True)
            shutil.copytree(with_src, options.site / "src")
            result = build(python, options.site / "src", options.site / "html", env)
            print(f"{options.site / 'html'} built in {result['seconds']} s; {len(result['warnings'])} warnings")
            return
        version = subprocess.run([python, "-c", "import sphinx, myst_nb, jax, sphinx_jaxhlo; print(sphinx.__version__,"
                                  " myst_nb.__version__, jax.__version__, sphinx_jaxhlo.__file__)"],
                                 capture_output=True, text=True, env=env, check=True).stdout.split()
        if not version[3].startswith(str(REPO)):
            raise SystemExit(f"sphinx_jaxhlo comes from {version[3]}, not this clone")
        runs: dict[str, list[dict[str, Any]]] = {"alone": [], "with": []}
        for rep in range(options.reps + 1):  # the first pair warms the disk and the bytecode
            for variant, src in (("alone", alone_src), ("with", with_src)):
                result = build(python, src, src.parent / "out", env)
                print(f"{'warm-up' if rep == 0 else f'rep {rep}'} {variant}: {result['seconds']} s "
                      f"({result['cpu_s']} s of processor time), "
                      f"{len(result['warnings'])} warnings, jax in Sphinx's process: {result['jax_in_sphinx_process']}",
                      flush=True)
                if rep:
                    runs[variant].append(result)
        fixed = fixed_cost(python, tmp / "fixed", env, options.reps)  # after the warm-up: bytecode written
    alone = statistics.median(r["seconds"] for r in runs["alone"])
    with_ = statistics.median(r["seconds"] for r in runs["with"])
    alone_cpu = statistics.median(r["cpu_s"] for r in runs["alone"])
    with_cpu = statistics.median(r["cpu_s"] for r in runs["with"])
    extra_warnings = sorted(set(runs["with"][0]["warnings"]) - set(runs["alone"][0]["warnings"]))
    results = {
        "label": options.label,
        "what": "JAX's docs pages built cold alone and with one jax-hlo example appended to each "
                "(three targets, shown from snapshots): median seconds",
        "pages": list(PAGES), "targets": TARGETS, "executed": execute, "conf_trims": trims,
        "sphinx": version[0], "myst_nb": version[1], "jax": version[2], "command": "sphinx-build -b html -j auto",
        "cpus": os.cpu_count(), "reps": options.reps, "bytecode": not options.no_bytecode,
        "alone_s": alone, "with_s": with_, "ratio": round(with_ / alone, 3), "extra_s": round(with_ - alone, 3),
        # the same of the processor time the builds used: on a busy machine the steadier figure
        "alone_cpu_s": alone_cpu, "with_cpu_s": with_cpu, "cpu_ratio": round(with_cpu / alone_cpu, 3),
        "extra_cpu_s": round(with_cpu - alone_cpu, 3), "load_average": os.getloadavg()[0],
        "warnings_alone": len(runs["alone"][0]["warnings"]), "warnings_added": extra_warnings,
        "jax_in_sphinx_process": {"alone": runs["alone"][0]["jax_in_sphinx_process"],
                                  "with": runs["with"][0]["jax_in_sphinx_process"]},
        "empty_page": fixed,
        "runs": {k: [r["seconds"] for r in v] for k, v in runs.items()},
        "cpu_runs": {k: [r["cpu_s"] for r in v] for k, v in runs.items()},
        "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(json.dumps({k: v for k, v in results.items() if k != "runs"}, indent=1))
    if options.output.exists():
        earlier = json.loads(options.output.read_text())
        earlier = earlier if isinstance(earlier, dict) and "results" in earlier else {"results": []}
    else:
        earlier = {"results": []}
    earlier["results"].append(results)
    options.output.write_text(json.dumps(earlier, indent=1) + "\n")


if __name__ == "__main__":
    main()
