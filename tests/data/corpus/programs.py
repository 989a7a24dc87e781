"""The corpus: ordinary JAX programs whose compiled reports the analysis is checked against.

Each program is the source of an example (compiled as ``example.py``, the
function ``f``) and its ``:args:`` specs.  They are the kinds of code people
write every day (MLPs and their gradients, attention, normalization, losses,
convolutions, scans, sorts, cumulative ops, scatter and gather, PRNG keys,
donation, several dtypes), at sizes where the compilers make the choices they
make on real models (split-K GEMMs, prefetched arguments, prefix scans).

``tests/data/regenerate_corpus.py`` compiles each for ``cpu``, ``gpu:h100`` and
``tpu:v5e`` and stores the optimized HLO and XLA's own memory figures beside
this file; ``tests/test_corpus.py`` compares the analysis with them and with
the verdicts checked by hand (``expected.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

HEADER = """\
import functools
import jax
import jax.numpy as jnp
from jax import lax

"""


@dataclass(frozen=True)
class Program:
    name: str
    body: str
    args: str
    static: tuple[tuple[str, str], ...] = ()
    #: ``:donate:`` of the directive: argument names or positions.
    donate: tuple[str, ...] = ()
    note: str = ""
    targets: tuple[str, ...] = field(default=("cpu", "gpu:h100", "tpu:v5e"))

    @property
    def source(self) -> str:
        return HEADER + self.body


PROGRAMS: list[Program] = [
    Program("max_of_arg", """\
def f(x):
    return jnp.max(x)
""", "f32[4096,1024]", note="a plain reduction of an argument: TPU prefetches x (copy-start/copy-done)"),
    Program("sum_rows", """\
def f(x):
    return jnp.sum(x, axis=1)
""", "f32[8192,512]"),
    Program("mean_var", """\
def f(x):
    mean = jnp.mean(x, axis=0)
    var = jnp.var(x, axis=0)
    return mean, var
""", "f32[16384,256]"),
    Program("seed_with_dot", """\
def f(pos, hkl):
    return jnp.sum(jax.vmap(lambda p: jnp.cos(jnp.dot(hkl, p)))(pos), axis=0)
""", "f32[20000,3], f32[5000,3]", note="the seed at a tenth of the size: unfused on CPU and GPU"),
    Program("seed_explicit", """\
def f(pos, hkl):
    def row(p):
        return jnp.cos(hkl[:, 0] * p[0] + hkl[:, 1] * p[1] + hkl[:, 2] * p[2])
    return jnp.sum(jax.vmap(row)(pos), axis=0)
""", "f32[20000,3], f32[5000,3]"),
    Program("mlp_forward", """\
def f(params, x):
    for w, b in params:
        x = jax.nn.relu(x @ w + b)
    return jnp.sum(x)
""", "[(f32[512,1024], f32[1024]), (f32[1024,1024], f32[1024]), (f32[1024,10], f32[10])], f32[128,512]"),
    Program("mlp_grad", """\
def loss(params, x, y):
    for w, b in params[:-1]:
        x = jax.nn.gelu(x @ w + b)
    w, b = params[-1]
    logits = x @ w + b
    return jnp.mean(optax_like_xent(logits, y))

def optax_like_xent(logits, y):
    return -jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, logits.shape[-1]), axis=-1)

def f(params, x, y):
    return jax.grad(loss)(params, x, y)
""", "[(f32[784,2048], f32[2048]), (f32[2048,2048], f32[2048]), (f32[2048,10], f32[10])], f32[64,784], i32[64]",
        note="small batch, large hidden: the H100 splits the weight-gradient GEMMs along the batch (split-K)"),
    Program("deep_mlp_grad", """\
def loss(ws, x):
    for w in ws:
        x = jnp.tanh(x @ w)
    return jnp.sum(x * x)

def f(ws, x):
    return jax.grad(loss)(ws, x)
""", "[" + ", ".join(["f32[1024,1024]"] * 24) + "], f32[32,1024]",
        note="24 layers, batch 32: every weight gradient is a GEMM with a long contraction"),
    Program("scan_mlp_grad", """\
def loss(ws, x):
    def layer(h, w):
        return jnp.tanh(h @ w), None
    h, _ = lax.scan(layer, x, ws)
    return jnp.sum(h * h)

def f(ws, x):
    return jax.grad(loss)(ws, x)
""", "f32[16,1024,1024], f32[32,1024]"),
    Program("remat_scan_grad", """\
def loss(ws, x):
    @jax.checkpoint
    def layer(h, w):
        return jnp.tanh(h @ w), None
    h, _ = lax.scan(layer, x, ws)
    return jnp.sum(h * h)

def f(ws, x):
    return jax.grad(loss)(ws, x)
""", "f32[16,1024,1024], f32[32,1024]"),
    Program("xent_large_vocab", """\
