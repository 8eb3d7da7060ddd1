/* SPDX-License-Identifier: MIT */
/*
 * algo.h - internal: what one algorithm file (algo_<name>.c) defines, and
 * the cost parameters shared by the closed form and the discrete-event
 * schedule of every algorithm.
 *
 * An algorithm is a row, a cs_algo named cs__algo_<name>: which ops and
 * protocols it implements and where it runs, its enable flag, its texts,
 * NCCL's latencies and bandwidth refinements for it, its two engines and
 * its calibrated parameter. collective.c prices every row the same way
 * from this data (no algorithm is special there); adding an algorithm =
 * its file plus one line in coll/algos.def.
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

/* Bits of cs_algo.ops and cs_algo.protos. */
#define CS_OP_BIT(op) (1u << (op))
#define CS_PROTO_BIT(p) (1u << (p))
/* Every collective op: what a ring implements. The point-to-point ops
 * (all_to_all, send_recv) are not in it; CS_OPS_P2P names them. */
#define CS_OPS_ALL                                                                                 \
    (CS_OP_BIT(CS_OP_ALL_REDUCE) | CS_OP_BIT(CS_OP_ALL_GATHER) | CS_OP_BIT(CS_OP_REDUCE_SCATTER) | \
     CS_OP_BIT(CS_OP_BROADCAST) | CS_OP_BIT(CS_OP_REDUCE))
#define CS_OPS_P2P (CS_OP_BIT(CS_OP_ALL_TO_ALL) | CS_OP_BIT(CS_OP_SEND_RECV))
#define CS_PROTOS_ALL ((1u << CS_PROTO_COUNT) - 1)

/* An on/off key under the cluster's `collectives:` whose default is what
 * the hardware allows; an explicit `true` elsewhere is a config error. */
typedef struct cs_algo_flag {
    const char *key;   /* YAML key, e.g. "nvls"; NULL: no flag, always on */
    int fabric;        /* cs_fabric the intra-node fabric must be, or -1 */
    int min_cc;        /* least compute capability */
    int sharp;         /* needs the network's in-switch reduction (inter.sharp) */
    const char *needs; /* the conditions in words, for the error */
} cs_algo_flag;

/* The parameter `collsim calibrate` fits for the algorithm, if any: its
 * collectives.efficiency entry. */
typedef struct cs_algo_calib {
    const char *param; /* name in reports, "efficiency.tree"; NULL: not fitted */
    const char *yaml;  /* where it lands, "collectives.efficiency.tree" */
    int priority;      /* order among the fitted algorithms (reports, and the
                        * fit's collinearity choice: earlier ones win) */
} cs_algo_calib;

typedef struct cs_algo {
    /* availability (a forced choice outside it fails with `hint`) */
    unsigned ops;      /* CS_OP_BIT of each op it implements */
    unsigned protos;   /* CS_PROTO_BIT of each protocol it runs with */
    int one_node;      /* runs within one node only */
    int multi_node;    /* runs across nodes only (NCCL disables it on one) */
    cs_algo_flag flag;
    const char *hint;  /* see cs_algo_hint */
    const char *help;  /* see cs_algo_help; NULL: none */
    /* NCCL's model for it */
    const cs_nccl_latency *latency;
    /* NCCL's payload factor and per-channel cap for (op, p) on t running
     * `channels` channels (a cap NCCL gives as a total, llMaxBw, is shared
     * by them), before the cluster's bw_factor override and efficiency */
    void (*bandwidth)(const cs_topology *t, cs_op op, cs_proto p, int channels, double *factor,
                      double *cap_Bps);
    /* channels NCCL runs `bytes` on (at most the cluster's); NULL: all of
     * them. The tuner compares algorithms with all channels, as NCCL's. */
    int (*channels)(const cs_topology *t, cs_op op, cs_proto p, double bytes);
    /* whether NCCL runs `bytes` of op with protocol p when no protocol is
     * forced (a rule of NCCL's, not its tuner: p2p's size threshold);
     * NULL: the tuner picks among the row's protocols */
    int (*picks)(const cs_topology *t, cs_op op, cs_proto p, double bytes);
    /* size-dependent efficiency on factor and cap; NULL: 1 */
    double (*correction)(cs_proto p, double bytes);
    /* refines q's base / intra / inter latencies (all else in q set);
     * NULL: none */
    void (*latency_refine)(const cs_topology *t, cs_coll_params *q);
    /* closed-form time in seconds, never fails for an available choice */
    double (*closed_form)(const cs_topology *t, const cs_coll_params *p);
    /* discrete-event time; returns 0 or a negative CS_E* */
    int (*simulate)(const cs_topology *t, const cs_coll_params *p, double *time_s,
                    unsigned long long *events);
    cs_algo_calib calib;
} cs_algo;

/* The rows, indexed by cs_algo_id (algos.c); inline for the sweeps. */
extern const cs_algo *const cs__algo_rows[CS_ALGO_COUNT];
static inline const cs_algo *cs__algo_row(cs_algo_id a)
{
    CS_ASSERT(a >= 0 && a < CS_ALGO_COUNT);
    return cs__algo_rows[a];
}

/* Levels of a binary tree over n nodes: NCCL's log2i (floor, what its
 * latency terms count) and the depth of the tree it builds (ceil). */
static inline int cs__log2i(int n)
{
    int d = 0;
    while (n >>= 1) d++;
    return d;
}
static inline int cs__tree_depth(int n)
{
    int d = 0;
    while ((1 << d) < n) d++;
    return d;
}

/* NCCL's double binary tree over n nodes (ncclGetDtree): node's parent
 * and children in tree `which` (0 or 1), -1 where none (algo_tree.c). */
void cs__algo_dtree(int n, int which, int node, int *up, int *d0, int *d1);

/* Per-hop rate of a flow (per channel): min(share x factor, cap). */
static inline double cs__hop_rate(const cs_coll_params *p, double share_Bps)
{
    double r = share_Bps * p->factor;
    return r < p->cap_Bps ? r : p->cap_Bps;
}

#endif
