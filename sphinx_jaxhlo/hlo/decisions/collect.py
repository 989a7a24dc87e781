"""Collecting XLA's record of its fusion decisions: the options that make a
compile write it, and reading the files it leaves.

XLA keeps a record of its fusion decisions when asked to dump them; the
compile worker (:mod:`sphinx_jaxhlo.compiler.worker`) asks, in a private temporary
folder, with :func:`collection_options`, then :func:`collect` reads the few
files it needs (:mod:`sphinx_jaxhlo.hlo.decisions.records` says which) and the
worker removes the folder.  Needs neither jax nor Sphinx.

The GPU's priority fusion weighs its candidates in several threads, so the
record lists the same decisions in a different order from one compile to the
next; :func:`collect` gives them in one order (:func:`canonical_order`), so
that the same compile gives the same report, byte for byte (snapshots).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sphinx_jaxhlo.core.report import FusionDecision
from sphinx_jaxhlo.hlo.decisions.quotes import MAX_DECISIONS, gpu_decisions, visualization_decisions
from sphinx_jaxhlo.hlo.decisions.records import CPU_PASS, CPU_SOURCE, GPU_PASS, TPU_PASS, TPU_SOURCE
from sphinx_jaxhlo.hlo.model import HloModule

__all__ = ["COSTLY", "MAX_RECORD_BYTES", "canonical_order", "collect", "collection_options", "collection_refused",
           "read_record"]

#: The most a file of XLA's dump folder may hold to be read (a gradient of a long unrolled chain
#: writes a few megabytes).
MAX_RECORD_BYTES = 64 * 2**20


#: Why the CPU's and TPU's records are not collected unless asked for.
COSTLY = ("not collected: the {platform}'s record (the fusion visualization) renders the computation at every "
          "step, which multiplies compile time (7.9x measured on a 6-layer MLP's gradient on the CPU); "
          "JAXHLO_FUSION_DECISIONS=all collects it")


def collection_options(platform: str, folder: str, *, everything: bool = False) -> dict[str, object]:
    """The XLA options that make a compile for ``platform`` record its fusion
    decisions in ``folder``: they change what XLA writes, not what it compiles.

    :param platform: ``cpu``, ``cuda`` or ``tpu``.
    :param everything: also the CPU's and TPU's records, which are costly
        (:data:`COSTLY`); by default only the GPU's, which is cheap.
    """
    if platform == "cuda":
        return {"xla_dump_to": folder, "xla_dump_hlo_pass_re": GPU_PASS}
    if platform == "cpu" and everything:
        return {"xla_dump_to": folder, "xla_dump_fusion_visualization": True,
                "xla_dump_hlo_pass_re": f"^{CPU_PASS}$"}
    if platform == "tpu" and everything:
        return {"xla_dump_to": folder, "xla_dump_fusion_visualization": True}
    return {}


def collection_refused(flags: Iterable[str], environment_flags: str) -> str | None:
    """Why the record is not collected for a compile, or ``None``: the
    example's own dump options, or ``XLA_FLAGS``', would be overridden."""
    own = sorted(f for f in flags if f.startswith("xla_dump"))
    if own:
        return f"not collected: the example sets {', '.join(own)}"
    if "--xla_dump" in environment_flags:
        return "not collected: XLA_FLAGS sets dump options"
    return None


def read_record(path: str) -> str | None:
    """The text of one file of XLA's dump folder; None when it is missing, unreadable or over
    :data:`MAX_RECORD_BYTES` (the decision records and the buffer assignment alike)."""
    import os

    try:
        if os.path.getsize(path) > MAX_RECORD_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _module_prefix(folder: str, module_name: str, suffix: str) -> str | None:
    """``module_0007.jit_f`` of the last module of that name with a file ending in ``suffix``."""
    import os

    best: tuple[int, str] | None = None
    pattern = re.compile(r"(?:.*\.)?(module_(\d+)\." + re.escape(module_name) + r")\b")
    for name in os.listdir(folder):
        if not name.endswith(suffix):
            continue
        m = pattern.match(name)
        if m is not None and (best is None or int(m.group(2)) > best[0]):
            best = (int(m.group(2)), m.group(1))
    return best[1] if best else None


def canonical_order(decisions: Iterable[FusionDecision]) -> list[FusionDecision]:
    """The decisions in an order that does not depend on the order XLA wrote
    them in: by pass, producer, readers, kind and reason."""
    return sorted(decisions, key=lambda d: (d.pass_name, d.producer, d.consumers, d.kind, d.reason, d.record,
                                            d.producer_instruction or "", d.consumer_instructions, d.mapping))


def collect(platform: str, folder: str, optimized_hlo: str | HloModule) -> tuple[list[FusionDecision], str]:
    """Read the record a compile left in ``folder`` (only the files needed).

    :param optimized_hlo: the compiled module's text, or that text parsed, to map names to.
    :return: the decisions, in :func:`canonical_order`, and a note (never an exception).
    """
    decisions, note = _collect(platform, folder, optimized_hlo)
    return canonical_order(decisions), note


def _collect(platform: str, folder: str, optimized_hlo: str | HloModule) -> tuple[list[FusionDecision], str]:
    import os

    if isinstance(optimized_hlo, HloModule):
        module_name = optimized_hlo.name
    else:
        m = re.match(r"\s*HloModule\s+([^\s,]+)", optimized_hlo)
        if m is None:
            return [], "not collected: the optimized module has no name"
        module_name = m.group(1)
    try:
        names = os.listdir(folder)
    except OSError as exc:
        return [], f"not collected: {exc.strerror}"
    if platform == "cuda":
        prefix = _module_prefix(folder, module_name, ".priority_fusion_dump.txt")
        if prefix is None:
            return [], "XLA wrote no priority-fusion record"
        dump = read_record(os.path.join(folder, f"{prefix}.priority_fusion_dump.txt"))
        if dump is None:
            return [], "the priority-fusion record could not be read (missing or too large)"
        after = sorted(n for n in names if n.startswith(prefix + ".") and ".after_priority-fusion." in n)
        after_text = read_record(os.path.join(folder, after[-1])) if after else None
        return gpu_decisions(dump, optimized_hlo, after_text)
    if platform in ("cpu", "tpu"):
        pages = sorted(n for n in names if n.endswith("_fusion.html") and f".{module_name}." in n)
        if not pages:
            return [], "XLA wrote no fusion visualization"
        decisions: list[FusionDecision] = []
        notes: list[str] = []
        after_text = None
        if platform == "cpu":
            prefix = _module_prefix(folder, module_name, ".txt")
            after = sorted(n for n in names if prefix and n.startswith(prefix + ".") and f".after_{CPU_PASS}." in n)
            after_text = read_record(os.path.join(folder, after[-1])) if after else None
        for page_name in pages:
            page = read_record(os.path.join(folder, page_name))
            if page is None:
                notes.append(f"{page_name} could not be read")
                continue
            found, note = visualization_decisions(
                page, optimized_hlo, after_text, pass_name=CPU_PASS if platform == "cpu" else TPU_PASS,
                source_file=CPU_SOURCE if platform == "cpu" else TPU_SOURCE, map_names=platform == "cpu")
            decisions.extend(found)
            notes.append(note)
        return decisions[:MAX_DECISIONS], "; ".join(notes)
    return [], f"no decision record is known for the platform {platform}"
