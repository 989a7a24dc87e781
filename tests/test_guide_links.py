"""A reason's alternatives link into the guide in a Sphinx site (:mod:`sphinx_jaxhlo.sphinxext.links`).

The renderer marks each alternative (:func:`sphinx_jaxhlo.render.parts.alternative_ref`);
in a build, the extension makes it a cross-reference to the guide's label: a link
where the site has the label, its title as text, with no warning, where it does not.
No compile: a small extension of the test project puts the marks on the page.
"""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

CONF = '''\
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
extensions = ["sphinx_jaxhlo", "marks"]
jaxhlo_targets = ["cpu"]
'''

#: Puts two alternatives on the page once the examples are rendered (``doctree-read``),
#: where the renderer's nodes appear in a build.
MARKS = '''\
from docutils import nodes

from sphinx_jaxhlo.render.parts import alternative_ref


def add_marks(app, doctree):
    p = nodes.paragraph(classes=["marks"])
    p += alternative_ref("jaxhlo-guide-bounded-scan")
    p += nodes.Text("; ")
    p += alternative_ref("jaxhlo-guide-bounded-map")
    doctree += p


def setup(app):
    app.connect("doctree-read", add_marks, priority=900)
    return {"parallel_read_safe": True}
'''

INDEX = """\
Page
====

.. _jaxhlo-guide-bounded-scan:

Bounded scan
------------

Text.
"""


def test_an_alternative_links_to_a_label_of_the_site_and_is_text_where_there_is_none(tmp_path: Path) -> None:
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF)
    (src / "marks.py").write_text(MARKS)
    (src / "index.rst").write_text(INDEX)
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build")
    try:
        app.build()
        warnings = app.warning.getvalue()
        page = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    finally:
        app.cleanup()
    assert "WARNING" not in warnings, warnings
    (marks,) = BeautifulSoup(page, "html.parser").select("p.marks")
    (link,) = marks.find_all("a")
    assert link["href"] == "#jaxhlo-guide-bounded-scan"
    assert link.get_text() == "lax.scan over chunks, reducing inside the loop"
    # the site has no section of that label: the title, as text
    assert marks.get_text() == "lax.scan over chunks, reducing inside the loop; lax.map over chunks, reducing inside"


def _build(tmp_path: Path, conf: str) -> tuple[str, str]:
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(conf)
    (src / "marks.py").write_text(MARKS)
    (src / "index.rst").write_text("Page\n====\n\nA page of another project.\n")
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "build")
    try:
        app.build()
        return app.warning.getvalue(), (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    finally:
        app.cleanup()


#: An address that never resolves (RFC 2606): the published inventory cannot be read there.
GUIDE = "https://guide.invalid/en/latest/"


def test_with_jaxhlo_guide_url_alternatives_link_to_the_published_guide(tmp_path: Path) -> None:
    """The labels come from the inventory shipped in the package when the published one
    cannot be read, without a warning; the links go to the published address."""
    conf = CONF.replace('"sphinx_jaxhlo"', '"sphinx.ext.intersphinx", "sphinx_jaxhlo"')
    conf += f"jaxhlo_guide_url = {GUIDE!r}\n"
    warnings, page = _build(tmp_path, conf)
    assert "WARNING" not in warnings, warnings
    (marks,) = BeautifulSoup(page, "html.parser").select("p.marks")
    assert [a["href"] for a in marks.find_all("a")] == [
        f"{GUIDE}guide/bounded.html#jaxhlo-guide-bounded-scan", f"{GUIDE}guide/bounded.html#jaxhlo-guide-bounded-map"]


def test_without_it_nothing_links_out(tmp_path: Path) -> None:
    warnings, page = _build(tmp_path, CONF.replace('"sphinx_jaxhlo"', '"sphinx.ext.intersphinx", "sphinx_jaxhlo"'))
    assert "WARNING" not in warnings, warnings
    (marks,) = BeautifulSoup(page, "html.parser").select("p.marks")
    assert marks.find_all("a") == [] and "lax.scan over chunks" in marks.get_text()


def test_the_guide_url_needs_intersphinx(tmp_path: Path) -> None:
    warnings, _ = _build(tmp_path, CONF + f"jaxhlo_guide_url = {GUIDE!r}\n")
    assert "jaxhlo_guide_url is set, but sphinx.ext.intersphinx is not in extensions" in warnings, warnings
    assert "conf.py:5" in warnings and "[jaxhlo.config]" in warnings
