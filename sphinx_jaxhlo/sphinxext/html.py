"""The HTML of the extension's nodes in a Sphinx site.

The visitors of :data:`sphinx_jaxhlo.render.nodes.PLAIN_HTML_VISITORS`, with
two that need the builder: an example's block reuses the HTML written for it
before (the ``fragment`` the pipeline names), and a module text goes to files
of its own beside the pages (``_jaxhlo/<key>.txt``), loaded when the reader
opens it.  Its highlighted form is a script: the small texts of a page share
one (``_jaxhlo/<name>.js``, named by the texts it holds, listed at the end of
the page by :func:`add_page_scripts`), a long text has its own
(``_jaxhlo/<key>.js``), so a page of examples writes one new file per text
and one per page, not two per text.  Beside a kept fragment, ``<key>.texts``
lists the module texts it shows, and the cache's text store keeps each text
and the highlighted scripts: with those, a later build reads the example
without rendering its nodes (:func:`fragment_usable`), and the files are
linked from the store (:func:`_publish`).  :data:`HTML_VISITORS` is what
``setup`` registers.
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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from docutils import nodes

from sphinx_jaxhlo.core.request import render_fingerprint
from sphinx_jaxhlo.render import nodes as plain
from sphinx_jaxhlo.render.nodes import _attr, highlighted_spans, jaxhlo_block, jaxhlo_text
from sphinx_jaxhlo.sphinxext.compat import page_output_path

if TYPE_CHECKING:
    from sphinx.writers.html5 import HTML5Translator

#: The folder of the build output that holds the module texts.
TEXT_FOLDER = "_jaxhlo"
#: A module text of up to this many characters goes into its page's shared
#: script; a longer one keeps a script of its own, loaded only when opened.
SHARED_TEXT_LIMIT = 32_000
#: The most characters of text one shared script holds (a page with more has
#: several): opening one text loads the others of its script with it.
SHARED_SCRIPT_LIMIT = 256_000


class PageText(NamedTuple):
    """A module text a page shows: its key, language and length in characters."""

    key: str
    language: str
    size: int

    @property
    def shared(self) -> bool:
        """Whether its highlighted form goes into the page's shared script."""
        return _shared(self.size)


def _shared(size: int) -> bool:
    return size <= SHARED_TEXT_LIMIT


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
        texts = [list(_node_text(t)) for t in node.findall(jaxhlo_text)]
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
    # a shared text's script is made again from its text when the page's shared script is not kept
    return all((store / t.key[:2] / f"{t.key}.txt").is_file()
               and (t.shared or (store / t.key[:2] / f"{t.key}-{fingerprint}.js").is_file()) for t in keys)


def _kept_texts(fragment: Path) -> list[PageText] | None:
    """The module texts a kept fragment shows, ``None`` when not known."""
    try:
        data = json.loads(_texts_list(fragment).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not (isinstance(data, list) and all(
            isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], str)
            and type(item[2]) is int and item[2] >= 0 for item in data)):
        return None
    if any(len(item[0]) != 24 or not all(c in "0123456789abcdef" for c in item[0]) for item in data):
        return None
    return [PageText(*item) for item in data]


def _node_text(node: jaxhlo_text) -> PageText:
    language = node.get("language") or "text"
    return PageText(text_key(node["text"], language), language, len(node["text"]))


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
    """Write a long module text beside the pages: ``_jaxhlo/<key>.txt`` (the text) and
    ``_jaxhlo/<key>.js`` (a script of its own that hands the highlighted text to the page,
    which works from ``file://`` as over HTTP, where a fetch would not; a short
    text's is its page's shared script, :func:`add_page_scripts`).
    Files that exist are kept: the name is a hash of the content.  The store
    keeps the text too, for a later build that writes the example's HTML from the
    cache without its nodes (:func:`fragment_usable`).

    :param store: a folder of the cache that keeps the highlighted scripts
        between builds (highlighting is most of what a cached rebuild into a
        new output folder would spend on an example), under a name that
        also depends on the highlighting code and Pygments' version.
    :return: the key.
    """
    key = write_text_file(outdir, text, language, store)
    kept = store / key[:2] if store is not None else None
    _place(outdir / TEXT_FOLDER / f"{key}.js", kept / f"{key}-{_highlighting_fingerprint()}.js" if kept else None,
           lambda: _script(key, text, language))
    return key


