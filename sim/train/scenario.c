/* SPDX-License-Identifier: MIT */
/*
 * scenario.c - the scenario YAML loader.
 *
 * A scenario is one YAML mapping with `cluster`, `model`, `training`,
 * `ranks` and `nodes`. Its schema is data (cs_yfield tables walked by
 * yamlnode.c), so every error names file:line:column and unknown keys get
 * a did-you-mean. Settings that do not apply to the chosen strategy
 * (bucket_cap_mb under FSDP, shard_group without hybrid sharding...) are
 * errors rather than silently ignored: the strategy table says which keys
 * apply to which strategy, and which settings a strategy contradicts.
 * ranks / nodes are checked against the cluster by building the topology,
 * and the strategy's process groups against the ranks (the table's one
 * check: torch's HYBRID_SHARD needs whole replicas). Paths in a scenario
 * are relative to the scenario file. No global mutable state.
 */
#include "train/scenario.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/textfile.h"
#include "base/yamlnode.h"
#include "config/config.h"
#include "coll/topology.h"
#include "train/checkpoint.h"
#include "train/loss.h"
#include "train/layout.h"
#include "train/strategy.h"
#include "train/pipeline.h"
#include "train/pipeline_sched.h"
#include "train/tensor.h"

_Static_assert(sizeof(cs_strategy) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_optimizer) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_prefetch) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_dtype) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_ckpt) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_engine_kind) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_mixed_precision) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_comm_hook) == sizeof(int), "enum fields are stored as int");

#define MiB (1024.0 * 1024.0)

static const char *const prefetch_names[] = {
    [CS_PREFETCH_NONE] = "none", [CS_PREFETCH_PRE] = "pre", [CS_PREFETCH_POST] = "post", NULL};
/* Indexed by cs_dtype; must spell what cs_dtype_name returns (tested). */
static const char *const dtype_names[] = {
    [CS_DTYPE_FP32] = "fp32", [CS_DTYPE_TF32] = "tf32", [CS_DTYPE_BF16] = "bf16",
    [CS_DTYPE_FP16] = "fp16", [CS_DTYPE_FP8] = "fp8",   [CS_DTYPE_FP64] = "fp64",
    NULL,
};
_Static_assert(sizeof dtype_names / sizeof *dtype_names == CS_DTYPE_COUNT + 1, "names");
/* Indexed by cs_engine_kind; must spell what cs_engine_name returns. */
static const char *const engine_names[] = {
    [CS_ENGINE_ANALYTIC] = "analytic", [CS_ENGINE_DES] = "des", NULL};

#define OFF(member) offsetof(cs_training, member)
#define ROW(n, k, off, fl) .name = (n), .kind = (k), .offset = (off), .flags = (fl)

static int read_mib(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_yfield num = {.name = f->name, .kind = CS_YF_NUMBER, .flags = CS_YF_LO_OPEN, .hi = 1e6};
    double x;
    int rc = cs_yamlnode_read(c, &num, v, &x);
    if (!rc) *(double *)((char *)obj + f->offset) = x * MiB; /* torch: int(mb * 1024 * 1024) */
    return rc;
}

/* `true` (torch's limit_all_gathers=True: 2 in flight), `false` (no
 * limit, stored as 0) or a count >= 1. */
static int read_limit(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_training *t = obj;
    if (v->kind == CS_YNODE_SCALAR && (!strcmp(v->text, "true") || !strcmp(v->text, "false"))) {
        t->limit_all_gathers = v->text[0] == 't' ? 2 : 0;
        return 0;
    }
    cs_yfield n = {.name = f->name, .kind = CS_YF_INT, .lo = 1, .hi = 1024};
    if (v->kind != CS_YNODE_SCALAR || cs_yamlnode_read(c, &n, v, &t->limit_all_gathers))
        return cs_yamlnode_error(c, v,
                                 "'%s' must be true (2 all-gathers in flight, torch's rate "
                                 "limiter), false (no limit) or a count in 1..1024, got %s",
                                 f->name, v->kind == CS_YNODE_SCALAR ? v->text : "a collection");
    return 0;
}

