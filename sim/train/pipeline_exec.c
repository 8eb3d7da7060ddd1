/* SPDX-License-Identifier: MIT */
/*
 * pipeline_exec.c - the pipeline executor (pipeline_exec.h): a schedule
 * row's order run on given pass times, one stage timeline per stage.
 *
 * Executor. Each stage runs its order (the schedule row) one pass at a
 * time; a pass starts when the stage is free and its input has arrived.
 * The bubble is whatever idle time results: nothing is added on top.
 *
 * The sender is held for its transfer (Megatron's
 * p2p_communication._communicate waits on its requests before the next
 * pass) and the receiver starts no earlier than its end. Activations held:
 * a (micro-batch, chunk) pair from its forward's start to its backward's
 * end (its W's under a split row, counting w_frac between B and W).
 * Idle time on a transfer: before each pass the stage is held for its
 * previous pass's send, then waits for its input; of that wait, the part
 * when the incoming transfer runs (at most p2p_s, ending at its arrival)
 * waits on the transfer, the rest (the neighbour's passes) is the bubble.
 * Stages advance in turn, each as far as its inputs allow; a row whose
 * order deadlocks is a broken invariant (CS_ASSERT). O(P x m x V x
 * passes).
 */
#include "train/pipeline_exec.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

void cs_pp_run_free(cs_pp_run *r)
{
    free(r->end_s);
    free(r->busy_s);
    free(r->p2p_wait_s);
    free(r->held_max);
    free(r->held_peak);
    memset(r, 0, sizeof *r);
}

void cs_pipeline_simulate(const cs_pp_schedule_row *row, int P, int V, int m, const double *f,
                          const double *b, const double *w, double p2p_s, double w_frac,
                          cs_pp_run *out)
{
    cs_pipeline_simulate_record(row, P, V, m, f, b, w, p2p_s, w_frac, out, NULL, NULL);
}

/* The executor's state: each stage's orders and progress, when each
 * (virtual stage, micro-batch) pass ended (< 0: not yet), what each stage
 * holds. */
typedef struct pp_sim {
    const cs_pp_schedule_row *row;
    int P, V, m, nv, cap;
    const double *f, *b, *w;
    double p2p_s, w_frac;
    cs_pp_op **order;
    int *n, *next, *held, *pend; /* pend: B run, W not yet */
    double *free_s, *fend, *bend;
    double *hold_s; /* each stage's last send (it holds the stage before its next pass) */
} pp_sim;

/* When a pass may start, how long it runs, and its transfers (from / to:
 * the neighbouring stages, -1 for none; arrived: its input's arrival). */
typedef struct pp_step {
    double ready, dur, arrived;
    int from, to;
} pp_step;

static void sim_init(pp_sim *x, const cs_pp_schedule_row *row, int P, int V, int m,
                     const double *f, const double *b, const double *w, double p2p_s,
                     double w_frac)
{
    *x = (pp_sim){.row = row, .P = P, .V = V, .m = m, .nv = P * V, .cap = 3 * m * V,
                  .f = f, .b = b, .w = w, .p2p_s = p2p_s, .w_frac = w_frac};
    x->pend = cs_xcalloc((size_t)P, sizeof *x->pend);
    x->order = cs_xmalloc(sizeof *x->order * (size_t)P);
    x->n = cs_xmalloc(sizeof *x->n * (size_t)P);
    x->next = cs_xcalloc((size_t)P, sizeof *x->next);
    x->held = cs_xcalloc((size_t)P, sizeof *x->held);
    x->free_s = cs_xcalloc((size_t)P, sizeof *x->free_s);
    x->hold_s = cs_xcalloc((size_t)P, sizeof *x->hold_s);
    x->fend = cs_xmalloc(sizeof *x->fend * (size_t)x->nv * m);
    x->bend = cs_xmalloc(sizeof *x->bend * (size_t)x->nv * m);
    for (long i = 0; i < (long)x->nv * m; i++) x->fend[i] = x->bend[i] = -1;
    for (int s = 0; s < P; s++) {
        x->order[s] = cs_xmalloc(sizeof **x->order * (size_t)x->cap);
        x->n[s] = row->order(P, V, m, s, x->order[s]);
        CS_ASSERT(x->n[s] <= x->cap);
    }
}

static void sim_free(pp_sim *x)
{
    for (int s = 0; s < x->P; s++) free(x->order[s]);
    free(x->order), free(x->n), free(x->next), free(x->held), free(x->pend);
    free(x->free_s), free(x->fend), free(x->bend), free(x->hold_s);
}

/* 0 with st filled when stage s's pass o may run (its input has ended), -1
 * when it waits on another stage. */
