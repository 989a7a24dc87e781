"""A shared cache at a URL: an S3 server (moto's, started here), HTTP read-only,
and entries that are checked before use."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from sphinx_jaxhlo.core.report import Memory, Report
from sphinx_jaxhlo.store.cache import InvalidReport, ReportCache, checked_report

pytest.importorskip("fsspec")
moto_server = pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

ROOT = Path(__file__).parent / "roots" / "test-cache"
BUCKET = "jaxhlo-docs"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

BUILD = """
import json, sys
from sphinx.cmd.build import build_main
rc = build_main(sys.argv[1:])
print("JAXHLO-RESULT " + json.dumps({"rc": rc, "jax_imported": "jax" in sys.modules}))
"""


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """An S3 server on the loopback interface; yields its endpoint URL."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    try:
        yield endpoint
    finally:
        server.stop()


@pytest.fixture
def bucket(s3: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    for k, v in CREDENTIALS.items():
        monkeypatch.setenv(k, v)
    fs = s3fs.S3FileSystem(endpoint_url=s3, key="testing", secret="testing")
    if fs.exists(BUCKET):
        fs.rm(BUCKET, recursive=True)
    fs.mkdir(BUCKET)
    fs.invalidate_cache()
    return fs


def checkout(tmp_path: Path, name: str, endpoint: str) -> Path:
    """A fresh copy of the project, its cache in the bucket."""
    src = tmp_path / name
    shutil.copytree(ROOT, src)
    with (src / "conf.py").open("a") as f:
        f.write(f'jaxhlo_cache_dir = "s3://{BUCKET}/cache"\n'
                f'jaxhlo_cache_options = {{"endpoint_url": "{endpoint}"}}\n')
    return src


def build(src: Path) -> tuple[dict[str, Any], str]:
    out = src.parent / (src.name + "-out")
    cmd = [sys.executable, "-c", BUILD, "-b", "html", "-d", str(src.parent / (src.name + "-doctrees")),
           str(src), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, **CREDENTIALS})
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("JAXHLO-RESULT ")), None)
    assert line, proc.stdout + proc.stderr
    return json.loads(line.removeprefix("JAXHLO-RESULT ")), proc.stdout + proc.stderr


def counts(log: str) -> tuple[int, int]:
    m = re.search(r"jax-hlo: (\d+) compiled, (\d+) from cache", log)
    assert m, log
    return int(m.group(1)), int(m.group(2))


def page(src: Path, name: str = "index") -> str:
    return (src.parent / (src.name + "-out") / f"{name}.html").read_text()


def test_a_bucket_filled_by_one_build_serves_a_fresh_checkout(tmp_path: Path, s3: str, bucket: Any) -> None:
    first = checkout(tmp_path, "ci", s3)
    result, log = build(first)
    assert result["rc"] == 0 and counts(log) == (3, 0), log
    keys = sorted(k.removeprefix(f"{BUCKET}/cache/") for k in bucket.find(f"{BUCKET}/cache"))
    assert len([k for k in keys if k.endswith(".json")]) == 3 and len([k for k in keys if k.endswith(".ref")]) == 3
    # rendered HTML never goes to the shared store: it stays beside this checkout's build
    assert not [k for k in keys if k.startswith("html/") or k.endswith(".html")], keys
    fragments = sorted((tmp_path / "jaxhlo-cache" / "html").rglob("*.html"))
    assert len(fragments) == 3
    # a contributor's fresh checkout: nothing compiled, jax never imported
    second = checkout(tmp_path / "laptop", "docs", s3)
    result, log = build(second)
    assert result["rc"] == 0 and counts(log) == (0, 3), log
    assert result["jax_imported"] is False
    assert page(first) == page(second)
    # HTML planted in the bucket where fragments would go is never used
    for path in fragments:
        bucket.pipe(f"{BUCKET}/cache/html/{path.parent.name}/{path.name}", b"<script>alert('planted')</script>")
    third = checkout(tmp_path / "host", "docs", s3)
    result, log = build(third)
    assert counts(log) == (0, 3) and "planted" not in page(third), log


