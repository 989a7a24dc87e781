"""The cache key and what may be cached, without a build or a compile.

Every input of :meth:`CompileRequest.cache_key` and :func:`lowered_cache_key`
changes the key when it changes, and what is not an input (the order of
unordered parts, the process the key is computed in) leaves it alone.  Only a
success or a deterministic failure is cached: a transient error never is.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sphinx_jaxhlo.core import request as request_mod
from sphinx_jaxhlo.core.report import CompileError, Memory, Report
from sphinx_jaxhlo.core.request import (
    DEFAULT_SHOW,
    SHOW_PARTS,
    CallRequest,
    CompileRequest,
    code_fingerprint,
    installed_versions,
    lowered_cache_key,
)
from sphinx_jaxhlo.core.specs import parse_args
from sphinx_jaxhlo.store import cache as cache_mod
from sphinx_jaxhlo.store.cache import ReportCache, is_deterministic

ROOT = Path(__file__).resolve().parent.parent


def request(**changes: object) -> CompileRequest:
    base = CompileRequest(source="def f(x):\n    return x\n", function="f", specs=parse_args("f32[3]"),
                          target="cpu", static=(("n", "1"),), xla_flags=(("xla_flag", "1"),),
                          extras=("jaxpr",), source_name="example.py", donate=("x",),
                          target_fingerprint="cpu-x86", versions=(("jax", "0.10.2"), ("jaxlib", "0.10.2")))
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


# -- CompileRequest.cache_key ------------------------------------------------------------

CHANGES = [
    {"source": "def f(x):\n    return x + 1\n"}, {"source": "def f(x):\n    return x\n\n"},
    {"function": "g"}, {"specs": parse_args("f32[4]")}, {"specs": parse_args("f64[3]")},
    {"specs": parse_args("x=f32[3]")}, {"target": "gpu:h100"}, {"static": (("n", "2"),)}, {"static": ()},
    {"xla_flags": ()}, {"xla_flags": (("xla_flag", "2"),)}, {"extras": ()}, {"extras": ("jaxpr", "stablehlo")},
    {"source_name": "other.py"}, {"donate": ()}, {"donate": ("0",)}, {"target_fingerprint": "cpu-arm"},
    {"versions": (("jax", "0.10.3"), ("jaxlib", "0.10.2"))}, {"versions": ()},
]  # fmt: skip


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: next(iter(c)))
def test_every_field_of_the_request_changes_the_key(change: dict[str, object]) -> None:
    assert request(**change).cache_key() != request().cache_key()


def test_the_package_version_changes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = request().cache_key()
    monkeypatch.setattr(request_mod, "__version__", "9.9.9")
    assert request().cache_key() != before


def test_the_report_schema_changes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = request().cache_key()
    monkeypatch.setattr(request_mod, "SCHEMA_VERSION", request_mod.SCHEMA_VERSION + 1)
    assert request().cache_key() != before


def test_the_code_that_makes_reports_changes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = request().cache_key()
    monkeypatch.setattr(request_mod, "code_fingerprint", lambda: "0" * 64)
    assert request().cache_key() != before


def test_the_order_of_installed_versions_does_not_change_the_key() -> None:
    versions = (("jaxlib", "0.10.2"), ("jax", "0.10.2"))
    assert request(versions=versions).cache_key() == request().cache_key()


def test_the_key_is_the_same_in_another_process() -> None:
    code = ("from sphinx_jaxhlo.core.request import CompileRequest; from sphinx_jaxhlo.core.specs import parse_args\n"
            "r = CompileRequest(source='def f(x):\\n    return x\\n', function='f', specs=parse_args('f32[3]'),"
            " target='cpu', static=(('n', '1'),), xla_flags=(('xla_flag', '1'),), extras=('jaxpr',),"
            " source_name='example.py', donate=('x',), target_fingerprint='cpu-x86',"
            " versions=(('jax', '0.10.2'), ('jaxlib', '0.10.2')))\nprint(r.cache_key())")
    env = {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == request().cache_key()


def test_the_key_is_a_sha256_hex_digest() -> None:
    key = request().cache_key()
    assert len(key) == 64 and int(key, 16) >= 0


def test_a_request_survives_json() -> None:
    assert CompileRequest.from_json(request().to_json()) == dataclasses.replace(
        request(), target_fingerprint="", versions=())
    old = request().to_json()
    del old["donate"]  # requests written before donation existed
    assert CompileRequest.from_json(old).donate == ()


# -- lowered_cache_key (the API's compile route) -----------------------------------------

LOWERED = {"lowered_text": "module @jit_f {}", "target": "cpu", "target_fingerprint": "cpu-x86",
           "xla_flags": {"a": "1", "b": "2"}, "extras": ("jaxpr", "stablehlo"), "source_name": "example.py"}


def lowered(**changes: object) -> str:
    return lowered_cache_key(**{**LOWERED, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize("change", [
    {"lowered_text": "module @jit_f { }"}, {"target": "tpu:v5e"}, {"target_fingerprint": "cpu-arm"},
    {"xla_flags": {"a": "1"}}, {"xla_flags": {"a": "1", "b": "3"}}, {"extras": ("jaxpr",)},
    {"source_name": "other.py"},
], ids=lambda c: next(iter(c)))  # fmt: skip
def test_every_input_of_the_lowered_key_changes_it(change: dict[str, object]) -> None:
    assert lowered(**change) != lowered()


def test_the_order_of_flags_and_extras_does_not_change_the_lowered_key() -> None:
    assert lowered(xla_flags={"b": "2", "a": "1"}, extras=("stablehlo", "jaxpr")) == lowered()


@pytest.mark.parametrize("part", ["__version__", "SCHEMA_VERSION", "code_fingerprint", "installed_versions"])
def test_versions_schema_and_code_change_the_lowered_key(part: str, monkeypatch: pytest.MonkeyPatch) -> None:
    before = lowered()
    value: object = {"__version__": "9.9.9", "SCHEMA_VERSION": request_mod.SCHEMA_VERSION + 1,
                     "code_fingerprint": lambda: "0" * 64,
                     "installed_versions": lambda: (("jax", "0.0.1"),)}[part]
    monkeypatch.setattr(request_mod, part, value)
    assert lowered() != before


def test_installed_versions_include_xla_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx_jaxhlo.core import targets

    monkeypatch.setattr(targets, "package_versions", lambda: {"jaxlib": "0.10.2", "jax": "0.10.2"})
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    assert installed_versions.__wrapped__() == (("jax", "0.10.2"), ("jaxlib", "0.10.2"))
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=true")
    assert installed_versions.__wrapped__() == (
        ("XLA_FLAGS", "--xla_cpu_enable_fast_math=true"), ("jax", "0.10.2"), ("jaxlib", "0.10.2"))
    monkeypatch.setenv("XLA_FLAGS", "")
    assert dict(installed_versions.__wrapped__()) == {"jax": "0.10.2", "jaxlib": "0.10.2"}


# -- the code fingerprint ----------------------------------------------------------------

#: Modules a report depends on: the compile worker and what it imports.
REPORT_MODULES = ("compiler/worker.py", "hlo/fusion.py", "hlo/parse.py", "core/targets.py", "core/specs.py",
                  "core/report.py", "compiler/calls.py")


@pytest.fixture
def package_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the package that ``code_fingerprint`` reads instead of the real one."""
    source = request_mod.PACKAGE_DIR
    copy = tmp_path / "sphinx_jaxhlo"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(request_mod, "PACKAGE_DIR", copy)
    return copy


