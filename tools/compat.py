"""The compatibility check of one jax release (``nox -s compat``).

Compiles a handful of examples through sphinx-jaxhlo (its compile worker, as
a docs build does) and again directly with the installed jax
(``jax.jit(f).trace(...).lower(...).compile().memory_analysis()`` in this
process, no sphinx-jaxhlo in between), then checks that the report's memory
figures are jax's own.  The examples: the seed's ``with_dot`` and
``explicit`` (docs/examples/seed.py), a gradient, and a sharded product on the
8-device targets.  It also checks that a ``:mesh:`` written without axis kinds
gets the kinds this jax's ``jax.make_mesh`` gives (Explicit from jax 0.9, Auto
before), on JAX's own sharding code (``jnp.dot(a, b, out_sharding=P("X", None))``
over ``X=4, Y=2``): it traces where the axes are Explicit, and where they are
Auto the error names the kinds and the ``:mesh:`` that makes them Explicit.

Run it in an environment with the jax to check and its compilers installed
(``python -m sphinx_jaxhlo compilers install``)::

    python tools/compat.py [--targets cpu,gpu:h100,tpu:v5e] [--json out.json]

It exits 1 when a figure differs or a compile fails, 2 when a target's
compiler is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "docs" / "examples" / "seed.py"
SEED_ARGS = "f32[100000,3], f32[50000,3]"
CHILD = "JAXHLO_COMPAT_CHILD"

#: What sphinx-jaxhlo's report must repeat from ``memory_analysis()`` exactly.
FIGURES = (("argument_bytes", "argument_size_in_bytes"), ("output_bytes", "output_size_in_bytes"),
           ("alias_bytes", "alias_size_in_bytes"), ("temp_bytes", "temp_size_in_bytes"))


def loss(w: Any, x: Any) -> Any:
    """The gradient example: a two-layer network's squared output, differentiated in ``w``."""
    import jax.numpy as jnp

    return jnp.sum(jnp.tanh(jnp.tanh(x @ w) @ w.T) ** 2)


def grad_loss(w: Any, x: Any) -> Any:
    import jax

    return jax.grad(loss)(w, x)


def sharded(a: Any, b: Any) -> Any:
    """The sharded example: ``cos(a @ b)`` summed, a row-sharded and a column-sharded operand."""
    import jax.numpy as jnp

    return jnp.sum(jnp.cos(a @ b), axis=0)


#: JAX's sharding page's product, as the directive would take it with ``:mesh: X=4, Y=2``.
MESH_SOURCE = """
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

def matmul(a, b):
    return jnp.dot(a, b, out_sharding=P("X", None))
"""


def check_mesh_default(target: str) -> tuple[bool, str]:
    """A ``:mesh:`` without kinds has this jax's ``jax.make_mesh`` default kinds: ``(ok, line)``."""
    import warnings

    import jax

    import sphinx_jaxhlo

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jax 0.8 warns that the default changes
        made = jax.make_mesh((1, 1), ("X", "Y"), devices=jax.devices()[:1])
    own = [str(getattr(k, "name", k)).lower() for k in made.axis_types]
    major_minor = tuple(int(p) for p in jax.__version__.split(".")[:2])
    expected = "explicit" if major_minor >= (0, 9) else "auto"  # by jax's changelog
    if own != [expected] * 2:
        return False, f"jax.make_mesh gives {own}, the changelog says {expected}"
    args = "f32[64,32] @ P(None, X), f32[32,128] @ P(X, None)"
    try:
        reports = sphinx_jaxhlo.analyze_source(MESH_SOURCE, "matmul", args, targets=target, mesh="X=4, Y=2",
                                               cache_dir=None)
    except sphinx_jaxhlo.AnalysisError as exc:
        named = f"axes were X=4 auto, Y=2 auto (X, Y by default: jax.make_mesh's default in jax {jax.__version__})"
        ok = expected == "auto" and named in str(exc) and ":mesh: X=4 explicit, Y=2 explicit" in str(exc)
        return ok, f"{expected} by default; the out_sharding product fails" + (
            ", naming the kinds and the :mesh: to write" if ok else f" without saying how: {str(exc)[:300]}")
    kinds = [axis[2] if len(axis) > 2 else "auto" for axis in reports[target].mesh]
    ok = expected == "explicit" and kinds == ["explicit", "explicit"]
    return ok, f"{expected} by default; the report's mesh is {reports[target].mesh}"


