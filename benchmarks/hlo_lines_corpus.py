"""The two readers of HLO text on every stored module: the reader of ordinary lines
(``sphinx_jaxhlo/hlo/lines.py``) must give the module the token grammar gives.

Every optimized module the docs store (``docs/_snapshots`` and ``docs/_drift``, about 3,200 modules and
57 MB) is read by both, which takes about three minutes, so the comparison is a run whose record the
tests read (``tests/test_hlo_lines.py``): the record names a digest of the texts it compared, and a test
fails when the stored modules are no longer those (an example compiled again, a release added to the
drift folder) until this is run again.

Run: ``python benchmarks/hlo_lines_corpus.py``; writes ``benchmarks/hlo_lines_corpus.json``.
"""

from __future__ import annotations

import dataclasses
import datetime
import gzip
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "hlo_lines_corpus.json"
FOLDERS = (ROOT / "docs" / "_snapshots", ROOT / "docs" / "_drift")


def dump(value: Any) -> Any:
    """Every field of a parsed module, as plain nested values (the objects compare by identity)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, tuple((f.name, dump(getattr(value, f.name))) for f in dataclasses.fields(value)
                                            if f.name != "_users"))
    if isinstance(value, dict):
        return tuple((k, dump(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(dump(v) for v in value)
    return value


def by_grammar(text: str) -> Any:
    """The module the token grammar reads, dumped, or its error."""
    from sphinx_jaxhlo.hlo.model import HloParseError
    from sphinx_jaxhlo.hlo.parse import _Parser

    try:
        return dump(_Parser(text).module())
    except HloParseError as exc:
        return ("error", str(exc))


def stored_texts(*folders: Path) -> dict[str, str]:
    """Every stored HLO module under ``folders``, by its path from the repository's root."""
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.name.endswith(".hlo.gz"):
                out[str(path.relative_to(ROOT))] = gzip.decompress(path.read_bytes()).decode("utf-8")
            elif path.suffix == ".txt" and not path.name.endswith(".error.txt"):
                out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return {name: text for name, text in out.items() if text.lstrip().startswith("HloModule")}


def digest(texts: dict[str, str]) -> str:
    """One digest of the modules' names and texts."""
    h = hashlib.sha256()
    for name in sorted(texts):
        h.update(name.encode() + b"\0" + hashlib.sha256(texts[name].encode()).digest())
    return h.hexdigest()


def disagreement(text: str) -> str:
    """Why the two readers differ on ``text``, or ``""``."""
    from sphinx_jaxhlo.hlo.lines import read_lines

    module = read_lines(text)
    if module is None:
        return "the lines reader left XLA's own output to the grammar"
    return "" if dump(module) == by_grammar(text) else "the modules differ"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    start = time.perf_counter()
    texts = stored_texts(*FOLDERS)
    differ = [{"module": name, "why": why} for name, text in texts.items() if (why := disagreement(text))]
    record = {"generated": datetime.date.today().isoformat(), "modules": len(texts),
              "megabytes": round(sum(map(len, texts.values())) / 1e6, 1), "digest": digest(texts),
              "seconds": round(time.perf_counter() - start), "differ": differ}
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"{len(texts)} modules, {len(differ)} differ, {record['seconds']} s: {RECORD.relative_to(ROOT)}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
