"""Measurements on a real device: the committed record of the hardware check.

``tools/hardware_check.py`` compiles and runs every docs example of a target on
the device itself, when one is at hand, and writes one record per device
(``docs/_hardware/tpu-v5e.json``); nothing in a build or in CI needs the device.
This module reads a record, checks its form, and says for a snapshot whether the
record measured it as it is now: a measurement belongs to the snapshot's slot and
to the digest of its optimized HLO when it was measured, and a snapshot whose HLO
changed since is *stale* (measured, but not this program).

What one example's entry holds (:class:`Measurement`): the device's own
``memory_analysis()`` of its compile (every field), whether that and the optimized
HLO equal the snapshot's, the compile's error if it failed, what the device held
while the program ran (``bytes_in_use`` and ``bytes_reserved``, before and after)
and the median of its warm run times.  Nothing here imports jax or Sphinx.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Version of the record's form.
FORMAT = 1

#: ``memory_analysis()`` fields each measured compile must have.
MEMORY_FIELDS = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
                 "generated_code_size_in_bytes", "peak_memory_in_bytes")


def program_digest(identity: Mapping[str, Any], hlo: str) -> str:
    """What a measurement is of: a digest of a snapshot's identity (the example, its
    arguments, the target) and of its optimized HLO (empty for a compile that failed)."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":")) + "\n" + hlo
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class RecordError(ValueError):
    """A record that cannot be read: not JSON, or not of this form."""


@dataclass(frozen=True)
class Measurement:
    """One docs example as the device compiled and ran it."""

    #: The snapshot's path under the snapshot folder: ``guide/remat/x.grad_scan.tpu-v5e.json``.
    slot: str
    #: :func:`program_digest` of the snapshot when it was measured.
    program_sha256: str
    #: The device's ``memory_analysis()`` of its own compile (empty for a failed compile).
    memory_analysis: Mapping[str, int] = field(default_factory=dict)
    #: Whether those figures, and the optimized HLO once names, metadata, sharding
    #: annotations and the order of backend_config keys are set aside, equal the snapshot's.
    same_figures: bool | None = None
    same_hlo: bool | None = None
    #: The compile's status when it failed on the device (``RESOURCE_EXHAUSTED``), else ``""``.
    error: str = ""
    #: Whether the snapshot predicted that same failure (or success).
    same_error: bool = True
    #: What the device's ``bytes_in_use`` and ``bytes_reserved`` grew by from before the
    #: program's arguments existed to after its run, its outputs held.
    held_bytes: int | None = None
    #: Arguments the run was given that the compiled program dropped (jit's ``keep_unused``
    #: is off): in :attr:`held_bytes`, not in the program's own figures.
    unused_argument_bytes: int = 0
    #: Median wall time of the warm runs, in milliseconds, and how many there were.
    warm_ms: float | None = None
    warm_runs: int = 0
    #: The day this example was measured (ISO date; ``""``: the record's date).
    date: str = ""
    #: What XLA's buffer assignment says is live at the program's peak (arguments, outputs,
    #: code and the temporaries live then), from the deviceless compile: compared with
    #: :attr:`program_bytes` (``None``: not computed for this example).
    live_bytes: int | None = None

    @property
    def program_bytes(self) -> int | None:
        """What the program itself held: :attr:`held_bytes` less the unused arguments."""
        return None if self.held_bytes is None else self.held_bytes - self.unused_argument_bytes


@dataclass(frozen=True)
class Record:
    """One device's record: where and with what it was measured, and each example."""

    target: str
    #: The device as jax names it (``TPU v5 lite``).
    device: str
    #: The day it was measured (ISO date).
    date: str
    versions: Mapping[str, str]
    measurements: Mapping[str, Measurement]
    path: Path | None = None

    def measured_on(self, measurement: Measurement) -> str:
        """The day ``measurement`` was made (the record's date for an entry that has none)."""
        return measurement.date or self.date

    def measurement(self, slot: str, digest: str | None) -> Measurement | None:
        """The measurement of a snapshot as it is now: ``None`` when the record has none for
        ``slot``, or when the snapshot's program (``digest``, :func:`program_digest`) changed
        since it was measured."""
        found = self.measurements.get(slot)
        if found is None or digest is None or found.program_sha256 != digest:
            return None
        return found

    def stale(self, current: Mapping[str, str | None]) -> list[str]:
        """The slots measured whose snapshot is gone or changed since.

        :param current: each measured slot's :func:`program_digest` now (``None``: no snapshot).
        """
        return sorted(slot for slot, m in self.measurements.items()
                      if current.get(slot) != m.program_sha256)


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{what}: expected an integer, found {value!r}")
    return value


