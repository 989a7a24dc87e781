"""Each snapshot read and analysed once: in this process, and beside the report cache for later builds.

A snapshot keeps what the compiler said; the analysis (fusions, materialized
buffers, reductions, collectives, the quotes of the compiler's decisions) is
derived again from its HLO whenever it is loaded
(:func:`sphinx_jaxhlo.store.snapshots.reanalyze`), so that a better analysis
applies to old snapshots.  That is most of what a build from snapshots costs;
here it is paid once per snapshot and version of the analysis code:

- :func:`read` reads a snapshot once per process: reading the same slot again
  (the forecast, then the page; the page, then the drift page) gives the same
  object while its files are the same (inode, size, modification and change time
  of the JSON and of each text).  The readers that ``-j`` forks inherit what the main process read.
- :func:`report` analyses it once.  The analysis is kept in this process, and
  in the report cache (a folder or an fsspec URL, :mod:`sphinx_jaxhlo.store.cache`)
  as ``analyses/<key[:2]>/<key>.analysis`` (JSON), where the key is a digest of the
  snapshot (:attr:`~sphinx_jaxhlo.store.snapshots.Stored.digest`: its JSON,
  which holds the digests of its texts), of the example's file name (source
  lines are matched by it) and of the analysis code
  (:func:`analysis_fingerprint`: every module this one imports, read from the
  source, as :func:`~sphinx_jaxhlo.core.request.code_fingerprint` does for
  reports).  A change to the analysis gives new keys; an unchanged site rebuilt
  with ``-E`` analyses nothing.  An analysis without what is live at the peak (for
  a page that does not need it) has keys of its own.  The entry also says whether the snapshot's
  JSON is what this code would write for it (its summary current), which a
  writing build would otherwise work out again for every snapshot.
- :func:`compared` keeps the comparison of two snapshots of one slot (the drift
  page's, :func:`sphinx_jaxhlo.store.releases.compare_folders`) as
  ``drift/<key[:2]>/<key>.drift``, keyed by both snapshots' digests, the
  tolerance and the analysis code: an unchanged drift page reads its snapshots
  and one entry per slot, and analyses nothing.

An entry is data: it is checked like a report before use, and one that does
not check is made again.  What the cache keeps is what the analysis gives, so
a build gives the same pages with the cache, without it, and with ``-j``
(readers write their entries atomically, any number at once).  Nothing here
imports jax or Sphinx.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import pickle
from collections import OrderedDict
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.core.report import Report
from sphinx_jaxhlo.core.request import code_digest
from sphinx_jaxhlo.store import snapshots
from sphinx_jaxhlo.store.cache import InvalidReport, ReportCache, checked_report
from sphinx_jaxhlo.store.drift import Drift, compare

__all__ = ["analysis_fingerprint", "compared", "forget", "read", "report", "stamp"]

#: What the analysis of a snapshot depends on besides the snapshot: this
#: module, every module it imports at any depth, and the GPU descriptions.
ANALYSIS_CODE = ((__name__,), ("gpu_targets",))
#: Version of the entries' form.
FORMAT = 1
#: The most this process keeps of snapshots read and of analyses (bytes, each;
#: an analysis is kept pickled, loaded at each use: no objects for the
#: garbage collector to walk).
MEMORY_BYTES = 128 * 2**20


@functools.cache
def analysis_fingerprint() -> str:
    """A digest of the code that analyses a snapshot (derived from the imports, not from a list)."""
    return code_digest(ANALYSIS_CODE)


class _Kept:
    """What this process keeps, least recently used first, within a size."""

    def __init__(self) -> None:
        self.items: OrderedDict[str, tuple[Any, Any, int]] = OrderedDict()
        self.size = 0

    def get(self, key: str, check: Any = None) -> Any:
        item = self.items.get(key)
        if item is None or item[0] != check:
            return None
        self.items.move_to_end(key)
        return item[1]

    def put(self, key: str, value: Any, size: int, check: Any = None) -> None:
        old = self.items.pop(key, None)
        if old is not None:
            self.size -= old[2]
        if size > MEMORY_BYTES // 4:
            return  # one huge module is not worth pushing everything else out
        self.items[key] = (check, value, size)
        self.size += size
        while self.size > MEMORY_BYTES:
            _, (_, _, dropped) = self.items.popitem(last=False)
            self.size -= dropped

    def clear(self) -> None:
        self.items.clear()
        self.size = 0


_READ = _Kept()
_ANALYSED = _Kept()
_COMPARED = _Kept()


def forget() -> None:
    """Drop what this process keeps (tests; a long session that wants its memory back)."""
    for kept in (_READ, _ANALYSED, _COMPARED):
        kept.clear()


# -- reading -------------------------------------------------------------------------------------

def _files(json_path: Path) -> tuple[Any, ...]:
    """What says the slot's files are the same (:func:`sphinx_jaxhlo.store.snapshots.file_state`)."""
    return snapshots.file_state(json_path)


