"""The gradient variant (``:grad:``, ``--grad``, ``analyze_source(grad=)``, ``analyze(fn, grad=)``),
in one place, its parts named by what each does:

- :mod:`~sphinx_jaxhlo.gradient.option`: the option (the arguments, the forms, what
  ``jax.grad`` refuses), plain rules;
- :mod:`~sphinx_jaxhlo.gradient.source`: the code of a variant, the one way a gradient is
  built: appended to an example's source (the page shows what was compiled), or written
  for a function object's call;
- :mod:`~sphinx_jaxhlo.gradient.calls`: a function object's gradient calls, each carrying its
  code, refused before anything compiles where ``jax.grad`` would refuse them;
- :mod:`~sphinx_jaxhlo.gradient.build`: the compile worker running that code.

The option and the code are plain data and rules (the ``core`` layer); the calls and the
worker's part are the compile side's (``tests/test_layers.py`` gives each module its layer).
"""
