/* SPDX-License-Identifier: MIT */
/*
 * trainargs.c - the options of one training configuration (trainargs.h):
 * help text, the positional scenario, resolving a scenario (file,
 * built-in name or defaults) with the options' overrides, and the
 * training of one strategy with the knobs and a global batch.
 */
#include "trainargs.h"

#include <string.h>

#include "base/yamlnode.h"
#include "config/config.h"

/* Defined in the generated scenario_presets_data.c. */
extern const size_t cs__scenario_preset_count;
extern const char *const cs__scenario_preset_names[];
extern const char *const cs__scenario_preset_texts[];
extern const size_t cs__scenario_preset_lengths[];

void cs_cli_train_help(FILE *f)
{
    char names[1024] = "", text[1400];
    for (size_t i = 0, k = 0; i < cs__scenario_preset_count && k < sizeof names; i++)
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "",
                              cs__scenario_preset_names[i]);
    snprintf(text, sizeof text,
             "optional: a scenario YAML (cluster, model, training and ranks in one file) or a "
             "built-in one by name (configs/scenarios/): %s; the options below override it.",
             names);
    fprintf(f, "  SCENARIO               ");
    cs_opts_wrap(f, text, 25, 25, 80);
    fprintf(f,
            "  --cluster FILE|PRESET  cluster YAML or preset (default %s)\n"
            "  --ranks N / --nodes K  as for `collsim collective` (default: the cluster's size)\n"
            "  --model SPEC           model YAML, preset (gpt2-124m ... llama3-70b), Hugging Face\n"
            "                         config (hf:PATH or PATH/config.json), default llama2-7b\n"
            "  --params P             a generic model of P parameters (13e9, 7B, 70b)\n"
            "  --seq-len S            sequence length (tokens per sequence), replacing the model's\n"
            "  --strategy S[,S...]    ",
            CS_DEFAULT_CLUSTER);
    char list[256], aliases[512];
    cs_opts_list(list, sizeof list, &cs_choice_strategy);
    cs_opts_aliases(aliases, sizeof aliases, &cs_choice_strategy);
    snprintf(text, sizeof text,
             "%s (default %s); PyTorch's and DeepSpeed's names are aliases, case, '-' and '_' "
             "aside: %s",
             list, cs_strategy_name(CS_STRAT_DDP), aliases);
    cs_opts_wrap(f, text, 25, 25, 80);
    /* the rows spelled zero0..zero3 */
    _Static_assert(CS_OPTS_ZERO_MAX == 3, "--zero's help names four stages");
    fprintf(f,
            "  --zero N               DeepSpeed ZeRO stage 0..3: %s, %s, %s,\n"
            "                         %s (replaces --strategy)\n",
            cs_strategy_name(cs_opts_zero_stage(0)), cs_strategy_name(cs_opts_zero_stage(1)),
            cs_strategy_name(cs_opts_zero_stage(2)), cs_strategy_name(cs_opts_zero_stage(3)));
    cs_opts_list(list, sizeof list, &cs_choice_optimizer);
    fprintf(f,
            "  --dtype T              fp32|bf16|fp16: one dtype for params, gradients and every\n"
            "                         collective (pure low-precision training, no fp32 master\n"
            "                         weights); mixed precision is set in the scenario YAML\n"
            "  --micro-batch B        sequences per GPU per micro-step (default 1)\n"
            "  --grad-accum G         micro-steps per optimizer step (default 1)\n"
            "  --global-batch G       sequences per optimizer step over all ranks (DeepSpeed's\n"
            "                         train_batch_size): grad-accum = G / (micro-batch x ranks)\n"
            "  --optimizer O          %s (default adamw)\n"
            "  --checkpointing C      activation checkpointing: none | selective | full\n"
            "  --selective-ac P       what selective means: attention (default: Megatron's,\n"
            "                         the unfused attention core), op (torchtitan's per-op\n"
            "                         policy) or N (every N-th block fully checkpointed)\n"
            "  --attention A          flash (default: fused attention, no stored s x s scores,\n"
            "                         as PyTorch SDPA: FlashAttention-2), flash2, flash1 (its\n"
            "                         speed: gpu.compute of the cluster) or standard (unfused:\n"
            "                         Korthikanti Table 2 as is)\n"
            "  --compile              torch.compile: pointwise ops and norms fused into one\n"
            "                         kernel each, and a block saves what Inductor's\n"
            "                         partition saves (scenario key compile: true)\n"
            "  --optimizer-in-backward  each parameter stepped and its gradient freed as\n"
            "                         backward makes it (torchtune's optimizer_in_bwd; needs\n"
            "                         grad-accum 1): the step's time moves into backward, one\n"
            "                         step per block after its gradients; memory only under\n"
            "                         --pp (scenario key optimizer_in_backward: true)\n"
            "  --activation-offloading  what each block saves goes to the host after its\n"
            "                         forward, back before its backward (torchtune's\n"
            "                         OffloadActivations): the copies run on their own stream\n"
            "                         at the host link's rate (the cluster's inter.pcie),\n"
            "                         exposed where compute waits; memory only under --pp\n"
            "                         (scenario key activation_offloading: true)\n"
            "  --tp T                 tensor-parallel degree (default 1: none): Megatron's\n"
            "                         column / row split over T consecutive ranks, with\n"
            "                         sequence parallelism; the strategy shards over ranks / T\n"
            "  --loss L               the loss kernel: naive (default: F.cross_entropy over fp32\n"
            "                         logits), fused (flash-attn's xentropy, as llm-foundry) or\n"
            "                         chunked (torchtune's CEWithChunkedOutputLoss)\n"
            "  --pp P                 pipeline-parallel degree (default 1: none): P stages,\n"
            "                         outermost, grad-accum micro-batches through them\n"
            "  --pp-schedule S        gpipe, 1f1b (default), interleaved_1f1b (with the\n"
            "                         scenario's virtual_stages) or zero_bubble (ZB-H1)\n",
            list);
}

