extensions = ["sphinx_jaxhlo"]
jaxhlo_targets = ["gpu:h100x8", "tpu:v5e-8"]
