"""The tokenizer of HLO text, and the decoding of its string literals.

:class:`Tokens` cuts a text into words, strings, the arrow ``->`` and
punctuation, each with the lines it starts and ends on and its offsets, so
that the grammar (:mod:`sphinx_jaxhlo.hlo.parse`) can balance brackets and
keep attribute values as raw text.  :func:`unquote` decodes a string token.
"""

from __future__ import annotations

import re

from sphinx_jaxhlo.hlo.model import HloParseError

__all__ = ["Tokens", "unquote"]

# -- tokenizer ---------------------------------------------------------------

# Token kinds: "w" word, "s" string, ">" the arrow "->", else the punctuation
# character itself.  Newlines are not tokens: every token records its line.
# As in XLA's lexer (hlo_lexer.cc): ``/* */`` comments, ``//`` comments to the
# end of the line (XLA's dumps write ``} // name`` after computations), and
# strings that may hold raw newlines (the printer writes some attribute
# values so).
_TOKEN_RE = re.compile(
    r"[ \t\r\f\v]*(?:"
    r"(\n)"  # 1 newline
    r"|(/\*.*?\*/|//[^\n]*)"  # 2 comment
    r'|("(?:[^"\\]|\\.)*")'  # 3 string
    r"|(->)"  # 4 arrow
    r"|([{}()\[\],=:])"  # 5 punctuation
    r'|((?:<=|[^\s{}()\[\],=:"/]|/(?![*/]))+)'  # 6 word ("<=" belongs to words: f32[<=10])
    r"|(\S))",  # 7 anything else (other whitespace is skipped)
    re.S,
)


class Tokens:
    __slots__ = ("end_lines", "ends", "kinds", "lines", "starts", "texts")

    def __init__(self, text: str) -> None:
        kinds: list[str] = []
        texts: list[str] = []
        lines: list[int] = []
        end_lines: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        line = 1
        spanning = 0  # the line of the first string that spans lines
        for m in _TOKEN_RE.finditer(text):
            group = m.lastindex
            if group == 1:
                line += 1
                continue
            if group == 2:
                comment = m.group(2)
                if comment[1] == "*":
                    line += comment.count("\n")
                continue
            tok = m.group(group or 7)
            if group == 7:
                if tok == '"':
                    what = "unterminated string: a '\"' that no '\"' closes"
                    if spanning:
                        what += f" (or the first string over several lines, from line {spanning}, is one left open)"
                elif tok == "/":
                    what = "unterminated comment: a '/*' that no '*/' closes"
                else:
                    what = f"unexpected character {tok!r}"
                raise HloParseError(what, line)
            kinds.append("w" if group == 6 else "s" if group == 3 else ">" if group == 4 else tok)
            texts.append(tok)
            lines.append(line)
            starts.append(m.end() - len(tok))
            ends.append(m.end())
            if group == 3 and "\n" in tok:
                spanning = spanning or line
                line += tok.count("\n")
            end_lines.append(line)
        self.kinds = kinds
        self.texts = texts
        self.lines = lines
        self.end_lines = end_lines
        self.starts = starts
        self.ends = ends


_ESCAPE_RE = re.compile(r"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "?": "?"}


def unquote(token: str) -> str:
    """Decode a C-escaped string token (with its quotes), as ``absl::CEscape``
    writes it: octal escapes are UTF-8 bytes."""
    body = token[1:-1]
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    for m in _ESCAPE_RE.finditer(body):
        out += body[pos : m.start()].encode("utf-8", "surrogatepass")
        esc = m.group(1)
        if esc[0] in "01234567":
            out.append(int(esc, 8) & 0xFF)
        elif esc[0] == "x" and len(esc) > 1:
            out.append(int(esc[1:], 16))
        else:
            out += _SIMPLE_ESCAPES.get(esc, esc).encode("utf-8", "surrogatepass")
        pos = m.end()
    out += body[pos:].encode("utf-8", "surrogatepass")
    return out.decode("utf-8", "replace")
