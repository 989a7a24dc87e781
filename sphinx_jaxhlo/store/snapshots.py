"""Snapshots: one reviewable JSON report per example, function and target, committed with the docs.

With ``jaxhlo_snapshot_dir`` set, each (example, function, target) has a slot
``<dir>/<document>/<example>.<function>.<target>.json``: the example is named by
its ``:name:`` or by its place in the document (``example-2``), a target's
colon is written as a dash (``gpu-h100``).  Beside the JSON, ``<slot>.hlo.gz``
holds the optimized HLO, ``<slot>.buffer_assignment.gz`` the record of XLA's buffer
assignment and live ranges (:mod:`sphinx_jaxhlo.hlo.buffer_assignment`; absent from
snapshots made before it was collected: they load, with no live list), and
``.stablehlo.gz``, ``.jaxpr.gz`` the texts the example shows, each gzip-compressed
without a timestamp, so the same text always gives the same bytes.

The JSON (sorted keys, one key per line) holds what the compiler said and
what it was asked, never what this package derived from it:

``identity``
    what the report answers: a digest of the example's source, its file
    name, the function, ``:args:``, ``:static:``, XLA flags, the extra texts
    asked for, the target and a digest of its description.  A snapshot is
    used only for exactly this request.
``toolchain``
    the versions that compiled it: jax, jaxlib and the target's own compiler
    (the CUDA plugin, libtpu), and ``XLA_FLAGS`` when set.
``facts``
    the report's own figures: memory and cost analyses, the compile error if
    any, the target's description, and the compiler's record of the fusions
    it refused (``fusion_decisions``, see :mod:`sphinx_jaxhlo.hlo.decisions.quotes`;
    absent from snapshots made before it was collected).
``texts``
    the SHA-256 and size of each compressed text beside the JSON.
``summary``
    temp, peak, the device memory, the reductions' verdict and the largest materialized buffer,
    for a reviewer reading a pull request.  Never read back.

Fusions, materialized buffers and reductions are derived again from the
stored HLO by :func:`sphinx_jaxhlo.hlo.fusion.analyze_module` whenever a
snapshot is loaded (what is live at the peak from the stored buffer assignment, by
:mod:`sphinx_jaxhlo.hlo.peak`, and the collectives by
:func:`sphinx_jaxhlo.hlo.collectives.analyze_collectives`, over the stored
mesh), so a better analysis applies to old snapshots without compiling
anything; the stored fusion decisions are then tied to the findings again
(:func:`sphinx_jaxhlo.hlo.decisions.quotes.attach_quotes`).  Nothing here imports jax or Sphinx.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.core.report import SCHEMA_VERSION, Report
from sphinx_jaxhlo.core.request import CompileRequest
from sphinx_jaxhlo.core.sizes import format_bytes
from sphinx_jaxhlo.core.targets import compiler_packages
from sphinx_jaxhlo.store.cache import LocalStore, checked_report

#: Version of the snapshot format (not of the report: that may change freely).
FORMAT = 1

#: The texts of a report stored beside the JSON, compressed.
TEXT_KINDS = ("hlo", "stablehlo", "jaxpr", "buffer_assignment")

#: The most a stored text may expand to.
MAX_TEXT_BYTES = 512 * 2**20

#: Report fields that are not facts of the compile: texts (stored beside),
#: the source (its digest is in the identity), versions (the toolchain), and
#: what changes with every compile.
_NOT_FACTS = frozenset({*TEXT_KINDS, "source", "versions", "compile_seconds", "schema_version"})


class SnapshotError(ValueError):
    """A snapshot that cannot be read: malformed, truncated, or its texts missing."""


# -- what a snapshot is for ----------------------------------------------------

def identity(request: CompileRequest) -> dict[str, Any]:
    """What a report answers, in reviewable form: the request without its
    toolchain, the source as a digest, the argument specs as written."""
    data = dict(request.to_json())
    data["source_sha256"] = hashlib.sha256(str(data.pop("source", "")).encode("utf-8")).hexdigest()
    data.pop("specs", None)
    data["args"] = str(request.specs)
    data["target_sha256"] = request.target_fingerprint
    return data


def identity_key(ident: Mapping[str, Any]) -> str:
    """A digest of an identity: names an example and target across toolchains."""
    blob = json.dumps(ident, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


_IDENTITY_WORDS = {
    "source_sha256": "the example's source",
    "source_name": "the example's file name",
    "function": "the function",
    "args": ":args:",
    "static": ":static:",
    "xla_flags": "the XLA flags",
    "donate": ":donate:",
    "mesh": ":mesh:",
    "extras": "the texts shown (stablehlo, jaxpr)",
    "target": "the target",
    "target_sha256": "the target's description",
}


def identity_changes(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What differs between the identity a snapshot was made for and the current one, in words."""
    out = []
    for key in [*_IDENTITY_WORDS, *sorted((set(stored) | set(current)) - set(_IDENTITY_WORDS))]:
        if stored.get(key) != current.get(key):
            word = _IDENTITY_WORDS.get(key, key)
            if key in ("args", "function", "source_name") and isinstance(stored.get(key), str):
                out.append(f"{word} {stored.get(key)!r} -> {current.get(key)!r}")
            else:
                out.append(word)
    return out


