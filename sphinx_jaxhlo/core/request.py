"""A compile request: everything that determines one report, and its cache key."""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.core.report import SCHEMA_VERSION
from sphinx_jaxhlo.core.specs import ArgSpecs, MeshSpec
from sphinx_jaxhlo.core.version import __version__

#: Parts a directive can show, in display order.
SHOW_PARTS = ("source", "summary", "graph", "memory", "cost", "hlo", "stablehlo", "jaxpr")
#: Parts every example shows unless it says ``:show:`` (the directive, the API and the
#: command line): the source first, since the findings name its lines.
DEFAULT_SHOW: tuple[str, ...] = ("source", "summary", "memory", "hlo")



@functools.lru_cache(maxsize=1024)
def default_function(source: str) -> str | None:
    """The name of the last top-level ``def`` of ``source`` (what an example
    compiles without ``:function:``), or ``None`` (none, or the source does
    not parse).  Kept per source: the directive, the forecast, the plan and the
    page ask for the same example's, and parsing it is most of what they pay."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return names[-1] if names else None

#: The package's folder.
PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: Where reports are made (the compile worker) and the data it reads: a report
#: depends on these modules, on every module they import, and on these folders.
REPORT_CODE = (("sphinx_jaxhlo.compiler.worker",), ("gpu_targets",))
#: Where an example's page is drawn, and the files every page loads.
RENDER_CODE = (("sphinx_jaxhlo.sphinxext.documents", "sphinx_jaxhlo.sphinxext.html",
                "sphinx_jaxhlo.render.standalone_html"), ("static",))


def package_modules() -> dict[str, Path]:
    """Every module of the package, by name, and its file."""
    root = PACKAGE_DIR.parent
    out = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


#: An import statement of this package's modules (the code is formatted: one statement a line).
_IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+(sphinx_jaxhlo[\w.]*)"
                     r"|from[ \t]+(\.+[\w.]*|sphinx_jaxhlo[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*))",
                     re.MULTILINE)


def imported_modules(start: tuple[str, ...]) -> dict[str, Path]:
    """``start`` and every module of this package they import, at any depth
    (imports inside functions included), read from the source: name -> file."""
    known = package_modules()
    seen: dict[str, Path] = {}
    todo = list(start)
    while todo:
        name = todo.pop()
        path = known.get(name)
        if name in seen or path is None:
            continue
        seen[name] = path
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for match in _IMPORT.finditer(path.read_text(encoding="utf-8")):
            plain, module, names = match.groups()
            if plain:
                todo.append(plain)
                continue
            if module.startswith("."):
                dots = len(module) - len(module.lstrip("."))
                parts = package.split(".")
                module = ".".join([*parts[:len(parts) - dots + 1], module.lstrip(".")]).strip(".")
            listed = (n.split(" as ")[0].strip() for n in names.strip("()").replace("\n", ",").split(","))
            subs = [f"{module}.{n}" for n in listed if f"{module}.{n}" in known]
            todo += subs or [module]
    return seen


def code_digest(code: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    """A digest of the modules ``code[0]`` import (:func:`imported_modules`)
    and of every file of the data folders ``code[1]``: names and contents."""
    modules, folders = code
    files = list(imported_modules(modules).values())
    files += [p for folder in folders for p in (PACKAGE_DIR / folder).rglob("*") if p.is_file()]
    digest = hashlib.sha256()
    for path in sorted(set(files)):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.cache
def code_fingerprint() -> str:
    """A digest of the code that makes reports (derived from what the compile
    worker imports, not from a list), so that a fix to the analysis
    invalidates reports cached before it, even without a version bump."""
    return code_digest(REPORT_CODE)


@functools.cache
def render_fingerprint() -> str:
    """A digest of the code that turns reports into pages (what the page's
    renderers import), for the HTML kept between builds."""
    return code_digest(RENDER_CODE)


@functools.cache
def installed_versions() -> tuple[tuple[str, str], ...]:
    """The versions that go into every cache key: jax, jaxlib, the GPU/TPU
    compilers, and the user's ``XLA_FLAGS`` (they reach the worker and can
    change what XLA does).  Read from package metadata: nothing is imported."""
    from sphinx_jaxhlo.core.targets import package_versions

    versions = package_versions()
    if os.environ.get("XLA_FLAGS"):
        versions["XLA_FLAGS"] = os.environ["XLA_FLAGS"]
    return tuple(sorted(versions.items()))


@dataclass(frozen=True)
class CompileRequest:
    """Compile ``function`` of the module ``source`` for one target.

    ``source_name`` is the file name the example is compiled under; the HLO
    metadata refers to it, which is how source lines are mapped back.
    """

    source: str
    function: str
    specs: ArgSpecs
    target: str
    #: Static arguments: name -> Python literal, as text (``chunk=1000``).
    static: tuple[tuple[str, str], ...] = ()
    xla_flags: tuple[tuple[str, str], ...] = ()
    #: Extra texts to produce: "stablehlo", "jaxpr".
    extras: tuple[str, ...] = ()
    source_name: str = "example.py"
    #: Arguments to donate (``donate_argnames``/``donate_argnums``): names, or
    #: positions written as digits.
    donate: tuple[str, ...] = ()
    #: :meth:`Target.fingerprint` of the target, part of the key.
    target_fingerprint: str = ""
    #: Installed versions of jax, jaxlib and the compiler plugins.
    versions: tuple[tuple[str, str], ...] = field(default=())
    #: The ``:mesh:`` the example runs on, ``None`` when it names none.
    mesh: MeshSpec | None = None
    #: For a ``:chunk:`` variant: what the worker proves and checks before compiling it
    #: (``of``, ``argnums``, ``size``, ``axis``, ``combine``), as JSON text; ``""`` otherwise.
    chunk: str = ""
    #: What a suggested chunking's stored intermediate may take (``jaxhlo_chunk_budget``);
    #: 0: the default, :data:`sphinx_jaxhlo.chunking.source.DEFAULT_CHUNK_BUDGET`.
    chunk_budget: int = 0

    def to_json(self) -> dict[str, Any]:
        data = self._to_json()
        if self.mesh is not None:
            data["mesh"] = self.mesh.to_json()
        if self.chunk:
            data["chunk"] = self.chunk
        if self.chunk_budget:
            data["chunk_budget"] = self.chunk_budget
        return data

    def _to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "function": self.function,
            "specs": self.specs.to_json(),
            "target": self.target,
            "static": [list(p) for p in self.static],
            "xla_flags": [list(p) for p in self.xla_flags],
            "extras": list(self.extras),
            "source_name": self.source_name,
            "donate": list(self.donate),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CompileRequest:
        return cls(
            source=data["source"],
            function=data["function"],
            specs=ArgSpecs.from_json(data["specs"]),
            target=data["target"],
            static=tuple((k, v) for k, v in data["static"]),
            xla_flags=tuple((k, v) for k, v in data["xla_flags"]),
            extras=tuple(data["extras"]),
            source_name=data["source_name"],
            donate=tuple(data.get("donate", ())),
            mesh=MeshSpec.from_json(data["mesh"]) if data.get("mesh") else None,
            chunk=data.get("chunk", ""),
            chunk_budget=int(data.get("chunk_budget", 0)),
        )

    def cache_key(self) -> str:
        """A hash of everything that determines the report, and nothing else."""
        payload = {
            "request": self.to_json(),
            "target_fingerprint": self.target_fingerprint,
            "versions": sorted(self.versions),
            "extension": __version__,
            "schema": SCHEMA_VERSION,
            "code": code_fingerprint(),
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()


@dataclass(frozen=True)
class CallRequest:
    """Compile a function object sent pickled (:class:`sphinx_jaxhlo.compiler.calls.Call`)
    for one target: what :func:`sphinx_jaxhlo.analyze` sends.  With
    ``cache_dir``, the worker looks the report up (and stores it) by
    :func:`lowered_cache_key`."""

    #: The pickled call, base64.
    payload: str
    function: str
    target: str
    xla_flags: tuple[tuple[str, str], ...] = ()
    extras: tuple[str, ...] = ()
    #: The base name of the function's file, as the HLO metadata names it.
    source_name: str = "example.py"
    #: The text of that file, for the report.
    source: str = ""
    cache_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "call", "payload": self.payload, "function": self.function, "target": self.target,
                "xla_flags": dict(self.xla_flags), "extras": list(self.extras), "source_name": self.source_name,
                "source": self.source, "cache_dir": self.cache_dir}


def lowered_cache_key(lowered_text: str, target: str, target_fingerprint: str, xla_flags: dict[str, str],
                      extras: tuple[str, ...], source_name: str) -> str:
    """The cache key of a function compiled by :func:`sphinx_jaxhlo.analyze`:
    a hash of the module it lowered to (with its source locations), and of
    what :meth:`CompileRequest.cache_key` also holds (target, compiler
    options, versions, this package's report code)."""
    payload = {
        "lowered": hashlib.sha256(lowered_text.encode()).hexdigest(),
        "target": target,
        "target_fingerprint": target_fingerprint,
        "xla_flags": sorted(xla_flags.items()),
        "extras": sorted(extras),
        "source_name": source_name,
        "versions": sorted(installed_versions()),
        "extension": __version__,
        "schema": SCHEMA_VERSION,
        "code": code_fingerprint(),
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()
