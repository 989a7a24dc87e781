"""Every character of the docs' pages is one the PDF build (``nox -s pdf``: pdflatex) typesets.

pdflatex stops at a character its UTF-8 input encoding does not know ("Unicode character λ
(U+03BB) not set up for use with LaTeX"), three minutes into the build; this finds it in a
second and names the page and line.  Known: ASCII, the Latin-1 and punctuation characters
LaTeX's ``utf8`` input encoding maps with the T1 fonts and ``textcomp`` (below), and those the
docs' ``conf.py`` declares (``\\DeclareUnicodeCharacter``).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
#: Folders of generated or stored files, not pages written here.
SKIPPED = ("_build", "_snapshots", "_drift", "_hardware", "jupyter_execute")
#: What LaTeX's utf8 input encoding typesets with the T1 fonts and textcomp (the ones the docs use).
LATEX_KNOWS = set("\u00a0±²³µ·¹×éèàüöäç—–‘’“”…")


def declared() -> set[str]:
    text = (DOCS / "conf.py").read_text(encoding="utf-8")
    return {chr(int(code, 16)) for code in re.findall(r"\\DeclareUnicodeCharacter\{([0-9A-Fa-f]+)\}", text)}


def test_every_character_of_the_pages_is_typeset_by_the_pdf_build() -> None:
    known = LATEX_KNOWS | declared()
    assert "\u2264" in known  # conf.py's declarations were read
    unknown = []
    for path in sorted(DOCS.rglob("*")):
        if path.suffix not in (".md", ".rst") or any(part in SKIPPED for part in path.relative_to(DOCS).parts):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for char in line:
                if ord(char) > 127 and char not in known:
                    unknown.append(f"{path.relative_to(REPO)}:{number}: {char!r} (U+{ord(char):04X})")
    assert not unknown, ("characters the PDF build cannot typeset (write them in words or ASCII, or declare "
                         "them in docs/conf.py's latex_elements):\n" + "\n".join(unknown))
