"""Reports -> a self-contained HTML fragment, for Jupyter and MyST-NB outputs.

The nodes are the directive's own (:func:`sphinx_jaxhlo.render.example.render_example`),
translated by docutils' HTML5 writer extended with the extension's visitors
(:data:`sphinx_jaxhlo.render.nodes.PLAIN_HTML_VISITORS`), so a notebook shows what a
page shows.  Code is highlighted with Pygments; the extension's stylesheet,
the Pygments colours and the extension's script for the target tabs and the
source-line highlighting (``jaxhlo.js``, set up for the fragment only) are
inlined, so it needs nothing from the page it lands in.
Without the script (a sanitizing viewer) every target's panel shows, titled,
as in the directive's no-JavaScript fallback.
"""

from __future__ import annotations

import functools
import html
import importlib.resources
import json
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from docutils import frontend, nodes
from docutils.utils import new_document
from docutils.writers import html5_polyglot

from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.report import Report, TargetFailure
from sphinx_jaxhlo.core.results import Result, result_of_failure
from sphinx_jaxhlo.render.blocks import para
from sphinx_jaxhlo.render.display import Display
from sphinx_jaxhlo.render.example import render_example
from sphinx_jaxhlo.render.nodes import HIGHLIGHT_LIMIT, PLAIN_HTML_VISITORS, jaxhlo_block
from sphinx_jaxhlo.render.view import ExampleView

#: Extra rules for outside Sphinx: a page theme normally styles these.
_BASE_CSS = """
.jaxhlo { font-size: 0.95em; line-height: 1.4; }
.jaxhlo table.jaxhlo-table { border-collapse: collapse; }
.jaxhlo table.jaxhlo-table th, .jaxhlo table.jaxhlo-table td {
  border: 1px solid var(--jaxhlo-border); padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
.jaxhlo table.jaxhlo-table th { background: var(--jaxhlo-muted); }
.jaxhlo table.jaxhlo-table p { margin: 0; }
.jaxhlo p.rubric { font-weight: 600; margin: 0.9rem 0 0.2rem; }
.jaxhlo .highlight pre, .jaxhlo pre { overflow: auto; padding: 0.4rem 0.6rem; margin: 0.3rem 0; }
.jaxhlo .highlight { background: var(--jaxhlo-muted); border-radius: 4px; }
.jaxhlo .highlight .linenos { opacity: 0.6; user-select: none; }
.jaxhlo code, .jaxhlo .docutils.literal { font-family: var(--jp-code-font-family, monospace); font-size: 0.9em; }
.jaxhlo .jaxhlo-notes { font-size: 0.8em; opacity: 0.8; }
[data-jp-theme-light="false"] .jaxhlo { --jaxhlo-good: #3fb950; --jaxhlo-bad: #f85149; --jaxhlo-bar: #60a5fa; }
"""

@functools.cache
def _lexer(language: str) -> Any:
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language)
    except ClassNotFound:
        return TextLexer()


@functools.cache
def stylesheet() -> str:
    """The extension's CSS, the extra rules for outside Sphinx and the Pygments colours."""
    from pygments.formatters import HtmlFormatter

    own = importlib.resources.files("sphinx_jaxhlo").joinpath("static", "jaxhlo.css").read_text(encoding="utf-8")
    pygments_css = HtmlFormatter(style="default").get_style_defs(".jaxhlo .highlight")
    return own + _BASE_CSS + pygments_css


@functools.cache
def _page_script() -> str:
    """The extension's ``jaxhlo.js``, which defines ``window.jaxhloInit(root)``."""
    js = importlib.resources.files("sphinx_jaxhlo").joinpath("static", "jaxhlo.js").read_text(encoding="utf-8")
    if "</" in js:  # would end the inline <script> early
        raise ValueError("jaxhlo.js cannot be inlined: it contains '</'")
    return js


def _script(root: str) -> str:
    """Target tabs and source-line highlighting for the element ``root`` only.

    The extension's ``jaxhlo.js``, then its set-up scoped to that element (a
    Sphinx page made from a notebook may also load the file: setting up is
    idempotent).
    """
    return f"{_page_script()}\nwindow.jaxhloInit(document.getElementById({json.dumps(root)}));\n"


