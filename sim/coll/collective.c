/* SPDX-License-Identifier: MIT */
/*
 * collective.c - operations, the algorithm table, NCCL's cost parameters
 * and algorithm/protocol selection.
 *
 * Model: NCCL's public tuning model (src/graph/tuning.cc, 2.19-2.23):
 *   time = latency + bytes / algbw,
 *   busbw = channels x per-channel link bandwidth x protocol factor, capped
 *           per channel; algbw = busbw x n/nsteps (ring) or x 1/2 (tree).
 * cs__coll_params() derives every constant both engines use, so the
 * closed form (algo_*.c closed_form) and the discrete-event schedule
 * (algo_*.c simulate) share one source. Departures from NCCL, all in the
 * algorithm files: latency counts the node crossings on the ring's actual
 * critical path (NCCL: 2 x nodes, which exceeds the step count when every
 * node holds one rank), broadcast/reduce pay one hop latency per chain hop
 * plus pipeline fill, and tree and NVLS times include their pipeline fill.
 * NVLS (NVLink SHARP) follows NCCL 2.19's tuning.cc: Simple only, latency
 * hwLat[NVLINK][NVLS] alone, busBw = channels x per-channel bandwidth,
 * algbw = busBw x 5/6, here times nvlsEfficiency (later NCCL) as its
 * protocol factor; single-node only (NCCL runs NVLS across nodes only with
 * CollNet, which collsim does not model). See algo_nvls.c.
 */
#include "coll/collective.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "coll/algo.h"

static const cs_algo *const algo_table[CS_ALGO_COUNT] = {
    [CS_ALGO_RING] = &cs__algo_ring,
    [CS_ALGO_TREE] = &cs__algo_tree,
    [CS_ALGO_NVLS] = &cs__algo_nvls,
};

static double bw_two(int n) { return 2.0 * (n - 1) / n; }
static double bw_one_less(int n) { return (double)(n - 1) / n; }
static double bw_unit(int n) { (void)n; return 1.0; }

static const struct {
    const char *name;
    double (*busbw_factor)(int n);
} op_rows[CS_OP_COUNT] = {
    [CS_OP_ALL_REDUCE] = {"all_reduce", bw_two},
    [CS_OP_ALL_GATHER] = {"all_gather", bw_one_less},
    [CS_OP_REDUCE_SCATTER] = {"reduce_scatter", bw_one_less},
    [CS_OP_BROADCAST] = {"broadcast", bw_unit},
    [CS_OP_REDUCE] = {"reduce", bw_unit},
};

const char *cs_op_name(cs_op op)
{
    CS_ASSERT(op >= 0 && op < CS_OP_COUNT);
    return op_rows[op].name;
}

int cs_op_parse(const char *s, cs_op *out)
{
    for (int i = 0; i < CS_OP_COUNT; i++) {
        /* accept nccl-tests' binary names too: all_reduce_perf -> all_reduce */
        size_t n = strlen(op_rows[i].name);
        if (!strcasecmp(s, op_rows[i].name) ||
            (!strncasecmp(s, op_rows[i].name, n) && !strcasecmp(s + n, "_perf"))) {
            *out = (cs_op)i;
            return 0;
        }
    }
    return CS_EINVAL;
}

const char *cs_engine_name(cs_engine_kind k) { return k == CS_ENGINE_DES ? "des" : "analytic"; }

double cs_op_busbw_factor(cs_op op, int n)
{
    CS_ASSERT(op >= 0 && op < CS_OP_COUNT);
    if (n < 1) return 0;
    return op_rows[op].busbw_factor(n);
}

int cs_collective_supports(cs_algo_id a, cs_op op)
{
    CS_ASSERT(a >= 0 && a < CS_ALGO_COUNT);
    return algo_table[a]->supports(op);
}

/* NCCL's bandwidth refinements for (algo, proto) as a payload factor and a
 * per-channel cap: rate = min(link share x factor, cap). */
