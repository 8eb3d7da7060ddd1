/* SPDX-License-Identifier: MIT */
/*
 * training.c - training settings (strategy, precision, optimizer, batch,
 * DDP buckets, FSDP knobs, efficiency and overhead parameters), their
 * defaults, and the scenario YAML loader.
 *
 * Strategy and knob names are PyTorch's (torch.nn.parallel.
 * DistributedDataParallel, torch.distributed.fsdp.ShardingStrategy /
 * BackwardPrefetch, torch.distributed.optim.ZeroRedundancyOptimizer for
 * zero1). Every default below is either PyTorch's own default (named), a
 * cited measurement, or a documented configuration value meant to be
 * calibrated; configs/scenarios/README.md lists them for users.
 *
 * A scenario is one YAML mapping with `cluster`, `model`, `training`,
 * `ranks` and `nodes`. Its schema is data (cs_yfield tables walked by
 * yamlnode.c), so every error names file:line:column and unknown keys get
 * a did-you-mean. Settings that do not apply to the chosen strategy
 * (bucket_cap_mb under FSDP, shard_group without hybrid sharding...) are
 * errors rather than silently ignored. ranks / nodes are checked against
 * the cluster by building the topology, and hybrid sharding's group size
 * must divide the rank count (torch's HYBRID_SHARD needs whole replicas).
 * No global mutable state.
 */
#include "train/training.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "train/memory.h"
#include "coll/topology.h"
#include "base/yamlnode.h"

_Static_assert(sizeof(cs_strategy) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_optimizer) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_prefetch) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_dtype) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_ckpt) == sizeof(int), "enum fields are stored as int");

#define MiB (1024.0 * 1024.0)

static const char *const strategy_names[] = {
    [CS_STRAT_DDP] = "ddp",
    [CS_STRAT_ZERO1] = "zero1",
    [CS_STRAT_FSDP_NO_SHARD] = "fsdp_no_shard",
    [CS_STRAT_FSDP_SHARD_GRAD_OP] = "fsdp_shard_grad_op",
    [CS_STRAT_FSDP_FULL_SHARD] = "fsdp_full_shard",
    [CS_STRAT_FSDP_HYBRID_SHARD] = "fsdp_hybrid_shard",
    NULL,
};
static const char *const optimizer_names[] = {
    [CS_OPT_ADAM] = "adam",
    [CS_OPT_ADAMW] = "adamw",
    [CS_OPT_SGD_MOMENTUM] = "sgd_momentum",
    [CS_OPT_SGD] = "sgd",
    NULL,
};
static const char *const prefetch_names[] = {
    [CS_PREFETCH_NONE] = "none", [CS_PREFETCH_PRE] = "pre", [CS_PREFETCH_POST] = "post", NULL};
static const char *const ckpt_names[] = {
    [CS_CKPT_NONE] = "none", [CS_CKPT_SELECTIVE] = "selective", [CS_CKPT_FULL] = "full", NULL};
/* Indexed by cs_dtype; must spell what cs_dtype_name returns (tested). */
static const char *const dtype_names[] = {
    [CS_DTYPE_FP32] = "fp32", [CS_DTYPE_TF32] = "tf32", [CS_DTYPE_BF16] = "bf16",
    [CS_DTYPE_FP16] = "fp16", [CS_DTYPE_FP8] = "fp8",   [CS_DTYPE_FP64] = "fp64",
    NULL,
};
_Static_assert(sizeof strategy_names / sizeof *strategy_names == CS_STRAT_COUNT + 1, "names");
_Static_assert(sizeof optimizer_names / sizeof *optimizer_names == CS_OPT_COUNT + 1, "names");
_Static_assert(sizeof ckpt_names / sizeof *ckpt_names == CS_CKPT_COUNT + 1, "names");
_Static_assert(sizeof dtype_names / sizeof *dtype_names == CS_DTYPE_COUNT + 1, "names");
/* Indexed by cs_engine_kind; must spell what cs_engine_name returns. */
static const char *const engine_names[] = {
    [CS_ENGINE_ANALYTIC] = "analytic", [CS_ENGINE_DES] = "des", NULL};
_Static_assert(sizeof(cs_engine_kind) == sizeof(int), "enum fields are stored as int");

const char *cs_strategy_name(cs_strategy s)
{
    CS_ASSERT(s >= 0 && s < CS_STRAT_COUNT);
    return strategy_names[s];
}

int cs_strategy_parse(const char *s, cs_strategy *out)
{
    for (int i = 0; i < CS_STRAT_COUNT; i++)
        if (!strcmp(s, strategy_names[i])) {
            *out = (cs_strategy)i;
            return 0;
        }
    return CS_EINVAL;
}

