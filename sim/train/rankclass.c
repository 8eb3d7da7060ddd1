/* SPDX-License-Identifier: MIT */
/*
 * rankclass.c - rank classes (rankclass.h): the stragglers slower than 1,
 * sorted by rank, grouped by slowdown (equal values, as written), the
 * normal ranks (the others) as one more class; each class's label lists
 * its ranks as ranges ("0-4,6-15").
 */
#include "train/rankclass.h"

#include <stdio.h>
#include <string.h>

/* A label under construction: ranges appended while they fit, then ",...". */
typedef struct label {
    char *s;
    size_t len, cap;
    int n, full;
} label;

static void add_range(label *l, int lo, int hi)
{
    if (l->full || lo > hi) return;
    char r[32];
    if (lo == hi) snprintf(r, sizeof r, "%s%d", l->n ? "," : "", lo);
    else snprintf(r, sizeof r, "%s%d-%d", l->n ? "," : "", lo, hi);
    size_t k = strlen(r);
    if (l->len + k + sizeof ",..." > l->cap) { /* room for the ellipsis kept */
        snprintf(l->s + l->len, l->cap - l->len, ",...");
        l->full = 1;
        return;
    }
    memcpy(l->s + l->len, r, k + 1);
    l->len += k;
    l->n++;
}

/* The label of class c: its members (the sorted stragglers `rank` of
 * slowdown c->slowdown), or for the normal class (slowdown 1) every rank
 * of 0..ranks-1 that is no such straggler. */
static void make_label(cs_rank_class *c, const int *rank, const double *slow, int n, int ranks)
{
    int normal = c->slowdown == 1.0;
    int off = snprintf(c->label, sizeof c->label, "%s ", c->nranks == 1 ? "rank" : "ranks");
    label l = {.s = c->label + off, .cap = sizeof c->label - (size_t)off};
    int lo = -1, prev = -2; /* the run being built: members lo..prev */
    if (normal) {
        int next = 0; /* the first rank not yet listed */
        for (int i = 0; i < n; i++) {
            add_range(&l, next, rank[i] - 1);
            next = rank[i] + 1;
        }
        add_range(&l, next, ranks - 1);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (slow[i] != c->slowdown) continue;
        if (rank[i] != prev + 1) {
            if (lo >= 0) add_range(&l, lo, prev);
            lo = rank[i];
        }
        prev = rank[i];
    }
    add_range(&l, lo, prev);
}

int cs_rankclass_group(const cs_training *t, const cs_layout *l, cs_rank_class *out)
{
    const cs_topology *topo = &l->group[CS_GROUP_WORLD].topo;
    const cs_cluster *c = &topo->cluster;
    if (t->collective_engine != CS_ENGINE_DES || c->n_stragglers == 0) return 0;
    int rank[CS_MAX_OVERRIDES], n = 0;
    double slow[CS_MAX_OVERRIDES];
    for (int i = 0; i < c->n_stragglers; i++) { /* insertion by rank */
        const cs_straggler *s = &c->stragglers[i];
        if (s->slowdown <= 1.0 || s->rank >= topo->ranks) continue;
        int k = n++;
        for (; k > 0 && rank[k - 1] > s->rank; k--) rank[k] = rank[k - 1], slow[k] = slow[k - 1];
        rank[k] = s->rank;
        slow[k] = s->slowdown;
    }
    if (n == 0) return 0;
    int nc = 0;
    if (n < topo->ranks) { /* the normal ranks: the first is the lowest gap */
        int first = 0;
        for (int i = 0; i < n && rank[i] == first; i++) first++;
        out[nc++] = (cs_rank_class){.slowdown = 1.0, .nranks = topo->ranks - n, .first_rank = first};
    }
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < nc && out[k].slowdown != slow[i]) k++;
        if (k == nc) out[nc++] = (cs_rank_class){.slowdown = slow[i], .first_rank = rank[i]};
        out[k].nranks++;
    }
    for (int i = 1; i < nc; i++) /* by first rank */
        for (int k = i; k > 0 && out[k - 1].first_rank > out[k].first_rank; k--) {
            cs_rank_class tmp = out[k];
            out[k] = out[k - 1];
            out[k - 1] = tmp;
        }
    for (int k = 0; k < nc; k++) make_label(&out[k], rank, slow, n, topo->ranks);
    return nc;
}