def f(h, w, labels):
    logits = h @ w
    logz = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]
    return jnp.mean(logz - picked)
""", "f32[256,1024], f32[1024,32768], i32[256]"),
    Program("xent_grad", """\
def loss(w, h, labels):
    logits = h @ w
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0])

def f(w, h, labels):
    return jax.grad(loss)(w, h, labels)
""", "f32[1024,32768], f32[256,1024], i32[256]"),
    Program("attention", """\
def f(q, k, v):
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum("bhqk,bkhd->bqhd", p, v)
""", "f32[4,1024,8,64], f32[4,1024,8,64], f32[4,1024,8,64]"),
    Program("attention_grad", """\
def attn(q, k, v):
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)

def f(q, k, v):
    return jax.grad(lambda q, k, v: jnp.sum(attn(q, k, v) ** 2), argnums=(0, 1, 2))(q, k, v)
""", "f32[2,512,8,64], f32[2,512,8,64], f32[2,512,8,64]"),
    Program("dot_product_attention", """\
def f(q, k, v):
    return jax.nn.dot_product_attention(q, k, v, is_causal=True)
""", "f32[4,1024,8,64], f32[4,1024,8,64], f32[4,1024,8,64]"),
    Program("layernorm", """\
def f(x, scale, bias):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-6) * scale + bias
""", "f32[4096,1024], f32[1024], f32[1024]"),
    Program("layernorm_grad", """\
def ln(x, scale, bias):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-6) * scale + bias

def f(x, scale, bias):
    return jax.grad(lambda *a: jnp.sum(ln(*a) ** 2), argnums=(0, 1, 2))(x, scale, bias)
""", "f32[4096,1024], f32[1024], f32[1024]"),
    Program("rmsnorm_bf16", """\
def f(x, scale):
    x32 = x.astype(jnp.float32)
    y = x32 * lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + 1e-6)
    return (y * scale).astype(jnp.bfloat16)
""", "bf16[8192,2048], f32[2048]"),
    Program("conv_relu_pool", """\
def f(x, w):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y)
    pooled = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jnp.mean(pooled, axis=(1, 2))
""", "f32[16,64,64,32], f32[3,3,32,64]"),
    Program("conv_grad", """\
def loss(w, x):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jnp.sum(jax.nn.relu(y))

def f(w, x):
    return jax.grad(loss)(w, x)
""", "f32[3,3,32,64], f32[16,64,64,32]"),
    Program("fft_power", """\
def f(x):
    spec = jnp.fft.rfft(x, axis=-1)
    return jnp.sum(jnp.abs(spec) ** 2, axis=-1)
""", "f32[256,4096]"),
    Program("sort_rows", """\
def f(x):
    return jnp.sort(x, axis=-1)[:, -8:].sum(axis=-1)
""", "f32[1024,1024]"),
    Program("argsort_take", """\
def f(x, v):
    order = jnp.argsort(x)
    return jnp.sum(v[order][:100])
""", "f32[65536], f32[65536]"),
    Program("top_k", """\
def f(x):
    values, _ = lax.top_k(x, 16)
    return jnp.sum(values, axis=-1)
""", "f32[512,8192]"),
    Program("cumsum", """\
def f(x):
    return jnp.cumsum(x, axis=-1)
""", "f32[1024,4096]", note="CPU lowers cumsum to a prefix scan of reduce-windows"),
    Program("cummax_cumprod", """\
def f(x):
    return lax.cummax(x, axis=0), jnp.cumprod(x, axis=0)
""", "f32[4096,256]"),
    Program("cumsum_then_sum", """\
def f(x):
    return jnp.sum(jnp.cumsum(x, axis=-1) ** 2, axis=-1)
""", "f32[1024,4096]"),
    Program("scatter_add", """\
def f(values, idx):
    return jnp.zeros((1024, values.shape[1]), values.dtype).at[idx].add(values)
""", "f32[65536,64], i32[65536]"),
    Program("segment_sum", """\
def f(data, segments):
    return jax.ops.segment_sum(data, segments, num_segments=512)
""", "f32[100000,32], i32[100000]"),
    Program("gather_rows", """\
def f(table, idx):
    return jnp.sum(table[idx], axis=0)
""", "f32[50000,256], i32[8192]"),
    Program("embedding_grad", """\
def loss(table, idx):
    return jnp.sum(jnp.tanh(table[idx]))

def f(table, idx):
    return jax.grad(loss)(table, idx)
""", "f32[50000,256], i32[8192]"),
    Program("scan_rnn", """\
def f(w, xs, h0):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, jnp.sum(h)
    h, sums = lax.scan(step, h0, xs)
    return h, sums
""", "f32[512,512], f32[256,64,512], f32[64,512]"),
    Program("scan_chunks", """\
def f(pos, hkl):
    chunks = pos.reshape(-1, 1000, 3)
    def step(total, chunk):
        return total + jnp.sum(jnp.cos(chunk @ hkl.T), axis=0), None
    total, _ = lax.scan(step, jnp.zeros(hkl.shape[0], pos.dtype), chunks)
    return total
