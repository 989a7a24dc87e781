"""The review's findings on issue 44, reproduced deviceless with the package's analysis.

Each finding (R3, R10, R4, R6, R12, R16, P1, M1, M7, M8, M10, M11) is a few programs compiled for
the targets it is about; for each compile the script records XLA's temp memory, the largest
intermediate stored before a reduction (the package's verdict), argument copies, and where it
matters the dtype the reductions run in.  Results go to ``benchmarks/guide_predictor_findings.json``
(the rules draft, ``guide_predictor_rules.md``, quotes them).  Compiles are cached in the truth
file's folder, so a second run only reads them back.

    python benchmarks/guide_predictor_findings.py            # every finding
    python benchmarks/guide_predictor_findings.py R3 R12     # some
    python benchmarks/guide_predictor_findings.py H100-grid  # XLA's fused/unfused estimates on a grid
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "benchmarks" / "guide_predictor_findings.json"
CACHE = ROOT / "benchmarks" / "data" / "findings_cache"

F32 = "f32"


def seed_written(pos: Any, hkl: Any) -> Any:
    """The seed's written-out phases (n x d), before the nonlinearity."""
    return pos[:, 0, None] * hkl[None, :, 0] + pos[:, 1, None] * hkl[None, :, 1] + pos[:, 2, None] * hkl[None, :, 2]


# -- R3: the H100's "minor axis" is the physical one; few rows store --------------------------------

def r3_cos_xt_axis1(x: Any) -> Any:
    return jnp.sum(jnp.cos(x.T), axis=1)


def r3_cos_axis0(x: Any) -> Any:
    return jnp.sum(jnp.cos(x), axis=0)


def r3_cos_swapaxes(x: Any) -> Any:
    return jnp.sum(jnp.cos(jnp.swapaxes(x, 0, 1)), axis=1)


def r3_cos_axis1(x: Any) -> Any:
    return jnp.sum(jnp.cos(x), axis=1)


def r3_exp_axis1(x: Any) -> Any:
    return jnp.sum(jnp.exp(x), axis=1)


# -- R10: the CPU's YNN table ---------------------------------------------------------------------

R10_PRODUCERS: dict[str, Callable[[Any], Any]] = {
    "where": lambda x: jnp.where(x > 0, x, 0.0),
    "x*(x>0)": lambda x: x * (x > 0),
    "clip": lambda x: jnp.clip(x, -1.0, 1.0),
    "softplus": jax.nn.softplus,
    "gelu_exact": lambda x: jax.nn.gelu(x, approximate=False),
    "sinh": jnp.sinh,
    "arctan": jnp.arctan,
    "reduce_precision": lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
    "exp (in YNN's table)": jnp.exp,
    "tanh (in YNN's table)": jnp.tanh,
}


