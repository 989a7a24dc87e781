"""Every dtype of ``:args:``: the numpy type it stands for and its size in bytes;
the rest of the ``:args:`` grammar at its edges (pytrees, columns of errors, the
largest array).

The expected table is written out by hand from numpy's and jax's definitions
(``key<fry>`` is jax's threefry key, two uint32 words; ``key<rbg>`` and
``key<urbg>`` are four), and checked against numpy itself, and against jax in a
test that imports it.
"""

from __future__ import annotations

import importlib.util

import pytest

from sphinx_jaxhlo.core.specs import (
    DTYPES,
    KEY_IMPLS,
    MAX_ELEMENTS,
    ArgSpecs,
    ArraySpec,
    SpecError,
    parse_args,
    parse_shape,
)

#: name -> (numpy/jax dtype name, bytes per element), by hand.
EXPECTED = {
    "f64": ("float64", 8), "f32": ("float32", 4), "f16": ("float16", 2), "bf16": ("bfloat16", 2),
    "i64": ("int64", 8), "i32": ("int32", 4), "i16": ("int16", 2), "i8": ("int8", 1),
    "s64": ("int64", 8), "s32": ("int32", 4), "s16": ("int16", 2), "s8": ("int8", 1),
    "u64": ("uint64", 8), "u32": ("uint32", 4), "u16": ("uint16", 2), "u8": ("uint8", 1),
    "bool": ("bool", 1), "pred": ("bool", 1), "c64": ("complex64", 8), "c128": ("complex128", 16),
    "key<fry>": ("key<fry>", 8), "key<rbg>": ("key<rbg>", 16), "key<urbg>": ("key<urbg>", 16),
}  # fmt: skip


def test_the_dtype_table_is_exactly_the_documented_one() -> None:
    assert set(DTYPES) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_dtype_stands_for_its_numpy_type_and_size(name: str) -> None:
    numpy_name, size = EXPECTED[name]
    spec = parse_shape(f"{name}[3,5]")
    assert (spec.dtype, spec.shape, spec.numpy_dtype) == (name, (3, 5), numpy_name)
    assert spec.bytes == 15 * size
    assert parse_shape(f"{name}[]").bytes == size  # a scalar
    assert parse_shape(f"{name}[0,7]").bytes == 0


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if not n.startswith("key<")))
def test_numpy_agrees_on_the_size(name: str) -> None:
    np = pytest.importorskip("numpy")
    numpy_name, size = EXPECTED[name]
    if numpy_name == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        dtype = np.dtype(ml_dtypes.bfloat16)
    else:
        dtype = np.dtype(numpy_name)
    assert (dtype.name, dtype.itemsize) == (numpy_name, size)


def test_key_dtypes_name_their_jax_implementation() -> None:
    assert KEY_IMPLS == {"key<fry>": "threefry2x32", "key<rbg>": "rbg", "key<urbg>": "unsafe_rbg"}


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_jax_agrees_on_the_key_types_and_sizes() -> None:
    import jax
    import jax.numpy as jnp

    from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs

    args, kwargs = to_shape_dtype_structs(parse_args("key<fry>[2], key<rbg>[], k=key<urbg>[3], x=bf16[4]"))
    for struct, impl, name in ((args[0], "threefry2x32", "key<fry>"), (args[1], "rbg", "key<rbg>"),
                               (kwargs["k"], "unsafe_rbg", "key<urbg>")):
        key = jax.random.key(0, impl=impl)
        assert struct.dtype == key.dtype and str(key.dtype) == name
        assert jax.random.key_data(key).nbytes == EXPECTED[name][1]
    assert (args[0].shape, args[1].shape, kwargs["k"].shape) == ((2,), (), (3,))
    assert kwargs["x"].dtype == jnp.bfloat16 and kwargs["x"].shape == (4,)


# -- the grammar at its edges -------------------------------------------------------


def test_pytrees_nest_and_print_back() -> None:
    text = "(f32[1],), [], {}, (), {a: [i8[2], (u8[],)], b: {c: f64[1,2]}}, k=[f32[3]]"
    specs = parse_args(text)
    assert specs.args == (
        (ArraySpec("f32", (1,)),), [], {}, (),
        {"a": [ArraySpec("i8", (2,)), (ArraySpec("u8", ()),)], "b": {"c": ArraySpec("f64", (1, 2))}},
    )  # fmt: skip
    assert specs.kwargs == (("k", [ArraySpec("f32", (3,))]),)
    assert str(specs) == "(f32[1],), [], {}, (), {a: [i8[2], (u8[],)], b: {c: f64[1,2]}}, k=[f32[3]]"
    assert ArgSpecs.from_json(specs.to_json()) == specs
    assert specs.to_json()["kwargs"] == [["k", {"list": [{"dtype": "f32", "shape": [3]}]}]]


