"""A third holdout, wild3: code in the wild from other domains than wild2, scored first against the
calibrated predictor.

Written after the predictor's calibration (``benchmarks/guide_predictor_calibrate.py``) was frozen, in
the patterns of scientific computing, reinforcement learning, vision and recommender code (written here,
not copied): N-body accelerations and energies, Lennard-Jones, Coulomb and Morse pair potentials with
their forces by ``jax.grad``, neighbour counts and a radial histogram, PDE stencils (heat, Jacobi,
wave, upwind advection, a 3-D Laplacian, Burgers), RBF and Matern kernels, a Gaussian process's mean
and likelihood, MMD, k-means (assignment, inertia, update, soft assignment, Lloyd's loop), ODE
integrators (RK4 and Euler in scans and loops, a neural ODE's gradient, leapfrog N-body), RL (GAE over
vmapped environments, PPO, entropy, V-trace, SAC log-probabilities, DQN, C51's projection, A2C's
gradient, running observation statistics, TD(lambda)), vision (a conv net, per-pixel and focal losses,
Dice, total variation, Gram matrices, label smoothing, mixup, batch-hard triplets, center loss, NCHW
batch norm, PSNR, a classifier head's gradient) and recommenders (embedding bags, two-tower and
full-catalog softmax, BPR, a factorization machine, DCN cross layers, masked matrix factorization,
recall@k, DLRM's interaction, listwise ranking, segment sums), in f32 and bf16, with vmap, jax.grad,
batch dimensions, odd and power-of-two sizes.

**Ground truth** and **scores** as ``guide_predictor_holdout3.py``'s (the first holdout's
``score_programs``).

Run (resumable; each compile's truth is kept in ``benchmarks/data/guide_predictor_holdout4_truth.jsonl``)::

    python benchmarks/guide_predictor_holdout4.py compile --targets cpu,gpu:h100,tpu:v5e
    python benchmarks/guide_predictor_holdout4.py score --first   # once, before any change to the predictor
    python benchmarks/guide_predictor_holdout4.py score
    python benchmarks/guide_predictor_holdout4.py score --rules   # the rules without the calibration

``score --first`` writes ``benchmarks/guide_predictor_holdout4_first.json`` and refuses to overwrite it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from guide_predictor_family import Program, _module  # noqa: E402
from guide_predictor_holdout import family_main  # noqa: E402

TRUTH_FILE = ROOT / "benchmarks" / "data" / "guide_predictor_holdout4_truth.jsonl"
FIRST_FILE = ROOT / "benchmarks" / "guide_predictor_holdout4_first.json"
RESULTS_FILE = ROOT / "benchmarks" / "guide_predictor_holdout4_results.json"
#: The rules' own answers on wild3 (no calibration), beside the first evaluation.
#: What a score after the first evaluation is: the same rules, certainty said instead of withheld.
AFTER_FIRST = ("scored after the first evaluation: certainty said, not withheld (an answer the calibration does "
               "not call certain is kept, marked not certain; the first evaluation withheld it), and the rules "
               "as changed for its misses (XLA's CSE of equal constants, shared broadcasts on the CPU, "
               "concatenates on the TPU)")
RULES_FILE = ROOT / "benchmarks" / "guide_predictor_holdout4_rules.json"
FAMILY = "wild3"

#: (name, kind, body defining ``f``, argument specs).
PROGRAMS: list[tuple[str, str, str, str]] = [
    # -- N-body and molecular dynamics ------------------------------------------------------
    ("nbody_accelerations", "science", """