def toolchain(versions: Mapping[str, str], target: str) -> dict[str, str]:
    """The versions that decide a report for ``target``: jax, jaxlib, the
    target's compiler packages (:attr:`~sphinx_jaxhlo.core.targets.Target.packages`)
    and ``XLA_FLAGS``."""
    keep = {"jax", "jaxlib", "XLA_FLAGS", *compiler_packages(target)}
    return {k: v for k, v in versions.items() if k in keep}


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip(".-") or "x"


def slot_name(example: str, function: str, target: str) -> str:
    """The file stem of one (example, function, target): ``example-2.with_dot.gpu-h100``."""
    return ".".join((_safe(example), _safe(function or "default"), _safe(target)))


def document_folder(root: Path, docname: str) -> Path:
    """The folder of a document's snapshots."""
    return root.joinpath(*(_safe(part) for part in docname.split("/")))


# -- the data ------------------------------------------------------------------

@functools.cache
def derived_fields() -> frozenset[str]:
    """The report fields the fusion analysis and the collectives' reading fill
    (never stored, always derived again)."""
    from sphinx_jaxhlo.hlo.fusion import Analysis

    return frozenset({f.name for f in fields(Analysis)} | {"analysis_error", "collectives", "live_at_peak"})


def reanalyze(report: Report, source_name: str, *, peak: bool = True) -> None:
    """Fill the analysis fields of ``report`` from its HLO, as the compile worker does: the
    one filler, :func:`~sphinx_jaxhlo.hlo.report_analysis.fill_analysis` (kept under this
    name: what reading a snapshot calls, and the tests count).

    :param peak: work out what is live at the peak too (without: ``live_at_peak`` is ``None``).
    """
    from sphinx_jaxhlo.hlo.report_analysis import fill_analysis

    fill_analysis(report, source_name, peak=peak)


def summary(report: Report) -> dict[str, str]:
    """The figures a reviewer looks for, in words (stored, never read back)."""
    from sphinx_jaxhlo.store.drift import verdict

    if report.error is not None:
        return {"error": report.error.status}
    biggest = report.largest_materialized
    return {
        "temp": format_bytes(report.memory.temp_bytes),
        "peak": format_bytes(report.memory.peak_bytes),
        "device": format_bytes(report.memory.device_bytes),
        "reductions": verdict(report),
        "largest_materialized": "none" if biggest is None else f"{biggest.shape}, {format_bytes(biggest.bytes)}",
    }


@dataclass
class Snapshot:
    """One stored report: what was asked, by which toolchain, and what the compiler said."""

    identity: dict[str, Any]
    toolchain: dict[str, str]
    facts: dict[str, Any]
    texts: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_report(cls, report: Report, ident: Mapping[str, Any], tools: Mapping[str, str]) -> Snapshot:
        data = report.to_dict()
        skip = _NOT_FACTS | derived_fields()
        facts = {k: v for k, v in data.items() if k not in skip}
        texts = {k: data[k] for k in TEXT_KINDS if isinstance(data.get(k), str) and data[k]}
        return cls(dict(ident), dict(tools), facts, texts)

    def report(self, source: str, source_name: str, *, analyse: bool = True, peak: bool = True) -> Report:
        """The full report, its analysis derived again from the stored HLO.

        :param source: the example's source (its digest is checked by the caller's identity match).
        :param analyse: derive the analysis (without: the facts alone, for a
            caller that has the analysis, :mod:`sphinx_jaxhlo.store.analyses`).
        :param peak: with the analysis, what is live at the peak (without: ``live_at_peak`` is ``None``).
        :raises InvalidReport: when the stored facts are not those of a report.
        """
        report = checked_report(self.data(source), lenient=True)
        # the memory rules of core.memory, on figures stored before them (not part of the analysis:
        # a report whose analysis comes from the cache gets them too)
        report.memory.settle(report.target)
        if analyse:
            reanalyze(report, source_name, peak=peak)
        return report

    def data(self, source: str) -> dict[str, Any]:
        """The report's JSON form without its analysis (not checked yet)."""
        data: dict[str, Any] = {k: v for k, v in self.facts.items() if k not in _NOT_FACTS | derived_fields()}
        data.update({k: self.texts.get(k, "") for k in TEXT_KINDS})
        data["source"] = source
        data["versions"] = {k: v for k, v in self.toolchain.items() if k != "XLA_FLAGS"}
        data["schema_version"] = SCHEMA_VERSION
        return data

    def document(self, report: Report) -> str:
        """The JSON text, with the summary of ``report`` (this snapshot, analysed)."""
        doc = {
            "snapshot": FORMAT,
            "identity": self.identity,
            "toolchain": self.toolchain,
            "facts": self.facts,
            "texts": {k: {"sha256": hashlib.sha256(v.encode("utf-8")).hexdigest(), "bytes": len(v.encode("utf-8"))}
                      for k, v in sorted(self.texts.items())},
            "summary": summary(report),
        }
        return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


