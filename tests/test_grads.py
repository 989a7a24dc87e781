"""The gradient variant (``:grad:``, ``analyze_source(grad=)``, ``analyze(fn, grad=)``, ``--grad``):
its code, its errors as each front spells the option, and its reports beside the function's."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bs4 import BeautifulSoup

import sphinx_jaxhlo
from sphinx_jaxhlo.cli import main as cli_main
from sphinx_jaxhlo.core.example import COMMAND_LINE, DIRECTIVE, PYTHON, OptionProblem, parse_example
from sphinx_jaxhlo.gradient.build import variant_function
from sphinx_jaxhlo.gradient.option import parse_grad_option
from sphinx_jaxhlo.gradient.source import add_grad_variant, call_variant

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "docs" / "examples" / "seed.py").read_text(encoding="utf-8")
sys.path.insert(0, str(ROOT / "docs" / "examples"))
import seed  # noqa: E402


def _define(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, "example.py", "exec"), namespace)
    return namespace


def _normal(key: int, shape: tuple[int, ...]) -> jax.Array:
    return jax.random.normal(jax.random.key(key), shape, jnp.float32)


# -- the code -----------------------------------------------------------------------------------------


def test_the_variant_is_value_and_grad_for_a_scalar_and_a_ones_vjp_otherwise():
    source = ("import jax.numpy as jnp\n\n"
              "def loss(w, x, *, scale=2.0):\n    return jnp.sum(jnp.tanh(x @ w) * scale)\n\n"
              "def rows(w, x):\n    return jnp.tanh(x @ w)\n")
    text = add_grad_variant(add_grad_variant(source, "loss", ["w", "scale"]), "rows", ["0"])
    assert text.startswith(source)
    assert "def loss_grad(w, x, *, scale=2.0):" in text and "return loss(w, x, scale=scale)" in text
    assert "def rows_grad(w, x):" in text
    namespace = _define(text)
    w, x = _normal(0, (4, 3)), _normal(1, (5, 4))
    value, (d_w, d_scale) = namespace["loss_grad"](w, x, scale=3.0)
    want_value, want_w = jax.value_and_grad(namespace["loss"])(w, x, scale=3.0)
    want_scale = jax.grad(lambda s: namespace["loss"](w, x, scale=s))(3.0)
    np.testing.assert_allclose(value, want_value, rtol=1e-6)
    np.testing.assert_allclose(d_w, want_w, rtol=1e-5)
    np.testing.assert_allclose(d_scale, want_scale, rtol=1e-5)
    # a non-scalar output: the gradient of the sum of its outputs
    out, d_w = namespace["rows_grad"](w, x)
    np.testing.assert_allclose(out, namespace["rows"](w, x), rtol=1e-6)
    np.testing.assert_allclose(d_w, jax.grad(lambda v: jnp.sum(namespace["rows"](v, x)))(w), rtol=1e-5)
    # a function object's gradient is built from code by the same generator, which the worker runs
    code, binds, variants = call_variant("rows", ["w", "x"], [], ["w"], ["0"], "grad:")
    got = variant_function(namespace["rows"], code, binds, variants[0])(w, x)
    np.testing.assert_allclose(got[1], d_w, rtol=1e-6)
    code, binds, variants = call_variant("loss", ["w", "x"], ["scale"], ["scale"], ["scale", "jax.grad"], "grad:")
    assert variants == ["loss_grad_only"] and "def loss_grad_only(w, x, *, scale):" in code
    got = variant_function(namespace["loss"], code, binds, variants[0])(w, x, scale=3.0)
    np.testing.assert_allclose(got, d_scale, rtol=1e-6)


def test_the_code_of_a_function_objects_gradient_is_the_code_a_grad_example_shows():
    """One generator writes both: for a function object with the example's signature, the variant's
    code is the text a ``:grad:`` example appends to its source (a lambda is named ``function``, and
    a parameter with no name of its own gets a fresh one)."""
    source = "import jax.numpy as jnp\n\ndef with_dot(pos, hkl):\n    return jnp.sum(jnp.cos(pos @ hkl.T))\n"
    shown = add_grad_variant(source, "with_dot", ["hkl"], "grad:")
    code, binds, variants = call_variant("with_dot", ["pos", "hkl"], [], ["hkl"], ["hkl"], "grad:")
    assert binds == "with_dot" and variants == ["with_dot_grad"]
    assert shown.endswith("\n\n\n" + code)
    code, binds, variants = call_variant("<lambda>", ["argument 0", "argument 1"], [], ["argument 1"], ["1"],
                                         "grad:")
    assert binds == "function" and "def function_grad(_arg0, _arg1):" in code
    assert "return function(_arg0, _arg1)" in code and "jax.vjp(_of, _arg1)" in code
    pos, hkl = _normal(2, (6, 3)), _normal(3, (4, 3))
    value, d_hkl = variant_function(lambda p, h: jnp.sum(jnp.cos(p @ h.T)), code, binds, variants[0])(pos, hkl)
    want_value, want = jax.value_and_grad(lambda h: jnp.sum(jnp.cos(pos @ h.T)))(hkl)
    np.testing.assert_allclose(value, want_value, rtol=1e-6)
    np.testing.assert_allclose(d_hkl, want, rtol=1e-5)


def test_parse_and_the_errors_name_the_option_as_each_front_spells_it():
    assert parse_grad_option("pos, hkl") == ("pos", "hkl")
    assert parse_grad_option(1) == ("1",)
    assert parse_grad_option(["pos", 1]) == ("pos", "1")
    cases = [({"grad": "x y"}, "'x y' is neither an argument name nor a position"),
             ({"grad": ""}, "name the arguments to differentiate"),
             ({"grad": "hkl, hkl"}, "names an argument twice"),
             ({"grad": "q"}, "with_dot() has no argument 'q' (its arguments: pos, hkl)"),
             ({"grad": "2"}, "with_dot() has no positional argument 2 (its positional arguments: pos, hkl)")]
    for spell, name in ((DIRECTIVE, ":grad:"), (COMMAND_LINE, "--grad:"), (PYTHON, "grad:")):
        for options, words in cases:
            with pytest.raises(OptionProblem) as info:
                parse_example(SEED, {"function": "with_dot", **options}, spell=spell).with_grad_variants(spell)
            assert info.value.subtype == "grad"
            assert info.value.message.startswith(f"{name} ") and words in info.value.message, info.value.message


def test_the_example_lists_each_gradient_after_the_functions_a_chunked_variants_too():
    example = parse_example(SEED, {"function": "with_dot, explicit", "chunk": "pos=1000", "grad": "hkl"})
    example = example.with_chunk_variants().with_grad_variants()
    assert example.functions == ("with_dot", "with_dot_chunked", "explicit", "explicit_chunked", "with_dot_grad",
                                 "with_dot_chunked_grad", "explicit_grad", "explicit_chunked_grad")
    # the chunked variant's gradient proves and checks what the chunked variant does
    assert example.chunk_check("with_dot_chunked_grad") == example.chunk_check("with_dot_chunked") != ""
    assert example.chunk_check("with_dot_grad") == ""
    assert example.with_grad_variants() is example
    namespace = _define(example.source)
    pos, hkl = _normal(2, (2500, 3)), _normal(3, (40, 3))
    value, d_hkl = namespace["with_dot_chunked_grad"](pos, hkl)
    want_value, want = namespace["with_dot_grad"](pos, hkl)
    np.testing.assert_allclose(value, want_value, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(d_hkl, want, rtol=1e-3, atol=1e-2)
    # the default function: the last def
    assert parse_example(SEED, {"grad": "0"}).with_grad_variants().functions == ("with_dot_highest",
                                                                                 "with_dot_highest_grad")


# -- the fronts --------------------------------------------------------------------------------------


def test_analyze_and_analyze_source_compile_the_gradient_beside_the_function(tmp_path):
    for reports in (sphinx_jaxhlo.analyze(seed.with_dot, "f32[4000,3]", "f32[2000,3]", targets="cpu", grad="hkl"),
                    sphinx_jaxhlo.analyze_source(SEED, "with_dot", "f32[4000,3], f32[2000,3]", targets="cpu",
                                                 grad=1, source_name="seed.py")):
        by_function = {r.function: r for r in reports}
        assert set(by_function) == {"with_dot", "with_dot_grad"}
        table = 4000 * 2000 * 4
        assert by_function["with_dot"].memory.temp_bytes >= table
        # the backward pass keeps sin of the table too
        assert by_function["with_dot_grad"].memory.temp_bytes >= 2 * table
        text = str(reports)
        assert "=== with_dot ===" in text and "=== with_dot_grad ===" in text
        assert "with_dot_grad" in reports.to_html()
        reports.check(max_temp="with_dot@cpu=100MB, with_dot_grad@cpu=200MB")
    with pytest.raises(ValueError, match=r"^grad: with_dot\(\) has no argument 'q'"):
        sphinx_jaxhlo.analyze(seed.with_dot, "f32[4000,3]", "f32[2000,3]", targets="cpu", grad="q")
    with pytest.raises(ValueError, match=r"^grad: 'hkl' is not an argument of this call"):
        sphinx_jaxhlo.analyze(seed.with_dot, "f32[4000,3]", targets="cpu", grad="hkl")


def test_the_command_line_compiles_the_gradient_and_spells_its_errors(tmp_path, capsys):
    path = tmp_path / "seed.py"
    path.write_text(SEED, encoding="utf-8")
    code = cli_main([f"{path}:with_dot", "--args", "f32[4000,3], f32[2000,3]", "--targets", "cpu", "--grad", "hkl",
                     "--no-cache", "--json", "--expect-max-temp", "with_dot_grad@cpu=200MB"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert sorted(r["function"] for r in out["reports"]) == ["with_dot", "with_dot_grad"]
    assert cli_main([f"{path}:with_dot", "--args", "f32[4000,3], f32[2000,3]", "--targets", "cpu",
                     "--grad", "q", "--no-cache"]) == 2
    assert "error: --grad: with_dot() has no argument 'q'" in capsys.readouterr().err


# -- the directive --------------------------------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="grad")
def test_the_directive_compiles_each_gradient_and_locates_its_errors(app: Any) -> None:
    app.build()
    warnings = app.warning.getvalue()
    soup = BeautifulSoup((Path(app.outdir) / "index.html").read_text(encoding="utf-8"), "html.parser")
    first = soup.select("div.jaxhlo")[0]
    # the listing holds the example's code; the gradients' generated code is folded under it
    listing, generated = first.select("div.jaxhlo-source")
    assert "def with_dot(pos, hkl):" in listing.get_text() and "_grad(" not in listing.get_text()
    assert generated.find_parent("details").summary.get_text() == (
        "The code of the gradients (with_dot_grad, with_dot_chunked_grad), generated by :grad:")
    source = generated.get_text()
    assert "def with_dot_grad(pos, hkl):" in source and "def with_dot_chunked_grad(pos, hkl):" in source
    rows = {tr.find("td").get_text(strip=True) for tr in first.select("table.jaxhlo-variants tbody tr")}
    assert rows == {"with_dot", "with_dot_chunked", "with_dot_grad", "with_dot_chunked_grad"}
    # the original's gradient stores the table (and more); the chunked variant's stays within a few chunks
    assert len(first.select("li.jaxhlo-pass")) == 2 and not first.select("li.jaxhlo-fail")
    # the chunked variant's gradient was proved and checked as the chunked variant was
    assert len(first.select("p.jaxhlo-chunk-check")) == 2
    grad_warnings = [ln for ln in warnings.splitlines() if "jaxhlo.grad" in ln]
    assert any("index.rst:20" in ln and ":grad: total() has no argument 'q' (its arguments: x)" in ln
               for ln in grad_warnings), grad_warnings
    assert any("index.rst:31" in ln and ":grad: total() has no positional argument 1" in ln
               for ln in grad_warnings), grad_warnings
    assert any("index.rst:42" in ln and ":grad: 'x y' is neither an argument name nor a position" in ln
               for ln in grad_warnings), grad_warnings
    assert len(grad_warnings) == 3, grad_warnings
    assert len(soup.select(".jaxhlo-error")) == 3
    assert re.search(r"\bWARNING\b", "\n".join(ln for ln in warnings.splitlines() if "jaxhlo.grad" not in ln)) \
        is None, warnings


# -- two forms: jax.value_and_grad (the default) and jax.grad ---------------------------------------------


def rbf_pair_energy(x, y):
    d2 = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    return jnp.sum(jnp.exp(-d2))


def test_the_forms_are_named_and_jax_grad_returns_the_gradient_alone():
    assert parse_grad_option("x, jax.grad") == ("x", "jax.grad")
    source = "import jax.numpy as jnp\n\ndef loss(w, x):\n    return jnp.sum(jnp.tanh(x @ w))\n"
    text = add_grad_variant(source, "loss", ["w", "jax.grad", "jax.value_and_grad"])
    assert "def loss_grad(w, x):" in text and "def loss_grad_only(w, x):" in text
    assert ("\n# loss_grad and loss_grad_only (:grad: w, jax.grad, jax.value_and_grad): the gradient\n"
            "# of loss with respect to w, by jax.vjp with a cotangent of ones. For a float scalar\n"
            "# output, loss_grad returns what jax.value_and_grad returns, loss_grad_only returns\n"
            "# what jax.grad returns; for any other float output, the gradient is that of the sum\n"
            "# of its elements.\nimport jax\n") in text
    namespace = _define(text)
    w, x = _normal(0, (4, 3)), _normal(1, (5, 4))
    np.testing.assert_allclose(namespace["loss_grad_only"](w, x), jax.grad(namespace["loss"])(w, x), rtol=1e-5)
    value, grad = namespace["loss_grad"](w, x)
    np.testing.assert_allclose(value, namespace["loss"](w, x), rtol=1e-6)
    np.testing.assert_allclose(grad, jax.grad(namespace["loss"])(w, x), rtol=1e-5)
    # the default is the value and the gradient, as before: same text, one variant
    default, named = _comment_and_calls(add_grad_variant(source, "loss", ["w"])), _comment_and_calls(
        add_grad_variant(source, "loss", ["w", "jax.value_and_grad"]))
    assert default[0].replace("(:grad: w)", "(:grad: w, jax.value_and_grad)") == named[0]
    assert add_grad_variant(source, "loss", ["w"]).split("\nimport jax\n")[1] == add_grad_variant(
        source, "loss", ["w", "jax.value_and_grad"]).split("\nimport jax\n")[1]
    example = parse_example(source, {"function": "loss", "grad": "w, jax.grad"}).with_grad_variants()
    assert example.functions == ("loss", "loss_grad_only")
    with pytest.raises(OptionProblem, match=r"'jax\.vjp' is neither an argument name nor a position \(nor a form: "
                                            r"jax\.value_and_grad, jax\.grad\)"):
        parse_example(source, {"function": "loss", "grad": "w, jax.vjp"})


def test_the_figures_of_each_form_are_those_of_jax_grad_and_jax_value_and_grad():
    """The issue's rbf_pair_energy on the CPU: 1.6 GB of temp for the value and the gradient, 0 B for the
    gradient alone, each equal to a compile of jax's own function."""
    reports = sphinx_jaxhlo.analyze(rbf_pair_energy, "f32[10000,3]", "f32[10000,3]", targets="cpu",
                                    grad="x, jax.grad, jax.value_and_grad")
    temp = {r.function: r.memory.temp_bytes for r in reports}
    assert list(temp) == ["rbf_pair_energy", "rbf_pair_energy_grad", "rbf_pair_energy_grad_only"]

    def with_grad(x, y):
        return jax.grad(rbf_pair_energy)(x, y)

    def with_value_and_grad(x, y):
        return jax.value_and_grad(rbf_pair_energy)(x, y)

    independent = sphinx_jaxhlo.analyze(with_grad, "f32[10000,3]", "f32[10000,3]", targets="cpu")["cpu"]
    assert temp["rbf_pair_energy_grad_only"] == independent.memory.temp_bytes == 0
    independent = sphinx_jaxhlo.analyze(with_value_and_grad, "f32[10000,3]", "f32[10000,3]", targets="cpu")["cpu"]
    assert temp["rbf_pair_energy_grad"] == independent.memory.temp_bytes >= 10000 * 10000 * 4