static void proto_factor(const cs_topology *t, cs_op op, cs_algo_id a, cs_proto p,
                         double *factor, double *cap)
{
    const cs_cluster *c = &t->cluster;
    int nch = c->coll.channels;
    int scale = cs_ncclmodel_scale(t->nodes);
    double ppn = (double)t->ranks / t->nodes;
    double ll_cap = cs_ncclmodel_ll_max_Bps(t->arch, scale) / nch;
    if (a == CS_ALGO_RING) {
        switch (p) {
        case CS_PROTO_LL:
            *factor = (t->nodes > 1 || op == CS_OP_ALL_REDUCE || op == CS_OP_REDUCE) ? 1.0 / 4.0
                                                                                       : 1.0 / 3.0;
            *cap = ll_cap;
            break;
        case CS_PROTO_LL128:
            *factor = ppn < 2 ? 0.7 : 0.92;
            *cap = cs_ncclmodel_ring_ll128_max_per_channel_Bps(t->arch, scale);
            break;
        default:
            *factor = 1.0;
            *cap = INFINITY;
        }
    } else if (a == CS_ALGO_NVLS) {
        /* tuning.cc: busBw x 5/6 (the busBw -> algbw ratio of NVLS), x
         * nvlsEfficiency; no per-channel cap. NVLS runs Simple only. */
        *factor = CS_NCCL_NVLS_RATIO * cs_ncclmodel_nvls_efficiency(t->arch);
        *cap = INFINITY;
    } else {
        double tree_cap = cs_ncclmodel_tree_max_per_channel_Bps(t->arch, scale);
        switch (p) {
        case CS_PROTO_LL:
            *factor = 0.92 / 3.8;
            *cap = fmin(tree_cap / 3.8, ll_cap);
            break;
        case CS_PROTO_LL128: {
            double f2 = t->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
            *factor = 0.92 * f2;
            *cap = fmin(tree_cap * f2, cs_ncclmodel_tree_ll128_max_per_channel_Bps(t->arch, scale));
            break;
        }
        default:
            *factor = 0.92;
            *cap = tree_cap;
        }
    }
    double over = c->coll.proto_bw_factor[a][p];
    if (over > 0) *factor = over;
}

double cs_collective_nccl_bw_factor(const cs_topology *t, cs_op op, cs_algo_id a, cs_proto p)
{
    cs_topology u = *t;
    u.cluster.coll.proto_bw_factor[a][p] = CS_UNSET;
    double factor, cap;
    proto_factor(&u, op, a, p, &factor, &cap);
    return factor;
}

/* Fills the parameters both engines use. Returns CS_ENOTSUP if (a, p) is
 * not available for op on t. */
static int coll_params(const cs_topology *t, cs_op op, double bytes, cs_algo_id a,
                       cs_proto p, cs_coll_params *out)
{
    const cs_cluster *c = &t->cluster;
    if (!algo_table[a]->supports(op)) return CS_ENOTSUP;
    if (p == CS_PROTO_LL128 && !c->coll.ll128_enabled) return CS_ENOTSUP;
    /* NVLS: Simple only, an NVSwitch with SHARP (collectives.nvls), one node */
    if (a == CS_ALGO_NVLS && (p != CS_PROTO_SIMPLE || !c->coll.nvls_enabled || t->nodes > 1))
        return CS_ENOTSUP;
    int nch = c->coll.channels;
    cs_coll_params q = {.op = op, .algo = a, .proto = p, .bytes = bytes, .channels = nch};
    double intra = c->coll.hw_latency_s[t->intra_hw][a][p] + c->intra.latency_s;
    double inter = c->coll.hw_latency_s[CS_HW_NET][a][p] + c->inter.latency_s;
    if (p == CS_PROTO_SIMPLE) inter += c->inter.latency_s; /* NCCL: flush latency */
    double base = c->coll.base_latency_s[a][p];
    int multi = t->nodes > 1;
    if (multi && a == CS_ALGO_RING &&
        (op == CS_OP_ALL_REDUCE || op == CS_OP_ALL_GATHER || op == CS_OP_REDUCE_SCATTER)) {
        /* "Inter-node rings still have to launch nsteps * net overhead." */
        double ovh = c->coll.net_overhead_s * (p == CS_PROTO_SIMPLE ? 3.0 : 1.0);
        intra = fmax(intra, ovh);
    }
    if (multi && a == CS_ALGO_RING && p == CS_PROTO_SIMPLE && op == CS_OP_ALL_REDUCE &&
        bytes / ((double)nch * t->ranks) >= 64) {
        /* ncclTopoGetAlgoTime: "Plateau effect of ring" */
        double plateau = c->gpu.compute_capability < 80 ? 1.9 : 1.4;
        base *= plateau;
        intra *= plateau;
        inter *= plateau;
    }
    q.base_lat_s = base;
    q.intra_lat_s = intra;
    q.inter_lat_s = inter;
    double factor, cap;
    proto_factor(t, op, a, p, &factor, &cap);
    double eff = c->coll.algo_efficiency[a];
    if (a == CS_ALGO_TREE) eff *= cs_ncclmodel_tree_correction(p, bytes);
    if (!(factor * eff > 0)) return CS_ENOTSUP; /* NVLS before Hopper: nvlsEfficiency 0 */
    q.factor = factor * eff;
    q.cap_Bps = cap * eff;
    q.chunk_bytes = c->coll.chunk_bytes[p];
    q.port_ch_Bps = t->port_Bps / nch;
    q.net_ch_Bps = t->node_net_Bps / nch;
    *out = q;
    return 0;
}

