/* SPDX-License-Identifier: MIT */
/*
 * collective.c - operations, NCCL's cost parameters of one choice and
 * algorithm/protocol selection, over the algorithm table (algos.c).
 *
 * Model: NCCL's public tuning model (src/graph/tuning.cc, 2.19-2.23):
 *   time = latency + bytes / algbw,
 *   busbw = channels x per-channel link bandwidth x protocol factor, capped
 *           per channel; algbw = busbw x n/nsteps (ring) or x 1/2 (tree).
 * coll_params() derives every constant both engines use, so the closed
 * form (algo_*.c closed_form) and the discrete-event schedule (algo_*.c
 * simulate) share one source. It treats every row alike: availability,
 * NCCL's latencies and bandwidth refinements are the row's data and
 * functions (coll/algo.h); the cluster's overrides, efficiencies and
 * link latencies are applied here, the same for all. Departures from NCCL
 * are in the algorithm files (algo_ring.c, algo_tree.c, algo_nvls.c,
 * algo_p2p.c). A row may say which protocol NCCL uses by a rule rather than
 * its tuner (p2p: LL or Simple by size, enqueue.cc addP2pToPlan): then an
 * unforced choice takes that protocol only.
 */
#include "coll/collective.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "coll/algo.h"

static double bw_two(int n) { return 2.0 * (n - 1) / n; }
static double bw_one_less(int n) { return (double)(n - 1) / n; }
static double bw_unit(int n) { (void)n; return 1.0; }

/* The ops: name, the nccl-tests binary's name where it differs (alltoall_perf,
 * sendrecv_perf), busbw factor (nccl-tests' *GetBw). */
static const struct {
    const char *name, *alias;
    double (*busbw_factor)(int n);
} op_rows[CS_OP_COUNT] = {
    [CS_OP_ALL_REDUCE] = {"all_reduce", NULL, bw_two},
    [CS_OP_ALL_GATHER] = {"all_gather", NULL, bw_one_less},
    [CS_OP_REDUCE_SCATTER] = {"reduce_scatter", NULL, bw_one_less},
    [CS_OP_BROADCAST] = {"broadcast", NULL, bw_unit},
    [CS_OP_REDUCE] = {"reduce", NULL, bw_unit},
    [CS_OP_ALL_TO_ALL] = {"all_to_all", "alltoall", bw_one_less},
    [CS_OP_SEND_RECV] = {"send_recv", "sendrecv", bw_unit},
};

/* Whether s is w or w + "_perf" (case aside). */
static int names_op(const char *s, const char *w)
{
    size_t n = strlen(w);
    return !strcasecmp(s, w) || (!strncasecmp(s, w, n) && !strcasecmp(s + n, "_perf"));
}

const char *cs_op_name(cs_op op)
{
    CS_ASSERT(op >= 0 && op < CS_OP_COUNT);
    return op_rows[op].name;
}

const char *cs_op_nccl_tests_name(cs_op op)
{
    CS_ASSERT(op >= 0 && op < CS_OP_COUNT);
    return op_rows[op].alias ? op_rows[op].alias : op_rows[op].name;
}