""", "f32[20000,3], f32[5000,3]"),
    Program("fori_loop", """\
def f(x):
    def body(i, acc):
        return acc + jnp.sum(jnp.sin(x * i), axis=0)
    return lax.fori_loop(0, 10, body, jnp.zeros(x.shape[1], x.dtype))
""", "f32[4096,512]"),
    Program("while_norm", """\
def f(x):
    def cond(c):
        return jnp.linalg.norm(c) > 1.0
    def body(c):
        return c * 0.5
    return lax.while_loop(cond, body, x)
""", "f32[2048,512]"),
    Program("cond_branches", """\
def f(x, flag):
    return lax.cond(flag, lambda x: jnp.sum(jnp.sin(x), axis=0), lambda x: jnp.sum(jnp.cos(x) ** 2, axis=0), x)
""", "f32[4096,256], bool[]"),
    Program("custom_vjp", """\
@jax.custom_vjp
def clip_grad(x):
    return x

def fwd(x):
    return x, None

def bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)

clip_grad.defvjp(fwd, bwd)

def f(w, x):
    return jax.grad(lambda w: jnp.sum(clip_grad(x @ w) ** 2))(w)
""", "f32[1024,1024], f32[256,1024]"),
    Program("pytree_params", """\
def f(params, x):
    h = jnp.tanh(x @ params["dense"]["w"] + params["dense"]["b"])
    return jnp.sum(h * params["scale"])
""", "{dense: {w: f32[1024,1024], b: f32[1024]}, scale: f32[1024]}, f32[128,1024]"),
    Program("int8_matmul", """\
def f(a, b):
    return jnp.sum(jnp.matmul(a, b, preferred_element_type=jnp.int32), axis=0)
""", "i8[2048,2048], i8[2048,2048]"),
    Program("f16_softmax", """\
def f(x):
    return jax.nn.softmax(x, axis=-1).sum(axis=0)
""", "f16[4096,4096]"),
    Program("bool_any_all", """\
def f(mask):
    return jnp.any(mask, axis=0), jnp.all(mask, axis=1)
""", "bool[4096,4096]"),
    Program("complex_phase", """\
def f(pos, hkl):
    phase = pos @ hkl.T
    return jnp.sum(jnp.exp(2j * jnp.pi * phase), axis=0)
""", "f32[4000,3], f32[2000,3]"),
    Program("argmax", """\
def f(x):
    return jnp.argmax(x, axis=-1)
""", "f32[4096,4096]"),
    Program("pairwise_dist", """\
def f(a, b):
    d = jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
    return jnp.min(d, axis=1)
""", "f32[2048,16], f32[4096,16]"),
    Program("outer_sum", """\
def f(a, b):
    return jnp.sum(jnp.cos(jnp.outer(a, b)), axis=0)
""", "f32[20000], f32[5000]"),
    Program("batched_matmul_sum", """\
def f(a, b):
    return jnp.sum(jnp.einsum("bij,bjk->bik", a, b), axis=(1, 2))
""", "f32[32,512,512], f32[32,512,512]"),
    Program("matvec_large_k", """\
def f(w, x):
    return jnp.sum(jnp.cos(w @ x))
""", "f32[8192,4096], f32[4096]"),
    Program("prng_normal", """\
def f(key, x):
    noise = jax.random.normal(key, x.shape)
    return jnp.sum(x + 0.1 * noise)
""", "key<fry>[], f32[4096,1024]"),
    Program("prng_split_dropout", """\
def f(keys, x):
    def drop(key, row):
        keep = jax.random.bernoulli(key, 0.9, row.shape)
        return jnp.sum(jnp.where(keep, row / 0.9, 0.0))
    return jax.vmap(drop)(keys, x)
""", "key<fry>[256], f32[256,4096]"),
    Program("donated_update", """\
def f(params, grads):
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
""", "f32[4096,1024], f32[4096,1024]", donate=("params",)),
    Program("linear_solve", """\
def f(a, b):
    x = jax.scipy.linalg.solve_triangular(a, b, lower=True)
    return jnp.sum(x ** 2, axis=0)
""", "f32[1024,1024], f32[1024,64]"),
    Program("one_hot_counts", """\
def f(labels):
    return jnp.sum(jax.nn.one_hot(labels, 1000), axis=0)
""", "i32[65536]"),
    Program("avg_pool_grad", """\
def loss(x):
    pooled = lax.reduce_window(x, 0.0, lax.add, (1, 4, 4, 1), (1, 4, 4, 1), "VALID") / 16.0
    return jnp.sum(pooled ** 2)

def f(x):
    return jax.grad(loss)(x)
""", "f32[16,128,128,32]"),
]

BY_NAME = {p.name: p for p in PROGRAMS}
