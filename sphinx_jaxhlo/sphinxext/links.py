"""Links into this package's guide, from a reason's alternatives and from pages.

The renderer marks each alternative as a
:class:`~sphinx_jaxhlo.render.nodes.jaxhlo_alternative` (its label and title);
here it becomes a ``std:ref`` cross-reference, which Sphinx resolves against the
site's own labels or, through intersphinx, another site's.  Where neither knows
the label, ``_unresolved_alternative`` (:mod:`sphinx_jaxhlo.sphinxext.extension`)
leaves the title as text, with no warning.

``jaxhlo_guide_url`` says where the guide is published; :func:`add_guide_inventory`
then gives intersphinx a ``jaxhlo`` entry: links to that address, labels read
from the ``objects.inv`` there, else from the inventory shipped in the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from sphinx_jaxhlo.render.nodes import jaxhlo_alternative
from sphinx_jaxhlo.sphinxext.config import setting_location

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

logger = logging.getLogger(__name__)


def alternative_xref(node: jaxhlo_alternative) -> addnodes.pending_xref:
    """The cross-reference to ``node``'s label, around its title, with its classes
    (``jaxhlo-alternative``: what the missing-reference handler looks for)."""
    ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=node["label"], refexplicit=True,
                                refwarn=False, classes=list(node["classes"]))
    # the title in an inline, as a role's cross-reference holds it (Sphinx copies the first child as the link's content)
    ref += nodes.inline("", "", *(child.deepcopy() for child in node.children))
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


#: The inventory of the installed release's guide, shipped in the package.
SHIPPED_INVENTORY = Path(__file__).resolve().parent.parent / "inventory" / "objects.inv"
#: The name of the guide's intersphinx entry (the prefix of ``:ref:`jaxhlo:label```).
INVENTORY_NAME = "jaxhlo"


def add_guide_inventory(app: Sphinx, config: Config) -> None:
    """``config-inited``, before intersphinx reads its mapping: with
    ``jaxhlo_guide_url``, the ``jaxhlo`` entry (unless the project has one)."""
    url = config.jaxhlo_guide_url
    if not url:
        return
    if "sphinx.ext.intersphinx" not in app.extensions:
        logger.warning("jax-hlo: jaxhlo_guide_url is set, but sphinx.ext.intersphinx is not in extensions: "
                       "nothing links to the guide", type="jaxhlo", subtype="config",
                       location=setting_location(app, "jaxhlo_guide_url"))
        return
    mapping = config.intersphinx_mapping
    if INVENTORY_NAME not in mapping:
        # the published inventory first (None: <url>/objects.inv), the shipped one when that cannot be read;
        # a new dict: the default one may be shared with other applications of this process
        config.intersphinx_mapping = {**mapping, INVENTORY_NAME: (url, (None, str(SHIPPED_INVENTORY)))}


def setup_links(app: Sphinx) -> None:
    """Register the transform and the inventory (``setup`` calls it)."""
    app.add_post_transform(AlternativeLinks)
    # after the settings are checked (500), before intersphinx reads its mapping (800)
    app.connect("config-inited", add_guide_inventory, priority=600)