def _sum_of(producer: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return jnp.sum(producer(x), axis=1)
    return f


def r10_isfinite(x: Any) -> Any:
    return jnp.sum(jnp.isfinite(jnp.exp(x)), axis=1)


def r10_prod_exp(x: Any) -> Any:
    return jnp.prod(jnp.exp(x), axis=1)


def r10_any_cos(x: Any) -> Any:
    return jnp.any(jnp.cos(x) > 0.5, axis=1)


def r10_argmax_seed(pos: Any, hkl: Any) -> Any:
    return jnp.argmax(jnp.cos(seed_written(pos, hkl)), axis=0)


def r10_sum_seed(pos: Any, hkl: Any) -> Any:
    return jnp.sum(jnp.cos(seed_written(pos, hkl)), axis=0)


# -- R4: two readers on the H100 -------------------------------------------------------------------

R4_PRODUCERS: dict[str, Callable[[Any], Any]] = {"exp": jnp.exp, "x*2": lambda x: x * 2, "tanh": jnp.tanh,
                                                  "cos": jnp.cos, "gelu (tanh form)": jax.nn.gelu}


def _sum_and_max(producer: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        u = producer(x)
        return jnp.sum(u, axis=1), jnp.max(u, axis=1)
    return f


# -- R6: the TPU and autodiff, complex dots, top-k ----------------------------------------------------

def seed_dot_sums(pos: Any, hkl: Any) -> Any:
    return jnp.sum(jnp.cos(pos @ hkl.T), axis=0)


def r6_grad_square(pos: Any, hkl: Any) -> Any:
    return jax.grad(lambda p: jnp.sum(seed_dot_sums(p, hkl) ** 2))(pos)


def r6_grad_linear(pos: Any, hkl: Any) -> Any:
    return jax.grad(lambda p: jnp.sum(seed_dot_sums(p, hkl)))(pos)


def r6_grad_square_checkpoint(pos: Any, hkl: Any) -> Any:
    return jax.grad(lambda p: jnp.sum(jax.checkpoint(seed_dot_sums)(p, hkl) ** 2))(pos)


def r6_grad_square_written(pos: Any, hkl: Any) -> Any:
    return jax.grad(lambda p: jnp.sum(jnp.sum(jnp.cos(seed_written(p, hkl)), axis=0) ** 2))(pos)


def r6_complex_sum(a: Any, b: Any) -> Any:
    return jnp.sum(a @ b, axis=0)


def r6_complex_abs_sum(a: Any, b: Any) -> Any:
    return jnp.sum(jnp.abs(a @ b), axis=0)


def r6_top_k(a: Any, b: Any) -> Any:
    return lax.top_k(a @ b.T, 8)[0]


def r6_approx_max_k(a: Any, b: Any) -> Any:
    return lax.approx_max_k(a @ b.T, 8)[0]


# -- R12: unaligned K on the H100 -------------------------------------------------------------------

def matmul(a: Any, b: Any) -> Any:
    return a @ b


# -- R16: the TPU's bf16 reductions ------------------------------------------------------------------

R16_FORMS: dict[str, Callable[[Any], Any]] = {
    "jnp.sum": lambda x: jnp.sum(x, axis=0),
    "jnp.mean": lambda x: jnp.mean(x, axis=0),
    "jnp.prod": lambda x: jnp.prod(x, axis=0),
    "jnp.linalg.norm": lambda x: jnp.linalg.norm(x, axis=0),
    "einsum('ij->j')": lambda x: jnp.einsum("ij->j", x),
    "vmap(jnp.sum)": lambda x: jax.vmap(jnp.sum, in_axes=1)(x),
    "jnp.sum(x)/n": lambda x: jnp.sum(x, axis=0) / x.shape[0],
    "jnp.sum(x, dtype=f32).astype(bf16)": lambda x: jnp.sum(x, axis=0, dtype=jnp.float32).astype(jnp.bfloat16),
    "jnp.sum(x, dtype=f32)": lambda x: jnp.sum(x, axis=0, dtype=jnp.float32),
}


# -- P1: remat policies on a ReLU scan ----------------------------------------------------------------

def _relu_scan(ws: Any, x: Any, policy: Any, checkpointed: bool) -> Any:
    def step(h: Any, w: Any) -> Any:
        return jax.nn.relu(h @ w), None

    body = jax.checkpoint(step, policy=policy) if checkpointed else step
    return jnp.sum(lax.scan(body, x, ws)[0])


def p1_plain(ws: Any, x: Any) -> Any:
    return jax.grad(lambda w: _relu_scan(w, x, None, False))(ws)


def p1_dots_saveable(ws: Any, x: Any) -> Any:
    return jax.grad(lambda w: _relu_scan(w, x, jax.checkpoint_policies.dots_saveable, True))(ws)


def p1_nothing_saveable(ws: Any, x: Any) -> Any:
    return jax.grad(lambda w: _relu_scan(w, x, jax.checkpoint_policies.nothing_saveable, True))(ws)


# -- M1: Python loops and unrolled scans ---------------------------------------------------------------

def m1_python_loop(pos: Any, hkl: Any) -> Any:
    total = jnp.zeros(hkl.shape[0], jnp.float32)
    for i in range(0, pos.shape[0], 1000):
        total = total + jnp.sum(jnp.cos(pos[i:i + 1000] @ hkl.T), axis=0)
    return total


def _scan_chunks(pos: Any, hkl: Any, unroll: Any) -> Any:
    def step(total: Any, chunk: Any) -> Any:
        return total + jnp.sum(jnp.cos(chunk @ hkl.T), axis=0), None

    chunks = pos.reshape(-1, 1000, pos.shape[1])
    return lax.scan(step, jnp.zeros(hkl.shape[0], jnp.float32), chunks, unroll=unroll)[0]


def m1_scan(pos: Any, hkl: Any) -> Any:
    return _scan_chunks(pos, hkl, 1)


def m1_scan_unroll2(pos: Any, hkl: Any) -> Any:
    return _scan_chunks(pos, hkl, 2)


def m1_scan_unroll_true(pos: Any, hkl: Any) -> Any:
    return _scan_chunks(pos, hkl, True)


# -- M7: bf16 budgets on the TPU ---------------------------------------------------------------------

def m7_xent(h: Any, w: Any, y: Any) -> Any:
    logits = (h @ w).astype(jnp.float32)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def m7_attention(q: Any, k: Any, v: Any) -> Any:
    s = jnp.einsum("hqd,hkd->hqk", q, k) / 8.0
    return jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, axis=-1), v)


