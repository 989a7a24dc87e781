"""A build sets the heap it starts with aside from the garbage collector while it reads
and writes pages (``gc.freeze``), and gives it back when it ends: a process that
builds again (a test session, a server) keeps nothing frozen from one build to the next."""

from __future__ import annotations

import gc
import textwrap
from pathlib import Path

from sphinx.cmd.build import build_main

PROBE = textwrap.dedent("""\
    import gc

    SEEN = []

    def setup(app):
        app.connect("doctree-read", lambda app, doctree: SEEN.append(gc.get_freeze_count()))
        return {"parallel_read_safe": True}
    """)


def test_the_starting_heap_is_frozen_while_pages_are_read_and_given_back_after(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "heap_probe.py").write_text(PROBE)
    (src / "conf.py").write_text('import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n'
                                 'extensions = ["sphinx_jaxhlo", "heap_probe"]\njaxhlo_targets = ["cpu"]\n')
    (src / "index.rst").write_text("Heap\n====\n\nProse only.\n")
    gc.unfreeze()
    assert build_main(["-q", "-E", "-b", "html", str(src), str(tmp_path / "out")]) == 0
    import heap_probe  # the copy Sphinx loaded

    try:
        assert heap_probe.SEEN and all(count > 0 for count in heap_probe.SEEN)
        assert gc.get_freeze_count() == 0
    finally:
        import sys

        sys.modules.pop("heap_probe", None)
        sys.path[:] = [p for p in sys.path if p != str(src)]


def test_a_host_that_froze_its_own_heap_keeps_it_frozen(tmp_path: Path) -> None:
    """A process that froze objects before the build (a server that forks after ``gc.freeze``)
    finds them frozen after it: the build neither adds to them nor gives them back (a few of them may
    have been freed meanwhile, as any object can be)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_jaxhlo"]\njaxhlo_targets = ["cpu"]\n')
    (src / "index.rst").write_text("Heap\n====\n\nProse only.\n")
    gc.unfreeze()
    kept = [object() for _ in range(10)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        assert build_main(["-q", "-E", "-b", "html", str(src), str(tmp_path / "out")]) == 0
        assert 0.99 * frozen <= gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
        del kept