int cs_op_parse(const char *s, cs_op *out)
{
    for (int i = 0; i < CS_OP_COUNT; i++)
        /* accept nccl-tests' binary names too: all_reduce_perf -> all_reduce */
        if (names_op(s, op_rows[i].name) || (op_rows[i].alias && names_op(s, op_rows[i].alias))) {
            *out = (cs_op)i;
            return 0;
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
    CS_ASSERT(op >= 0 && op < CS_OP_COUNT);
    return (cs__algo_row(a)->ops & CS_OP_BIT(op)) != 0;
}

/* The row's payload factor and per-channel cap, then the cluster's
 * collectives.bw_factor override: rate = min(link share x factor, cap). */
static void proto_factor(const cs_topology *t, cs_op op, cs_algo_id a, cs_proto p, int channels,
                         double *factor, double *cap)
{
    cs__algo_row(a)->bandwidth(t, op, p, channels, factor, cap);
    double over = t->cluster.coll.proto_bw_factor[a][p];
    if (over > 0) *factor = over;
}

double cs_collective_nccl_bw_factor(const cs_topology *t, cs_op op, cs_algo_id a, cs_proto p)
{
    double factor, cap;
    cs__algo_row(a)->bandwidth(t, op, p, t->cluster.coll.channels, &factor, &cap);
    return factor;
}

/* Whether row a runs op with p on t (the row's ops, protocols, flag and
 * node limit; LL128 as the cluster says). */
static int available(const cs_topology *t, cs_op op, cs_algo_id a, cs_proto p)
{
    const cs_algo *r = cs__algo_row(a);
    const cs_cluster *c = &t->cluster;
    if (!(r->ops & CS_OP_BIT(op))) return 0;
    if (p == CS_PROTO_LL128 && !c->coll.ll128_enabled) return 0;
    return (r->protos & CS_PROTO_BIT(p)) && c->coll.algo_enabled[a] && !(r->one_node && t->nodes > 1) &&
           !(r->multi_node && t->nodes == 1);
}

/* Fills the parameters both engines use (in place: refining a copy costs
 * the sweeps a store-forwarding stall). `tuning`: as NCCL's tuner sees the
 * choice (every channel), else as it runs (the row's channels for the
 * size). Returns CS_ENOTSUP, *q undefined, if (a, p) is not available for
 * op on t. */
static int coll_params(const cs_topology *t, cs_op op, double bytes, cs_algo_id a,
                       cs_proto p, int tuning, cs_coll_params *q)
{
    const cs_cluster *c = &t->cluster;
    const cs_algo *r = cs__algo_row(a);
    if (!available(t, op, a, p)) return CS_ENOTSUP;
    int nch = c->coll.channels;
    if (r->channels && !tuning) nch = r->channels(t, op, p, bytes);
    *q = (cs_coll_params){.op = op, .algo = a, .proto = p, .bytes = bytes, .channels = nch};
    q->intra_lat_s = c->coll.hw_latency_s[t->intra_hw][a][p] + c->intra.latency_s;
    q->inter_lat_s = c->coll.hw_latency_s[CS_HW_NET][a][p] + c->inter.latency_s;
    if (p == CS_PROTO_SIMPLE) q->inter_lat_s += c->inter.latency_s; /* NCCL: flush latency */
    q->base_lat_s = c->coll.base_latency_s[a][p];
    if (r->latency_refine) r->latency_refine(t, q);
    double factor, cap;
    proto_factor(t, op, a, p, nch, &factor, &cap);
    double eff = c->coll.algo_efficiency[a];
    if (r->correction) eff *= r->correction(p, bytes);
    if (!(factor * eff > 0)) return CS_ENOTSUP; /* NVLS before Hopper: nvlsEfficiency 0 */
    q->factor = factor * eff;
    q->cap_Bps = cap * eff;
    q->chunk_bytes = c->coll.chunk_bytes[p];
    q->port_ch_Bps = t->port_Bps / nch;
    q->net_ch_Bps = t->node_net_Bps / nch;
    return 0;
}

static int closed_time(const cs_topology *t, cs_op op, double bytes, cs_algo_id a, cs_proto p,
                       int tuning, double *time_s)
{
    cs_coll_params q;
    int rc = coll_params(t, op, bytes, a, p, tuning, &q);
    if (rc) return rc;
    *time_s = cs__algo_row(a)->closed_form(t, &q);
    return 0;
}

int cs_collective_time(const cs_topology *t, cs_op op, double bytes, cs_algo_id a,
                       cs_proto p, double *time_s)
{
    return closed_time(t, op, bytes, a, p, 0, time_s);
}

int cs_collective_choose(const cs_topology *t, cs_op op, double bytes, int algo, int proto,
                         cs_algo_id *a_out, cs_proto *p_out, cs_diag *d)
{
    double best = INFINITY;
    int found = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        if (algo != CS_CHOICE_AUTO && algo != a) continue;
        const cs_algo *r = cs__algo_row((cs_algo_id)a);
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            if (proto != CS_CHOICE_AUTO && proto != p) continue;
            /* a row whose protocol NCCL picks by a rule, not by the tuner */
            if (proto == CS_CHOICE_AUTO && r->picks && !r->picks(t, op, (cs_proto)p, bytes)) continue;
            double tm;
            if (closed_time(t, op, bytes, (cs_algo_id)a, (cs_proto)p, 1, &tm)) continue;
            if (tm < best) { /* strict: ties keep the earlier row, deterministic */
                best = tm;
                *a_out = (cs_algo_id)a;
                *p_out = (cs_proto)p;
                found = 1;
            }
        }
    }
    if (!found) {
        /* the forced algorithm's hint (unforced: the first row that runs
         * op), else the row that runs op, else the protocol's */
        int first = 0;
        while (first + 1 < CS_ALGO_COUNT && !cs_collective_supports((cs_algo_id)first, op)) first++;
        const char *hint = cs_algo_hint((cs_algo_id)(algo == CS_CHOICE_AUTO ? first : algo));
        char runs_on[96];
        if (!*hint && algo != CS_CHOICE_AUTO && !cs_collective_supports((cs_algo_id)algo, op))
        {
            snprintf(runs_on, sizeof runs_on, "%s runs on %s", cs_op_name(op),
                     cs_algo_name((cs_algo_id)first));
            hint = runs_on;
        }
        if (!*hint && proto == CS_PROTO_LL128) hint = "LL128 is disabled: collectives.ll128";
        return cs_diag_set(d, CS_ENOTSUP, NULL, 0, 0, "no %s%s%s implements %s on this cluster%s%s%s",
                           algo == CS_CHOICE_AUTO ? "algorithm" : cs_algo_name(algo),
                           proto == CS_CHOICE_AUTO ? "" : "/",
                           proto == CS_CHOICE_AUTO ? "" : cs_proto_name(proto), cs_op_name(op),
                           *hint ? " (" : "", hint, *hint ? ")" : "");
    }
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
    rc = coll_params(t, req->op, req->bytes, a, p, 0, &q);
    CS_ASSERT(rc == 0);
    memset(res, 0, sizeof *res);
    res->algo = a;
    res->proto = p;
    if (req->engine == CS_ENGINE_DES) {
        rc = cs__algo_row(a)->simulate(t, &q, &res->time_s, &res->events);
        if (rc) return cs_diag_set(d, rc, NULL, 0, 0, "discrete-event run failed: %s",
                                   cs_strerror(rc));
    } else {
        res->time_s = cs__algo_row(a)->closed_form(t, &q);
    }
    /* the closed form's latency term: its time for no bytes on the same
     * channels and latencies (time = latency + bytes / algbw) */
    cs_coll_params empty = q;
    empty.bytes = 0;
    res->latency_s = cs__algo_row(a)->closed_form(t, &empty);
    res->algbw_Bps = res->time_s > 0 ? req->bytes / res->time_s : 0;
    res->busbw_Bps = res->algbw_Bps * cs_op_busbw_factor(req->op, t->ranks);
    return 0;
}
