"""The one-line compile that answers where the guide's rules do not: ``python -m sphinx_jaxhlo FILE.py:NAME
--args ... --targets ...``, as :class:`~sphinx_jaxhlo.predict.answer.Prediction`'s ``command`` gives it.

The text is what a user pastes, so it names the program the answer was about: the file the function was
written in (a wrapper's, such as ``jax.grad(loss)``'s, is the wrapped function's file, not jax's) and
the module-level name bound to the function itself; a wrapper that changes the program (``jax.grad``,
``jax.vmap``) is never named by the function it wraps.
"""

from __future__ import annotations

import sys
from typing import Any


def spec_text(struct: Any) -> str:
    """A ``jax.ShapeDtypeStruct`` (anything with shape and dtype) as the package writes specs: ``f32[4096,4096]``."""
    from sphinx_jaxhlo.core.specs import DTYPES

    names = {jax_name: short for short, (jax_name, _) in reversed(DTYPES.items())}
    dtype = str(getattr(struct, "dtype", ""))
    return f"{names.get(dtype, dtype)}[{','.join(str(d) for d in getattr(struct, 'shape', ()))}]"


def compile_command(fn: Any, structs: tuple[Any, ...], kwargs: dict[str, Any], target: str) -> str:
    """The one-line compile of ``fn`` that answers where the rules do not: its file (a wrapper's, such as
    ``jax.grad(loss)``'s, is the wrapped function's) and the module-level name bound to ``fn`` itself, or
    its own name where it wraps nothing but a ``jax.jit``; ``FUNCTION`` where neither names this program."""
    import inspect
    import shlex

    inner = inspect.unwrap(fn)
    try:
        where = inspect.getsourcefile(inner) or "FILE.py"
    except TypeError:
        where = "FILE.py"
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    bound = [k for k, v in vars(module).items() if v is fn] if module is not None else []
    same = inner is fn or hasattr(fn, "lower")
    name = bound[0] if bound else getattr(fn, "__name__", "FUNCTION") if same else "FUNCTION"
    if not name.isidentifier():
        name = "FUNCTION"
    if not where.endswith(".py"):
        where = "FILE.py"
    specs = ", ".join([*(spec_text(s) for s in structs), *(f"{k}={spec_text(v)}" for k, v in kwargs.items())])
    return f"python -m sphinx_jaxhlo {shlex.quote(where + ':' + name)} --args {shlex.quote(specs)} --targets {target}"