def _comment_and_calls(text: str) -> tuple[str, set[str]]:
    """The comment above the gradient code, and the jax functions the code calls (``jax.vjp``)."""
    code = text[text.index("\n\n\n# ") + 3:]
    comment = " ".join(line[2:] for line in code.splitlines() if line.startswith("# "))
    called = {ast.unparse(node.func) for node in ast.walk(ast.parse(code))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    return comment, called


@pytest.mark.parametrize(("items", "alias"), [(["w"], "jax"), (["w", "jax.grad"], "jax"),
                                              (["w", "x", "jax.grad", "jax.value_and_grad"], "jax"),
                                              (["jax", "jax.grad"], "jax_")])
def test_the_comment_names_what_the_code_calls_and_what_it_equals(items: list[str], alias: str) -> None:
    """The comment says the code calls jax.vjp (under the alias the code imports jax as), and names
    jax.value_and_grad and jax.grad only as what the variants equal, never as what the code calls;
    every line fits in 88 columns; pasted, each variant gives jax's own function's value exactly."""
    third = "jax" if alias == "jax_" else "scale"  # an argument named jax: the code imports jax as jax_
    source = f"import jax.numpy as jnp\n\ndef loss(w, x, {third}):\n    return jnp.sum(jnp.tanh(x @ w) * {third})\n"
    text = add_grad_variant(source, "loss", items)
    comment, called = _comment_and_calls(text)
    assert f"{alias}.vjp" in called and f"by {alias}.vjp with a cotangent of ones" in comment
    forms = [f for f in ("jax.value_and_grad", "jax.grad") if f in items] or ["jax.value_and_grad"]
    named = set(re.findall(rf"\b{re.escape(alias)}\.[a-z_.]*[a-z]", comment))
    assert named == {f"{alias}.vjp", *(alias + f[3:] for f in forms)}
    assert not (named - {f"{alias}.vjp"}) & called
    for form in forms:
        assert f"returns what {alias}{form[3:]} returns" in comment
    assert all(len(line) <= 88 for line in text.splitlines())
    namespace = _define(text)
    args = (_normal(0, (4, 3)), _normal(1, (5, 4)), _normal(2, (3,)))
    wrt = tuple(("w", "x", third).index(i) for i in items if i not in forms)
    for form in forms:
        variant = namespace["loss_grad" if form == "jax.value_and_grad" else "loss_grad_only"]
        want = getattr(jax, form[4:])(namespace["loss"], argnums=wrt if len(wrt) > 1 else wrt[0])(*args)
        jax.tree.map(np.testing.assert_array_equal, variant(*args), want)


def test_an_argument_jax_grad_refuses_fails_with_its_reason_in_every_front(tmp_path, capsys):
    source = "import jax.numpy as jnp\n\ndef take(table, idx):\n    return table[idx].sum()\n"
    words = ("take() cannot be differentiated with respect to 'idx': its dtype is {}, and jax.grad refuses "
             "inputs that are not floating or complex")
    with pytest.raises(OptionProblem) as info:
        parse_example(source, {"args": "f32[100,4], i32[10]", "grad": "idx"}).with_grad_variants()
    assert info.value.subtype == "grad" and info.value.message.startswith(":grad: " + words.format("i32"))
    namespace = _define(source)
    with pytest.raises(ValueError, match="^grad: " + re.escape(words.format("int32"))):
        sphinx_jaxhlo.analyze(namespace["take"], "f32[100,4]", jax.ShapeDtypeStruct((10,), jnp.int32),
                              targets="cpu", grad=1)
    with pytest.raises(ValueError, match="^grad: " + re.escape(words.format("i32"))):
        sphinx_jaxhlo.analyze_source(source, "take", "f32[100,4], i32[10]", targets="cpu", grad="idx")
    path = tmp_path / "take.py"
    path.write_text(source, encoding="utf-8")
    assert cli_main([f"{path}:take", "--args", "f32[100,4], i32[10]", "--targets", "cpu", "--grad", "idx",
                     "--no-cache"]) == 2
    assert f"error: --grad: {words.format('i32')}" in capsys.readouterr().err
    # a boolean mask in a pytree is refused too; the float argument compiles
    with pytest.raises(ValueError, match="its dtype is bool"):
        sphinx_jaxhlo.analyze(lambda t: t["w"].sum(), {"w": "f32[3]", "m": "bool[3]"}, targets="cpu", grad=0)
    assert [r.function for r in sphinx_jaxhlo.analyze(namespace["take"], "f32[100,4]", "i32[10]", targets="cpu",
                                                      grad="table")] == ["take", "take_grad"]


def test_analyze_with_a_sweep_compiles_the_gradient_at_every_point():
    sweep = sphinx_jaxhlo.analyze(rbf_pair_energy, "f32[n,3]", "f32[n,3]", targets="cpu", grad="x",
                                  sweep={"n": [500, 1000]})
    assert [[r.function for r in reports] for reports in sweep] == [["rbf_pair_energy", "rbf_pair_energy_grad"]] * 2
    assert "rbf_pair_energy_grad" in sweep.functions
    with pytest.raises(ValueError, match=r"^grad: rbf_pair_energy\(\) has no argument 'q'"):
        sphinx_jaxhlo.analyze(rbf_pair_energy, "f32[n,3]", "f32[n,3]", targets="cpu", grad="q",
                              sweep={"n": [500, 1000]})


def test_the_gradient_code_keeps_arguments_named_like_its_own_names():
    source = ("import jax.numpy as jnp\n\n"
              "def odd(_of, _value, jax, jnp_, _grad__of):\n"
              "    return (_of * _value * jax * jnp_ * _grad__of).sum()\n")
    text = add_grad_variant(source, "odd", ["_of", "jax"])
    namespace = _define(text)
    args = [_normal(i, (3,)) for i in range(5)]
    value, (d_of, d_jax) = namespace["odd_grad"](*args)
    want = jax.value_and_grad(namespace["odd"], argnums=(0, 2))(*args)
    np.testing.assert_allclose(value, want[0], rtol=1e-6)
    np.testing.assert_allclose(d_of, want[1][0], rtol=1e-6)
    np.testing.assert_allclose(d_jax, want[1][1], rtol=1e-6)
    assert "import jax as jax_" in text  # the argument `jax` hides the module inside the variant
