from __future__ import annotations

import numpy as np
import pytest

from sphinx_jaxhlo.compiler.arguments import to_shape_dtype_structs
from sphinx_jaxhlo.core.specs import ArgSpecs, ArraySpec, SpecError, parse_args, parse_shape


def test_positional_and_keyword_specs() -> None:
    specs = parse_args("f32[100000,3], f32[50000,3], scale=bf16[], n=i32[4]")
    assert specs.args == (ArraySpec("f32", (100000, 3)), ArraySpec("f32", (50000, 3)))
    assert dict(specs.kwargs) == {"scale": ArraySpec("bf16", ()), "n": ArraySpec("i32", (4,))}
    assert str(specs) == "f32[100000,3], f32[50000,3], scale=bf16[], n=i32[4]"


@pytest.mark.parametrize("dtype", ["f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u32", "u8",
                                   "bool", "c64", "c128"])
def test_every_documented_dtype(dtype: str) -> None:
    assert parse_args(f"{dtype}[2,3]").args == (ArraySpec(dtype, (2, 3)),)


def test_byte_size() -> None:
    assert parse_shape("f32[50000,100000]").bytes == 20_000_000_000
    assert parse_shape("c128[2]").bytes == 32


def test_pytree_specs_round_trip_through_json() -> None:
    specs = parse_args("(f32[3], {a: i32[]}), [u8[2], u8[2]]")
    assert specs.args[0] == (ArraySpec("f32", (3,)), {"a": ArraySpec("i32", ())})
    assert ArgSpecs.from_json(specs.to_json()) == specs


@pytest.mark.parametrize(("text", "message"), [
    ("f33[3]", "unknown dtype 'f33'"),
    ("f32[3,", "is not closed: expected"),
    ("f32[-1]", "not a non-negative integer"),
    ("f32[1e12,1e12]", "'1e12'"),
    ("f32[3] f32[4]", "expected ','"),
    ("x=f32[1], f32[2]", "positional spec after keyword"),
    ("x=f32[1], x=f32[2]", "given twice"),
    ("f32[4294967296,4294967296]", "more than 2**53"),
])
def test_malformed_specs_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("*", r"\*").replace("[", r"\[")):
        parse_args(text)


def test_empty_args_means_no_arguments() -> None:
    assert parse_args("  ") == ArgSpecs()


@pytest.mark.parametrize(("text", "impl", "size"), [
    ("key<fry>[]", "threefry2x32", 8), ("key<rbg>[4]", "rbg", 16), ("key<urbg>[2,3]", "unsafe_rbg", 16)])
def test_typed_prng_keys(text: str, impl: str, size: int) -> None:
    import jax

    specs = parse_args(text)
    (spec,) = specs.args
    assert str(specs) == text
    assert spec.bytes == size * (1 if not spec.shape else int(np.prod(spec.shape)))
    (struct,), _ = to_shape_dtype_structs(specs)
    made = jax.eval_shape(lambda: jax.random.key(0, impl=impl))
    assert struct.dtype == made.dtype and struct.shape == spec.shape
    assert jax.dtypes.issubdtype(struct.dtype, jax.dtypes.prng_key)


def test_unknown_key_implementation() -> None:
    with pytest.raises(SpecError, match="unknown dtype 'key<philox>'"):
        parse_args("key<philox>[]")
