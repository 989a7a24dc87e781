"""The guide keeps every label the shipped inventory promises.

Other projects link to the guide's sections and examples through intersphinx
(``sphinx_jaxhlo/inventory/objects.inv``, see docs/linking.md): a label that leaves
``docs/guide`` breaks their links.  When a section goes, its label moves to where its
content now lives.  No build needed: the sources are read as text.
"""

from __future__ import annotations

import re
from pathlib import Path

import sphinx_jaxhlo

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide"


def shipped_guide_labels() -> set[str]:
    """The ``std:label`` entries of the shipped inventory that point into the guide."""
    from sphinx.util.inventory import InventoryFile

    with open(sphinx_jaxhlo.inventory(), "rb") as f:
        inv = InventoryFile.load(f, "https://example.invalid/", lambda base, uri: base + uri)
    data = inv.data if hasattr(inv, "data") else inv
    return {name for name, item in data["std:label"].items()
            if "/guide/" in (item.uri if hasattr(item, "uri") else item[2])}


def guide_labels() -> list[str]:
    """Section labels (``(name)=``) and example names (``:name: name``) of docs/guide."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(GUIDE.glob("*.md")))
    return re.findall(r"^\((jaxhlo-[a-z0-9-]+)\)=$", text, flags=re.M) + \
        re.findall(r"^:name: (jaxhlo-[a-z0-9-]+)$", text, flags=re.M)


def test_every_shipped_guide_label_is_still_in_the_guide() -> None:
    shipped = shipped_guide_labels()
    assert len(shipped) > 150  # sections and examples
    missing = sorted(shipped - set(guide_labels()))
    assert not missing, f"labels other projects may link to are gone from docs/guide: {missing}"


def test_no_guide_label_is_defined_twice() -> None:
    labels = guide_labels()
    assert len(labels) == len(set(labels)), sorted({x for x in labels if labels.count(x) > 1})
