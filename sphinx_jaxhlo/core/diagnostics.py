"""Every warning the extension emits: type ``jaxhlo``, one subtype per cause.

Each is reported at the document and line of the example (for errors inside
the example, its own line mapped into the document), and the page shows an
error box or a mark in place of the missing result; a bad setting at its line
of conf.py, a missing compiler at the first example that needed it.  Silence one with
``suppress_warnings = ["jaxhlo.<subtype>"]``; the docs' warnings reference is
generated from :data:`SUBTYPES`.
"""

from __future__ import annotations

SUBTYPES: dict[str, str] = {
    "args": "The ``:args:`` value is malformed (unknown dtype, bad dimension, bad syntax), or the function "
            "cannot be called with those arguments (wrong count, unknown keyword); or the arguments do not fit "
            "the mesh: a malformed ``:mesh:``, a mesh that does not span a target's devices, a partition spec "
            "naming an axis the mesh lacks, or a dimension its axes do not divide.",
    "option": "Another option is malformed: an expectation value such as ``lots`` for a size, ``:static:`` "
              "that is not a Python literal, an unknown ``:show:`` part, a bad ``:timeout:``.",
    "file": "The file argument cannot be read: missing, not UTF-8, or outside the source directory.",
    "empty": "The example has no code (empty, or only comments).",
    "syntax": "The example is not valid Python.",
    "example": "Running the example's module raised an exception (an import that fails, a NameError...).",
    "function": "The function to compile is not defined, is not callable, or the example defines none.",
    "trace": "Tracing the function with the argument specs raised an exception (a shape mismatch...).",
    "compile": "XLA refused to compile the function for a target and the example did not expect it "
               "(``:expect-error:`` turns an expected failure into the rendered result).",
    "expectation": "A stated expectation (``:expect-max-temp:``, ``:expect-reduction:``...) does not hold "
                   "for a target: the guide's claim and the compiler disagree.",
    "unresolved": "A claim over a sweep's range (``for CONDITION``, or ``:expect-flip:``) that no compile could "
                  "settle: it held at every size compiled, but its range holds sizes between two neighbours nothing "
                  "looked at, or no size the sweep compiled at all. Not a pass; the message names the sizes.",
    "timeout": "Compiling took longer than ``:timeout:`` / ``jaxhlo_timeout``; the worker was stopped.",
    "crash": "The compile worker died (a crash inside XLA, or an example that ended its own process); "
             "the message names the signal.",
    "target": "An unknown target name, or (once per build) a target whose compiler is not installed, "
              "naming the command that installs it, or that the installed jax cannot compile for "
              "(a release outside the supported range, a description its XLA refuses), naming the versions.",
    "config": "A ``jaxhlo_*`` setting has a bad value; its default is used instead.",
    "snapshot": "A snapshot (``jaxhlo_snapshot_dir``) cannot serve this example: none was made, it was made "
                "for another version of the example (source, ``:args:``, options or target changed), or its "
                "files are damaged; in ``check`` mode also one that differs from what this build compiled.",
    "hardware": "A hardware record in ``jaxhlo_hardware_dir`` cannot be read (not JSON, not of the record's "
                "form, a second record of one target); reported once, at the first example that would show it. "
                "The pages show no measurement from it.",
    "drift": "A report differs from the one stored before it (a snapshot, or the cache's last report of the "
             "example) by more than ``jaxhlo_drift_tolerance`` in temp memory, or in its verdict: a toolchain "
             "upgrade moved a claim. The message gives both figures and both versions.",
    "predict": "On a page named by ``jaxhlo_guide_pages``, the guide's rule (:mod:`sphinx_jaxhlo.predict`) and "
               "XLA disagree about an example's largest table: the guide contradicts its own example. The message "
               "names the rule and what each said. An example that shows a limit of the rules the page states marks it "
               "with ``:guide-limit:`` (every function; or ``f, g@tpu:v5e``), or with a comment ``# jaxhlo: "
               "guide-limit`` in its code. A mark ``f@target`` the rule now agrees with, or leaves to the compile, "
               "warns too: the limit it states is gone.",
    "cache": "A cache entry was refused (not a valid report, or a report of another example) and compiled "
             "again, or a cache at a URL could not be read or written.",
    "chunk": "A ``:chunk:`` variant cannot be made or trusted: the option is malformed or names an argument "
             "the function lacks, the proof on the jaxpr refuses the rewrite (the message names the operation "
             "and its line), or the numerical check on small inputs finds different results.",
    "grad": "A ``:grad:`` variant cannot be made: the option is malformed, or names an argument (or a "
            "position) the function lacks.  A gradient that fails to trace (an argument of integer dtype) is a "
            "``trace`` warning of the variant.",
    "sweep": "The ``:sweep:`` value is malformed (a size that is not a positive integer, a range that does not go "
             "up, a symbol given twice, a tie to a symbol not swept, more than two symbols swept independently, "
             "too many points), or names a symbol that is neither a size of ``:args:`` nor a parameter of the "
             "function.",
    "internal": "A bug in sphinx-jaxhlo; please report it with the example.",
}
