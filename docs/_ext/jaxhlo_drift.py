"""The drift page's tables: what moved in the guide between jax releases.

``nox -s drift`` compiles the guide with each older jax release into
``docs/_drift/jax-<version>/`` (a snapshot folder, committed); this directive
compares each with the docs' own snapshots (the current release) at build
time, with :func:`sphinx_jaxhlo.store.releases.compare_folders`, so the page is
rebuilt without the old jax and follows the current snapshots.  The analyses
and comparisons are kept in the build's jax-hlo cache: a page whose snapshots
did not change costs their reading only.

Usage (MyST)::

    ```{jaxhlo-drift}
    :under: guide
    ```
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from jaxhlo_docs import table_node
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import NoUri
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.sphinxext.builds import cache_for
from sphinx_jaxhlo.store.drift import versions_text
from sphinx_jaxhlo.store.releases import ReleaseDrift, SlotDrift, compare_folders
from sphinx_jaxhlo.store.snapshots import SnapshotError

logger = logging.getLogger(__name__)

#: Beside conf.py: one folder per older release.
DRIFT_DIR = "_drift"
#: How many examples a "not compared" reason names before it counts the rest.
_NAMED = 8


def _release_key(folder: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", folder.name))


def _para(*children: nodes.Node) -> nodes.paragraph:
    return nodes.paragraph("", "", *children)


def _change(before: str, after: str) -> nodes.paragraph:
    if before == after:
        return _para(nodes.Text(after))
    return _para(nodes.Text(f"{before} → "), nodes.strong(text=after))


def _size_change(before: int | None, after: int | None) -> nodes.paragraph:
    """Sizes in words, or in bytes where the words are the same and the bytes are not."""
    old, new = format_bytes(before), format_bytes(after)
    if old == new and before != after and before is not None and after is not None:
        return _change(f"{before:,} B", f"{after:,} B")
    return _change(old, new)


class DriftTables(SphinxDirective):
    """One section per older release: the slots whose temp, device memory, peak or verdict moved."""

    option_spec: ClassVar[dict[str, Any]] = {"under": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        confdir = Path(self.env.app.confdir)
        snapshot_dir = self.config.jaxhlo_snapshot_dir
        under = self.options.get("under", "").strip("/")
        drift_root = confdir / DRIFT_DIR
        releases = sorted((p for p in drift_root.glob("jax-*") if p.is_dir()), key=_release_key, reverse=True)
        if not snapshot_dir or not releases:
            logger.warning("jaxhlo-drift: no snapshots of an older release in %s (run nox -s drift)", drift_root,
                           location=(self.env.docname, self.lineno))
            return []
        current = confdir / snapshot_dir
        for folder in (current / under, *(r / under for r in releases)):
            for path in folder.rglob("*"):
                if path.is_file():
                    self.env.note_dependency(str(path))
        out: list[nodes.Node] = []
        for release in releases:
            try:
                result = compare_folders(release, current, under, float(self.config.jaxhlo_drift_tolerance),
                                         cache=cache_for(self.env.app))
            except SnapshotError as exc:
                logger.warning("jaxhlo-drift: %s: %s", release, exc, location=(self.env.docname, self.lineno))
                continue
            out += self._section(release, result)
        return out

    def _section(self, release: Path, result: ReleaseDrift) -> list[nodes.Node]:
        old = result.before.get("jax", release.name.removeprefix("jax-"))
        new = result.after.get("jax", "the current release")
        section = nodes.section(ids=[f"jaxhlo-drift-{nodes.make_id(release.name)}"])
        section += nodes.title(text=f"jax {old} → {new}")
        compared = len(result.moved) + result.unchanged
        beyond = sum(s.drift.significant for s in result.moved)
        section += _para(nodes.Text(
            f"{compared} (example, function, target) compiled by both: {len(result.moved)} moved "
            f"({beyond} beyond the drift tolerance or with another verdict), {result.unchanged} unchanged"
            + (f"; {len(result.not_compared)} not compared" if result.not_compared else "") + "."))
        section += _para(nodes.Text(f"Before: {versions_text(result.before)}. After: {versions_text(result.after)}."))
        if result.current:
            section += _para(nodes.Text(
                f"Coverage: jax {old} made {result.covered} of the current release's {result.current} snapshots "
                f"({result.covered / result.current:.0%})"
                + ("; each slot it did not make, or failed to compile, is under “Not compared” with the reason."
                   if result.not_compared else ".")))
        significant = [slot for slot in result.moved if slot.drift.significant]
        minor = [slot for slot in result.moved if not slot.drift.significant]
        if significant:
            section += self._moved(significant)
        if minor:
            tolerance = float(self.config.jaxhlo_drift_tolerance)
            section += _para(nodes.Text(f"Moved by less than the drift tolerance ({tolerance:.0%} of temp and of the "
                                        f"device memory), "
                                        f"with the same verdict ({len(minor)}):"))
            section += self._moved(minor)
        if result.not_compared:
            # by reason, then by example (a slot is example.function.target): a few examples named, the
            # rest counted (a release that predates a page's examples has hundreds of such slots)
            by_reason: dict[str, dict[str, int]] = {}
            for slot, why in result.not_compared:
                example = slot.rpartition("/")[2].rsplit(".", 2)[0]
                counts = by_reason.setdefault(why, {})
                counts[example] = counts.get(example, 0) + 1
            items = nodes.bullet_list()
            for why, examples in sorted(by_reason.items()):
                slots = sum(examples.values())
                named = sorted(examples)[:_NAMED]
                rest = len(examples) - len(named)
                para = _para(nodes.Text(f"{why}: {len(examples)} example{'s' if len(examples) != 1 else ''} "
                                        f"({slots} compile{'s' if slots != 1 else ''} of a function for a "
                                        f"target), "))
                for i, example in enumerate(named):
                    if i:
                        para += nodes.Text(", ")
                    para += nodes.literal(text=example)
                para += nodes.Text(f" and {rest} more." if rest else ".")
                items += nodes.list_item("", para)
            section += _para(nodes.Text("Not compared:"))
            section += items
        return [section]

    def _moved(self, slots: list[SlotDrift]) -> nodes.table:
        """A table of moved slots, each linked to its example."""
        rows = []
        for slot in slots:
            d = slot.drift
            anchor = "" if re.fullmatch(r"example-\d+", slot.example) else "#" + nodes.make_id(slot.example)
            link: nodes.Element
            try:
                uri = self.env.app.builder.get_relative_uri(self.env.docname, slot.docname)
            except NoUri:  # a builder that names pages only when it writes them (LaTeX): to the page
                link = addnodes.pending_xref("", nodes.literal(text=slot.example), refdomain="std", reftype="doc",
                                             reftarget="/" + slot.docname, refexplicit=True)
            else:
                link = nodes.reference("", "", nodes.literal(text=slot.example), internal=True, refuri=uri + anchor)
            rows.append([_para(link, nodes.Text(f" ({slot.docname})")),
                         _para(nodes.literal(text=d.function)),
                         _para(nodes.Text(d.target)),
                         _size_change(d.temp_before, d.temp_after),
                         _size_change(d.device_before, d.device_after),
                         _size_change(d.peak_before, d.peak_after),
                         _change(d.verdict_before, d.verdict_after)])
        header = ["example", "function", "target", "temp", "device memory", "peak", "reductions"]
        return table_node(header, rows, classes=("jaxhlo-drift",))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("jaxhlo-drift", DriftTables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
