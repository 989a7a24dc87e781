"""On a real TPU v5e: is an outside family's TPU truth, read from the deviceless compile, what the chip's own
compiler does?

Every first evaluation of the predictor scores its TPU answers against a truth read from a *deviceless*
compile (``tpu:v5e`` through a topology, no chip: ``guide_predictor_family.truth_of``).  This checks that
truth on the chip, program by program, for one family:

1. ``compile`` (on the machine with the chip; jax and libtpu, no Sphinx): each program of the family is
   compiled by jax for the device in the machine (no topology, nothing run) and its optimized HLO is kept,
   with XLA's ``memory_analysis()``, in one archive (``--out``), the slowest compiles left out past
   ``--deadline`` seconds (``--resume`` carries on from an archive);
2. ``compare`` (here): the same truth is read from each chip HLO as from the deviceless one (the package's
   analysis, then ``truth_of``) and set beside the committed truth row of that program: whether a table is
   stored, which buffer, and where it lives (HBM or the chip's own memory, ``S(1)``), into the family's
   entry of ``benchmarks/tpu_family_chip_tpu-v5e.json``.

Run::

    # on the chip (writes $OUT/chip_hlo.tar.gz):
    python benchmarks/tpu_family_chip.py compile guide_predictor_holdout20 --out $OUT/chip_hlo.tar.gz
    # here:
    python benchmarks/tpu_family_chip.py compare guide_predictor_holdout20 --archive chip_hlo.tar.gz

The record is committed; nothing in the tests needs it.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from concurrent.futures import TimeoutError as FuturesTimeout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

#: What the comparison reads of a truth row.
FIELDS = ("stored", "by", "buffer", "memory_space")


def _programs(stem: str) -> list[Any]:
    return importlib.import_module(stem).programs()


def _compile_one(prog: Any) -> dict[str, Any]:
    import jax

    from sphinx_jaxhlo.predict.front import load_function, structs_of

    start = time.time()
    try:
        compiled = jax.jit(load_function(prog.source)).lower(*structs_of(prog.specs)).compile()
        stats = compiled.memory_analysis()
        memory = {k: int(getattr(stats, k, 0) or 0) for k in (
            "argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes")}
        return {"key": prog.key, "name": prog.name, "hlo": compiled.as_text() or "", "memory": memory,
                "seconds": round(time.time() - start, 2)}
    except Exception as exc:  # a refused compile is a finding of its own
        return {"key": prog.key, "name": prog.name, "error": f"{type(exc).__name__}: {str(exc)[:300]}",
                "seconds": round(time.time() - start, 2)}


def _read_archive(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return out
    with tarfile.open(path, "r:gz") as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member)
            if data is not None and member.name.endswith(".json"):
                row = json.loads(data.read().decode())
                out[row["key"]] = row
    return out


def _write_archive(path: Path, rows: dict[str, dict[str, Any]], versions: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for key, row in sorted(rows.items()):
            blob = json.dumps({**row, "versions": versions}).encode()
            info = tarfile.TarInfo(f"{key}.json")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))


def compile_family(stem: str, out: Path, deadline: float, threads: int, resume: Path | None) -> int:
    import jax
    import jax.numpy  # imported once, before the threads
    import jaxlib

    start = time.time()
    platform = jax.devices()[0].platform
    if platform != "tpu":
        print(f"no TPU here (jax sees {platform}): the chip's own compile is the point", file=sys.stderr)
        return 2
    versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "device": str(jax.devices()[0].device_kind)}
    done = _read_archive(resume) if resume is not None else {}
    todo = [p for p in _programs(stem) if p.key not in done]
    print(f"{len(todo)} programs to compile on {versions['device']}", flush=True)
    pool = ThreadPoolExecutor(threads)
    futures = {pool.submit(_compile_one, p): p for p in todo}
    try:
        for fut in as_completed(futures, timeout=max(1.0, deadline - (time.time() - start))):
            row = fut.result()
            done[row["key"]] = row
            _write_archive(out, done, versions)
            print(f"{len(done):3d} {row['name']}: {row.get('error') or 'compiled'} ({row['seconds']} s)", flush=True)
    except FuturesTimeout:
        left = [p.name for f, p in futures.items() if not f.done()]
        print(f"deadline: {len(left)} programs left out ({', '.join(left[:3])}{', ...' if len(left) > 3 else ''}); "
              "--resume carries on", flush=True)
        os._exit(0)  # the compiles still running are abandoned, not waited for: the archive is written
    pool.shutdown()
    return 0


def chip_truth(prog: Any, hlo: str) -> dict[str, Any]:
    """The truth of ``prog`` read from the chip's optimized HLO as the families read the deviceless one."""
    from guide_predictor_family import jaxpr_facts, truth_of

    from sphinx_jaxhlo.core.report import Report
    from sphinx_jaxhlo.hlo.report_analysis import fill_analysis

    report = Report("f", "tpu:v5e", hlo=hlo)
    fill_analysis(report, None, peak=False)
    facts = jaxpr_facts(prog)
    return truth_of(report, facts["table"], facts["dtype"], facts["dot_operand"])


