"""Links into this package's guide, from a reason's alternatives.

The renderer marks each alternative as a
:class:`~sphinx_jaxhlo.render.nodes.jaxhlo_alternative` (its label and title);
here it becomes a ``std:ref`` cross-reference, which Sphinx resolves against the
site's own labels or, through intersphinx, another site's.  Where neither knows
the label, ``_unresolved_alternative`` (:mod:`sphinx_jaxhlo.sphinxext.extension`)
leaves the title as text, with no warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from sphinx_jaxhlo.render.nodes import jaxhlo_alternative

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def alternative_xref(node: jaxhlo_alternative) -> addnodes.pending_xref:
    """The cross-reference to ``node``'s label, around its title, with its classes
    (``jaxhlo-alternative``: what the missing-reference handler looks for)."""
    ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=node["label"], refexplicit=True,
                                refwarn=False, classes=list(node["classes"]))
    ref.extend(child.deepcopy() for child in node.children)
    return ref


class AlternativeLinks(SphinxPostTransform):
    """Make every alternative of the document a cross-reference.

    The examples are rendered on ``doctree-read``, after the read transforms, so
    this is a post-transform: one that runs before Sphinx resolves references.
    """

    #: Before ``ReferencesResolver`` (10).
    default_priority = 5

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(jaxhlo_alternative)):
            node.replace_self(alternative_xref(node))


def setup_links(app: Sphinx) -> None:
    """Register the transform (``setup`` calls it)."""
    app.add_post_transform(AlternativeLinks)