int cs_cli_train_positional(const char *cmd, cs_cli_train *a, int argc, char **argv, int next)
{
    if (next < argc) a->scenario = argv[next++];
    if (next < argc) return cs_cli_usage(cmd, "unexpected argument '%s'", argv[next]);
    if (a->model && a->params > 0)
        return cs_cli_usage(cmd, "%s", "--model and --params are alternatives: give one");
    return -1;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* A scenario spec that is a name, not a path. */
static int is_name(const char *s)
{
    return !strchr(s, '/') && !ends_with(s, ".yaml") && !ends_with(s, ".yml");
}

int cs_cli_scenario_load(const char *spec, cs_scenario *sc, cs_diag *d)
{
    if (!is_name(spec)) return cs_scenario_load_file(spec, sc, d);
    for (size_t i = 0; i < cs__scenario_preset_count; i++)
        if (!strcmp(spec, cs__scenario_preset_names[i]))
            return cs_scenario_load_string(spec, cs__scenario_preset_texts[i],
                                           cs__scenario_preset_lengths[i], sc, d);
    const char *sug = cs_yamlnode_suggest(spec, (const char *const *)cs__scenario_preset_names,
                                          cs__scenario_preset_count);
    char hint[160] = "", list[400] = "";
    if (sug) snprintf(hint, sizeof hint, "did you mean '%s'? ", sug);
    for (size_t i = 0, k = 0; i < cs__scenario_preset_count && k < sizeof list; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "",
                              cs__scenario_preset_names[i]);
    return cs_diag_set(d, CS_ENOENT, NULL, 0, 0,
                       "unknown scenario '%.100s' (%sbuilt-in: %s; a file path needs a '/' or "
                       "a .yaml ending)",
                       spec, hint, list);
}

int cs_cli_train_resolve(const cs_cli_train *a, cs_scenario *sc, cs_diag *d)
{
    memset(sc, 0, sizeof *sc);
    int rc;
    if (a->scenario) {
        rc = cs_cli_scenario_load(a->scenario, sc, d);
        if (rc) return rc;
    } else {
        rc = cs_config_cluster(CS_DEFAULT_CLUSTER, &sc->cluster, d);
        if (rc) return rc;
        cs_training_defaults(&sc->training, CS_STRAT_DDP);
        rc = cs_model_load("llama2-7b", &sc->model, d);
        if (rc) return rc;
    }
    if (a->cluster && (rc = cs_config_cluster(a->cluster, &sc->cluster, d))) return rc;
    if (a->model && (rc = cs_model_load(a->model, &sc->model, d))) return rc;
    if (a->params > 0) { /* GPT-3's shape (cs_model_generic), at --seq-len if given */
        if ((rc = cs_model_generic(a->params, &sc->model, d))) return rc;
        if (a->seq_len &&
            (rc = cs_model_generic_shape(a->params, a->seq_len, sc->model.vocab, &sc->model, d)))
            return rc;
    } else if (a->seq_len) {
        sc->model.seq_len = a->seq_len;
        if ((rc = cs_model_derive(&sc->model, d))) return rc;
    }
    if (a->ranks) sc->ranks = a->ranks;
    if (a->nodes) sc->nodes = a->nodes;
    return 0;
}

int cs_cli_train_training(const char *cmd, const cs_cli_train *a, const cs_scenario *sc,
                          cs_strategy s, int ranks, cs_training *t)
{
    *t = sc->training;
    if (!a->scenario) cs_training_defaults(t, s);
    cs_training_set_strategy(t, s);
    cs_cli_knobs_apply(&a->knobs, t);
    int rc = cs_cli_knobs_batch(cmd, &a->knobs, ranks, t);
    if (rc) return rc;
    if (t->optimizer_in_backward && t->grad_accum > 1) /* torchtune raises the same */
        return cs_cli_usage(cmd,
                            "optimizer_in_backward steps each parameter as its gradient is made: "
                            "it needs grad-accum 1, got %d",
                            t->grad_accum);
    return 0;
}
