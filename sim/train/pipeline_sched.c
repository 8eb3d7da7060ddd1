/* SPDX-License-Identifier: MIT */
/*
 * pipeline_sched.c - the pipeline schedule table (pipeline_sched.h): one
 * row per schedule, each an order generator and the bubble its source
 * states for uniform stages (every pass of every stage takes the same
 * time, transfers free).
 *
 *   gpipe             Huang et al. 2019; torch.distributed.pipelining
 *                     schedules.py ScheduleGPipe._step_microbatches: every
 *                     forward, then every backward in micro-batch order.
 *                     Bubble (P - 1) / m, all m micro-batches held.
 *   1f1b              PipeDream-Flush (Narayanan et al. 2021 Sec 2.2.1);
 *                     Megatron-LM megatron/core/pipeline_parallel/
 *                     schedules.py forward_backward_pipelining_without_
 *                     interleaving: min(P - stage - 1, m) warm-up
 *                     forwards, then one forward and one backward in turn,
 *                     then the remaining backwards. Bubble (P - 1) / m,
 *                     at most P - stage micro-batches held.
 *   interleaved_1f1b  Narayanan et al. 2021 Sec 2.2.2; Megatron-LM
 *                     schedules.py forward_backward_pipelining_with_
 *                     interleaving: m x V virtual micro-steps, step k's
 *                     chunk (k mod PV) / P (backward: V - 1 - that), its
 *                     micro-batch (k / PV) x P + k mod P; (P - stage - 1)
 *                     x 2 + (V - 1) x P warm-up forwards (all of them when
 *                     m = P), then 1F1B. Needs m a multiple of P, as
 *                     Megatron asserts. Bubble (P - 1) / (m V).
 *   zero_bubble       ZB-H1 of Qi et al. 2024 ("Zero Bubble Pipeline
 *                     Parallelism", ICLR 2024) Sec 3.1: the backward split
 *                     into B (input gradient, on the critical path) and W
 *                     (weight gradient, deferrable); F and B as in 1F1B (at
 *                     most P - stage forwards ahead of the backwards), the
 *                     W of micro-batch k - stage after B of k, the rest at
 *                     the end: at most P micro-batches in flight (F run, W
 *                     not) on any stage, so 1F1B's peak (Table 2: p M_B).
 *                     Bubble (P - 1)(tf + tb - tw) / (m (tf + tb + tw)).
 *
 * Orders are pure functions of (P, V, m, stage); nothing is stored.
 */
#include "train/pipeline_sched.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

static int check_flat(int P, int V, int m, cs_diag *d)
{
    (void)P;
    (void)m;
    if (V != 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "this pipeline schedule runs one chunk per stage: virtual_stages "
                           "must be 1, got %d (interleaved_1f1b takes more)",
                           V);
    return 0;
}

static int check_interleaved(int P, int V, int m, cs_diag *d)
{
    if (V > 1 && m % P)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "interleaved_1f1b needs the micro-batches (grad_accum %d) to be a "
                           "multiple of pipeline_parallel %d (Megatron-LM asserts it)",
                           m, P);
    return 0;
}

static cs_pp_op op(cs_pp_pass p, int micro, int chunk)
{
    cs_pp_op o = {p, micro, chunk};
    return o;
}

static int order_gpipe(int P, int V, int m, int stage, cs_pp_op *out)
{
    (void)P, (void)V, (void)stage;
    int n = 0;
    for (int i = 0; i < m; i++) out[n++] = op(CS_PP_F, i, 0);
    for (int i = 0; i < m; i++) out[n++] = op(CS_PP_B, i, 0);
    return n;
}

static int order_1f1b(int P, int V, int m, int stage, cs_pp_op *out)
{
    (void)V;
    int w = P - stage - 1 < m ? P - stage - 1 : m, n = 0;
    for (int i = 0; i < w; i++) out[n++] = op(CS_PP_F, i, 0);
    for (int i = 0; i < m - w; i++) {
        out[n++] = op(CS_PP_F, w + i, 0);
        out[n++] = op(CS_PP_B, i, 0);
    }
    for (int i = m - w; i < m; i++) out[n++] = op(CS_PP_B, i, 0);
    return n;
}

