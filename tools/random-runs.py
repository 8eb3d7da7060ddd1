#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Random valid-looking runs of collsim end to end, for what the loaders' fuzz targets cannot
reach: the simulations behind the options and keys.

Usage: random-runs.py COLLSIM [--kind cli|scenario|collective|training|all] [--seed N]
                      [--count N] [--timeout S]

Each run draws a command line (cli: simulate, memory, plan and crossover with their options;
scenario: a scenario file with any of the training keys, the strategy's own knobs only;
collective: ops, sizes, algorithms, protocols and engines on presets and validation clusters;
training: a training-runs CSV through compare and calibrate) from the seed, runs COLLSIM on
it, and reports it when the exit status is outside the exit-code table (0-3), a sanitizer or
UBSan reports (build COLLSIM with -Db_sanitize=address,undefined to see them), it panics,
runs past the timeout, prints a NaN or an infinity, or writes --format json that does not
parse. Most draws are refused with exit 2; that is their point. Prints one line per bad run
(its command) and a summary; exits 1 when any run was bad. Standard library only; the same
seed draws the same runs.

Found this way: `simulate --ranks 2 --tp 4 --global-batch 64` divided by zero (SIGFPE).
The suite does not run it (an ASan build takes minutes per hundred runs); run it after a
change that adds options or keys:
    python3 tools/random-runs.py build-asan/cli/collsim --kind all --count 200
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def presets(kind):
    """The built-in presets of configs/KIND/ (the names the binary embeds), sorted."""
    d = os.path.join(ROOT, "configs", kind)
    return sorted(f[:-5] for f in os.listdir(d) if f.endswith(".yaml"))


PRESETS = presets("clusters")
GPU_PRESETS = [p for p in PRESETS if p != "cpu-local"]  # scenarios train on GPUs
MODELS = presets("models")
STRATEGIES = ["ddp", "zero1", "deepspeed_zero1", "fsdp_no_shard", "fsdp_shard_grad_op",
              "fsdp_full_shard", "fsdp_hybrid_shard"]
# the training keys of configs/scenarios/README.md, with values in and at the edge of range
KEYS = {
    "mixed_precision": ["amp", "fsdp_param_dtype", "pure"],
    "param_dtype": ["fp32", "bf16", "fp16", "fp8", "tf32"],
    "grad_reduce_dtype": ["fp32", "bf16", "fp16"], "master_weights": ["true", "false"],
    "optimizer": ["adam", "adamw", "sgd", "sgd_momentum"], "optimizer_impl": ["foreach", "fused"],
    "optimizer_in_backward": ["true", "false"], "activation_offloading": ["true", "false"],
    "hold_logits": ["true", "false"], "micro_batch": ["1", "2", "3", "16"],
    "grad_accum": ["1", "2", "3", "40"], "activation_checkpointing": ["none", "selective", "full"],
    "flash_attention": ["true", "false"], "attention_kernel": ["flash2", "flash1"],
    "compile": ["true", "false"], "loss_impl": ["naive", "fused", "chunked"],
    "train_metrics": ["0", "1", "3"], "tensor_parallel": ["1", "2", "4", "8"],
    "sequence_parallel": ["true", "false"], "async_tp": ["true", "false"],
    "pipeline_parallel": ["1", "2", "4"], "virtual_stages": ["1", "2", "3"],
    "pipeline_schedule": ["gpipe", "1f1b", "interleaved_1f1b", "zero_bubble"],
    "compute_efficiency": ["0.3", "1"], "comm_compute_slowdown": ["0", "0.2", "3"],
    "cuda_context": ["0", "1GiB"], "fragmentation": ["0", "0.3"],
    "collective_engine": ["analytic", "des"],
}
FSDP_KEYS = {"backward_prefetch": ["none", "pre", "post"], "forward_prefetch": ["true", "false"],
             "limit_all_gathers": ["true", "false", "2"], "reshard_after_forward": ["true", "false"],
             "fsdp_version": ["1", "2"], "fsdp_unit_layers": ["0", "1", "2", "5"],
             "fsdp_hook_cpu_ms": ["0", "0.5", "3"]}
DDP_KEYS = {"bucket_cap_mb": ["1", "25", "0.5", "1000"], "first_bucket_mb": ["1", "0.1", "50"],
            "gradient_as_bucket_view": ["true", "false"],
            "ddp_comm_hook": ["none", "bf16_compress", "fp16_compress"]}


def maybe(r, p, args):
    return args if r.random() < p else []