/* Milliseconds, stored as seconds. */
static int read_ms(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_yfield num = {.name = f->name, .kind = CS_YF_NUMBER, .hi = 1e6};
    double x;
    int rc = cs_yamlnode_read(c, &num, v, &x);
    if (!rc) *(double *)((char *)obj + f->offset) = x * 1e-3;
    return rc;
}

/* A size, or `auto` for "derive from the cluster" (stored as -1). */
static int read_nccl_buffers(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_training *t = obj;
    if (v->kind == CS_YNODE_SCALAR && !strcmp(v->text, "auto")) {
        t->nccl_buffer_bytes = -1.0;
        return 0;
    }
    cs_yfield sz = {.name = f->name, .kind = CS_YF_SIZE, .flags = CS_YF_NO_HI};
    return cs_yamlnode_read(c, &sz, v, &t->nccl_buffer_bytes);
}

/* attention, op or a block interval N >= 1 (checkpoint.h). */
static int read_selective_ac(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_training *t = obj;
    if (v->kind != CS_YNODE_SCALAR || cs_checkpoint_parse_selective(v->text, &t->selective_ac))
        return cs_yamlnode_error(c, v,
                                 "'%s' must be attention (Megatron's selective recompute), op "
                                 "(torchtitan's per-op policy) or N >= 1 (every N-th block fully "
                                 "checkpointed), got %s",
                                 f->name, v->kind == CS_YNODE_SCALAR ? v->text : "a collection");
    return 0;
}