def read(json_path: Path) -> snapshots.Stored | None:
    """:func:`sphinx_jaxhlo.store.snapshots.read`, once per process while the slot's files stay the same.

    :raises SnapshotError: as that function does (a damaged snapshot is read again each time, and refused).
    """
    return _read(json_path, _files(json_path))


def _read(json_path: Path, files: tuple[Any, ...]) -> snapshots.Stored | None:
    if files[0] is None:
        return snapshots.read(json_path)
    key = str(json_path)
    stored = _READ.get(key, files)
    if stored is None:
        stored = snapshots.read(json_path)
        if stored is not None:
            _READ.put(key, stored, len(stored.text) + sum(len(t) for t in stored.snapshot.texts.values()), files)
    return stored


def stamp(json_path: Path) -> snapshots.SlotStamp:
    """What a slot holds now (:class:`~sphinx_jaxhlo.store.snapshots.SlotStamp`): the state of
    its files, and the digest of the snapshot this process keeps for that state (read again
    only when the files moved since, as after a build wrote it)."""
    files = _files(json_path)
    try:
        stored = _read(json_path, files)
    except snapshots.SnapshotError:
        stored = None
    return snapshots.SlotStamp(files, None if stored is None else stored.digest)


# -- analysing -----------------------------------------------------------------------------------

def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join((*parts, analysis_fingerprint())).encode("utf-8")).hexdigest()


@functools.cache
def _derived() -> tuple[str, ...]:
    """The report's fields that the analysis fills."""
    return tuple(sorted(snapshots.derived_fields() & {f.name for f in dataclasses.fields(Report)}))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def report(stored: snapshots.Stored, source: str, source_name: str,
           cache: ReportCache | None = None, *, judge: bool = True, peak: bool = True) -> tuple[Report, bool | None]:
    """The report of a snapshot with its analysis, analysed once per snapshot and analysis code.

    :param source: the example's source (the report's ``source``; the caller matched its digest).
    :param source_name: the example's file name.
    :param cache: where analyses are kept between builds (``None``: this process only).
    :param judge: say whether the snapshot's JSON is current (a writing build's
        question; the JSON written again to compare, a tenth of an analysis).
        Without, the answer is ``None`` unless known already.
    :param peak: with what is live at the peak.  Without (a page that neither shows it
        nor checks a claim about it), ``live_at_peak`` is ``None`` unless an analysis
        with it is at hand; such an analysis is kept under a key of its own, so that a
        caller that asks for the peak never gets one without.
    :return: the report (a new object at each call) and whether the snapshot's
        JSON is what this code would write for it.
    :raises InvalidReport: when the stored facts are not those of a report.
    """
    key = _key("analysis", stored.digest, source_name)
    kept = _ANALYSED.get(key)
    if kept is None and not peak:  # an analysis with the peak would do as well
        key = _key("analysis without the peak", stored.digest, source_name)
        kept = _ANALYSED.get(key)
    if kept is not None:
        return _kept_report(stored, source, source_name, key, kept, judge)
    name = f"analyses/{key[:2]}/{key}.analysis"
    data = cache.read_entry(name) if cache is not None else None
    entry = _entry(data)
    if entry is not None:
        try:
            made = _report(stored, source, entry)
        except InvalidReport as exc:
            assert cache is not None
            cache.problems.append(f"cache entry {name} is not a valid analysis ({exc}): analysed again")
        else:
            _keep(key, made, entry[1])
            return made, entry[1]
    fresh = stored.snapshot.report(source, source_name, peak=peak)  # the analysis itself
    current = _is_current(stored, fresh) if judge or cache is not None else None
    _keep(key, fresh, current)  # what a later use reads back: the same report (tests/test_analyses.py)
    if cache is not None:
        fields = {field: _plain(getattr(fresh, field)) for field in _derived()}
        cache.write_entry(name, json.dumps({"analysis": FORMAT, "fields": fields, "current": current},
                                           sort_keys=True).encode("utf-8"))
    return fresh, current


