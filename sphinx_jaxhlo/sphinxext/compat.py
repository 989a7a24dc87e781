"""The few Sphinx calls whose form changed between the supported Sphinx releases (7.3 to 9).

Every other Sphinx API the extension uses exists, with the same signature, in
each of them (``tests/test_sphinx_compat.py`` checks the list against the
installed Sphinx).
"""

from __future__ import annotations

import inspect
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.environment import BuildEnvironment


@cache
def _takes_docname() -> bool:
    from sphinx.environment import BuildEnvironment

    return "docname" in inspect.signature(BuildEnvironment.note_dependency).parameters


def note_dependency(env: BuildEnvironment, path: str | os.PathLike[str], docname: str) -> None:
    """Read ``docname`` again when the file at ``path`` changes.

    Sphinx 8.0 added ``docname=`` to ``env.note_dependency``; 7.3 and 7.4 note
    the dependency of the document being read only, so another document's goes
    straight into ``env.dependencies`` (which holds absolute paths as they are).

    :param path: absolute, or relative to the source folder.
    """
    if _takes_docname():
        env.note_dependency(path, docname=docname)
    elif env.docname == docname:
        env.note_dependency(os.fspath(path))
    else:
        env.dependencies.setdefault(docname, set()).add(os.fspath(Path(env.srcdir, path)))  # type: ignore[arg-type]


def page_output_path(builder: Any, docname: str) -> Path | None:
    """The file an HTML builder writes ``docname`` to: ``get_output_path`` from
    Sphinx 8.1 on, ``get_outfilename`` before (both follow ``dirhtml``'s
    folders); ``None`` for a builder with neither."""
    for name in ("get_output_path", "get_outfilename"):
        method = getattr(builder, name, None)
        if callable(method):
            return Path(method(docname))
    return None


def shows_warning_types(config: Any) -> bool:
    """Whether Sphinx itself ends each warning with ``[type.subtype]``:
    ``show_warning_types``, off by default on Sphinx 7, on from 8.0."""
    return bool(getattr(config, "show_warning_types", False))