@dataclass
class Stored:
    """A snapshot read from its slot, with the JSON text as found."""

    snapshot: Snapshot
    text: str
    path: Path

    @functools.cached_property
    def digest(self) -> str:
        """Names what was read (the JSON holds the digests of the texts); worked out once."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _text_path(json_path: Path, kind: str) -> Path:
    return json_path.with_name(json_path.name.removesuffix(".json") + f".{kind}.gz")


def _gunzip(data: bytes) -> bytes:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = d.decompress(data, MAX_TEXT_BYTES + 1)
    if len(out) > MAX_TEXT_BYTES or d.unconsumed_tail:
        raise SnapshotError(f"a stored text expands to more than {MAX_TEXT_BYTES} bytes")
    return out


def read(json_path: Path) -> Stored | None:
    """The snapshot in a slot, ``None`` when the slot is empty.

    :raises SnapshotError: for a snapshot that is malformed or whose texts are missing or altered.
    """
    try:
        raw = json_path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SnapshotError(f"cannot read it: {os_problem(exc, json_path)}") from exc
    try:
        text = raw.decode("utf-8")
        doc = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise SnapshotError(f"not JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("snapshot") != FORMAT:
        found = doc.get("snapshot") if isinstance(doc, dict) else None
        raise SnapshotError(f"not a snapshot of format {FORMAT} (found {found!r})")
    ident, tools, facts, texts = (doc.get(k) for k in ("identity", "toolchain", "facts", "texts"))
    if not (isinstance(ident, dict) and isinstance(facts, dict) and isinstance(texts, dict)
            and isinstance(tools, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in tools.items())):
        raise SnapshotError("identity, toolchain, facts or texts missing or malformed")
    stored_texts: dict[str, str] = {}
    for kind, meta in texts.items():
        if kind not in TEXT_KINDS or not isinstance(meta, dict) or not isinstance(meta.get("sha256"), str):
            raise SnapshotError(f"texts: unknown or malformed entry {kind!r}")
        path = _text_path(json_path, kind)
        try:
            body = _gunzip(path.read_bytes())
        except OSError as exc:
            raise SnapshotError(f"its {kind} file {path.name} cannot be read: {exc.strerror}") from exc
        except zlib.error as exc:
            raise SnapshotError(f"its {kind} file {path.name} is not gzip data: {exc}") from exc
        if hashlib.sha256(body).hexdigest() != meta["sha256"]:
            raise SnapshotError(f"its {kind} file {path.name} does not match the digest in the JSON")
        try:
            stored_texts[kind] = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError(f"its {kind} file {path.name} is not UTF-8") from exc
    return Stored(Snapshot(ident, dict(tools), facts, stored_texts), text, json_path)


def os_problem(exc: OSError, path: Path) -> str:
    """Why ``path`` could not be read or written, in words: a folder on its way
    that is a file (a damaged snapshot folder), or the system's reason."""
    if isinstance(exc, (NotADirectoryError, FileExistsError)):
        for folder in path.parents:
            if folder.exists() and not folder.is_dir():
                return f"its folder {folder.name!r} is a file, not a folder (move that file away)"
    if isinstance(exc, IsADirectoryError):
        return "it is a folder, not a file (move that folder away)"
    return exc.strerror or str(exc)


def write(json_path: Path, snapshot: Snapshot, report: Report) -> bool:
    """Store a snapshot in its slot, rewriting only the files whose content changed.

    :param report: the snapshot's report, analysed (for the summary).
    :return: whether anything was written or removed.
    """
    store = LocalStore(json_path.parent, shared=True)
    changed = False
    for kind in TEXT_KINDS:
        path = _text_path(json_path, kind)
        body = snapshot.texts.get(kind)
        if body is None:
            if path.exists():
                path.unlink()
                changed = True
            continue
        try:
            same = _gunzip(path.read_bytes()) == body.encode("utf-8")
        except (OSError, zlib.error, SnapshotError):
            same = False
        if not same:
            store.write(path.name, gzip.compress(body.encode("utf-8"), compresslevel=9, mtime=0))
            changed = True
    text = snapshot.document(report)
    try:
        same = json_path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        same = False
    if not same:
        store.write(json_path.name, text.encode("utf-8"))
        changed = True
    return changed


