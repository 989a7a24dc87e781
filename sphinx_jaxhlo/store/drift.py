"""Drift: how a fresh report differs from the last one stored for the same example and target.

When the toolchain changes (a new jax, jaxlib, CUDA plugin or libtpu), the
build compares each fresh report with the stored one (a snapshot, or the
cache's last entry for the example) on the figures a reader's claims rest on:
temp memory, the memory the device holds (on a TPU the figure to act on,
:mod:`sphinx_jaxhlo.core.memory`: a release can move a TPU's HBM and leave temp
at 0 B), XLA's peak and the verdict (the reductions fused or not, or the compile
error).  A change of verdict, or of temp or of the device's memory by more than
the tolerance, is worth a ``jaxhlo.drift`` warning; every difference goes into
the build report's "changed since" table.

:func:`sphinx_jaxhlo.store.releases.compare_folders` does the same between
two folders of snapshots, one per release.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.sizes import format_bytes


def verdict(report: Report) -> str:
    """What the reductions came to, or the compile error: the word compared for drift."""
    if report.error is not None:
        return f"error {report.error.status}"
    reductions = report.deciding_reductions  # those too small to matter do not decide
    if not reductions:
        return "no reduction"
    n = len(reductions)
    unfused = sum(not r.fused for r in reductions)
    if unfused == 0:
        return "fused" if n == 1 else f"all {n} fused"
    if unfused == n:
        return "unfused" if n == 1 else f"all {n} unfused"
    return f"{unfused} of {n} unfused"


def versions_text(toolchain: Mapping[str, str]) -> str:
    """``jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.42``."""
    return ", ".join(f"{k} {v}" for k, v in sorted(toolchain.items())) or "unknown versions"


@dataclass
class Drift:
    """One example's (function, target) before and after."""

    function: str
    target: str
    versions_before: str
    versions_after: str
    temp_before: int | None
    temp_after: int | None
    peak_before: int | None
    peak_after: int | None
    #: What the device holds (:attr:`~sphinx_jaxhlo.core.memory.Memory.device_bytes`).
    device_before: int | None
    device_after: int | None
    verdict_before: str
    verdict_after: str
    #: The verdict changed, or temp or the device's memory moved by more than the tolerance.
    significant: bool

    @property
    def figures_moved(self) -> bool:
        """Whether a figure or the verdict differs (not the toolchain alone)."""
        return (self.temp_before, self.device_before, self.peak_before, self.verdict_before) != (
            self.temp_after, self.device_after, self.peak_after, self.verdict_after)

    @property
    def message(self) -> str:
        """``with_dot on gpu:h100 changed since jax 0.10.1: temp 50.4 MB -> 20.1 GB, ...``."""
        parts = []
        if self.temp_before != self.temp_after:
            parts.append(f"temp {_size(self.temp_before)} -> {_size(self.temp_after)}")
        if self.device_before != self.device_after:
            parts.append(f"device memory {_size(self.device_before)} -> {_size(self.device_after)}")
        if self.peak_before != self.peak_after:
            parts.append(f"peak {_size(self.peak_before)} -> {_size(self.peak_after)}")
        if self.verdict_before != self.verdict_after:
            parts.append(f"reductions {self.verdict_before} -> {self.verdict_after}")
        since = (f"since {self.versions_before} (now {self.versions_after})"
                 if self.versions_before != self.versions_after else f"since the stored report ({self.versions_after})")
        return f"{self.function} on {self.target} changed {since}: " + ("; ".join(parts) or "same figures")


def _size(value: int | None) -> str:
    return "not reported" if value is None else format_bytes(value)


def compare(before: Report, after: Report, toolchain_before: Mapping[str, str],
            toolchain_after: Mapping[str, str], tolerance: float) -> Drift | None:
    """The drift from ``before`` to ``after``, or ``None`` when the toolchain
    and the figures are all the same.

    :param tolerance: a change of temp or of the device's memory counts when it exceeds
        this fraction of the larger of the two figures (0: any change counts).
    """
    def figures(report: Report) -> tuple[int | None, int | None, int | None]:
        if report.error:
            return None, None, None
        return report.memory.temp_bytes, report.memory.device_bytes, report.memory.peak_bytes

    (temp_before, device_before, peak_before), (temp_after, device_after, peak_after) = figures(before), figures(after)
    verdict_before, verdict_after = verdict(before), verdict(after)
    drift = Drift(after.function, after.target, versions_text(toolchain_before), versions_text(toolchain_after),
                  temp_before, temp_after, peak_before, peak_after, device_before, device_after, verdict_before,
                  verdict_after, verdict_before != verdict_after)
    if not drift.figures_moved and dict(toolchain_before) == dict(toolchain_after):
        return None
    for old, new in ((temp_before, temp_after), (device_before, device_after)):
        if old is not None and new is not None:
            drift.significant |= abs(new - old) > tolerance * max(old, new)
        elif old != new:
            drift.significant = True
    return drift


# -- between two releases: two folders of snapshots ----------------------------------------
