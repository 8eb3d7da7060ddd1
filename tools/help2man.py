#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write collsim's man pages from its --help texts, so they cannot drift.

Usage: help2man.py COLLSIM VERSION OUTDIR COMMAND...

Runs `COLLSIM --help` and `COLLSIM COMMAND --help` and writes OUTDIR/collsim.1
and OUTDIR/collsim-COMMAND.1: NAME (from the one-line summary `collsim
--help` gives each command), SYNOPSIS (the help's Usage lines), DESCRIPTION
(the rest, verbatim in a no-fill block: the help is already laid out in
columns), SEE ALSO. Fails when the COMMAND list given here (meson's) and
the commands `collsim --help` lists differ, so a new command cannot lack
its page. Output depends only on the help texts and VERSION.
"""

import os
import re
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def roff_escape(line):
    line = line.replace("\\", "\\e")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line.replace("-", "\\-")


def page(name, section_title, summary, usage, body, version, see):
    out = [f'.TH {name.upper()} 1 "" "collsim {version}" "{section_title}"',
           ".SH NAME", f"{name} \\- {roff_escape(summary)}", ".SH SYNOPSIS", ".nf"]
    out += [roff_escape(u) for u in usage]
    out += [".fi", ".SH DESCRIPTION", ".nf"]
    out += [roff_escape(b) if b.strip() else "" for b in body]
    out += [".fi", ".SH SEE ALSO", ", ".join(f"\\fB{s}\\fR(1)" for s in see)]
    return "\n".join(out) + "\n"


def split_help(text):
    """Usage lines (the first paragraph) and the rest."""
    lines = text.rstrip("\n").split("\n")
    k = 0
    while k < len(lines) and lines[k].strip():
        k += 1
    usage = [re.sub(r"^Usage: ", "", line) for line in lines[:k]]
    rest = lines[k + 1:] if k < len(lines) else []
    return usage, rest


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: help2man.py COLLSIM VERSION OUTDIR COMMAND...")
    collsim, version, outdir, commands = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    top = run([collsim, "--help"])
    listed = {}
    in_cmds = False
    for line in top.split("\n"):
        if line.startswith("Commands:"):
            in_cmds = True
        elif in_cmds and line.startswith("  ") and line.strip():
            name, summary = line.strip().split(None, 1)
            listed[name] = summary
        elif in_cmds and not line.strip():
            in_cmds = False
    if sorted(listed) != sorted(commands):
        sys.exit(f"help2man: collsim --help lists {sorted(listed)}, meson {sorted(commands)}")
    see = ["collsim"] + [f"collsim-{c}" for c in commands]
    usage, body = split_help(top)
    with open(os.path.join(outdir, "collsim.1"), "w") as f:
        f.write(page("collsim", "collsim manual",
                     "simulate NCCL collectives and distributed training (DDP, FSDP, TP, PP)", usage, body,
                     version, see[1:]))
    for c in commands:
        usage, body = split_help(run([collsim, c, "--help"]))
        with open(os.path.join(outdir, f"collsim-{c}.1"), "w") as f:
            f.write(page(f"collsim-{c}", "collsim manual", listed[c], usage, body, version,
                         [s for s in see if s != f"collsim-{c}"]))


if __name__ == "__main__":
    main()