static const cs_yfield training_fields[] = {
    {ROW("strategy", CS_YF_ENUM, OFF(strategy), CS_YF_REQUIRED), .names = cs_strategy_names},
    {ROW("mixed_precision", CS_YF_ENUM, OFF(mixed_precision), 0),
     .names = cs_mixed_precision_names},
    {ROW("param_dtype", CS_YF_ENUM, OFF(param_dtype), 0), .names = dtype_names},
    {ROW("grad_reduce_dtype", CS_YF_ENUM, OFF(grad_reduce_dtype), 0), .names = dtype_names},
    {ROW("master_weights", CS_YF_BOOL, OFF(master_weights_fp32), 0)},
    {ROW("optimizer", CS_YF_ENUM, OFF(optimizer), 0), .names = cs_optimizer_names},
    {ROW("optimizer_impl", CS_YF_ENUM, OFF(optimizer_impl), 0), .names = cs_optimizer_impl_names},
    {ROW("optimizer_in_backward", CS_YF_BOOL, OFF(optimizer_in_backward), 0)},
    {ROW("activation_offloading", CS_YF_BOOL, OFF(activation_offloading), 0)},
    {ROW("hold_logits", CS_YF_BOOL, OFF(hold_logits), 0)},
    {ROW("micro_batch", CS_YF_INT, OFF(micro_batch), 0), .lo = CS_LIMIT_LO_MICRO_BATCH, .hi = CS_LIMIT_HI_MICRO_BATCH},
    {ROW("grad_accum", CS_YF_INT, OFF(grad_accum), 0), .lo = CS_LIMIT_LO_GRAD_ACCUM, .hi = CS_LIMIT_HI_GRAD_ACCUM},
    {ROW("activation_checkpointing", CS_YF_ENUM, OFF(checkpointing), 0), .names = cs_ckpt_names},
    {ROW("selective_ac", CS_YF_CUSTOM, 0, 0), .fn = read_selective_ac},
    {ROW("flash_attention", CS_YF_BOOL, OFF(flash_attention), 0)},
    {ROW("attention_kernel", CS_YF_ENUM, OFF(attention_kernel), 0), .names = cs_attn_kernel_names},
    {ROW("compile", CS_YF_BOOL, OFF(compile), 0)},
    {ROW("loss_impl", CS_YF_ENUM, OFF(loss_impl), 0), .names = cs_loss_impl_names},
    {ROW("train_metrics", CS_YF_INT, OFF(train_metrics), 0), .lo = CS_LIMIT_LO_TRAIN_METRICS,
     .hi = CS_LIMIT_HI_TRAIN_METRICS},
    {ROW("bucket_cap_mb", CS_YF_CUSTOM, OFF(bucket_cap_bytes), 0), .fn = read_mib},
    {ROW("first_bucket_mb", CS_YF_CUSTOM, OFF(first_bucket_bytes), 0), .fn = read_mib},
    {ROW("gradient_as_bucket_view", CS_YF_BOOL, OFF(gradient_as_bucket_view), 0)},
    {ROW("ddp_comm_hook", CS_YF_ENUM, OFF(ddp_comm_hook), 0), .names = cs_comm_hook_names},
    {ROW("shard_group", CS_YF_INT, OFF(shard_group), 0), .lo = CS_LIMIT_LO_SHARD_GROUP, .hi = CS_LIMIT_HI_SHARD_GROUP},
    {ROW("tensor_parallel", CS_YF_INT, OFF(tensor_parallel), 0), .lo = CS_LIMIT_LO_TENSOR_PARALLEL, .hi = CS_LIMIT_HI_TENSOR_PARALLEL},
    {ROW("sequence_parallel", CS_YF_BOOL, OFF(sequence_parallel), 0)},
    {ROW("async_tp", CS_YF_BOOL, OFF(async_tp), 0)},
    {ROW("pipeline_parallel", CS_YF_INT, OFF(pipeline_parallel), 0), .lo = CS_LIMIT_LO_PIPELINE_PARALLEL, .hi = CS_LIMIT_HI_PIPELINE_PARALLEL},
    {ROW("virtual_stages", CS_YF_INT, OFF(virtual_stages), 0), .lo = CS_LIMIT_LO_VIRTUAL_STAGES, .hi = CS_LIMIT_HI_VIRTUAL_STAGES},
    {ROW("pipeline_schedule", CS_YF_ENUM, OFF(pipeline_schedule), 0), .names = cs_pp_schedule_names},
    {ROW("backward_prefetch", CS_YF_ENUM, OFF(backward_prefetch), 0), .names = prefetch_names},
    {ROW("forward_prefetch", CS_YF_BOOL, OFF(forward_prefetch), 0)},
    {ROW("limit_all_gathers", CS_YF_CUSTOM, 0, 0), .fn = read_limit},
    {ROW("reshard_after_forward", CS_YF_BOOL, OFF(reshard_after_forward), 0)},
    {ROW("fsdp_version", CS_YF_INT, OFF(fsdp_version), 0), .lo = 1, .hi = 2},
    {ROW("fsdp_unit_layers", CS_YF_INT, OFF(fsdp_unit_layers), 0), .lo = 0, .hi = 1 << 20},
    {ROW("fsdp_hook_cpu_ms", CS_YF_CUSTOM, OFF(fsdp_hook_cpu_s), 0), .fn = read_ms},
    {ROW("compute_efficiency", CS_YF_NUMBER, OFF(compute_efficiency), CS_YF_LO_OPEN), .hi = 1},
    {ROW("comm_compute_slowdown", CS_YF_NUMBER, OFF(comm_compute_slowdown), 0), .hi = 10},
    {ROW("cuda_context", CS_YF_SIZE, OFF(cuda_context_bytes), CS_YF_NO_HI)},
    {ROW("nccl_buffers", CS_YF_CUSTOM, 0, 0), .fn = read_nccl_buffers},
    {ROW("fragmentation", CS_YF_NUMBER, OFF(fragmentation), CS_YF_HI_OPEN), .hi = 1},
    {ROW("collective_engine", CS_YF_ENUM, OFF(collective_engine), 0), .names = engine_names},
    {.name = NULL},
};

/* The key node of `key` in map (NULL if absent): errors about a key that
 * should not be there point at the key, not its value. */
static const cs_ynode *find_key(const cs_ynode *map, const char *key)
{
    for (size_t i = 0; i < map->n; i++)
        if (!strcmp(cs_yamlnode_key(map, i)->text, key)) return cs_yamlnode_key(map, i);
    return NULL;
}

