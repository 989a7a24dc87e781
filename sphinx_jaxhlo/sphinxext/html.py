"""The HTML of the extension's nodes in a Sphinx site.

The visitors of :data:`sphinx_jaxhlo.render.nodes.PLAIN_HTML_VISITORS`, with
two that need the builder: an example's block reuses the HTML written for it
before (the ``fragment`` the pipeline names), and a module text goes to files
of its own beside the pages (``_jaxhlo/<key>.txt`` and ``.js``), loaded when
the reader opens it.  Beside a kept fragment, ``<key>.texts`` lists the module
texts it shows, and the cache's text store keeps each text and its highlighted
script: with those, a later build reads the example without rendering its
nodes (:func:`fragment_usable`), and the texts are linked from the store (:func:`_publish`).
:data:`HTML_VISITORS` is what ``setup`` registers.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes

from sphinx_jaxhlo.core.request import render_fingerprint
from sphinx_jaxhlo.render import nodes as plain
from sphinx_jaxhlo.render.nodes import _attr, highlighted_spans, jaxhlo_block, jaxhlo_text
from sphinx_jaxhlo.sphinxext.compat import page_output_path

if TYPE_CHECKING:
    from sphinx.writers.html5 import HTML5Translator

#: The folder of the build output that holds the module texts.
TEXT_FOLDER = "_jaxhlo"


def visit_block_html(self: HTML5Translator, node: jaxhlo_block) -> None:
    plain.visit_block_html(self, node)
    fragment = node.get("fragment")
    if fragment:
        # The same example, rendered the same way, was written before: reuse its HTML.
        try:
            text = Path(fragment).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            if node.get("deferred"):  # gone since the page was resolved (a cache emptied meanwhile)
                self.body.append('<p class="jaxhlo-error">This example\'s HTML was removed from the cache '
                                 "while the page was written: build again.</p></div>\n")
                raise nodes.SkipNode from None
            node["fragment_start"] = len(self.body)
        else:
            ensure_text_files(self, node)
            self.body.append(text)
            self.body.append("</div>\n")
            raise nodes.SkipNode


def depart_block_html(self: HTML5Translator, node: jaxhlo_block) -> None:
    start = node.get("fragment_start")
    if node.get("fragment") and start is not None:
        fragment = Path(node["fragment"])
        # the module texts it shows, for a later build that keeps only this HTML (fragment_usable)
        texts = [[text_key(t["text"], t.get("language") or "text"), t.get("language") or "text"]
                 for t in node.findall(jaxhlo_text)]
        _store_fragment(_texts_list(fragment), json.dumps(texts))
        _store_fragment(fragment, "".join(self.body[start:]))
    plain.depart_block_html(self, node)


def _texts_list(fragment: Path) -> Path:
    return fragment.with_suffix(".texts")


def writes_pages(builder: Any) -> bool:
    """Whether ``builder`` writes HTML pages into its output folder, module texts
    beside them: the builders that can take an example's HTML from the cache."""
    return getattr(builder, "format", "") == "html" and not builder.name.startswith("epub")


def fragment_usable(node: jaxhlo_block) -> bool:
    """Whether the HTML kept for this example, and every module text it shows,
    are in the cache: then the page needs none of the example's nodes."""
    fragment, store = node.get("fragment"), _text_store(node)
    if not fragment or store is None:
        return False
    keys = _kept_texts(Path(fragment))
    if keys is None or not Path(fragment).is_file():
        return False
    fingerprint = _highlighting_fingerprint()
    return all((store / key[:2] / f"{key}.txt").is_file() and (store / key[:2] / f"{key}-{fingerprint}.js").is_file()
               for key, _ in keys)