# -- M8: the H100's softmax before a reduction ----------------------------------------------------------

def m8_softmax_then_sum(x: Any) -> Any:
    return jnp.sum(jax.nn.softmax(x, axis=-1) * x, axis=-1)


def m8_softmax_sq_sum(x: Any) -> Any:
    return jnp.sum(jax.nn.softmax(x, axis=-1) ** 2, axis=-1)


def m8_softmax_then_column_sum(x: Any) -> Any:
    return jnp.sum(jax.nn.softmax(x, axis=1), axis=0)


def m8_softmax_of_cos(x: Any) -> Any:
    return jnp.sum(jax.nn.softmax(jnp.cos(x), axis=1) * x, axis=1)


# -- M10: contraction order ------------------------------------------------------------------------------

def m10_chain(a: Any, b: Any, c: Any) -> Any:
    return a @ b @ c


def m10_einsum(a: Any, b: Any, c: Any) -> Any:
    return jnp.einsum("ij,jk,kl->il", a, b, c)


def m10_dot3(x: Any, y: Any) -> Any:
    return jnp.dot(x, y)


def m10_matmul3(x: Any, y: Any) -> Any:
    return jnp.matmul(x, y)


# -- M11: donation -------------------------------------------------------------------------------------

def m11_transpose_plus(x: Any) -> Any:
    return x.T + 1.0


def m11_center(x: Any) -> Any:
    return x - jnp.mean(x, axis=0)


