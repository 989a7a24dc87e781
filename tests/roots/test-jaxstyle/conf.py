# Three pages in the style of JAX's own documentation, built the way JAX builds
# its docs: MyST-NB and sphinx-book-theme.  tests/test_jaxstyle.py builds them.
project = "jaxstyle"
extensions = ["myst_nb", "sphinx_jaxhlo"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
nb_execution_mode = "off"
html_theme = "sphinx_book_theme"
html_theme_options = {"show_toc_level": 2, "navigation_with_keys": False}
html_context = {"default_mode": "auto"}
jaxhlo_targets = ["cpu", "gpu:h100", "tpu:v5e"]
