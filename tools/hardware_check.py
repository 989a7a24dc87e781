"""The hardware check: every docs example of a target, compiled and run on the real device.

Never needed by CI or by a docs build; run it whenever a machine with the device
is at hand, and commit the record it writes.  Three steps::

    # here (Sphinx, the docs' snapshots; compiles nothing):
    python tools/hardware_check.py plan --target tpu:v5e --out build/hardware/plan.json
    # on the machine with the chip (jax and its compiler; no Sphinx needed):
    python tools/hardware_check.py run --plan build/hardware/plan.json --out OUT/part.json --deadline 540
    # here again: the parts into the committed record, checked against the snapshots
    python tools/hardware_check.py record build/hardware/part*.json --out docs/_hardware/tpu-v5e.json

``plan`` builds the docs from their snapshots (``use`` mode, nothing compiled) and
writes, for each example, function and target it shows, the compile request and
its snapshot slot.  ``run`` takes the requests one by one, smallest first (the
device's ``peak_bytes_in_use`` only rises within a process), and for each:

1. compiles it with plain jax for the device in the machine (no topology, no
   deviceless trick) and keeps XLA's ``memory_analysis()`` (every field) and a
   digest of its optimized HLO with names and metadata removed
   (:func:`canonical_hlo`), to compare with the snapshot's;
2. makes random arguments of the example's shapes and dtypes on the device,
   runs the program once, and reads the device's ``memory_stats()`` before the
   arguments exist, after they do, after the compile and after the run (the
   outputs still held): what the program holds is what ``bytes_in_use`` and
   ``bytes_reserved`` grew by;
3. runs it again, warm, and keeps the median wall time;
4. deletes everything and clears jax's caches before the next program.

A compile the snapshot predicted to fail (``RESOURCE_EXHAUSTED``) is compiled
too, and its message kept.  ``run`` writes its part after every program and
stops before ``--deadline`` seconds, so a part is never lost and ``--resume``
carries on from one.  ``record`` joins the parts and the plan into one record
(format: :mod:`sphinx_jaxhlo.store.hardware`), which the docs build reads
(``jaxhlo_hardware_dir``) and ``tests/test_hardware_record.py`` checks.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import difflib
import gc
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: The fields of ``compiled.memory_analysis()`` that jaxlib 0.8 to 0.10 report.
MEMORY_FIELDS = (
    "argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
    "generated_code_size_in_bytes", "host_argument_size_in_bytes", "host_output_size_in_bytes",
    "host_alias_size_in_bytes", "host_temp_size_in_bytes", "host_generated_code_size_in_bytes",
    "peak_memory_in_bytes",
)
#: The fields of ``Device.memory_stats()`` kept at each step.
STATS_FIELDS = ("bytes_in_use", "bytes_reserved", "peak_bytes_in_use", "bytes_limit", "largest_free_block_bytes",
                "num_allocs")


# -- plan (here) -----------------------------------------------------------------------------------

def plan(target: str, docs: Path, out: Path, behind: Path | None = None) -> int:
    """Build the docs from their snapshots and list every (example, function) shown for ``target``;
    with ``behind`` (a record), only those it lacks or whose program changed since it was made."""
    os.environ["JAXHLO_SNAPSHOT_MODE"] = "use"
    from sphinx.cmd.build import build_main

    from sphinx_jaxhlo.pipeline import plan as planning

    seen: dict[str, dict[str, Any]] = {}
    take = planning.use_snapshot

    def recording(build: Any, job: Any) -> bool:
        taken = take(build, job)
        if taken and job.target.name == target and job.stored is not None:
            snapshot_root = build.snapshot_root
            slot = job.stored.path.relative_to(snapshot_root).as_posix()
            seen[slot] = {
                "slot": slot,
                "request": job.request.to_json(),
                "identity_sha256": job.identity_key,
                "facts": {"memory": job.stored.snapshot.facts.get("memory"),
                          "error": job.stored.snapshot.facts.get("error")},
            }
        return taken

    planning.use_snapshot = recording
    try:
        with tempfile.TemporaryDirectory(prefix="jaxhlo-hw-plan-") as tmp:
            status = build_main(["-b", "html", str(docs), tmp, "-E", "-q", "-D", "jaxhlo_cache=0"])
    finally:
        planning.use_snapshot = take
    if not seen:
        print(f"no example of the docs shows {target}", file=sys.stderr)
        return 1
    plan_data = {"target": target, "examples": sorted(seen.values(), key=lambda e: e["slot"])}
    if behind is not None:
        plan_data = behind_record(plan_data, behind)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(plan_data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(plan_data['examples'])} examples of {target}"
          f"{f' of {len(seen)} (the rest in {behind}, unchanged)' if behind is not None else ''}"
          f" (sphinx exit status {status}) -> {out}")
    return 0


def behind_record(plan_data: dict[str, Any], record_path: Path) -> dict[str, Any]:
    """The plan's examples a record lacks or holds for a program changed since: what a session
    measures before ``record --keep`` joins them to the rest."""
    kept = {e["slot"] for e in _kept(record_path, plan_data, measured=set())}
    return {**plan_data, "examples": [e for e in plan_data["examples"] if e["slot"] not in kept]}


# -- run (on the device) ---------------------------------------------------------------------------

#: A computation's first line: ``%name (p: f32[2]) -> f32[2] {`` or ``ENTRY %main.4 (...) -> ... {``.
_HEADER = re.compile(r"^(ENTRY\s+)?(%[\w.\-]+)\s*\(.*\{\s*$")
#: An HLO name: ``%fusion.3``.
_NAME = re.compile(r"%[\w.\-]+")
#: Attributes that say where a value came from or how it was annotated, not what the
#: program computes: metadata (source lines, op names), and the sharding annotations a
#: lowering with explicit single-device shardings adds (``sharding={replicated}``,
#: ``frontend_attributes={xla.sdy.sharding=...}``).
_ANNOTATIONS = ("metadata", "sharding", "frontend_attributes")


def _braced_end(text: str, start: int) -> int:
    """The index after the brace group that opens at ``text[start]`` (quotes respected)."""
    depth, quoted, i = 0, False, start
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def canonical_line(line: str) -> str:
    """One line of a module with its annotations removed and its ``backend_config``
    JSON written with sorted keys (printers order them differently)."""
    stripped = line.strip()
    if stripped.startswith("HloModule"):
        # its name and the attributes the lowering set; the layout of its entry stays
        m = re.search(r"entry_computation_layout=\{", stripped)
        return "HloModule " + (stripped[m.start():_braced_end(stripped, m.end() - 1)] if m else "")
    for name in _ANNOTATIONS:
        while (m := re.search(r",\s*" + name + r"=\{", line)) is not None:
            line = line[:m.start()] + line[_braced_end(line, m.end() - 1):]
    m = re.search(r"backend_config=\{", line)
    if m is not None:
        end = _braced_end(line, m.end() - 1)
        try:
            config = json.dumps(json.loads(line[m.end() - 1:end]), sort_keys=True)
        except ValueError:
            config = line[m.end() - 1:end]
        line = line[:m.end() - 1] + config + line[end:]
    return line


def canonical_hlo(text: str) -> str:
    """An optimized module with what changes between two compiles of the same program
    removed: the frame tables at its head, the module's name and the attributes the
    lowering set, annotations (:func:`canonical_line`), and every instruction's and
    computation's name (numbered in the order they first appear)."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("FileNames", "FunctionNames", "FileLocations", "StackFrames")) \
                or re.match(r"^\d+ ", stripped):
            continue
        header = _HEADER.match(line)
        if header is not None:  # its parameters' names and shapes are those of its parameter instructions
            line = f"{header.group(1) or ''}{header.group(2)} {{"
        lines.append(canonical_line(line))
    names: dict[str, str] = {}

    def rename(m: re.Match[str]) -> str:
        return names.setdefault(m.group(0), f"%n{len(names)}")

    return _NAME.sub(rename, "\n".join(lines))