def write_text_file(outdir: Path, text: str, language: str, store: Path | None = None) -> str:
    """Write a module text beside the pages, ``_jaxhlo/<key>.txt``, without a
    script: that of a text short enough to share its page's script
    (:func:`add_page_scripts`).  The store keeps the text, as for :func:`write_text_files`.

    :return: the key.
    """
    key = text_key(text, language)
    kept = store / key[:2] if store is not None else None
    # the text always into the store: a later build that keeps only the example's HTML takes it from there
    _place(outdir / TEXT_FOLDER / f"{key}.txt", kept / f"{key}.txt" if kept else None, lambda: text, fill_store=True)
    return key


def _script(key: str, text: str, language: str) -> str:
    """The script of a module text: its highlighting's mark, then the call that hands it to the page."""
    return _script_mark() + _handing(key, text, language)


def _handing(key: str, text: str, language: str) -> str:
    """The call that hands a module text, highlighted, to the page."""
    spans = highlighted_spans(text, language)
    payload: dict[str, Any] = {"spans": spans} if spans is not None else {"text": text}
    return f"window.jaxhloText&&window.jaxhloText({json.dumps(key)},{json.dumps(payload)});\n"


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
    """The names of the files a page's examples write beside it (:func:`prune_text_files`
    keeps them): the keys of its module texts (of their text nodes, and for an
    example left without its nodes, ``deferred``, of the list kept beside its
    fragment) and of its shared scripts."""
    texts = [text for text, _ in page_texts(doctree)]
    return {t.key for t in texts} | {name for name, _ in shared_scripts(texts)}


def page_texts(doctree: nodes.Node) -> Iterator[tuple[PageText, Callable[[], str]]]:
    """A page's module texts in the order it shows them, each with a function
    that gives the text: from its node, or for an example left without its
    nodes, from the cache's text store (which :func:`fragment_usable` found it in)."""
    for node in doctree.findall(lambda n: isinstance(n, (jaxhlo_text, jaxhlo_block))):
        if isinstance(node, jaxhlo_text):
            yield _node_text(node), functools.partial(node.__getitem__, "text")
        elif node.get("deferred") and node.get("fragment"):
            store = _text_store(node)
            for text in _kept_texts(Path(node["fragment"])) or []:
                yield text, functools.partial(_stored_text, store, text.key)


def _stored_text(store: Path | None, key: str) -> str:
    if store is None:
        raise OSError(f"no text store for {key}")
    return (store / key[:2] / f"{key}.txt").read_text(encoding="utf-8")


def shared_scripts(texts: Iterable[PageText]) -> list[tuple[str, list[PageText]]]:
    """The shared scripts of a page that shows ``texts`` (in order): its short
    texts, each once, in groups of at most :data:`SHARED_SCRIPT_LIMIT` characters,
    each group named by its keys."""
    groups: list[list[PageText]] = []
    seen: set[str] = set()
    total = 0
    for text in texts:
        if not text.shared or text.key in seen:
            continue
        seen.add(text.key)
        if not groups or total + text.size > SHARED_SCRIPT_LIMIT:
            groups.append([])
            total = 0
        groups[-1].append(text)
        total += text.size
    return [(hashlib.sha256(("shared\0" + "\0".join(t.key for t in group)).encode()).hexdigest()[:24], group)
            for group in groups]


def add_page_scripts(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                     doctree: nodes.document | None) -> None:
    """Write the shared scripts of a page (``html-page-context``), and list them
    at the end of its body: a hidden ``<div data-jaxhlo-script="URL"
    data-jaxhlo-keys="KEY KEY...">`` each, where ``jaxhlo.js`` looks for the
    script of a text whose block names none."""
    folder = _output_folder(app.builder, pagename)
    if doctree is None or folder is None or not isinstance(context.get("body"), str):
        return
    texts = dict(page_texts(doctree))
    scripts = shared_scripts(texts)
    if not scripts:
        return
    outdir = Path(app.builder.outdir)
    store = next((_text_store(b) for b in doctree.findall(jaxhlo_block) if b.get("text_store")), None)
    base = _texts_url(outdir, folder)
    markup = []
    for name, group in scripts:
        _place(outdir / TEXT_FOLDER / f"{name}.js",
               store / name[:2] / f"{name}-{_highlighting_fingerprint()}.js" if store is not None else None,
               functools.partial(_shared_script, [(t, texts[t]) for t in group]))
        markup.append(f'<div class="jaxhlo-scripts" hidden data-jaxhlo-script="{_attr(base)}/{name}.js" '
                      f'data-jaxhlo-keys="{" ".join(t.key for t in group)}"></div>')
    context["body"] += "\n" + "\n".join(markup) + "\n"


