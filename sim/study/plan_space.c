/* SPDX-License-Identifier: MIT */
/*
 * plan_space.c - the layouts and checkpointing policies `collsim plan`
 * searches, and each layout's memory floor (plan_space.h).
 *
 * Layouts. TP degrees are powers of 2 up to the GPUs per node (Megatron's
 * and torchtitan's placement: a TP group inside one NVLink domain;
 * Narayanan et al. 2021 Sec 3.3 "Takeaway #2"), PP degrees powers of 2 up
 * to the layers that divide the ranks left, the data-parallel ranks the
 * rest (Megatron's parallel_state.initialize_model_parallel needs
 * world = tp x pp x dp). Interleaving takes V chunks per stage where
 * P x V divides the layers (Megatron's TransformerBlock asserts it; an
 * uneven split is torchtitan's, but only flat schedules are searched on
 * it). Every schedule row is searched: adding a row to
 * pipeline_sched.c adds it here.
 *
 * Policies. Selective checkpointing comes in three flavours
 * (checkpoint.h): Megatron's attention core (useless under fused
 * attention: flash kernels keep no s x s scores), torchtitan's per-op
 * policy, and every N-th block (torchtitan's selective_ac_option, whose
 * default is "2": torchtitan/config/job_config.py ActivationCheckpoint).
 *
 * The floor. A rank holds its parameter shard and its optimizer states
 * from before the first forward to after the step (memory.c's
 * params_bytes and optimizer_bytes, sharded by the layout's ZeRO degrees;
 * under PP the stage's share, pipeline.c's count): nothing a micro-batch,
 * a checkpointing policy or a schedule changes. Gradients are left out
 * (a sharded strategy frees what it reduced; only params and optimizer
 * states are sure to be resident at the peak), as are activations,
 * buffers and overheads: the floor stays a lower bound, never a guess.
 */
#include "study/plan_space.h"

#include <stdlib.h>

#include "train/checkpoint.h"
#include "train/layout.h"
#include "train/memory.h"
#include "train/pipeline.h"
#include "train/pipeline_sched.h"
#include "train/tensor.h"

int cs_plan_space_tps(const cs_model *m, const cs_training *t, const cs_topology *topo,
                      const cs_plan_space *sp, int tps[CS_PLAN_MAX_DEGREES])
{
    if (sp && sp->tp > 0) {
        tps[0] = sp->tp;
        return 1;
    }
    int n = 0;
    for (int T = 1; T <= topo->cluster.gpus_per_node && T <= topo->ranks && n < CS_PLAN_MAX_DEGREES;
         T *= 2) {
        if (topo->ranks % T) continue;
        cs_training ti = *t;
        ti.tensor_parallel = T;
        cs_diag d;
        if (cs_tensor_check(m, &ti, &d) == 0) tps[n++] = T;
    }
    if (n == 0) tps[n++] = 1;
    return n;
}

int cs_plan_space_pps(const cs_model *m, const cs_topology *topo, int T, const cs_plan_space *sp,
                      int pps[CS_PLAN_MAX_DEGREES])
{
    if (sp && sp->pp > 0) {
        pps[0] = sp->pp;
        return 1;
    }
    int n = 0, left = topo->ranks / (T > 0 ? T : 1);
    for (int P = 1; P <= m->layers && P <= left && n < CS_PLAN_MAX_DEGREES; P *= 2)
        if (left % P == 0) pps[n++] = P;
    if (n == 0) pps[n++] = 1;
    return n;
}

int cs_plan_space_pipes(const cs_model *m, int P, const cs_plan_space *sp,
                        cs_plan_pipe out[CS_PLAN_MAX_PIPES])
{
    if (P <= 1) {
        out[0] = (cs_plan_pipe){1, -1};
        return 1;
    }
    int n = 0;
    unsigned allowed = sp && sp->schedules ? sp->schedules : ~0u;
    for (int i = 0; i < cs_pp_schedule_count(); i++) {
        if (!(allowed >> i & 1)) continue;
        if (!cs_pp_schedule_row_at(i)->interleaved) {
            if (n < CS_PLAN_MAX_PIPES) out[n++] = (cs_plan_pipe){1, i};
            continue;
        }
        for (int V = 2; (long)P * V <= m->layers && n < CS_PLAN_MAX_PIPES; V++)
            if (m->layers % (P * V) == 0) out[n++] = (cs_plan_pipe){V, i};
    }
    return n;
}

static int add_policy(cs_plan_policy *out, int n, cs_ckpt ck, int sac)
{
    for (int i = 0; i < n; i++)
        if (out[i].ckpt == ck && (ck != CS_CKPT_SELECTIVE || out[i].sac == sac)) return n;
    if (n < CS_PLAN_MAX_POLICIES) out[n++] = (cs_plan_policy){ck, ck == CS_CKPT_SELECTIVE ? sac : 0};
    return n;
}

int cs_plan_space_policies(const cs_training *t, const cs_plan_space *sp,
                           cs_plan_policy out[CS_PLAN_MAX_POLICIES])
{
    unsigned modes = sp && sp->ckpts ? sp->ckpts
                                     : 1u << t->checkpointing | 1u << CS_CKPT_NONE |
                                           1u << CS_CKPT_SELECTIVE | 1u << CS_CKPT_FULL;
    int n = 0;
    if (modes >> CS_CKPT_NONE & 1) n = add_policy(out, n, CS_CKPT_NONE, 0);
    if (modes >> CS_CKPT_SELECTIVE & 1) {
        if (sp && sp->sac_set) {
            n = add_policy(out, n, CS_CKPT_SELECTIVE, sp->sac);
        } else {
            if (!t->flash_attention) n = add_policy(out, n, CS_CKPT_SELECTIVE, CS_SAC_ATTENTION);
            n = add_policy(out, n, CS_CKPT_SELECTIVE, CS_SAC_OP);
            n = add_policy(out, n, CS_CKPT_SELECTIVE, 2);
        }
    }
    if (modes >> CS_CKPT_FULL & 1) n = add_policy(out, n, CS_CKPT_FULL, 0);
    /* the training's own, where the mask names its mode */
    if (modes >> t->checkpointing & 1 && !(sp && sp->sac_set))
        n = add_policy(out, n, t->checkpointing, t->selective_ac);
    return n;
}

int cs_plan_memory_floor(const cs_model *m, const cs_training *t, const cs_topology *topo,
                         double *floor_bytes, double *capacity_bytes, cs_diag *d)
{
    *floor_bytes = *capacity_bytes = 0;
    cs_training tt = *t;
    tt.micro_batch = 1; /* no model state depends on it */
    cs_layout *l = cs_xmalloc(sizeof *l);
    int rc = cs_layout_build(m, &tt, topo, l, d);
    int P = cs_pipeline_degree(t), V = cs_pipeline_chunks(t), T = cs_tensor_degree(t);
    for (int s = 0; rc == 0 && s < P; s++) {
        cs_memory mem;
        if (P > 1) l->params_per_rank = cs_pipeline_stage_params(m, P, V, s) / T;
        if ((rc = cs_memory_estimate_layout(m, &tt, l, 1, &mem, d))) break;
        double floor = mem.params_bytes + mem.optimizer_bytes;
        if (floor > *floor_bytes) *floor_bytes = floor;
        *capacity_bytes = mem.capacity_bytes;
    }
    free(l);
    return rc;
}
