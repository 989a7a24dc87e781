extensions = ["sphinx_jaxhlo"]
jaxhlo_targets = ["gpu:h100"]
