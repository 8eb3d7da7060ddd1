# SPDX-License-Identifier: MIT
"""collsim from Python: collective(), memory(), simulate(), plan(), crossover().

Each function runs the collsim program with ``--format json`` and returns the
document as a dict (layouts: docs/json-output.md), after checking its
``"format"`` and ``"version"``. Keyword arguments are the command's options:
``ranks=64`` is ``--ranks 64``, ``micro_batch=2`` is ``--micro-batch 2``, a list
is comma-joined (``strategy=["ddp", "zero3"]``), ``True`` is a flag, ``None``
or ``False`` leaves the option out. Standard library only.

    >>> import collsim
    >>> r = collsim.collective("all_reduce", bytes="1GiB", cluster="dgx-a100", nodes=4)
    >>> r["rows"][0]["busbw_GBps"]
    >>> m = collsim.memory(model="llama2-70b", ranks=64, strategy=["ddp", "FULL_SHARD"])
    >>> [(row["strategy"], row["fits"]) for row in m["rows"]]

Why the CLI's JSON and not ctypes over libcollsim: the library's interface
passes value structs (cs_cluster, cs_model, cs_training: dozens of fields,
arrays of links, enums from X-macro tables) that ctypes would have to mirror
field by field, and they change whenever the model grows (issue 10 rewrites
the compute model now); a mirror that is one field behind reads garbage
silently. The JSON documents are versioned, documented and tested
(tests/cli.sh), name their units, and a layout this module does not know is
refused by its version, not misread. The cost is a process per call (a few
milliseconds; a crossover sweep is one call), which is small next to what a
simulated iteration costs, and errors come back as the CLI's own messages
(file:line:column for a bad YAML).

The program: the ``collsim=`` argument, else the ``COLLSIM`` environment
variable, else ``collsim`` on PATH.
"""

import json
import os
import shutil
import subprocess

VERSION = 1  # the JSON layout version this module reads (CS_JSON_VERSION)
# layouts that moved on alone, each with the versions read: crossover 2
# (each point at the micro-batch and checkpointing it chose, one global
# batch) and 3 (CS_SWEEP_JSON_VERSION: with --tp / --pp lists, points and
# crossings carry their layout: tp, pp; tp_a, pp_a, tp_b, pp_b)
VERSIONS = {"crossover": (2, 3)}

__all__ = ["CollsimError", "collective", "memory", "simulate", "plan", "crossover", "run",
           "options"]


class CollsimError(RuntimeError):
    """collsim refused the request or failed: returncode (2 bad usage or
    configuration, 1 output not written) and its stderr message."""

    def __init__(self, returncode, message):
        super().__init__(message.strip() or f"collsim exited with {returncode}")
        self.returncode = returncode
        self.message = message


def _program(collsim):
    path = collsim or os.environ.get("COLLSIM") or shutil.which("collsim")
    if not path:
        raise CollsimError(127, "collsim not found: pass collsim=PATH, set COLLSIM or put it on PATH")
    return path


def _value(v):
    if isinstance(v, (list, tuple)):
        return ",".join(_value(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def options(**kw):
    """The command-line words for keyword options (see the module doc)."""
    words = []
    for key, v in kw.items():
        if v is None or v is False:
            continue
        flag = "--" + key.rstrip("_").replace("_", "-")
        if v is True:
            words.append(flag)
        else:
            words += [flag, _value(v)]
    return words


def run(command, *positional, collsim=None, **kw):
    """Runs `collsim COMMAND [POSITIONAL...] [options] --format json`; returns
    the JSON document, checked to be collsim-COMMAND of this VERSION."""
    argv = [_program(collsim), command] + [str(p) for p in positional] + options(**kw)
    argv += ["--format", "json"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise CollsimError(p.returncode, p.stderr)
    return _check(json.loads(p.stdout), command)


def _check(doc, command):
    want = "collsim-" + command
    if not isinstance(doc, dict) or doc.get("format") != want:
        raise CollsimError(0, f"expected a {want} document, got format {doc.get('format')!r}"
                           if isinstance(doc, dict) else f"expected a {want} document")
    versions = VERSIONS.get(command, (VERSION,))
    if doc.get("version") not in versions:
        raise CollsimError(0, f"{want} version {doc.get('version')!r}: this module reads "
                              f"version {' or '.join(str(v) for v in versions)}")
    return doc


def collective(op, bytes=None, *, collsim=None, **kw):
    """One collective per size: `collsim collective --op OP [--bytes SIZE]`
    (or min=, max=, factor= for a sweep); cluster=, ranks=, nodes=, algo=,
    proto=, engine=, dtype=. Returns {"format", "version", "title", "rows"}."""
    return run("collective", collsim=collsim, op=op, bytes=bytes, **kw)


def memory(scenario=None, *, collsim=None, **kw):
    """Per-GPU memory: `collsim memory [SCENARIO]`; model=, params=,
    strategy=, ranks=, micro_batch=, checkpointing=, ... Returns {"rows": ...}."""
    return run("memory", *([scenario] if scenario else []), collsim=collsim, **kw)


def simulate(scenario=None, *, collsim=None, **kw):
    """One simulated training iteration per strategy: `collsim simulate`."""
    return run("simulate", *([scenario] if scenario else []), collsim=collsim, **kw)


def plan(scenario=None, *, collsim=None, **kw):
    """The recommended strategy, micro-batch and checkpointing: `collsim plan`."""
    return run("plan", *([scenario] if scenario else []), collsim=collsim, **kw)


def crossover(scenario=None, *, collsim=None, **kw):
    """A P x N x strategies sweep and its crossings: `collsim crossover`;
    ranks=[8, 64], params="1e8:1e11:31" or models=[...], strategies=[...],
    global_batch=1024 (each strategy at its fastest micro-batch and
    checkpointing; micro_batch= / checkpointing= pin them)."""
    return run("crossover", *([scenario] if scenario else []), collsim=collsim, **kw)
