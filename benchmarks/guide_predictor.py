"""The guide's predictor, as the benchmark scripts use it: the rules themselves live in the package.

``sphinx_jaxhlo.predict`` holds the rules (one table, :mod:`sphinx_jaxhlo.predict.rules`; the code
that applies them, :mod:`sphinx_jaxhlo.predict.front` and the per-target modules).  This module only
names what ``guide_predictor_family.py``, ``guide_predictor_holdout.py`` and
``guide_predictor_findings.py`` import, so that there is no second copy of a rule.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sphinx_jaxhlo.predict.answer import Prediction  # noqa: E402
from sphinx_jaxhlo.predict.front import TARGETS, load_function, predict, structs_of  # noqa: E402
from sphinx_jaxhlo.predict.h100 import ReductionShape, h100_times  # noqa: E402
from sphinx_jaxhlo.predict.rules import RULES  # noqa: E402

__all__ = ["ANCHORS", "TARGETS", "Prediction", "ReductionShape", "h100_times", "load_function", "predict",
           "structs_of"]

#: The guide's anchors, by target (``all``: every target's), in the guide's order.
ANCHORS: dict[str, tuple[str, ...]] = {}
for _rule in RULES:
    ANCHORS[_rule.target] = (*ANCHORS.get(_rule.target, ()), _rule.anchor)
