extensions = ["sphinx_jaxhlo"]
jaxhlo_targets = ["cpu"]
project = "hardening"
# Keep the page small; the HLO is still rendered (collapsed).
jaxhlo_show = ["source", "summary", "memory", "hlo"]
