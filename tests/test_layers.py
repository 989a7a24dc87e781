"""The package's layers, read from its imports (those inside functions included).

Each layer imports only the layers below it; Sphinx is imported only by the
Sphinx package, jax only by the compile side, docutils and Pygments only where
pages are drawn; and no import, at any depth, comes back to where it started.
docs/development.md ("The layers") explains the order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sphinx_jaxhlo"

#: Each layer and the layers it may import (itself included).
LAYERS: dict[str, tuple[str, ...]] = {
    "core": ("core",),
    "hlo": ("core", "hlo"),
    "store": ("core", "hlo", "store"),
    "compiler": ("core", "hlo", "store", "compiler"),
    "pipeline": ("core", "hlo", "store", "compiler", "pipeline"),
    "render": ("core", "hlo", "pipeline", "render"),
    "sphinxext": ("core", "hlo", "store", "compiler", "pipeline", "render", "sphinxext"),
    # the fronts: the Python API and the command line
    "front": ("core", "hlo", "store", "compiler", "pipeline", "render", "front"),
    # the package itself: its names, imported on first use, and Sphinx's ``setup``
    "root": ("core", "hlo", "store", "compiler", "pipeline", "render", "sphinxext", "front", "root"),
}
#: Third-party packages and the layers that alone may import them.
OWNERS: dict[str, tuple[str, ...]] = {
    "sphinx": ("sphinxext",),
    "jax": ("compiler",),
    "jaxlib": ("compiler",),
    "docutils": ("render", "sphinxext"),
    "pygments": ("render", "sphinxext"),
}
#: Feature packages, one folder for a feature whose parts sit in different layers: the layer of
#: each module (a module added to one must be given its layer here).
FEATURE_LAYERS: dict[str, dict[str, str]] = {
    # the chunked rewrite: its code and option are plain data; its proof, checks and search use jax
    "sphinx_jaxhlo.chunking": {"": "core", "source": "core", "rewrite": "compiler", "proof": "compiler",
                               "values": "compiler", "search": "compiler"},
    # the gradient variant: its option and its code are plain data; its calls and the worker's build of it
    # are the compile side's
    "sphinx_jaxhlo.gradient": {"": "core", "option": "core", "source": "core", "calls": "compiler",
                               "build": "compiler"},
    # the guide's rules: the answer is plain data a report stores; the rules trace with jax.make_jaxpr
    # (nothing compiled), so they sit with the compile side; the command line is a front
    "sphinx_jaxhlo.predict": {"": "compiler", "answer": "core", "rules": "core", "graph": "compiler",
                              "simplifier": "compiler", "cpu": "compiler", "h100": "compiler", "tpu": "compiler",
                              "front": "compiler", "conv": "compiler", "ops": "compiler", "gather": "compiler",
                              "command": "front", "norm": "compiler", "agreement": "core", "hook": "compiler",
                              "limits": "compiler", "dots": "compiler", "rng": "compiler", "recipe": "compiler",
                              "calibration": "core",
                              "calibration_table": "core"},
}
#: Lines a module may have, about (the issue's 600, with room for a docstring).
MAX_LINES = 620


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "bundled" not in p.parts}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    feature = FEATURE_LAYERS.get(".".join(parts[:2]))
    if feature is not None:
        return feature[".".join(parts[2:])]
    return parts[1] if parts[1] in LAYERS else "front"


def imports(path: Path, known: dict[str, Path], name: str = "") -> tuple[set[str], set[str]]:
    """The package's modules and the third-party top-level packages that ``path``
    (the module ``name``) imports, wherever in the file (functions,
    ``TYPE_CHECKING`` blocks included)."""
    name = name or module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    own: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                (own if alias.name.split(".")[0] == "sphinx_jaxhlo" else other).add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module.split(".")[0] != "sphinx_jaxhlo":
                other.add(module)
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                own.add(sub if sub in known else module)
    return {m for m in own if m != name}, {m.split(".")[0] for m in other}


@pytest.fixture(scope="module")
def graph() -> dict[str, tuple[set[str], set[str]]]:
    known = modules()
    return {name: imports(path, known) for name, path in known.items()}


def test_the_import_reader_sees_imports_inside_functions_and_relative_ones(tmp_path: Path) -> None:
    nested = tmp_path / "example.py"
    nested.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sphinx.application import Sphinx\n"
                      "def f():\n    from sphinx_jaxhlo.core import report\n    import jax.numpy\n"
                      "    from ..hlo import parse\n    from .sizes import parse_size\n")
    own, other = imports(nested, modules(), name="sphinx_jaxhlo.core.example")
    assert own == {"sphinx_jaxhlo.core.report", "sphinx_jaxhlo.hlo.parse", "sphinx_jaxhlo.core.sizes"}
    assert other == {"typing", "sphinx", "jax"}


def test_no_module_imports_a_layer_above_its_own(graph: dict[str, tuple[set[str], set[str]]]) -> None:
    wrong = [f"{name} ({layer_of(name)}) imports {dep} ({layer_of(dep)})"
             for name, (own, _) in graph.items() for dep in sorted(own)
             if layer_of(dep) not in LAYERS[layer_of(name)]]
    assert not wrong, "\n".join(wrong)


def test_sphinx_jax_docutils_and_pygments_are_imported_only_in_their_layers(
        graph: dict[str, tuple[set[str], set[str]]]) -> None:
    wrong = [f"{name} imports {pkg}" for name, (_, other) in graph.items() for pkg in sorted(other)
             if pkg in OWNERS and layer_of(name) not in OWNERS[pkg]]
    assert not wrong, "\n".join(wrong)


def find_circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``edges``, as the modules along it, or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_circle_finder_finds_a_circle_and_accepts_a_tree() -> None:
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_package_has_no_import_circle(graph: dict[str, tuple[set[str], set[str]]]) -> None:
    edges = {name: {dep for dep in own if dep in graph} for name, (own, _) in graph.items()}
    circle = find_circle(edges)
    assert circle is None, " -> ".join(circle or [])


def test_no_module_is_much_over_600_lines() -> None:
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def test_every_module_of_a_feature_package_has_its_layer() -> None:
    """A feature's folder (chunking) holds modules of several layers: each is declared, so a new one
    cannot slip into the wrong layer unnoticed."""
    for package, layers in FEATURE_LAYERS.items():
        found = {name.removeprefix(package).lstrip(".") for name in modules() if name == package
                 or name.startswith(package + ".")}
        assert found == set(layers), f"{package}: declare the layer of {sorted(found - set(layers))}"
