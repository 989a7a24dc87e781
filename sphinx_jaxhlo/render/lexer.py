"""Pygments lexers for XLA HLO text and StableHLO (MLIR) text.

`HloLexer` reads the optimized module that ``jax.jit(f).lower(...).compile().as_text()``
prints; `StableHloLexer` reads the lowered module that ``lowered.as_text()`` prints.

Both lexers are written to accept any input: every character that no specific rule
recognises falls through to a plain `Text` token, so neither lexer ever emits an
`Error` token, and the token values always concatenate back to the input.

Token types, HLO (`HloLexer`):

- ``HloModule``, ``ENTRY``, ``ROOT``, the ``FileNames`` / ``FunctionNames`` /
  ``FileLocations`` / ``StackFrames`` table heads: `Keyword`;
  the module name after ``HloModule``: `Name.Namespace`.
- shape ``f32[8,128]``, ``s32[]``, ``f32[<=8,?]``: `Keyword.Type`; its layout
  ``{1,0:T(8,128)S(1)}``: `Layout` (``Keyword.Type.Layout``, a subtype, so a style that
  colours types colours layouts too; HTML class ``kt kt-Layout``).
- opcode (``fusion``, ``custom-call``, ``all-reduce-start``): `Name.Builtin`.
- ``%name`` (defined or used) and signature parameters (``param_0.1:``): `Name.Variable`.
- computation name where it is defined (``%fused_computation.1 (...) -> ... {``,
  ``ENTRY %main``) or named by ``calls=``, ``to_apply=``, ``condition=``, ``body=``,
  ``branch_computations={...}``: `Name.Function`.
- attribute key (``kind``, ``dimensions``, ``op_name``, ``file_name_id``): `Name.Attribute`;
  JSON object key inside ``backend_config={...}``: `Name.Tag`.
- ``kInput``, ``EQ``, ``API_VERSION_TYPED_FFI``: `Name.Constant`; ``true``, ``false``,
  ``null``: `Keyword.Constant`; ``#sdy.mesh``: `Name.Decorator`; other bare words
  (``bf_oi``, ``replicated``): `Name`.
- strings: `String.Double`, escapes in them `String.Escape`; numbers
  `Number.Integer` / `Number.Float` (``inf``, ``-inf``, ``nan`` included) / `Number.Hex`;
  ``/*index=5*/``: `Comment.Multiline`; ``// ...``: `Comment.Single`;
  ``{}()[],:``: `Punctuation`; ``=``, ``->``, ``<=``: `Operator`.

Token types, StableHLO (`StableHloLexer`): ``stablehlo.add`` and quoted generic ops
``"stablehlo.case"``: `Name.Builtin`; ``%0``, ``%arg0``, ``%2#1``: `Name.Variable`;
``@main``: `Name.Function`; ``^bb0`` and ``#loc12``: `Name.Label`; ``#stablehlo.scatter``:
`Name.Decorator`; ``tensor<100000x3xf32>``, ``f32``, ``i32``: `Keyword.Type`;
``module``, ``func.func``, ``public``, ``loc``, ``dense``, ``applies``, ``across``:
`Keyword`; ``contracting_dims`` (before ``=``): `Name.Attribute`; ``GT``, ``FLOAT``:
`Name.Constant`; strings, numbers, comments, punctuation as for HLO.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from pygments.lexer import RegexLexer, bygroups, default
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
    _TokenType,
)

__all__ = ["HloLexer", "Layout", "StableHloLexer"]

#: Token type of a layout such as ``{1,0:T(8,128)S(1)}``; a subtype of `Keyword.Type`
#: so styles that colour types colour layouts too unless they say otherwise.
Layout = Keyword.Type.Layout

# Element types of XLA shapes: pred, s4..s64, u4..u64, f16/f32/f64, bf16, c64/c128,
# the f8/f6/f4 families (f8e4m3fn, f8e5m2fnuz, f4e2m1fn, f8e8m0fnu, ...), token, opaque.
_HLO_DTYPE = r"(?:pred|token|opaque|bf16|tf32|[suc]\d+|f\d+(?:e\d+m\d+\w*)?)"
# An HLO identifier: words joined by single dots or hyphens (get-tuple-element,
# fused_computation.1, xla.sdy.sharding); it never ends in a hyphen, so `bf_oi->bf`
# splits before the arrow.  Atomic: where an identifier stops, it is followed by no
# word character, dot or hyphen, so a shorter one could never let a rule match, and
# the group spares the regex engine trying them all.
_HLO_IDENT = r"(?>[A-Za-z_]\w*(?:[.\-]\w+)*)"
# Attributes whose value names a computation (or a list of them).
_HLO_COMP_ATTRS = (
    r"(?:calls|to_apply|condition|body|branch_computations|called_computations"
    r"|true_computation|false_computation|select|scatter|async_wrapped_computation)"
)

# An HLO rule: its regex; the token type of the whole match, or one per group (as
# `bygroups`); the state it pushes ("#pop" pops), or None; and the classes (below) of
# the characters a match of the regex can start with.
_HloRule = tuple[str, _TokenType | tuple[_TokenType, ...], str | None, tuple[str, ...]]

# Classes of the character at which a token starts, disjoint, in the order the scanner
# tries them (by how often real modules start a token with one; "other" is the rest).
_HLO_START_CLASSES: dict[str, str | None] = {
    "space": r"\s",
    "punct": r"[{}()\[\],:;]",
    "op": r"[=<>!*+|@$&^~?\\']",
    "word": r"[A-Za-z_]",
    "quote": r'"',
    "number": r"[\-.\d]",
    "percent": r"%",
    "slash": r"/",
    "hash": r"#",
    "other": None,
}

# The root state: at each position the first rule whose regex matches there wins.
_HLO_ROOT_RULES: list[_HloRule] = [
    (r"\s+", Whitespace, None, ("space",)),
    (r"/\*.*?\*/", Comment.Multiline, None, ("slash",)),
    (r"//[^\n]*", Comment.Single, None, ("slash",)),
    # Module header: HloModule jit_f, is_scheduled=true, ...
    (r"(HloModule)(\s+)([^\s,]+)", (Keyword, Whitespace, Name.Namespace), None, ("word",)),
    # Source tables that metadata's stack_frame_id refers to.
    (r"^(?:FileNames|FunctionNames|FileLocations|StackFrames)\b", Keyword, None, ("word",)),
    # ENTRY %main.2 (...) -> ... {
    (r"(ENTRY)(\s+)(%?" + _HLO_IDENT + ")", (Keyword, Whitespace, Name.Function), None, ("word",)),
    (r"\bROOT\b", Keyword, None, ("word",)),
    # A computation definition starts a line: %fused_computation.1 (p: f32[]) -> ...
    (r"^%?" + _HLO_IDENT + r"(?=[ \t]*\()", Name.Function, None, ("word", "percent")),
    # Shapes: f32[50000,3]{1,0:T(8,128)S(1)}, s32[], bf16[<=4,?]{0:T(1024)(128)(2,1)}
    (
        r"(?<![\w.%\-])(" + _HLO_DTYPE + r"\[[^\]\n]*\])(\{[^{}\n]*\})?",
        (Keyword.Type, Layout),
        None,
        ("word",),
    ),
    # Attribute values that name computations.
    (
        r"(" + _HLO_COMP_ATTRS + r")(=)(%?" + _HLO_IDENT + ")",
        (Name.Attribute, Operator, Name.Function),
        None,
        ("word",),
    ),
    (
        r"(" + _HLO_COMP_ATTRS + r")(=)(\{)",
        (Name.Attribute, Operator, Punctuation),
        "computation-list",
        ("word",),
    ),
    (r"%[\w.\-]+", Name.Variable, None, ("percent",)),
    # JSON object keys (backend_config={"kind":...}).
    (r'"[^"\\\n]*"(?=\s*:)', Name.Tag, None, ("quote",)),
    (r'"[^"\\\n]*"', String.Double, None, ("quote",)),
    (r'"', String.Double, "string", ("quote",)),
    # Numbers.
    (r"-?(?:inf|nan)\b", Number.Float, None, ("number", "word")),
    (r"-?0x[0-9a-fA-F]+", Number.Hex, None, ("number",)),
    # Window and padding descriptions: 3x3, 0_1x0_1, -1_-1.
    (r"-?\d+(?:_-?\d+)?(?:x-?\d+(?:_-?\d+)?)+\b|-?\d+_-?\d+\b", Number.Integer, None, ("number",)),
    (
        r"-?\d+\.\d*(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+|-?\.\d+(?:[eE][+-]?\d+)?",
        Number.Float,
        None,
        ("number",),
    ),
    (r"-?\d+", Number.Integer, None, ("number",)),
    (r"(?:true|false|null)\b", Keyword.Constant, None, ("word",)),
    # Signature parameters: (param_0.1: f32[50000,3], ...)
    (r"(" + _HLO_IDENT + r")(:)(?=[ \t])", (Name.Variable, Punctuation), None, ("word",)),
    # Opcodes: a lower-case word directly followed by its operand list (atomic, as
    # `_HLO_IDENT` is).
    (r"(?>[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*)(?=\()", Name.Builtin, None, ("word",)),
    # Attribute keys: kind=, metadata={op_name=...}, xla.sdy.meshes={m = ...}
    (_HLO_IDENT + r"(?=[ \t]*=(?!=))", Name.Attribute, None, ("word",)),
    (r"#[A-Za-z_][\w.$\-]*", Name.Decorator, None, ("hash",)),
    # Enumerations: kInput, EQ, TOTALORDER, API_VERSION_TYPED_FFI.
    (r"(?:k[A-Z]\w*|[A-Z][A-Z0-9_]*)\b", Name.Constant, None, ("word",)),
    (_HLO_IDENT, Name, None, ("word",)),
    (r"\.\.\.", Punctuation, None, ("number",)),
    (r"->|<=|>=|==|!=", Operator, None, ("op", "number")),
    (r"[{}()\[\],:;]", Punctuation, None, ("punct",)),
    (r"[=<>*+\-/|@!$&^~?\\.']", Operator, None, ("op", "number", "slash")),
    # Any other character; at one of the other classes an earlier rule always matches.
    (r".", Text, None, ("percent", "hash", "other")),
]

# Inside ``branch_computations={...}``: the computations it lists.  Anything else
# pops back to the root state (`default`), to be lexed there.
_HLO_COMP_LIST_RULES: list[_HloRule] = [
    (r"\s+", Whitespace, None, ()),
    (r"/\*.*?\*/", Comment.Multiline, None, ()),
    (r"//[^\n]*", Comment.Single, None, ()),
    (r"%?" + _HLO_IDENT, Name.Function, None, ()),
    (r",", Punctuation, None, ()),
    (r"\}", Punctuation, "#pop", ()),
]

# A string with an escape in it, or one that runs past the end of its line.
_HLO_STRING_RULES: list[_HloRule] = [
    (r'[^"\\]+', String.Double, None, ()),
    (r"\\.", String.Escape, None, ()),
    (r"\\", String.Double, None, ()),
    (r'"', String.Double, "#pop", ()),
]


def _pygments_rules(rules: list[_HloRule]) -> list[Any]:
    """`rules` as entries of a `RegexLexer.tokens` state."""
    out: list[Any] = []
    for regex, action, new_state, _ in rules:
        callback = action if isinstance(action, _TokenType) else bygroups(*action)
        out.append((regex, callback) if new_state is None else (regex, callback, new_state))
    return out


class _Scanner:
    """The rules of one lexer state compiled into a single regex, for `HloLexer`.

    A `RegexLexer` tries the rules of the current state one after the other at each
    position, a regex match per rule; here the rules are alternatives of one regex (in
    the same order, and an alternation takes its first alternative that matches), so a
    token costs one match.  Each alternative ends with an empty marker group, the last
    group to close when it matches, so ``match.lastindex`` tells which rule matched:
    `simple` maps the marker of a rule that gives the whole match one token type to that
    type; `special` maps the marker of any other rule to the token types of its groups,
    the index of the first of them (0: the whole match), and the state it pushes.

    With `start_classes`, the alternatives are grouped by the class of character their
    matches can start with, each group tried only at a character of its class and
    holding, in order, the rules that can match there; the groups are then tried in
    the order of the classes, most frequent first.
    """

    __slots__ = ("finditer", "match", "simple", "special")

    def __init__(self, rules: list[_HloRule], start_classes: dict[str, str | None] | None = None) -> None:
        self.simple: list[_TokenType | None] = [None]
        self.special: list[tuple[tuple[_TokenType, ...], int, str | None]] = [((), 0, None)]
        groups: list[tuple[str | None, list[_HloRule]]]
        if start_classes is None:
            groups = [(None, rules)]
        else:
            groups = [(guard, [r for r in rules if name in r[3]]) for name, guard in start_classes.items()]
        branches: list[str] = []
        for guard, group in groups:
            alternatives: list[str] = []
            for regex, action, new_state, _ in group:
                first = len(self.simple)
                width = re.compile(regex).groups + 1  # and the marker
                self.simple += [None] * width
                self.special += [((), 0, None)] * width
                alternatives.append(f"(?:{regex})()")
                if not isinstance(action, _TokenType):
                    self.special[-1] = (action, first, new_state)
                elif new_state is not None:
                    self.special[-1] = ((action,), 0, new_state)
                else:
                    self.simple[-1] = action
            body = "|".join(alternatives)
            branches.append(f"(?={guard})(?:{body})" if guard else body)
        compiled = re.compile("|".join(branches), RegexLexer.flags)
        self.finditer = compiled.finditer
        self.match = compiled.match


# Every character can start a match of `_HLO_ROOT` (`\s+` or `.`), so the matches of
# its `finditer` are contiguous and cover the text.
_HLO_ROOT = _Scanner(_HLO_ROOT_RULES, _HLO_START_CLASSES)
_HLO_SUBSTATES = {
    "computation-list": _Scanner(_HLO_COMP_LIST_RULES),
    "string": _Scanner(_HLO_STRING_RULES),
}


class HloLexer(RegexLexer):
    """Lexer for XLA HLO text (``HloModule ...``), as ``Compiled.as_text()`` prints it."""

    name = "HLO"
    aliases = ("hlo",)
    filenames = ("*.hlo",)
    mimetypes = ("text/x-hlo",)
    url = "https://openxla.org/xla/operation_semantics"

    # The specification: `get_tokens_unprocessed` gives what `RegexLexer` gives for this
    # table, only faster (it runs the same rules through `_Scanner`s); the table itself
    # serves a caller that starts from another `stack`.
    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": _pygments_rules(_HLO_ROOT_RULES),
        "computation-list": [*_pygments_rules(_HLO_COMP_LIST_RULES), default("#pop")],
        "string": _pygments_rules(_HLO_STRING_RULES),
    }

    def get_tokens_unprocessed(
        self, text: str, stack: Iterable[str] = ("root",)
    ) -> Iterator[tuple[int, _TokenType, str]]:
        """Split `text` into ``(index, tokentype, value)``, as `tokens` specifies."""
        stack = list(stack)
        if stack != ["root"]:
            yield from super().get_tokens_unprocessed(text, stack)
            return
        root_finditer = _HLO_ROOT.finditer
        root_simple = _HLO_ROOT.simple
        root_special = _HLO_ROOT.special
        end = len(text)
        pos = 0
        while pos < end:
            state = None
            for m in root_finditer(text, pos):
                # (Every alternative has a marker group, so `lastindex` is never None.)
                marker: int = m.lastindex  # type: ignore[assignment]
                ttype = root_simple[marker]
                if ttype is not None:
                    yield m.start(), ttype, m.group()
                    continue
                types, first, state = root_special[marker]
                for group, ttype in enumerate(types, first):
                    value = m.group(group)
                    if value:  # as `bygroups`, which skips empty and unmatched groups
                        yield m.start(group), ttype, value
                if state is not None:
                    pos = m.end()
                    break
            if state is None:  # the end of the text
                return
            # A state pushed on top of "root"; its rules push nothing, and once it pops
            # (its "#pop" rule, or where none of its rules match) "root" goes on.
            scanner = _HLO_SUBSTATES[state]
            match = scanner.match
            simple = scanner.simple
            special = scanner.special
            while (sm := match(text, pos)) is not None:
                pos = sm.end()
                marker = sm.lastindex  # type: ignore[assignment]
                ttype = simple[marker]
                if ttype is None:  # the "#pop" rule
                    yield sm.start(), special[marker][0][0], sm.group()
                    break
                yield sm.start(), ttype, sm.group()

    def class_spans(self, text: str, class_of: Mapping[_TokenType, str]) -> list[str]:
        """The tokens of `get_tokens_unprocessed` from ``"root"`` as one flat list,
        ``[class, value, class, value, ...]``, each class ``class_of[tokentype]``: what a
        page's script is given (:func:`sphinx_jaxhlo.render.nodes.highlighted_spans`).
        The same scan without a generator step, a tuple and a look-up of its token type
        per token: a third of the time on a small module (``tests/test_lexer.py`` checks
        that both give the same tokens)."""
        out: list[str] = []
        add = out.append

        def classes(types: list[_TokenType | None]) -> list[str | None]:
            return [None if t is None else class_of[t] for t in types]

        root_finditer = _HLO_ROOT.finditer
        root_simple = classes(_HLO_ROOT.simple)
        root_special = _HLO_ROOT.special
        end = len(text)
        pos = 0
        while pos < end:
            state = None
            for m in root_finditer(text, pos):
                # (``m[0]``, not ``m.group()``: a subscript, not a method call, on every token)
                marker: int = m.lastindex  # type: ignore[assignment]
                cls = root_simple[marker]
                if cls is not None:
                    add(cls)
                    add(m[0])
                    continue
                types, first, state = root_special[marker]
                for group, ttype in enumerate(types, first):
                    value = m[group]
                    if value:
                        add(class_of[ttype])
                        add(value)
                if state is not None:
                    pos = m.end()
                    break
            if state is None:
                return out
            scanner = _HLO_SUBSTATES[state]
            match = scanner.match
            simple = classes(scanner.simple)
            special = scanner.special
            while (sm := match(text, pos)) is not None:
                pos = sm.end()
                marker = sm.lastindex  # type: ignore[assignment]
                cls = simple[marker]
                if cls is None:  # the "#pop" rule
                    add(class_of[special[marker][0][0]])
                    add(sm[0])
                    break
                add(cls)
                add(sm[0])
        return out

    @staticmethod
    def analyse_text(text: str) -> float:
        head = text.lstrip()[:200]
        if head.startswith("HloModule "):
            return 1.0
        if "ENTRY %" in text and " = " in text:
            return 0.5
        return 0.0


class StableHloLexer(RegexLexer):
    """Lexer for StableHLO / MHLO modules in MLIR text form (``Lowered.as_text()``)."""

    name = "StableHLO"
    aliases = ("stablehlo", "mhlo")
    filenames = ("*.stablehlo",)
    mimetypes = ("text/x-stablehlo",)
    url = "https://openxla.org/stablehlo/spec"

    _keywords = (
        "module",
        "attributes",
        "public",
        "private",
        "nested",
        "return",
        "loc",
        "applies",
        "across",
        "init",
        "cond",
        "do",
        "to",
        "at",
        "callsite",
        "fused",
        "unknown",
        "dense",
        "dense_resource",
        "sparse",
        "array",
        "affine_map",
        "reducer",
        "then",
        "else",
    )

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"\s+", Whitespace),
            (r"//[^\n]*", Comment.Single),
            # Generic op form: "stablehlo.custom_call"(%0) {...}
            (r'"[A-Za-z_][\w$]*\.[\w.$]+"(?=\()', Name.Builtin),
            (r'"[^"\\\n]*"', String.Double),
            (r'"', String.Double, "string"),
            (r"%[\w.$\-]+(?:[:#]\d+)?", Name.Variable),
            (r'@(?:[\w.$\-]+|"[^"\n]*")', Name.Function),
            (r"\^[\w.$\-]+", Name.Label),
            (r"#loc\d*\b", Name.Label),
            (r"#[\w.$\-]+", Name.Decorator),
            (r"![\w.$\-]+", Keyword.Type),
            (r"(?:tensor|memref|vector|tuple|complex)<[^<>\n]*>", Keyword.Type),
            (r"(?:tensor|memref|vector|tuple|complex)<", Keyword.Type, "type"),
            (r"(?:[su]?i\d+|f\d+|bf16|tf32|f[468]E\w+|index|none)\b", Keyword.Type),
            # Attribute names: contracting_dims = [1], mhlo.num_partitions = 1 : i32
            (r"[A-Za-z_][\w$.\-]*(?=[ \t]*=(?!=))", Name.Attribute),
            (r"func\.func\b", Keyword),
            (r"[a-z_]\w*\.[\w.$]+", Name.Builtin),
            (r"(?:" + "|".join(_keywords) + r")\b", Keyword),
            (r"(?:true|false)\b", Keyword.Constant),
            (r"[A-Z][A-Z0-9_]*\b", Name.Constant),
            (r"[A-Za-z_][\w$.]*", Name),
            (r"0x[0-9a-fA-F]+", Number.Hex),
            (r"[-+]?\d+\.\d*(?:[eE][+-]?\d+)?|[-+]?\d+[eE][+-]?\d+", Number.Float),
            (r"[-+]?\d+", Number.Integer),
            (r"->", Punctuation),
            (r"=", Operator),
            (r"[(){}\[\],:<>]", Punctuation),
            (r"[*+\-/|?!&^~\\.']", Operator),
            (r".", Text),
        ],
        "type": [
            (r"<", Keyword.Type, "#push"),
            (r">", Keyword.Type, "#pop"),
            (r"[^<>\n]+", Keyword.Type),
            (r"\n", Whitespace, "#pop"),
        ],
        "string": [
            (r'[^"\\]+', String.Double),
            (r"\\.", String.Escape),
            (r"\\", String.Double),
            (r'"', String.Double, "#pop"),
        ],
    }

    @staticmethod
    def analyse_text(text: str) -> float:
        if "stablehlo." in text or "mhlo." in text:
            return 1.0 if "module @" in text else 0.3
        return 0.0