def _reexec() -> None:
    """Run again with the environment of a compile worker (the compilers'
    private folders on ``PYTHONPATH``, ``JAX_PLATFORMS=cpu``...), so that the
    direct compiles of this process see the compilers the reports used."""
    sys.path.insert(0, str(ROOT))
    from sphinx_jaxhlo.compiler.lowering import prepare_environment

    env = dict(os.environ)
    prepare_environment(env)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
    env[CHILD] = "1"
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def _seed() -> Any:
    spec = importlib.util.spec_from_file_location("seed", SEED)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _direct(target: Any, fn: Any, shapes: list[tuple[tuple[int, ...], Any]], specs: list[Any] | None) -> Any:
    """``memory_analysis()`` of ``jax.jit(fn)`` compiled for ``target`` by jax itself."""
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

    from sphinx_jaxhlo.compiler import lowering

    if target.platform == "cpu":
        shardings = [None] * len(shapes)
    elif target.device_count > 1:
        mesh = Mesh(lowering.devices_for(target), ("devices",))
        shardings = [NamedSharding(mesh, spec or PartitionSpec()) for spec in (specs or [None] * len(shapes))]
    else:
        shardings = [SingleDeviceSharding(lowering.devices_for(target)[0])] * len(shapes)
    structs = [jax.ShapeDtypeStruct(shape, dtype, sharding=s) if s is not None else jax.ShapeDtypeStruct(shape, dtype)
               for (shape, dtype), s in zip(shapes, shardings, strict=True)]
    jitted = jax.jit(fn)
    staged = jitted.trace(*structs) if hasattr(jitted, "trace") else jitted
    lowered = staged.lower(*([] if hasattr(jitted, "trace") else structs), lowering_platforms=(target.platform,))
    # what this jaxlib needs to compile for the target without a device (none on jax 0.9 and newer)
    return lowered.compile(lowering.compile_options(target, {}) or None).memory_analysis()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="cpu,gpu:h100,tpu:v5e",
                        help="one-device targets for the seed and the gradient (default: %(default)s)")
    parser.add_argument("--mesh-targets", default="gpu:h100x8,tpu:v5e-8",
                        help="targets of several devices for the sharded example ('' for none)")
    parser.add_argument("--full", action="store_true", help="also the seed's explicit form on TPU targets")
    parser.add_argument("--json", help="write the rows here")
    opts = parser.parse_args(argv)
    if not os.environ.get(CHILD):
        _reexec()

    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec

    import sphinx_jaxhlo
    from sphinx_jaxhlo.compiler.lowering import mesh_for
    from sphinx_jaxhlo.core import targets
    from sphinx_jaxhlo.store.drift import verdict

    versions = targets.package_versions()
    print("toolchain:", ", ".join(f"{k} {v}" for k, v in sorted(versions.items())), flush=True)
    one = [targets.get_target(n) for n in opts.targets.split(",") if n.strip()]
    many = [targets.get_target(n) for n in opts.mesh_targets.split(",") if n.strip()]
    missing = [t.missing_message() for t in [*one, *many] if not t.available()]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 2
    seed = _seed()
    source = SEED.read_text(encoding="utf-8")
    f32 = jnp.float32
    seed_shapes = [((100000, 3), f32), ((50000, 3), f32)]
    grad_shapes = [((512, 512), f32), ((4096, 512), f32)]
    cases: list[tuple[str, Any, list[Any], Any]] = []
    for name in ("with_dot", "explicit"):
        # trimmed for CI: a TPU fuses both seed forms alike, and its compiles take most of the time
        chosen = one if name == "with_dot" or opts.full else [t for t in one if t.platform != "tpu"]
        cases += [(f"seed {name}", getattr(seed, name), chosen,
                   lambda ts, name=name: sphinx_jaxhlo.analyze_source(source, name, SEED_ARGS, targets=ts,
                                                                     source_name="seed.py"))]
    cases.append(("gradient", grad_loss, one,
                  lambda ts: sphinx_jaxhlo.analyze(grad_loss, "f32[512,512]", "f32[4096,512]", targets=ts)))
    rows: list[dict[str, Any]] = []
    failed = False

    def check(case: str, fn: Any, target: Any, report: Any, shapes: list[Any], specs: list[Any] | None) -> None:
        nonlocal failed
        start = time.perf_counter()
        try:
            stats = _direct(target, fn, shapes, specs)
        except Exception as exc:
            stats, direct_error = None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        else:
            direct_error = None
        seconds = time.perf_counter() - start
        row: dict[str, Any] = {"case": case, "target": target.name, "verdict": verdict(report),
                               "compile_seconds": round(report.compile_seconds or 0.0, 2),
                               "direct_seconds": round(seconds, 2), "mismatches": []}
        if report.error is not None or direct_error is not None:  # none of these examples should fail
            row["mismatches"].append(f"report error {report.error and report.error.status!r}, "
                                     f"direct error {direct_error!r}")
        else:
            for mine, theirs in FIGURES:
                have, want = getattr(report.memory, mine), getattr(stats, theirs, None)
                row[mine] = have
                if want is not None and have != int(want):
                    row["mismatches"].append(f"{mine} {have} != memory_analysis {theirs} {int(want)}")
            peak = getattr(stats, "peak_memory_in_bytes", None)
            if not report.memory.peak_is_estimate and peak is not None and report.memory.peak_bytes != int(peak):
                row["mismatches"].append(f"peak_bytes {report.memory.peak_bytes} != peak_memory_in_bytes {peak}")
            row["peak_bytes"] = report.memory.peak_bytes
            if report.analysis_error:
                row["mismatches"].append(f"analysis failed: {report.analysis_error}")
        failed |= bool(row["mismatches"])
        rows.append(row)
        print(f"{case:<16} {target.name:<11} temp {row.get('temp_bytes')!s:>12} peak {row.get('peak_bytes')!s:>12} "
              f"{row['verdict']:<16} {row['compile_seconds']:6.2f} s  "
              f"{'OK' if not row['mismatches'] else 'MISMATCH: ' + '; '.join(row['mismatches'])}", flush=True)

    for case, fn, case_targets, run in cases:
        reports = run([t.name for t in case_targets])
        for failure in reports.failures:
            print(f"{case}: {failure}", flush=True)
            failed = True
        for target in case_targets:
            report = reports.get(target.name)
            if report is None:
                failed = True
                continue
            check(case, fn, target, report, seed_shapes if case.startswith("seed") else grad_shapes, None)
    if many:
        specs = [PartitionSpec("devices", None), PartitionSpec(None, "devices")]
        for target in many:
            mesh = mesh_for(target, None)
            structs = [jax.ShapeDtypeStruct((8192, 8192), f32,
                                            sharding=jax.sharding.NamedSharding(mesh, spec)) for spec in specs]
            result = sphinx_jaxhlo.analyze(sharded, *structs, targets=[target.name])
            report = result.get(target.name)
            check("sharded", sharded, target, report, [((8192, 8192), f32)] * 2, specs)
    mesh_target = many[0].name if many else "cpu"
    ok, line = check_mesh_default(mesh_target)
    failed |= not ok
    rows.append({"case": "mesh default", "target": mesh_target, "mismatches": [] if ok else [line]})
    print(f"{'mesh default':<16} {mesh_target:<11} {line}  {'OK' if ok else 'MISMATCH'}", flush=True)
    if opts.json:
        Path(opts.json).write_text(json.dumps({"toolchain": versions, "rows": rows}, indent=1) + "\n",
                                   encoding="utf-8")
    print("compat:", "FAILED" if failed else "all figures match memory_analysis()", f"({len(rows)} compiles)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
