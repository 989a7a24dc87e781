"""A content-addressed cache of reports: one JSON file per cache key.

Writes go to a temporary file in the same folder and are renamed into place,
so readers never see half a file, and any number of processes (``-j N``
readers, two builds at once) may share the folder.  A file that does not parse
is treated as a miss and rewritten.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from .report import Report

log = logging.getLogger(__name__)


#: Compile failures that say something about the program, not about the moment.
DETERMINISTIC_ERRORS = frozenset({"RESOURCE_EXHAUSTED", "INVALID_ARGUMENT", "UNIMPLEMENTED", "FAILED_PRECONDITION",
                                  "OUT_OF_RANGE"})


def is_deterministic(report: Report) -> bool:
    """Whether a report may be cached: a success, or a failure the same input always gives."""
    return report.error is None or report.error.status in DETERMINISTIC_ERRORS


class ReportCache:
    """Reports stored under ``folder/<key[:2]>/<key>.json``."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Report | None:
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            log.debug("jax-hlo cache: cannot read %s: %s", path, exc)
            return None
        try:
            return Report.from_json(text)
        except ValueError as exc:
            log.debug("jax-hlo cache: ignoring unreadable entry %s: %s", path, exc)
            return None

    def put(self, key: str, report: Report) -> None:
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                # No fsync: the rename alone keeps readers from ever seeing half a
                # file; after a power cut an empty entry just reads as a miss.
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(report.to_json())
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.debug("jax-hlo cache: cannot write %s: %s", path, exc)
