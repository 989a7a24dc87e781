"""Regenerate the corpus under ``tests/data/corpus/``: optimized HLO and XLA's own figures.

For every program of ``tests/data/corpus/programs.py`` and every target
(``cpu``, ``gpu:h100``, ``tpu:v5e``), this compiles the program the plain way,
``jax.jit(f, donate_argnames=...).trace(*specs).lower(...).compile()``, with no
code of the extension between jax and the figures, and writes:

- ``corpus/<target>/<program>.txt``: ``compiled.as_text()`` (or
  ``<program>.error.txt`` with the message of a failed compile);
- ``corpus/xla.json``: per target and program, ``memory_analysis()`` and
  ``cost_analysis()`` as XLA gives them, the versions, the compile time;
- ``corpus/<target>/<program>.buffers.txt``: the record of XLA's buffer assignment and
  live ranges the same compile wrote (:mod:`sphinx_jaxhlo.hlo.buffer_assignment`), for the
  live list at the peak.

``--records`` compiles again and writes the records alone (and the module text where it
differs from the stored one, which it should not: the record names its instructions),
leaving ``xla.json`` as it is.

The tests compare the extension's reports with these figures and the
analysis of each stored module with the verdicts checked by hand in
``corpus/expected.py``.  Run with the GPU and TPU compilers installed::

    python tests/data/regenerate_corpus.py                      # everything
    python tests/data/regenerate_corpus.py --targets cpu --programs cumsum,argmax
    python tests/data/regenerate_corpus.py --records --targets tpu:v5e
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "corpus"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from programs import PROGRAMS, Program  # noqa: E402

from sphinx_jaxhlo.compiler import lowering  # noqa: E402
from sphinx_jaxhlo.core import compilers as plugins  # noqa: E402
from sphinx_jaxhlo.core import targets  # noqa: E402

DEFAULT_TARGETS = ("cpu", "gpu:h100", "tpu:v5e")
FIGURES = HERE / "xla.json"


def target_folder(target: str) -> Path:
    return HERE / target.replace(":", "_")


def memory_figures(compiled: Any) -> dict[str, int | None]:
    stats = compiled.memory_analysis()
    names = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
             "generated_code_size_in_bytes", "peak_memory_in_bytes")
    return {name: (int(v) if (v := getattr(stats, name, None)) is not None else None) for name in names}


def cost_figures(compiled: Any) -> dict[str, float | None]:
    cost = compiled.cost_analysis()
    if isinstance(cost, list):
        cost = cost[0] if cost else {}
    cost = cost or {}
    return {k: cost.get(k) for k in ("flops", "transcendentals", "bytes accessed")}


def compile_plain(program: Program, target_name: str, dump: str | None = None) -> tuple[Any | None, str | None, float]:
    """Compile with jax alone: the reference the extension is compared with.

    :param dump: a folder for XLA's dump (``xla_dump_to``), whose buffer assignment is kept.
    """
    import jax

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.core.specs import parse_args

    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(program.source, "example.py", "exec"), namespace)
    fn = namespace["f"]
    args, kwargs = to_shape_dtype_structs(parse_args(program.args))
    static = {k: eval(v) for k, v in program.static}  # literals written in programs.py
    target = targets.get_target(target_name)
    device = lowering.device_for(target)
    if device is not None:
        sharding = jax.sharding.SingleDeviceSharding(device)
        args = jax.tree.map(lambda s: s.update(sharding=sharding), args)
    names = tuple(d for d in program.donate if not d.isdigit())
    nums = tuple(int(d) for d in program.donate if d.isdigit())
    # (jax infers positions from names only when no positions are given)
    jitted = jax.jit(fn, static_argnames=tuple(static), donate_argnames=names or None, donate_argnums=nums or None)
    start = time.perf_counter()
    try:
        lowered = jitted.trace(*args, **kwargs, **static).lower(lowering_platforms=(target.platform,))
        compiled = lowered.compile({"xla_dump_to": dump} if dump else None)
    except Exception as exc:  # a failed compile is a result to keep
        return None, str(exc), time.perf_counter() - start
    return compiled, None, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    parser.add_argument("--programs", default="", help="comma-separated names; default: all")
    parser.add_argument("--records", action="store_true", help="write the buffer-assignment records alone")
    options = parser.parse_args(argv)
    chosen = [targets.get_target(t).name for t in options.targets.split(",") if t.strip()]
    wanted = {p.strip() for p in options.programs.split(",") if p.strip()}
    programs = [p for p in PROGRAMS if not wanted or p.name in wanted]
    missing = [targets.TARGETS[t].missing_message() for t in chosen if not targets.TARGETS[t].available()]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1
    lowering.prepare_environment(os.environ)
    sys.path[:0] = [str(folder) for folder in plugins.worker_path()]  # the GPU and TPU compilers, as a worker has
    from jax.extend.source_info_util import register_exclusion

    register_exclusion(str(Path(__file__).resolve()))  # only example.py in the metadata
    if options.records:
        return write_records(chosen, programs)
    figures: dict[str, Any] = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
    figures["versions"] = targets.package_versions()
    for target_name in chosen:
        folder = target_folder(target_name)
        folder.mkdir(parents=True, exist_ok=True)
        per_target = figures.setdefault(target_name, {})
        dump = tempfile.mkdtemp(prefix="corpus-dump-")
        for program in programs:
            if target_name not in program.targets:
                continue
            for suffix in (".txt", ".error.txt", ".buffers.txt"):
                (folder / f"{program.name}{suffix}").unlink(missing_ok=True)
            shutil.rmtree(dump, ignore_errors=True)
            compiled, error, seconds = compile_plain(program, target_name, dump)
            entry: dict[str, Any] = {"seconds": round(seconds, 2)}
            if compiled is None:
                assert error is not None
                (folder / f"{program.name}.error.txt").write_text(error + "\n", encoding="utf-8")
                match = re.match(r"([A-Z_]+): ", error)
                entry["error"] = match.group(1) if match else "error"
                outcome = f"error {entry['error']}"
            else:
                (folder / f"{program.name}.txt").write_text(compiled.as_text(), encoding="utf-8")
                _write_record(folder / f"{program.name}.buffers.txt", dump)
                entry["memory"] = memory_figures(compiled)
                entry["cost"] = cost_figures(compiled)
                outcome = f"temp {entry['memory']['temp_size_in_bytes']:,} B"
            per_target[program.name] = entry
            print(f"{target_name:<10} {program.name:<24} {seconds:7.2f} s  {outcome}", flush=True)
            FIGURES.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def _write_record(path: Path, dump: str) -> str:
    """The record of the buffer assignment in ``dump``, written to ``path``; why not, else."""
    from sphinx_jaxhlo.hlo.buffer_assignment import collect

    record, note = collect(dump)
    if record:
        path.write_text(record, encoding="utf-8")
    return note


def write_records(chosen: list[str], programs: list[Program]) -> int:
    """``--records``: each program compiled again, its buffer-assignment record written beside its module."""
    changed = 0
    for target_name in chosen:
        folder = target_folder(target_name)
        for program in programs:
            if target_name not in program.targets or not (folder / f"{program.name}.txt").exists():
                continue
            dump = tempfile.mkdtemp(prefix="corpus-dump-")
            try:
                compiled, error, seconds = compile_plain(program, target_name, dump)
                if compiled is None:
                    print(f"{target_name:<10} {program.name:<24} failed now: {error}", flush=True)
                    continue
                text = compiled.as_text()
                stored = (folder / f"{program.name}.txt").read_text(encoding="utf-8")
                if text != stored:
                    (folder / f"{program.name}.txt").write_text(text, encoding="utf-8")
                    changed += 1
                note = _write_record(folder / f"{program.name}.buffers.txt", dump)
            finally:
                shutil.rmtree(dump, ignore_errors=True)
            print(f"{target_name:<10} {program.name:<24} {seconds:7.2f} s  "
                  f"{'module changed; ' if text != stored else ''}{note or 'record written'}", flush=True)
    return 0 if not changed else 2


if __name__ == "__main__":
    sys.exit(main())
