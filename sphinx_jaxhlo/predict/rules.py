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
         "A scan, fori_loop or lax.map that reduces inside its body holds one step's table at a time (unroll=k: "
         "k steps'); one whose stacked output is reduced afterwards stores the whole table. A Python loop over "
         "chunks, or unroll=True, is straight-line code XLA sees whole.", "front.decide_all"),
    Rule("jaxhlo-predict-all-none", "all", "A reduction of an argument",
         "A reduction that reads an argument, or a transpose of one, writes nothing of the table's size.",
         "front.predict_jaxpr"),
    Rule("jaxhlo-predict-h100-gemm", "gpu:h100", "1. A real contraction is a stored GEMM",
         "A contraction whose two free sides are both longer than one is a GEMM kernel whose output is stored; "
         "a contraction over a size-1 or empty dimension is a multiply.", "h100.decide_gpu"),
    Rule("jaxhlo-predict-h100-matvec", "gpu:h100",
         "2. A matrix-vector product is a reduction; a narrow one may copy its matrix",
         "A matrix-vector product's result is stored before another reduction reads it. A narrow contraction "
         "with a long K not a multiple of 32 over a large matrix is a split-K GEMM that pads, copying the matrix.",
         "h100.decide_gpu"),
    Rule("jaxhlo-predict-h100-topk", "gpu:h100", "3. top-k reads a stored operand",
         "lax.top_k and lax.approx_max_k of a computed table read it from memory.", "h100.decide_gpu"),
    Rule("jaxhlo-predict-h100-softmax", "gpu:h100",
         "4. Softmax: a reduction over another axis reads its whole output",
         "A softmax followed by a reduction over another axis stores the softmax's output; a softmax or "
         "log-sum-exp of a costly producer (400 cycles or more) stores the producer.", "h100.decide_gpu"),
    Rule("jaxhlo-predict-h100-cost", "gpu:h100", "5. Otherwise: the cost model, once per reader",
         "Priority fusion stores an elementwise producer when computing it inside the reduction's kernel, once "
         "per reader, is slower than writing and reading it back; near the break-even, compile it.",
         "h100.decide_gpu"),
    Rule("jaxhlo-predict-cpu-dot", "cpu", "1. A contraction YNN does not take is XLA's own dot",
         "A contraction YNN does not take is XLA's own dot, which writes its result; a table one contraction "
         "computes and another reads is written between the two.", "cpu.decide_cpu"),
    Rule("jaxhlo-predict-cpu-arg", "cpu", "2. argmax and argmin take anything in",
         "argmax and argmin are XLA's loop fusions and take any elementwise producer in.", "cpu.decide_cpu"),
    Rule("jaxhlo-predict-cpu-other", "cpu", "3. Other reductions YNN lacks store a computed operand",
         "Reductions YNN lacks (prod, any/all, integer and f16 sums) over more than 32 elements a result are "
         "split into a reduce-window that fuses nothing.", "cpu.decide_cpu"),
    Rule("jaxhlo-predict-cpu-ynn", "cpu", "4. sum, mean, max, min: YNN's table, one reader",
         "A sum, mean, max or min is a YNN fusion grown through producers in YNN's table whose values have one "
         "reader; anything else stores what is above it.", "cpu.decide_cpu"),
    Rule("jaxhlo-predict-tpu-complex", "tpu:v5e", "1. Complex data is stored",
         "Complex data is split into real and imaginary f32 buffers.", "tpu.decide_tpu"),
    Rule("jaxhlo-predict-tpu-topk", "tpu:v5e", "2. An exact top-k of a contraction",
         "An exact top_k of a contraction sorts the stored product.", "tpu.decide_tpu"),
    Rule("jaxhlo-predict-tpu-readers", "tpu:v5e", "3. A contraction read twice is stored",
         "A contraction's output read in two passes, or by another reader, is stored; an elementwise table is "
         "recomputed for each reader.", "tpu.decide_tpu"),
    Rule("jaxhlo-predict-tpu-matvec", "tpu:v5e", "4. A matrix-vector product before a reduction",
         "A matrix-vector product's result is stored before another reduction.", "tpu.decide_tpu"),
    Rule("jaxhlo-predict-tpu-fused", "tpu:v5e", "5. Otherwise one output fusion",
         "Otherwise a dot, its elementwise producers and consumers and the reductions are one output fusion.",
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
