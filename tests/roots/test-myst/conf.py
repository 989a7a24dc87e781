extensions = ["myst_parser", "sphinx_jaxhlo"]
jaxhlo_targets = ["cpu"]
