# SPDX-License-Identifier: MIT
"""Tests of python/collsim.py against the collsim it is given (COLLSIM=...):
every function returns the CLI's own numbers (compared with its CSV), the
option words, errors with the CLI's message, and a document of another
format or version refused (a deliberately wrong document must be told
apart). Run: COLLSIM=build/cli/collsim python3 python/test_collsim.py
(meson test python does)."""

import csv
import io
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collsim  # noqa: E402

COLLSIM = os.environ.get("COLLSIM", "build/cli/collsim")


def cli_csv(*args):
    out = subprocess.run([COLLSIM, *args, "--format", "csv"], check=True, capture_output=True,
                         text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


class Options(unittest.TestCase):
    def test_words(self):
        self.assertEqual(collsim.options(ranks=64, micro_batch=2, strategy=["ddp", "zero3"],
                                         model_states_only=True, trace=None, plot=False),
                         ["--ranks", "64", "--micro-batch", "2", "--strategy", "ddp,zero3",
                          "--model-states-only"])
        self.assertEqual(collsim.options(params=1.5e9, min_="1K"), ["--params", "1500000000.0",
                                                                   "--min", "1K"])


class Commands(unittest.TestCase):
    def test_collective_is_the_cli_s(self):
        r = collsim.collective("all_gather", min="1K", max="64M", factor=16, ranks=16,
                               collsim=COLLSIM)
        want = cli_csv("collective", "--op", "all_gather", "--min", "1K", "--max", "64M",
                       "--factor", "16", "--ranks", "16")
        self.assertEqual(r["format"], "collsim-collective")
        self.assertEqual(len(r["rows"]), len(want))
        for got, w in zip(r["rows"], want):
            self.assertEqual(got["size_bytes"], float(w["size_bytes"]))
            self.assertAlmostEqual(got["busbw_GBps"], float(w["busbw_GBps"]), places=4)
            self.assertEqual(got["algo"], w["algo"])

    def test_memory_and_simulate(self):
        m = collsim.memory(model="gpt3-1.3b", ranks=8, strategy=["ddp", "FULL_SHARD"],
                           collsim=COLLSIM)
        self.assertEqual([x["strategy"] for x in m["rows"]], ["ddp", "fsdp_full_shard"])
        ddp, fs = m["rows"]
        self.assertLess(fs["model_states_bytes"], ddp["model_states_bytes"])
        s = collsim.simulate(model="gpt2-124m", ranks=8, zero=3, global_batch=32,
                             collsim=COLLSIM)
        want = cli_csv("simulate", "--model", "gpt2-124m", "--ranks", "8", "--zero", "3",
                       "--global-batch", "32")
        self.assertEqual(s["format"], "collsim-simulate")
        self.assertAlmostEqual(s["rows"][0]["tokens_per_s"], float(want[0]["tokens_per_s"]),
                               places=1)

    def test_plan_and_crossover(self):
        p = collsim.plan(model="gpt2-124m", ranks=8, strategy="ddp", collsim=COLLSIM)
        self.assertEqual({c["strategy"] for c in p["configs"]}, {"ddp"})
        self.assertIsNotNone(p["recommendation"])
        x = collsim.crossover(ranks=[8, 16], params="1e8:1e9:3", collsim=COLLSIM)
        self.assertEqual(x["format"], "collsim-crossover")
        self.assertEqual(x["version"], 2)  # no layout lists: the version 2 shape
        self.assertEqual(len(x["points"]), 2 * 3 * 3)  # ranks x sizes x default strategies
        self.assertNotIn("tp", x["points"][0])

    def test_crossover_over_layouts(self):
        x = collsim.crossover(ranks=8, params="1e9:3e10:3", strategies="ddp,fsdp_full_shard",
                              tp=[1, 8], pp=[1, 2], collsim=COLLSIM)
        self.assertEqual(x["version"], 3)
        pts = x["points"]
        self.assertEqual(len(pts), 3 * 2 * 2 * 2)  # sizes x strategies x tp x pp
        series = [(p["strategy"], p["tp"], p["pp"]) for p in pts[:8]]
        self.assertEqual(series, [(s, t, q) for s in ("ddp", "fsdp_full_shard")
                                  for t in (1, 8) for q in (1, 2)])
        empty = [p for p in pts if p["tp"] * p["pp"] > 8]  # tp 8 x pp 2 on 8 GPUs
        self.assertTrue(empty and all(p["fits"] == 0 and "tokens_per_s" not in p for p in empty))
        self.assertTrue(x["crossings"])
        for c in x["crossings"]:
            self.assertTrue({"tp_a", "pp_a", "tp_b", "pp_b"} <= set(c), c)

    def test_errors_carry_the_cli_message(self):
        with self.assertRaises(collsim.CollsimError) as e:
            collsim.memory(strategy="zero33", collsim=COLLSIM)
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn("did you mean 'zero3'", str(e.exception))

    def test_other_layouts_refused(self):
        good = {"format": "collsim-memory", "version": collsim.VERSION}
        self.assertIs(collsim._check(good, "memory"), good)
        for bad in ({"format": "collsim-memory", "version": collsim.VERSION + 1},
                    {"format": "collsim-simulate", "version": collsim.VERSION}, {"rows": []}):
            with self.assertRaises(collsim.CollsimError):
                collsim._check(bad, "memory")
        # crossover: versions 2 (strategies) and 3 (layouts) read, others refused
        for v in (2, 3):
            doc = {"format": "collsim-crossover", "version": v}
            self.assertIs(collsim._check(doc, "crossover"), doc)
        for v in (1, 4):
            with self.assertRaises(collsim.CollsimError):
                collsim._check({"format": "collsim-crossover", "version": v}, "crossover")


class SchemaDoc(unittest.TestCase):
    """docs/json-output.md lists, per format, the members each document
    has: every listed member (top level, and of the first row of each
    array) is in the output, so the doc cannot drift from the writers."""

    RUNS = {
        "collective": ("collective", {"op": "all_reduce", "bytes": "1M"}),
        "memory": ("memory", {}),
        "simulate": ("simulate", {"model": "gpt2-124m", "ranks": 8}),
        "plan": ("plan", {"model": "gpt2-124m", "ranks": 8}),
        "crossover": ("crossover", {"ranks": 8, "params": "1e8:1e10:3"}),  # an oom crossing
        "compare": ("compare", {"cluster": "dgx-h100",
                                "nccl_tests": "tests/data/nccl-tests-allreduce-2node-srun.log"}),
    }

    def doc_rows(self):
        here = os.path.dirname(os.path.abspath(__file__))
        text = open(os.path.join(here, "..", "docs", "json-output.md")).read()
        rows = {}
        for line in text.split("\n"):
            cells = [c.strip() for c in line.split("|")[1:-1]]
            if len(cells) == 3 and cells[0].startswith("`collsim-"):
                rows[cells[0].strip("`")[len("collsim-"):]] = cells[2]
        return rows

    def test_listed_members_exist(self):
        rows = self.doc_rows()
        self.assertTrue(set(self.RUNS) <= set(rows), sorted(rows))
        for fmt, (cmd, kw) in self.RUNS.items():
            doc = collsim.run(cmd, collsim=COLLSIM, **kw)
            text = rows[fmt]
            # "`a, b`; `arr`: `x, y` ...": the first list of a part names members,
            # the second (after a colon) those of the first row of the last one
            for part in text.split(";"):
                names = re.findall(r"`([a-z_][a-z_0-9, ]*)`", part)
                if not names or part.strip().startswith("as memory"):
                    continue
                head = [n.strip() for n in names[0].split(",")]
                for n in head:
                    self.assertIn(n, doc, f"{fmt}: doc lists {n!r}")
                arr = doc.get(head[-1])
                if ":" in part and len(names) > 1 and isinstance(arr, list) and arr:
                    for n in names[1].split(","):
                        self.assertIn(n.strip(), arr[0], f"{fmt}.{head[-1]}: doc lists {n!r}")

if __name__ == "__main__":
    unittest.main()
