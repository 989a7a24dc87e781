"""Programs that pin the verdict rules and the reason rules on real compiled modules.

Two groups, each program the source of an example (compiled as
``example.py``, the function ``f``) and its ``:args:`` specs:

- ``CLASSES``: one program for each rule that issue 31 found wrong on real
  code (a short broadcast of a stored buffer, a reduction of another
  reduction's result, the TPU's row reductions written as ``reduce-window``,
  reductions too small to matter, a contraction done as multiply and reduce,
  the CPU's peak), and for the reason rules that need a module of their own
  (the GPU's scatter rule, a table stored as a second output of a reduction
  kernel, the TPU's scalar work);
- ``OWN``: programs written for this check in the same spirit, not the
  issue's reproductions: other kernels and distances, softmax and attention
  variants, masked means, bf16/f16/int, batch dimensions, odd and
  power-of-two sizes.

``tests/data/regenerate_verdicts.py`` compiles each for ``cpu``, ``gpu:h100``
and ``tpu:v5e`` (a program may name fewer) and stores, beside this file, the
optimized HLO, XLA's own memory figures and, for the GPU, XLA's record of its
fusion decisions; ``tests/test_verdict_classes.py`` checks the analysis
against the verdicts read off those modules by hand (``expected.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

HEADER = """\
import jax
import jax.numpy as jnp
from jax import lax

"""

ALL = ("cpu", "gpu:h100", "tpu:v5e")


@dataclass(frozen=True)
class Program:
    name: str
    body: str
    args: str
    #: What the program pins.
    note: str = ""
    targets: tuple[str, ...] = field(default=ALL)

    @property
    def source(self) -> str:
        return HEADER + self.body


CLASSES: list[Program] = [
    Program("nbody_weights", """\
def f(x, y):
    d = x[:, None, :] - y[None, :, :]
    w = lax.rsqrt(jnp.sum(d * d, -1) + 1.0)
    return jnp.sum(d * w[..., None], axis=1)
""", "f32[2048,3], f32[2048,3]",
            "class 1: the pairwise weights, stored, read broadcast over the 3 components"),
    Program("chamfer", """\
def f(p, q):
    d2 = jnp.sum((p[:, None] - q[None]) ** 2, -1)
    return jnp.min(d2, 1), jnp.min(d2, 0)
""", "f32[2048,3], f32[2048,3]", "class 2: a min of a stored sum is no second stage"),
    Program("softmax_rows", """\
def f(x):
    return jax.nn.softmax(x, axis=-1)
""", "f32[4,1024,1024]", "class 3: the TPU's max and sum are full-row reduce-windows"),
    Program("causal_softmax", """\
def f(q, k):
    s = jnp.einsum("hqd,hkd->hqk", q, k)
    t = q.shape[1]
    s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e30)
    return jax.nn.softmax(s, axis=-1)
""", "f32[8,2048,64], f32[8,2048,64]",
            "class 3 beside a stored causal mask: the TPU's row max over the scores, a mask as a select's predicate",
            targets=("tpu:v5e",)),
    Program("masked_mean", """\
def f(h, m):
    return jnp.sum(h * m, 1) / jnp.maximum(jnp.sum(m, 1), 1)
""", "bf16[8,2047,1024], bf16[8,2047,1]", "class 4: the mask's count is too small to decide"),
    Program("rbf_matmul", """\
def f(x, y, v):
    sq = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, -1)
    return jnp.exp(-sq) @ v
""", "f32[2048,3], f32[3000,3], f32[3000,1]", "class 4: the TPU's contraction as multiply and reduce"),
    Program("einsum_max", """\
def f(a, b):
    return jnp.max(jnp.einsum("nhd,mhd->nm", a, b), 1)
""", "f32[2048,16,48], f32[3001,16,48]", "class 5: the CPU's peak leaves the temporaries out",
            targets=("cpu",)),
    Program("scatter_sum", """\
def f(x, idx, v):
    return jnp.sum(x.at[idx].add(v) ** 2, axis=0)
""", "f32[4096,1024], i32[256], f32[256,1024]", "the GPU's scatter rule: CanEmitInputFusedScatter"),
    Program("seed_grad_table", """\
def seed(pos, hkl):
    phase = pos[:, 0, None] * hkl[None, :, 0] + pos[:, 1, None] * hkl[None, :, 1] + pos[:, 2, None] * hkl[None, :, 2]
    return jnp.sum(jnp.cos(phase), axis=0)

