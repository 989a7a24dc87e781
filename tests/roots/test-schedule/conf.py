extensions = ["myst_parser", "sphinx_jaxhlo"]
myst_enable_extensions = ["colon_fence"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
jaxhlo_targets = ["cpu"]
jaxhlo_workers = 2