def findings() -> dict[str, list[tuple[str, Callable[..., Any], tuple[str, ...], tuple[str, ...], dict[str, Any]]]]:
    """Finding -> [(label, function, specs, targets, analyze keywords)]."""
    cg = ("cpu", "gpu:h100")
    h100 = ("gpu:h100",)
    cpu = ("cpu",)
    tpu = ("tpu:v5e",)
    out: dict[str, list[Any]] = {}
    out["R3"] = [
        ("sum(cos(x.T), 1) at 4096^2", r3_cos_xt_axis1, ("f32[4096,4096]",), h100, {}),
        ("sum(cos(x), 0) at 4096^2", r3_cos_axis0, ("f32[4096,4096]",), h100, {}),
        ("sum(cos(swapaxes(x)), 1) at 4096^2", r3_cos_swapaxes, ("f32[4096,4096]",), h100, {}),
        ("sum(cos(x), 1) at 4096^2", r3_cos_axis1, ("f32[4096,4096]",), h100, {}),
        *[(f"sum(cos(x), 1) x f32[{r},{length}]", r3_cos_axis1, (f"f32[{r},{length}]",), h100, {})
          for r in (64, 113, 256) for length in (1024, 4096, 16384, 32768)],
        ("sum(exp(x), 1) x f32[8,16384]", r3_exp_axis1, ("f32[8,16384]",), h100, {}),
        ("sum(exp(x), 1) x f32[8,32768]", r3_exp_axis1, ("f32[8,32768]",), h100, {}),
        *[(f"sum(cos(x), 0) x f32[{r},64]", r3_cos_axis0, (f"f32[{r},64]",), h100, {})
          for r in (4096, 8192, 16384, 32768)],
    ]
    out["R10"] = [
        *[(f"sum({name}) at 4096^2", _sum_of(p), ("f32[4096,4096]",), cpu, {}) for name, p in R10_PRODUCERS.items()],
        ("sum(isfinite(exp(x))) at 4096^2", r10_isfinite, ("f32[4096,4096]",), cpu, {}),
        ("prod(exp(x)) at 4096^2", r10_prod_exp, ("f32[4096,4096]",), cpu, {}),
        ("any(cos(x) > .5) at 4096^2", r10_any_cos, ("f32[4096,4096]",), cpu, {}),
        ("argmax(cos(seed phases), 0) at 20000x10000", r10_argmax_seed, ("f32[20000,3]", "f32[10000,3]"), cpu, {}),
        ("sum(cos(seed phases), 0) at 20000x10000", r10_sum_seed, ("f32[20000,3]", "f32[10000,3]"), cpu, {}),
    ]
    out["R4"] = [(f"sum and max of {name}(x) at 20000x10000", _sum_and_max(p), ("f32[20000,10000]",), h100, {})
                 for name, p in R4_PRODUCERS.items()]
    out["R6"] = [
        ("grad of sum(S**2), S = sum(cos(pos @ hkl.T), 0), 8192^2", r6_grad_square, ("f32[8192,3]", "f32[8192,3]"),
         tpu, {}),
        ("grad of sum(S), same S", r6_grad_linear, ("f32[8192,3]", "f32[8192,3]"), tpu, {}),
        ("grad of sum(checkpoint(S)**2)", r6_grad_square_checkpoint, ("f32[8192,3]", "f32[8192,3]"), tpu, {}),
        ("grad of sum(S**2), S written out", r6_grad_square_written, ("f32[8192,3]", "f32[8192,3]"), tpu, {}),
        ("sum(a @ b, 0), c64[4096,64] @ c64[64,4096]", r6_complex_sum, ("c64[4096,64]", "c64[64,4096]"), tpu, {}),
        ("sum(abs(a @ b), 0), c64 at 8192", r6_complex_abs_sum, ("c64[8192,64]", "c64[64,8192]"), tpu, {}),
        ("top_k(a @ b.T, 8) at 8192", r6_top_k, ("f32[8192,64]", "f32[8192,64]"), tpu, {}),
        ("approx_max_k(a @ b.T, 8) at 8192", r6_approx_max_k, ("f32[8192,64]", "f32[8192,64]"), tpu, {}),
    ]
    out["R12"] = [
        ("[8192,8191] @ [8191]", matmul, ("f32[8192,8191]", "f32[8191]"), h100, {}),
        ("[8192,8192] @ [8192]", matmul, ("f32[8192,8192]", "f32[8192]"), h100, {}),
        ("[20000,19999] @ [19999]", matmul, ("f32[20000,19999]", "f32[19999]"), h100, {}),
        ("[20000,20000] @ [20000]", matmul, ("f32[20000,20000]", "f32[20000]"), h100, {}),
        ("[20000,19999] @ [19999,64]", matmul, ("f32[20000,19999]", "f32[19999,64]"), h100, {}),
        ("[8,9999] @ [9999,4096]", matmul, ("f32[8,9999]", "f32[9999,4096]"), h100, {}),
        ("[8,10000] @ [10000,4096]", matmul, ("f32[8,10000]", "f32[10000,4096]"), h100, {}),
        ("[8,10016] @ [10016,4096]", matmul, ("f32[8,10016]", "f32[10016,4096]"), h100, {}),
        ("[64,10000] @ [10000,4096]", matmul, ("f32[64,10000]", "f32[10000,4096]"), h100, {}),
        ("[512,10000] @ [10000,4096]", matmul, ("f32[512,10000]", "f32[10000,4096]"), h100, {}),
        ("[4096,4095] @ [4095,4096]", matmul, ("f32[4096,4095]", "f32[4095,4096]"), h100, {}),
    ]
    out["R16"] = [(f"{name} of bf16[4096,4096]", fn, ("bf16[4096,4096]",), tpu, {}) for name, fn in R16_FORMS.items()]
    out["P1"] = [
        ("grad, no checkpoint", p1_plain, ("f32[8,512,512]", "f32[1024,512]"), cg, {}),
        ("grad, checkpoint(dots_saveable)", p1_dots_saveable, ("f32[8,512,512]", "f32[1024,512]"), cg, {}),
        ("grad, checkpoint(nothing_saveable)", p1_nothing_saveable, ("f32[8,512,512]", "f32[1024,512]"), cg, {}),
    ]
    seed = ("f32[20000,3]", "f32[10000,3]")
    out["M1"] = [
        ("Python for over 1000-row chunks", m1_python_loop, seed, cg, {}),
        ("lax.scan over 1000-row chunks", m1_scan, seed, cg, {}),
        ("lax.scan, unroll=2", m1_scan_unroll2, seed, cg, {}),
        ("lax.scan, unroll=True", m1_scan_unroll_true, seed, cg, {}),
    ]
    out["M7"] = [
        ("cross-entropy, bf16 logits upcast, 1024x32768", m7_xent, ("bf16[1024,512]", "bf16[512,32768]",
                                                                    "f32[1024,32768]"), tpu, {}),
        ("attention, 8 heads, L=4096, bf16", m7_attention, ("bf16[8,4096,64]",) * 3, tpu, {}),
        ("attention, 8 heads, L=4096, f32", m7_attention, ("f32[8,4096,64]",) * 3, tpu, {}),
    ]
    out["M8"] = [
        ("sum(softmax(x) * x, -1) at 20000x10000", m8_softmax_then_sum, ("f32[20000,10000]",), h100, {}),
        ("sum(softmax(x)**2, -1) at 20000x10000", m8_softmax_sq_sum, ("f32[20000,10000]",), h100, {}),
        ("sum(softmax(x, 1), 0) at 20000x10000", m8_softmax_then_column_sum, ("f32[20000,10000]",), h100, {}),
        ("sum(softmax(cos(x), 1) * x, 1) at 20000x10000", m8_softmax_of_cos, ("f32[20000,10000]",), h100, {}),
    ]
    out["M10"] = [
        ("a @ b @ c, [8192,64] [64,8192] [8192,64]", m10_chain, ("f32[8192,64]", "f32[64,8192]", "f32[8192,64]"),
         ("cpu", "gpu:h100", "tpu:v5e"), {}),
        ("einsum('ij,jk,kl->il', a, b, c), same", m10_einsum, ("f32[8192,64]", "f32[64,8192]", "f32[8192,64]"),
         ("cpu", "gpu:h100", "tpu:v5e"), {}),
        ("jnp.dot of [16,512,512] and [16,512,512]", m10_dot3, ("f32[16,512,512]",) * 2, cg, {}),
        ("jnp.matmul of [16,512,512] and [16,512,512]", m10_matmul3, ("f32[16,512,512]",) * 2, cg, {}),
    ]
    out["M11"] = [
        ("x.T + 1 at 4096^2", m11_transpose_plus, ("f32[4096,4096]",), cg, {}),
        ("x.T + 1 at 4096^2, donated", m11_transpose_plus, ("f32[4096,4096]",), cg, {"donate_argnums": 0}),
        ("x - mean(x, 0) at 4096^2", m11_center, ("f32[4096,4096]",), cg, {}),
        ("x - mean(x, 0) at 4096^2, donated", m11_center, ("f32[4096,4096]",), cg, {"donate_argnums": 0}),
    ]
    return out


