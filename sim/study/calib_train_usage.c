/* SPDX-License-Identifier: MIT */
/*
 * calib_train_usage.c - what a compute fit's runs and kernel timings
 * exercise (calib_train_usage.h): per attention kernel the rows and
 * sequence lengths, the attention and memory-bound shares of a row's
 * kernel time (train/compute.c's kernels on the cluster), model widths,
 * multi-GPU and FSDP runs, distinct GEMM works and copy sizes timed, and
 * replayed tasks with the overlapped ones among them. Cost: O(rows x
 * kernels of a layer + timings^2) (the distinct counts compare pairs:
 * a sweep's few dozen timings).
 */
#include "study/calib_train_usage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/strategy.h"

/* Distinct values among v[0..n) (n is small: timings of one sweep). */
static int distinct(const double *v, size_t n)
{
    int d = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && v[j] != v[i]) j++;
        d += j == i;
    }
    return d;
}

static void kernel_usage(const cs_trun_set *s, cs__train_usage *u)
{
    double *g = cs_xmalloc((s->nk + 1) * sizeof *g), *b = cs_xmalloc((s->nk + 1) * sizeof *b);
    size_t ng = 0, nb = 0;
    for (size_t q = 0; q < s->nk; q++) {
        const cs_kmeas_row *k = &s->kernels[q];
        if (k->gemm) g[ng++] = k->m * k->n * k->k;
        else b[nb++] = k->bytes;
        u->replayed += k->replayed;
        u->overlapped += k->overlap_us >= CS__TRAIN_OVERLAP_MIN * k->time_us && k->overlap_us > 0;
    }
    u->gemm_sizes = distinct(g, ng);
    u->copy_sizes = distinct(b, nb);
    free(g);
    free(b);
}

void cs__calib_train_usage_tally(const cs_cluster *c, const cs_trun_set *s, cs__train_usage *u)
{
    memset(u, 0, sizeof *u);
    kernel_usage(s, u);
    int seqs[CS_ATTN_COUNT][64], widths[64];
    for (size_t i = 0; i < s->n; i++) {
        const cs_trun_row *r = &s->rows[i];
        cs_attn_kernel k = r->training.attention_kernel;
        u->rows_kernel[k]++;
        int seen = 0;
        for (int a = 0; a < u->seqs_kernel[k]; a++) seen |= seqs[k][a] == r->model.seq_len;
        if (!seen && u->seqs_kernel[k] < 64) seqs[k][u->seqs_kernel[k]++] = r->model.seq_len;
        if (r->model.seq_len > u->max_seq[k]) u->max_seq[k] = r->model.seq_len;
        seen = 0;
        for (int a = 0; a < u->widths; a++) seen |= widths[a] == r->model.hidden;
        if (!seen && u->widths < 64) widths[u->widths++] = r->model.hidden;
        u->width = r->model.hidden;
        u->multi_gpu += r->gpus > 1;
        if ((cs_strategy_row_of(r->training.strategy)->knobs & CS_KNOB_BIT(CS_KNOB_FSDP_HOOK_CPU)) &&
            r->training.fsdp_version >= 1 && r->training.fsdp_version <= 2)
            u->fsdp_rows[r->training.fsdp_version]++;
        cs_kernel ks[256];
        size_t nk = cs_compute_kernels(&r->model, &r->training, c, ks, 256);
        double tot = 0, attn = 0, mem = 0;
        for (size_t q = 0; q < nk && q < 256; q++) {
            tot += ks[q].time_s;
            attn += ks[q].cls == CS_KCLASS_ATTENTION ? ks[q].time_s : 0;
            mem += ks[q].cls == CS_KCLASS_MEMORY ? ks[q].time_s : 0;
        }
        if (tot > 0) {
            u->attn_share[k] = fmax(u->attn_share[k], attn / tot);
            u->mem_share = fmax(u->mem_share, mem / tot);
        }
    }
}