RECORD = ROOT / "benchmarks" / "tpu_family_chip_tpu-v5e.json"


def compare(stem: str, archive: Path, out: Path = RECORD) -> int:
    """Set the truth read from each chip HLO of ``archive`` beside the family's committed deviceless truth,
    into ``out``'s entry for the family (the other families' entries are kept)."""
    from guide_predictor_family import load_truth

    chip = _read_archive(archive)
    if not chip:
        print(f"{archive}: no program compiled on the chip (a missing or empty archive); the record is left as it is",
              file=sys.stderr)
        return 1
    truth = load_truth(ROOT / "benchmarks" / "data" / f"{stem}_truth.jsonl")
    rows, same, compiled = [], 0, 0
    for prog in _programs(stem):
        row = chip.get(prog.key)
        deviceless = {k: truth.get((prog.key, "tpu:v5e"), {}).get(k) for k in FIELDS}
        entry: dict[str, Any] = {"name": prog.name}
        if row is None or "error" in row:
            entry["chip"] = None if row is None else {"error": row["error"]}
            rows.append(entry)
            continue
        compiled += 1
        found = chip_truth(prog, row["hlo"])
        entry["chip"] = {k: found.get(k) for k in FIELDS}
        entry["same"] = entry["chip"] == deviceless
        if not entry["same"]:
            entry["deviceless"] = deviceless
        entry["chip_compile_seconds"] = row["seconds"]
        same += entry["same"]
        rows.append(entry)
    record = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {"families": {}}
    record["families"][stem] = {
        "versions": next((r.get("versions") for r in chip.values()), {}), "programs": len(rows),
        "compiled_on_chip": compiled, "same_truth": same,
        "differ": [r["name"] for r in rows if r.get("same") is False], "rows": rows}
    fams = record["families"].values()
    record["total"] = {"programs": sum(f["programs"] for f in fams),
                       "compiled_on_chip": sum(f["compiled_on_chip"] for f in fams),
                       "same_truth": sum(f["same_truth"] for f in fams)}
    out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{stem}: {compiled} of {len(rows)} compiled on the chip; the truth read from the chip's HLO equals the "
          f"deviceless one for {same} ({', '.join(record['families'][stem]['differ']) or 'none differ'})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="on the chip: compile each program for the device, keep its HLO")
    c.add_argument("stem")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--deadline", type=float, default=540)
    c.add_argument("--threads", type=int, default=6)
    c.add_argument("--resume", type=Path)
    m = sub.add_parser("compare", help="here: the truth from the chip's HLO beside the committed one")
    m.add_argument("stem")
    m.add_argument("--archive", type=Path, required=True)
    m.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "compile":
        return compile_family(args.stem, args.out, args.deadline, args.threads, args.resume)
    return compare(args.stem, args.archive, args.out or RECORD)


if __name__ == "__main__":
    raise SystemExit(main())