def f(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = jnp.sum(d * d, axis=-1) + 1e-3
    inv3 = r2 ** -1.5
    return jnp.sum(mass[None, :, None] * d * inv3[..., None], axis=1)
""", "f32[4096,3], f32[4096]"),
    ("nbody_potential_energy", "science", """
def f(pos, mass):
    d = pos[:, None, :] - pos[None, :, :]
    r = jnp.sqrt(jnp.sum(d * d, axis=-1) + 1e-6)
    mm = mass[:, None] * mass[None, :]
    return -0.5 * jnp.sum(jnp.where(jnp.eye(pos.shape[0], dtype=bool), 0.0, mm / r))
""", "f32[3001,3], f32[3001]"),
    ("nbody_vmap_rows", "science", """
def f(pos, mass):
    def acc(p):
        d = pos - p
        r2 = jnp.sum(d * d, axis=-1) + 1e-2
        return jnp.sum(mass[:, None] * d / (r2 * jnp.sqrt(r2))[:, None], axis=0)
    return jax.vmap(acc)(pos)
""", "f32[2500,3], f32[2500]"),
    ("lj_energy_periodic", "science", """
def f(pos):
    box = 20.0
    d = pos[:, None, :] - pos[None, :, :]
    d = d - box * jnp.round(d / box)
    r2 = jnp.sum(d * d, axis=-1)
    r2 = jnp.where(jnp.eye(pos.shape[0], dtype=bool), 1.0, r2)
    s6 = (1.0 / r2) ** 3
    e = 4.0 * (s6 * s6 - s6)
    e = jnp.where((r2 < 6.25) & ~jnp.eye(pos.shape[0], dtype=bool), e, 0.0)
    return 0.5 * jnp.sum(e)
""", "f32[2048,3]"),
    ("lj_forces_grad", "science", """
def f(pos):
    def energy(p):
        d = p[:, None, :] - p[None, :, :]
        r2 = jnp.sum(d * d, axis=-1) + jnp.eye(p.shape[0])
        s6 = (1.0 / r2) ** 3
        return 2.0 * jnp.sum((s6 * s6 - s6) * (1.0 - jnp.eye(p.shape[0])))
    return -jax.grad(energy)(pos)
""", "f32[1024,3]"),
    ("coulomb_real_space", "science", """
def f(pos, q):
    d = pos[:, None, :] - pos[None, :, :]
    r = jnp.sqrt(jnp.sum(d * d, axis=-1) + 1e-8)
    pot = q[:, None] * q[None, :] * jax.scipy.special.erfc(0.35 * r) / r
    return 0.5 * jnp.sum(jnp.where(r > 1e-3, pot, 0.0), axis=1)
""", "f32[1500,3], f32[1500]"),
    ("morse_energy_bf16", "science", """
def f(pos):
    d = pos[:, None, :] - pos[None, :, :]
    r = jnp.sqrt(jnp.sum(d.astype(jnp.float32) ** 2, axis=-1) + 1e-6)
    x = jnp.exp(-1.5 * (r - 1.2))
    return jnp.sum(x * x - 2.0 * x)
""", "bf16[2048,3]"),
    ("md_neighbor_counts", "science", """
def f(pos):
    d = pos[:, None, :] - pos[None, :, :]
    r2 = jnp.sum(d * d, axis=-1)
    return jnp.sum((r2 < 2.5 ** 2).astype(jnp.int32), axis=1) - 1
""", "f32[4000,3]"),
    ("md_radial_histogram", "science", """
def f(pos, edges):
    d = pos[:, None, :] - pos[None, :, :]
    r = jnp.sqrt(jnp.sum(d * d, axis=-1))
    lo, hi = edges[:-1], edges[1:]
    inside = (r[..., None] >= lo) & (r[..., None] < hi)
    return jnp.sum(inside, axis=(0, 1))
""", "f32[512,3], f32[101]"),
    ("md_kinetic_temperature", "science", """
def f(vel, mass):
    ke = 0.5 * jnp.sum(mass[:, None] * vel * vel, axis=-1)
    return 2.0 * jnp.mean(ke) / 3.0, jnp.max(ke)
""", "f32[1048576,3], f32[1048576]"),
    # -- PDE stencils -------------------------------------------------------------------------
    ("heat_step_residual", "science", """
def f(u):
    lap = (jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1) + jnp.roll(u, -1, 1) - 4.0 * u)
    new = u + 0.2 * lap
    return new, jnp.sqrt(jnp.sum(lap * lap))
""", "f32[4096,4096]"),
    ("jacobi_sweep_change", "science", """
def f(u, rhs):
    inner = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - rhs[1:-1, 1:-1])
    return jnp.max(jnp.abs(inner - u[1:-1, 1:-1]))
""", "f32[2049,2049], f32[2049,2049]"),
    ("wave_energy", "science", """