def _stats(device: Any) -> dict[str, int]:
    stats = device.memory_stats() or {}
    return {k: int(stats[k]) for k in STATS_FIELDS if k in stats}


def _memory(compiled: Any) -> dict[str, int]:
    stats = compiled.memory_analysis()
    return {k: int(getattr(stats, k)) for k in MEMORY_FIELDS if getattr(stats, k, None) is not None}


def _random_arguments(specs: Any, structs: Any, seed: int) -> Any:
    """Arrays of the structs' shapes and dtypes, made on the device (no host copy)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from sphinx_jaxhlo.core.specs import KEY_IMPLS, ArraySpec

    counter = iter(range(10**6))

    def make(spec: Any, struct: Any) -> Any:
        if isinstance(spec, ArraySpec):
            key = jax.random.key(seed * 1000 + next(counter))
            shape = tuple(struct.shape)
            if spec.dtype in KEY_IMPLS:
                n = int(np.prod(shape)) if shape else 1
                keys = jax.random.split(jax.random.key(seed, impl=KEY_IMPLS[spec.dtype]), n)
                return keys.reshape(shape) if shape else keys[0]
            dtype = jnp.dtype(struct.dtype)

            @jax.jit
            def fill(k: Any) -> Any:
                if jnp.issubdtype(dtype, jnp.bool_):
                    return jax.random.bernoulli(k, 0.5, shape)
                if jnp.issubdtype(dtype, jnp.integer):
                    return jax.random.randint(k, shape, 0, 8).astype(dtype)
                if jnp.issubdtype(dtype, jnp.complexfloating):
                    return jax.random.normal(k, shape, dtype)
                return jax.random.normal(k, shape, jnp.float32).astype(dtype)

            return fill(key)
        if isinstance(spec, tuple):
            return tuple(make(s, t) for s, t in zip(spec, struct, strict=True))
        if isinstance(spec, list):
            return [make(s, t) for s, t in zip(spec, struct, strict=True)]
        return {k: make(spec[k], struct[k]) for k in spec}

    args = tuple(make(s, t) for s, t in zip(specs.args, structs[0], strict=True))
    kwargs = {k: make(s, structs[1][k]) for k, s in specs.kwargs}
    jax.block_until_ready((args, kwargs))
    return args, kwargs


def _function(request: Any) -> Any:
    """The example's function, its module run as the compile worker runs it."""
    from sphinx_jaxhlo.core.request import default_function

    namespace: dict[str, Any] = {"__name__": "__jaxhlo_example__", "__file__": request.source_name}
    exec(compile(request.source, request.source_name, "exec"), namespace)
    return namespace[request.function or default_function(request.source) or ""]