def draw_cli(r, tmp):
    cmd = r.choice(["simulate", "memory", "plan", "crossover"])
    a = [cmd, "--cluster", r.choice(PRESETS)]
    if cmd == "crossover":
        a += ["--ranks", r.choice(["8", "8,16", "16,64"]),
              "--params", r.choice(["1e8:1e10:3", "10M:1B:2"])]
        a += maybe(r, .3, ["--tp", r.choice(["1,2", "1,8", "2"])])
        a += maybe(r, .3, ["--pp", r.choice(["1,2", "2"])])
    else:
        a += ["--ranks", str(r.choice([1, 2, 4, 8, 16, 24, 64, 128]))]
        a += (["--model", r.choice(MODELS)] if r.random() < .8
              else ["--params", r.choice(["1e6", "3e9", "7B", "1e12"])])
        if cmd != "plan" or r.random() < .5:
            a += ["--strategy", ",".join(r.sample(STRATEGIES + ["zero2", "zero3"], r.choice([1, 1, 2])))]
        a += maybe(r, .3, ["--tp", r.choice(["2", "4", "8", "3"])])
        a += maybe(r, .25, ["--pp", r.choice(["2", "4"])])
    a += maybe(r, .3, ["--seq-len", r.choice(["1", "128", "2048", "8192", "131072"])])
    a += maybe(r, .3, ["--micro-batch", r.choice(["1", "2", "7", "64"])])
    a += maybe(r, .2, ["--grad-accum", r.choice(["1", "2", "5", "33"])])
    a += maybe(r, .2, ["--global-batch", r.choice(["64", "512", "1000"])])
    a += maybe(r, .3, ["--checkpointing", r.choice(["none", "selective", "full"])])
    a += maybe(r, .15, ["--selective-ac", r.choice(["attention", "op", "2", "3"])])
    a += maybe(r, .2, ["--attention", r.choice(["flash", "flash2", "flash1", "standard"])])
    a += maybe(r, .15, ["--compile"]) + maybe(r, .1, ["--optimizer-in-backward"])
    a += maybe(r, .1, ["--activation-offloading"])
    a += maybe(r, .15, ["--pp-schedule", r.choice(["gpipe", "1f1b", "interleaved_1f1b", "zero_bubble"])])
    a += maybe(r, .2, ["--loss", r.choice(["naive", "fused", "chunked"])])
    a += maybe(r, .2, ["--dtype", r.choice(["fp32", "bf16", "fp16"])])
    a += maybe(r, .15, ["--optimizer", r.choice(["adam", "sgd", "sgd_momentum"])])
    if cmd == "simulate":
        a += maybe(r, .2, ["--engine", r.choice(["analytic", "des"])])
    a += maybe(r, .3, ["--format", r.choice(["csv", "json"])])
    return [a]