def f(u, v):
    ux = jnp.diff(u, axis=1)
    uy = jnp.diff(u, axis=0)
    return 0.5 * (jnp.sum(v * v) + jnp.sum(ux * ux) + jnp.sum(uy * uy))
""", "f32[3000,3000], f32[3000,3000]"),
    ("poisson_jacobi_fori", "science", """
def f(u, rhs):
    def sweep(i, u):
        inner = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - rhs[1:-1, 1:-1])
        return u.at[1:-1, 1:-1].set(inner)
    u = lax.fori_loop(0, 50, sweep, u)
    res = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1] - rhs[1:-1, 1:-1]
    return jnp.sqrt(jnp.mean(res * res))
""", "f32[1024,1024], f32[1024,1024]"),
    ("advection_scan_mass", "science", """
def f(u0):
    def step(u, _):
        u = u - 0.4 * (u - jnp.roll(u, 1, axis=1))
        return u, jnp.sum(u)
    u, mass = lax.scan(step, u0, None, length=100)
    return mass, jnp.max(jnp.abs(u))
""", "f32[1024,1024]"),
    ("laplacian_3d_norm", "science", """
def f(u):
    c = u[1:-1, 1:-1, 1:-1]
    lap = (u[2:, 1:-1, 1:-1] + u[:-2, 1:-1, 1:-1] + u[1:-1, 2:, 1:-1] + u[1:-1, :-2, 1:-1]
           + u[1:-1, 1:-1, 2:] + u[1:-1, 1:-1, :-2] - 6.0 * c)
    return jnp.sum(lap * lap)
""", "f32[256,256,256]"),
    ("gradient_magnitude", "science", """
def f(phi):
    gy, gx = jnp.gradient(phi)
    return jnp.mean(jnp.sqrt(gx * gx + gy * gy + 1e-12))
""", "f32[2048,2048]"),
    ("burgers_flux_bf16", "science", """
def f(u):
    u = u.astype(jnp.float32)
    flux = 0.5 * u * u
    dflux = flux - jnp.roll(flux, 1, axis=-1)
    return jnp.max(jnp.abs(dflux), axis=-1)
""", "bf16[512,65536]"),
    # -- kernels, Gaussian processes ------------------------------------------------------------
    ("rbf_kernel_rowsum", "science", """
def f(x, y):
    d2 = jnp.sum(x * x, -1)[:, None] - 2.0 * x @ y.T + jnp.sum(y * y, -1)[None, :]
    return jnp.sum(jnp.exp(-0.5 * d2), axis=1)
""", "f32[4096,64], f32[4096,64]"),
    ("gp_predictive_mean", "science", """
