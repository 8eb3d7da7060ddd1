# SPDX-License-Identifier: MIT
"""validation/scaling.py - the capacity-planning case: calibrate on a hardware's smallest
multi-node run, predict its larger ones.

Imported by validation/run (not a command of its own). Every row of validation/scaling.csv
names a source (a dataset of nccl-tests/ and the rows of it to fit, `train`) and a target (a
dataset and the rows of it to predict, `predict`); `collsim calibrate` fits the target's cluster
YAML on the source rows, then `collsim compare` scores the target rows with the fitted cluster.
Where source and target are one file, the rows fitted are never scored. Filters are `all` or
`col=value;col>value;col<value` over the CSV's own columns (summary files name their nodes).
Scores are recorded in scores.csv with mode `scale:SOURCE` and guarded by --check like the
others. Standard library only; deterministic.
"""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def read():
    with open(os.path.join(HERE, "scaling.csv")) as f:
        return list(csv.DictReader([l for l in f if not l.startswith("#")]))


def _match(row, spec):
    if spec.strip() == "all":
        return True
    for cond in [c for c in spec.split(";") if c]:
        op = "=" if "=" in cond else ">" if ">" in cond else "<"
        k, v = cond.split(op, 1)
        got = row.get(k.strip())
        if got is None:
            raise ValueError("scaling.csv: no column %r in the filter %r" % (k, spec))
        if op == "=" and got != v.strip():
            return False
        if op in "<>" and not (float(got) > float(v) if op == ">" else float(got) < float(v)):
            return False
    return True


def _filtered(src, keep, out):
    """Copies src's header lines and the data rows keep(row) accepts; returns how many."""
    n, header = 0, None
    with open(src) as f, open(out, "w") as g:
        for line in f:
            if line.startswith("#"):
                g.write(line)
                continue
            if header is None:
                header = [h.strip() for h in line.strip().split(",")]
                g.write(line)
                continue
            row = dict(zip(header, [v.strip() for v in line.strip().split(",")]))
            if keep(row):
                g.write(line)
                n += 1
    return n


def run_all(root, dataset_path, cluster_path, calibrate, compare, tmp):
    """[(entry, mode, fit, compare json)] for every row of scaling.csv; calibrate(yaml, data,
    out, source dataset)."""
    out = []
    for k, e in enumerate(read()):
        src = os.path.join(root, dataset_path(e["source"]))
        tgt = os.path.join(root, dataset_path(e["target"]))
        train = os.path.join(tmp, "scale%d-train.csv" % k)
        pred = os.path.join(tmp, "scale%d-%s.csv" % (k, e["target"]))
        _filtered(src, lambda r: _match(r, e["train"]), train)
        same = e["source"] == e["target"]
        _filtered(tgt, lambda r: _match(r, e["predict"]) and not (same and _match(r, e["train"])), pred)
        yaml = os.path.join(tmp, "scale%d.yaml" % k)
        fit = calibrate(cluster_path(e["cluster"]), train, yaml, e["source"])
        out.append((e, "scale:" + e["source"], fit, compare(yaml, pred)))
    return out


def report_lines(results, fmt, stats_cells, target_big, target_all):
    L = ["", "## Across nodes: calibrated on the smallest multi-node run",
         "",
         "The capacity-planning case: `collsim calibrate` on a hardware's smallest multi-node run "
         "(`train` rows of the source), then the larger runs predicted with the fitted cluster "
         "(`predict` rows of the target; rows fitted are never scored). Rows are "
         "`validation/scaling.csv`. Target: median <= %.0f%% (>= 1 MiB) after calibration." % target_big,
         "",
         "| target (rows) | calibrated on (rows) | fit | >= 1 MiB | all | target |",
         "|---|---|---|---|---|---|"]
    for e, mode, fit, c in results:
        ds = c["datasets"][0]
        fitted = ", ".join("%s %.4g" % (p["name"], p["value"]) for p in fit["params"] if p["fitted"]) or "nothing fitted"
        mb = ds["median_big_pct"]
        L.append("| `%s` (%s) | `%s` (%s) | %s | %s | %s |" % (
            e["target"], e["predict"], e["source"], e["train"], fitted, stats_cells(ds),
            "-" if mb is None else "met" if mb <= target_big else "missed"))
    notes = [(e["target"], e["effects"]) for e, _, _, _ in results if e["effects"].strip()]
    if notes:
        L.append("")
        for t, n in notes:
            L.append("- `%s`: %s" % (t, n))
    return L
