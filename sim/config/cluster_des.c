/* SPDX-License-Identifier: MIT */
/*
 * cluster_des.c - the cluster schema's `des` sequences: link overrides
 * (des.links: one GPU port or NIC of one node at another bandwidth) and
 * stragglers (des.stragglers: a slow or late rank), read item by item with
 * their own tables (indices range-checked against nodes, gpus_per_node and
 * inter.nics_per_node, duplicates named with where the first was), written
 * one flow mapping per item, compared without where they were written.
 */
#include <stdio.h>
#include <string.h>

#include "config/cluster_schema.h"
#include "config/yamlwriter.h"

typedef struct link_item {
    int node, gpu, nic;
    double bw_Bps;
} link_item;

static const cs_yfield link_fields[] = {
    {ROW("node", CS_YF_INT, offsetof(link_item, node), REQUIRED | CS_YF_NO_HI), .lo = 0},
    {ROW("gpu", CS_YF_INT, offsetof(link_item, gpu), CS_YF_NO_HI), .lo = 0},
    {ROW("nic", CS_YF_INT, offsetof(link_item, nic), CS_YF_NO_HI), .lo = 0},
    {ROW("bandwidth", CS_YF_RATE, offsetof(link_item, bw_Bps), REQUIRED | POSITIVE)},
    {.name = NULL},
};

typedef struct straggler_item {
    int rank;
    double slowdown, delay_s;
} straggler_item;

static const cs_yfield straggler_fields[] = {
    {ROW("rank", CS_YF_INT, offsetof(straggler_item, rank), REQUIRED | CS_YF_NO_HI), .lo = 0},
    {ROW("slowdown", CS_YF_NUMBER, offsetof(straggler_item, slowdown), CS_YF_NO_HI), .lo = 1},
    {ROW("delay", CS_YF_TIME, offsetof(straggler_item, delay_s), CS_YF_NO_HI)},
    {.name = NULL},
};

/* The sequence checks shared by links and stragglers. */
static int check_sequence(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v,
                          const char *example)
{
    if (v->kind != CS_YNODE_SEQUENCE)
        return cs_yamlnode_error(c, v, "'%s' must be a sequence of mappings such as %s, got %s",
                                 f->name, example, cs_yamlnode_describe(v));
    if (v->n > CS_MAX_OVERRIDES)
        return cs_yamlnode_error(c, v->items[CS_MAX_OVERRIDES],
                                 "at most %d entries are allowed in '%s'", CS_MAX_OVERRIDES,
                                 f->name);
    return 0;
}

static int index_error(const cs_yctx *c, const cs_ynode *item, const char *key, int value,
                       int count, const char *what)
{
    return cs_yamlnode_error(c, cs_yamlnode_find(item, key),
                             "'%s' must be in 0..%d (%s is %d), got %d", key, count - 1, what,
                             count, value);
}

int cs__des_read_links(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    int rc = check_sequence(c, f, v, "{node: 0, gpu: 3, bandwidth: 100GB/s}");
    if (rc) return rc;
    for (size_t i = 0; i < v->n; i++) {
        const cs_ynode *item = v->items[i];
        char path[64];
        snprintf(path, sizeof path, "des.links[%zu]", i);
        link_item li = {.node = -1, .gpu = -1, .nic = -1};
        rc = cs_yamlnode_apply(c, item, path, link_fields, &li);
        if (rc) return rc;
        if (li.gpu >= 0 && li.nic >= 0)
            return cs_yamlnode_error(
                c, cs_yamlnode_find(item, "nic"),
                "a link override names exactly one of 'gpu' or 'nic', not both");
        if (li.gpu < 0 && li.nic < 0)
            return cs_yamlnode_error(c, item,
                                     "a link override needs one of 'gpu' (a GPU's fabric port) "
                                     "or 'nic' (a node's NIC)");
        if (li.node >= cl->nodes) return index_error(c, item, "node", li.node, cl->nodes, "nodes");
        if (li.gpu >= cl->gpus_per_node)
            return index_error(c, item, "gpu", li.gpu, cl->gpus_per_node, "gpus_per_node");
        if (li.nic >= 0 && cl->inter.nics_per_node == 0)
            return cs_yamlnode_error(c, cs_yamlnode_find(item, "nic"),
                                     "'nic' override needs NICs, but the cluster has no 'inter' "
                                     "section");
        if (li.nic >= cl->inter.nics_per_node)
            return index_error(c, item, "nic", li.nic, cl->inter.nics_per_node,
                               "inter.nics_per_node");
        cs_link_override o = {.node = li.node,
                              .gpu = li.nic >= 0 ? li.nic : li.gpu,
                              .is_nic = li.nic >= 0,
                              .bw_Bps = li.bw_Bps,
                              .line = item->line,
                              .column = item->column};
        for (int j = 0; j < cl->n_overrides; j++) {
            const cs_link_override *p = &cl->overrides[j];
            if (p->node == o.node && p->gpu == o.gpu && p->is_nic == o.is_nic)
                return cs_yamlnode_error(
                    c, item, "duplicate override of %s %d on node %d (first at line %d, column %d)",
                    o.is_nic ? "nic" : "gpu", o.gpu, o.node, p->line, p->column);
        }
        cl->overrides[cl->n_overrides++] = o;
    }
    return 0;
}