/* mixed_precision and the keys that predate it. param_dtype is the
 * compute dtype in every mode (amp: autocast's). Without mixed_precision,
 * `master_weights: false` under a strategy trained with autocast (ddp,
 * zero1) meant a pure model, as it still does; under FSDP it keeps its
 * meaning (no fp32 shard: the same memory as pure). What a mode fixes
 * cannot be set against it: amp reduces fp32 gradients (a DDP hook casts
 * them), pure keeps no master copy and reduces in param_dtype. */
static int read_precision(const cs_yctx *c, const cs_ynode *v, cs_training *t)
{
    const cs_ynode *mp = find_key(v, "mixed_precision"), *mw = find_key(v, "master_weights");
    const cs_ynode *gr = find_key(v, "grad_reduce_dtype");
    const cs_strategy_row *row = cs_strategy_row_of(t->strategy);
    if (!mp && mw && !t->master_weights_fp32 && row->autocast) t->mixed_precision = CS_MP_PURE;
    const char *name = cs_strategy_name(t->strategy);
    if (t->mixed_precision == CS_MP_FSDP_PARAM_DTYPE && row->autocast)
        return cs_yamlnode_error(c, mp,
                                 "mixed_precision fsdp_param_dtype is FSDP's MixedPrecision; %s "
                                 "trains under amp (torch.autocast over fp32 parameters) or pure "
                                 "(the model in param_dtype)",
                                 name);
    if (t->mixed_precision == CS_MP_AMP && gr && t->grad_reduce_dtype != CS_DTYPE_FP32)
        return cs_yamlnode_error(c, gr,
                                 "under mixed_precision amp the gradients are fp32 and are reduced "
                                 "in fp32%s",
                                 row->autocast ? "; ddp_comm_hook: bf16_compress (or "
                                                 "fp16_compress) all-reduces them in 16 bits"
                                               : "");
    if (t->mixed_precision == CS_MP_PURE && mw && t->master_weights_fp32)
        return cs_yamlnode_error(c, mw, "mixed_precision pure keeps no fp32 master copy");
    if (t->mixed_precision == CS_MP_PURE && gr && t->grad_reduce_dtype != t->param_dtype)
        return cs_yamlnode_error(c, gr,
                                 "mixed_precision pure reduces the gradients in param_dtype (%s)",
                                 cs_dtype_name(t->param_dtype));
    cs_training_resolve_precision(t);
    return 0;
}

/* The strategy first (defaults depend on it), then the whole table. */
static int read_training(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_scenario *sc = obj;
    if (v->kind != CS_YNODE_MAPPING)
        return cs_yamlnode_error(c, v, "'%s' must be a mapping with at least 'strategy', got %s",
                                 f->name, cs_yamlnode_describe(v));
    const cs_ynode *sv = cs_yamlnode_find(v, "strategy");
    int s = CS_STRAT_DDP;
    if (sv) {
        int rc = cs_yamlnode_read(c, &training_fields[0], sv, &s);
        if (rc) return rc;
    }
    cs_training t;
    cs_training_defaults(&t, (cs_strategy)s);
    int rc = cs_yamlnode_apply(c, v, "training", training_fields, &t);
    if (!rc) rc = read_precision(c, v, &t);
    const cs_ynode *sac = find_key(v, "selective_ac");
    if (!rc && sac && t.checkpointing != CS_CKPT_SELECTIVE)
        rc = cs_yamlnode_error(c, sac, "selective_ac applies to activation_checkpointing: selective");
    if (rc) return rc;
    for (int k = 0; k < CS_KNOB_COUNT; k++) {
        const char *key = cs_strategy_knob_key((cs_knob)k);
        const cs_ynode *kv = find_key(v, key);
        if (kv && !cs_strategy_knob_applies(t.strategy, (cs_knob)k)) {
            char which[512];
            cs_strategy_knob_scope((cs_knob)k, which, sizeof which);
            return cs_yamlnode_error(c, kv,
                                     "'%s' applies only to %s, but the strategy is %s "
                                     "(line %d, column %d)",
                                     key, which, cs_strategy_name(t.strategy), sv->line,
                                     sv->column);
        }
    }
    const cs_strategy_row *row = cs_strategy_row_of(t.strategy);
    const char *key = NULL, *why = row->contradiction ? row->contradiction(&t, &key) : NULL;
    if (why) return cs_yamlnode_error(c, find_key(v, key), "%s", why);
    if (t.async_tp && !cs_tensor_sequence_parallel(&t) && cs_tensor_degree(&t) > 1)
        return cs_yamlnode_error(c, find_key(v, "async_tp"),
                                 "async_tp overlaps the sequence-parallel all-gathers and "
                                 "reduce-scatters with the GEMMs: it needs sequence_parallel");
    if (t.optimizer_in_backward && t.grad_accum > 1)
        return cs_yamlnode_error(c, find_key(v, "optimizer_in_backward"),
                                 "optimizer_in_backward steps each parameter and frees its "
                                 "gradient as backward makes it (torchtune raises on "
                                 "optimizer_in_bwd with gradient accumulation): it needs "
                                 "grad_accum 1, got %d", t.grad_accum);
    sc->training = t;
    return 0;
}

