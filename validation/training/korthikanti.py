# SPDX-License-Identifier: MIT
"""validation/training/korthikanti.py - `collsim simulate` against Korthikanti et al. 2022's measured times.

Imported by validation/run (not a command of its own). validation/papers/korthikanti_measured.csv
(Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", arXiv:2205.05198;
copied from ../shared/data/papers/ with its provenance header) gives, on Selene (8 x A100-80GB per node,
NVSwitch, 8 x 200 Gb/s HDR) with Megatron-LM of 2022:
  Table 4  one transformer layer of the 22B model (h 6144, 64 heads, TP 8, micro-batch 4, s 2048):
           forward and backward milliseconds for five settings (no recompute, sequence parallelism,
           full recompute, selective recompute, selective + sequence parallelism);
  Table 5  whole-iteration seconds of 22B / 175B / 530B / 1T (Table 3's layouts, no data parallelism),
           full recompute (TP without SP) and "present work" (SP + selective recompute).
It is a second check of the stack SC21 Table 1 scores (validation/training/megatron.py): the per-layer
rows say whether a layer's compute and TP communication are priced right, the iteration rows whether
what lies outside the layers (head, optimizer, pipeline bubble and p2p) is.

How a row maps: the model is Megatron's GPT of the paper (GeLU 4h MLP, biases, learned positions, tied
embeddings, vocab 51200, s 2048, dropout 0.1, fp16), unfused attention (2022 Megatron ran its fused
softmax, not FlashAttention), strategy ddp over 1 data-parallel rank, tensor_parallel 8,
pipeline_parallel = Table 3's PP with the plain 1f1b schedule (the file gives no virtual stages),
micro-batch and global batch from Table 3. Per-layer times come from the trace (`--trace`): a layer's
forward is the time from the start of one layer's forward compute to the next one's (its kernels and
its TP collectives, which the compute stream waits on), its backward likewise over the backward
tasks (with the recompute under full / selective checkpointing), taken at the middle layer.
Nothing here is tuned to these rows. Standard library only; deterministic.
"""
import csv
import io
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "papers", "korthikanti_measured.csv")
TOLERANCE = 1.0
# Table 4's experiments: (sequence_parallel, activation_checkpointing)
T4_SETTINGS = {"Baseline no recompute": ("false", "none"), "Sequence Parallelism": ("true", "none"),
               "Baseline with recompute": ("false", "full"), "Selective Recompute": ("false", "selective"),
               "Selective + Sequence": ("true", "selective")}
# Table 5's two columns: (column, sequence_parallel, activation_checkpointing)
T5_SETTINGS = [("iter_full_recompute_s", "false", "full"), ("iter_present_work_s", "true", "selective")]


def read_tables():
    """{table: [row dict]} from the file's blocks (each block opens with its own header line)."""
    tables, header = {}, None
    with open(DATA) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                header = None if line.startswith("#") else header
                continue
            cells = next(csv.reader([line]))
            if header is None or cells[0] == "table":
                header = cells
                continue
            tables.setdefault(cells[0], []).append(dict(zip(header, cells)))
    return tables


