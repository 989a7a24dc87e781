"""Compare the HLO parser of a git revision with the working tree's, on every stored module.

Usage::

    python tools/parse_oracle.py --rev 3d16a15 [--rounds 3]

Every optimized module the repository stores (``tests/data``, ``docs/_snapshots``,
``docs/_drift`` and the 2000-step chain of ``benchmarks/data``) is parsed by the
parser of ``--rev`` (the package extracted with ``git archive``, run in a
process of its own) and by the working tree's.  Each result is reduced to a
digest of every field of the module (every computation, instruction, shape,
attribute, decoded field and source location), or of the error message for a
text that does not parse; the two must be equal for every module.  The
processes alternate ``--rounds`` times and the fastest time of each side
counts (the machine may be shared).  Prints one line per differing module and
the times: all stored modules together, and the 7 MB chain alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: Run in a process whose sys.path starts with the package to measure.
WORKER = r'''
import dataclasses, gzip, hashlib, json, lzma, sys, time
from pathlib import Path
import sphinx_jaxhlo.hlo.parse as parse
assert Path(parse.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()), parse.__file__
from sphinx_jaxhlo.hlo.model import HloParseError

def dump(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, tuple((f.name, dump(getattr(value, f.name)))
                                            for f in dataclasses.fields(value) if f.name != "_users"))
    if isinstance(value, dict):
        return tuple((k, dump(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(dump(v) for v in value)
    return value

def read(path):
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    elif path.name.endswith(".xz"):
        data = lzma.decompress(data)
    return data.decode("utf-8")

out = {}
for name in json.loads(sys.argv[2]):
    text = read(Path(name))
    start = time.process_time()
    try:
        module = parse.parse_module(text)
    except HloParseError as exc:
        seconds, result = time.process_time() - start, ("error", str(exc))
    else:
        seconds, result = time.process_time() - start, dump(module)
    out[name] = [hashlib.sha256(repr(result).encode()).hexdigest(), seconds, len(text)]
print(json.dumps(out))
'''


def stored_modules() -> list[str]:
    names = []
    for folder in ("tests/data", "docs/_snapshots", "docs/_drift"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.name.endswith(".hlo.gz") or path.suffix == ".txt":  # texts that are not modules: errors compared
                names.append(str(path))
    names.append(str(REPO / "benchmarks" / "data" / "chain2000_cpu.hlo.xz"))
    return names


def extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "sphinx_jaxhlo"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run(root: Path, names: list[str]) -> dict[str, list]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-c", WORKER, str(root), json.dumps(names)], env=env,
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", required=True, help="the revision whose parser is the reference")
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    names = stored_modules()
    chain = names[-1]
    with tempfile.TemporaryDirectory(prefix="jaxhlo-oracle-") as tmp:
        old_root = extract(opts.rev, Path(tmp))
        best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
        results: dict[str, dict[str, list]] = {}
        for _ in range(opts.rounds):
            for side, root in (("old", old_root), ("new", REPO)):
                results[side] = run(root, names)
                for name, (_, seconds, _) in results[side].items():
                    best[side][name] = min(seconds, best[side].get(name, seconds))
    differing = [n for n in names if results["old"][n][0] != results["new"][n][0]]
    for name in differing:
        print(f"differs: {Path(name).relative_to(REPO)}")
    stored = [n for n in names if n != chain]
    size = sum(results["new"][n][2] for n in stored) / 1e6
    total = {side: sum(best[side][n] for n in stored) for side in best}
    print(f"{len(names)} modules, {len(differing)} differ")
    print(f"stored modules ({len(stored)}, {size:.1f} MB): {total['old']:.2f} s at {opts.rev}, "
          f"{total['new']:.2f} s now: {total['old'] / total['new']:.2f}x")
    print(f"chain ({results['new'][chain][2] / 1e6:.1f} MB): {best['old'][chain]:.2f} s at {opts.rev}, "
          f"{best['new'][chain]:.2f} s now: {best['old'][chain] / best['new'][chain]:.2f}x")
    raise SystemExit(1 if differing else 0)


if __name__ == "__main__":
    main()
