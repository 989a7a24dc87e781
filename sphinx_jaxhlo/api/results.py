"""What the API's two kinds of result share: :class:`~sphinx_jaxhlo.api.reports.Reports` (one
function on each target) and :class:`~sphinx_jaxhlo.api.sweep_reports.SweepReports` (the same at
each size of a sweep) print as text, show as HTML in Jupyter, round-trip through JSON and check
the directive's claims, each in the same way, written here once.

A claim is a keyword named as the directive's option without ``expect-`` (``max_temp=`` for
``:expect-max-temp:``), so the API takes every claim the directive takes
(:data:`sphinx_jaxhlo.core.expectations.OPTIONS`).  Nothing here compiles or imports jax.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from sphinx_jaxhlo.core import expectations as exp

__all__ = ["Analysed", "claim_options", "raise_failed"]

_Self = TypeVar("_Self", bound="Analysed")


class Analysed(ABC):
    """The shared half of a result: display, JSON and claims; the rest is each kind's own."""

    #: What the JSON is called in its errors (``reports``, ``sweep``).
    json_name: ClassVar[str] = ""

    @property
    @abstractmethod
    def title(self) -> str:
        """``with_dot(f32[100000,3], f32[50000,3])``: what the result is of."""

    @abstractmethod
    def to_text(self) -> str:
        """The text ``str()`` gives."""

    @abstractmethod
    def to_html(self, *, full_page: bool = False, script: bool = True) -> str:
        """The directive's rendering as self-contained HTML (inline CSS and script)."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The JSON form, as plain data."""

    @classmethod
    @abstractmethod
    def from_dict(cls: type[_Self], data: Mapping[str, Any]) -> _Self:
        """Rebuild from :meth:`to_dict`; raises ``ValueError`` on anything else."""

    @abstractmethod
    def evaluate_options(self, options: Mapping[str, str]) -> tuple[list[exp.Check], list[str]]:
        """Check claims given as the directive's options (``{"expect-max-temp": "cpu=25GB"}``)
        without raising: ``(outcomes, problems)``, every reason the check fails in words."""

    def checked_what(self) -> str:
        """What a failed check names: the title, and for a sweep its sizes."""
        return self.title or "(function)"

    # -- display ----------------------------------------------------------------------------

    def __str__(self) -> str:
        return self.to_text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's text display
        printer.text(repr(self) if cycle else self.to_text().rstrip("\n"))

    def _repr_html_(self) -> str:
        return self.to_html()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Analysed)
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    # -- JSON -------------------------------------------------------------------------------

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as JSON text (the command line's ``--json``)."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=indent)

    @classmethod
    def from_json(cls: type[_Self], text: str) -> _Self:
        """Rebuild from :meth:`to_json` (or the command line's ``--json``)."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"malformed {cls.json_name} JSON: {exc}") from exc
        return cls.from_dict(data)

    # -- claims -----------------------------------------------------------------------------

    def evaluate(self, **claims: Any) -> tuple[list[exp.Check], list[str]]:
        """:meth:`check` without raising: ``(outcomes, problems)``.

        :raises TypeError: a keyword that is no claim.
        :raises ValueError: a malformed claim or an unknown target name.
        """
        try:
            return self.evaluate_options(claim_options(claims))
        except exp.ExpectationSyntaxError as exc:  # said as the API spells a claim: max_device=
            raise ValueError(exc.spelled(exp.claim_keyword)) from None

    def check(self: _Self, **claims: Any) -> _Self:
        """Assert what the compiler did, for test suites.

        Each keyword is a claim the directive takes as ``:expect-<name>:`` (``-`` written ``_``):
        ``max_temp``, ``min_temp``, ``max_peak``, ``max_device``, ``reduction``, ``materialized``,
        ``error``, ``collectives``, ``kernels``, ``peak_top`` and, over a sweep, ``flip``; its value is what the
        option takes: a bare value for every target, ``target=value`` pairs
        (``"cpu=25GB, gpu:h100=64MiB"``) or a ``{target: value}`` dict; sizes may also be ints
        (bytes).  ``max_device`` bounds what the device holds (arguments, outputs, temp and code,
        less what is aliased: a TPU's HBM); ``max_peak`` XLA's own peak, which on a TPU counts the
        chip's own memory and leaves out code; ``peak_top`` names the largest buffer live at the
        peak by the operation that made it (``"dot_general"``, ``"argument a"``), its line
        (``"line 4"``) or both (``"dot_general on line 4"``).

        :return: ``self``, so ``analyze(...).check(...)`` can be printed.
        :raises AssertionError: listing, per target (and point), what was expected and what was
            found; also when a target produced no report, when a compile failed without
            ``error=``, or when a claim names a target that was not compiled.
        :raises TypeError: a keyword that is no claim.
        :raises ValueError: a malformed claim or an unknown target name.
        """
        outcomes, problems = self.evaluate(**claims)
        raise_failed(self.checked_what(), outcomes, problems)
        return self


def claim_options(claims: Mapping[str, Any]) -> dict[str, str]:
    """``{"max_temp": "64MiB"}`` -> ``{"expect-max-temp": "64MiB"}``: the API's keywords as the
    directive's options (``None`` values left out).

    :raises TypeError: a keyword that is no claim.
    """
    options: dict[str, str] = {}
    for key, value in claims.items():
        option = "expect-" + key.replace("_", "-")
        if option not in exp.OPTIONS:
            known = ", ".join(o.removeprefix("expect-").replace("-", "_") for o in exp.OPTIONS)
            raise TypeError(f"check() got an unexpected keyword {key!r} (the claims: {known})")
        if value is not None:
            options[option] = _expectation_text(value)
    return options


def raise_failed(what: str, outcomes: Sequence[exp.Check], problems: Sequence[str]) -> None:
    """Raise the ``AssertionError`` of a failed ``check()`` (nothing when no claim failed):
    each problem on a line of its own, and how many other claims held."""
    if not problems:
        return
    held = sum(o.passed for o in outcomes)
    lines = [f"jax-hlo check failed for {what}:", *(f"  - {p}" for p in problems)]
    if held:
        lines.append(f"  ({held} other expectation(s) held)")
    raise AssertionError("\n".join(lines))


def _expectation_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_expectation_text(v)}" for k, v in value.items())
    if isinstance(value, bool):
        raise ValueError(f"expected a size, a word or a shape, not {value!r}")
    return str(value)
