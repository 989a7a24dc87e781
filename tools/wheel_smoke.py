"""The smoke test of an installed sphinx-jaxhlo, run by ``nox -s wheel`` in a clean
environment that holds the built wheel and its dependencies, and nothing of the clone.

    python wheel_smoke.py VERSION FOLDER

1. ``import sphinx_jaxhlo`` finds the installed package (under ``site-packages``), at
   ``VERSION``, with the files it ships besides its modules;
2. :func:`sphinx_jaxhlo.analyze` compiles a function for the ``cpu`` target, and the
   report holds its memory figures (the arguments' and the output's bytes, which follow
   from the shapes), its reduction, and claims checked against it;
3. a two-page Sphinx site written into ``FOLDER`` (a reStructuredText page and a MyST page,
   each with a ``jax-hlo`` example and claims about it) builds with ``-W``, each page holds
   its report with its claims holding, and the same site with a false claim fails its
   build with a ``jaxhlo.expectation`` warning.

Only the ``cpu`` target: no GPU or TPU compiler is needed.  The claims hold whatever the
installed jax decides to fuse (whether the CPU fuses the sum below changed between jax
releases), so the test is of the package, not of a jax release.  It exits 1 with one line
saying what went wrong.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The example of both the analyze() call and the site's first page: a product, a cosine and
#: a sum over f32[500,1000] (2 MB), which jax 0.10 stores on the CPU and jax 0.12 does not.
WITH_DOT = """\
import jax, jax.numpy as jnp

def with_dot(pos, hkl):
    return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)
"""

CONF = """\
project = "smoke"
extensions = ["myst_parser", "sphinx_jaxhlo"]
jaxhlo_targets = ["cpu"]
"""

INDEX = """\
Smoke
=====

.. toctree::

   sums

.. jax-hlo::
   :args: f32[1000,3], f32[500,3]
   :expect-error: none
   {claim}

{source}
"""

SUMS = """\
# Sums

```{jax-hlo}
:args: f32[64,128]
:expect-error: none

import jax.numpy as jnp

def column_norms(x):
    return jnp.sqrt(jnp.sum(x * x, axis=0))
```
"""


class SmokeError(Exception):
    """What the installed package did wrong, in one line."""


def check_install(version: str) -> None:
    import sphinx_jaxhlo

    where = Path(sphinx_jaxhlo.__file__).resolve()
    if "site-packages" not in where.parts:
        raise SmokeError(f"sphinx_jaxhlo was imported from {where}, not from an installed package")
    if sphinx_jaxhlo.__version__ != version:
        raise SmokeError(f"the installed sphinx_jaxhlo is {sphinx_jaxhlo.__version__}, the wheel built {version}")
    for name in ("static/jaxhlo.css", "static/jaxhlo.js", "gpu_targets/h100.txtpb", "bundled/seed.py",
                 "inventory/objects.inv"):
        if not (where.parent / name).is_file():
            raise SmokeError(f"the installed package lacks {name}")
    print(f"sphinx_jaxhlo {version} from {where.parent}")


def check_analyze(folder: Path) -> None:
    import sphinx_jaxhlo

    # analyze() reads the function's source from its file, as a user's function has one
    module = folder / "smoke_example.py"
    module.write_text(WITH_DOT, encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        from smoke_example import with_dot  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(folder))
    reports = sphinx_jaxhlo.analyze(with_dot, "f32[1000,3]", "f32[500,3]", targets=["cpu"])
    if reports.targets != ["cpu"]:
        raise SmokeError(f"analyze(targets=['cpu']) reported {reports.targets}")
    try:
        reports.check(error="none", max_temp="64MB")
    except AssertionError as failed:
        raise SmokeError(f"analyze() on cpu: {' '.join(str(failed).split())}") from None
    report = reports["cpu"]
    figures = (report.memory.argument_bytes, report.memory.output_bytes)
    if figures != ((1000 * 3 + 500 * 3) * 4, 500 * 4):
        raise SmokeError(f"analyze() on cpu: argument and output bytes {figures}, not (18000, 2000)")
    if not report.deciding_reductions:
        raise SmokeError("analyze() on cpu: the report found no reduction of with_dot's own")
    verdict = "fused" if all(r.fused for r in report.deciding_reductions) else "unfused"
    print(f"analyze() on cpu: 18,000 argument and 2,000 output bytes, the reduction {verdict}, "
          f"{report.memory.temp_bytes:,} bytes of temp")


#: A claim that holds on every jax release (2 MB at most is stored), and one that holds on
#: none (nothing of that shape exists in the program).
TRUE_CLAIM = ":expect-max-temp: cpu=64MB"
FALSE_CLAIM = ":expect-materialized: cpu=f32[7,7]"


def write_site(source: Path, claim: str) -> None:
    source.mkdir(parents=True, exist_ok=True)
    (source / "conf.py").write_text(CONF, encoding="utf-8")
    indented = "\n".join(f"   {line}" if line else "" for line in WITH_DOT.splitlines())
    (source / "index.rst").write_text(INDEX.format(claim=claim, source=indented), encoding="utf-8")
    (source / "sums.md").write_text(SUMS, encoding="utf-8")


def sphinx_build(source: Path, output: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-n", "-q",
                           str(source), str(output)], capture_output=True, text=True, timeout=600)


def check_site(folder: Path) -> None:
    source, output = folder / "site", folder / "site" / "_build" / "html"
    write_site(source, TRUE_CLAIM)
    built = sphinx_build(source, output)
    if built.returncode != 0:
        raise SmokeError(f"the two-page site failed to build ({built.returncode}): {built.stderr.strip()[-2000:]}")
    for page, function, claims in (("index.html", "with_dot", 2), ("sums.html", "column_norms", 1)):
        html = (output / page).read_text(encoding="utf-8")
        if "Compiled for CPU with jax" not in html or function not in html or "jaxhlo-missing" in html:
            raise SmokeError(f"{page} does not hold the cpu report of {function}")
        if html.count('class="jaxhlo-pass"') != claims or "jaxhlo-fail" in html:
            raise SmokeError(f"{page} does not show its {claims} claim(s) about {function} as holding")
    for name in ("jaxhlo.css", "jaxhlo.js"):
        if not (output / "_static" / name).is_file():
            raise SmokeError(f"the site lacks _static/{name}")
    print("the two-page site built with -W, a cpu report on each page, its claims holding")
    write_site(source, FALSE_CLAIM)  # the build must say so and fail
    failed = sphinx_build(source, folder / "site" / "_build" / "false")
    if failed.returncode == 0 or "jaxhlo.expectation" not in failed.stderr:
        raise SmokeError(f"a false claim did not fail the build (exit {failed.returncode}): "
                         f"{failed.stderr.strip()[-2000:]}")
    print("a false claim failed the build with a jaxhlo.expectation warning")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python wheel_smoke.py VERSION FOLDER", file=sys.stderr)
        return 2
    version, folder = argv[0], Path(argv[1]).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    os.chdir(folder)
    try:
        check_install(version)
        check_analyze(folder)
        check_site(folder)
    except SmokeError as problem:
        print(f"wheel smoke test: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