def _measurement(entry: Any, where: str) -> Measurement:
    if not isinstance(entry, dict):
        raise RecordError(f"{where}: not an object")
    slot = entry.get("slot")
    digest = entry.get("program_sha256")
    if not isinstance(slot, str) or not slot.endswith(".json") or not isinstance(digest, str) or len(digest) != 64:
        raise RecordError(f"{where}: needs its slot (a snapshot's .json path) and the program's digest")
    where = f"{where} ({slot})"
    error = entry.get("error") or {}
    if not isinstance(error, dict) or not isinstance(error.get("status", ""), str):
        raise RecordError(f"{where}: error must be an object with a status")
    analysis = entry.get("memory_analysis") or {}
    if not isinstance(analysis, dict):
        raise RecordError(f"{where}: memory_analysis must be an object")
    figures = {k: _int(v, f"{where}: memory_analysis.{k}") for k, v in analysis.items()}
    if not error:
        missing = [k for k in MEMORY_FIELDS if k not in figures]
        if missing:
            raise RecordError(f"{where}: memory_analysis lacks {', '.join(missing)}")
    held = entry.get("held_bytes")
    if not error and held is None and not entry.get("run_error"):
        raise RecordError(f"{where}: a compile that succeeded needs held_bytes (or the run's error)")
    warm = entry.get("warm_ms")
    if warm is not None and (isinstance(warm, bool) or not isinstance(warm, (int, float)) or warm < 0):
        raise RecordError(f"{where}: warm_ms must be a duration in milliseconds")
    for key in ("same_figures", "same_hlo", "same_error"):
        if entry.get(key) is not None and not isinstance(entry.get(key), bool):
            raise RecordError(f"{where}: {key} must be true or false")
    date = entry.get("date", "")
    if not isinstance(date, str) or (date and len(date) != 10):
        raise RecordError(f"{where}: date must be YYYY-MM-DD")
    live = entry.get("live_bytes")
    return Measurement(
        slot=slot, program_sha256=digest, memory_analysis=figures,
        same_figures=entry.get("same_figures"), same_hlo=entry.get("same_hlo"),
        error=str(error.get("status", "")), same_error=entry.get("same_error", True) is not False,
        held_bytes=None if held is None else _int(held, f"{where}: held_bytes"),
        unused_argument_bytes=_int(entry.get("unused_argument_bytes", 0), f"{where}: unused_argument_bytes"),
        warm_ms=None if warm is None else float(warm), warm_runs=_int(entry.get("warm_runs", 0), f"{where}: warm_runs"),
        date=date, live_bytes=None if live is None else _int(live, f"{where}: live_bytes"))


def parse_record(data: Any, path: Path | None = None) -> Record:
    """A record from its JSON form.

    :raises RecordError: naming what is wrong.
    """
    if not isinstance(data, dict) or data.get("hardware_record") != FORMAT:
        found = data.get("hardware_record") if isinstance(data, dict) else None
        raise RecordError(f"not a hardware record of form {FORMAT} (found {found!r})")
    device = data.get("device")
    target, date, versions = data.get("target"), data.get("date"), data.get("versions")
    if not isinstance(target, str) or not isinstance(device, dict) or not isinstance(device.get("kind"), str):
        raise RecordError("target and device.kind must be given")
    if not isinstance(date, str) or len(date) != 10 or not isinstance(versions, dict):
        raise RecordError("date (YYYY-MM-DD) and versions must be given")
    examples = data.get("examples")
    if not isinstance(examples, list) or not examples:
        raise RecordError("examples must be a list of measurements")
    measurements: dict[str, Measurement] = {}
    for i, entry in enumerate(examples):
        m = _measurement(entry, f"examples[{i}]")
        if m.slot in measurements:
            raise RecordError(f"examples[{i}]: {m.slot} measured twice")
        measurements[m.slot] = m
    return Record(target, device["kind"], date, {str(k): str(v) for k, v in versions.items()}, measurements, path)


def read_record(path: Path) -> Record:
    """The record in a file.

    :raises RecordError: when it cannot be read or is not of this form.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordError(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path.name} is not JSON: {exc}") from exc
    return parse_record(data, path)


def read_records(folder: Path) -> tuple[dict[str, Record], list[str]]:
    """Every record in a folder (``*.json``), by target, and why any could not be read."""
    records: dict[str, Record] = {}
    problems: list[str] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = read_record(path)
        except RecordError as exc:
            problems.append(f"{path.name}: {exc}")
            continue
        first = records.get(record.target)
        if first is not None:
            problems.append(f"{path.name}: a second record of {record.target} (the first: "
                            f"{first.path.name if first.path else '?'})")
            continue
        records[record.target] = record
    return records, problems