/* Paths in a scenario are relative to the scenario file. */
static void resolve_path(const char *origin, const char *spec, char *buf, size_t len)
{
    const char *slash = origin ? strrchr(origin, '/') : NULL;
    if (cs_textfile_is_path(spec) && spec[0] != '/' && slash)
        snprintf(buf, len, "%.*s/%s", (int)(slash - origin), origin, spec);
    else
        snprintf(buf, len, "%s", spec);
}

/* A failure with no position (unknown preset, missing file) is reported
 * at the scenario's node; one inside the named file keeps its position. */
static int relocate(const cs_yctx *c, const cs_ynode *v, const char *what, int rc)
{
    if (c->d && c->d->line == 0) {
        char msg[sizeof c->d->message], file[sizeof c->d->file];
        snprintf(msg, sizeof msg, "%s", c->d->message);
        snprintf(file, sizeof file, "%s", c->d->file);
        if (file[0]) return cs_yamlnode_error(c, v, "%s: %.200s: %s", what, file, msg);
        return cs_yamlnode_error(c, v, "%s: %s", what, msg);
    }
    return rc;
}

static int read_cluster(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_scenario *sc = obj;
    if (v->kind == CS_YNODE_MAPPING) return cs_config_cluster_from_node(c, v, f->name, "cluster",
                                                                        &sc->cluster);
    if (v->kind != CS_YNODE_SCALAR || cs_yamlnode_is_null(v) || !v->len)
        return cs_yamlnode_error(c, v,
                                 "'%s' must be a preset name, a cluster file or a mapping, got %s",
                                 f->name, cs_yamlnode_describe(v));
    char spec[1024];
    resolve_path(c->origin, v->text, spec, sizeof spec);
    int rc = cs_config_cluster(spec, &sc->cluster, c->d);
    return rc ? relocate(c, v, "cluster", rc) : 0;
}

static int read_model(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_scenario *sc = obj;
    if (v->kind == CS_YNODE_MAPPING) return cs__model_from_node(c, v, &sc->model);
    if (v->kind != CS_YNODE_SCALAR || cs_yamlnode_is_null(v) || !v->len)
        return cs_yamlnode_error(c, v,
                                 "'%s' must be a preset name, a model file, a parameter count or "
                                 "a mapping of model keys, got %s",
                                 f->name, cs_yamlnode_describe(v));
    char spec[1024];
    size_t hf = strncmp(v->text, "hf:", 3) ? 0 : 3; /* hf:PATH: PATH is resolved */
    resolve_path(c->origin, v->text + hf, spec + hf, sizeof spec - hf);
    memcpy(spec, v->text, hf);
    int rc = cs_model_load(spec, &sc->model, c->d);
    return rc ? relocate(c, v, "model", rc) : 0;
}