const char *cs_ckpt_name(cs_ckpt c)
{
    CS_ASSERT(c >= 0 && c < CS_CKPT_COUNT);
    return ckpt_names[c];
}

const char *cs_optimizer_name(cs_optimizer o)
{
    CS_ASSERT(o >= 0 && o < CS_OPT_COUNT);
    return optimizer_names[o];
}

int cs_optimizer_parse(const char *s, cs_optimizer *out)
{
    for (int i = 0; i < CS_OPT_COUNT; i++)
        if (!strcmp(s, optimizer_names[i])) {
            *out = (cs_optimizer)i;
            return 0;
        }
    return CS_EINVAL;
}

void cs_training_defaults(cs_training *t, cs_strategy s)
{
    CS_ASSERT(s >= 0 && s < CS_STRAT_COUNT);
    memset(t, 0, sizeof *t);
    t->strategy = s;
    /* Mixed precision as in ZeRO Sec 3.1 and torch.amp / FSDP
     * MixedPrecision(param_dtype=bfloat16): 16-bit compute copy, fp32
     * master weights and Adam states. */
    t->param_dtype = CS_DTYPE_BF16;
    t->grad_reduce_dtype = CS_DTYPE_BF16;
    t->master_weights_fp32 = 1;
    t->optimizer = CS_OPT_ADAMW;
    t->micro_batch = 1;
    t->grad_accum = 1;
    t->checkpointing = CS_CKPT_NONE;
    /* PyTorch >= 2.0 scaled_dot_product_attention dispatches bf16/fp16
     * attention to FlashAttention (Dao et al. 2022) or memory-efficient
     * kernels, which never materialise the s x s score matrix */
    t->flash_attention = 1;
    /* torch DDP: bucket_cap_mb=25 and dist._DEFAULT_FIRST_BUCKET_BYTES =
     * 1 MiB (torch/nn/parallel/distributed.py); gradient_as_bucket_view
     * defaults to False. */
    t->bucket_cap_bytes = 25.0 * MiB;
    t->first_bucket_bytes = 1.0 * MiB;
    t->gradient_as_bucket_view = 0;
    /* FSDP: hybrid group = one node; backward_prefetch=BACKWARD_PRE and
     * forward_prefetch=False are FullyShardedDataParallel's defaults; its
     * rate limiter (limit_all_gathers=True) lets two all-gathers run ahead
     * (torch/distributed/fsdp/_limiter_utils.py, _FreeEventQueue.
     * _max_num_inflight_all_gathers = 2). */
    t->shard_group = 0;
    t->backward_prefetch = CS_PREFETCH_PRE;
    t->forward_prefetch = 0;
    t->limit_all_gathers = 2;
    t->reshard_after_forward = -1;
    /* Achieved / peak FLOP/s for GEMM-heavy work: Korthikanti et al. 2022
     * (arXiv:2205.05198) Table 5 measure 41.5-56.3% model FLOPs
     * utilisation for 22B-1T GPT models on A100 (validation data:
     * korthikanti_measured.csv); 0.5 sits in that range. Calibrate per
     * cluster. */
    t->compute_efficiency = 0.5;
    /* Slowdown of compute and communication while they overlap (NCCL
     * kernels take SMs and memory bandwidth from GEMMs). A calibration
     * parameter: 0 until fitted to measurements of the cluster. */
    t->comm_compute_slowdown = 0.0;
    /* CUDA context and the kernels loaded with PyTorch: an approximate
     * figure of several hundred MiB per GPU as reported by nvidia-smi for
     * an idle PyTorch process on H100 with CUDA 12 (lazy module loading
     * on). A configuration value, not a constant of nature: measure with
     * nvidia-smi on the target machine. */
    t->cuda_context_bytes = 512.0 * MiB;
    /* Derived from the cluster's channels (memory.c). */
    t->nccl_buffer_bytes = -1.0;
    /* Caching-allocator waste as a fraction of what PyTorch allocates
     * (torch.cuda.memory_reserved vs memory_allocated). An assumed
     * typical value, configurable; no published constant. */
    t->fragmentation = 0.05;
    /* Collectives priced by the closed form; `des` runs each distinct one
     * through the discrete-event engine instead (slower, same choice of
     * algorithm and protocol). */
    t->collective_engine = CS_ENGINE_ANALYTIC;
}

