"""The snippets of docs/linking.md, pasted into a project configured like JAX's docs.

JAX builds its docs with MyST-NB and enables only ``dollarmath`` among MyST's
extensions (no ``colon_fence``), and writes docstrings in reStructuredText
read by autodoc and napoleon.  Each fenced block of linking.md goes where the
page says it goes: the ``python`` block into ``conf.py`` (its address made one
that never resolves, so the labels come from the inventory shipped in the
package, as on a machine offline), the ``rst`` block into a docstring, the ``md`` block into a Markdown page; the
project is built with ``-W``, and every "see also" must come out as an
admonition with working links into the guide.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[1]
SITE = "https://sphinx-jaxhlo.readthedocs.io/en/latest/"
#: Where the built project's links go: the snippet's address, made one that never resolves (RFC 2606).
LINKED = SITE.replace("readthedocs.io", "invalid")

#: The labels the snippets link to, as the site's objects.inv lists them.
LABELS = {
    "jaxhlo-guide": ("guide/index.html#$", "Fusion, reductions and memory across backends"),
    "jaxhlo-guide-check-your-code": ("guide/check-your-code.html#$", "Checking your own code"),
}

JAX_LIKE_CONF = '''\
# What JAX's docs/conf.py sets that matters here.
import os, sys
sys.path.insert(0, os.path.abspath("."))
project = "jaxlike"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_nb",
]
myst_enable_extensions = ["dollarmath"]
nb_execution_mode = "off"
source_suffix = [".rst", ".ipynb", ".md"]
'''


def snippets() -> dict[str, str]:
    """The fenced blocks of linking.md by language (one each)."""
    tokens = MarkdownIt("commonmark").parse((REPO / "docs" / "linking.md").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for token in tokens:
        if token.type == "fence":
            language = token.info.split()[0]
            assert language not in found, f"a second {language} block: give it a place in this test"
            found[language] = token.content
    return found


def shipped_labels() -> dict[str, tuple[str, str]]:
    """``std:label`` name -> (URI, title) of the inventory that ships in the package."""
    from sphinx.util.inventory import InventoryFile

    import sphinx_jaxhlo

    with open(sphinx_jaxhlo.inventory(), "rb") as f:
        inv = InventoryFile.load(f, "", lambda base, uri: base + uri)
    data = inv.data if hasattr(inv, "data") else inv
    out = {}
    for name, item in data["std:label"].items():
        uri, title = (item.uri, item.display_name) if hasattr(item, "uri") else (item[2], item[3])
        out[name] = (uri, title)
    return out


def test_the_shipped_inventory_has_the_labels_the_snippets_use() -> None:
    labels = shipped_labels()
    for name, (uri, _title) in LABELS.items():  # the snippets give their own link texts
        assert labels[name][0] == uri.replace("$", name), name


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = snippets()
    assert set(found) == {"python", "rst", "md"}, set(found)
    src = tmp_path_factory.mktemp("jaxlike")
    # the snippet as written: the guide's published address; this machine cannot reach it (nor may a
    # docs host), so the labels come from the inventory shipped in the package, with no warning
    conf_snippet = found["python"]
    assert "jaxhlo_guide_url = " in conf_snippet
    conf = JAX_LIKE_CONF + conf_snippet
    # the snippet's `extensions = [...]` replaces the list above: keep JAX's extensions too
    conf += '\nextensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_nb", *extensions]\n'
    (src / "conf.py").write_text(conf, encoding="utf-8")
    docstring = textwrap.indent(found["rst"], "    ")
    (src / "mymod.py").write_text(f'def jit(f):\n    """Compile f.\n\n{docstring}    """\n', encoding="utf-8")
    (src / "index.md").write_text(
        "# Home\n\n```{toctree}\napi\npage\ncolon\n```\n", encoding="utf-8")
    (src / "api.rst").write_text("API\n===\n\n.. autofunction:: mymod.jit\n", encoding="utf-8")
    (src / "page.md").write_text(f"# Page\n\nMath works: $x^2$.\n\n{found['md']}\n"
                                 "Unprefixed: {ref}`jaxhlo-guide`.\n", encoding="utf-8")
    colon = found["md"].replace("```{seealso}", ":::{seealso}").replace("\n```", "\n:::")
    (src / "colon.md").write_text(f"# Colon\n\n{colon}\n", encoding="utf-8")
    out = src.parent / "html"
    # the published inventory is fetched from an address that does not resolve (.invalid): the shipped one serves
    conf_file = src / "conf.py"
    conf_file.write_text(conf_file.read_text().replace(SITE, LINKED))
    run = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-N", "-q",
                          str(src), str(out)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out


def seealso_links(html: Path) -> list[tuple[str, str]]:
    soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
    boxes = soup.select("div.admonition.seealso")
    assert len(boxes) == 1, html.name
    return [(a["href"], a.get_text(" ", strip=True)) for a in boxes[0].select("a.reference.external")]


def test_the_docstring_snippet_links_into_the_guide(built: Path) -> None:
    assert seealso_links(built / "api.html") == [
        (f"{LINKED}guide/index.html#jaxhlo-guide", "Fusion, reductions and memory across backends"),
        (f"{LINKED}guide/check-your-code.html#jaxhlo-guide-check-your-code", "Checking your own code"),
    ]


def test_the_myst_snippet_works_with_only_dollarmath(built: Path) -> None:
    assert seealso_links(built / "page.html") == [
        (f"{LINKED}guide/index.html#jaxhlo-guide", "Fusion, reductions and memory across backends"),
        (f"{LINKED}guide/check-your-code.html#jaxhlo-guide-check-your-code", "how to check your own code"),
    ]
    page = (built / "page.html").read_text(encoding="utf-8")
    assert "{external+" not in page and "```" not in page
    # the unprefixed :ref: the page mentions also resolves
    soup = BeautifulSoup(page, "html.parser")
    assert any(a["href"] == f"{LINKED}guide/index.html#jaxhlo-guide" for a in soup.select("p a.reference.external")
               if "Unprefixed" in a.parent.get_text())


def test_a_colon_fence_is_plain_text_in_such_a_project(built: Path) -> None:
    """What the page warns about: without colon_fence, ``:::`` renders as text, silently."""
    soup = BeautifulSoup((built / "colon.html").read_text(encoding="utf-8"), "html.parser")
    assert not soup.select("div.admonition")
    assert ":::{seealso}" in soup.get_text()
