# A small project configured as JAX's own docs are (jax-ml/jax docs/conf.py and
# docs/requirements.txt): MyST-NB notebooks executed on every build ("force"),
# sphinx-book-theme, sphinx-design and sphinx-copybutton, only the dollarmath MyST
# extension, built with -W.  tests/test_jaxdocs.py builds it; `nox -s jaxdocs` with
# JAX's exact docs pins.
project = "jaxdocs"
extensions = [
    "sphinx.ext.mathjax",
    "sphinx_copybutton",
    "sphinx_design",
    "myst_nb",
    "sphinx_jaxhlo",
]
source_suffix = [".rst", ".ipynb", ".md"]
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
nb_execution_mode = "force"
nb_execution_allow_errors = False
nb_merge_streams = True
nb_execution_show_tb = True
nb_execution_timeout = 100
html_theme = "sphinx_book_theme"
html_theme_options = {"show_toc_level": 2, "repository_url": "https://github.com/example/jaxdocs", "use_repository_button": True}
jaxhlo_targets = ["cpu", "gpu:h100", "tpu:v5e"]
jaxhlo_snapshot_dir = "_snapshots"
