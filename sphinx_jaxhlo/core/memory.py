"""The memory figures of a compile, the one a reader should act on, and where its buffers live.

:class:`Memory` holds what ``compiled.memory_analysis()`` says and the two figures derived
from it, the device memory and the peak, by the rules of :meth:`Memory.settle`; the memory
spaces (:data:`MEMORY_SPACE_NAMES`) say where a buffer lives: the device's memory (a TPU's
HBM), a TPU chip's own memory, the host's.  Plain data; part of every report
(:mod:`sphinx_jaxhlo.core.report`).

**The figure to act on** is decided here, once (:meth:`Memory.acting`,
:func:`acting_figure`), for everything that shows or compares one memory figure: the
variants table and chart, a sweep's map and its flips, drift between toolchains and
releases, the build report.  The rules:

- On a TPU, what the device holds (``device``: arguments, outputs, temp and code, the HBM
  the chip needs): a TPU's temp is 0 B for most programs, since the compiler keeps its
  intermediates in the chip's own memory, and XLA's peak counts those on-chip buffers and
  leaves the code out (:meth:`Memory.settle`).
- Elsewhere, temp (``temp``): the memory the compiled program adds to its arguments and
  outputs, the figure its fusion decisions move.
- Reports compared with each other on one target (an example's variants, a sweep's points)
  are compared on one figure: the device's only when every one of them has it, else temp.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

#: Memory spaces a layout names (``S(1)`` in ``{1,0:T(8,128)S(1)}``), as the TPU compiler uses
#: them (libtpu 0.0.42, checked on a TPU v5e chip): none (0) is the device's memory, the TPU's
#: HBM; 1 is the chip's own memory, where the compiler's memory-space assignment keeps buffers
#: between kernels (never in HBM: a v5e chip held 0.46 MB of HBM for an RBF matvec whose 98.4 MB
#: table is stored in it); 2 and 4 hold the flags that order the chip's DMA transfers; 5 is the
#: host's memory (``device_put`` to host, offloading); 6 is the scalar unit's memory (loop
#: counters, scalar arguments).  GPU and CPU layouts name none (checked on the docs' H100 and
#: CPU modules: every buffer in the device's memory).
DEVICE_MEMORY_SPACE = 0
#: The host's memory space (``S(5)``, XLA's ``Layout::kHostMemorySpace``).
HOST_MEMORY_SPACE = 5
#: The TPU's scalar memory (``S(6)``).
TPU_SCALAR_MEMORY_SPACE = 6
#: Each memory space's name in a reader's words (a space not listed: ``memory space N``).
MEMORY_SPACE_NAMES = {DEVICE_MEMORY_SPACE: "device memory", 1: "on-chip", 2: "on-chip flags", 4: "on-chip flags",
                      HOST_MEMORY_SPACE: "host", TPU_SCALAR_MEMORY_SPACE: "on-chip scalar"}


def memory_space_name(space: int, target: str = "") -> str:
    """Where a buffer of memory space ``space`` lives: ``HBM`` (a TPU's device memory),
    ``device memory`` (a GPU's), ``host memory`` (the CPU's own), ``on-chip``, ``host``...

    :param target: the target's name (``tpu:v5e``), which names its device memory.
    """
    if space == DEVICE_MEMORY_SPACE:
        platform = target.split(":", 1)[0]
        return {"tpu": "HBM", "cpu": "host memory"}.get(platform, "device memory")
    return MEMORY_SPACE_NAMES.get(space, f"memory space {space}")


@dataclass
class Memory:
    """Figures from ``compiled.memory_analysis()``, in bytes, and the two derived
    from them (:meth:`settle`).

    ``None`` means the backend did not report the figure.
    """

    argument_bytes: int | None = None
    output_bytes: int | None = None
    alias_bytes: int | None = None
    temp_bytes: int | None = None
    generated_code_bytes: int | None = None
    #: XLA's ``peak_memory_in_bytes``, or where it leaves the temporaries out (the CPU) or is
    #: missing, ``argument + output + temp - alias`` (then :attr:`peak_is_estimate`); the rule
    #: is :meth:`settle`'s.  What it counts differs by target: see :meth:`settle`.
    peak_bytes: int | None = None
    peak_is_estimate: bool = False
    #: What the device holds while the program runs: ``argument + output + temp +
    #: generated code - alias`` (see :meth:`settle`); ``None`` when a part is not reported.
    device_bytes: int | None = None

    def settle(self, platform: str) -> None:
        """Derive :attr:`device_bytes` and make :attr:`peak_bytes` the figure each target's
        XLA means by it.  Applied when a report is made and when a stored one is read again,
        so a snapshot written before these rules gets them too.

        **Device memory**, every target: the arguments, the outputs, XLA's temporaries and the
        generated code, less what outputs share with donated arguments.  That is what the
        runtime allocates for the program: on a TPU v5e chip, ``bytes_in_use`` (arguments,
        outputs, code) and ``bytes_reserved`` (temp) grew by this within 2 % (or 1 MiB) for
        155 of the 156 docs programs that ran (``docs/_hardware/tpu-v5e.json``; the other was
        given an argument jit drops).  On the CPU it is host memory; the deviceless GPU
        compile reports no generated code.

        **Peak**, by target:

        - CPU: XLA's ``peak_memory_in_bytes`` comes from the buffer assignment's heap traces
          (``PjRtCpuExecutable::GetCompiledMemoryStats``, ``xla/pjrt/cpu/cpu_client.cc``),
          which hold the arguments and the output but not the temporaries, so a nonzero temp
          makes the peak ``argument + output + temp - alias``: an upper bound, marked as an
          estimate.
        - GPU: XLA's figure, which is that bound to within a few bytes; the bound stands in
          where XLA's is missing or smaller than the temporaries.
        - TPU: XLA's figure, kept as it is even below the temporaries: it counts the buffers
          the compiler keeps in the chip's own memory (``S(1)``) besides HBM, and leaves the
          code out, so it is not the HBM the chip needs (it was more than 2 % off what the chip
          held for 109 of 156 docs programs, more than 2x for 32); :attr:`device_bytes` is.
          Where it is below temp, it was right: a chunked N-body gradient's XLA peak of
          8,120,076,288 B against a temp of 8,199,418,880 B, and the chip reserved
          8,118,910,976 B.  Only a missing figure is replaced by the bound.

        :param platform: ``cpu``, ``cuda`` or ``tpu`` (a target's name works: ``gpu:h100``).
        """
        parts = (self.argument_bytes, self.output_bytes, self.temp_bytes)
        if None in parts:
            return
        bound = sum(p or 0 for p in parts) - (self.alias_bytes or 0)
        self.device_bytes = bound + (self.generated_code_bytes or 0)
        temp = self.temp_bytes or 0
        kind = platform.split(":", 1)[0]
        if kind == "tpu":
            replace = self.peak_bytes is None
        else:
            leaves_temp_out = kind == "cpu" and temp > 0
            replace = (self.peak_bytes is None or self.peak_bytes < temp
                       or (leaves_temp_out and not self.peak_is_estimate))
        if replace:
            self.peak_bytes, self.peak_is_estimate = bound, True


    def figure(self, name: str) -> int | None:
        """A figure by the name :data:`ACTING_FIGURES` gives it (``device``, ``temp``)."""
        return self.device_bytes if name == "device" else self.temp_bytes

    def acting(self, target: str) -> str:
        """The name of the figure to act on for this report alone (see the module's rules):
        ``device`` on a TPU when it is reported, else ``temp``.

        :param target: the target's name (``tpu:v5e``) or platform.
        """
        return "device" if target.split(":", 1)[0].startswith("tpu") and self.device_bytes is not None else "temp"


#: The figures a reader may be told to act on, by name, and what each is called.
ACTING_FIGURES = {"device": "device memory held", "temp": "temp"}


def acting_figure(target: str, memories: Iterable[Memory]) -> str:
    """The one figure to act on for reports compared with each other on ``target`` (an example's
    variants, a sweep's points): the device's when every one of them acts on it, else temp
    (see the module's rules); temp when there is none."""
    names = {memory.acting(target) for memory in memories}
    return "device" if names == {"device"} else "temp"


class Measured(NamedTuple):
    """What a real device held and how long it ran, for one example, from a committed
    hardware record (:mod:`sphinx_jaxhlo.store.hardware`): shown beside the deviceless figures."""

    #: The device as jax names it (``TPU v5 lite``) and the day it was measured.
    device: str
    date: str
    #: What the program held on it (``None`` when the compile failed there), and the median
    #: of its warm runs in milliseconds.
    held_bytes: int | None
    warm_ms: float | None
    #: The compile's status when it failed on the device (``RESOURCE_EXHAUSTED``), else ``""``.
    error: str = ""


#: :attr:`LiveBuffer.kind` values: what the runtime holds a buffer for.  ``argument``, ``output``
#: and ``constant`` buffers are held for the whole run (the runtime allocates an output before the
#: program starts); a ``temp`` is a piece of the block of temporaries XLA reserves, held while its
#: value is live; ``generated code`` is the program itself (a TPU keeps it in HBM).
LIVE_KINDS = ("argument", "output", "constant", "temp", "generated code")


@dataclass
class LiveBuffer:
    """One buffer live at the peak (:class:`LiveAtPeak`), named as the findings name a buffer."""

    #: The value as XLA names it: its instruction, and the tuple element for an element of a
    #: tuple-shaped result (``copy-start{0}``); ``""`` for the generated code.
    name: str
    #: Its shape without layout (``f32[20000,10000]``); ``""`` for the generated code.
    shape: str
    #: What it takes there (a TPU's padded tiles included).
    bytes: int
    #: One of :data:`LIVE_KINDS`.
    kind: str
    #: The instruction that computes the value (through a loop's state and views: the kernel
    #: that writes it), the JAX operation it was traced from, and its lines in the example.
    producer: str = ""
    producer_op: str | None = None
    source_lines: list[int] = field(default_factory=list)
    computation: str = ""
    #: Its memory space (:data:`MEMORY_SPACE_NAMES`).
    memory_space: int = DEVICE_MEMORY_SPACE
    #: The steps of the program order it takes memory: ``[first, last]``, both included (the
    #: whole program for arguments, outputs, constants and code).
    live: list[int] = field(default_factory=list)
    #: What else a reader needs: ``not yet written`` (an output's buffer, held before its value
    #: is computed), ``argument data`` (a copy or prefetch of an argument), ``loop state``...
    note: str = ""


@dataclass
class LiveAtPeak:
    """What is live at a program's peak, and the memory in use across its program order:
    computed from XLA's buffer assignment and live ranges by :mod:`sphinx_jaxhlo.hlo.peak`,
    whose text states the rules."""

    #: The step of the program order where the most memory is in use (of the first run of such
    #: steps, the last),
    #: and the number of steps (the last is the program's end).
    step: int
    steps: int
    #: The kernel at that step (where the step's own instruction only moves or views data, the
    #: nearest kernel after it), its JAX operation and its example lines.
    instruction: str = ""
    instruction_op: str | None = None
    source_lines: list[int] = field(default_factory=list)
    #: Bytes in use at the peak in the memory the device figure counts (a TPU's HBM; all the
    #: device's memory elsewhere), generated code included.
    bytes: int = 0
    #: The buffers in that memory at the peak, largest first, those of under 1 % of it folded
    #: into :attr:`others` (their number) and :attr:`others_bytes`.
    buffers: list[LiveBuffer] = field(default_factory=list)
    others: int = 0
    others_bytes: int = 0
    #: Buffers live at the peak in memory the device figure does not count (a TPU chip's own
    #: memory, the host's), largest first, the rest folded likewise.
    elsewhere: list[LiveBuffer] = field(default_factory=list)
    elsewhere_others: int = 0
    elsewhere_others_bytes: int = 0
    #: What is held for the whole run in counted memory: the arguments, outputs, constants and
    #: generated code (the part of every step's use that no step changes).
    held_bytes: int = 0
    #: The constants among them (XLA's argument, output and temp figures leave them out).
    constant_bytes: int = 0
    #: The temporaries live at the peak, and the block XLA reserves for them (its sizes of the
    #: preallocated temporaries in counted memory): the difference is what does not pack.
    temp_live_bytes: int = 0
    temp_reserved_bytes: int = 0
    #: The most in use at once counting every memory space but the host's, without the code:
    #: what XLA's peak counts on a TPU.
    all_spaces_peak_bytes: int = 0
    #: Memory in use across the program order, ``[[step, bytes], ...]`` at each step where it
    #: changes (counted as :attr:`bytes` is).
    timeline: list[list[int]] = field(default_factory=list)
    #: How the total compares with the report's device figure and XLA's peak, in words.
    note: str = ""

    @property
    def top(self) -> LiveBuffer | None:
        """The largest buffer in counted memory at the peak (never the generated code, unless
        nothing else is live)."""
        data = [b for b in self.buffers if b.kind != "generated code"]
        return data[0] if data else (self.buffers[0] if self.buffers else None)
