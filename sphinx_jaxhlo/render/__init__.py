"""Reports -> what a reader sees, with docutils and Pygments and without Sphinx.

The row model every output is written from (``display``, ``rows``,
``findings``, ``overview``, ``signature``), the graph (``graph``,
``graph_drawing``), an example as docutils nodes (``view``, ``blocks``,
``parts``, ``example``, with the extension's own node classes and their HTML
in ``nodes``), and the outputs that need no Sphinx: plain text (``text``) and
self-contained HTML (``standalone_html``); the HLO lexers (``lexer``).
Imports ``core`` and ``hlo``; the Sphinx package builds on it.
"""
