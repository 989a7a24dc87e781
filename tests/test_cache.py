"""The report cache: hits, misses, invalidation, corruption, concurrency, and no jax in cached builds."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import module_texts

from sphinx_jaxhlo.core.report import Memory, Report
from sphinx_jaxhlo.core.request import CompileRequest
from sphinx_jaxhlo.core.specs import parse_args
from sphinx_jaxhlo.store.cache import ReportCache

ROOT = Path(__file__).parent / "roots" / "test-cache"

BUILD = """
import json, sys
from sphinx.cmd.build import build_main
rc = build_main(sys.argv[1:])
from sphinx_jaxhlo.sphinxext.documents import process_document  # noqa
import sphinx_jaxhlo.sphinxext.extension  # noqa
print("JAXHLO-RESULT " + json.dumps({"rc": rc, "jax_imported": "jax" in sys.modules}))
"""


def sphinx_build(src: Path, out: Path, cache: Path, *extra: str) -> tuple[dict[str, object], str]:
    """Build in a fresh process; returns whether jax was imported there and the log."""
    cmd = [sys.executable, "-c", BUILD, "-b", "html", "-E", "-D", f"jaxhlo_cache_dir={cache}", *extra,
           str(src), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("JAXHLO-RESULT "))
    return json.loads(line.removeprefix("JAXHLO-RESULT ")), proc.stdout + proc.stderr


def summary(log: str) -> tuple[int, int]:
    m = re.search(r"jax-hlo: (\d+) compiled, (\d+) from cache", log)
    assert m, log
    return int(m.group(1)), int(m.group(2))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(ROOT, src)
    return src


def test_cached_rebuild_compiles_nothing_and_never_imports_jax(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    result, log = sphinx_build(project, tmp_path / "out1", cache)
    assert result["rc"] == 0 and summary(log) == (3, 0), log
    # a fresh environment (-E) with a warm cache: everything from the cache, and jax never imported
    result, log = sphinx_build(project, tmp_path / "out2", cache)
    assert summary(log) == (0, 3), log
    assert result["jax_imported"] is False
    # prose edits recompile nothing; editing one example recompiles that one alone
    index = project / "index.rst"
    index.write_text(index.read_text().replace("Prose that can change.", "Prose that changed."))
    _, log = sphinx_build(project, tmp_path / "out3", cache)
    assert summary(log) == (0, 3), log
    second = project / "examples" / "second.py"
    second.write_text(second.read_text().replace("jnp.max", "jnp.min"))
    _, log = sphinx_build(project, tmp_path / "out4", cache)
    assert summary(log) == (1, 2), log


def test_corrupt_entries_are_recompiled(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    sphinx_build(project, tmp_path / "out1", cache)
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 3
    entries[0].write_text('{"schema_version": 1, "function": "tr')  # truncated
    entries[1].write_bytes(b"\x00\xff garbage")
    result, log = sphinx_build(project, tmp_path / "out2", cache)
    assert result["rc"] == 0 and summary(log) == (2, 1), log
    assert "Traceback" not in log
    # each is said, at its example, and replaced
    assert log.count("is not a valid report") == 2 and log.count("[jaxhlo.cache]") == 2, log
    assert all(Report.from_json(p.read_text()) for p in entries)


def test_two_builds_at_once_share_one_cache(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cmds = [[sys.executable, "-c", BUILD, "-b", "html", "-D", f"jaxhlo_cache_dir={cache}", str(project),
             str(tmp_path / f"out{i}"), "-d", str(tmp_path / f"doctrees{i}")] for i in range(2)]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for c in cmds]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    pages = [(tmp_path / f"out{i}" / "index.html").read_text() for i in range(2)]
    assert pages[0] == pages[1]
    assert not list(cache.rglob(".tmp-*"))


def test_file_argument_is_a_dependency(project: Path, tmp_path: Path) -> None:
    from sphinx.testing.util import SphinxTestApp

    app = SphinxTestApp("html", srcdir=project, builddir=tmp_path / "build",
                        confoverrides={"jaxhlo_cache_dir": str(tmp_path / "cache")})
    try:
        app.build()
        deps = {str(Path(p).relative_to(project)) if Path(p).is_absolute() else str(p)
                for p in app.env.dependencies["index"]}
    finally:
        app.cleanup()
    assert "examples/second.py" in deps


def request(**changes: object) -> CompileRequest:
    base = CompileRequest(source="def f(x):\n    return x\n", function="f", specs=parse_args("f32[3]"),
                          target="cpu", static=(("n", "1"),), xla_flags=(("xla_flag", "1"),),
                          target_fingerprint="cpu-x86", versions=(("jax", "0.10.2"), ("jaxlib", "0.10.2")))
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("change", [
    {"source": "def f(x):\n    return x + 1\n"}, {"function": "g"}, {"specs": parse_args("f32[4]")},
    {"static": (("n", "2"),)}, {"target": "gpu:h100"}, {"target_fingerprint": "other"},
    {"xla_flags": ()}, {"versions": (("jax", "0.10.3"), ("jaxlib", "0.10.2"))},
    {"extras": ("stablehlo",)},
])
def test_every_key_part_invalidates(change: dict[str, object]) -> None:
    assert request(**change).cache_key() != request().cache_key()


def test_key_ignores_nothing_else() -> None:
    assert request().cache_key() == request().cache_key()


def test_round_trip_and_atomic_write(tmp_path: Path) -> None:
    cache = ReportCache(tmp_path)
    rep = Report(function="f", target="cpu", memory=Memory(temp_bytes=12))
    cache.put("ab" * 32, rep)
    assert cache.get("ab" * 32) == rep
    assert cache.get("cd" * 32) is None
    # nothing but the entry is left behind: no temporary files
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["ab", "ab" * 32 + ".json"]


def many_pages(src: Path, count: int) -> None:
    src.mkdir(parents=True)
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n')
    names = [f"page{i}" for i in range(count)]
    (src / "index.rst").write_text("Pages\n=====\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in names))
    for i, name in enumerate(names):
        (src / f"{name}.rst").write_text(
            f"Page {i}\n=======\n\n.. jax-hlo::\n   :args: f32[{64 + i},8]\n\n   import jax.numpy as jnp\n\n"
            f"   def f{i}(x):\n       return jnp.sum(jnp.cos(x) * {i + 1})\n")


def test_parallel_build_gives_the_same_html(tmp_path: Path) -> None:
    src = tmp_path / "src"
    many_pages(src, 8)
    outs = {}
    for jobs in ("1", "2"):
        result, log = sphinx_build(src, tmp_path / f"out{jobs}", tmp_path / f"cache{jobs}", "-j", jobs)
        assert result["rc"] == 0, log
        assert summary(log) == (8, 0), log
        outs[jobs] = {p.name: p.read_text() for p in (tmp_path / f"out{jobs}").glob("page*.html")}
    assert outs["1"] == outs["2"] and len(outs["1"]) == 8


def test_summary_counts_only_this_builds_documents(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = [sys.executable, "-c", BUILD, "-b", "html", "-D", f"jaxhlo_cache_dir={cache}", str(project),
            str(tmp_path / "out")]
    first = subprocess.run(args, capture_output=True, text=True, timeout=600).stdout
    assert summary(first) == (3, 0)
    (project / "other.rst").write_text((project / "other.rst").read_text() + "\nMore prose.\n")
    second = subprocess.run(args, capture_output=True, text=True, timeout=600).stdout
    assert summary(second) == (0, 1), second  # only other.rst was read again
    third = subprocess.run(args, capture_output=True, text=True, timeout=600).stdout
    assert "jax-hlo:" not in third, third


def test_rendered_html_is_reused_only_for_the_same_rendering(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    sphinx_build(project, tmp_path / "out1", cache)
    fragments = sorted(p.name for p in (cache / "html").rglob("*.html"))
    assert len(fragments) == 3  # one per example
    sphinx_build(project, tmp_path / "out2", cache)
    assert (tmp_path / "out1" / "index.html").read_text() == (tmp_path / "out2" / "index.html").read_text()
    assert sorted(p.name for p in (cache / "html").rglob("*.html")) == fragments
    # the reused HTML loads module texts from files: the new output folder has them too
    texts = module_texts(tmp_path / "out2" / "index.html")
    assert texts and all(script.is_file() and text.is_file() for _, script, text in texts)
    # a setting that changes the HTML gives new fragments, never a stale page
    sphinx_build(project, tmp_path / "out3", cache, "-D", "jaxhlo_hlo_collapsed=0")
    assert "<details class=\"jaxhlo-details jaxhlo-lazy\" open>" in (tmp_path / "out3" / "index.html").read_text()
    assert len(list((cache / "html").rglob("*.html"))) == 6


def test_module_texts_are_published_from_the_store_as_links_or_copies(tmp_path: Path, monkeypatch) -> None:
    """A cached rebuild into a new output folder puts each kept text beside the
    pages as a hard link (no new file to write), as a copy where links fail;
    either way readable by a web server, and the same bytes."""
    import os
    import stat

    from sphinx_jaxhlo.sphinxext import html as sphinx_html

    store = tmp_path / "cache" / "html" / "texts"
    text = "HloModule m\n\nENTRY %e (p: f32[4]) -> f32[4] {\n  ROOT %p = f32[4]{0} parameter(0)\n}\n"
    key = sphinx_html.write_text_files(tmp_path / "out1", text, "hlo", store)
    kept = {p.suffix: p for p in (store / key[:2]).iterdir()}
    for out in ("out1", "out2"):
        if out == "out2":
            assert sphinx_html.write_text_files(tmp_path / out, text, "hlo", store) == key
        for suffix in (".txt", ".js"):
            published = tmp_path / out / "_jaxhlo" / f"{key}{suffix}"
            assert os.path.samefile(published, kept[suffix]), (out, suffix)
            assert stat.S_IMODE(published.stat().st_mode) == 0o644
    first = (tmp_path / "out1" / "_jaxhlo" / f"{key}.js").read_bytes()

    def no_links(*args: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    assert sphinx_html.write_text_files(tmp_path / "out3", text, "hlo", store) == key
    for suffix, expected in ((".txt", text.encode()), (".js", first)):
        published = tmp_path / "out3" / "_jaxhlo" / f"{key}{suffix}"
        assert published.read_bytes() == expected and not os.path.samefile(published, kept[suffix])
        assert stat.S_IMODE(published.stat().st_mode) == 0o644


def test_an_output_folder_keeps_only_scripts_of_this_highlighting(tmp_path: Path) -> None:
    """A module text's file is named by the text, so an output folder built by an
    earlier release has a script of the same name with that release's highlighting
    (or form: it sent HTML); this build writes it again, with or without a cache,
    and leaves its own scripts alone."""
    import os

    from sphinx_jaxhlo.sphinxext import html as sphinx_html

    text = "HloModule m\n\nENTRY %e (p: f32[4]) -> f32[4] {\n  ROOT %p = f32[4]{0} parameter(0)\n}\n"
    old = 'window.jaxhloText&&window.jaxhloText("k",{"html": "<span class=\\"k\\">HloModule</span>"});\n'
    for store in (None, tmp_path / "cache" / "html" / "texts"):
        out = tmp_path / ("with-store" if store else "without")
        key = sphinx_html.text_key(text, "hlo")
        (out / "_jaxhlo").mkdir(parents=True)
        script = out / "_jaxhlo" / f"{key}.js"
        script.write_text(old)
        assert sphinx_html.write_text_files(out, text, "hlo", store) == key
        written = script.read_text()
        assert written.startswith("/*jaxhlo ") and '"spans": ["k", "HloModule"' in written, written[:200]
        inode = script.stat().st_ino
        assert sphinx_html.write_text_files(out, text, "hlo", store) == key
        assert script.stat().st_ino == inode and script.read_text() == written  # its own: kept
        if store is not None:  # and the deferred path, which takes the script from the store
            script.write_text(old)
            kept = store / key[:2] / f"{key}-{sphinx_html._highlighting_fingerprint()}.js"
            assert sphinx_html._publish(kept, script) and os.path.samefile(script, kept)


def test_highlighted_module_texts_are_kept_for_a_new_output_folder(tmp_path: Path, monkeypatch) -> None:
    from sphinx_jaxhlo.sphinxext import html as sphinx_html

    store = tmp_path / "cache" / "html" / "texts"
    text = "HloModule m\n\nENTRY %e (p: f32[4]) -> f32[4] {\n  ROOT %p = f32[4]{0} parameter(0)\n}\n"
    key = sphinx_html.write_text_files(tmp_path / "out1", text, "hlo", store)
    first = (tmp_path / "out1" / "_jaxhlo" / f"{key}.js").read_text()
    assert '"spans": ["k", "HloModule"' in first  # highlighted
    # a cached rebuild into a new output folder copies the script instead of highlighting again
    def no_highlighting(*args: object) -> list[str]:
        raise AssertionError("highlighted again")

    monkeypatch.setattr(sphinx_html, "highlighted_spans", no_highlighting)
    assert sphinx_html.write_text_files(tmp_path / "out2", text, "hlo", store) == key
    assert (tmp_path / "out2" / "_jaxhlo" / f"{key}.js").read_text() == first
    assert (tmp_path / "out2" / "_jaxhlo" / f"{key}.txt").read_text() == text
    # new highlighting code (or another Pygments) never reuses what the old one made
    monkeypatch.setattr(sphinx_html, "_highlighting_fingerprint", lambda: "other")
    with pytest.raises(AssertionError, match="highlighted again"):
        sphinx_html.write_text_files(tmp_path / "out3", text, "hlo", store)