def test_the_fingerprint_is_of_the_package_as_installed(package_copy: Path) -> None:
    assert code_fingerprint.__wrapped__() == code_fingerprint()


@pytest.mark.parametrize("name", REPORT_MODULES)
def test_every_module_that_makes_reports_is_in_the_fingerprint(package_copy: Path, name: str) -> None:
    before = code_fingerprint.__wrapped__()
    path = package_copy / name
    path.write_bytes(path.read_bytes() + b"\n# changed\n")
    assert code_fingerprint.__wrapped__() != before


def test_a_module_the_worker_starts_to_import_joins_the_fingerprint(package_copy: Path) -> None:
    before = code_fingerprint.__wrapped__()
    (package_copy / "hlo" / "new_rule.py").write_text("RULE = 1\n", encoding="utf-8")
    assert code_fingerprint.__wrapped__() == before  # not imported by anything yet
    worker = package_copy / "compiler" / "worker.py"
    worker.write_text(worker.read_text() + "\n\ndef _rule():\n    from sphinx_jaxhlo.hlo.new_rule import RULE\n"
                      "    return RULE\n", encoding="utf-8")
    with_import = code_fingerprint.__wrapped__()
    (package_copy / "hlo" / "new_rule.py").write_text("RULE = 2\n", encoding="utf-8")
    assert with_import != before and code_fingerprint.__wrapped__() != with_import