def test_hostile_or_corrupt_entries_are_misses_and_warnings(tmp_path: Path, s3: str, bucket: Any) -> None:
    first = checkout(tmp_path, "ci", s3)
    build(first)
    entries = {json.loads(bucket.cat(k))["function"]: k for k in bucket.find(f"{BUCKET}/cache") if k.endswith(".json")}
    assert sorted(entries) == ["first", "second", "third"]
    original = {name: json.loads(bucket.cat(key)) for name, key in entries.items()}
    # first: not JSON; second: a figure of the wrong type; third: a valid report of another example
    bucket.pipe(entries["first"], b'{"schema_version": 2, "function": "fir')
    second = original["second"]
    second["memory"]["temp_bytes"] = "<b>0</b>"
    bucket.pipe(entries["second"], json.dumps(second).encode())
    bucket.pipe(entries["third"], json.dumps(original["first"]).encode())
    bucket.invalidate_cache()
    fresh = checkout(tmp_path / "laptop", "docs", s3)
    result, log = build(fresh)
    assert result["rc"] == 0 and counts(log) == (3, 0), log
    warned = sorted(ln.split("/")[-1] for ln in log.splitlines() if "[jaxhlo.cache]" in ln)
    assert len(warned) == 3, log
    assert re.search(r"index\.rst:\d+: WARNING: jax-hlo: cache entry s3://jaxhlo-docs/cache/\w\w/\w+\.json is not "
                     r"a valid report \(Unterminated string", log), log
    assert re.search(r"index\.rst:\d+: WARNING: jax-hlo: cache entry \S+ is not a valid report "
                     r"\(report\.memory\.temp_bytes: expected int \| None, not str\): ignored", log), log
    assert re.search(r"other\.rst:\d+: WARNING: jax-hlo: cache entry \S+ is a report of another source: "
                     r"ignored \[jaxhlo\.cache\]", log), log
    # the entries were compiled again and replaced: the next checkout reads them
    result, log = build(checkout(tmp_path / "host", "docs", s3))
    assert counts(log) == (0, 3) and "[jaxhlo.cache]" not in log, log


def test_text_in_a_valid_entry_is_escaped_never_markup(tmp_path: Path, s3: str, bucket: Any) -> None:
    first = checkout(tmp_path, "ci", s3)
    build(first)
    key = next(k for k in bucket.find(f"{BUCKET}/cache") if k.endswith(".json")
               and json.loads(bucket.cat(k))["function"] == "third")
    data = json.loads(bucket.cat(key))
    data["hlo"] = "HloModule evil\n<script>alert(1)</script>\n"
    data["fusions"] = [{"name": "<img src=x onerror=alert(2)>", "kind": "Loop", "custom_kind": None,
                        "ops": ["<b>add</b>"], "shape": "f32[16]", "bytes": 64}]
    bucket.pipe(key, json.dumps(data).encode())
    bucket.invalidate_cache()
    fresh = checkout(tmp_path / "laptop", "docs", s3)
    result, log = build(fresh)
    assert result["rc"] == 0 and counts(log) == (0, 3), log
    html = page(fresh, "other")
    assert "<script>alert(1)" not in html and "<img src=x" not in html and "<b>add</b>" not in html
    soup = BeautifulSoup(html, "html.parser")
    # the entry's text is shown as text: the fusion's name in its table, the
    # module in the file the page loads when the reader opens it
    assert "<img src=x onerror=alert(2)>" in soup.get_text()
    out = fresh.parent / (fresh.name + "-out")
    texts = [p.read_text() for p in (out / "_jaxhlo").glob("*.txt")]
    assert any("<script>alert(1)</script>" in t for t in texts)


def test_a_cache_served_over_http_is_read_only(tmp_path: Path) -> None:
    pytest.importorskip("aiohttp")
    local = ReportCache(tmp_path)
    report = Report(function="f", target="cpu", memory=Memory(temp_bytes=12), source="def f(x): return x")
    local.put("ab" * 32, report)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        remote = ReportCache(f"http://127.0.0.1:{server.server_address[1]}/")
        assert remote.store.read_only
        assert remote.get("ab" * 32, function="f", target="cpu") == report
        assert remote.get("cd" * 32) is None and remote.problems == []
        # a report of another target under this key is refused
        assert remote.get("ab" * 32, target="gpu:h100") is None
        assert "is a report of another target" in remote.problems[0]
        remote.put("ef" * 32, report)  # read-only: nothing is sent
        assert not (tmp_path / "ef").exists()
    finally:
        server.shutdown()
        server.server_close()


def test_an_unreachable_cache_is_said_once_and_the_build_goes_on(tmp_path: Path) -> None:
    cache = ReportCache("s3://nowhere/cache", {"endpoint_url": "http://127.0.0.1:9", "key": "k", "secret": "s",
                                               "config_kwargs": {"retries": {"max_attempts": 1}},
                                               "connect_timeout": 1, "retries": 1})
    assert cache.get("ab" * 32) is None
    assert cache.get("cd" * 32) is None
    assert len(cache.problems) == 1 and "cannot read the cache" in cache.problems[0]


def test_stored_reports_are_checked_field_by_field() -> None:
    good = Report(function="f", target="cpu", memory=Memory(temp_bytes=3)).to_dict()
    assert checked_report(good) == Report(function="f", target="cpu", memory=Memory(temp_bytes=3))
    for path, value in [(("memory", "temp_bytes"), "3"), (("memory", "temp_bytes"), True), (("function",), 3),
                        (("fusions",), {"a": 1}), (("versions",), {"jax": 1}), (("error",), "boom"),
                        (("memory", "evil"), 1)]:
        data = json.loads(json.dumps(good))
        holder = data
        for part in path[:-1]:
            holder = holder[part]
        holder[path[-1]] = value
        with pytest.raises(InvalidReport):
            checked_report(data)
    # leniently, an unknown field is dropped (snapshots written by another version)
    data = json.loads(json.dumps(good))
    data["memory"]["evil"] = 1
    assert checked_report(data, lenient=True).memory == Memory(temp_bytes=3)
