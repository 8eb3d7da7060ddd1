# SPDX-License-Identifier: MIT
"""validation/training/megatron.py - `collsim simulate` against Megatron-LM's SC21 Table 1.

Imported by validation/run (not a command of its own). megatron_sc21_a100.csv (Narayanan et al.,
SC21, Table 1: Megatron-LM on Selene's DGX A100 nodes; copied with its provenance header) has ten
rows, all scored here: 1.7B-18B with tensor parallelism only (TP 1-8), 39B-1T with pipeline
parallelism too (PP 2-64, interleaved where virtual_pipeline > 1).

How a row maps (each choice from the file's header):
  model         the printed shape: GeLU 4h MLP, biases, learned positions, tied embeddings,
                vocab 51200, seq 2048; dropout 0.1 (Megatron's --hidden-dropout and
                --attention-dropout defaults of 2021; not in the file).
  layout        tensor_parallel = the row's tp, sequence_parallel false (SC21 predates
                Korthikanti et al. 2022), pipeline_parallel = the row's pp, virtual_stages = its
                virtual_pipeline (collsim then picks interleaved_1f1b, Megatron's schedule with
                --num-layers-per-virtual-pipeline-stage; 1f1b otherwise), strategy ddp over
                gpus / (tp x pp) data-parallel ranks. DDP-impl torch (<= 18B) is torch's
                bucketed DDP, overlapped with backward, no_sync for all micro-batches but
                the last (Megatron 2021 schedules.py forward_backward_no_pipelining); local
                (>= 39B) all-reduces each stage's gradients after the flush, not overlapped
                (model/distributed.py allreduce_gradients from training.py train_step; the
                pipeline executor, pipeline.c). Neither sets --use-contiguous-buffers-in-ddp,
                so both accumulate micro-batches into param.grad (compute.c's
                grad_accumulate).
  precision     --fp16: the model in fp16 (mixed_precision pure, param_dtype fp16); Megatron's
                fp32 master copy lives in its optimizer, which changes memory, not the step's time
                beyond the optimizer pass.
  attention     unfused (flash_attention false: 2021 Megatron ran its fused softmax kernel, not
                FlashAttention).
  checkpointing full (--checkpoint-activations on every row).
  batch         micro_batch and grad_accum as printed / derived in the file (under pipeline
                parallelism grad_accum is the pipeline's micro-batches, Megatron's num_microbatches).
The metric: the table's "achieved teraFLOP/s per GPU" counts the recompute forward (the SC21
formula 96 B s l h^2 (1 + s / 6h + V / 16 l h), four passes of 24 B s l h^2); the prediction is
that formula over collsim's iteration time and the GPU count, so both sides share the numerator
and the error is the error of the iteration time. Nothing here is tuned to these rows.
Standard library only; deterministic.
"""
import csv
import io
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "megatron_sc21_a100.csv"
TOLERANCE = 1.0
TARGET_MEDIAN, TARGET_MAX = 10.0, 20.0
MODEL_KEYS = ["layers", "hidden", "heads", "kv_heads", "ffn_hidden", "gated_mlp", "biases",
              "position_embedding", "tied_embeddings", "seq_len", "vocab"]


def read_rows():
    with open(os.path.join(HERE, DATA)) as f:
        return list(csv.DictReader([l for l in f if not l.startswith("#")]))


def scenario_yaml(r):
    lines = ["cluster: dgx-a100", "ranks: %s" % r["gpus"], "model:", "  name: %s" % r["model"]]
    lines += ["  %s: %s" % (k, r[k]) for k in MODEL_KEYS]
    lines += ["  dropout: 0.1", "training:", "  strategy: ddp", "  mixed_precision: pure",
              "  param_dtype: fp16", "  optimizer: adam",
              "  tensor_parallel: %s" % r["tp"], "  sequence_parallel: false",
              "  pipeline_parallel: %s" % r["pp"], "  virtual_stages: %s" % r["virtual_pipeline"],
              "  micro_batch: %s" % r["micro_batch"], "  grad_accum: %s" % r["grad_accum"],
              "  activation_checkpointing: full", "  flash_attention: false"]
    return "\n".join(lines) + "\n"