static int sim_step(const pp_sim *x, int s, cs_pp_op o, pp_step *st)
{
    int P = x->P, m = x->m, nv = x->nv, v = o.chunk * P + s, k = s * x->V + o.chunk;
    double p2p_s = x->p2p_s;
    *st = (pp_step){.ready = x->free_s[s], .from = -1, .to = -1};
    if (o.pass == CS_PP_F) {
        if (v > 0) {
            double e = x->fend[(long)(v - 1) * m + o.micro];
            if (e < 0) return -1;
            if (e + p2p_s > st->ready) st->ready = e + p2p_s;
            st->arrived = e + p2p_s, st->from = (v - 1) % P;
        }
        if (v < nv - 1) st->to = (v + 1) % P;
        st->dur = x->f[k];
    } else if (o.pass == CS_PP_B) {
        double e = v < nv - 1 ? x->bend[(long)(v + 1) * m + o.micro]
                              : x->fend[(long)v * m + o.micro];
        if (e < 0) return -1;
        if (v < nv - 1 && e + p2p_s > st->ready) st->ready = e + p2p_s;
        if (v < nv - 1) st->arrived = e + p2p_s, st->from = (v + 1) % P;
        if (v > 0) st->to = (v - 1) % P;
        st->dur = x->row->split_backward ? x->b[k] : x->b[k] + x->w[k];
    } else {
        st->dur = x->w[k];
    }
    return 0;
}

/* The pass as it ran, and its transfers (pipeline.h tags), at rec's slot. */
static void sim_record(const pp_sim *x, int s, cs_pp_op o, const pp_step *st, cs_pp_slice *rec,
                       int *nrec)
{
    int nv = x->nv, v = o.chunk * x->P + s, dir = o.pass == CS_PP_B;
    cs_pp_slice *r = &rec[(long)s * x->cap + x->next[s]];
    *r = (cs_pp_slice){.stage = s, .chunk = o.chunk, .micro = o.micro, .pass = o.pass,
                       .start_s = st->ready, .end_s = st->ready + st->dur,
                       .ready_s = st->arrived, .send_s = st->to >= 0 ? x->p2p_s : 0,
                       .from_stage = st->from, .to_stage = st->to, .tag = -1, .recv_tag = -1};
    if (st->to >= 0) r->tag = (o.micro * nv + v) * 2 + dir;
    if (st->from >= 0) r->recv_tag = (o.micro * nv + (dir ? v + 1 : v - 1)) * 2 + dir;
    nrec[s] = x->next[s] + 1;
}

/* Stage s runs pass o as st says: its end, the sender's wait, what it holds. */
static void sim_run(pp_sim *x, int s, cs_pp_op o, const pp_step *st, cs_pp_run *out)
{
    int v = o.chunk * x->P + s;
    double end = st->ready + st->dur;
    /* the idle time before the pass on transfers (file header): the
     * previous pass's send, then the input's transfer while it runs */
    double wait = x->hold_s[s], after = st->arrived - x->free_s[s];
    if (st->from >= 0 && after > 0) wait += after < x->p2p_s ? after : x->p2p_s;
    out->p2p_wait_s[s] += wait;
    x->hold_s[s] = 0;
    out->busy_s[s] += st->dur;
    x->free_s[s] = end;
    if (o.pass == CS_PP_F) {
        x->fend[(long)v * x->m + o.micro] = end;
        if (++x->held[s] > out->held_max[s]) out->held_max[s] = x->held[s];
        if (v < x->nv - 1) /* the sender waits for its send */
            x->free_s[s] += x->p2p_s, x->hold_s[s] = x->p2p_s;
    } else if (o.pass == CS_PP_B) {
        x->bend[(long)v * x->m + o.micro] = end;
        if (!x->row->split_backward) x->held[s]--;
        else x->pend[s]++;
        if (v > 0) x->free_s[s] += x->p2p_s, x->hold_s[s] = x->p2p_s;
    } else {
        x->held[s]--;
        x->pend[s]--;
    }
    double h = x->held[s] - x->pend[s] + x->w_frac * x->pend[s];
    if (h > out->held_peak[s]) out->held_peak[s] = h;
    out->end_s[s] = end;
    x->next[s]++;
}

void cs_pipeline_simulate_record(const cs_pp_schedule_row *row, int P, int V, int m,
                                 const double *f, const double *b, const double *w, double p2p_s,
                                 double w_frac, cs_pp_run *out, cs_pp_slice *rec, int *nrec)
{
    out->P = P;
    out->time_s = 0;
    out->end_s = cs_xcalloc((size_t)P, sizeof *out->end_s);
    out->busy_s = cs_xcalloc((size_t)P, sizeof *out->busy_s);
    out->p2p_wait_s = cs_xcalloc((size_t)P, sizeof *out->p2p_wait_s);
    out->held_max = cs_xcalloc((size_t)P, sizeof *out->held_max);
    out->held_peak = cs_xcalloc((size_t)P, sizeof *out->held_peak);
    pp_sim x;
    sim_init(&x, row, P, V, m, f, b, w, p2p_s, w_frac);
    long left = 0;
    for (int s = 0; s < P; s++) left += x.n[s];
    while (left > 0) {
        long progress = 0;
        for (int s = 0; s < P; s++) {
            pp_step st;
            while (x.next[s] < x.n[s]) {
                cs_pp_op o = x.order[s][x.next[s]];
                if (sim_step(&x, s, o, &st)) break;
                if (rec) sim_record(&x, s, o, &st, rec, nrec);
                sim_run(&x, s, o, &st, out);
                left--;
                progress++;
            }
        }
        CS_ASSERT(progress > 0); /* a schedule row whose order deadlocks */
    }
    for (int s = 0; s < P; s++)
        if (out->end_s[s] > out->time_s) out->time_s = out->end_s[s];
    sim_free(&x);
}

