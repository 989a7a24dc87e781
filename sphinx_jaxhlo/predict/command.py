"""``python -m sphinx_jaxhlo predict FILE.py:FUNCTION --args ... --targets ...``: the guide's answer, no compile.

Runs the file in this process (it is traced, never compiled nor called: ``jax.make_jaxpr`` with the
argument shapes), then prints one line per target: stored, fused or "compile it" (an answer that is
not certain says so, with its rule's measured record), the rule's anchor and why; with ``--json`` the
answers as a JSON object keyed by target.  Exit codes: 0 when every target answered (certain or not),
3 when a target's answer is "compile it" (the rules do not decide: the printed command compiles it),
2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import types
from collections.abc import Sequence
from pathlib import Path

EXIT_OK, EXIT_BAD_INPUT, EXIT_UNCERTAIN = 0, 2, 3
DEFAULT_TARGETS = "cpu, gpu:h100, tpu:v5e"


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{prog} predict",
        description="Will XLA write the table a reduction reads to memory? The guide's rules answer from "
                    "the function's jaxpr (traced, not compiled), per target, and name the rule.")
    parser.add_argument("example", metavar="FILE.py:FUNCTION", help="the function to predict")
    parser.add_argument("--args", default="", help='argument specs, as for a compile: "f32[4096,4096], f32[4096]"')
    parser.add_argument("--targets", default=DEFAULT_TARGETS,
                        help=f"comma-separated targets (default: {DEFAULT_TARGETS}); gpu:h100xN and tpu:v5e-N "
                             "take their one-device rules")
    parser.add_argument("--json", action="store_true", help="print the answers as JSON")
    return parser


def main(argv: Sequence[str], prog: str = "python -m sphinx_jaxhlo") -> int:
    """Run ``predict``; returns the exit status."""
    parser = build_parser(prog)
    ns = parser.parse_args(list(argv))
    path, _, name = ns.example.rpartition(":")
    if not path or not name.isidentifier():
        path, name = ns.example, ""
    targets = [t.strip() for t in ns.targets.split(",") if t.strip()]
    try:
        from .front import base_target, predict_call

        for target in targets:
            base_target(target)
        source = Path(path).read_text(encoding="utf-8")
        module = types.ModuleType("jaxhlo_predict_main")
        module.__file__ = path
        exec(compile(source, path, "exec"), module.__dict__)
        if not name:
            functions = [k for k, v in module.__dict__.items() if isinstance(v, types.FunctionType)
                         and v.__module__ == module.__name__]
            if not functions:
                raise ValueError(f"{path} defines no function")
            name = functions[-1]
        fn = module.__dict__.get(name)
        if not callable(fn):
            raise ValueError(f"{path} has no function {name!r}")
    except (OSError, SyntaxError, ValueError) as exc:
        print(f"{prog} predict: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    answers = {}
    for target in targets:
        command = (f"{prog} {shlex.quote(f'{path}:{name}')} --args {shlex.quote(ns.args)} "
                   f"--targets {target}")
        try:
            answers[target] = predict_call(fn, ns.args, target, command)
        except Exception as exc:  # a program that does not trace: the user's error, said plainly
            print(f"{prog} predict: {target}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    if ns.json:
        print(json.dumps({t: a.to_dict() for t, a in answers.items()}, indent=1, sort_keys=True))
    else:
        for target, answer in answers.items():
            print(f"{target}: {answer.verdict}" + (f" ({answer.where})" if answer.where else "")
                  + (f", not certain ({answer.record})" if answer.record else "")
                  + f"  [{answer.rule}]")
            if answer.table:
                print(f"  table: {answer.table}")
            print(f"  why: {answer.why}")
            if answer.where_why:
                print(f"  where: {answer.where_why}")
            if answer.command:
                print(f"  {'compile it' if not answer.answered else 'to be sure, compile it'}: {answer.command}")
    return EXIT_OK if all(a.answered for a in answers.values()) else EXIT_UNCERTAIN