def sc21_flops(r):
    """The SC21 paper's FLOPs per iteration (with the recompute forward)."""
    B = int(r["global_batch"])
    s, l, h, V = (int(r[k]) for k in ("seq_len", "layers", "hidden", "vocab"))
    return 96.0 * B * s * l * h * h * (1 + s / (6.0 * h) + V / (16.0 * l * h))


def simulate(collsim, run, tmp):
    out = []
    for i, r in enumerate(read_rows()):
        path = os.path.join(tmp, "megatron-%02d.yaml" % i)
        with open(path, "w") as f:
            f.write(scenario_yaml(r))
        sim = next(csv.DictReader(io.StringIO(run([collsim, "simulate", path, "--format", "csv"]))))
        t = float(sim["iteration_time_s"])
        pred = sc21_flops(r) / (t * int(r["gpus"])) / 1e12
        meas = float(r["tflops_per_gpu"])
        out.append(dict(r, pred_tflops=pred, meas_tflops=meas, iteration_s=t,
                        err_pct=100.0 * (pred - meas) / meas))
    return out


def scores(results):
    e = sorted(abs(x["err_pct"]) for x in results)
    n = len(e)
    med = (e[(n - 1) // 2] + e[n // 2]) / 2.0
    signed = sorted(x["err_pct"] for x in results)
    return {"n": n, "median_pct": med, "max_pct": e[-1],
            "signed_median_pct": (signed[(n - 1) // 2] + signed[n // 2]) / 2.0}


def scores_csv(sc):
    f = io.StringIO()
    f.write("# Written by validation/run: collsim simulate against validation/training/%s, all\n"
            "# ten rows (TP only and TP x PP): absolute %% error of TFLOP/s per GPU (the SC21 formula,\n"
            "# recompute counted, over the predicted iteration time). Targets: median <= %g, max <= %g.\n"
            "# tests/validation-scores.sh fails when a score grows by more than 1 point.\n"
            % (DATA, TARGET_MEDIAN, TARGET_MAX))
    f.write("table,n,median_pct,max_pct,signed_median_pct\n")
    f.write("sc21_a100,%d,%.1f,%.1f,%.1f\n" % (sc["n"], sc["median_pct"], sc["max_pct"],
                                                sc["signed_median_pct"]))
    return f.getvalue()


def check(sc, path):
    """Lines and a failure flag: a score grown by more than TOLERANCE over path's."""
    with open(path) as f:
        old = next(csv.DictReader([l for l in f if not l.startswith("#")]))
    lines, bad = [], False
    for k in ("median_pct", "max_pct"):
        grown = sc[k] - float(old[k]) > TOLERANCE
        bad |= grown
        lines.append("megatron sc21 %s: %.1f (was %s)%s" % (k, sc[k], old[k], "  GROWN" if grown else ""))
    return lines, bad


def report_lines(results, sc):
    L = ["", "### Tensor and pipeline parallelism: Megatron-LM SC21 Table 1 (A100, TP 1-8, PP 1-64)", "",
         "`collsim simulate` of each row (validation/training/megatron.py "
         "says how a row maps). TFLOP/s per GPU by the paper's formula (recompute counted) over the "
         "predicted iteration time. Median error %.1f%% (target <= %g), max %.1f%% (target <= %g), "
         "signed median %+.1f%%." % (sc["median_pct"], TARGET_MEDIAN, sc["max_pct"], TARGET_MAX,
                                      sc["signed_median_pct"]), "",
         "| model | GPUs | TP | PP x V | micro-batch x accum | measured TFLOP/s | collsim | error |",
         "|---|---|---|---|---|---|---|---|"]
    for x in results:
        L.append("| %s | %s | %s | %s x %s | %s x %s | %s | %.1f | %+.1f%% |" % (
            x["model"], x["gpus"], x["tp"], x["pp"], x["virtual_pipeline"], x["micro_batch"], x["grad_accum"], x["tflops_per_gpu"],
            x["pred_tflops"], x["err_pct"]))
    return L
