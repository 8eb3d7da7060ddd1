/* SPDX-License-Identifier: MIT */
/*
 * algo.h - internal: the algorithm table and the cost parameters shared by
 * the closed form and the discrete-event schedule of every algorithm.
 *
 * Adding an algorithm = one file defining a cs_algo and one row in
 * collective.c's table.
 */
#ifndef CS_ALGO_H
#define CS_ALGO_H

#include "coll/collective.h"

/* Everything both engines need about one (topology, op, algo, proto, size):
 * derived once from NCCL's model in collective.c so the two engines can
 * never use different constants. */
typedef struct cs_coll_params {
    cs_op op;
    cs_algo_id algo;
    cs_proto proto;
    double bytes;          /* nccl-tests size */
    int channels;
    double base_lat_s;     /* baseLat (x ring plateau factor) */
    double intra_lat_s;    /* per intra-node hop */
    double inter_lat_s;    /* per inter-node hop */
    double factor;         /* payload efficiency x algorithm efficiency */
    double cap_Bps;        /* per-channel rate cap */
    double chunk_bytes;    /* pipelining unit per channel */
    double port_ch_Bps;    /* per-channel share of a GPU port */
    double net_ch_Bps;     /* per-channel share of a node's network */
} cs_coll_params;

typedef struct cs_algo {
    const char *name;
    int (*supports)(cs_op op);
    /* closed-form time in seconds, never fails for a supported op */
    double (*closed_form)(const cs_topology *t, const cs_coll_params *p);
    /* discrete-event time; returns 0 or a negative CS_E* */
    int (*simulate)(const cs_topology *t, const cs_coll_params *p, double *time_s,
                    unsigned long long *events);
} cs_algo;

extern const cs_algo cs__algo_ring;
extern const cs_algo cs__algo_tree;
extern const cs_algo cs__algo_nvls;

/* Per-hop rate of a flow (per channel): min(share x factor, cap). */
static inline double cs__hop_rate(const cs_coll_params *p, double share_Bps)
{
    double r = share_Bps * p->factor;
    return r < p->cap_Bps ? r : p->cap_Bps;
}

#endif