int cs__des_read_stragglers(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    int rc = check_sequence(c, f, v, "{rank: 5, slowdown: 1.5, delay: 10us}");
    if (rc) return rc;
    int ranks = cl->nodes * cl->gpus_per_node; /* <= 1e6 * 1024 < INT_MAX */
    for (size_t i = 0; i < v->n; i++) {
        const cs_ynode *item = v->items[i];
        char path[64];
        snprintf(path, sizeof path, "des.stragglers[%zu]", i);
        straggler_item si = {.rank = -1, .slowdown = 1.0, .delay_s = 0.0};
        rc = cs_yamlnode_apply(c, item, path, straggler_fields, &si);
        if (rc) return rc;
        if (si.rank >= ranks)
            return index_error(c, item, "rank", si.rank, ranks, "nodes x gpus_per_node");
        for (int j = 0; j < cl->n_stragglers; j++)
            if (cl->stragglers[j].rank == si.rank)
                return cs_yamlnode_error(
                    c, item, "duplicate straggler rank %d (first at line %d, column %d)", si.rank,
                    cl->stragglers[j].line, cl->stragglers[j].column);
        cl->stragglers[cl->n_stragglers++] = (cs_straggler){.rank = si.rank,
                                                            .slowdown = si.slowdown,
                                                            .delay_s = si.delay_s,
                                                            .line = item->line,
                                                            .column = item->column};
    }
    return 0;
}


/* The override / straggler entries of two clusters are the same (the
 * marks where they were written aside). */
static int same_links(const cs_yfield *f, const void *a, const void *b)
{
    (void)f;
    const cs_cluster *x = a, *y = b;
    if (x->n_overrides != y->n_overrides) return 0;
    for (int i = 0; i < x->n_overrides; i++) {
        const cs_link_override *p = &x->overrides[i], *q = &y->overrides[i];
        if (p->node != q->node || p->gpu != q->gpu || p->is_nic != q->is_nic ||
            p->bw_Bps != q->bw_Bps)
            return 0;
    }
    return 1;
}

static int same_stragglers(const cs_yfield *f, const void *a, const void *b)
{
    (void)f;
    const cs_cluster *x = a, *y = b;
    if (x->n_stragglers != y->n_stragglers) return 0;
    for (int i = 0; i < x->n_stragglers; i++) {
        const cs_straggler *p = &x->stragglers[i], *q = &y->stragglers[i];
        if (p->rank != q->rank || p->slowdown != q->slowdown || p->delay_s != q->delay_s) return 0;
    }
    return 1;
}

/* The value of item field `key` (link_fields / straggler_fields) at p,
 * in its source spelling when unchanged. */
static void item_value(const cs__yw *w, const cs_yfield *items, const char *key, const void *p,
                       int changed, int index, char *buf, size_t len)
{
    const cs_yfield *f = items;
    while (strcmp(f->name, key)) f++;
    char rel[64];
    snprintf(rel, sizeof rel, "[%d].%s", index, key);
    if (changed || !cs__yw_source(w, rel, buf, len)) cs__yw_value(f, p, 1, buf, len);
}

static void put_links(cs__yw *w, const cs_yfield *f, const void *obj, const void *base)
{
    const cs_cluster *cl = obj, *bc = base;
    cs__yw_begin(w, f->name, base && !same_links(f, obj, base));
    for (int i = 0; i < cl->n_overrides; i++) {
        const cs_link_override *o = &cl->overrides[i];
        const cs_link_override *bo = bc && i < bc->n_overrides ? &bc->overrides[i] : NULL;
        int changed = bc && (!bo || o->node != bo->node || o->gpu != bo->gpu ||
                             o->is_nic != bo->is_nic || o->bw_Bps != bo->bw_Bps);
        char bw[64], flow[160];
        item_value(w, link_fields, "bandwidth", &o->bw_Bps, changed, i, bw, sizeof bw);
        snprintf(flow, sizeof flow, "{node: %d, %s: %d, bandwidth: %s}", o->node,
                 o->is_nic ? "nic" : "gpu", o->gpu, bw);
        cs__yw_item(w, flow, changed);
    }
    cs__yw_end(w);
}

static void put_stragglers(cs__yw *w, const cs_yfield *f, const void *obj, const void *base)
{
    const cs_cluster *cl = obj, *bc = base;
    cs__yw_begin(w, f->name, base && !same_stragglers(f, obj, base));
    for (int i = 0; i < cl->n_stragglers; i++) {
        const cs_straggler *s = &cl->stragglers[i];
        const cs_straggler *bs = bc && i < bc->n_stragglers ? &bc->stragglers[i] : NULL;
        int changed = bc && (!bs || s->rank != bs->rank || s->slowdown != bs->slowdown ||
                             s->delay_s != bs->delay_s);
        char sl[64], dl[64], flow[160];
        item_value(w, straggler_fields, "slowdown", &s->slowdown, changed, i, sl, sizeof sl);
        item_value(w, straggler_fields, "delay", &s->delay_s, changed, i, dl, sizeof dl);
        snprintf(flow, sizeof flow, "{rank: %d, slowdown: %s, delay: %s}", s->rank, sl, dl);
        cs__yw_item(w, flow, changed);
    }
    cs__yw_end(w);
}

static int links_present(const void *obj)
{
    return ((const cs_cluster *)obj)->n_overrides > 0;
}

static int stragglers_present(const void *obj)
{
    return ((const cs_cluster *)obj)->n_stragglers > 0;
}

static int des_present(const void *obj)
{
    return links_present(obj) || stragglers_present(obj);
}

const cs__yrow cs__des_links = {.put = put_links, .same = same_links, .present = links_present};
const cs__yrow cs__des_stragglers = {.put = put_stragglers, .same = same_stragglers,
                                     .present = stragglers_present};
const cs__yrow cs__des_section = {.present = des_present};