static const cs_yfield scenario_fields[] = {
    {ROW("cluster", CS_YF_CUSTOM, 0, CS_YF_REQUIRED), .fn = read_cluster},
    {ROW("model", CS_YF_CUSTOM, 0, CS_YF_REQUIRED), .fn = read_model},
    {ROW("training", CS_YF_CUSTOM, 0, CS_YF_REQUIRED), .fn = read_training},
    {ROW("ranks", CS_YF_INT, offsetof(cs_scenario, ranks), 0), .lo = 1, .hi = CS_SCENARIO_RANKS_MAX},
    {ROW("nodes", CS_YF_INT, offsetof(cs_scenario, nodes), 0), .lo = 1, .hi = CS_SCENARIO_NODES_MAX},
    {.name = NULL},
};

/* ranks / nodes against the cluster, and the hybrid group against ranks. */
static int check_layout(const cs_yctx *c, const cs_ynode *root, const cs_scenario *sc)
{
    cs_topology *topo = cs_xmalloc(sizeof *topo);
    cs_diag td;
    int rc = cs_topology_build(&sc->cluster, sc->ranks, sc->nodes, topo, &td);
    const cs_ynode *at = cs_yamlnode_find(root, "ranks");
    if (!at) at = cs_yamlnode_find(root, "nodes");
    if (!at) at = cs_yamlnode_find(root, "cluster");
    if (rc) {
        rc = cs_yamlnode_error(c, at, "%s", td.message);
        goto out;
    }
    cs_mesh mesh;
    const cs_ynode *tr = cs_yamlnode_find(root, "training");
    const cs_ynode *tp = find_key(tr, "tensor_parallel");
    if (tp && (topo->ranks % cs_tensor_degree(&sc->training) ||
               cs_tensor_check(&sc->model, &sc->training, &td))) {
        if (topo->ranks % cs_tensor_degree(&sc->training))
            snprintf(td.message, sizeof td.message, "tensor_parallel %d does not divide the %d ranks",
                     cs_tensor_degree(&sc->training), topo->ranks);
        rc = cs_yamlnode_error(c, tp, "%s", td.message);
    } else if (cs_layout_mesh(&sc->training, topo, &mesh, &td)) {
        const cs_ynode *sg = find_key(tr, "shard_group");
        rc = cs_yamlnode_error(c, sg ? sg : at, "%s", td.message);
    } else if (cs_pipeline_check(&sc->model, &sc->training, &td)) {
        /* the stages against the layers and the schedule's own rule
         * (pipeline_sched.c): at virtual_stages where the file sets it */
        const cs_ynode *vs = find_key(tr, "virtual_stages"), *pp = find_key(tr, "pipeline_parallel");
        rc = cs_yamlnode_error(c, vs ? vs : pp ? pp : at, "%s", td.message);
    }
out:
    free(topo);
    return rc;
}

int cs_scenario_load_string(const char *origin, const char *yaml, size_t len, cs_scenario *out,
                            cs_diag *d)
{
    cs_diag_clear(d);
    if (!origin) origin = "<string>";
    cs_ynode *root;
    int rc = cs_yamlnode_parse_mapping(
        origin, yaml, len, "empty scenario: expected a mapping with cluster, model and training",
        "expected a mapping with cluster, model and training at the top level, got %s", &root, d);
    if (rc) return rc;
    cs_yctx c = {.origin = origin, .root = "scenario", .d = d};
    cs_scenario *sc = cs_xcalloc(1, sizeof *sc);
    rc = cs_yamlnode_apply(&c, root, "", scenario_fields, sc);
    if (!rc) rc = check_layout(&c, root, sc);
    if (!rc) *out = *sc;
    free(sc);
    cs_yamlnode_free(root);
    return rc;
}

int cs_scenario_load_file(const char *path, cs_scenario *out, cs_diag *d)
{
    cs_diag_clear(d);
    char *text;
    size_t len;
    int rc = cs_textfile_read(path, "scenario file", &text, &len, d);
    if (rc) return rc;
    rc = cs_scenario_load_string(path, text, len, out, d);
    free(text);
    return rc;
}