def test_a_trailing_comma_in_a_tuple_is_allowed() -> None:
    assert parse_args("(f32[1], f32[2],)").args == ((ArraySpec("f32", (1,)), ArraySpec("f32", (2,))),)
    assert str(parse_args("(f32[1], f32[2])")) == "(f32[1], f32[2])"


def test_whitespace_is_free() -> None:
    assert parse_args("  x = f32 [ 2 , 3 ] ,y=i8[]  ") == ArgSpecs((), (("x", ArraySpec("f32", (2, 3))),
                                                                      ("y", ArraySpec("i8", ()))))


def test_the_largest_array_is_2_to_the_53_elements() -> None:
    assert parse_shape(f"u8[{2**53}]").shape == (MAX_ELEMENTS,)
    assert parse_shape("u8[4194304,2147483648]").bytes == 2**53
    with pytest.raises(SpecError) as info:
        parse_shape(f"u8[2,{2**52 + 1}]")
    assert str(info.value) == f"u8[2,{2**52 + 1}] has more than 2**53 elements"


@pytest.mark.parametrize(("text", "message", "column"), [
    ("f33[3]", "unknown dtype 'f33' at column 1 (known: bf16, bool, c128, ", 0),
    ("f32[3], g[1]", "unknown dtype 'g' at column 9", 8),
    ("f32[3,", "f32[ at column 1 is not closed: expected ']'", 0),
    ("f32[3", "f32[ at column 1 is not closed: expected ']'", 0),
    ("f32[", "f32[ at column 1 is not closed: expected ']'", 0),
    ("f32[x]", "dimension 'x' at column 5 of f32[...] is not a non-negative integer", 4),
    ("f32[1.5]", "dimension '1.5' at column 5 of f32[...] is not a non-negative integer", 4),
    ("f32 3", "expected '[' at column 5, found '3'", 4),
    ("f32[3] f32[4]", "expected ',' at column 8, found 'f32'", 7),
    ("3", "expected a dtype at column 1, found '3'", 0),
    ("f32[1], ", "unexpected end of input, expected a spec such as f32[3]", 8),
    ("x=f32[1], f32[2]", "positional spec after keyword specs at column 11", 10),
    ("x=f32[1], x=f32[2]", "keyword argument 'x' given twice", 10),
    ("{1: f32[1]}", "expected a key at column 2, found '1'", 1),
    ("{a f32[1]}", "expected ':' at column 4, found 'f32'", 3),
    ("(f32[1] f32[2])", "expected ',' at column 9, found 'f32'", 8),
    ("[f32[1] f32[2]]", "expected ',' at column 9, found 'f32'", 8),
    ("{a: f32[1] b: f32[2]}", "expected ',' at column 12, found 'b'", 11),
    ("f32[1] $", "expected ',' at column 8, found '$'", 7),
    ("f32[3)", "expected ',' at column 6, found ')'", 5),
    ("(f32[1]]", "expected ',' at column 8, found ']'", 7),
    ("x=)", "expected a dtype at column 3, found ')'", 2),
    ("{", "unexpected end of input, expected a key", 1),
    ("f32[1], x=", "unexpected end of input, expected a spec such as f32[3]", 10),
])  # fmt: skip
def test_errors_give_the_column(text: str, message: str, column: int) -> None:
    with pytest.raises(SpecError) as info:
        parse_args(text)
    assert str(info.value).startswith(message)
    assert info.value.column == column


@pytest.mark.parametrize(("text", "message"), [
    ("f32[3] x", "unexpected 'x' after f32[3]"),
    ("(f32[3])", "expected a dtype, found '('"),
    ("", "unexpected end of input, expected a spec such as f32[3]"),
])  # fmt: skip
def test_parse_shape_takes_one_array(text: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_shape(text)
    assert str(info.value) == message


def test_keys_are_names_only_in_their_own_spelling() -> None:
    assert parse_shape("key<fry>[2]") == ArraySpec("key<fry>", (2,))
    with pytest.raises(SpecError, match="unknown dtype 'key<other>'"):
        parse_shape("key<other>[2]")


def test_specs_are_values() -> None:
    import dataclasses

    spec = parse_shape("f32[3]")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.dtype = "f64"  # type: ignore[misc]
    specs = parse_args("f32[3]")
    with pytest.raises(dataclasses.FrozenInstanceError):
        specs.args = ()  # type: ignore[misc]
    assert {spec: 1}[ArraySpec("f32", (3,))] == 1  # hashable: a key of the compile cache's requests
    assert ArgSpecs() == ArgSpecs((), ()) and str(ArgSpecs()) == ""
    assert ArgSpecs().to_json() == {"args": [], "kwargs": []}
