# Configured as JAX configures its docs: MyST-NB executes every notebook page.
extensions = ["myst_nb", "sphinx_jaxhlo"]
nb_execution_mode = "force"
nb_execution_raise_on_error = True
jaxhlo_targets = ["cpu", "gpu:h100", "tpu:v5e"]
jaxhlo_show = ["summary"]
project = "notebook"