def _buffer_text(buffer: Any) -> str:
    return f"{buffer.shape} ({buffer.bytes / 1e6:.1f} MB)" if buffer is not None else ""


def figures(report: Any) -> dict[str, Any]:
    """What a finding quotes from one report."""
    if report.error is not None:
        return {"error": report.error.message.splitlines()[0][:240]}
    unfused = [r for r in report.deciding_reductions if not r.fused]
    mats = {m.name: m for m in report.materialized}
    stored = [mats[r.input_materialized] for r in unfused if r.input_materialized in mats]
    big = max(stored, key=lambda m: m.bytes, default=None)
    return {
        "temp_bytes": report.memory.temp_bytes,
        "temp_MB": round((report.memory.temp_bytes or 0) / 1e6, 2),
        "peak_MB": round((report.memory.peak_bytes or 0) / 1e6, 2) if report.memory.peak_bytes else None,
        "alias_MB": round((report.memory.alias_bytes or 0) / 1e6, 2) if report.memory.alias_bytes else 0,
        "output_MB": round((report.memory.output_bytes or 0) / 1e6, 2),
        "reductions": "fused" if not unfused else "unfused",
        "stored_before_reduction": f"{big.shape} ({big.bytes / 1e6:.1f} MB)" if big else "",
        "largest_intermediate": _buffer_text(report.largest_materialized),
        "argument_copies": [f"{m.shape} ({m.bytes / 1e6:.1f} MB)" for m in report.argument_copies][:4],
        "reduction_dtypes": sorted({r.input_shape.split("[")[0] for r in report.verdict_reductions if r.input_shape}),
    }


