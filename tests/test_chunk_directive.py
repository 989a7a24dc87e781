"""The directive's ``:chunk:`` option: the variant compiled beside the original, proved and checked at build time."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from sphinx_jaxhlo.chunking.source import add_variant, parse_chunk_option


@pytest.mark.sphinx("html", testroot="chunk")
def test_the_chunked_variant_is_compiled_proved_and_checked(app: Any) -> None:
    app.build()
    warnings = app.warning.getvalue()
    page = Path(app.outdir) / "index.html"
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    first, softmax, average = soup.select("div.jaxhlo")
    text = first.select_one("div.jaxhlo-source").get_text()
    # the page shows the plain-JAX code of the variant, and the check's result and tolerance
    assert "def with_dot_chunked(pos, hkl):" in text and "lax.scan(step, total, [pos_chunks])" in text
    assert "part = jax.checkpoint(part, prevent_cse=False)" in text
    (check,) = first.select("p.jaxhlo-chunk-check")
    # what was checked is the code shown, as written: chunks of 1000, two and a remainder
    assert re.search(r"the code shown \(with_dot_chunked\) ran as written on random f32\[2333,3\], f32\[64,3\], in 3 "
                     r"chunks \(2 of 1000 and one of 333\), against with_dot: relative error \S+, equal within the "
                     r"tolerance 1e-04", check.get_text()), check.get_text()
    # the expectations named for each function hold: 20 GB of temp for the original, under 1 GB chunked
    assert len(first.select("li.jaxhlo-pass")) == 2 and not first.select("li.jaxhlo-fail")
    # the original's report suggests the chunking (64 MiB budget: chunks of 250, a divisor), proved, checked and
    # compiled, with the call and the code
    (suggestion,) = first.select("p.jaxhlo-chunk-suggestion")
    assert suggestion.get_text().startswith("Chunking would bound it: the result reduces over axis 0 of pos "
                                            "(100000 long)")
    assert "needs 50.0 MB of temp memory instead of 20.0 GB" in suggestion.get_text()
    code = suggestion.find_next_sibling("div").get_text()
    assert "sphinx_jaxhlo.chunked(with_dot, argnums=0, size=250, axis=0, combine='sum')" in code
    # the example already defines with_dot_chunked (the :chunk: variant): the suggested code takes a fresh name
    assert "def with_dot_chunked_(pos, hkl):" in code
    assert not softmax.select("p.jaxhlo-chunk-suggestion")
    assert not softmax.select("p.jaxhlo-chunk-refusal")  # 8.4 MB, under the budget: nothing searched
    # a softmax over the chunked axis: refused, located at the line of the softmax (document line 27)
    refused = [ln for ln in warnings.splitlines() if "jaxhlo.chunk" in ln]
    assert any("index.rst:27" in ln and "`sub`" in ln and "softmax" in ln for ln in refused), refused
    assert "weights_chunked" in softmax.get_text(" ") and "Not compiled" in softmax.get_text(" ")
    # a mean combined as a sum: the proof follows the length of the axis and refuses it, at the mean's line
    assert any("index.rst:40" in ln and "is a mean over the chunked axis" in ln
               and "(combine='mean' combines it)" in ln for ln in refused), refused
    assert "average_chunked" in average.get_text(" ")
    # an argument the function does not have: a located option warning, an error box
    assert any("index.rst:42" in ln and "has no positional argument 'y'" in ln for ln in refused), refused
    (box,) = soup.select(".jaxhlo-error")
    assert "total() has no positional argument" in box.get_text(" ")
    assert len(refused) == 3, refused


def test_parse_chunk_option() -> None:
    option = parse_chunk_option("x=25, y=25, combine=mean, axis=1")
    assert (option.args, option.size, option.axis, option.combine) == (("x", "y"), 25, 1, "mean")
    for bad, words in [("pos=abc", "not a whole number"), ("combine=sum", "name the argument"),
                       ("x=2, y=3", "one chunk size"), ("x=0", "at least 1"), ("x=2, combine=prod", "not one of")]:
        with pytest.raises(ValueError, match=words):
            parse_chunk_option(bad)


def test_add_variant_appends_the_code_and_what_to_check() -> None:
    source = "import jax.numpy as jnp\n\ndef f(a, x):\n    return jnp.sum(x * a, axis=0)\n"
    text, check = add_variant(source, "f", parse_chunk_option("x=8"))
    assert text.startswith(source)
    assert "def f_chunked(a, x):" in text and "return f(a, x_c)" in text
    assert check == {"of": "f", "argnums": [1], "size": 8, "axis": 0, "combine": "sum"}
    namespace: dict[str, Any] = {}
    exec(compile(text, "example.py", "exec"), namespace)
    import jax.numpy as jnp

    x = jnp.arange(60.0).reshape(20, 3)
    assert jnp.allclose(namespace["f_chunked"](2.0, x), namespace["f"](2.0, x))
    with pytest.raises(ValueError, match="not a top-level def"):
        add_variant(source, "g", parse_chunk_option("x=8"))


@pytest.mark.slow
@pytest.mark.sphinx("html", testroot="chunk-targets")
def test_the_variant_on_the_three_targets(app: Any) -> None:
    app.build()
    warnings = app.warning.getvalue()
    assert "WARNING" not in warnings, warnings
    soup = BeautifulSoup((Path(app.outdir) / "index.html").read_text(encoding="utf-8"), "html.parser")
    (block,) = soup.select("div.jaxhlo")
    rows = {tr.find("td").get_text(strip=True): [td.get_text(" ", strip=True) for td in tr.find_all("td")[1:]]
            for tr in block.select("table.jaxhlo-variants tbody tr")}
    assert set(rows) == {"phases", "phases_chunked"} and all(len(r) == 3 for r in rows.values())
    # the check ran for the variant on each target, and the five expectations hold
    assert len(block.select("p.jaxhlo-chunk-check")) == 3
    assert len(block.select("li.jaxhlo-pass")) == 5 and not block.select("li.jaxhlo-fail")
