"""Every warning subtype the code can emit is documented (the warnings reference is generated from SUBTYPES)."""

from __future__ import annotations

import re
from pathlib import Path

from sphinx_jaxhlo.core.diagnostics import SUBTYPES

PACKAGE = Path(__file__).parent.parent / "sphinx_jaxhlo"
EMITTERS = re.compile(r'subtype="([a-z]+)"|warn\([^\n]*?, "([a-z]+)",\s*(?:example\.)?location|self\.fail\("([a-z]+)"'
                      r'|ExampleFailure\("([a-z]+)"|Failure\("([a-z]+)"|failure_of\([^,\n]+, "([a-z]+)"'
                      r'|OptionProblem\("([a-z]+)"')


def test_every_emitted_subtype_is_documented() -> None:
    emitted = set()
    for path in PACKAGE.rglob("*.py"):
        for match in EMITTERS.finditer(path.read_text(encoding="utf-8")):
            emitted.add(next(g for g in match.groups() if g))
    assert {"expectation", "compile", "timeout", "crash", "syntax", "target"} <= emitted
    assert emitted <= set(SUBTYPES), sorted(emitted - set(SUBTYPES))