def _shared_script(texts: list[tuple[PageText, Callable[[], str]]]) -> str:
    """A page's shared script: the highlighting's mark, then a call for each
    text (one the store has lost is left out: its block says it could not be loaded)."""
    calls = [_script_mark()]
    for text, content in texts:
        try:
            calls.append(_handing(text.key, content(), text.language))
        except (OSError, UnicodeDecodeError):
            continue
    return "".join(calls)


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
    docname = getattr(builder, "current_docname", None)
    return _output_folder(builder, docname) if builder is not None and docname else None


def _output_folder(builder: Any, pagename: str) -> Path | None:
    """The folder ``builder`` writes page ``pagename`` into, when it writes pages (:func:`writes_pages`)."""
    if not writes_pages(builder):
        return None
    path = page_output_path(builder, pagename)
    return path.parent if path is not None else None


def _texts_url(outdir: Path, folder: Path) -> str:
    """The folder of module texts, relative to a page in ``folder``."""
    return Path(os.path.relpath(outdir / TEXT_FOLDER, folder)).as_posix()


def visit_text_html(self: HTML5Translator, node: jaxhlo_text) -> None:
    folder = _page_folder(self)
    if folder is None:
        # a notebook output or an EPUB: everything inline, collapsed
        plain.visit_text_html(self, node)  # raises SkipNode
        return
    opened = " open" if node.get("open") else ""
    title = html.escape(node["title"])
    outdir = Path(self.builder.outdir)
    key, script = _write_text(outdir, node, _text_store(node))
    base = _texts_url(outdir, folder)
    language = _attr(node.get("language") or "text")
    # a short text's script is its page's shared one, which the end of the page names (add_page_scripts)
    own = f' data-jaxhlo-text="{_attr(base)}/{key}.js"' if script else ""
    self.body.append(
        f'<details class="jaxhlo-details jaxhlo-lazy"{opened}><summary>{title}</summary>'
        f'<p class="jaxhlo-text-file"><a href="{_attr(base)}/{key}.txt">Open as a text file</a></p>'
        f'<div class="highlight-{language} notranslate"><div class="highlight">'
        f'<pre{own} data-jaxhlo-key="{key}"></pre></div></div></details>\n')
    raise nodes.SkipNode


def _write_text(outdir: Path, node: jaxhlo_text, store: Path | None) -> tuple[str, bool]:
    """Write a text node's files: the text, and a script of its own for a long one.

    :return: the key, and whether the text has a script of its own.
    """
    text, language = node["text"], node.get("language") or "text"
    if _shared(len(text)):
        return write_text_file(outdir, text, language, store), False
    return write_text_files(outdir, text, language, store), True


def ensure_text_files(translator: Any, block: nodes.Element) -> None:
    """Write the module texts of a block whose HTML is reused from the cache
    (the output folder may be new); for a block without its nodes, linked from
    the cache.  Shared scripts are the page's (:func:`add_page_scripts`)."""
    if _page_folder(translator) is None:
        return
    outdir = Path(translator.builder.outdir)
    store = _text_store(block)
    if block.get("deferred") and store is not None:
        folder = outdir / TEXT_FOLDER
        fingerprint = _highlighting_fingerprint()
        for text in _kept_texts(Path(block["fragment"])) or []:
            key = text.key
            _publish(store / key[:2] / f"{key}.txt", folder / f"{key}.txt")
            if not text.shared:
                _publish(store / key[:2] / f"{key}-{fingerprint}.js", folder / f"{key}.js")
        return
    for node in block.findall(jaxhlo_text):
        _write_text(outdir, node, store)


#: The visitors of the extension's nodes in Sphinx's HTML builders, by node class.
HTML_VISITORS: dict[type[nodes.Element], tuple[Any, Any]] = {
    **plain.PLAIN_HTML_VISITORS,
    jaxhlo_block: (visit_block_html, depart_block_html),
    jaxhlo_text: (visit_text_html, None),
}