def f(xs, x, alpha):
    d2 = jnp.sum((xs[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    return jnp.exp(-d2 / 2.0) @ alpha
""", "f32[2000,8], f32[3000,8], f32[3000]"),
    ("gp_nll_cholesky", "science", """
def f(x, y):
    d2 = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    k = jnp.exp(-0.5 * d2) + 1e-3 * jnp.eye(x.shape[0])
    chol = jnp.linalg.cholesky(k)
    a = jax.scipy.linalg.cho_solve((chol, True), y)
    return 0.5 * y @ a + jnp.sum(jnp.log(jnp.diagonal(chol)))
""", "f32[1024,4], f32[1024]"),
    ("mmd_rbf", "science", """
def f(x, y):
    def k(a, b):
        d2 = jnp.sum(a * a, -1)[:, None] + jnp.sum(b * b, -1)[None, :] - 2.0 * a @ b.T
        return jnp.exp(-d2 / 128.0)
    return jnp.mean(k(x, x)) + jnp.mean(k(y, y)) - 2.0 * jnp.mean(k(x, y))
""", "f32[2048,128], f32[2048,128]"),
    ("matern52_vmap", "science", """
def f(x, z):
    def row(xi):
        r = jnp.sqrt(jnp.sum((z - xi) ** 2, axis=-1) + 1e-12) * jnp.sqrt(5.0)
        return jnp.sum((1.0 + r + r * r / 3.0) * jnp.exp(-r))
    return jax.vmap(row)(x)
""", "f32[1777,16], f32[2333,16]"),
    ("kernel_ridge_grad_lengthscale", "science", """
def f(log_l, x, y, alpha):
    def fit(log_l):
        d2 = jnp.sum(x * x, -1)[:, None] - 2.0 * x @ x.T + jnp.sum(x * x, -1)[None, :]
        pred = jnp.exp(-0.5 * d2 / jnp.exp(2 * log_l)) @ alpha
        return jnp.mean((pred - y) ** 2)
    return jax.grad(fit)(log_l)
""", "f32[], f32[2048,32], f32[2048], f32[2048]"),
    # -- k-means ----------------------------------------------------------------------------------
    ("kmeans_assign", "science", """
def f(x, c):
    d = jnp.sum(x * x, -1, keepdims=True) - 2.0 * x @ c.T + jnp.sum(c * c, -1)[None, :]
    return jnp.argmin(d, axis=1)
""", "f32[100000,32], f32[256,32]"),
    ("kmeans_inertia", "science", """
def f(x, c):
    d = jnp.sum((x[:, None, :] - c[None, :, :]) ** 2, axis=-1)
    return jnp.sum(jnp.min(d, axis=1))
""", "f32[50000,16], f32[100,16]"),
    ("kmeans_update", "science", """
def f(x, c):
    d = jnp.sum(x * x, -1, keepdims=True) - 2.0 * x @ c.T + jnp.sum(c * c, -1)[None, :]
    onehot = jax.nn.one_hot(jnp.argmin(d, axis=1), c.shape[0])
    counts = jnp.sum(onehot, axis=0)
    return (onehot.T @ x) / jnp.maximum(counts, 1.0)[:, None]
""", "f32[65536,64], f32[512,64]"),
    ("kmeans_soft_assign", "science", """
def f(x, c):
    d = jnp.sum(x * x, -1, keepdims=True) - 2.0 * x @ c.T + jnp.sum(c * c, -1)[None, :]
    r = jax.nn.softmax(-d / 0.5, axis=1)
    return (r.T @ x) / jnp.sum(r, axis=0)[:, None]
""", "f32[30000,48], f32[300,48]"),
    ("kmeans_assign_bf16", "science", """
def f(x, c):
    d = -2.0 * (x @ c.T).astype(jnp.float32) + jnp.sum(c.astype(jnp.float32) ** 2, -1)[None, :]
    return jnp.argmin(d, axis=1)
""", "bf16[131072,128], bf16[1024,128]"),
    ("kmeans_lloyd_fori", "science", """
def f(x, c0):
    def step(i, c):
        d = jnp.sum(x * x, -1, keepdims=True) - 2.0 * x @ c.T + jnp.sum(c * c, -1)[None, :]
        onehot = jax.nn.one_hot(jnp.argmin(d, axis=1), c.shape[0])
        return (onehot.T @ x) / jnp.maximum(jnp.sum(onehot, 0), 1.0)[:, None]
    return lax.fori_loop(0, 10, step, c0)
""", "f32[20000,16], f32[64,16]"),
    # -- ODE integrators ----------------------------------------------------------------------------
    ("lorenz96_rk4_scan", "science", """
def f(x0):
    def rhs(x):
        return (jnp.roll(x, -1, -1) - jnp.roll(x, 2, -1)) * jnp.roll(x, 1, -1) - x + 8.0
    def step(x, _):
        h = 0.01
        k1 = rhs(x); k2 = rhs(x + h / 2 * k1); k3 = rhs(x + h / 2 * k2); k4 = rhs(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return x, jnp.mean(x * x)
    x, energy = lax.scan(step, x0, None, length=200)
    return energy
""", "f32[4096,40]"),
    ("pendulum_euler_fori", "science", """
def f(theta, omega):
    def step(i, s):
        th, om = s
        return th + 0.001 * om, om - 0.001 * 9.81 * jnp.sin(th)
    th, om = lax.fori_loop(0, 1000, step, (theta, omega))
    return jnp.sum(0.5 * om * om - 9.81 * jnp.cos(th))
""", "f32[65536], f32[65536]"),
    ("rk4_trajectory_mean", "science", """
def f(y0, k):
    def step(y, _):
        h = 0.05
        g = lambda y: -k * y + jnp.sin(y)
        k1 = g(y); k2 = g(y + h / 2 * k1); k3 = g(y + h / 2 * k2); k4 = g(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y
    _, ys = lax.scan(step, y0, None, length=256)
    return jnp.mean(ys * ys, axis=0)
""", "f32[8192], f32[8192]"),
    ("neural_ode_grad", "science", """
def f(w, h0, target):
    def loss(w):
        def step(h, _):
            return h + 0.1 * jnp.tanh(h @ w), None
        h, _ = lax.scan(step, h0, None, length=20)
        return jnp.mean((h - target) ** 2)
    return jax.grad(loss)(w)
""", "f32[256,256], f32[4096,256], f32[4096,256]"),
    ("leapfrog_nbody_fori", "science", """
def f(pos, vel):
    def acc(p):
        d = p[None, :, :] - p[:, None, :]
        r2 = jnp.sum(d * d, -1) + 0.01
        return jnp.sum(d * (r2 ** -1.5)[..., None], axis=1)
    def step(i, s):
        p, v = s
        v = v + 0.005 * acc(p)
        return p + 0.01 * v, v
    p, v = lax.fori_loop(0, 10, step, (pos, vel))
    return jnp.sum(v * v)
""", "f32[1024,3], f32[1024,3]"),
    # -- reinforcement learning ---------------------------------------------------------------------
    ("gae_vmap_envs", "rl", """
def f(rewards, values, dones):
    def one_env(r, v, d):
        def step(carry, inp):
            adv, nv = carry
            ri, vi, di = inp
            delta = ri + 0.99 * nv * (1.0 - di) - vi
            adv = delta + 0.99 * 0.95 * (1.0 - di) * adv
            return (adv, vi), adv
        _, adv = lax.scan(step, (0.0, v[-1]), (r, v, d), reverse=True)
        return adv
    adv = jax.vmap(one_env, in_axes=1, out_axes=1)(rewards, values, dones)
    return adv / (jnp.std(adv) + 1e-8)
""", "f32[256,1024], f32[256,1024], f32[256,1024]"),
    ("ppo_clip_objective", "rl", """
def f(logits, actions, old_logp, adv):
    logp = jnp.take_along_axis(jax.nn.log_softmax(logits), actions[:, None], axis=1)[:, 0]
    ratio = jnp.exp(logp - old_logp)
    return -jnp.mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 0.8, 1.2) * adv))
""", "f32[65536,18], i32[65536], f32[65536], f32[65536]"),
    ("ppo_full_loss", "rl", """
def f(logits, actions, old_logp, adv, values, returns):
    logp_all = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(logp_all, actions[:, None], axis=1)[:, 0]
    ratio = jnp.exp(logp - old_logp)
    pg = -jnp.mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 0.8, 1.2) * adv))
    entropy = -jnp.mean(jnp.sum(jnp.exp(logp_all) * logp_all, axis=1))
    vf = jnp.mean((values - returns) ** 2)
    return pg + 0.5 * vf - 0.01 * entropy
