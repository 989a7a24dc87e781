"""XLA's own record of the fusions it refused, and what the findings quote of it.

- :mod:`~sphinx_jaxhlo.hlo.decisions.collect`: the options that make a compile write the record
  (the GPU's priority-fusion dump, the CPU's and TPU's pass dumps) and reading the files;
- :mod:`~sphinx_jaxhlo.hlo.decisions.records`: the record's text parsed into decisions, each tied
  to the instructions of the optimized module;
- :mod:`~sphinx_jaxhlo.hlo.decisions.quotes`: the decisions quoted in the reasons the analysis
  gives for a stored buffer.
"""
