"""Sphinx configuration of the sphinx-jaxhlo documentation."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "sphinx-jaxhlo"
author = "the sphinx-jaxhlo developers"
copyright = "2026, the sphinx-jaxhlo developers"

extensions = [
    "myst_parser",
    "sphinx.ext.intersphinx",
    "sphinx.ext.autodoc",
    "sphinx_jaxhlo",
    "jaxhlo_docs",
    "jaxhlo_drift",
]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples/README.md"]

# The docs build offline (CI reaches only package registries), so intersphinx
# reads a local inventory of the few JAX pages we link to; the links still go
# to the live JAX docs.  See _inventories/make_jax_inv.py.
intersphinx_mapping = {
    "jax": ("https://docs.jax.dev/en/latest/", "_inventories/jax.inv"),
}

# Every example compiles for the host CPU, an NVIDIA H100 and a TPU v5e.
jaxhlo_targets = ["cpu", "gpu:h100", "tpu:v5e"]

# The compiler's answers, committed beside the docs (see snapshots.md): a build
# compiles only what no snapshot of its toolchain answers and writes the rest;
# JAXHLO_SNAPSHOT_MODE=use renders from them alone, =check verifies them
# (`nox -s snapshots` rewrites them all).
jaxhlo_snapshot_dir = "_snapshots"
# What a real TPU v5e chip held and how long each example ran, measured by tools/hardware_check.py
# (see reference/targets.md): shown beside the deviceless figures of every example it measured.
jaxhlo_hardware_dir = "_hardware"
# The guide's pages may not contradict their own examples: where the guide's rule
# (sphinx_jaxhlo.predict) and XLA disagree on one of them, the build warns jaxhlo.predict.
jaxhlo_guide_pages = ["guide/"]

# sphinx-book-theme: JAX's own documentation uses it, so readers who arrive from
# the jax.jit docs find the same navigation, search box and light/dark switch.
html_theme = "sphinx_book_theme"
# Follow the reader's light/dark preference (the theme's template needs it said).
html_context = {"default_mode": "auto"}
html_title = "sphinx-jaxhlo"
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
}
nitpicky = True

# The PDF (nox -s pdf): pdflatex with the few symbols the prose uses declared.
latex_elements = {
    "preamble": r"""
\DeclareUnicodeCharacter{2212}{\ensuremath{-}}
\DeclareUnicodeCharacter{2264}{\ensuremath{\leq}}
\DeclareUnicodeCharacter{2265}{\ensuremath{\geq}}
\DeclareUnicodeCharacter{2248}{\ensuremath{\approx}}
\DeclareUnicodeCharacter{2192}{\ensuremath{\rightarrow}}
\DeclareUnicodeCharacter{03A3}{\ensuremath{\Sigma}}
\DeclareUnicodeCharacter{03C0}{\ensuremath{\pi}}
""",
}