GRID = ROOT / "benchmarks" / "data" / "h100_cost_grid.json"
#: Producers of the grid, with XLA's sm_90 cycles for the op (what ``guide_predictor.h100_times`` is given).
GRID_PRODUCERS: dict[str, tuple[Callable[[Any], Any], int]] = {
    "mul2": (lambda x: x * 2, 3), "exp": (jnp.exp, 79), "log": (jnp.log, 166), "tanh": (jnp.tanh, 467),
    "cos": (jnp.cos, 978)}
GRID_SIZES = (8, 32, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)


def h100_grid() -> dict[str, Any]:
    """``sum(producer(x), axis)`` over a grid of shapes on the H100, with XLA's own fused and
    unfused time estimates from its priority-fusion record, and the predictor's cost model beside
    them.  Writes ``benchmarks/data/h100_cost_grid.json``; about 4 minutes."""
    import glob
    import re
    import shutil
    import tempfile

    from guide_predictor import ReductionShape, h100_times

    import sphinx_jaxhlo

    grid: dict[str, Any] = json.loads(GRID.read_text(encoding="utf-8")) if GRID.exists() else {}
    for name, (producer, _) in GRID_PRODUCERS.items():
        for axis in (0, 1):
            for rows in GRID_SIZES:
                for length in GRID_SIZES:
                    key = f"{name} {axis} {rows} {length}"
                    if key in grid or not 2**12 <= rows * length <= 2**28:
                        continue
                    dump = tempfile.mkdtemp()
                    fn = (lambda p, a: lambda x: jnp.sum(p(x), axis=a))(producer, axis)
                    report = sphinx_jaxhlo.analyze(fn, f"f32[{rows},{length}]", targets=["gpu:h100"],
                                                   xla_flags={"xla_dump_to": dump,
                                                              "xla_dump_hlo_pass_re": "priority-fusion"})["gpu:h100"]
                    text = "".join(Path(f).read_text(encoding="utf-8")
                                   for f in glob.glob(dump + "/*priority_fusion_dump.txt"))
                    shutil.rmtree(dump, ignore_errors=True)
                    ups = re.findall(r'update_priority \{\s*producer_name: "([^"]+)"\s*(?:consumer_names: "[^"]+"\s*)*'
                                     r'us_fused: ([\d.e+-]+)\s*us_unfused: ([\d.e+-]+)', text)
                    grid[key] = {"stored": any(not r.fused for r in report.deciding_reductions), "ups": ups}
        GRID.write_text(json.dumps(grid, sort_keys=True) + "\n", encoding="utf-8")
    agree = 0
    for key, point in grid.items():
        name, axis, rows, length = key.split()
        shape = ReductionShape("column" if axis == "0" else "row", int(rows), int(length))
        fused, unfused = h100_times(GRID_PRODUCERS[name][1], shape, 1, 2 if name == "mul2" else 1, 4)
        agree += (fused > unfused) == point["stored"]
    return {"points": len(grid), "model_agrees": agree}


def main(argv: list[str]) -> int:
    import sphinx_jaxhlo

    sys.path.insert(0, str(ROOT / "benchmarks"))
    wanted = set(argv) or None
    if wanted is None or "H100-grid" in wanted:
        data_grid = h100_grid()
        print("H100-grid", data_grid, flush=True)
    data: dict[str, Any] = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    if wanted is None or "H100-grid" in wanted:
        data["H100-grid"] = data_grid
        OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    CACHE.mkdir(parents=True, exist_ok=True)
    for finding, cases in findings().items():
        if wanted and finding not in wanted:
            continue
        rows = []
        for label, fn, specs, targets, kwargs in cases:
            try:
                reports = sphinx_jaxhlo.analyze(fn, *specs, targets=list(targets), cache_dir=CACHE, timeout=600,
                                                **kwargs)
                got = {r.target: figures(r) for r in reports}
                got.update({f.target: {"error": f.message.splitlines()[0][:240]} for f in reports.failures})
            except Exception as exc:
                got = {t: {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:240]}"} for t in targets}
            rows.append({"case": label, "specs": list(specs), **({"options": kwargs} if kwargs else {}),
                         "targets": got})
            print(finding, label, json.dumps({t: (v.get("temp_MB"), v.get("stored_before_reduction"),
                                                  v.get("argument_copies"), v.get("reduction_dtypes"),
                                                  v.get("error")) for t, v in got.items()}), flush=True)
        data[finding] = rows
        OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
