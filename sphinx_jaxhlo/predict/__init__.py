"""The guide's rules as code: will XLA write the table a reduction reads to memory?

``sphinx_jaxhlo.predict(fn, *arg_specs, target="gpu:h100")`` answers from the function's jaxpr
(``jax.make_jaxpr``; nothing is lowered or compiled) for ``cpu``, ``gpu:h100`` and ``tpu:v5e``, and
names the section of the guide's predictor page whose rule decided
(:class:`~sphinx_jaxhlo.predict.answer.Prediction`).  Where no rule decides, or a stated limit of the
rules applies (the H100 cost model near its break-even among them), it says so (``stored=None``) and
gives the compile that answers.  An answer is ``certain`` only where its rule's measured records are
trusted, on the programs measured and on those it had not seen (:mod:`.calibration`, from the table the
benchmark ``benchmarks/guide_predictor_calibrate.py`` writes); otherwise it keeps its True or False and
says its record on unseen programs and the compile that makes it sure.

The package module itself is callable (``sphinx_jaxhlo.predict(...)`` is :func:`predict`).  Importing
it does not import jax: the answer's type (:mod:`.answer`) is what a report stores, read back from a
snapshot without tracing; the rules (:mod:`.graph`, :mod:`.cpu`, :mod:`.h100`, :mod:`.tpu`,
:mod:`.front`) are imported on the first call.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .answer import NEAR_BREAK_EVEN, PAGE, Prediction

__all__ = ["NEAR_BREAK_EVEN", "PAGE", "Prediction", "predict"]


def predict(fn: Any, *arg_specs: Any, target: str = "cpu", **kwarg_specs: Any) -> Prediction:
    """Will XLA write the table to memory on ``target``, by the guide's rules?

    See :func:`sphinx_jaxhlo.predict.front.predict` (the arguments are the same).
    """
    from .front import predict as run

    return run(fn, *arg_specs, target=target, **kwarg_specs)


class _CallableModule(types.ModuleType):
    """This module, callable: ``sphinx_jaxhlo.predict(fn, ...)`` calls :func:`predict`."""

    def __call__(self, fn: Any, *arg_specs: Any, target: str = "cpu", **kwarg_specs: Any) -> Prediction:
        return predict(fn, *arg_specs, target=target, **kwarg_specs)


sys.modules[__name__].__class__ = _CallableModule
