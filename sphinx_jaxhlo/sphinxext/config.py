"""The ``jaxhlo_*`` settings in a Sphinx build: registered from
:data:`~sphinx_jaxhlo.core.settings.SETTINGS`, checked once when the
configuration is read (a bad value warns ``jaxhlo.config`` at its line of
``conf.py`` and falls back to its default), then read into the build's one
:class:`~sphinx_jaxhlo.core.settings.Settings`."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging

from sphinx_jaxhlo.core import targets as targets_mod
from sphinx_jaxhlo.core.settings import MODE_VARIABLE, SETTINGS, SNAPSHOT_MODES, Settings, as_list
from sphinx_jaxhlo.sphinxext.builds import remember_client
from sphinx_jaxhlo.sphinxext.compat import shows_warning_types
from sphinx_jaxhlo.sphinxext.state import build_state
from sphinx_jaxhlo.store.cache import is_url

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

logger = logging.getLogger(__name__)


def register(app: Sphinx) -> None:
    for setting in SETTINGS:
        app.add_config_value(setting.name, setting.default, setting.rebuild,  # type: ignore[arg-type]
                             types=frozenset(setting.types))


def setting_location(app: Sphinx, name: str) -> str | None:
    """Where a setting was given: the line of conf.py that assigns it, or conf.py
    itself when the value came from elsewhere (``-D`` on the command line);
    ``None`` without a conf.py."""
    conf = Path(app.confdir) / "conf.py" if app.confdir else None
    if conf is None or not conf.is_file():
        return None
    try:
        lines = conf.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    assignment = re.compile(rf"\s*{re.escape(name)}\s*(?::[^=]*)?=(?!=)")
    number = next((i for i, line in enumerate(lines, 1) if assignment.match(line)), None)
    return f"{conf}:{number}" if number else f"{conf}:"


def _warn(app: Sphinx, name: str, message: str, *args: object) -> None:
    logger.warning("jax-hlo: " + message, *args, type="jaxhlo", subtype="config",
                   location=setting_location(app, name))


def check_config(app: Sphinx, config: Config) -> None:
    """``config-inited``: check every setting, then read them into the build's :class:`Settings`."""
    state = build_state(app)
    state.recorder.add_type = not shows_warning_types(config)
    for setting in SETTINGS:
        value = config[setting.name]
        if isinstance(value, str) and setting.default is None and str not in setting.types:
            # `-D jaxhlo_workers=2`: Sphinx leaves a value whose default is None as text
            for kind in (int, float):
                if kind in setting.types:
                    try:
                        config[setting.name] = value = kind(value)
                        break
                    except ValueError:
                        continue
        problem = setting.problem(value)
        if problem:
            default = f"the default {setting.default!r}" if setting.default is not None else "the default (None)"
            _warn(app, setting.name, "%s; using %s", problem, default)
            config[setting.name] = setting.default
    config.numfig_format.setdefault("jax-hlo", "Example %s")
    mode = os.environ.get(MODE_VARIABLE, "").strip()
    if mode:
        # set at config-inited, so switching modes reads every document again
        if mode in SNAPSHOT_MODES:
            config.jaxhlo_snapshot_mode = mode
        else:
            _warn(app, "jaxhlo_snapshot_mode", "%s=%r is not one of %s; using jaxhlo_snapshot_mode=%r",
                  MODE_VARIABLE, mode, ", ".join(SNAPSHOT_MODES), config.jaxhlo_snapshot_mode)
    if config.jaxhlo_executor is not None and not isinstance(config.jaxhlo_executor, str):
        # a distributed.Client made in conf.py: kept aside, named by its address
        # (it cannot be pickled with the environment)
        config.jaxhlo_executor = remember_client(app, config.jaxhlo_executor)
    if config.jaxhlo_cache_dir and is_url(config.jaxhlo_cache_dir):
        try:
            import fsspec  # noqa: F401
        except ImportError:
            _warn(app, "jaxhlo_cache_dir", "jaxhlo_cache_dir is a URL (%s) but fsspec is not installed "
                  "(pip install 'sphinx-jaxhlo[remote]'); using the local cache", config.jaxhlo_cache_dir)
            config.jaxhlo_cache_dir = None
    for name in as_list(config.jaxhlo_targets):
        if name.lower() not in targets_mod.TARGETS:
            _warn(app, "jaxhlo_targets", "jaxhlo_targets: unknown target %r (known: %s)", name,
                  ", ".join(targets_mod.TARGETS))
    state.settings = Settings.from_config(config)
