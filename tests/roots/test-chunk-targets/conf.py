extensions = ["sphinx_jaxhlo"]
jaxhlo_targets = ["cpu", "gpu:h100", "tpu:v5e"]