int cs_collective_time(const cs_topology *t, cs_op op, double bytes, cs_algo_id a,
                       cs_proto p, double *time_s)
{
    cs_coll_params q;
    int rc = coll_params(t, op, bytes, a, p, &q);
    if (rc) return rc;
    *time_s = algo_table[a]->closed_form(t, &q);
    return 0;
}

int cs_collective_choose(const cs_topology *t, cs_op op, double bytes, int algo, int proto,
                         cs_algo_id *a_out, cs_proto *p_out, cs_diag *d)
{
    double best = INFINITY;
    int found = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        if (algo != CS_CHOICE_AUTO && algo != a) continue;
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            if (proto != CS_CHOICE_AUTO && proto != p) continue;
            double tm;
            if (cs_collective_time(t, op, bytes, (cs_algo_id)a, (cs_proto)p, &tm)) continue;
            if (tm < best) { /* strict: ties keep the earlier row, deterministic */
                best = tm;
                *a_out = (cs_algo_id)a;
                *p_out = (cs_proto)p;
                found = 1;
            }
        }
    }
    if (!found)
        return cs_diag_set(d, CS_ENOTSUP, NULL, 0, 0,
                           "no %s%s%s%s implements %s on this cluster%s",
                           algo == CS_CHOICE_AUTO ? "algorithm" : cs_algo_name(algo),
                           proto == CS_CHOICE_AUTO ? "" : "/",
                           proto == CS_CHOICE_AUTO ? "" : cs_proto_name(proto), "",
                           cs_op_name(op),
                           algo == CS_ALGO_TREE ? " (tree implements all_reduce only, as in NCCL)"
                           : algo == CS_ALGO_NVLS
                               ? " (NVLS: all_reduce, all_gather, reduce_scatter with Simple, on "
                                 "one node of an NVSwitch with compute capability >= 90: "
                                 "collectives.nvls)"
                           : proto == CS_PROTO_LL128 ? " (LL128 is disabled: collectives.ll128)"
                                                     : "");
    return 0;
}

int cs_collective_run(const cs_topology *t, const cs_coll_request *req, cs_coll_result *res,
                      cs_diag *d)
{
    if (!(req->bytes >= 0) || !isfinite(req->bytes))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "size must be a finite number >= 0");
    cs_algo_id a;
    cs_proto p;
    int rc = cs_collective_choose(t, req->op, req->bytes, req->algo, req->proto, &a, &p, d);
    if (rc) return rc;
    cs_coll_params q;
    rc = coll_params(t, req->op, req->bytes, a, p, &q);
    CS_ASSERT(rc == 0);
    memset(res, 0, sizeof *res);
    res->algo = a;
    res->proto = p;
    if (req->engine == CS_ENGINE_DES) {
        rc = algo_table[a]->simulate(t, &q, &res->time_s, &res->events);
        if (rc) return cs_diag_set(d, rc, NULL, 0, 0, "discrete-event run failed: %s",
                                   cs_strerror(rc));
    } else {
        res->time_s = algo_table[a]->closed_form(t, &q);
    }
    res->algbw_Bps = res->time_s > 0 ? req->bytes / res->time_s : 0;
    res->busbw_Bps = res->algbw_Bps * cs_op_busbw_factor(req->op, t->ranks);
    return 0;
}
