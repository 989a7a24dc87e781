"""The guide's rules, one entry each: anchor, target, title, text, and the function that applies it.

This table is the one source of the rules: the predictor page (``docs/guide/predict.md``) renders each
rule's title and statement from it (``jax-hlo-predict-rule``), the answers
(:class:`~sphinx_jaxhlo.predict.answer.Prediction`) carry the title, and a report names the rule by
its anchor.  The functions are the per-target deciders that return the anchor (one function may apply
several rules of its target, in the guide's order); a test checks that each function returns only the
anchors this table gives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rule:
    """One rule of the guide."""

    #: The page's label of the rule's section (``jaxhlo-predict-h100-cost``).
    anchor: str
    #: ``all``, ``cpu``, ``gpu:h100`` or ``tpu:v5e``.
    target: str
    #: The section's heading.
    title: str
    #: The rule, stated (the page's first paragraph of the section).
    text: str
    #: The dotted name of the function that applies it (in :mod:`sphinx_jaxhlo.predict`).
    applies: str

    def function(self) -> Callable[..., Any]:
        """The function that applies the rule (imported on use: it needs the jaxpr graph)."""
        import importlib

        module, name = self.applies.rsplit(".", 1)
        return getattr(importlib.import_module(f"sphinx_jaxhlo.predict.{module}"), name)  # type: ignore[no-any-return]


RULES: tuple[Rule, ...] = (
    Rule("jaxhlo-predict-all-loop", "all", "Loops: only a loop that reduces inside bounds memory",
         "A `lax.scan`, `lax.fori_loop` or `lax.map` that reduces *inside* its body holds one step's "
         "table at a time (with `unroll=k`, k steps'); one whose stacked output is reduced afterwards "
         'stores the whole table, `batch_size` or not, unless the reduction itself sits in the body of '
         "another loop: the table then counts that loop's steps, one step's at a time (wild20's Wright-Fisher "
         "drift, a `jax.random.binomial` in a `fori_loop`). A Python `for` over chunks, or `unroll=True`, is "
         "straight-line code XLA sees whole: the CPU keeps every step's table live, the H100 may merge "
         "the steps' GEMMs into one GEMM of the whole table (twenty steps of 1,000 rows, not ten of "
         '2,000), the TPU fuses each step as alone (800 MB for a Python loop where the scan needs 40 MB, '
         "{ref}`jaxhlo-guide-bounded-unrolled`). Under `jax.grad` a scan keeps every step's residuals "
         'unless its step is checkpointed ({ref}`jaxhlo-guide-bounded-checkpoint`). A table computed before '
         "a loop and read in its body is written as the loop's operand, a loop being no fusion consumer "
         "(`instruction_fusion.cc`), as wild5's vmapped Sinkhorn kernel `exp(-C / eps)` was on all three "
         "targets, and so it is where the loop's own reductions are far smaller (wild18's Soft-NMS: a "
         "2,048 x 2,048 IoU table per image read by 300 picks) and for a table of constants (`jnp.eye`): 11 "
         'probes of 11 on each target (`guide_predictor_loopread_probes.py`). '
         'On the TPU an `f32` operand of the table\'s size that a loop\'s body contracts (layers\' '
         'weights stacked for a scan, microbatches of an accumulated gradient) is converted to `bf16` before '
         'the loop and the copy written (4 probes of 4, 6 family programs of 6; `bf16` data fuse), whether '
         "the body takes its steps by a scan or indexes them (`xs[i]` in a `fori_loop`); a stack the body "
         'reads only elementwise is not copied.',
         "front.decide_all"),
    Rule("jaxhlo-predict-all-none", "all", "A reduction of an argument",
         "A reduction that reads an argument, or a transpose of one (folded into the reduction's "
         "dimensions), writes nothing of the table's size. A program with no reduction writes none either, "
         "unless a scatter reads updates the program makes (`segment_sum` of messages, `.at[i].add(1.0)`): "
         "that is left to the compile, as every target wrote such updates at some sizes and fused them at "
         "others.",
         "front.predict_jaxpr"),
    Rule("jaxhlo-predict-all-limits", "all", "Where the rules are not known to hold: compile it",
         "The rules were checked on the guide's examples and the benchmark's families; where a program leaves "
         'that ground the answer is "compile it" (`stored` is `None`, `certain` is false) with the one-line '
         'compile that answers, never a guess: an op no rule knows computes the table, or a convolution '
         'computes a table-sized value no reduction reads and reads none, or on the CPU a YNN convolution '
         'reads one; on the TPU a channels-first convolution that is 3-D, 1-D of `bf16`, or 2-D with fewer than '
         '128 input features, or a convolution of a converted argument; a gather reads or builds a '
         'table-sized value on the H100 that rules 3 to 5 do not answer (an embedding bag masked row by row '
         "at 6 to 8 gathered rows a table row, a gather of columns, several elements a row taken from an "
         "elementwise table), and a scatter "
         "writes one on the TPU (a gather's gradient); a normalised table is reduced again, three passes or "
         'more over table-sized data on the '
         "H100, four, or three with a contraction, on the TPU (a softmax's output summed again), or three on "
         'the TPU where the table has leading dimensions and rows of 4,096 or more (a distillation loss over '
         'patches: 13 of 16 probes wrote it, 3 fused); a variadic '
         'reduce (an `argmax` beside a `max` of the same value), or an `argmin` over a `jnp.stack` of computed '
         'tables (no per-operand split); the only reduction is a contraction of a '
         'computed operand that a gather, a concatenate or a loop computes, or that something else reads (on '
         'the H100 one computed elementwise too, on the TPU another contraction\'s output); on the H100 a '
         '`top_k` of an argument and a contraction with 65 to 512 rows or '
         'columns and an unaligned long `K` (split-K may copy its matrix), and a contraction of a computed '
         "table with a broadcast constant (a gradient's `ones @ exp(m)`: a reduction of the table, the cost "
         "model's call); on the CPU a matrix-vector product of a computed table whose vector is under 16 kB "
         "counted in `f32` bytes (the CPU's rule 1), and a transposed contraction result read on the way to"
         " the reduction (`(x @ w).T` exponentiated and summed: XLA's own dot writes it; a vmapped `b @ row`"
         " transposed, floored and maxed: one YNN fusion); on the TPU two contractions feeding"
         " one table where one reads the other's output, or more than two, a contraction that reads"
         " another contraction's table-sized output (an MLP's two "
         "layers before the reduction, or a gradient's backward pass where no reduction is live: `jax.grad` "
         "of a squared loss), a loop over a table-sized stack of `f32` operands that contracts, "
         "and a contraction's "
         'output larger than the table read outside the reductions, and a concatenate that builds a '
         'table-sized value outside a loop (a `roll`); on the CPU a `bf16` or `f16` contraction of a computed '
         "table no reduction reads, a cumulative op with no sort or FFT between the table's source and the "
         'reduction, a two-pass statistic over leading axes, and a global statistic applied back to two or '
         "more returned tables (a clipped update). "
         "A random draw of the table's size is left to the compile on the H100 where "
         '`jax_threefry_partitionable` is off (5 of 7 probes wrote its bits) or where a threefry draw of '
         'fewer than 4,096,000 elements is read once (the 4 measured were written), on the TPU where two '
         'passes over it read `bf16`, and on every target for a key that is neither threefry nor `rbg`.'
         " `bf16` or `f16` data doubles the H100's break-even band. On the H100 a cumulative op's `bf16` or "
         '`f16` operand, an outer product of two vectors, or a producer of 20 to 74 cycles an element is left '
         'to the compile. On the TPU, `where` is left to the compile between 32 and 104 MiB wherever no '
         'measured mechanism places the table, and at 32 MiB or less beside a larger value the TPU writes whole '
         '({ref}`the page\'s opening <jaxhlo-guide-predict>` lists them).',
         "front.decide_all"),
    Rule("jaxhlo-predict-h100-gemm", "gpu:h100", "1. A real contraction is a stored GEMM",
         "A contraction whose two free sides are both longer than one (`a @ b`, `einsum('ik,jk->ij')`, "
         "`vmap(jnp.dot)` over one operand, the seed's 3-column `pos @ hkl.T`) is a GEMM kernel, in any "
         'element type, and its output is stored: elementwise work can ride in its epilogue, but a '
         'reduction is another kernel ("the producer is not fusible", `priority_fusion.cc`), from a 16 × '
         "16 product to the seed's 20 GB ({ref}`jaxhlo-guide-matrix-gemm`); no flag changes it "
         '({ref}`jaxhlo-guide-cases-gpu-flags`). A contraction over a size-1 or empty dimension is a '
         'multiply ({ref}`jaxhlo-guide-matrix-no-contraction`). An operand normalised by a reduction\'s '
         "result (WeightNorm's `w / norm(w)`, QK-norm's `rsqrt` of a mean square) is written before the "
         "GEMM by a kernel of its own, as each of the 40 measured was; a plain scale rides in the GEMM's "
         "fusion. An operand computed from statistics of its groups (a group-wise quantiser's dequantised "
         "weight, reshaped back or not; a group norm) is written so too: 38 probes of 38. "
         'A convolution is a cuDNN library call (`conv_rewriter.cc`) whose output is written the '
         'same way, so a reduction of it reads it from memory, as each of the 7 measured did.', "h100.decide_gpu"),
    Rule("jaxhlo-predict-h100-matvec", "gpu:h100",
         "2. A matrix-vector product is a reduction; a narrow one may copy its matrix",
         'A matrix-vector product is a multiply and a reduce, or past 10,000,000 operand elements a small '
         'GEMM ({ref}`jaxhlo-guide-matrix-small-contractions`); either way its result, a vector, is '
         'stored before another reduction ("both the producer and the consumer contain a reduce"). A '
         'computed square (`x * x`) read by one past 10,000,000 elements was written before the GEMM in '
         'every case measured; `exp`, `cos` and `x + 1` were read by the GEMM\'s fusion directly, even at '
         '67,108,864 elements, so only the square is answered. What '
         'can be large is a copy: a contraction with a narrow side (a vector, or 64 rows or columns or '
         'fewer) and a long `K` not a multiple of 32, over a large matrix, is a split-K GEMM that pads '
         '`K` (`split_k_gemm_rewriter.cc`), copying the operand:',
         "h100.decide_gpu"),
    Rule("jaxhlo-predict-h100-topk", "gpu:h100", "3. top-k, sorts, scans and FFTs read a stored operand",
         '`lax.top_k` and `lax.approx_max_k` of a computed table read it from memory (`top_k_of_cos` '
         'above). So does a sort, a cumulative op (`jnp.cumsum`, `lax.cummax`) or an FFT between the '
         "table's source and the reduction, or reading any table-sized value the program computes (a ball "
         "query's sorted indices): each is a kernel of its own (a sort kernel, a cuFFT call, a "
         "scan's passes), so a computed operand is written for it (`exp` before a `cumsum`) and its "
         'output is written for the reduction (a `sort` of an argument), or for whatever reads it when no '
         "reduction reads it whole (wild20's Yuen statistic: a column sort read through slices). Not every "
         'cumulative op\'s operand: jax '
         'lowers `cumsum`, `cummax` and their kin to a reduce-window that XLA rewrites into a tree of windows '
         '(`ReduceWindowRewriter::TryOptimizeCumSumOrProd`, `reduce_window_rewriter.cc`) reading each element '
         'more than once, and a '
         'cheap `f32` producer over one table-sized argument, not transposed (19 cycles an element or fewer: a '
         'square, `x + 1`, '
         '`1 / x`, a row scale) is computed in those passes, the reduction after them fused too; a costly one '
         '(75 cycles or more: `sqrt`, `exp`, `log`, `tanh`, a sigmoid) or one of two table-sized inputs (`x * y`) '
         'is written: the 46 of 60 probes answered were all right, the rest left to the compile '
         '(`guide_predictor_cumulative_probes.py`: any axis, odd shapes, '
         '`cummax`, `cumprod`, `reverse`, `jax.grad`, `vmap`, a mask). A transposed argument keeps the general rule: '
         'the transpose is a kernel that writes it. A `bf16` operand, an outer product of two '
         'vectors, and a cheap producer along a scan of 128 or fewer (no tree) or over fewer than 2**20 '
         'elements went both ways: compile it. A '
         'scatter that writes a table-sized '
         "value (a gather's gradient, an `.at[].add`) is one too: an input fusion root that updates its operand "
         'in place (`IsInputFusibleScatter` in `gpu_fusible.cc`, `ShouldFuseInPlaceOp` in '
         '`instruction_fusion.cc`), so its output is written, as in each of the 12 probes measured '
         '(`benchmarks/guide_predictor_gather_probes.py`).'
         ' So are a triangular solve (a cuBLAS call, `__cublas$triangularSolve`: '
         "`triangular_solve_rewriter.cc`), a Cholesky factor (jax's cuSOLVER call) and an incomplete gamma or "
         'beta function (jax lowers it to a while loop): the table each computes is written, as in each of the'
         ' 9 probes measured (`guide_predictor_ops_probes.py`). '
         'So are the bits of an `rbg` key (`lax.rng_bit_generator`, which XLA expands into Philox): a loop '
         'fusion of their own writes them for the reduction, as in each of the 6 probes measured '
         '(`guide_predictor_rng_probes.py`).', "h100.decide_gpu"),
    Rule("jaxhlo-predict-h100-softmax", "gpu:h100",
         "4. Softmax: a reduction over another axis reads its whole output",
         "A softmax (the row's maximum, `exp(x - max)`, its sum, the divide) is one Triton kernel "
         '(`softmax_rewriter_triton.cc`). A reduction over the *same* axis after it joins the kernel '
         "(`softmax_rows`); one over *another* axis reads the softmax's whole output from memory "
         '(`softmax_columns`). A log-sum-exp of a costly producer (400 cycles or more, see rule 5: '
         '`tanh`, `cos`) stores the producer (`logsumexp_of_cos`). A gather reads it from memory too '
         "(`take_along_axis` of a `log_softmax`, rows of a softmax): over rows of 16,384 or fewer the softmax's "
         'whole output is written for the gather, as in each of the 14 probes measured.'
         ' A 2-D table normalised over rows of 512 or more (a softmax, a log-softmax, a layer norm) and then '
         'reduced over axis 0 is written so (14 probes of 14, forward); another reduction of a normalised table '
         'is left to the compile: over the same axis it fused in the probes but was stored in ten family '
         'programs.', "h100.decide_gpu"),
    Rule("jaxhlo-predict-h100-cost", "gpu:h100", "5. Otherwise: the cost model, once per reader",
         "Priority fusion stores an elementwise producer when computing it inside the reduction's kernel, "
         'once for each reader, is estimated slower than writing and reading it back '
         '(`CalculateProducerPriority`; the estimates of `gpu_performance_model.cc`). A gather is such a '
         'producer too (`IsUniversallyLoopFusible` in `gpu_fusible.cc`): whole rows gathered (an embedding '
         'lookup, `x[idx]`) of an argument or of an elementwise function of arguments, 524,288 elements or '
         'more, reduced over the last axis or the last few fuse into the reduction in one pass (45 probes) and '
         'are written '
         'for two (a mean, then the variance about it: 6 probes); a few elements a row taken from a softmax '
         'over rows longer than 16,384 are recomputed in the gather (5 probes). Rows gathered into an '
         'embedding bag and reduced over its middle axis fuse in too (`emb[ids]`: 17 probes; bags of fewer '
         'than 32 rows, a loop reduction: 2; 8 gathered rows a table row or more: 16) unless they are masked '
         "or weighted row by row (`jnp.take`'s default fill mode, a weight a row) at 6 gathered rows a table "
         'row or fewer: then they are written (53 probes); one element a row taken from an elementwise table '
         'and reduced across the rows is written for the reduction (21 probes); one picked from a table '
         'computed with row reductions of its own but no softmax diamond (`logits - logsumexp(logits)`) is '
         "recomputed in the gather, and where the table's reductions fuse it so does the program (5 probes). "
         'A table computed from a threefry draw (`jax.random`: its hash is a hundred-odd integer ops an '
         'element) and read in two passes (a log-sum-exp, a variance, a layer norm) is written (7 probes '
         'of 7, `guide_predictor_rng_probes.py`). Three things decide:',
         "h100.decide_gpu"),
    Rule("jaxhlo-predict-cpu-dot", "cpu", "1. A contraction YNN does not take is XLA's own dot",
         'A contraction with a vector operand, or of `f16`, integers or complex numbers, is not a YNN dot '
         "(`IsDotSupportedByYnn`, `ynn_support.cc`) but XLA's own, which writes its result; an `f16` one "
         'converts a computed table to `f32` first (`ChangeOpDataType` in `cpu_compiler.cc`) and writes it '
         'for the dot, as each of the 10 measured did. So is a table that one contraction computes and '
         'another reads, with only elementwise work between and no '
         "reduction around (`exp(x @ y.T) @ y`, a gradient's backward products): XLA's loop fusion "
         "computes it between two YNN dots. A computed table read by a matrix-vector product (through a "
         "transpose or not) is fused into XLA's dot only when the dot's output has rank one or less and its "
         'vector is under 16 kB (`kFusionThresholdBytes`, `cpu_instruction_fusion.cc`; `bf16` and `f16` '
         "vectors count in `f32` bytes, the dot being converted to `f32`): from 16 kB, or with a wider "
         'output, the table is written; under it the optimized dot may still become an `[n,1]` one '
         "(`exp(m) @ v` wrote `exp(m)` at every size measured), which the jaxpr does not say, so the answer "
         "is the compile. XLA's loop fusion also writes the operand of a contraction that is the program's only "
         "reduction, computed "
         "from arguments elementwise (`exp(x) @ w`, a one-hot comparison `oa.T @ ob`) or by another "
         "contraction: with no reduction the YNN fusion holds the dot alone and takes no producer in (16 "
         "probes of 16). With a reduction on the way, as in attention's softmax, one "
         'YNN fusion grows through both contractions:', "cpu.decide_cpu"),
    Rule("jaxhlo-predict-cpu-arg", "cpu", "2. argmax and argmin take anything in",
         "`argmax` and `argmin` are a variadic reduce that YNN does not take; XLA's loop fusion does, "
         'with any elementwise producer (`CpuInstructionFusion`, `cpu_instruction_fusion.cc`): the cosine '
         'a sum stores is computed inside an argmax (`argmax_of_cos`). A product is a YNN dot, though: an '
         "argmax of a product's values is the next rule.", "cpu.decide_cpu"),
    Rule("jaxhlo-predict-cpu-other", "cpu", "3. Other reductions YNN lacks store a computed operand",
         '`prod`, `any`, `all`, integer and `f16` sums (`IsReduceLikeOpSupportedByYnn` takes add, max and min '
         "reducers, not `s32` sums) and an argmax of a product's values ({ref}`example "
         '<jaxhlo-guide-matrix-cpu-gates>`) are not YNN reductions. Folding more than 32 elements a result, '
         "XLA's tree reduction rewriter splits them into a `reduce-window` that fuses nothing, so a computed "
         "operand is stored (`prod_of_exp`, `any_of_compare`); over 32 or fewer, XLA's loop fusion takes it "
         "in. `top_k` sorts a stored operand. A sort or an FFT between the table's source and the reduction, "
         "or reading any table-sized value the program computes (a ball query's sorted indices), is"
         ' a thunk of its own, never in a fusion (`SortThunk`, `FftThunk`: `thunk_emitter.cc`): the table it '
         'reads and the one it writes are stored, as each of the 8 measured was (a double argsort, sorted '
         'samples, an energy spectrum, a long convolution by FFT). So is a convolution YNN does not take '
         '(`IsConvolutionOpSupportedByYnn`: 1-D or 3-D, channels first, 16 features or fewer, input '
         "dilation, `f16`, a gradient's backward convolutions): XLA's own convolution writes its output, "
         "and a computed table it reads is written in Eigen's layout (`ConvCanonicalization`), as in each of "
         'the 45 probes measured.'
         " So are a triangular solve and a Cholesky factor (jax's LAPACK calls, `lapack_strsm_ffi`, "
         '`lapack_spotrf_ffi`), an incomplete gamma or beta function (jax lowers it to a while loop) and a '
         'reduce-window of overlapping windows (an LRN sum, a 3x3 max filter): each writes the table it '
         'computes, as in each of the 18 probes measured (`guide_predictor_ops_probes.py`); a reduce-window of'
         ' windows that do not overlap is left to the compile (one, 2x2 by 2, fused). '
         "A random draw of the table's size from a threefry key (`jax.random`'s default) writes its bits "
         'too: jax lowers the hash for the CPU as a loop of its five rounds (`use_rolled_loops`, '
         "`threefry2x32.py`), whose state, the draw's `u32` bits, is written whatever reads the draw, an "
         '`argmax` too (`jax.random.categorical`), as in each of the 50 probes measured '
         "(`guide_predictor_rng_probes.py`); an `rbg` key's bits are elementwise work the rules above "
         'answer.', "cpu.decide_cpu"),
    Rule("jaxhlo-predict-cpu-ynn", "cpu", "4. sum, mean, max, min: YNN's table, one reader",
         'A sum, mean, max or min of `f32` (`bf16` is converted first) is a YNN fusion, grown from the '
         'reduction, and a YNN GEMM or convolution above it (a 2-D channels-last `f32` or `bf16` convolution '
         'of more than 16 features, depthwise too, `bf16` made `f32` by `FloatNormalization`: 50 probes of '
         "50), through the producers in YNN's table whose values have one reader "
         '(`LibraryRewriter::AddFusionCandidates`, `library_rewriter.cc`; `GetYnnUnaryOpMap` and '
         '`GetYnnBinaryOpMap`):', "cpu.decide_cpu"),
    Rule("jaxhlo-predict-tpu-complex", "tpu:v5e", "1. Complex data is stored",
         'Complex arithmetic and complex contractions are split into real and imaginary `f32` buffers, '
         'which are stored, in HBM here:', "tpu.decide_tpu"),
    Rule("jaxhlo-predict-tpu-topk", "tpu:v5e",
         "2. An exact top-k of a contraction; a sort, scan, FFT or gather",
         '`lax.top_k` of a contraction sorts the stored product, in HBM; `lax.approx_max_k` does not store it,'
         ' and a `top_k` of elementwise data computes it again. A sort, a cumulative op or an FFT between the '
         "table's source and the reduction, or reading any table-sized value the program computes, stores "
         "the table it reads, and its own table-sized output whatever reads it (on-chip at these sizes: "
         "`cumsum` or "
         '`sort` after `cos`, 16.8 MB at 2048 square, are `S(1)`). A concatenate that builds a table-sized '
         "value outside a loop (`jnp.roll`, `jnp.gradient`: a stencil's shifted copies) is left to the "
         "compile: the TPU wrote it in 5 of the 9 measured (wild3's heat, Burgers and gradient-magnitude "
         "stencils, a MoCo queue, a separable blur; not a rotary roll or wild6's Ising, XY and Gray-Scott "
         'rolls). A gather that reads a computed table-sized value or builds one (`take_along_axis` after a '
         '`log_softmax`, an embedding lookup) and a scatter whose updates are one (`segment_sum` of an '
         'activation) store it too: measured, as libtpu is closed, 22 of 22 across the families; so does '
         "one outside any reduction, as a gather's gradient builds (9 of 10 gradient probes compiled for "
         'the TPU, `guide_predictor_gather_probes.py`). '
         'A reduce-window (`lax.reduce_window`: sums, maxima, minima, strided or not, 1 to 256 MB), as the '
         "TPU's cumulative ops are, and an incomplete gamma or beta function (a while loop) store the table "
         'too: 14 of 14 probes measured (`guide_predictor_ops_probes.py`). '
         "The bits of a random draw of the table's size are stored too from an `rbg` key "
         '(`lax.rng_bit_generator`: 6 probes of 6) or from a threefry key with '
         "`jax_threefry_partitionable` off (the counter's two halves hashed and concatenated: 7 of 7, "
         "`guide_predictor_rng_probes.py`); with it on, jax's default, the hash is elementwise work that "
         'fuses. The three top-k forms:', "tpu.decide_tpu"),
    Rule("jaxhlo-predict-tpu-readers", "tpu:v5e", "3. A contraction read twice is stored",
         "A dot's output is stored when it is read in two passes: a statistic and the pass that needs it "
         '(a variance, a softmax, a log-sum-exp, {ref}`jaxhlo-guide-matrix-tpu-passes`), the forward '
         'reduction and the backward pass of `jax.grad` of a loss not linear in the sums, a value '
         'returned with its gradient ({ref}`jaxhlo-guide-seed-grad-tpu`), or an output; so are a costly '
         'producer (`cos`, `sin`, `tan`) of an argument read in two passes, the operand of an `argmax` '
         'over every axis (relaid out first), and a computed table read through two or more of its '
         'windows (`w[..., 0]` and `w[..., 1]` of a pairwise table, its halves, strided or shifted '
         'views, a `where` between tables, or the whole table in a reduction beside one window, as a sliced '
         "softmax's sum over its exponentials, outside a loop; windows of an argument, transposed or "
         'broadcast, fuse, and those of a converted one are left to the compile), and a computed table whose last '
         'dimension a reshape splits into groups of 16 or more, reduced over the groups (a group-wise '
         "quantiser's `max(abs(w.reshape(o, -1, 128)), -1)`: written in the TPU's tiles; groups of 8, the "
         'middle axis, or the argument as it is fuse), or whose last two dimensions a reshape merges before a '
         "`top_k` or an `argmax` over them (a beam search's candidates: relaid out first; a plain `max`, or "
         'a merge of the leading dimensions, fuse). A convolution is such a dot: '
         "its output read in two passes (a BatchNorm's mean and variance, a softmax over the channels) or "
         'returned is stored, and so is a computed table a convolution reads (an activation between two '
         "convolutions, a gradient's cotangent) and a relaid-out copy of its argument, of the table's size, "
         'for a batch under 8, a grouped convolution that is not depthwise, an `f32` image of fewer than 64 '
         'channels-last input features or of 64 over more than 64 x 64 positions (a `bf16` copy: 7 '
         'compiles of 7; 96 features went both ways, left to the compile; a `bf16` or `f16` image is not '
         'converted but copied as it is, an argument\'s copy and no computed table: 14 compiles of 14), or a '
         '1-D channels-first `f32` convolution '
         '(measured, libtpu being closed: 50 probes of 50). A normalised table reduced again (a softmax or '
         'a layer norm, then an entropy or a '
         'mean: three passes) is stored when it is a 2-D dot\'s output (`x @ w`, `q @ k.T`: 18 probes of 18); '
         'a batched dot\'s is left to the compile. The output of one of two contractions that feed '
         "one table, neither reading the other's (`x @ w1 + y @ w2`, SwiGLU's gate times its value): an "
         'output fusion holds one dot, which reads the other\'s stored output (9 probes of 9). '
         'A computed table that a batched contraction reads as an operand (`einsum("bqn,bgn->bqg", '
         'sigmoid(pred), gt)`) is written first, as the matrix unit reads it (converted to `bf16` at the default '
         'precision), '
         'when its free dimensions (the dot\'s rows) are not a multiple of 8, whatever else reads it (3, 12, '
         '100, 10 x 10 or 1,004 rows: 15 probes of 15; 64, 104, 120 or 128, and 2-D contractions, fuse). '
         'A table computed from a threefry draw (`jax.random`: its hash is a costly producer) and read in '
         'two passes is stored where the passes read `f32` (6 probes of 6; a `bf16` log-sum-exp fused and '
         'is left to the compile).'
         ' '
         "A statistic of a table's groups applied back to the table (a sum, max or min over axes a reshape "
         "split off, read by `g / scale` or `g - mean`: a group-wise quantiser's scales and zero points before "
         '`x @ wq`, groups along the contracted axis or the last, a group norm) writes a table-sized buffer, the '
         'statistic broadcast over the groups or the quotient, for groups of 16 or more, a contraction after it '
         'or not (38 probes of 38); groups of 8, and per-tensor or per-channel scales with no reshape, fuse (31 '
         'probes), and groups of 9 to 15 are left to the compile.'
         ' An `int8` or `uint8` operand the program computes for a contraction (a quantiser\'s `round`, '
         '`clip` and `astype`: SmoothQuant, wild18) is written before the dot, as in each of the 9 probes '
         'measured (`guide_predictor_int8_probes.py`; per-channel or constant scales, from `f32`, `bf16` or '
         '`int32`, batched, tiny to 134 MB) and on a real TPU v5e (on-chip, `tpu_loop_int8_chip.py`); the same '
         'quantiser before an `f32` product fuses.'
         ' An elementwise table read twice is not written but computed again for each reader, except a '
         'returned table read again to compute another returned table beside the '
         "reduction (an optimizer's new moment, then its update and the update's norm: RMSProp, "
         'Adagrad, Yogi, AdaBelief, Sophia, centered RMSProp, six of six measured), which is written and '
         'read back; `jax.checkpoint` around the reduction makes the backward pass compute the dot '
         'again:', "tpu.decide_tpu"),
    Rule("jaxhlo-predict-tpu-matvec", "tpu:v5e", "4. A matrix-vector product before a reduction",
         'A matrix-vector product is a multiply and a reduce in `f32`, its result, a vector, stored '
         'on-chip before another reduction ({ref}`jaxhlo-guide-matrix-small-contractions`); a plain sum '
         'of it folds in. A batch of them with their own vectors and a long enough `K` is a dot on the '
         'matrix unit ({ref}`jaxhlo-guide-matrix-batched-matvec`).', "tpu.decide_tpu"),
    Rule("jaxhlo-predict-tpu-fused", "tpu:v5e", "5. Otherwise one output fusion",
         'A real dot, the elementwise work around it and the reductions of its output are one output '
         "fusion, in any element type, sibling reductions included: nothing of the table's size is "
         "stored, for the seed's three forms ({ref}`jaxhlo-guide-seed-symptom`) or a sum, an argmin and a "
         'sum with a max of a product ({ref}`jaxhlo-guide-matrix-tpu-passes`). So is a convolution of an '
         'argument read in one pass, with a batch of 8 or more, not grouped (depthwise is), and 128 input '
         'features or more (64 over 64 x 64 positions or fewer) channels last or 128 in a 2-D channels-first '
         'one: 40 probes of 40, and 20 compiles of a grid of 64 to 256 features by 32 x 32 to 256 x 256 '
         'positions. So is a '
         "contraction that is the program's only reduction, of an operand computed from arguments "
         'elementwise (`exp(x) @ w`, a one-hot comparison): the operand is computed in the dot\'s fusion (14 '
         'probes of 14). Whole rows '
         'broadcast and '
         'summed over `k` are no dot: stored ({ref}`jaxhlo-guide-matrix-broadcast`).',
         "tpu.decide_tpu"),
)

#: The rules by anchor.
BY_ANCHOR: dict[str, Rule] = {rule.anchor: rule for rule in RULES}


def rule_title(anchor: str) -> str:
    """The title of the rule ``anchor`` (empty for an unknown anchor)."""
    rule = BY_ANCHOR.get(anchor)
    return rule.title if rule is not None else ""


def rules_for(target: str) -> list[Rule]:
    """The rules that apply on ``target`` (``all``'s first), in the guide's order."""
    return [r for r in RULES if r.target in ("all", target)]