def test_the_gpu_target_descriptions_are_in_the_fingerprint(package_copy: Path) -> None:
    before = code_fingerprint.__wrapped__()
    described = sorted((package_copy / "gpu_targets").glob("*"))
    assert described
    described[-1].write_bytes(described[-1].read_bytes() + b" ")
    assert code_fingerprint.__wrapped__() != before
    (package_copy / "gpu_targets" / "zz_new.txtpb").write_text("gpu_device_info {}\n", encoding="utf-8")
    assert code_fingerprint.__wrapped__() != before


@pytest.mark.parametrize("name", ["cli.py", "core/expectations.py", "render/example.py", "render/lexer.py",
                                  "sphinxext/documents.py"])
def test_code_that_only_shows_reports_is_not_in_the_fingerprint(package_copy: Path, name: str) -> None:
    before = code_fingerprint.__wrapped__()
    path = package_copy / name
    path.write_bytes(path.read_bytes() + b"\n# changed\n")
    assert code_fingerprint.__wrapped__() == before


def test_moving_code_between_modules_changes_the_fingerprint(package_copy: Path) -> None:
    # the names are hashed with the contents: the same bytes in another file are another fingerprint
    before = code_fingerprint.__wrapped__()
    call, report = package_copy / "compiler" / "calls.py", package_copy / "core" / "report.py"
    both = call.read_bytes() + report.read_bytes()
    call.write_bytes(both[:10])
    report.write_bytes(both[10:])
    assert code_fingerprint.__wrapped__() != before


# -- what may be cached ------------------------------------------------------------------

#: By hand: the statuses a failed compile gets from the same input every time.
DETERMINISTIC = ["RESOURCE_EXHAUSTED", "INVALID_ARGUMENT", "UNIMPLEMENTED", "FAILED_PRECONDITION", "OUT_OF_RANGE"]
#: Failures of the moment: the machine, the worker, a timeout.
TRANSIENT = ["INTERNAL", "UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED", "ABORTED", "UNKNOWN", "DATA_LOSS",
             "PERMISSION_DENIED", "NOT_FOUND", "timeout", "crash", ""]


def test_a_success_is_cached() -> None:
    assert is_deterministic(Report("f", "cpu"))


@pytest.mark.parametrize("status", DETERMINISTIC)
def test_a_deterministic_failure_is_cached(status: str) -> None:
    assert is_deterministic(Report("f", "cpu", error=CompileError(status, "message")))


@pytest.mark.parametrize("status", TRANSIENT)
def test_a_transient_failure_is_never_cached(status: str) -> None:
    assert not is_deterministic(Report("f", "cpu", error=CompileError(status, "message")))


def test_the_deterministic_statuses_are_exactly_those() -> None:
    assert set(cache_mod.DETERMINISTIC_ERRORS) == set(DETERMINISTIC)


# -- the cache folder --------------------------------------------------------------------

KEY = "ab" + "0" * 62


def test_an_entry_is_stored_under_the_first_two_characters_of_its_key(tmp_path: Path) -> None:
    cache = ReportCache(tmp_path)
    assert cache.path(KEY) == tmp_path / "ab" / f"{KEY}.json"
    report = Report("f", "cpu", memory=Memory(temp_bytes=12))
    cache.put(KEY, report)
    assert cache.get(KEY) == report
    assert Report.from_json((tmp_path / "ab" / f"{KEY}.json").read_text(encoding="utf-8")) == report
    assert [p.name for p in tmp_path.rglob("*")] == ["ab", f"{KEY}.json"]  # no temporary file left


def test_put_replaces_an_entry(tmp_path: Path) -> None:
    cache = ReportCache(str(tmp_path))
    cache.put(KEY, Report("f", "cpu"))
    cache.put(KEY, Report("g", "cpu"))
    assert cache.get(KEY) == Report("g", "cpu")


