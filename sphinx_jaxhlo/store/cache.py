"""A content-addressed cache of reports: one JSON file per cache key.

The cache lives in a local folder (the default) or at the URL of any fsspec
filesystem (``s3://bucket/prefix``, ``gs://...``, ``file://...``; ``https://``
is read-only), so CI can fill a bucket that every contributor and docs host
reads.  Locally, writes go to a temporary file in the same folder and are
renamed into place, so readers never see half a file, and any number of
processes (``-j N`` readers, two builds at once) may share the folder.

An entry is data, never code, and is checked before use: a file that does not
parse, or whose fields do not have the types of a report, or that answers a
different question than the one asked (another function, target or source),
is a miss, recorded in :attr:`ReportCache.problems` for the caller to warn
about, and compiled again.  Rendered HTML is never read from here: the
extension keeps it in a local folder of its own.

Beside the entries, ``analyses/`` and ``drift/`` keep the analysis of each
snapshot and the comparison of two (:mod:`sphinx_jaxhlo.store.analyses`), and
``latest/<id[:2]>/<id>.ref`` remembers, for each example
and target (its :func:`sphinx_jaxhlo.store.snapshots.identity_key`), which entry was
stored last and by which toolchain, so that a compile under a new jax can be
compared with the report of the old one (``jaxhlo.drift``), and
``timings/<id[:2]>/<id>.seconds`` how long its last compile took, so that a
build starts the longest compiles first and gives each a timeout that fits.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import tempfile
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from sphinx_jaxhlo.core.report import Report

log = logging.getLogger(__name__)

#: Compile failures that say something about the program, not about the moment.
DETERMINISTIC_ERRORS = frozenset({"RESOURCE_EXHAUSTED", "INVALID_ARGUMENT", "UNIMPLEMENTED", "FAILED_PRECONDITION",
                                  "OUT_OF_RANGE"})

#: The largest entry read from a cache (optimized HLO of a 2000-step unrolled loop is 7-9 MB).
MAX_ENTRY_BYTES = 256 * 2**20

#: fsspec protocols that are only ever read.
READ_ONLY_PROTOCOLS = frozenset({"http", "https"})

_KEY = re.compile(r"[0-9a-f]{64}")


def is_deterministic(report: Report) -> bool:
    """Whether a report may be cached: a success, or a failure the same input always gives."""
    return report.error is None or report.error.status in DETERMINISTIC_ERRORS


def is_url(location: str | os.PathLike[str]) -> bool:
    """Whether a ``jaxhlo_cache_dir`` value names an fsspec URL rather than a folder."""
    return isinstance(location, str) and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", location) is not None


# -- checking stored reports ---------------------------------------------------

class InvalidReport(ValueError):
    """Stored report data that is not a report of this schema."""

    def __init__(self, reason: str, path: tuple[str, ...] = ()) -> None:
        self.reason, self.path = reason, path
        super().__init__(f"report{''.join(path)}: {reason}" if path else reason)

    def inside(self, step: str) -> InvalidReport:
        return InvalidReport(self.reason, (step, *self.path))


#: Checks a stored value against a type hint; returns the value to use.
Checker = Callable[[Any, bool], Any]


@functools.cache
def _checker(hint: Any) -> Checker:
    """A checker for values of a type hint of the report dataclasses; with
    ``lenient`` (its second argument), keys a dataclass does not know are
    dropped instead of refused."""
    if hint is Any:
        return lambda value, lenient: value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [o for o in typing.get_args(hint) if o is not type(None)]
        nullable = len(options) < len(typing.get_args(hint))
        checkers = [_checker(o) for o in options]

        def union(value: Any, lenient: bool) -> Any:
            if value is None and nullable:
                return None
            for check in checkers:
                try:
                    return check(value, lenient)
                except InvalidReport:
                    continue
            raise InvalidReport(f"expected {hint}, not {type(value).__name__}")
        return union
    if origin is list:
        (item_hint,) = typing.get_args(hint) or (Any,)
        item = _checker(item_hint)

        def listed(value: Any, lenient: bool) -> Any:
            if not isinstance(value, list):
                raise InvalidReport("expected a list")
            out = []
            for i, v in enumerate(value):
                try:
                    out.append(item(v, lenient))
                except InvalidReport as exc:
                    raise exc.inside(f"[{i}]") from None
            return out
        return listed
    if origin is dict:
        key, val = (_checker(h) for h in typing.get_args(hint) or (Any, Any))

        def mapping(value: Any, lenient: bool) -> Any:
            if not isinstance(value, dict):
                raise InvalidReport("expected an object")
            out = {}
            for k, v in value.items():
                try:
                    out[key(k, lenient)] = val(v, lenient)
                except InvalidReport as exc:
                    raise exc.inside(f".{k}") from None
            return out
        return mapping
    if isinstance(hint, type) and is_dataclass(hint):
        names = {f.name for f in fields(hint) if f.init}
        hints = typing.get_type_hints(hint)
        members = {name: _checker(hints[name]) for name in names}

        def record(value: Any, lenient: bool) -> Any:
            if not isinstance(value, dict):
                raise InvalidReport("expected an object")
            out = {}
            for k, v in value.items():
                check = members.get(k)
                if check is None:
                    if lenient:
                        continue
                    raise InvalidReport(f"unknown field {k!r}")
                try:
                    out[k] = check(v, lenient)
                except InvalidReport as exc:
                    raise exc.inside(f".{k}") from None
            return out
        return record
    accepted: dict[Any, tuple[type, ...]] = {bool: (bool,), int: (int,), float: (int, float), str: (str,)}
    if hint not in accepted:  # a hint this checker does not know: refuse rather than trust
        def unknown(value: Any, lenient: bool) -> Any:
            raise InvalidReport(f"cannot check values of type {hint}")
        return unknown
    kinds = accepted[hint]

    def simple(value: Any, lenient: bool) -> Any:
        if not isinstance(value, kinds) or (isinstance(value, bool) and hint is not bool):
            raise InvalidReport(f"expected {hint.__name__}, not {type(value).__name__}")
        return value
    return simple


def checked_report(data: Any, *, lenient: bool = False) -> Report:
    """A :class:`Report` from stored JSON data, every field's type checked first.

    :param lenient: drop fields this version of the report does not know (for
        snapshots, written by other versions) instead of refusing the data.
    :raises InvalidReport: saying which field is wrong.
    """
    if not isinstance(data, dict):
        raise InvalidReport("not a JSON object")
    clean = _checker(Report)(data, lenient)
    try:
        return Report.from_dict(clean)
    except ValueError as exc:
        raise InvalidReport(str(exc)) from exc


# -- where entries live --------------------------------------------------------

class LocalStore:
    """Files under a local folder, written atomically."""

    def __init__(self, folder: str | os.PathLike[str], *, shared: bool = False) -> None:
        """:param shared: files readable by all (as the umask allows), for files
            committed to a repository; otherwise only the user reads them."""
        self.folder = Path(folder)
        self.read_only = False
        self.shared = shared

    def describe(self, name: str) -> str:
        return str(self.folder / name)

    def read(self, name: str) -> bytes | None:
        """The file's bytes, ``None`` when it does not exist; raises ``OSError``
        or :class:`InvalidReport` (too large)."""
        path = self.folder / name
        try:
            with path.open("rb") as f:
                data = f.read(MAX_ENTRY_BYTES + 1)
        except FileNotFoundError:
            return None
        if len(data) > MAX_ENTRY_BYTES:
            raise InvalidReport(f"larger than {MAX_ENTRY_BYTES} bytes")
        return data

    def write(self, name: str, data: bytes) -> None:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        try:
            # No fsync: the rename alone keeps readers from ever seeing half a
            # file; after a power cut an empty entry just reads as a miss.
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            if self.shared:
                os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class FsspecStore:
    """Files under a URL of an fsspec filesystem (``pip install fsspec`` and the
    filesystem's own package, such as ``s3fs`` or ``gcsfs``)."""

    def __init__(self, url: str, options: Mapping[str, Any] | None = None) -> None:
        import fsspec  # an optional dependency: ImportError tells the caller

        self.url = url.rstrip("/")
        self.options = dict(options or {})
        self._fsspec = fsspec
        self._fs: Any = None
        self._root = ""
        self._pid = -1
        protocol = url.split("://", 1)[0].lower()
        self.read_only = protocol in READ_ONLY_PROTOCOLS

    def _filesystem(self) -> tuple[Any, str]:
        # a filesystem object (and its event loop) is not shared with forked readers
        if self._fs is None or self._pid != os.getpid():
            self._fs, self._root = self._fsspec.core.url_to_fs(self.url, **self.options)
            self._pid = os.getpid()
        return self._fs, self._root.rstrip("/")

    def describe(self, name: str) -> str:
        return f"{self.url}/{name}"

    def read(self, name: str) -> bytes | None:
        fs, root = self._filesystem()
        try:
            with fs.open(f"{root}/{name}", "rb") as f:
                data = f.read(MAX_ENTRY_BYTES + 1)
        except FileNotFoundError:
            return None
        if len(data) > MAX_ENTRY_BYTES:
            raise InvalidReport(f"larger than {MAX_ENTRY_BYTES} bytes")
        return bytes(data)

    def write(self, name: str, data: bytes) -> None:
        fs, root = self._filesystem()
        # one object store PUT (or one local write) per entry: readers see all of it or nothing
        fs.pipe_file(f"{root}/{name}", data)


# -- the cache -----------------------------------------------------------------

class ReportCache:
    """Reports stored under ``<location>/<key[:2]>/<key>.json``.

    :param location: a folder, or an fsspec URL (see :func:`is_url`).
    :param options: storage options for fsspec (credentials come from the
        filesystem's usual environment variables and files).
    :raises ImportError: for a URL when fsspec is not installed.
    """

    def __init__(self, location: str | os.PathLike[str], options: Mapping[str, Any] | None = None) -> None:
        self.location = str(location)
        self.store: LocalStore | FsspecStore
        if is_url(self.location):
            self.store = FsspecStore(self.location, options)
        else:
            self.store = LocalStore(location)
        #: What went wrong since the caller last looked: entries refused, a
        #: store that could not be read or written.  The caller warns and clears it.
        self.problems: list[str] = []
        self._unreachable = False

    @property
    def folder(self) -> Path | None:
        """The local folder, or ``None`` for a URL."""
        return self.store.folder if isinstance(self.store, LocalStore) else None

    @staticmethod
    def name(key: str) -> str:
        return f"{key[:2]}/{key}.json"

    def path(self, key: str) -> Path:
        """The file of an entry in a local cache."""
        assert self.folder is not None, "a URL cache has no local paths"
        return self.folder / self.name(key)

    def _read(self, name: str) -> bytes | None:
        if self._unreachable:
            return None
        try:
            return self.store.read(name)
        except InvalidReport as exc:
            self.problems.append(f"cache entry {self.store.describe(name)} ignored: {exc}")
        except Exception as exc:  # a network or permission error: a miss, said once
            self._unreachable = not isinstance(self.store, LocalStore)
            self.problems.append(f"cannot read the cache at {self.store.describe(name)}: {exc!r}"
                                 + ("; compiling without it for the rest of this build" if self._unreachable
                                    else ""))
        return None

    def _write(self, name: str, data: bytes) -> None:
        if self.store.read_only or self._unreachable:
            return
        try:
            self.store.write(name, data)
        except Exception as exc:
            if isinstance(self.store, LocalStore):
                log.debug("jax-hlo cache: cannot write %s: %s", self.store.describe(name), exc)
            else:
                self._unreachable = True
                self.problems.append(f"cannot write to the cache at {self.store.describe(name)}: {exc!r}; "
                                     "compiling without it for the rest of this build")

    def get(self, key: str, *, function: str | None = None, target: str | None = None,
            source: str | None = None) -> Report | None:
        """The report stored under ``key``, or ``None``.

        :param function: when given (and not empty), the report must be of this function;
        :param target: ... of this target;
        :param source: ... made from this example source.  An entry that
            answers another question is refused like a corrupt one.
        """
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        data = self._read(self.name(key))
        if data is None:
            return None
        where = self.store.describe(self.name(key))
        try:
            report = checked_report(json.loads(data.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, InvalidReport) as exc:
            self.problems.append(f"cache entry {where} is not a valid report ({_short(exc)}): ignored")
            return None
        for what, want, have in (("function", function, report.function), ("target", target, report.target),
                                 ("source", source, report.source)):
            if want and want != have:
                self.problems.append(f"cache entry {where} is a report of another {what}: ignored")
                return None
        return report

    def put(self, key: str, report: Report) -> None:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        self._write(self.name(key), report.to_json().encode("utf-8"))

    # -- other entries beside the reports (store/analyses.py) --------------------

    def read_entry(self, name: str) -> bytes | None:
        """The bytes of an entry beside the reports (``analyses/ab/<key>.analysis``),
        ``None`` when there is none or it cannot be read (said in :attr:`problems`)."""
        return self._read(name)

    def write_entry(self, name: str, data: bytes) -> None:
        """Store an entry beside the reports (nothing on a read-only store)."""
        self._write(name, data)

    # -- the last report of each example and target, for drift ------------------

    def latest(self, identity: str) -> tuple[str, dict[str, str]] | None:
        """``(cache key, toolchain)`` of the report last stored for an example and
        target, or ``None``."""
        data = self._read(f"latest/{identity[:2]}/{identity}.ref")
        if data is None:
            return None
        try:
            doc = json.loads(data.decode("utf-8"))
            key, toolchain = doc["key"], doc["toolchain"]
            if not (isinstance(key, str) and _KEY.fullmatch(key) and isinstance(toolchain, dict)
                    and all(isinstance(k, str) and isinstance(v, str) for k, v in toolchain.items())):
                raise ValueError("bad fields")
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as exc:
            self.problems.append(f"cache entry latest/{identity}.ref is not valid ({_short(exc)}): ignored")
            return None
        return key, toolchain

    def put_latest(self, identity: str, key: str, toolchain: Mapping[str, str]) -> None:
        doc = {"key": key, "toolchain": dict(toolchain)}
        self._write(f"latest/{identity[:2]}/{identity}.ref", json.dumps(doc, sort_keys=True).encode("utf-8"))

    # -- how long each example and target took to compile, for scheduling -------

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (not whether it is valid: :meth:`get` checks that)."""
        if not _KEY.fullmatch(key) or self._unreachable:
            return False
        if isinstance(self.store, LocalStore):
            return self.path(key).is_file()
        try:
            return self._read(self.name(key)) is not None
        except Exception:
            return False

    def compile_seconds(self, identity: str) -> float | None:
        """Seconds the example and target of ``identity`` (a
        :func:`sphinx_jaxhlo.store.snapshots.identity_key`) took to compile the last
        time a build stored it, or ``None``."""
        data = self._read(f"timings/{identity[:2]}/{identity}.seconds")
        if data is None:
            return None
        try:
            seconds = json.loads(data.decode("utf-8"))["seconds"]
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError):
            return None
        return float(seconds) if isinstance(seconds, (int, float)) and seconds >= 0 else None

    def put_compile_seconds(self, identity: str, seconds: float) -> None:
        self._write(f"timings/{identity[:2]}/{identity}.seconds",
                    json.dumps({"seconds": round(seconds, 3)}).encode("utf-8"))


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."