/* Megatron's virtual micro-step k: its chunk and micro-batch. */
static cs_pp_op virtual_step(int P, int V, int k, cs_pp_pass p)
{
    int chunk = (k % (P * V)) / P;
    if (p == CS_PP_B) chunk = V - 1 - chunk;
    return op(p, (k / (P * V)) * P + k % P, chunk);
}

static int order_interleaved(int P, int V, int m, int stage, cs_pp_op *out)
{
    int total = m * V, n = 0;
    int w = m == P ? total : (P - stage - 1) * 2 + (V - 1) * P;
    if (w > total) w = total;
    for (int k = 0; k < w; k++) out[n++] = virtual_step(P, V, k, CS_PP_F);
    for (int k = 0; k < total - w; k++) {
        out[n++] = virtual_step(P, V, w + k, CS_PP_F);
        out[n++] = virtual_step(P, V, k, CS_PP_B);
    }
    for (int k = total - w; k < total; k++) out[n++] = virtual_step(P, V, k, CS_PP_B);
    return n;
}

/* ZB-H1 (Qi et al. 2024 Sec 3.1, figure 3): stage s runs min(P - s, m)
 * warm-up forwards, then for each micro-batch k its B, the W of micro-batch
 * k - s once k >= s (the later the stage, the more its W's are deferred to
 * fill the drain), and the next forward; the W's left run at the end. So
 * at most P micro-batches are in flight (forward run, W not yet) on any
 * stage, P - s of them before their B: 1F1B's stage-0 count. O(m). */
static int order_zb_h1(int P, int V, int m, int stage, cs_pp_op *out)
{
    (void)V;
    int w = P - stage < m ? P - stage : m, n = 0, nf = 0, nw = 0;
    while (nf < w) out[n++] = op(CS_PP_F, nf++, 0);
    for (int k = 0; k < m; k++) {
        out[n++] = op(CS_PP_B, k, 0);
        if (k >= stage) out[n++] = op(CS_PP_W, nw++, 0);
        if (nf < m) out[n++] = op(CS_PP_F, nf++, 0);
    }
    while (nw < m) out[n++] = op(CS_PP_W, nw++, 0);
    return n;
}

static double bubble_flat(int P, int V, int m, double tf, double tb, double tw)
{
    (void)V, (void)tf, (void)tb, (void)tw;
    return (double)(P - 1) / m;
}

static double bubble_interleaved(int P, int V, int m, double tf, double tb, double tw)
{
    (void)tf, (void)tb, (void)tw;
    return (double)(P - 1) / ((double)m * V);
}

static double bubble_zb_h1(int P, int V, int m, double tf, double tb, double tw)
{
    (void)V;
    return (P - 1) * (tf + tb - tw) / (m * (tf + tb + tw));
}

static const cs_pp_schedule_row rows[] = {
    {"gpipe", "torch.distributed.pipelining ScheduleGPipe (Huang et al. 2019)", 0, 0, check_flat,
     order_gpipe, bubble_flat},
    {"1f1b", "Megatron-LM forward_backward_pipelining_without_interleaving", 0, 0, check_flat,
     order_1f1b, bubble_flat},
    {"interleaved_1f1b", "Megatron-LM forward_backward_pipelining_with_interleaving", 1, 0,
     check_interleaved, order_interleaved, bubble_interleaved},
    {"zero_bubble", "ZB-H1, Qi et al. 2024 Sec 3.1", 0, 1, check_flat, order_zb_h1, bubble_zb_h1},
};
#define NROWS (int)(sizeof rows / sizeof rows[0])

const char *const cs_pp_schedule_names[] = {"gpipe", "1f1b", "interleaved_1f1b", "zero_bubble",
                                            NULL};

int cs_pp_schedule_count(void) { return NROWS; }

const cs_pp_schedule_row *cs_pp_schedule_row_at(int i)
{
    CS_ASSERT(i >= 0 && i < NROWS);
    CS_ASSERT(!strcmp(rows[i].name, cs_pp_schedule_names[i]));
    return &rows[i];
}

const cs_pp_schedule_row *cs_pp_schedule_find(const char *name)
{
    for (int i = 0; i < NROWS; i++)
        if (!strcmp(rows[i].name, name)) return &rows[i];
    return NULL;
}