""", "f32[16384,512], i32[16384], f32[16384], f32[16384], f32[16384], f32[16384]"),
    ("policy_entropy_bf16", "rl", """
def f(logits):
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.sum(jnp.exp(logp) * logp, axis=-1))
""", "bf16[4096,1024]"),
    ("vtrace_targets", "rl", """
def f(log_rhos, discounts, rewards, values, bootstrap):
    rhos = jnp.minimum(jnp.exp(log_rhos), 1.0)
    nv = jnp.concatenate([values[1:], bootstrap[None]], axis=0)
    deltas = rhos * (rewards + discounts * nv - values)
    def step(acc, inp):
        d, disc, c = inp
        acc = d + disc * c * acc
        return acc, acc
    _, vs = lax.scan(step, jnp.zeros_like(bootstrap), (deltas, discounts, rhos), reverse=True)
    return jnp.mean((vs + values) ** 2)
""", "f32[128,8192], f32[128,8192], f32[128,8192], f32[128,8192], f32[8192]"),
    ("sac_tanh_gaussian_logprob", "rl", """
def f(mu, log_std, eps):
    std = jnp.exp(jnp.clip(log_std, -20.0, 2.0))
    u = mu + std * eps
    a = jnp.tanh(u)
    logp = jnp.sum(-0.5 * eps ** 2 - jnp.log(std) - 0.5 * jnp.log(2 * jnp.pi), axis=-1)
    logp = logp - jnp.sum(jnp.log(1.0 - a * a + 1e-6), axis=-1)
    return jnp.mean(logp), a