def _kept_report(stored: snapshots.Stored, source: str, source_name: str, key: str, kept: bytes,
                 judge: bool) -> tuple[Report, bool | None]:
    """:func:`report` from the analysis this process keeps (``kept``, under ``key``)."""
    fields, current = pickle.loads(kept)
    made = stored.snapshot.report(source, source_name, analyse=False)
    for field, value in fields.items():
        setattr(made, field, value)
    if current is None and judge:
        current = _is_current(stored, made)
        _keep(key, made, current)
    return made, current


def _is_current(stored: snapshots.Stored, analysed: Report) -> bool:
    return stored.text == stored.snapshot.document(analysed)


def _keep(key: str, analysed: Report, current: bool | None) -> None:
    """Keep the analysis in this process: its fields pickled (bytes, nothing for
    the garbage collector to walk; a copy for each later caller), and what is
    known of ``current``."""
    data = pickle.dumps(({field: getattr(analysed, field) for field in _derived()}, current),
                        protocol=pickle.HIGHEST_PROTOCOL)
    _ANALYSED.put(key, data, len(data))


def _decoded(data: bytes | None) -> Any:
    """A cache entry's JSON; ``None`` for a missing or damaged one (it is made again)."""
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _entry(data: bytes | None) -> tuple[dict[str, Any], bool] | None:
    doc = _decoded(data)
    if data is None or not (isinstance(doc, dict) and doc.get("analysis") == FORMAT
                            and isinstance(doc.get("current"), bool) and isinstance(doc.get("fields"), dict)
                            and set(doc["fields"]) == set(_derived())):
        return None
    return doc["fields"], doc["current"]


def _report(stored: snapshots.Stored, source: str, entry: tuple[dict[str, Any], bool]) -> Report:
    data = stored.snapshot.data(source)
    data.update(entry[0])
    made = checked_report(data, lenient=True)
    made.memory.settle(made.target)  # as Snapshot.report does: the memory rules are not the analysis
    return made


# -- comparing two snapshots of one slot ---------------------------------------------------------

#: The fields of a :class:`~sphinx_jaxhlo.store.drift.Drift`, with the types an entry must hold.
_DRIFT_FIELDS = {f.name: f.type for f in dataclasses.fields(Drift)}


def compared(old: snapshots.Stored, new: snapshots.Stored, source_name: str, tolerance: float,
             cache: ReportCache | None = None) -> tuple[Drift | None, str]:
    """:func:`sphinx_jaxhlo.store.drift.compare` of the two snapshots' reports (made with their
    toolchains), once per pair of snapshots, tolerance and analysis code.

    :return: the drift (``None``: the same figures and toolchain) and the
        target of the older report.
    :raises InvalidReport: when the stored facts of either are not those of a report.
    """
    key = _key("drift", old.digest, new.digest, source_name, repr(float(tolerance)))
    kept = _COMPARED.get(key)
    if kept is not None:
        return kept
    name = f"drift/{key[:2]}/{key}.drift"
    if cache is not None:
        found = _drift_entry(cache.read_entry(name))
        if found is not None:
            _COMPARED.put(key, found, 256)
            return found
    before, _ = report(old, "", source_name, cache, judge=False)
    after, _ = report(new, "", source_name, cache, judge=False)
    found = (compare(before, after, old.snapshot.toolchain, new.snapshot.toolchain, tolerance), before.target)
    _COMPARED.put(key, found, 256)
    if cache is not None:
        drift = None if found[0] is None else dataclasses.asdict(found[0])
        cache.write_entry(name, json.dumps({"drift": FORMAT, "value": drift, "target": found[1]},
                                           sort_keys=True).encode("utf-8"))
    return found


def _drift_entry(data: bytes | None) -> tuple[Drift | None, str] | None:
    doc = _decoded(data)
    if not (isinstance(doc, dict) and doc.get("drift") == FORMAT and isinstance(doc.get("target"), str)):
        return None
    value = doc.get("value")
    if value is None:
        return None, doc["target"]
    if not (isinstance(value, dict) and set(value) == set(_DRIFT_FIELDS)):
        return None
    for field, hint in _DRIFT_FIELDS.items():
        v = value[field]
        ok = (isinstance(v, bool) if hint == "bool" else isinstance(v, str) if hint == "str"
              else v is None or (isinstance(v, int) and not isinstance(v, bool)))
        if not ok:
            return None
    return Drift(**value), doc["target"]