class _Translator(html5_polyglot.HTMLTranslator):
    """docutils' HTML5 translator plus the extension's nodes and highlighted code."""

    def visit_literal_block(self, node: nodes.literal_block) -> None:
        text = node.astext()
        language = str(node.get("language") or "text")
        linenos = bool(node.get("linenos"))
        if len(text) > HIGHLIGHT_LIMIT:
            self.body.append(f'<div class="highlight"><pre>{html.escape(text)}</pre></div>\n')
            raise nodes.SkipNode
        from pygments import highlight
        from pygments.formatters import HtmlFormatter

        formatter = HtmlFormatter(linenos="inline" if linenos else False)
        try:
            highlighted = highlight(text, _lexer(language), formatter)
        except Exception:  # a lexer bug must not cost the output
            highlighted = f'<div class="highlight"><pre>{html.escape(text)}</pre></div>'
        self.body.append(f'<div class="highlight-{html.escape(language, quote=True)} notranslate">'
                         + highlighted + "</div>\n")
        raise nodes.SkipNode

    # A link to a section of the guide (a jaxhlo_alternative) needs Sphinx to resolve it:
    # standalone, its title is text.
    def visit_jaxhlo_alternative(self, node: nodes.Element) -> None:
        pass

    def depart_jaxhlo_alternative(self, node: nodes.Element) -> None:
        pass


def _no_depart(self: Any, node: nodes.Element) -> None:
    pass


for _cls, (_visit, _depart) in PLAIN_HTML_VISITORS.items():
    setattr(_Translator, f"visit_{_cls.__name__}", _visit)
    setattr(_Translator, f"depart_{_cls.__name__}", _depart or _no_depart)


def nodes_to_html(children: Sequence[nodes.Node]) -> str:
    """Translate docutils nodes (the extension's included) to an HTML fragment."""
    settings = frontend.get_default_settings(html5_polyglot.Writer)
    settings.report_level = 5  # never print system messages
    document = new_document("<jax-hlo>", settings)
    document.extend(list(children))
    translator = _Translator(document)
    document.walkabout(translator)
    return "".join(translator.body)


def target_title(name: str) -> str:
    """The tab title of a target (as :func:`sphinx_jaxhlo.pipeline.run.target_title`)."""
    target = targets_mod.TARGETS.get(name)
    title = getattr(target, "title", None) if target is not None else None
    return str(title) if title else name


def render_html(reports: Sequence[Report], failed: Sequence[TargetFailure] = (),
                show: Sequence[str] = ("summary", "memory", "hlo"), function: str = "", args: str = "",
                notes: Sequence[str] = (), order: Sequence[str] | None = None, script: bool = True,
                full_page: bool = False, display: Display | None = None) -> str:
    """The directive's rendering of one function's reports, self-contained.

    :param failed: the targets that produced no report.
    :param show: parts as the directive's ``:show:``.
    :param script: include the script for the tabs and the source-line
        highlighting (without it every panel shows, titled, and the line links
        still jump).
    :param full_page: a whole HTML document instead of a fragment.
    :param display: the findings reported and the rows of each table (``findings=``, ``rows=``).
    """
    fn = function or next((r.function for r in reports), "") or "(function)"
    # one function, or the function and its variants (a gradient): each report under its own
    functions = list(dict.fromkeys([*(r.function for r in reports), *(f.function for f in failed)])) or [fn]
    several = len(functions) > 1
    results: dict[tuple[str, str], Result] = {}
    for r in reports:
        name = r.function if several else fn
        results[name, r.target] = Result(function=name, target=r.target, target_title=target_title(r.target),
                                         report=r)
    for f in failed:
        name = f.function if several else fn
        results[name, f.target] = result_of_failure(replace(f, function=name), target_title(f.target))
    names = functions if several else [fn]
    known = list(dict.fromkeys(t for _, t in results))
    targets = [t for t in (order or known) if t in known]
    root = "jaxhlo-" + uuid.uuid4().hex[:12]
    source = next((r.source for r in reports if r.source), "")
    view = ExampleView(source=source, show=list(show), hlo_collapsed=True, hlo_language="hlo", key=root,
                       args_text=args, display=display or Display())
    block = jaxhlo_block()
    if targets:
        titles = [(t, target_title(t)) for t in targets]
        block.extend(render_example(view, names, titles, [results[n, t] for n in names for t in targets
                                                           if (n, t) in results]))
    else:
        block += para("No report.", classes=["jaxhlo-missing"])
    if notes:
        block += para(" ".join(notes), classes=["jaxhlo-notes"])
    body = nodes_to_html([block])
    parts = [f'<div class="jaxhlo-root" id="{root}">', f"<style>{stylesheet()}</style>", body]
    if script and ("jaxhlo-tablist" in body or "data-jaxhlo-lines" in body):
        parts.append(f"<script>{_script(root)}</script>")
    parts.append("</div>")
    fragment = "\n".join(parts)
    if not full_page:
        return fragment
    title = html.escape(f"jax-hlo: {fn}")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<style>body {{ font-family: system-ui, sans-serif; max-width: 70rem; margin: 1rem auto; '
            f'padding: 0 1rem; }}</style>\n</head>\n<body>\n'
            f"{fragment}\n</body>\n</html>\n")