""", "f32[8192,64], f32[8192,64], f32[8192,64]"),
    ("dqn_huber_td", "rl", """
def f(q, q_next, actions, rewards, dones):
    qa = jnp.take_along_axis(q, actions[:, None], axis=1)[:, 0]
    target = rewards + 0.99 * (1.0 - dones) * jnp.max(q_next, axis=1)
    td = qa - lax.stop_gradient(target)
    return jnp.mean(jnp.where(jnp.abs(td) < 1.0, 0.5 * td * td, jnp.abs(td) - 0.5))
""", "f32[32768,18], f32[32768,18], i32[32768], f32[32768], f32[32768]"),
    ("c51_projection", "rl", """
def f(probs, rewards, dones):
    atoms = jnp.linspace(-10.0, 10.0, 51)
    tz = jnp.clip(rewards[:, None] + 0.99 * (1.0 - dones[:, None]) * atoms[None, :], -10.0, 10.0)
    w = jnp.clip(1.0 - jnp.abs(tz[:, :, None] - atoms[None, None, :]) / 0.4, 0.0, 1.0)
    return jnp.sum(probs[:, :, None] * w, axis=1)
""", "f32[4096,51], f32[4096], f32[4096]"),
    ("a2c_policy_grad", "rl", """
def f(w, obs, actions, adv):
    def loss(w):
        logp = jax.nn.log_softmax(obs @ w, axis=-1)
        return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(actions, w.shape[1]), axis=-1) * adv)
    return jax.grad(loss)(w)
""", "f32[512,1024], f32[4096,512], i32[4096], f32[4096]"),
    ("obs_running_stats", "rl", """
def f(obs, mean, var, count):
    bm = jnp.mean(obs, axis=0)
    bv = jnp.var(obs, axis=0)
    n = obs.shape[0]
    delta = bm - mean
    tot = count + n
    new_mean = mean + delta * n / tot
    m2 = var * count + bv * n + delta ** 2 * count * n / tot
    return new_mean, m2 / tot
""", "f32[8192,376], f32[376], f32[376], f32[]"),
    ("td_lambda_returns_bf16", "rl", """
def f(rewards, values):
    r = rewards.astype(jnp.float32)
    v = values.astype(jnp.float32)
    def step(g, inp):
        ri, vi = inp
        g = ri + 0.99 * (0.05 * vi + 0.95 * g)
        return g, g
    _, ret = lax.scan(step, v[-1], (r, v), reverse=True)
    return jnp.mean((ret - v) ** 2)
""", "bf16[200,16384], bf16[200,16384]"),
    # -- vision -------------------------------------------------------------------------------------
    ("convnet_ce", "vision", """