def f(pos, hkl):
    return jax.grad(lambda p, h: jnp.sum(seed(p, h) ** 2), argnums=(0, 1))(pos, hkl)
""", "f32[20000,3], f32[10000,3]",
            "a table written as the second output of a reduction kernel (the H100's multi-output fusion)",
            targets=("gpu:h100",)),
    Program("scalar_axpy", """\
def f(x, y):
    return 2 * x + y
""", "i32[], i32[]", "the TPU's copies of scalar arguments into scalar memory are no kernels"),
]

OWN: list[Program] = [
    Program("gravity", """\
def f(x, y, m):
    r = y[None, :, :] - x[:, None, :]
    d2 = jnp.sum(r * r, axis=-1) + 1e-3
    inv3 = m[None, :] * d2 ** -1.5
    return jnp.sum(r * inv3[..., None], axis=1)
""", "f32[3000,3], f32[2500,3], f32[2500]", "softened gravity with masses: weights read over 3 components"),
    Program("hausdorff", """\
def f(a, b):
    d = jnp.sqrt(jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1))
    return jnp.maximum(jnp.max(jnp.min(d, axis=1)), jnp.max(jnp.min(d, axis=0)))
""", "f32[1999,3], f32[3001,3]", "a max of mins of a stored distance table, odd sizes"),
    Program("log_softmax", """\
def f(x):
    return jax.nn.log_softmax(x, axis=-1)
""", "f32[8,512,2048]", "a TPU row max written as a reduce-window"),
    Program("masked_mean_int", """\
def f(x, mask):
    w = mask.astype(x.dtype)
    return jnp.sum(x * w[..., None], axis=1) / jnp.maximum(jnp.sum(w, axis=1), 1.0)[:, None]
""", "f32[64,1000,512], i32[64,1000]", "an int mask, broadcast over 512 features"),
    Program("causal_attention_bf16", """\
def f(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 8.0
    t = q.shape[2]
    mask = jnp.tril(jnp.ones((t, t), bool))
    s = jnp.where(mask, s, -1e9)
    p = jax.nn.softmax(s.astype(jnp.float32), axis=-1).astype(q.dtype)
    return jnp.einsum("bhqk,bhkd->bhqd", p, v)
""", "bf16[4,8,1024,64], bf16[4,8,1024,64], bf16[4,8,1024,64]", "bf16 causal attention, batch and heads"),
    Program("rbf_matvec", """\
def f(x, y, alpha):
    sq = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    return jnp.exp(-0.5 * sq) @ alpha
""", "f32[3000,8], f32[5000,8], f32[5000]", "a Gaussian kernel times a vector"),
    Program("batched_sim_max", """\
def f(a, b):
    return jnp.max(jnp.einsum("bik,bjk->bij", a, b), axis=-1)
""", "f32[4,1000,64], f32[4,3000,64]", "a batched similarity's row max"),
    Program("f16_logsumexp", """\
def f(x):
    return jax.nn.logsumexp(x, axis=1)
""", "f16[4096,8192]", "f16: the CPU's YNN dtype gate"),
    Program("int_histogram", """\
def f(x, bins):
    return jnp.sum((x[:, None] == bins[None, :]).astype(jnp.int32), axis=0)
""", "i32[100000], i32[256]", "an int one-hot count"),
    Program("kde_odd", """\
def f(x, y):
    d2 = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    return jnp.mean(jnp.exp(-d2 / 0.1), axis=1)
""", "f32[2047,2], f32[2049,2]", "a kernel density estimate in 2-D, odd sizes"),
    Program("explicit_grad", """\
def loss(pos, hkl):
    phase = pos[:, 0, None] * hkl[None, :, 0] + pos[:, 1, None] * hkl[None, :, 1] + pos[:, 2, None] * hkl[None, :, 2]
    return jnp.sum(jnp.sum(jnp.cos(phase), axis=0) ** 2)

def f(pos, hkl):
    return jax.grad(loss)(pos, hkl)
""", "f32[4096,3], f32[2048,3]", "the gradient of a written-out sum of cosines, power-of-two sizes"),
    Program("vmap_var", """\
def f(x):
    return jax.vmap(lambda r: jnp.var(jnp.tanh(r)))(x)
""", "bf16[512,4096]", "a per-row variance under vmap, bf16"),
    Program("scalar_fma", """\
def f(x, y):
    return x * y + 1.0
""", "f32[], f32[]", "scalar arithmetic on the TPU's scalar unit"),
]

PROGRAMS: list[Program] = [*CLASSES, *OWN]
BY_NAME = {p.name: p for p in PROGRAMS}
