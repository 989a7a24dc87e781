extensions = ["sphinx_jaxhlo"]
jaxhlo_targets = ["cpu"]