def f(img, k1, w, labels):
    h = lax.conv_general_dilated(img, k1, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    h = jax.nn.relu(h)
    logits = jnp.mean(h, axis=(1, 2)) @ w
    return -jnp.mean(jnp.sum(jax.nn.one_hot(labels, 10) * jax.nn.log_softmax(logits), -1))
""", "f32[64,64,64,3], f32[3,3,3,64], f32[64,10], i32[64]"),
    ("segmentation_pixel_ce", "vision", """
def f(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=1)
    onehot = jax.nn.one_hot(labels, logits.shape[1], axis=1)
    return -jnp.mean(jnp.sum(onehot * logp, axis=1))
""", "f32[8,21,256,256], i32[8,256,256]"),
    ("sigmoid_focal_loss", "vision", """
def f(logits, targets):
    p = jax.nn.sigmoid(logits)
    ce = jnp.maximum(logits, 0) - logits * targets + jnp.log1p(jnp.exp(-jnp.abs(logits)))
    pt = p * targets + (1 - p) * (1 - targets)
    loss = ce * (1 - pt) ** 2
    return jnp.sum(loss * (0.25 * targets + 0.75 * (1 - targets))) / 1000.0
""", "f32[16384,91], f32[16384,91]"),
    ("dice_multiclass_3d", "vision", """
def f(logits, onehot):
    p = jax.nn.softmax(logits, axis=-1)
    inter = jnp.sum(p * onehot, axis=(0, 1, 2))
    union = jnp.sum(p, axis=(0, 1, 2)) + jnp.sum(onehot, axis=(0, 1, 2))
    return 1.0 - jnp.mean(2.0 * inter / (union + 1e-6))
""", "f32[4,128,128,64], f32[4,128,128,64]"),
    ("total_variation", "vision", """
def f(img):
    dh = img[:, :, 1:, :] - img[:, :, :-1, :]
    dw = img[:, :, :, 1:] - img[:, :, :, :-1]
    return jnp.sum(jnp.abs(dh), axis=(1, 2, 3)) + jnp.sum(jnp.abs(dw), axis=(1, 2, 3))
""", "f32[16,3,512,512]"),
    ("gram_style_loss", "vision", """
def f(feat, target_gram):
    b, c, h, w = feat.shape
    fm = feat.reshape(b, c, h * w)
    gram = jnp.einsum('bcn,bdn->bcd', fm, fm) / (h * w)
    return jnp.mean((gram - target_gram) ** 2)
""", "f32[8,256,64,64], f32[8,256,256]"),
    ("vit_label_smoothing_bf16", "vision", """
def f(logits, labels):
    lf = logits.astype(jnp.float32)
    n = lf.shape[-1]
    soft = jax.nn.one_hot(labels, n) * 0.9 + 0.1 / n
    return jnp.mean(jax.nn.logsumexp(lf, -1) - jnp.sum(soft * lf, -1))
""", "bf16[1024,1000], i32[1024]"),
    ("mixup_ce", "vision", """
def f(logits, y1, y2, lam):
    logp = jax.nn.log_softmax(logits)
    l1 = -jnp.sum(jax.nn.one_hot(y1, 1000) * logp, -1)
    l2 = -jnp.sum(jax.nn.one_hot(y2, 1000) * logp, -1)
    return jnp.mean(lam * l1 + (1 - lam) * l2)
""", "f32[2048,1000], i32[2048], i32[2048], f32[]"),
    ("triplet_batch_hard", "vision", """
def f(emb, labels):
    d2 = jnp.sum(emb * emb, -1)[:, None] - 2.0 * emb @ emb.T + jnp.sum(emb * emb, -1)[None, :]
    d = jnp.sqrt(jnp.maximum(d2, 1e-12))
    same = labels[:, None] == labels[None, :]
    hardest_pos = jnp.max(jnp.where(same, d, 0.0), axis=1)
    hardest_neg = jnp.min(jnp.where(same, jnp.inf, d), axis=1)
    return jnp.mean(jax.nn.relu(hardest_pos - hardest_neg + 0.3))
""", "f32[2048,128], i32[2048]"),
    ("center_loss", "vision", """
def f(feat, centers, labels):
    c = centers[labels]
    return 0.5 * jnp.mean(jnp.sum((feat - c) ** 2, axis=-1))
""", "f32[8192,512], f32[1000,512], i32[8192]"),
    ("batchnorm_nchw_stats", "vision", """
def f(x, gamma, beta):
    mean = jnp.mean(x, axis=(0, 2, 3), keepdims=True)
    var = jnp.var(x, axis=(0, 2, 3), keepdims=True)
    y = (x - mean) * lax.rsqrt(var + 1e-5) * gamma[None, :, None, None] + beta[None, :, None, None]
    return jax.nn.relu(y)
""", "f32[32,64,112,112], f32[64], f32[64]"),
    ("psnr_bf16", "vision", """
def f(a, b):
    mse = jnp.mean((a.astype(jnp.float32) - b.astype(jnp.float32)) ** 2, axis=(1, 2, 3))
    return jnp.mean(10.0 * jnp.log10(1.0 / mse))
""", "bf16[16,3,1024,1024], bf16[16,3,1024,1024]"),
    ("simple_cnn_grad_head", "vision", """
def f(w, feats, labels):
    def loss(w):
        pooled = jnp.mean(jax.nn.relu(feats), axis=(1, 2))
        logits = pooled @ w
        return -jnp.mean(jnp.sum(jax.nn.one_hot(labels, w.shape[1]) * jax.nn.log_softmax(logits), -1))
    return jax.grad(loss)(w)
""", "f32[512,1000], f32[128,14,14,512], i32[128]"),
    # -- recommenders ----------------------------------------------------------------------------------
    ("embedding_bag_sum", "recsys", """
def f(table, ids):
    return jnp.sum(table[ids], axis=1)
""", "f32[100000,64], i32[4096,50]"),
    ("embedding_bag_weighted_mean", "recsys", """
def f(table, ids, weights):
    e = jnp.take(table, ids, axis=0)
    return jnp.sum(e * weights[..., None], axis=1) / jnp.sum(weights, axis=1, keepdims=True)
""", "f32[50000,128], i32[2048,80], f32[2048,80]"),
    ("two_tower_inbatch_softmax", "recsys", """
def f(u, v):
    logits = (u @ v.T) / 0.05
    return jnp.mean(jax.nn.logsumexp(logits, axis=1) - jnp.diagonal(logits))
""", "f32[4096,128], f32[4096,128]"),
    ("full_catalog_softmax", "recsys", """
def f(user, items, target):
    logits = user @ items.T
    picked = jnp.sum(user * items[target], axis=-1)
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)
""", "f32[2048,64], f32[50000,64], i32[2048]"),
    ("bpr_loss", "recsys", """
