# A small project configured as JAX's own docs are (jax-ml/jax docs/conf.py and
# docs/requirements.txt): MyST-NB notebooks, stored as .ipynb and as MyST text, executed
# on every build ("force"), sphinx-book-theme, sphinx-design and sphinx-copybutton,
# intersphinx, only the dollarmath MyST extension, built with -j and -W into
# build/html (sphinx-build -b html docs docs/build/html).  tests/test_jaxdocs.py builds
# it; `nox -s jaxdocs` with JAX's exact docs pins.
project = "jaxdocs"
extensions = [
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx_copybutton",
    "sphinx_design",
    "myst_nb",
    "sphinx_jaxhlo",
]
intersphinx_mapping = {}
source_suffix = [".rst", ".ipynb", ".md"]
exclude_patterns = ["build/html", "build/jupyter_execute", "_snapshots"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
nb_execution_mode = "force"
nb_execution_allow_errors = False
nb_merge_streams = True
nb_execution_show_tb = True
nb_execution_timeout = 100
html_theme = "sphinx_book_theme"
html_theme_options = {"show_toc_level": 2, "repository_url": "https://github.com/example/jaxdocs", "use_repository_button": True}
# CPU and one H100 (the sharded page: eight); no TPU, to keep the repeated cold builds light
jaxhlo_targets = ["cpu", "gpu:h100"]
jaxhlo_snapshot_dir = "_snapshots"
# an address that never resolves (RFC 2606): the guide's labels come from the shipped inventory
jaxhlo_guide_url = "https://sphinx-jaxhlo.invalid/en/latest/"