def scenario_yaml(cfg, sp, ckpt):
    h, layers = int(cfg["hidden"]), int(cfg["layers"])
    tp, pp, gpus = int(cfg["TP"]), int(cfg["PP"]), int(cfg["GPUs"])
    mb, gb = int(cfg["micro_batch"]), int(cfg["global_batch"])
    dp = gpus // (tp * pp)
    lines = ["cluster: dgx-a100", "ranks: %d" % gpus, "model:", "  name: korthikanti-%s" % cfg["model"].split()[0],
             "  layers: %d" % layers, "  hidden: %d" % h, "  heads: %s" % cfg["attention_heads"],
             "  kv_heads: %s" % cfg["attention_heads"], "  ffn_hidden: %d" % (4 * h), "  gated_mlp: false",
             "  biases: true", "  position_embedding: learned", "  tied_embeddings: true",
             "  seq_len: 2048", "  vocab: 51200", "  dropout: 0.1",
             "training:", "  strategy: ddp", "  mixed_precision: pure", "  param_dtype: fp16",
             "  optimizer: adam", "  tensor_parallel: %d" % tp, "  sequence_parallel: %s" % sp,
             "  pipeline_parallel: %d" % pp, "  micro_batch: %d" % mb,
             "  grad_accum: %d" % (gb // (mb * dp)), "  activation_checkpointing: %s" % ckpt,
             "  flash_attention: false"]
    return "\n".join(lines) + "\n"


def layer_times_ms(trace_path, layers):
    """(forward, backward) of the middle layer, ms: start to start of consecutive compute tasks."""
    with open(trace_path) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    start = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("pid") == 0 and e.get("tid") == 0:
            start.setdefault(e["name"], e["ts"])
    k = layers // 2
    fwd = start["forward %d" % (k + 1)] - start["forward %d" % k]
    bwd = start["backward %d" % (k - 1)] - start["backward %d" % k]
    return fwd / 1000.0, bwd / 1000.0


def simulate(collsim, run, tmp):
    t = read_tables()
    cfgs = {r["model"].split()[0]: r for r in t["T3"]}
    out = {"t4": [], "t5": []}
    c22 = cfgs["22B"]
    for r in t["T4"]:
        sp, ck = T4_SETTINGS[r["experiment"]]
        path = os.path.join(tmp, "korthikanti-t4-%s-%s.yaml" % (sp, ck))
        trace = path[:-5] + ".json"
        with open(path, "w") as f:
            f.write(scenario_yaml(c22, sp, ck))
        run([collsim, "simulate", path, "--format", "csv", "--trace", trace])
        fwd, bwd = layer_times_ms(trace, int(c22["layers"]))
        meas = (float(r["forward_ms"]), float(r["backward_ms"]), float(r["combined_ms"]))
        pred = (fwd, bwd, fwd + bwd)
        out["t4"].append(dict(experiment=r["experiment"], meas=meas, pred=pred,
                              err_pct=[100.0 * (p - m) / m for p, m in zip(pred, meas)]))
    for r in t["T5"]:
        cfg = cfgs[r["model"]]
        for col, sp, ck in T5_SETTINGS:
            path = os.path.join(tmp, "korthikanti-t5-%s-%s.yaml" % (r["model"], ck))
            with open(path, "w") as f:
                f.write(scenario_yaml(cfg, sp, ck))
            sim = next(csv.DictReader(io.StringIO(run([collsim, "simulate", path, "--format", "csv"]))))
            pred, meas = float(sim["iteration_time_s"]), float(r[col])
            out["t5"].append(dict(model=r["model"], setting=col, tp=cfg["TP"], pp=cfg["PP"], gpus=cfg["GPUs"],
                                  meas=meas, pred=pred, err_pct=100.0 * (pred - meas) / meas))
    return out


def _stats(errs):
    e = sorted(abs(x) for x in errs)
    s = sorted(errs)
    n = len(e)
    mid = lambda v: (v[(n - 1) // 2] + v[n // 2]) / 2.0  # noqa: E731
    return {"n": n, "median_pct": mid(e), "max_pct": e[-1], "signed_median_pct": mid(s)}


def scores(results):
    """Two rows: the per-layer forward + backward of Table 4, the iterations of Table 5."""
    return {"t4_layer": _stats([x["err_pct"][2] for x in results["t4"]]),
            "t5_iteration": _stats([x["err_pct"] for x in results["t5"]])}


def scores_csv(sc):
    f = io.StringIO()
    f.write("# Written by validation/run: collsim simulate against validation/papers/korthikanti_measured.csv\n"
            "# (Korthikanti et al. 2022, Megatron-LM on Selene's A100s): t4_layer = one 22B layer's forward +\n"
            "# backward (Table 4, five settings), t5_iteration = whole iterations (Table 5, four models x two\n"
            "# settings); absolute %% error of the time. validation/run --check fails when a score grows by\n"
            "# more than %g point.\n" % TOLERANCE)
    f.write("table,n,median_pct,max_pct,signed_median_pct\n")
    for k in ("t4_layer", "t5_iteration"):
        s = sc[k]
        f.write("%s,%d,%.1f,%.1f,%.1f\n" % (k, s["n"], s["median_pct"], s["max_pct"], s["signed_median_pct"]))
    return f.getvalue()


def check(sc, path):
    """Lines and a failure flag: a score grown by more than TOLERANCE over path's."""
    with open(path) as f:
        old = {r["table"]: r for r in csv.DictReader([l for l in f if not l.startswith("#")])}
    lines, bad = [], False
    for t in ("t4_layer", "t5_iteration"):
        for k in ("median_pct", "max_pct"):
            grown = sc[t][k] - float(old[t][k]) > TOLERANCE
            bad |= grown
            lines.append("korthikanti %s %s: %.1f (was %s)%s" % (t, k, sc[t][k], old[t][k],
                                                                  "  GROWN" if grown else ""))
    return lines, bad


def report_lines(results, sc):
    a, b = sc["t4_layer"], sc["t5_iteration"]
    L = ["", "### The same stack, a second check: Korthikanti et al. 2022 Tables 4 and 5 (A100, TP 8, PP 1-64)", "",
         "`collsim simulate` of the 22B model's layer (Table 4: forward and backward of one layer, from the "
         "trace) and of whole iterations (Table 5), validation/training/korthikanti.py says how a row maps. "
         "Per-layer forward + backward: median error %.1f%%, max %.1f%%, signed median %+.1f%%; iterations: "
         "median %.1f%%, max %.1f%%, signed median %+.1f%% (negative: collsim predicts less time than measured)."
         % (a["median_pct"], a["max_pct"], a["signed_median_pct"], b["median_pct"], b["max_pct"],
            b["signed_median_pct"]), "",
         "| Table 4 (22B layer, ms) | forward measured | collsim | backward measured | collsim | "
         "fwd + bwd measured | collsim | error |",
         "|---|---|---|---|---|---|---|---|"]
    for x in results["t4"]:
        m, p = x["meas"], x["pred"]
        L.append("| %s | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f | %+.1f%% |"
                 % (x["experiment"], m[0], p[0], m[1], p[1], m[2], p[2], x["err_pct"][2]))
    L += ["", "| Table 5 (iteration, s) | GPUs | TP x PP | setting | measured | collsim | error |",
          "|---|---|---|---|---|---|---|"]
    for x in results["t5"]:
        name = "full recompute" if x["setting"] == "iter_full_recompute_s" else "SP + selective"
        L.append("| %s | %s | %s x %s | %s | %.2f | %.2f | %+.1f%% |"
                 % (x["model"], x["gpus"], x["tp"], x["pp"], name, x["meas"], x["pred"], x["err_pct"]))
    return L