double cs_training_optimizer_bytes_per_param(const cs_training *t)
{
    int ps = cs_dtype_size(t->param_dtype);
    int master = t->master_weights_fp32 && ps < 4;
    /* States live in the dtype of what the optimizer updates. */
    double state = master ? 4.0 : (double)ps;
    double master_bytes = master ? 4.0 : 0.0;
    switch (t->optimizer) {
    case CS_OPT_ADAM:
    case CS_OPT_ADAMW:
        return master_bytes + 2.0 * state; /* exp_avg, exp_avg_sq */
    case CS_OPT_SGD_MOMENTUM:
        return master_bytes + state; /* momentum_buffer */
    case CS_OPT_SGD:
        return master_bytes;
    default:
        CS_PANIC("unknown optimizer %d", (int)t->optimizer);
    }
}

int cs_training_reshard_after_forward(const cs_training *t)
{
    switch (t->strategy) {
    case CS_STRAT_FSDP_FULL_SHARD:
    case CS_STRAT_FSDP_HYBRID_SHARD:
        return t->reshard_after_forward != 0;
    default:
        return 0;
    }
}

/* ---- scenario YAML ---- */

#define OFF(member) offsetof(cs_training, member)
#define ROW(n, k, off, fl) .name = (n), .kind = (k), .offset = (off), .flags = (fl)
#define BIT(s) (1u << (s))
#define DDP_LIKE (BIT(CS_STRAT_DDP) | BIT(CS_STRAT_ZERO1))
#define FSDP_ANY                                                                        \
    (BIT(CS_STRAT_FSDP_NO_SHARD) | BIT(CS_STRAT_FSDP_SHARD_GRAD_OP) |                  \
     BIT(CS_STRAT_FSDP_FULL_SHARD) | BIT(CS_STRAT_FSDP_HYBRID_SHARD))
#define FSDP_SHARDED                                                                    \
    (BIT(CS_STRAT_FSDP_SHARD_GRAD_OP) | BIT(CS_STRAT_FSDP_FULL_SHARD) |                \
     BIT(CS_STRAT_FSDP_HYBRID_SHARD))

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

typedef struct knob_scope {
    const char *key;
    unsigned strategies;
    const char *which;
} knob_scope;

/* Keys that mean something only under some strategies. */
static const knob_scope knob_scopes[] = {
    {"bucket_cap_mb", DDP_LIKE, "ddp and zero1 (DDP's gradient buckets)"},
    {"first_bucket_mb", DDP_LIKE, "ddp and zero1 (DDP's gradient buckets)"},
    {"gradient_as_bucket_view", DDP_LIKE, "ddp and zero1 (DDP's gradient buckets)"},
    {"backward_prefetch", FSDP_ANY, "the fsdp_* strategies"},
    {"forward_prefetch", FSDP_ANY, "the fsdp_* strategies"},
    {"limit_all_gathers", FSDP_ANY, "the fsdp_* strategies"},
    {"reshard_after_forward", FSDP_SHARDED, "fsdp_shard_grad_op, fsdp_full_shard and "
                                            "fsdp_hybrid_shard"},
    {"shard_group", BIT(CS_STRAT_FSDP_HYBRID_SHARD), "fsdp_hybrid_shard"},
};

static const cs_yfield training_fields[] = {
    {ROW("strategy", CS_YF_ENUM, OFF(strategy), CS_YF_REQUIRED), .names = strategy_names},
    {ROW("param_dtype", CS_YF_ENUM, OFF(param_dtype), 0), .names = dtype_names},
    {ROW("grad_reduce_dtype", CS_YF_ENUM, OFF(grad_reduce_dtype), 0), .names = dtype_names},
    {ROW("master_weights", CS_YF_BOOL, OFF(master_weights_fp32), 0)},
    {ROW("optimizer", CS_YF_ENUM, OFF(optimizer), 0), .names = optimizer_names},
    {ROW("micro_batch", CS_YF_INT, OFF(micro_batch), 0), .lo = 1, .hi = 1 << 20},
    {ROW("grad_accum", CS_YF_INT, OFF(grad_accum), 0), .lo = 1, .hi = 1 << 20},
    {ROW("activation_checkpointing", CS_YF_ENUM, OFF(checkpointing), 0), .names = ckpt_names},
    {ROW("flash_attention", CS_YF_BOOL, OFF(flash_attention), 0)},
    {ROW("bucket_cap_mb", CS_YF_CUSTOM, OFF(bucket_cap_bytes), 0), .fn = read_mib},
    {ROW("first_bucket_mb", CS_YF_CUSTOM, OFF(first_bucket_bytes), 0), .fn = read_mib},
    {ROW("gradient_as_bucket_view", CS_YF_BOOL, OFF(gradient_as_bucket_view), 0)},
    {ROW("shard_group", CS_YF_INT, OFF(shard_group), 0), .lo = 0, .hi = 1 << 20},
    {ROW("backward_prefetch", CS_YF_ENUM, OFF(backward_prefetch), 0), .names = prefetch_names},
    {ROW("forward_prefetch", CS_YF_BOOL, OFF(forward_prefetch), 0)},
    {ROW("limit_all_gathers", CS_YF_CUSTOM, 0, 0), .fn = read_limit},
    {ROW("reshard_after_forward", CS_YF_BOOL, OFF(reshard_after_forward), 0)},
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
    if (rc) return rc;
    for (size_t i = 0; i < sizeof knob_scopes / sizeof *knob_scopes; i++) {
        const knob_scope *k = &knob_scopes[i];
        const cs_ynode *kv = find_key(v, k->key);
        if (kv && !(k->strategies & BIT(t.strategy)))
            return cs_yamlnode_error(c, kv,
                                     "'%s' applies only to %s, but the strategy is %s "
                                     "(line %d, column %d)",
                                     k->key, k->which, strategy_names[t.strategy], sv->line,
                                     sv->column);
    }
    if (t.strategy == CS_STRAT_FSDP_SHARD_GRAD_OP && t.reshard_after_forward == 1)
        return cs_yamlnode_error(c, find_key(v, "reshard_after_forward"),
                                 "fsdp_shard_grad_op keeps parameters unsharded from forward "
                                 "to backward; reshard_after_forward: true is fsdp_full_shard");
    sc->training = t;
    return 0;
}