def f(u, pos, neg):
    x = jnp.sum(u * (pos - neg), axis=-1)
    return -jnp.mean(jax.nn.log_sigmoid(x))
""", "f32[65536,64], f32[65536,64], f32[65536,64]"),
    ("factorization_machine", "recsys", """
def f(x, v, w):
    xv = x @ v
    x2v2 = (x * x) @ (v * v)
    return x @ w + 0.5 * jnp.sum(xv * xv - x2v2, axis=-1)
""", "f32[8192,1000], f32[1000,16], f32[1000]"),
    ("dcn_cross_layers", "recsys", """
def f(x0, ws, bs):
    x = x0
    for i in range(3):
        x = x0 * (x @ ws[i])[:, None] + bs[i] + x
    return jnp.mean(x, axis=-1)
""", "f32[8192,512], f32[3,512], f32[3,512]"),
    ("mf_masked_grad", "recsys", """
def f(u, v, r, mask):
    def loss(u):
        err = (u @ v.T - r) * mask
        return jnp.sum(err * err) / jnp.sum(mask)
    return jax.grad(loss)(u)
""", "f32[2000,64], f32[3000,64], f32[2000,3000], f32[2000,3000]"),
    ("recall_at_k_catalog", "recsys", """
def f(user, items, truth):
    scores = user @ items.T
    _, top = lax.top_k(scores, 50)
    return jnp.mean(jnp.any(top == truth[:, None], axis=1))
""", "f32[1024,64], f32[20000,64], i32[1024]"),
    ("dlrm_interaction", "recsys", """
def f(emb, dense):
    z = jnp.einsum('bfd,bgd->bfg', emb, emb)
    i, j = jnp.tril_indices(emb.shape[1], -1)
    flat = z[:, i, j]
    return jnp.sum(jnp.concatenate([dense, flat], axis=1) ** 2, axis=1)
""", "f32[2048,27,64], f32[2048,64]"),
    ("ranking_listwise_bf16", "recsys", """
def f(scores, labels):
    s = scores.astype(jnp.float32)
    p_true = jax.nn.softmax(labels.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.sum(p_true * jax.nn.log_softmax(s, axis=-1), axis=-1))
""", "bf16[8192,256], bf16[8192,256]"),
    ("item_popularity_segment", "recsys", """
def f(item_ids, clicks):
    counts = jax.ops.segment_sum(clicks, item_ids, num_segments=100003)
    return counts / jnp.sum(counts)
""", "i32[4194304], f32[4194304]"),
]


def programs() -> list[Program]:
    return [Program(f"wild3/{name}", FAMILY, _module(body), specs, [f"kind={kind}"])
            for name, kind, body, specs in PROGRAMS]


def main(argv: list[str] | None = None) -> int:
    return family_main(argv, description=__doc__.splitlines()[0], programs=programs, truth_file=TRUTH_FILE,
                       first_file=FIRST_FILE, results_file=RESULTS_FILE, after_first=AFTER_FIRST, rules_file=RULES_FILE)


if __name__ == "__main__":
    raise SystemExit(main())