def draw_scenario(r, tmp):
    st = r.choice(STRATEGIES + ["fsdp_full_shard", "fsdp_hybrid_shard"])
    keys = dict(KEYS)
    if st.startswith("fsdp"):
        keys.update(FSDP_KEYS)
    if st in ("ddp", "zero1"):
        keys.update(DDP_KEYS)
    if st == "fsdp_hybrid_shard":
        keys["shard_group"] = ["1", "2", "4", "8"]
    chosen = r.sample(sorted(keys), r.randint(2, 14))
    lines = ["cluster: %s" % r.choice(GPU_PRESETS), "ranks: %d" % r.choice([1, 2, 4, 8, 16, 32, 64]),
             "model: %s" % r.choice(MODELS + ["13e9", "1e6"]), "training:", "  strategy: %s" % st]
    if r.random() < .2:
        chosen = [k for k in chosen if k != "activation_checkpointing"]
        lines += ["  activation_checkpointing: selective",
                  "  selective_ac: %s" % r.choice(["attention", "op", "1", "2", "5"])]
    lines += ["  %s: %s" % (k, r.choice(keys[k])) for k in chosen]
    path = os.path.join(tmp, "scenario.yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    a = [r.choice(["simulate", "simulate", "memory", "plan"]), path]
    if a[0] == "simulate":
        a += maybe(r, .3, ["--trace", os.path.join(tmp, "t.json"), "--emit-schedule",
                           os.path.join(tmp, "s.json"), "--kernels", os.path.join(tmp, "k.csv")])
    a += maybe(r, .3, ["--format", r.choice(["csv", "json"])])
    return [a]


def draw_collective(r, tmp):
    clusters = PRESETS + [os.path.join(ROOT, "validation", "clusters", n) for n in
                          ("h100-xxrjun.yaml", "gb300-oci.yaml", "a100-coreweave.yaml", "l40s-farmshare.yaml")]
    a = ["collective", "--cluster", r.choice(clusters), "--op",
         r.choice(["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "send_recv"])]
    a += maybe(r, .7, ["--ranks", str(r.choice([1, 2, 3, 5, 8, 9, 16, 24, 72, 80, 144, 1000]))])
    a += maybe(r, .5, ["--nodes", str(r.choice([1, 2, 3, 10, 18, 19]))])
    if r.random() < .5:
        a += ["--bytes", r.choice(["0", "1", "7", "4K", "1M", "1G", "16G", "1T"])]
    else:
        a += ["--min", r.choice(["1", "8", "1K"]), "--max", r.choice(["1M", "1G"]),
              "--factor", r.choice(["2", "4", "1.5", "1000"])]
    a += maybe(r, .4, ["--algo", r.choice(["ring", "tree", "nvls", "nvlstree", "collnet_direct",
                                          "collnet_chain", "p2p", "auto"])])
    a += maybe(r, .4, ["--proto", r.choice(["ll", "ll128", "simple", "auto"])])
    a += maybe(r, .4, ["--engine", r.choice(["analytic", "des"])])
    a += maybe(r, .3, ["--format", r.choice(["csv", "json", "table"])])
    return [a]


def draw_training(r, tmp):
    head = ("model,layers,hidden,heads,kv_heads,vocab,seq_len,gpus,strategy,precision,micro_batch,"
            "grad_accum,activation_checkpointing,tokens_per_s_per_gpu,gated_mlp,compile,tp,pp,"
            "virtual_stages,fsdp_version,attention_kernel,loss_impl,shard_group,selective_ac")
    rows = []
    for i in range(r.randint(1, 7)):
        heads = r.choice([8, 12, 16, 32, 64])
        st = r.choice(STRATEGIES[:1] + STRATEGIES[1:2] + STRATEGIES[3:])
        ckpt = r.choice(["none", "selective", "full"])
        tp, pp = r.choice([1, 1, 2, 4]), r.choice([1, 1, 2])
        rows.append(",".join(map(str, [
            "m%d" % i, r.choice([2, 4, 12, 24, 32]), heads * r.choice([64, 128]), heads,
            r.choice([heads, heads // 4 or 1]), r.choice([1000, 32000, 50368]),
            r.choice([128, 512, 2048, 8192]), tp * pp * r.choice([1, 2, 4, 8]), st,
            r.choice(["amp_bf16/DEFAULT", "bf16/PURE"]), r.choice([1, 2, 8]), r.choice([1, 2, 4, 8]),
            ckpt, "%.6g" % (10 ** r.uniform(1, 6)), r.choice(["true", "false"]), r.choice(["yes", "no"]),
            tp, pp, r.choice([1, 1, 2]) if pp > 1 else 1, r.choice([1, 2]) if st.startswith("fsdp") else 1,
            r.choice(["flash1", "flash2"]), r.choice(["naive", "fused", "chunked"]),
            r.choice([0, 2, 4]) if st == "fsdp_hybrid_shard" else "",
            r.choice(["attention", "op", "2"]) if ckpt == "selective" else ""])))
    path = os.path.join(tmp, "runs.csv")
    with open(path, "w") as f:
        f.write(head + "\n" + "\n".join(rows) + "\n")
    cl = r.choice(["dgx-a100", "dgx-h100", "gb200-nvl72", "pcie-l40s"])
    return [["compare", "--cluster", cl, "--training-runs", path] +
            maybe(r, .4, ["--format", r.choice(["csv", "json"])]),
            ["calibrate", "--cluster", cl, "--training-runs", path, "-o", os.path.join(tmp, "cal.yaml"),
             "--report", os.path.join(tmp, "cal.txt")]]


DRAWS = {"cli": draw_cli, "scenario": draw_scenario, "collective": draw_collective,
         "training": draw_training}


def bad_run(collsim, args, timeout):
    """Why the run of args is bad, or None."""
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    try:
        p = subprocess.run([collsim] + args, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "ran past %d s" % timeout
    err, out = p.stderr, p.stdout.lower()
    if p.returncode < 0:
        return "killed by signal %d" % -p.returncode
    if p.returncode not in (0, 1, 2, 3):
        return "exit %d: %s" % (p.returncode, err.strip().splitlines()[-1:] if err.strip() else "")
    for sign in ("Sanitizer", "runtime error", "panic"):
        if sign in err:
            return "%s: %s" % (sign, [l for l in err.splitlines() if sign in l][:1])
    if any(x in out for x in (" nan", ",nan", "-nan", ":nan", " inf", ",inf", ":inf")):
        return "a NaN or an infinity in the output"
    if p.returncode == 0 and "--format" in args and args[args.index("--format") + 1] == "json":
        try:
            json.loads(p.stdout)
        except ValueError as e:
            return "--format json that does not parse: %s" % e
    return None


def main():
    ap = argparse.ArgumentParser(description="random valid-looking collsim runs")
    ap.add_argument("collsim")
    ap.add_argument("--kind", choices=sorted(DRAWS) + ["all"], default="all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--timeout", type=int, default=600)
    o = ap.parse_args()
    r = random.Random(o.seed)
    kinds = sorted(DRAWS) if o.kind == "all" else [o.kind]
    bad = runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(o.count):
            for args in DRAWS[kinds[i % len(kinds)]](r, tmp):
                runs += 1
                why = bad_run(o.collsim, args, o.timeout)
                if why:
                    bad += 1
                    print("bad: collsim %s\n  %s" % (" ".join(args), why))
                    if args[0] in ("simulate", "memory", "plan") and args[1].endswith(".yaml"):
                        with open(args[1]) as f:
                            print("  " + f.read().replace("\n", "\n  "))
    print("random-runs: %d runs (kind %s, seed %d), %d bad" % (runs, o.kind, o.seed, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
