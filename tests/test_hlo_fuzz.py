"""Property tests: mutated real modules either parse or raise HloParseError,
and the analysis of a module does not depend on layout details of the text."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sphinx_jaxhlo.hlo.fusion import Analysis, analyze_module
from sphinx_jaxhlo.hlo.model import HloParseError
from sphinx_jaxhlo.hlo.parse import parse_module

DATA = Path(__file__).parent / "data" / "hlo"
TEXTS = {p.name: p.read_text() for p in sorted(DATA.glob("*.txt")) if not p.name.endswith(".error.txt")}
NAMES = sorted(TEXTS)

pytestmark = pytest.mark.skipif(not TEXTS, reason="no stored modules in tests/data/hlo")

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SHAPE_RE = re.compile(r"\b(?:pred|token|[suf]\d+|bf16|c64|c128)\[[^\]]*\]")
NAME_RE = re.compile(r"%[\w.\-]+")
SHAPES = [
    "f32[]",
    "s32[3]",
    "pred[2,2]",
    "bf16[<=7,3]",
    "f32[0]",
    "u4[9]",
    "(f32[2], s8[])",
    "f32[99999999999,99999999999]",
    "q9[1]",
    "f32[x]",
]


def parse_or_error(text: str) -> Analysis | None:
    """Parse and analyze; only HloParseError may escape (it is caught here)."""
    try:
        module = parse_module(text)
    except HloParseError as exc:
        # every refusal of a text says on which line
        assert exc.line >= 1, exc
        assert str(exc).startswith(f"line {exc.line}: ")
        assert exc.message
        return None
    try:
        return analyze_module(module)
    except HloParseError:
        return None


def mutate(text: str, rng: random.Random, kind: str) -> str:
    lines = text.split("\n")
    if kind == "drop":
        del lines[rng.randrange(len(lines))]
    elif kind == "duplicate":
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    elif kind == "shape":
        found = list(SHAPE_RE.finditer(text))
        if found:
            m = rng.choice(found)
            return text[: m.start()] + rng.choice(SHAPES) + text[m.end() :]
    elif kind == "name":
        found = list(NAME_RE.finditer(text))
        if found:
            m = rng.choice(found)
            other = rng.choice(found).group(0) if rng.random() < 0.7 else "%nowhere"
            return text[: m.start()] + other + text[m.end() :]
    elif kind == "byte":
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice('{}()[],=:"/*% \n\\xROOT') + text[at:]
    elif kind == "swap":
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "comment":  # a // comment from a random place to the end of its line
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(["//", " // x", "/*", "*/"]) + text[at:]
    elif kind == "compact":  # a compact tuple index on a random name
        found = list(NAME_RE.finditer(text))
        if found:
            m = rng.choice(found)
            return text[: m.end()] + rng.choice(["#0", "#1", "#7", "#0#1", "#", "#x"]) + text[m.end() :]
    elif kind == "thread":  # an attribute after a random closing brace
        i = rng.randrange(len(lines))
        lines[i] = lines[i] + rng.choice([', execution_thread="host"', ", execution_thread", ', x="a\nb"', ","])
    elif kind == "newline_in_string":
        found = [m.start() + 1 for m in re.finditer(r'"[^"\n]+', text)]
        if found:
            at = rng.choice(found)
            return text[:at] + "\n" + text[at:]
    return "\n".join(lines)


KINDS = ["drop", "duplicate", "truncate", "shape", "name", "byte", "swap", "comment", "compact", "thread",
         "newline_in_string"]


@FAST
@given(
    name=st.sampled_from(NAMES or [""]),
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=4),
    seed=st.integers(0, 2**32 - 1),
)
def test_mutated_modules_parse_or_raise_parse_error(name: str, kinds: list[str], seed: int) -> None:
    rng = random.Random(seed)
    text = TEXTS[name]
    for kind in kinds:
        text = mutate(text, rng, kind)
    parse_or_error(text)


@FAST
@given(name=st.sampled_from(NAMES or [""]), data=st.data())
def test_arbitrary_slices_parse_or_raise_parse_error(name: str, data: st.DataObject) -> None:
    text = TEXTS[name]
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    parse_or_error(text[start:end])
    parse_or_error(text[:start] + text[end:])


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet='HloModule ENTRY%ab=f32[1]{}()<,>:"\\/*#b\n ', max_size=200))
def test_random_text_parses_or_raises_parse_error(text: str) -> None:
    parse_or_error(text)
    parse_or_error("HloModule m\n" + text)


def respace(text: str, rng: random.Random) -> str:
    """Extra whitespace where HLO allows it: indentation, line ends, blank
    lines, around ' = ' and after commas between attributes."""
    out = []
    for line in text.split("\n"):
        if line.strip() and rng.random() < 0.5:
            line = " " * rng.randrange(1, 4) + "\t" * rng.randrange(0, 2) + line.lstrip()
        if rng.random() < 0.3:
            line = line.replace(" = ", "  =   ", 1)
        if rng.random() < 0.3:
            line = line.replace(", metadata=", ",   metadata=", 1).replace(", kind=", " ,kind=", 1)
        out.append(line + " " * rng.randrange(0, 3))
        if rng.random() < 0.2:
            out.append(" " * rng.randrange(0, 3))
    return "\n".join(out)


def reorder(text: str, rng: random.Random) -> str:
    """Shuffle the computations that are not the entry."""
    head, sep, rest = text.partition("\n\n%")
    if not sep:
        return text
    blocks = ("%" + rest).split("\n\n")
    comps = [b for b in blocks if b.strip().startswith("%")]
    others = [b for b in blocks if not b.strip().startswith("%")]
    rng.shuffle(comps)
    return head + "\n\n" + "\n\n".join(comps + others)


@FAST
@given(name=st.sampled_from(NAMES or [""]), seed=st.integers(0, 2**32 - 1))
def test_analysis_ignores_whitespace_and_computation_order(name: str, seed: int) -> None:
    rng = random.Random(seed)
    text = TEXTS[name]
    expected = analyze_module(text)
    shuffled = reorder(text, rng)
    assert sorted(parse_module(shuffled).computations) == sorted(parse_module(text).computations)
    assert analyze_module(shuffled) == expected
    assert analyze_module(respace(text, rng)) == expected
    assert analyze_module(respace(shuffled, rng)) == expected


CYCLE = """HloModule cycle
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %e = f32[4]{0} exponential(%p)
  %a = (f32[4]{0}, (f32[4]{0}, f32[4]{0})) tuple(%e, %b)
  %b = (f32[4]{0}, (f32[4]{0}, f32[4]{0})) tuple(%a, %e)
  ROOT %r = f32[4]{0} negate(%e)
}
"""

#: Run in a process of its own with its memory bounded: the walk this guards against grows without end.
BOUNDED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))
from sphinx_jaxhlo.hlo.fusion import analyze_module
print(sorted(m.name for m in analyze_module(sys.stdin.read()).materialized))
"""


def test_a_cycle_of_tuples_in_a_damaged_text_ends() -> None:
    """Two tuples that hold each other (no real module has one; a mutated text can): the readers of
    a buffer are found through them without a path that grows until memory runs out (it took 23 GB)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", BOUNDED], input=CYCLE, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "['e']"

