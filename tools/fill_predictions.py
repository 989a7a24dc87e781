"""Fill the guide's prediction into committed snapshots, without compiling anything.

A report made by a compile carries the guide's answer for its program (:mod:`sphinx_jaxhlo.predict`,
made from the jaxpr where the compile happened).  Snapshots written before that have none; this tool
adds it: for each snapshot JSON it finds the example's source among the documents' examples (by the
digest the snapshot's identity holds), traces the function with the snapshot's arguments
(``jax.jit(...).trace``, as the compile worker does; nothing is lowered or compiled), and writes the
answer into the snapshot's facts.  Snapshots of a failed compile, of several devices, or whose source
or function is not found are left as they are (counted).

Run from the repository root::

    python tools/fill_predictions.py docs docs/_snapshots          # fill what is missing
    python tools/fill_predictions.py docs docs/_snapshots --all    # recompute every prediction
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def example_sources(docs: Path) -> dict[str, str]:
    """Every example source of the documents under ``docs`` (with its grad and chunk variants), by digest."""
    from sphinx_jaxhlo.core.example import OptionProblem, parse_example
    from sphinx_jaxhlo.pipeline.scan import find_examples, find_notebook_examples

    out: dict[str, str] = {}
    for path in sorted(docs.rglob("*")):
        if path.suffix not in (".md", ".rst", ".ipynb") or "_build" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if path.suffix == ".ipynb":
            try:
                found = find_notebook_examples(json.loads(text).get("cells", []))
            except ValueError:
                continue
        else:
            found = find_examples(text, path.suffix == ".md")
        for example in found:
            if example.argument:
                name = example.argument.strip()
                file = docs / name.lstrip("/") if name.startswith("/") else path.parent / name
                try:
                    source = file.read_text(encoding="utf-8")
                except OSError:
                    continue
            else:
                source = example.content
            out[hashlib.sha256(source.encode("utf-8")).hexdigest()] = source
            try:
                parsed = parse_example(source, example.options).with_chunk_variants().with_grad_variants()
            except (OptionProblem, ValueError):
                continue
            for variant in _variants(parsed):
                out[hashlib.sha256(variant.encode("utf-8")).hexdigest()] = variant
    return out


def _variants(example: Any) -> Iterator[str]:
    yield example.source
    for other in getattr(example, "variants", ()) or ():
        source = getattr(other, "source", None)
        if isinstance(source, str):
            yield source


def predict_snapshot(doc: dict[str, Any], source: str) -> Any:
    """The guide's answer for the snapshot's function, arguments and target."""
    import jax

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
    from sphinx_jaxhlo.core.request import default_function
    from sphinx_jaxhlo.core.specs import parse_args
    from sphinx_jaxhlo.predict.front import predict_jaxpr
    from sphinx_jaxhlo.predict.hook import with_flags

    ident = doc["identity"]
    name = ident.get("source_name", "example.py")
    namespace: dict[str, Any] = {"__name__": "__jaxhlo_example__", "__file__": name}
    exec(compile(source, name, "exec"), namespace)
    function = ident["function"] or default_function(source)
    fn = namespace[function]
    static = {key: ast.literal_eval(text) for key, text in ident.get("static") or []}
    args, kwargs = to_shape_dtype_structs(parse_args(ident.get("args", "")))
    kwargs.update(static)
    closed = jax.jit(fn, static_argnames=tuple(static)).trace(*args, **kwargs).jaxpr
    command = f"python -m sphinx_jaxhlo {name}:{function} --targets {ident['target']}"
    return with_flags(predict_jaxpr(closed, ident["target"], command),
                      {str(k): str(v) for k, v in ident.get("xla_flags") or []})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docs", type=Path, help="the documents' folder")
    parser.add_argument("snapshots", type=Path, help="the snapshots' folder")
    parser.add_argument("--all", action="store_true", help="recompute predictions already there")
    ns = parser.parse_args(argv)
    from sphinx_jaxhlo.core.targets import get_target
    from sphinx_jaxhlo.predict.front import base_target

    sources = example_sources(ns.docs)
    counts = {"filled": 0, "kept": 0, "failed compile": 0, "several devices": 0, "no rules": 0,
              "source not found": 0, "error": 0}
    for path in sorted(ns.snapshots.rglob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        facts, ident = doc.get("facts", {}), doc.get("identity", {})
        if "prediction" in facts and not ns.all:
            counts["kept"] += 1
            continue
        if facts.get("error"):
            counts["failed compile"] += 1
            continue
        try:
            base_target(ident.get("target", ""))
        except ValueError:
            counts["no rules"] += 1
            continue
        if ident.get("mesh") or get_target(ident["target"]).device_count > 1:
            counts["several devices"] += 1
            continue
        source = sources.get(ident.get("source_sha256", ""))
        if source is None:
            counts["source not found"] += 1
            continue
        try:
            answer = predict_snapshot(doc, source)
        except Exception as exc:  # an example the tool cannot rebuild: said, left as it is
            counts["error"] += 1
            print(f"{path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        facts["prediction"] = answer.to_dict()
        path.write_text(json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        counts["filled"] += 1
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