def prune(folder: Path, keep: Iterable[str]) -> list[Path]:
    """Remove the snapshot files of a document folder whose slot is not in
    ``keep`` (file stems); files of other kinds and subfolders stay.

    :return: the removed files.
    """
    keep = set(keep)
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for path in entries:
        name = path.name
        if name.endswith(".json"):
            stem = name[:-5]
        elif name.endswith(".gz") and name.count(".") >= 2 and name.rsplit(".", 2)[1] in TEXT_KINDS:
            stem = name.rsplit(".", 2)[0]
        else:
            continue
        if stem not in keep and path.is_file():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


# -- comparing -----------------------------------------------------------------

def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def differences(stored: Stored, fresh: Snapshot, fresh_report: Report) -> list[str]:
    """How a stored snapshot differs from the one this build would write, in words;
    empty when the two files would be the same."""
    if stored.text == fresh.document(fresh_report) and stored.snapshot.texts == fresh.texts:
        return []
    out: list[str] = []
    old, new = stored.snapshot, fresh
    if old.toolchain != new.toolchain:
        from sphinx_jaxhlo.store.drift import versions_text

        out.append(f"made with {versions_text(old.toolchain)}, this build has {versions_text(new.toolchain)}")
    before, after = _flatten(_comparable(old.facts)), _flatten(_comparable(new.facts))
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            out.append(f"{key} {_short(before.get(key))} -> {_short(after.get(key))}")
    for kind in TEXT_KINDS:
        if old.texts.get(kind) != new.texts.get(kind):
            out.append(f"the {kind} text")
    if not out and _stored_summary(stored) != summary(fresh_report):
        out.append("its summary (the analysis changed; no figure did)")
    # otherwise only the order of the decision records differs (a snapshot written before they had one)
    return out


def _comparable(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The facts with XLA's fusion decisions in one order (a set of records: the
    order XLA writes them in changes from one compile to the next)."""
    out = dict(facts)
    decisions = out.get("fusion_decisions")
    if isinstance(decisions, list):
        out["fusion_decisions"] = sorted(decisions, key=lambda d: json.dumps(d, sort_keys=True))
    return out


def _stored_summary(stored: Stored) -> Any:
    try:
        return json.loads(stored.text).get("summary")
    except (ValueError, AttributeError):
        return None


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- has a slot changed since a build read it? ---------------------------------------------------
#
# A build that read a slot keeps its stamp: the state of its files and the digest of its content.
# The next build stats the files (cheap); only when a state differs does it read the snapshot
# again, and the document is read again only when the content differs.  Modification times alone
# miss a file put back with an older one (``mv`` from a backup, ``cp -p``, ``touch -d``, an
# archive unpacked); the change time (ctime) is set by the system at every write, rename and
# ``touch`` and no tool sets it back, so any change moves the state, and the digest decides.


def file_state(json_path: Path) -> tuple[tuple[int, int, int, int] | None, ...]:
    """Inode, size, modification and change time (ns) of a slot's JSON and of each text it may
    have (``None`` for one that is not there): equal states mean the same files, unchanged."""
    whole = os.fspath(json_path)
    stem = whole.removesuffix(".json")  # the texts' files, as _text_path names them
    out: list[tuple[int, int, int, int] | None] = []
    for path in (whole, *(f"{stem}.{kind}.gz" for kind in TEXT_KINDS)):  # paths as text: a third of the cost
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


@dataclass(frozen=True)
class SlotStamp:
    """What a build read in a slot: the state of its files, and the digest of the snapshot
    (:attr:`Stored.digest`: its JSON, which holds the digests of its texts, each checked when
    read); ``None`` for an empty slot or a damaged snapshot."""

    state: tuple[tuple[int, int, int, int] | None, ...]
    digest: str | None


def content_digest(json_path: Path) -> str | None:
    """The digest of the snapshot in a slot; ``None`` when empty or damaged."""
    try:
        stored = read(json_path)
    except SnapshotError:
        return None
    return None if stored is None else stored.digest


def recheck(json_path: Path, recorded: SlotStamp) -> SlotStamp | None:
    """The slot's stamp if its content is what ``recorded`` says (the same object when its files
    are untouched; one with their new state when only that moved), ``None`` when it changed.
    A slot that was empty or damaged is changed as soon as any of its files is touched."""
    state = file_state(json_path)
    if state == recorded.state:
        return recorded
    digest = content_digest(json_path)
    if digest is None or digest != recorded.digest:
        return None
    return SlotStamp(state, digest)