/* Paths in a scenario are relative to the scenario file. */
static void resolve_path(const char *origin, const char *spec, char *buf, size_t len)
{
    int looks_like_path = strchr(spec, '/') != NULL;
    size_t n = strlen(spec);
    if ((n > 5 && !strcmp(spec + n - 5, ".yaml")) || (n > 4 && !strcmp(spec + n - 4, ".yml")))
        looks_like_path = 1;
    const char *slash = origin ? strrchr(origin, '/') : NULL;
    if (looks_like_path && spec[0] != '/' && slash)
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
    resolve_path(c->origin, v->text, spec, sizeof spec);
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
    if (sc->training.strategy == CS_STRAT_FSDP_HYBRID_SHARD) {
        int g = cs_memory_shard_group(&sc->training, topo);
        if (topo->ranks % g) {
            const cs_ynode *tr = cs_yamlnode_find(root, "training");
            const cs_ynode *sg = find_key(tr, "shard_group");
            rc = cs_yamlnode_error(c, sg ? sg : at,
                                   "fsdp_hybrid_shard needs the shard group (%d ranks) to divide "
                                   "the %d ranks into whole replicas",
                                   g, topo->ranks);
        }
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
    cs_ynode *root = NULL;
    int rc = cs_yamlnode_parse(origin, yaml, len, &root, d);
    if (rc) return rc;
    cs_yctx c = {.origin = origin, .root = "scenario", .d = d};
    cs_scenario *sc = cs_xcalloc(1, sizeof *sc);
    if (!root || cs_yamlnode_is_null(root))
        rc = cs_diag_set(d, CS_ECONFIG, origin, root ? root->line : 1, root ? root->column : 1,
                         "empty scenario: expected a mapping with cluster, model and training");
    else if (root->kind != CS_YNODE_MAPPING)
        rc = cs_yamlnode_error(&c, root,
                               "expected a mapping with cluster, model and training at the top "
                               "level, got %s",
                               cs_yamlnode_describe(root));
    else
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
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return cs_diag_set(d, e == ENOENT ? CS_ENOENT : CS_EIO, path, 0, 0,
                           "cannot open scenario file: %s", strerror(e));
    }
    size_t cap = 4096, n = 0;
    char *buf = cs_xmalloc(cap);
    for (;;) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n + 1 < cap) break; /* short read: EOF or error */
        cap *= 2;
        buf = cs_xrealloc(buf, cap);
    }
    int failed = ferror(f), e = errno;
    fclose(f);
    int rc;
    if (failed)
        rc = cs_diag_set(d, CS_EIO, path, 0, 0, "cannot read scenario file: %s", strerror(e));
    else {
        buf[n] = '\0';
        rc = cs_scenario_load_string(path, buf, n, out, d);
    }
    free(buf);
    return rc;
}

cs_ckpt cs_training_running_activations(const cs_training *t)
{
    return t->flash_attention ? CS_CKPT_SELECTIVE : CS_CKPT_NONE;
}

cs_ckpt cs_training_kept_activations(const cs_training *t)
{
    if (t->checkpointing == CS_CKPT_NONE) return cs_training_running_activations(t);
    return t->checkpointing;
}