@pytest.mark.parametrize("content", [b"", b"{not json", b"\xff\xfe not utf-8", b'{"function": "f"}', b"[]"])
def test_an_unreadable_entry_is_a_miss(tmp_path: Path, content: bytes) -> None:
    cache = ReportCache(tmp_path)
    cache.path(KEY).parent.mkdir()
    cache.path(KEY).write_bytes(content)
    assert cache.get(KEY) is None
    cache.put(KEY, Report("f", "cpu"))  # and is rewritten
    assert cache.get(KEY) == Report("f", "cpu")


def test_a_missing_entry_or_folder_is_a_miss(tmp_path: Path) -> None:
    assert ReportCache(tmp_path / "nowhere").get(KEY) is None
    folder_in_the_way = tmp_path / "ab" / f"{KEY}.json"
    folder_in_the_way.mkdir(parents=True)
    assert ReportCache(tmp_path).get(KEY) is None


def test_a_cache_that_cannot_be_written_is_skipped(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    cache = ReportCache(blocked)
    cache.put(KEY, Report("f", "cpu"))  # no exception
    assert cache.get(KEY) is None
    assert blocked.read_text(encoding="utf-8") == "not a folder"


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(cache_mod.os, "replace", fail)
    cache = ReportCache(tmp_path)
    cache.put(KEY, Report("f", "cpu"))
    assert [p.name for p in tmp_path.rglob("*")] == ["ab"]
    assert cache.get(KEY) is None


# -- what the request says to the worker and the docs -----------------------------------


def test_a_call_request_says_everything_the_worker_needs() -> None:
    call = CallRequest(payload="cGF5bG9hZA==", function="f", target="tpu:v5e", xla_flags=(("a", "1"),),
                       extras=("jaxpr",), source_name="mod.py", source="def f(): ...", cache_dir="/c")
    assert call.to_json() == {"kind": "call", "payload": "cGF5bG9hZA==", "function": "f", "target": "tpu:v5e",
                              "xla_flags": {"a": "1"}, "extras": ["jaxpr"], "source_name": "mod.py",
                              "source": "def f(): ...", "cache_dir": "/c"}
    assert CallRequest(payload="p", function="f", target="cpu").to_json() == {
        "kind": "call", "payload": "p", "function": "f", "target": "cpu", "xla_flags": {}, "extras": [],
        "source_name": "example.py", "source": "", "cache_dir": None}


def test_the_parts_an_example_can_show_are_the_documented_ones() -> None:
    page = (ROOT / "docs" / "reference" / "directive.md").read_text(encoding="utf-8")
    found = re.search(r"Parts to render, comma separated[^:]*: `([^`]*)`\.\s+Default: `([^`]*)`", page)
    assert found, "docs/reference/directive.md no longer lists the :show: parts"
    parts, default = (" ".join(g.split()) for g in found.groups())
    assert tuple(p.strip() for p in parts.split(",")) == SHOW_PARTS
    assert tuple(p.strip() for p in default.split(",")) == DEFAULT_SHOW


def test_a_request_says_only_what_it_was_given() -> None:
    import dataclasses as dc

    bare = CompileRequest(source="s", function="f", specs=parse_args("f32[3]"), target="cpu")
    assert bare.to_json() == {"source": "s", "function": "f", "specs": parse_args("f32[3]").to_json(),
                              "target": "cpu", "static": [], "xla_flags": [], "extras": [],
                              "source_name": "example.py", "donate": []}
    assert (bare.target_fingerprint, bare.versions) == ("", ())
    for frozen in (bare, CallRequest(payload="p", function="f", target="cpu")):
        with pytest.raises(dc.FrozenInstanceError):
            frozen.target = "gpu:h100"  # type: ignore[misc]
    assert {bare: 1}[dc.replace(bare)] == 1  # hashable, by value


# -- the key's form, pinned ----------------------------------------------------------------


@pytest.fixture
def fixed_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Everything in a key that changes with the installed code, held still."""
    monkeypatch.setattr(request_mod, "code_fingerprint", lambda: "c" * 64)
    monkeypatch.setattr(request_mod, "__version__", "0.0.0")
    monkeypatch.setattr(request_mod, "SCHEMA_VERSION", 1)
    monkeypatch.setattr(request_mod, "installed_versions", lambda: (("jax", "0.10.2"),))


def test_the_form_of_the_keys_changes_only_on_purpose(fixed_versions: None) -> None:
    # Every cached report of every user is found by these keys: a change to how a
    # key is computed (a field renamed, another JSON spelling) recompiles every
    # example of every project, TPU ones included.  Such a change should be made
    # on purpose, with these two digests, and named in the changelog.
    assert request().cache_key() == "14fac3fd753d0ada9ceaefaf2bcbbcd207d2157c345d2e530c8f4b59d54e7e6a"
    assert lowered() == "e46c2364b9e2bb38f0ada1ada2cc4465cf9965f78fda93920485f0a441418bc6"


def test_the_cache_says_what_it_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.DEBUG, logger="sphinx_jaxhlo.store.cache")
    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")
    ReportCache(blocked).put(KEY, Report("f", "cpu"))
    # a local cache that cannot be written is only slower: a debug line
    assert next(r.getMessage() for r in caplog.records).startswith(
        f"jax-hlo cache: cannot write {blocked / KEY[:2] / KEY}.json: ")
    # entries that cannot be used are problems the build reports
    cache = ReportCache(tmp_path / "c")
    cache.path(KEY).parent.mkdir(parents=True)
    cache.path(KEY).write_text("{not json", encoding="utf-8")
    assert cache.get(KEY) is None
    cache.path(KEY).unlink()
    cache.path(KEY).mkdir()
    assert cache.get(KEY) is None
    assert cache.problems[0].startswith(f"cache entry {cache.path(KEY)} is not a valid report (")
    assert cache.problems[1].startswith(f"cannot read the cache at {cache.path(KEY)}: ")


def test_a_cache_folder_is_made_with_its_parents(tmp_path: Path) -> None:
    cache = ReportCache(tmp_path / "not" / "yet")
    cache.put(KEY, Report("f", "cpu"))
    assert cache.get(KEY) == Report("f", "cpu")


# -- where a cache lives -------------------------------------------------------------------


@pytest.mark.parametrize(("location", "url"), [
    ("s3://bucket/jaxhlo", True), ("memory://c", True), ("gcs+x.y-z://b", True), ("https://host/c", True),
    ("/tmp/cache", False), ("cache", False), ("C:\\cache", False), ("1s3://b", False), ("s3:/b", False),
])  # fmt: skip
def test_a_cache_location_is_a_url_or_a_folder(location: str, url: bool) -> None:
    from sphinx_jaxhlo.store.cache import is_url

    assert is_url(location) is url
    assert is_url(Path("/tmp/x")) is False


@pytest.mark.parametrize("location", ["memory://jaxhlo-test-cache", "memory://jaxhlo-test-X", "local"])
def test_reports_and_latest_references_round_trip(location: str, tmp_path: Path) -> None:
    cache = ReportCache(location if "://" in location else tmp_path / location)
    report = Report("f", "cpu", memory=Memory(temp_bytes=3))
    cache.put(KEY, report)
    assert cache.get(KEY) == report
    assert cache.get("cd" * 32) is None
    identity = "ef" * 32
    cache.put_latest(identity, KEY, {"jax": "0.10.2"})
    assert cache.latest(identity) == (KEY, {"jax": "0.10.2"})
    assert cache.latest("00" * 32) is None
    assert cache.problems == []
    if "://" in location:
        assert cache.folder is None
        assert cache.store.describe("ab/x.json") == f"{location}/ab/x.json"


@pytest.mark.parametrize("bad", ["AB" * 32, "ab" * 31, "../" + "ab" * 31, ""])
def test_a_key_is_64_lowercase_hex_digits(bad: str, tmp_path: Path) -> None:
    cache = ReportCache(tmp_path)
    with pytest.raises(ValueError, match="not a cache key"):
        cache.get(bad)
    with pytest.raises(ValueError, match="not a cache key"):
        cache.put(bad, Report("f", "cpu"))


@pytest.mark.parametrize("location", ["memory://jaxhlo-test-large", "local"])
def test_an_entry_too_large_is_a_miss_said_once(location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReportCache(location if "://" in location else tmp_path / location)
    cache.put(KEY, Report("f", "cpu"))
    monkeypatch.setattr(cache_mod, "MAX_ENTRY_BYTES", 10)
    assert cache.get(KEY) is None
    where = cache.store.describe(ReportCache.name(KEY))
    assert cache.problems == [f"cache entry {where} ignored: larger than 10 bytes"]


def test_a_bad_latest_reference_is_ignored_and_said(tmp_path: Path) -> None:
    cache = ReportCache(tmp_path)
    identity = "ef" * 32
    ref = tmp_path / "latest" / identity[:2] / f"{identity}.ref"
    ref.parent.mkdir(parents=True)
    for text in ('{"key": "nope", "toolchain": {}}', '{"key": "' + KEY + '", "toolchain": {"jax": 1}}', "[]"):
        ref.write_text(text, encoding="utf-8")
        assert cache.latest(identity) is None
    assert cache.problems[:2] == [f"cache entry latest/{identity}.ref is not valid (bad fields): ignored"] * 2
    assert cache.problems[2].startswith(f"cache entry latest/{identity}.ref is not valid (")


def test_a_cache_over_http_is_never_written() -> None:
    cache = ReportCache("https://example.invalid/jaxhlo")
    assert cache.store.read_only
    cache.put(KEY, Report("f", "cpu"))  # nothing is sent
    assert cache.problems == []
    assert not ReportCache("s3://bucket/c").store.read_only


def test_shared_files_are_readable_by_all(tmp_path: Path) -> None:
    import os

    from sphinx_jaxhlo.store.cache import LocalStore

    mask = os.umask(0o022)
    try:
        LocalStore(tmp_path, shared=True).write("a/x.txt", b"x")
        LocalStore(tmp_path).write("a/y.txt", b"y")
    finally:
        os.umask(mask)
    assert (tmp_path / "a" / "x.txt").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "a" / "y.txt").stat().st_mode & 0o777 == 0o600
    assert LocalStore(tmp_path).read("a/x.txt") == b"x" and LocalStore(tmp_path).read("a/none") is None


# -- what a stored report must be ----------------------------------------------------------

GOOD = json.loads(Report("f", "cpu").to_json())


@pytest.mark.parametrize(("data", "message"), [
    ([], "not a JSON object"),
    ({**GOOD, "nonsense": 1}, "unknown field 'nonsense'"),
    ({**GOOD, "function": 1}, "report.function: expected str, not int"),
    ({**GOOD, "fusions": {}}, "report.fusions: expected a list"),
    ({**GOOD, "fusions": [1]}, "report.fusions[0]: expected an object"),
    ({**GOOD, "memory": []}, "report.memory: expected an object"),
    ({**GOOD, "memory": {**GOOD["memory"], "temp_bytes": "x"}},
     "report.memory.temp_bytes: expected int | None, not str"),
    ({**GOOD, "memory": {**GOOD["memory"], "temp_bytes": True}},
     "report.memory.temp_bytes: expected int | None, not bool"),
    ({**GOOD, "versions": []}, "report.versions: expected an object"),
    ({**GOOD, "versions": {"jax": 1}}, "report.versions.jax: expected str, not int"),
])  # fmt: skip
def test_a_stored_report_is_checked_field_by_field_and_the_field_named(data: object, message: str) -> None:
    from sphinx_jaxhlo.store.cache import InvalidReport, checked_report

    with pytest.raises(InvalidReport) as info:
        checked_report(data)
    assert str(info.value) == message


def test_a_lenient_check_skips_unknown_fields_only() -> None:
    from sphinx_jaxhlo.store.cache import InvalidReport, checked_report

    assert checked_report({**GOOD, "nonsense": 1}, lenient=True) == Report("f", "cpu")
    assert checked_report({"nonsense": 1, **GOOD, "target": "tpu:v5e"}, lenient=True) == Report("f", "tpu:v5e")
    assert checked_report({**GOOD, "mesh": [["data", 4], ["model", 2]]}).mesh == [["data", 4], ["model", 2]]
    assert checked_report({**GOOD, "versions": {"jax": "0.10.2"}}) == Report("f", "cpu", versions={"jax": "0.10.2"})
    with pytest.raises(InvalidReport):
        checked_report({**GOOD, "function": 1}, lenient=True)


@pytest.mark.parametrize("location", ["memory://jaxhlo-test-limit", "local"])
def test_an_entry_exactly_at_the_size_limit_is_read(location: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReportCache(location if "://" in location else tmp_path / location)
    report = Report("g", "cpu")
    cache.put(KEY, report)
    monkeypatch.setattr(cache_mod, "MAX_ENTRY_BYTES", len(report.to_json().encode("utf-8")))
    assert cache.get(KEY) == report


@pytest.mark.parametrize("url", ["http://example.invalid/c", "HTTPS://example.invalid/c/", "http://h/X/"])
def test_http_caches_are_read_only(url: str) -> None:
    store = ReportCache(url).store
    assert store.read_only and store.describe("x") == url.rstrip("/") + "/x"


@pytest.mark.parametrize(("asked", "what"), [({"function": "g"}, "function"), ({"target": "tpu:v5e"}, "target"),
                                             ({"source": "other"}, "source")])
def test_an_entry_that_answers_another_question_is_refused(asked: dict[str, str], what: str, tmp_path: Path) -> None:
    cache = ReportCache(tmp_path)
    report = Report("f", "cpu", source="text")
    cache.put(KEY, report)
    assert cache.get(KEY, function="f", target="cpu", source="text") == report
    assert cache.get(KEY, function="", target="") == report  # empty: not asked
    assert cache.get(KEY, **asked) is None
    assert cache.problems == [f"cache entry {cache.path(KEY)} is a report of another {what}: ignored"]


def test_a_bad_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        ReportCache(tmp_path).get("xyz")
    assert str(info.value) == "not a cache key: 'xyz'"
    with pytest.raises(ValueError) as info:
        ReportCache(tmp_path).put("xyz", Report("f", "cpu"))
    assert str(info.value) == "not a cache key: 'xyz'"


def test_a_remote_cache_that_fails_is_said_once_and_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReportCache("memory://jaxhlo-test-unreachable")
    calls: list[str] = []

    def refuse(*args: object) -> None:
        calls.append("read")
        raise OSError("connection refused")

    monkeypatch.setattr(cache.store, "read", refuse)
    assert cache.get(KEY) is None and cache.get(KEY) is None and cache.latest("ef" * 32) is None
    assert calls == ["read"]  # once, then the cache is left alone for the build
    where = cache.store.describe(ReportCache.name(KEY))
    assert cache.problems == [f"cannot read the cache at {where}: OSError('connection refused'); "
                              "compiling without it for the rest of this build"]


def test_a_remote_cache_that_cannot_be_written_is_said_once(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReportCache("memory://jaxhlo-test-unwritable")
    calls: list[str] = []

    def refuse(*args: object) -> None:
        calls.append("write")
        raise PermissionError("read-only bucket")

    monkeypatch.setattr(cache.store, "write", refuse)
    cache.put(KEY, Report("f", "cpu"))
    cache.put(KEY, Report("f", "cpu"))
    assert calls == ["write"]
    where = cache.store.describe(ReportCache.name(KEY))
    assert cache.problems == [f"cannot write to the cache at {where}: PermissionError('read-only bucket'); "
                              "compiling without it for the rest of this build"]
    assert cache.get(KEY) is None  # unreachable now: not read either


def test_a_local_cache_that_cannot_be_read_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReportCache(tmp_path)
    cache.put(KEY, Report("f", "cpu"))

    def refuse(*args: object) -> None:
        raise PermissionError("denied")

    monkeypatch.setattr(cache.store, "read", refuse)
    assert cache.get(KEY) is None and cache.get(KEY) is None
    assert cache.problems == [f"cannot read the cache at {cache.path(KEY)}: PermissionError('denied')"] * 2


@pytest.mark.parametrize(("message", "shown"), [("", "InvalidReport"), ("x" * 200, "x" * 200),
                                                ("x" * 201, "x" * 200 + "...")])
def test_problems_cut_long_reasons(message: str, shown: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx_jaxhlo.store.cache import InvalidReport

    def refuse(data: object, **kwargs: object) -> None:
        raise InvalidReport(message)

    cache = ReportCache(tmp_path)
    cache.put(KEY, Report("f", "cpu"))
    monkeypatch.setattr(cache_mod, "checked_report", refuse)
    assert cache.get(KEY) is None
    assert cache.problems == [f"cache entry {cache.path(KEY)} is not a valid report ({shown}): ignored"]