def _kept_texts(fragment: Path) -> list[tuple[str, str]] | None:
    """The module texts (key, language) a kept fragment shows, ``None`` when not known."""
    try:
        data = json.loads(_texts_list(fragment).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not (isinstance(data, list) and all(isinstance(item, list) and len(item) == 2
                                           and all(isinstance(v, str) for v in item) for item in data)):
        return None
    if any(len(key) != 24 or not all(c in "0123456789abcdef" for c in key) for key, _ in data):
        return None
    return [(key, language) for key, language in data]


def _store_fragment(path: Path, text: str, mode: int | None = None) -> None:
    """Write atomically; a cache that cannot be written is only slower.

    :param mode: permissions to give the file (a temporary file is private to its owner).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".html")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def text_key(text: str, language: str) -> str:
    return hashlib.sha256(f"{language}\0{text}".encode()).hexdigest()[:24]


def write_text_files(outdir: Path, text: str, language: str, store: Path | None = None) -> str:
    """Write a module text beside the pages: ``_jaxhlo/<key>.txt`` (the text) and
    ``_jaxhlo/<key>.js`` (a script that hands the highlighted text to the page,
    which works from ``file://`` as over HTTP, where a fetch would not).
    Files that exist are kept: the name is a hash of the content.  The store
    keeps the text too, for a later build that writes the example's HTML from the
    cache without its nodes (:func:`fragment_usable`).

    :param store: a folder of the cache that keeps the highlighted scripts
        between builds (highlighting is most of what a cached rebuild into a
        new output folder would spend on an example), under a name that
        also depends on the highlighting code and Pygments' version.
    :return: the key.
    """
    key = text_key(text, language)
    folder = outdir / TEXT_FOLDER
    kept = store / key[:2] if store is not None else None
    # the text always into the store: a later build that keeps only the example's HTML takes it from there
    _place(folder / f"{key}.txt", kept / f"{key}.txt" if kept else None, lambda: text, fill_store=True)
    _place(folder / f"{key}.js", kept / f"{key}-{_highlighting_fingerprint()}.js" if kept else None,
           lambda: _script(key, text, language))
    return key


def _script(key: str, text: str, language: str) -> str:
    """The script of a module text: its highlighting's mark, then the call that hands it to the page."""
    spans = highlighted_spans(text, language)
    payload: dict[str, Any] = {"spans": spans} if spans is not None else {"text": text}
    return f"{_script_mark()}window.jaxhloText&&window.jaxhloText({json.dumps(key)},{json.dumps(payload)});\n"


def _place(published: Path, kept: Path | None, content: Callable[[], str], fill_store: bool = False) -> None:
    """Put a file beside the pages: kept when this build can use it as it is,
    else from the store (:func:`_publish`), else made (``content``) into the
    store and from there, or straight into the output folder without a store.

    :param fill_store: put it into the store even when the published one is kept.
    """
    if _usable(published) and not (fill_store and kept is not None and not kept.is_file()):
        _touch(published)  # in use by this build: never pruned (prune_text_files)
        return
    made = None
    if kept is not None and not kept.is_file():
        made = content()
        _store_fragment(kept, made)
    if kept is None or not kept.is_file() or not _publish(kept, published):
        _store_fragment(published, content() if made is None else made, mode=0o644)  # readable by the web server


def _script_mark() -> str:
    """The first bytes of a module text's script: the highlighting that made it."""
    return f"/*jaxhlo {_highlighting_fingerprint()}*/"


def _current_script(path: Path) -> bool:
    """Whether the script at ``path`` exists and was made by this highlighting.
    Its name is the text's: an output folder written by another release (other
    highlighting, another form of script) keeps the name, and is written again."""
    mark = _script_mark().encode()
    try:
        with open(path, "rb") as f:
            return f.read(len(mark)) == mark
    except OSError:
        return False


def _usable(published: Path) -> bool:
    """Whether a file in the output folder can stay: a text (named by its content),
    or a script of this highlighting."""
    return _current_script(published) if published.suffix == ".js" else published.exists()


def _publish(kept: Path, published: Path) -> bool:
    """Put a file of the cache's text store into the output folder: a hard link
    where the file system allows one (a new name for the same bytes, a
    fraction of the cost of a new file: the cached rebuild of a page of
    examples makes two per report), a copy where it does not.  Either is
    readable by the site's web server.  Nothing writes these files in place:
    a changed text has a new name, a script of other highlighting is replaced.

    :return: whether the file is there.
    """
    if _usable(published):
        _touch(published)  # in use by this build: never pruned (prune_text_files)
        return True
    tmp = published.with_name(f".tmp-{os.getpid()}-{threading.get_ident()}-{published.name}")
    try:
        published.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        try:
            os.link(kept, tmp)
        except OSError:  # another file system, or one without links
            shutil.copyfile(kept, tmp)
        tmp.chmod(0o644)
        os.replace(tmp, published)
        return True
    except OSError:
        tmp.unlink(missing_ok=True)
        return False


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def prune_text_files(outdir: Path, keep: set[str], since: float) -> list[Path]:
    """Remove the module texts of ``outdir`` that no page uses any more (an
    example edited, moved or removed): those whose key is not in ``keep``
    (the keys of every document's texts) and that this build neither wrote
    nor used (modified before ``since``, when the build started).

    :return: the files removed.
    """
    removed: list[Path] = []
    try:
        entries = list((outdir / TEXT_FOLDER).iterdir())
    except OSError:
        return removed
    for path in entries:
        if path.suffix not in (".js", ".txt") or path.stem in keep:
            continue
        try:
            if path.is_file() and path.stat().st_mtime < since:
                path.unlink()
                removed.append(path)
        except OSError:
            continue
    return removed


def text_keys(doctree: nodes.Node) -> set[str]:
    """The keys of the module texts a page's examples write beside it: of their
    text nodes, and for an example left without its nodes (``deferred``), of the
    list kept beside its fragment."""
    keys = {text_key(node["text"], node.get("language") or "text") for node in doctree.findall(jaxhlo_text)}
    for block in doctree.findall(jaxhlo_block):
        if block.get("deferred") and block.get("fragment"):
            keys.update(key for key, _ in _kept_texts(Path(block["fragment"])) or [])
    return keys


@functools.cache
def _highlighting_fingerprint() -> str:
    """What highlighted text depends on besides the text: this package's
    rendering and lexer code, and Pygments."""
    import pygments

    return hashlib.sha256(f"{render_fingerprint()}\0{pygments.__version__}".encode()).hexdigest()[:16]


def _text_store(node: nodes.Node) -> Path | None:
    """The cache folder of highlighted texts that the example holding ``node`` names."""
    while node is not None and not isinstance(node, jaxhlo_block):
        node = node.parent
    store = node.get("text_store") if node is not None else None
    return Path(store) if store else None


def _page_folder(translator: Any) -> Path | None:
    """The folder of the page being written, when this is a Sphinx HTML builder
    that writes pages into its output folder (not an EPUB: no scripts there)."""
    builder = getattr(translator, "builder", None)
    if builder is None or getattr(builder, "format", "") != "html" or builder.name.startswith("epub"):
        return None
    docname = getattr(builder, "current_docname", None)
    if not docname:
        return None
    path = page_output_path(builder, docname)
    return path.parent if path is not None else None


def visit_text_html(self: HTML5Translator, node: jaxhlo_text) -> None:
    folder = _page_folder(self)
    if folder is None:
        # a notebook output or an EPUB: everything inline, collapsed
        plain.visit_text_html(self, node)
    opened = " open" if node.get("open") else ""
    title = html.escape(node["title"])
    outdir = Path(self.builder.outdir)
    key = write_text_files(outdir, node["text"], node.get("language") or "text", _text_store(node))
    base = Path(os.path.relpath(outdir / TEXT_FOLDER, folder)).as_posix()
    language = _attr(node.get("language") or "text")
    self.body.append(
        f'<details class="jaxhlo-details jaxhlo-lazy"{opened}><summary>{title}</summary>'
        f'<p class="jaxhlo-text-file"><a href="{_attr(base)}/{key}.txt">Open as a text file</a></p>'
        f'<div class="highlight-{language} notranslate"><div class="highlight">'
        f'<pre data-jaxhlo-text="{_attr(base)}/{key}.js" data-jaxhlo-key="{key}"></pre></div></div></details>\n')
    raise nodes.SkipNode


def ensure_text_files(translator: Any, block: nodes.Element) -> None:
    """Write the module texts of a block whose HTML is reused from the cache
    (the output folder may be new); for a block without its nodes, linked from the cache."""
    if _page_folder(translator) is None:
        return
    outdir = Path(translator.builder.outdir)
    store = _text_store(block)
    if block.get("deferred") and store is not None:
        folder = outdir / TEXT_FOLDER
        fingerprint = _highlighting_fingerprint()
        for key, _ in _kept_texts(Path(block["fragment"])) or []:
            for kept, published in ((store / key[:2] / f"{key}.txt", folder / f"{key}.txt"),
                                    (store / key[:2] / f"{key}-{fingerprint}.js", folder / f"{key}.js")):
                _publish(kept, published)
        return
    for node in block.findall(jaxhlo_text):
        write_text_files(outdir, node["text"], node.get("language") or "text", store)


#: The visitors of the extension's nodes in Sphinx's HTML builders, by node class.
HTML_VISITORS: dict[type[nodes.Element], tuple[Any, Any]] = {
    **plain.PLAIN_HTML_VISITORS,
    jaxhlo_block: (visit_block_html, depart_block_html),
    jaxhlo_text: (visit_text_html, None),
}