def _warm_ms(call: Any, budget_s: float) -> tuple[float, int]:
    """The median wall time of warm runs (at least 3, at most 50, about ``budget_s`` in all)."""
    import jax

    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (len(times) < 50 and time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        jax.block_until_ready(call())
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), len(times)


def measure(entry: dict[str, Any], device: Any) -> dict[str, Any]:
    """Compile, run and time one example on ``device`` (see the module docstring)."""
    from sphinx_jaxhlo.compiler.worker import isolated_config

    with isolated_config():
        return _measure(entry, device)


def _measure(entry: dict[str, Any], device: Any) -> dict[str, Any]:
    import ast

    import jax

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.compiler.compiling import compiler_options, jit_function
    from sphinx_jaxhlo.core.request import CompileRequest

    request = CompileRequest.from_json(entry["request"])
    out: dict[str, Any] = {"slot": entry["slot"], "identity_sha256": entry["identity_sha256"]}
    fn = _function(request)
    static = {k: ast.literal_eval(v) for k, v in request.static}
    structs = to_shape_dtype_structs(request.specs)
    jitted = jit_function(fn, static_argnames=tuple(static), donate=request.donate)
    before = _stats(device)
    t0 = time.perf_counter()
    try:
        lowered = jitted.trace(*structs[0], **structs[1], **static).lower()
        compiled = lowered.compile(compiler_options(dict(request.xla_flags)) or None)
    except Exception as exc:  # the compile's own answer (RESOURCE_EXHAUSTED...) is a result
        message = str(exc)
        status = re.match(r"\s*([A-Z][A-Z_]+[A-Z]):", message)
        out["error"] = {"status": status.group(1) if status else type(exc).__name__, "message": message[:2000]}
        out["compile_s"] = round(time.perf_counter() - t0, 3)
        return out
    out["compile_s"] = round(time.perf_counter() - t0, 3)
    hlo = compiled.as_text() or ""
    out["memory_analysis"] = _memory(compiled)
    canonical = canonical_hlo(hlo)
    out["hlo_canonical_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    stored = _snapshot_text(entry["slot"])
    if stored is not None and canonical_hlo(stored) != canonical:
        diff = difflib.unified_diff(canonical_hlo(stored).splitlines(), canonical.splitlines(), "snapshot", "device",
                                    n=0, lineterm="")
        out["hlo_difference"] = "\n".join(diff)[:6000]
    after_compile = _stats(device)
    args, kwargs = _random_arguments(request.specs, structs, 0)
    jax.clear_caches()  # the kernels that made the arguments leave the device; the program stays
    gc.collect()
    with_args = _stats(device)
    try:
        results = compiled(*args, **kwargs)
        jax.block_until_ready(results)
    except Exception as exc:
        out["run_error"] = str(exc)[:2000]
        return out
    after_run = _stats(device)
    out["stats"] = {"before": before, "compiled": after_compile, "arguments": with_args, "ran": after_run}
    # what the program holds while it runs: its arguments, outputs and code (in use), its temp (reserved)
    out["held_bytes"] = sum(after_run.get(k, 0) - before.get(k, 0) for k in ("bytes_in_use", "bytes_reserved"))
    del results
    if request.donate:  # a donated argument is gone after one run
        out["warm_ms"], out["warm_runs"] = None, 0
    else:
        m = out["memory_analysis"]
        big = sum(m.get(k, 0) for k in ("argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes"))
        out["warm_ms"], out["warm_runs"] = _warm_ms(lambda: compiled(*args, **kwargs), 0.5 if big < 2**30 else 2.0)
    compiled = lowered = args = kwargs = None  # nothing of this program left on the device
    gc.collect()
    jax.clear_caches()
    out["stats"]["after"] = _stats(device)
    return out


def _snapshot_text(slot: str) -> str | None:
    """The optimized HLO a snapshot holds (``None``: no snapshot, or no HLO in it)."""
    from sphinx_jaxhlo.store import snapshots

    try:
        stored = snapshots.read(ROOT / "docs" / "_snapshots" / slot)
    except snapshots.SnapshotError:
        return None
    return None if stored is None else stored.snapshot.texts.get("hlo")


def _order(entry: dict[str, Any]) -> tuple[int, int]:
    """Smallest first (the device's peak only rises within a process); predicted failures last."""
    facts = entry.get("facts") or {}
    if facts.get("error"):
        return (1, 0)
    m = facts.get("memory") or {}
    size = sum(m.get(k) or 0 for k in ("argument_bytes", "output_bytes", "temp_bytes", "generated_code_bytes"))
    return (0, size - (m.get("alias_bytes") or 0))


def run(plan_path: Path, out: Path, deadline: float, resume: list[Path], only: str | None,
        first: str | None = None) -> int:
    import jax

    started = time.perf_counter()
    plan_data = json.loads(plan_path.read_text(encoding="utf-8"))
    device = jax.devices()[0]
    done: dict[str, dict[str, Any]] = {}
    for path in resume:
        for m in json.loads(path.read_text(encoding="utf-8")).get("measured", []):
            done[m["identity_sha256"]] = m
    part = {
        "target": plan_data["target"],
        "device": {"kind": device.device_kind, "platform": device.platform, "count": len(jax.devices())},
        "versions": _versions(),
        "date": datetime.date.today().isoformat(),
        "measured": [],
    }
    # one measurement per distinct program (several slots may show the same one)
    todo: dict[str, dict[str, Any]] = {}
    ordered = sorted(plan_data["examples"], key=_order)
    if first:  # what matters most when the device's time is short
        ordered.sort(key=lambda e: not re.search(first, e["slot"]))
    for entry in ordered:
        if only and not re.search(only, entry["slot"]):
            continue
        todo.setdefault(entry["identity_sha256"], entry)
    print(f"{len(todo)} programs, {len(done)} measured before", flush=True)
    for key, entry in todo.items():
        if key in done:
            continue
        if time.perf_counter() - started > deadline:
            print(f"deadline: {len(todo) - len(done)} left", flush=True)
            break
        t0 = time.perf_counter()
        try:
            result = measure(entry, device)
        except Exception as exc:  # the example itself failed here: say so, carry on
            result = {"slot": entry["slot"], "identity_sha256": key, "failure": f"{type(exc).__name__}: {exc}"[:2000]}
        result["seconds"] = round(time.perf_counter() - t0, 2)
        done[key] = result
        _write_part(part, done, out)
        held = result.get("held_bytes")
        print(f"{len(done):4d} {result['seconds']:7.2f}s {entry['slot']}: "
              + (result.get("error", {}).get("status", "") or result.get("failure", "") or result.get("run_error", "")
                 or f"held {held:,} B, {result.get('warm_ms') or 0:.3f} ms"), flush=True)
    _write_part(part, done, out)
    return 0


def _write_part(part: dict[str, Any], done: dict[str, dict[str, Any]], out: Path) -> None:
    """The part so far (the measurements resumed from included), written whole or not at all."""
    part["measured"] = sorted(done.values(), key=lambda m: m["slot"])
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(part, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("jax", "jaxlib", "libtpu", "libtpu-nightly", "jax-cuda12-plugin", "jax-cuda12-pjrt"):
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


# -- live (here) -----------------------------------------------------------------------------------

def _live_on_device(entry: dict[str, Any]) -> dict[str, Any]:
    """One example compiled by the device's own backend (no run), with XLA's buffer assignment
    dumped, and what is live at its peak computed from it as a deviceless compile's would be (the
    device's optimized HLO equals the deviceless one: the record's ``same_hlo``)."""
    import ast

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.compiler.compiling import _memory, compiler_options, jit_function
    from sphinx_jaxhlo.core.request import CompileRequest
    from sphinx_jaxhlo.hlo import buffer_assignment
    from sphinx_jaxhlo.hlo.parse import parse_module
    from sphinx_jaxhlo.hlo.peak import peak_from_record

    request = CompileRequest.from_json(entry["request"])
    found: dict[str, Any] = {"slot": entry["slot"]}
    folder = tempfile.mkdtemp(prefix="jaxhlo-live-")
    try:
        fn = _function(request)
        static = {k: ast.literal_eval(v) for k, v in request.static}
        structs = to_shape_dtype_structs(request.specs)
        jitted = jit_function(fn, static_argnames=tuple(static), donate=request.donate)
        options = compiler_options(dict(request.xla_flags))
        options["xla_dump_to"] = folder
        try:
            compiled = jitted.trace(*structs[0], **structs[1], **static).lower().compile(options)
        except Exception as exc:  # a refused compile: nothing ran, nothing to compare
            found["problem"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            return found
        hlo = compiled.as_text() or ""
        module = parse_module(hlo)
        text, note = buffer_assignment.collect(folder, module.name)
        memory = _memory(compiled)
        memory.settle("tpu")
        peak, problem = peak_from_record(text, module, request.source_name, "tpu:v5e", memory)
        if peak is None:
            found["problem"] = problem or note or "no buffer assignment"
        else:
            found["live_bytes"] = peak.bytes
            found["device_bytes"] = memory.device_bytes
    except Exception as exc:
        found["problem"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return found


def live_on_device(plan_path: Path, out: Path, threads: int) -> int:
    """:func:`live`, on the machine with the device: its backend compiles (in ``threads`` at once:
    a compile does not hold Python's lock), nothing runs."""
    from concurrent.futures import ThreadPoolExecutor

    import jax
    import jax.numpy  # imported once here: the examples' own imports then race on nothing
    import jax.scipy.special

    jax.devices()
    plan_data = json.loads(plan_path.read_text(encoding="utf-8"))
    todo = {e["identity_sha256"]: e for e in plan_data["examples"]}
    done: dict[str, Any] = {}
    with ThreadPoolExecutor(threads) as pool:
        for key, found in zip(todo, pool.map(_live_on_device, todo.values()), strict=True):
            done[key] = found
            print(f"{len(done):4d} {found['slot']}: {found.get('live_bytes', found.get('problem'))}", flush=True)
    out.write_text(json.dumps(done, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def live(plan_path: Path, out: Path, timeout: float) -> int:
    """Compile each planned example again here, deviceless, as the docs build does, and keep what
    XLA's buffer assignment says is live at its peak (:mod:`sphinx_jaxhlo.hlo.peak`): the total the
    record compares with what the device held.  A snapshot written before the buffer assignment was
    collected has no such record; this step gives it one without rewriting the snapshot.  Writes
    after every example, and carries on from what ``out`` holds."""
    from sphinx_jaxhlo.compiler.client import CompileWorker
    from sphinx_jaxhlo.core.request import CompileRequest
    from sphinx_jaxhlo.hlo.model import HloParseError
    from sphinx_jaxhlo.hlo.parse import parse_module
    from sphinx_jaxhlo.hlo.peak import attach_live_at_peak

    plan_data = json.loads(plan_path.read_text(encoding="utf-8"))
    done: dict[str, Any] = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    worker = CompileWorker()
    try:
        for entry in plan_data["examples"]:
            key = entry["identity_sha256"]
            if key in done:
                continue
            request = CompileRequest.from_json(entry["request"])
            outcome = worker.compile(request, timeout)
            report = outcome.report
            found: dict[str, Any] = {"slot": entry["slot"]}
            if report is None:
                found["problem"] = outcome.failure.message[:300] if outcome.failure else "no report"
            else:
                if report.live_at_peak is None and report.buffer_assignment:
                    try:
                        module: Any = parse_module(report.hlo) if report.hlo else None
                    except HloParseError:
                        module = None
                    attach_live_at_peak(report, module, request.source_name)
                if report.live_at_peak is None:
                    found["problem"] = report.buffer_assignment_note or "no buffer assignment"
                else:
                    found["live_bytes"] = report.live_at_peak.bytes
                    found["device_bytes"] = report.memory.device_bytes
            done[key] = found
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(done, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            tmp.replace(out)
            print(f"{len(done):4d} {outcome.seconds:7.2f}s {entry['slot']}: "
                  f"{found.get('live_bytes', found.get('problem'))}", flush=True)
    finally:
        worker.close()
    return 0


# -- record (here) ---------------------------------------------------------------------------------

def record(parts: list[Path], plan_path: Path, out: Path, keep: Path | None = None,
           live_path: Path | None = None) -> int:
    """Join the parts and the plan into the committed record (:mod:`sphinx_jaxhlo.store.hardware`),
    each measurement compared with its snapshot as it is now.

    :param keep: a record made before (the committed one): its entries whose snapshot has not
        changed since are kept for the examples the parts did not measure again.
    :param live_path: what ``live`` wrote: each entry gets ``live_bytes``, the total live at the
        peak by XLA's buffer assignment, to compare with what the device held.
    """
    from sphinx_jaxhlo.store.hardware import FORMAT, parse_record

    plan_data = json.loads(plan_path.read_text(encoding="utf-8"))
    measured: dict[str, dict[str, Any]] = {}
    meta: dict[str, Any] = {}
    for path in parts:
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = {k: data[k] for k in ("target", "device", "versions", "date")}
        for m in data.get("measured", []):
            measured[m["identity_sha256"]] = {**m, "date": data["date"]}
    examples = [_entry(entry, measured[entry["identity_sha256"]]) for entry in plan_data["examples"]
                if entry["identity_sha256"] in measured]
    kept = _kept(keep, plan_data, {e["slot"] for e in examples}) if keep is not None else []
    examples += kept
    if live_path is not None and live_path.exists():
        live_totals = json.loads(live_path.read_text(encoding="utf-8"))
        by_slot = {e["slot"]: e["identity_sha256"] for e in plan_data["examples"]}
        for e in examples:
            found = live_totals.get(by_slot.get(e["slot"], ""), {})
            if "live_bytes" in found:
                e["live_bytes"] = found["live_bytes"]
    meta["date"] = max([meta.get("date", ""), *(e.get("date") or "" for e in examples)])
    doc = {"hardware_record": FORMAT, **meta, "examples": sorted(examples, key=lambda e: e["slot"])}
    parse_record(doc)  # the form the docs build and the tests read
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    recorded = {e["slot"] for e in examples}
    left = len({e["identity_sha256"] for e in plan_data["examples"] if e["slot"] not in recorded})
    print(f"{len(examples)} examples of {len(plan_data['examples'])} ({left} programs not measured) -> {out}")
    for key, count in sorted(_tally(examples).items()):
        print(f"  {key}: {count}")
    return 0


def _kept(keep: Path, plan_data: dict[str, Any], measured: set[str]) -> list[dict[str, Any]]:
    """The entries of an earlier record still true: planned now, not measured again, and their
    snapshot's program (:func:`~sphinx_jaxhlo.store.hardware.program_digest`) unchanged."""
    from sphinx_jaxhlo.store import snapshots
    from sphinx_jaxhlo.store.hardware import program_digest

    data = json.loads(keep.read_text(encoding="utf-8"))
    earlier = {e["slot"]: {"date": data.get("date"), **e} for e in data.get("examples", [])}
    out = []
    for planned in plan_data["examples"]:
        slot = planned["slot"]
        entry = earlier.get(slot)
        if entry is None or slot in measured:
            continue
        stored = snapshots.read(ROOT / "docs" / "_snapshots" / slot)
        if stored is not None and entry.get("program_sha256") == program_digest(
                stored.snapshot.identity, stored.snapshot.texts.get("hlo", "")):
            out.append(dict(entry))
    return out


#: memory_analysis() fields and the snapshot's names for them.
_SNAPSHOT_FIGURES = (("argument_size_in_bytes", "argument_bytes"), ("output_size_in_bytes", "output_bytes"),
                     ("alias_size_in_bytes", "alias_bytes"), ("temp_size_in_bytes", "temp_bytes"),
                     ("generated_code_size_in_bytes", "generated_code_bytes"))


def _entry(planned: dict[str, Any], m: dict[str, Any]) -> dict[str, Any]:
    """One example's entry: what the device said, compared with its snapshot now."""
    from sphinx_jaxhlo.store import snapshots
    from sphinx_jaxhlo.store.hardware import program_digest

    stored = snapshots.read(ROOT / "docs" / "_snapshots" / planned["slot"])
    if stored is None:
        raise SystemExit(f"{planned['slot']}: the snapshot is gone; plan and measure again")
    facts, hlo = stored.snapshot.facts, stored.snapshot.texts.get("hlo", "")
    row: dict[str, Any] = {"slot": planned["slot"], "program_sha256": program_digest(stored.snapshot.identity, hlo)}
    for key in ("compile_s", "date", "held_bytes", "memory_analysis", "run_error", "failure", "warm_ms", "warm_runs"):
        if m.get(key) is not None:
            row[key] = m[key]
    if "warm_ms" in row:
        row["warm_ms"] = round(row["warm_ms"], 4)
    predicted = facts.get("error") or {}
    if m.get("error"):
        row["error"] = m["error"]
        row["same_error"] = bool(predicted) and predicted.get("status") == m["error"]["status"] \
            and predicted.get("message", "")[:300] == m["error"]["message"][:300]
        return row
    row["same_error"] = not predicted
    memory, device = facts.get("memory") or {}, m.get("memory_analysis") or {}
    same = all(memory.get(ours) == device.get(xla) for xla, ours in _SNAPSHOT_FIGURES)
    if not memory.get("peak_is_estimate"):
        same = same and memory.get("peak_bytes") == device.get("peak_memory_in_bytes")
    row["same_figures"] = same
    row["same_hlo"], row["hlo_check"] = _same_hlo(hlo, m)
    stats = m.get("stats") or {}
    row["stats"] = {step: stats[step] for step in ("before", "ran", "after") if step in stats}
    placed = (stats.get("arguments", {}).get("bytes_in_use", 0) - stats.get("compiled", {}).get("bytes_in_use", 0))
    if _dropped_arguments(hlo, planned["request"]) and placed > device.get("argument_size_in_bytes", 0):
        row["unused_argument_bytes"] = placed - device["argument_size_in_bytes"]
    return row


def _same_hlo(hlo: str, m: dict[str, Any]) -> tuple[bool, str]:
    """Whether the device's optimized HLO is the snapshot's (:func:`canonical_hlo`), and how
    much of it was compared: the whole text by digest, or, for a part measured before the
    canonical form set annotations aside, every line of the difference it kept."""
    if m.get("hlo_canonical_sha256") == hashlib.sha256(canonical_hlo(hlo).encode()).hexdigest():
        return True, "whole module"
    difference = m.get("hlo_difference")
    if not difference:
        return False, "whole module"
    lines = difference.splitlines()
    old = [ln[1:] for ln in lines if ln.startswith("-") and not ln.startswith("---")]
    new = [ln[1:] for ln in lines if ln.startswith("+") and not ln.startswith("+++")]
    cut = len(difference) >= 5990  # the part keeps at most 6000 characters of it
    if cut:  # the last line of each side may be cut short
        n = min(len(old), len(new)) - 1
        old, new = old[:n], new[:n]
    same = len(old) == len(new) and all(canonical_line(a) == canonical_line(b) for a, b in zip(old, new, strict=True))
    what = f"the first {len(old)} changed lines (the rest not kept)" if cut else f"all {len(old)} changed lines"
    return same, what


def _dropped_arguments(hlo: str, request: dict[str, Any]) -> bool:
    """Whether the compiled program takes fewer arguments than the example was given (jit
    drops unused ones): the entry's parameters against the argument specs' arrays."""
    from sphinx_jaxhlo.core.specs import ArgSpecs, ArraySpec

    specs = ArgSpecs.from_json(request["specs"])

    def leaves(tree: Any) -> int:
        if isinstance(tree, ArraySpec):
            return 1
        values = tree.values() if isinstance(tree, dict) else tree
        return sum(leaves(t) for t in values)

    entry = re.search(r"^ENTRY[^\n]*\{\n(.*?)^\}", hlo, re.MULTILINE | re.DOTALL)
    if entry is None:
        return False
    parameters = len(re.findall(r"\sparameter\(\d+\)", entry.group(1)))
    return parameters < sum(leaves(a) for a in specs.args) + sum(leaves(v) for _, v in specs.kwargs)


def _tally(examples: list[dict[str, Any]]) -> dict[str, int]:
    tally: dict[str, int] = {}
    for e in examples:
        for key in ("same_figures", "same_hlo", "same_error"):
            if key in e:
                tally[f"{key}={e[key]}"] = tally.get(f"{key}={e[key]}", 0) + 1
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("plan", help="list the docs' examples of a target (here)")
    p.add_argument("--target", default="tpu:v5e")
    p.add_argument("--docs", type=Path, default=ROOT / "docs")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "hardware" / "plan.json")
    p.add_argument("--behind", type=Path, metavar="RECORD",
                   help="only the examples this record lacks or measured for a program changed since")
    r = sub.add_parser("run", help="compile, run and time them on the device")
    r.add_argument("--plan", type=Path, default=ROOT / "build" / "hardware" / "plan.json")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--deadline", type=float, default=540.0, help="stop starting programs after this many seconds")
    r.add_argument("--resume", type=Path, nargs="*", default=[], help="parts measured before")
    r.add_argument("--only", help="a regular expression on the slots to measure")
    r.add_argument("--first", help="a regular expression on the slots to measure before the others")
    v = sub.add_parser("live", help="what XLA's buffer assignment says is live at each example's peak (here)")
    v.add_argument("--plan", type=Path, default=ROOT / "build" / "hardware" / "plan.json")
    v.add_argument("--out", type=Path, default=ROOT / "build" / "hardware" / "live.json")
    v.add_argument("--timeout", type=float, default=600.0, help="seconds one compile may take")
    v.add_argument("--on-device", type=int, metavar="THREADS", default=0,
                   help="compile with the device's own backend, in this many threads (on the device's machine)")
    c = sub.add_parser("record", help="join the parts into the committed record (here)")
    c.add_argument("parts", type=Path, nargs="+")
    c.add_argument("--plan", type=Path, default=ROOT / "build" / "hardware" / "plan.json")
    c.add_argument("--out", type=Path, default=ROOT / "docs" / "_hardware" / "tpu-v5e.json")
    c.add_argument("--keep", type=Path, help="an earlier record: keep its entries whose snapshot is unchanged")
    c.add_argument("--live", type=Path, help="what the live step wrote (the live-at-peak totals)")
    opts = parser.parse_args(argv)
    if opts.step == "plan":
        return plan(opts.target, opts.docs, opts.out, opts.behind)
    if opts.step == "run":
        return run(opts.plan, opts.out, opts.deadline, opts.resume, opts.only, opts.first)
    if opts.step == "live":
        if opts.on_device:
            return live_on_device(opts.plan, opts.out, opts.on_device)
        return live(opts.plan, opts.out, opts.timeout)
    return record(opts.parts, opts.plan, opts.out, opts.keep, opts.live)


if __name__ == "__main__":
    sys.exit(main())
