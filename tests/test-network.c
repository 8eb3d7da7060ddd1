/* SPDX-License-Identifier: MIT */
/*
 * test-network.c - the fluid link model (sim/network.h) inside the engine.
 *
 * Every expected time below is worked out by hand from the model in
 * network.h: rate = min(cap_Bps, factor * min over links of capacity /
 * nflows), re-evaluated whenever a flow starts or ends on a shared link, and
 * the last byte arrives latency_s after it leaves. Numbers are chosen to be
 * exact in binary where the test says "exactly". One test states the naive
 * answer of a model without sharing and requires the network NOT to give it,
 * so the suite would catch such a model. Random workloads use a fixed-seed
 * LCG.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/engine.h"
#include "coll/network.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------- */

enum { MAXF = 1024 };

/* What happened to each flow (indexed by the spec's `a`). */
typedef struct rec {
    cs_network *net;
    double sent_t[MAXF], arrive_t[MAXF];
    int nsent[MAXF], narrive[MAXF];
    int active_at_sent[MAXF];
    int order[2 * MAXF]; /* +a+1 for sent, -(a+1) for arrive, in call order */
    int norder;
} rec;

static rec *rec_new(cs_network *net)
{
    rec *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    r->net = net;
    for (int i = 0; i < MAXF; i++) r->sent_t[i] = r->arrive_t[i] = -1;
    return r;
}

static void on_sent(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)b;
    rec *r = ctx;
    r->sent_t[a] = cs_engine_now(e);
    r->nsent[a]++;
    r->active_at_sent[a] = cs_network_active_flows(r->net);
    r->order[r->norder++] = (int)a + 1;
}

static void on_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)b;
    rec *r = ctx;
    r->arrive_t[a] = cs_engine_now(e);
    r->narrive[a]++;
    r->order[r->norder++] = -(int)a - 1;
}

static void start(cs_network *n, rec *r, const int *links, int nlinks, double bytes,
                  double factor, double cap_Bps, double latency_s, int64_t a)
{
    cs_flow_spec s = {.links = links, .nlinks = nlinks, .bytes = bytes, .factor = factor,
                      .cap_Bps = cap_Bps, .latency_s = latency_s, .on_sent = on_sent,
                      .on_arrive = on_arrive, .ctx = r, .a = a, .b = 0};
    cs_network_start_flow(n, &s);
}

/* Relative tolerance for results that pass through a few roundings. */
#define REL 1e-12
#define ck_assert_time(got, want) ck_assert_double_eq_tol((got), (want), REL * fmax(1.0, fabs(want)))

/* ---- one flow ------------------------------------------------------------ */

START_TEST(one_flow_exact)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    const double cap = 0x1p30, bytes = 0x1p20, lat = 0x1p-20; /* all exact in binary */
    int l = cs_network_add_link(n, cap);
    ck_assert_int_eq(l, 0);
    ck_assert_int_eq(cs_network_add_link(n, 2 * cap), 1);
    ck_assert_int_eq(cs_network_link_count(n), 2);
    ck_assert_double_eq(cs_network_link_capacity(n, 0), cap);
    ck_assert_double_eq(cs_network_link_capacity(n, 1), 2 * cap);
    start(n, r, &l, 1, bytes, 1.0, 0, lat, 0);
    ck_assert_int_eq(cs_network_active_flows(n), 1);
    cs_engine_run(e);
    ck_assert_double_eq(r->sent_t[0], bytes / cap);          /* 2^-10 s */
    ck_assert_double_eq(r->arrive_t[0], bytes / cap + lat); /* exactly */
    ck_assert_int_eq(r->nsent[0], 1);
    ck_assert_int_eq(r->narrive[0], 1);
    ck_assert_int_eq(cs_network_active_flows(n), 0);
    ck_assert_double_eq(cs_network_link_bytes(n, 0), bytes);
    ck_assert_double_eq(cs_network_link_bytes(n, 1), 0);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

START_TEST(one_flow_decimal)
{
    /* NVLink-like numbers: 25 MB over 20.6 GB/s plus 0.6 us */
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 20.6e9);
    start(n, r, &l, 1, 25e6, 1.0, 0, 0.6e-6, 0);
    cs_engine_run(e);
    ck_assert_time(r->arrive_t[0], 25e6 / 20.6e9 + 0.6e-6);
    ck_assert_time(r->arrive_t[0] - r->sent_t[0], 0.6e-6);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

/* Runs one flow alone on a 1 GB/s link and returns when its last byte left. */
static double lone_flow_time(double bytes, double factor, double cap_Bps)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1e9);
    start(n, r, &l, 1, bytes, factor, cap_Bps, 0, 0);
    cs_engine_run(e);
    double t = r->sent_t[0];
    ck_assert_int_eq(r->narrive[0], 1);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
    return t;
}

START_TEST(factor_and_cap)
{
    ck_assert_time(lone_flow_time(1e9, 1.0, 0), 1.0);
    ck_assert_time(lone_flow_time(1e9, 1.0, -1), 1.0);     /* <= 0: no cap */
    ck_assert_time(lone_flow_time(1e9, 0.5, 0), 2.0);      /* factor scales the rate */
    ck_assert_time(lone_flow_time(1e9, 0.25, 0), 4.0);
    ck_assert_time(lone_flow_time(1e9, 1.0, 2.5e8), 4.0);  /* cap below the link */
    ck_assert_time(lone_flow_time(1e9, 1.0, 5e9), 1.0);    /* cap above: no effect */
    ck_assert_time(lone_flow_time(1e9, 0.5, 4e8), 2.5);    /* min(0.5 * 1e9, 4e8) */
    ck_assert_time(lone_flow_time(1e9, 0.5, 8e8), 2.0);    /* min(0.5 * 1e9, 8e8) */
    ck_assert_time(lone_flow_time(1e9, 2.0, 0), 0.5);      /* factor > 1 is allowed */
}
END_TEST

static void start_zero(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)e;
    rec *r = ctx;
    int l = (int)b;
    start(r->net, r, &l, 1, 0, 1.0, 0, 1e-3, a);
}

START_TEST(zero_bytes)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1e9);
    /* a 1 GB flow, then at t = 0.5 a zero-byte flow on the same link: it
     * is sent at once and must not delay the big one */
    start(n, r, &l, 1, 1e9, 1.0, 0, 0, 0);
    cs_engine_schedule(e, 0.5, start_zero, r, 1, l);
    cs_engine_step(e); /* runs start_zero: the first event */
    ck_assert_double_eq(cs_engine_now(e), 0.5);
    ck_assert_int_eq(cs_network_active_flows(n), 2);
    cs_engine_run(e);
    ck_assert_double_eq(r->sent_t[1], 0.5);
    ck_assert_time(r->arrive_t[1], 0.5 + 1e-3);
    ck_assert_time(r->sent_t[0], 1.0);
    ck_assert_int_eq(r->narrive[1], 1);
    ck_assert_int_eq(cs_network_active_flows(n), 0);
    ck_assert_time(cs_network_link_bytes(n, 0), 1e9);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

START_TEST(zero_bytes_alone)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1e9);
    start(n, r, &l, 1, 0, 1.0, 0, 0, 0);
    cs_engine_run(e);
    ck_assert_double_eq(r->sent_t[0], 0);
    ck_assert_double_eq(r->arrive_t[0], 0);
    ck_assert_double_eq(cs_network_link_bytes(n, 0), 0);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

/* ---- sharing ------------------------------------------------------------- */

/*
 * Two flows start at t = 0 on one 1 GB/s link: A carries 1 GB, B 3 GB.
 * Both run at 0.5 GB/s until A is done at t = 2 (B has sent 1 GB too);
 * then B runs alone at 1 GB/s for its last 2 GB and is done at t = 4.
 */
START_TEST(two_flows_share_then_speed_up)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1e9);
    const double lat = 1e-6;
    start(n, r, &l, 1, 1e9, 1.0, 0, lat, 0);
    start(n, r, &l, 1, 3e9, 1.0, 0, lat, 1);
    ck_assert_int_eq(cs_network_active_flows(n), 2);
    cs_engine_run(e);
    ck_assert_time(r->sent_t[0], 2.0);
    ck_assert_time(r->sent_t[1], 4.0);
    ck_assert_time(r->arrive_t[0], 2.0 + lat);
    ck_assert_time(r->arrive_t[1], 4.0 + lat);
    ck_assert_int_eq(r->active_at_sent[0], 1); /* B still going when A finished */
    ck_assert_int_eq(r->active_at_sent[1], 0);
    ck_assert_time(cs_network_link_bytes(n, 0), 4e9);
    ck_assert_int_eq(r->nsent[0] + r->nsent[1] + r->narrive[0] + r->narrive[1], 4);

    /* The deliberately wrong expectations: a model without sharing would
     * finish A at bytes/capacity = 1 s and B at 3 s; one that shares but
     * never speeds B up again would finish B at 3 GB / 0.5 GB/s = 6 s. The
     * network must give neither. */
    const double naive_a = 1e9 / 1e9, naive_b = 3e9 / 1e9, no_speedup_b = 3e9 / 0.5e9;
    ck_assert_msg(fabs(r->sent_t[0] - naive_a) > 0.5, "flow A finished at the unshared time %g",
                  r->sent_t[0]);
    ck_assert_msg(fabs(r->sent_t[1] - naive_b) > 0.5, "flow B finished at the unshared time %g",
                  r->sent_t[1]);
    ck_assert_msg(fabs(r->sent_t[1] - no_speedup_b) > 0.5,
                  "flow B never sped up after A finished (%g)", r->sent_t[1]);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

static void start_late(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)e;
    rec *r = ctx;
    int l = (int)b;
    start(r->net, r, &l, 1, 1e9, 1.0, 0, 0, a);
}

/*
 * A (2 GB) starts at t = 0 alone on 1 GB/s; B (1 GB) joins at t = 1, when A
 * has 1 GB left. Both then run at 0.5 GB/s and finish together at t = 3.
 */
START_TEST(late_joiner_slows_first)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1e9);
    start(n, r, &l, 1, 2e9, 1.0, 0, 0, 0);
    cs_engine_schedule(e, 1.0, start_late, r, 1, l);
    cs_engine_run(e);
    ck_assert_time(r->sent_t[0], 3.0);
    ck_assert_time(r->sent_t[1], 3.0);
    ck_assert_time(cs_network_link_bytes(n, 0), 3e9);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

START_TEST(sharing_with_factor)
{
    /* two flows, factor 0.5, one 1 GB/s link: each 0.5 * 0.5 GB/s */
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1e9);
    start(n, r, &l, 1, 1e9, 0.5, 0, 0, 0);
    start(n, r, &l, 1, 1e9, 0.5, 0, 0, 1);
    cs_engine_run(e);
    ck_assert_time(r->sent_t[0], 4.0);
    ck_assert_time(r->sent_t[1], 4.0);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

/*
 * Equal split, not max-min (the departure documented in network.c): A is
 * capped at 0.1 GB/s, B is not; B still gets only half the 1 GB/s link,
 * 0.5 GB/s, so its 1 GB takes 2 s (max-min would give B 0.9 GB/s).
 */
START_TEST(equal_split_not_max_min)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1e9);
    start(n, r, &l, 1, 1e9, 1.0, 1e8, 0, 0);
    start(n, r, &l, 1, 1e9, 1.0, 0, 0, 1);
    cs_engine_run(e);
    ck_assert_time(r->sent_t[1], 2.0);
    /* A: 0.2 GB by t = 2, then still capped at 0.1 GB/s: 8 s more */
    ck_assert_time(r->sent_t[0], 10.0);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

/* ---- paths --------------------------------------------------------------- */

START_TEST(path_limited_by_slower)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int fast = cs_network_add_link(n, 1e9), slow = cs_network_add_link(n, 4e8);
    int path[2] = {fast, slow}, rpath[2] = {slow, fast};
    start(n, r, path, 2, 2e9, 1.0, 0, 0, 0);
    cs_engine_run(e);
    ck_assert_time(r->sent_t[0], 5.0); /* 2 GB / 0.4 GB/s */
    ck_assert_time(cs_network_link_bytes(n, fast), 2e9);
    ck_assert_time(cs_network_link_bytes(n, slow), 2e9);
    /* the order of links on the path does not matter */
    start(n, r, rpath, 2, 2e9, 1.0, 0, 0, 1);
    cs_engine_run(e);
    ck_assert_time(r->sent_t[1] - r->sent_t[0], 5.0);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

/*
 * A crosses links 0 (1 GB/s) and 1 (1 GB/s); B uses link 1 only. On link 1
 * each gets 0.5 GB/s, so A (1 GB) and B (0.5 GB): B done at t = 1 (A has
 * 0.5 GB left), then A alone at 1 GB/s, done at t = 1.5.
 */
START_TEST(path_shared_hop)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l0 = cs_network_add_link(n, 1e9), l1 = cs_network_add_link(n, 1e9);
    int pa[2] = {l0, l1};
    start(n, r, pa, 2, 1e9, 1.0, 0, 0, 0);
    start(n, r, &l1, 1, 0.5e9, 1.0, 0, 0, 1);
    cs_engine_run(e);
    ck_assert_time(r->sent_t[1], 1.0);
    ck_assert_time(r->sent_t[0], 1.5);
    ck_assert_time(cs_network_link_bytes(n, l0), 1e9);
    ck_assert_time(cs_network_link_bytes(n, l1), 1.5e9);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

START_TEST(sent_precedes_arrive_by_latency)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1e9);
    static const double lat[3] = {0.0, 5e-6, 0.25};
    for (int i = 0; i < 3; i++) start(n, r, &l, 1, 1e6 * (i + 1), 1.0, 0, lat[i], i);
    cs_engine_run(e);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(r->nsent[i], 1);
        ck_assert_int_eq(r->narrive[i], 1);
        ck_assert_time(r->arrive_t[i] - r->sent_t[i], lat[i]);
        /* on_sent was called before on_arrive for the same flow */
        int ps = -1, pa = -1;
        for (int k = 0; k < r->norder; k++) {
            if (r->order[k] == i + 1) ps = k;
            if (r->order[k] == -(i + 1)) pa = k;
        }
        ck_assert_int_lt(ps, pa);
    }
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

static int arrived_only;
static void count_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)e;
    (void)ctx;
    (void)a;
    (void)b;
    arrived_only++;
}

START_TEST(on_sent_may_be_null)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    int l = cs_network_add_link(n, 1e9);
    arrived_only = 0;
    cs_flow_spec s = {.links = &l, .nlinks = 1, .bytes = 1e6, .factor = 1, .latency_s = 1e-6,
                      .on_arrive = count_arrive};
    cs_network_start_flow(n, &s);
    ck_assert_time(cs_engine_run(e), 1e-3 + 1e-6);
    ck_assert_int_eq(arrived_only, 1);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

/* ---- many flows ---------------------------------------------------------- */

enum { NLINKS = 16, NFLOWS = 1000 };

typedef struct many {
    rec *r;
    cs_test_lcg g;
    int links[NFLOWS][CS_NET_MAX_PATH];
    int nlinks[NFLOWS];
    double bytes[NFLOWS], start_t[NFLOWS], lat[NFLOWS], mincap[NFLOWS];
    double caps[NLINKS];
} many;

static void many_start(cs_engine *e, void *ctx, int64_t i, int64_t b)
{
    (void)b;
    many *m = ctx;
    m->start_t[i] = cs_engine_now(e);
    start(m->r->net, m->r, m->links[i], m->nlinks[i], m->bytes[i], 1.0, 0, m->lat[i], i);
}

/* 1000 flows over random paths; all start at t = 0 (spread = 0) or at random
 * times. */
static void run_many(double spread)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    many *m = calloc(1, sizeof *m);
    ck_assert_ptr_nonnull(m);
    m->r = rec_new(n);
    m->g.s = 2024;
    for (int k = 0; k < NLINKS; k++) {
        m->caps[k] = 1e9 * (1 + cs_test_lcg_next(&m->g) % 8);
        ck_assert_int_eq(cs_network_add_link(n, m->caps[k]), k);
    }
    double want_link[NLINKS] = {0};
    for (int i = 0; i < NFLOWS; i++) {
        int np = 1 + (int)(cs_test_lcg_next(&m->g) % CS_NET_MAX_PATH);
        /* distinct links: a random start and stride over 16 (odd stride) */
        int l0 = (int)(cs_test_lcg_next(&m->g) % NLINKS), st = 1 + 2 * (int)(cs_test_lcg_next(&m->g) % 8);
        m->nlinks[i] = np;
        m->mincap[i] = INFINITY;
        m->bytes[i] = (double)(cs_test_lcg_next(&m->g) % 1000000) * 64; /* 0 .. 64 MB, some zero */
        m->lat[i] = (double)(cs_test_lcg_next(&m->g) % 10) * 1e-6;
        for (int k = 0; k < np; k++) {
            int l = (l0 + k * st) % NLINKS;
            m->links[i][k] = l;
            want_link[l] += m->bytes[i];
            m->mincap[i] = fmin(m->mincap[i], m->caps[l]);
        }
        double t = spread > 0 ? spread * (cs_test_lcg_next(&m->g) % 100000) / 100000.0 : 0;
        cs_engine_schedule(e, t, many_start, m, i, 0);
    }
    cs_engine_run(e);
    ck_assert_int_eq(cs_network_active_flows(n), 0);
    ck_assert_uint_eq(cs_engine_pending(e), 0);
    for (int i = 0; i < NFLOWS; i++) {
        ck_assert_msg(m->r->nsent[i] == 1 && m->r->narrive[i] == 1,
                      "flow %d: sent %d times, arrived %d times", i, m->r->nsent[i],
                      m->r->narrive[i]);
        /* no flow beats its path's slowest link running alone */
        double lower = m->bytes[i] / m->mincap[i];
        ck_assert_msg(m->r->sent_t[i] - m->start_t[i] >= lower * (1 - 1e-9),
                      "flow %d: %g bytes sent in %g s, faster than alone (%g s)", i, m->bytes[i],
                      m->r->sent_t[i] - m->start_t[i], lower);
        ck_assert_time(m->r->arrive_t[i] - m->r->sent_t[i], m->lat[i]);
    }
    for (int k = 0; k < NLINKS; k++)
        ck_assert_msg(fabs(cs_network_link_bytes(n, k) - want_link[k]) <= 1e-9 * want_link[k],
                      "link %d carried %.17g bytes, flows sent %.17g", k,
                      cs_network_link_bytes(n, k), want_link[k]);
    free(m->r);
    free(m);
    cs_network_free(n);
    cs_engine_free(e);
}

START_TEST(many_flows_together)
{
    run_many(0);
}
END_TEST

START_TEST(many_flows_staggered)
{
    run_many(0.05);
}
END_TEST

/* ---- regressions ------------------------------------------------------- */

/*
 * A finished flow's slot is reused by the next flow, and the version that
 * tells stale completion events apart restarts at 1, so a stale event of the
 * old flow completes the new one early. B (2 B) and A (10 B) share a 1 B/s
 * link: A's first completion event says t = 20; B ends at t = 4, A speeds
 * up and ends at t = 12 (its t = 20 event is now stale). C (100 B) starts
 * when A arrives, in A's slot, and must end at t = 112, not at 20.
 */
static void start_c_after_a(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    on_arrive(e, ctx, a, b);
    if (a == 0) {
        rec *r = ctx;
        int l = 0;
        start(r->net, r, &l, 1, 100, 1.0, 0, 0, 2);
    }
}

START_TEST(slot_reuse_ignores_stale_events)
{
    cs_engine *e = cs_engine_new();
    cs_network *n = cs_network_new(e);
    rec *r = rec_new(n);
    int l = cs_network_add_link(n, 1.0);
    cs_flow_spec b = {.links = &l, .nlinks = 1, .bytes = 2, .factor = 1,
                      .on_arrive = on_arrive, .ctx = r, .a = 1};
    cs_flow_spec a = {.links = &l, .nlinks = 1, .bytes = 10, .factor = 1,
                      .on_arrive = start_c_after_a, .ctx = r, .a = 0};
    cs_network_start_flow(n, &b);
    cs_network_start_flow(n, &a);
    cs_engine_run(e);
    ck_assert_time(r->arrive_t[1], 4.0);
    ck_assert_time(r->arrive_t[0], 12.0);
    ck_assert_msg(fabs(r->arrive_t[2] - 112.0) < 1e-9,
                  "flow C ended at t = %g, want 112: a stale event of A completed it", r->arrive_t[2]);
    ck_assert_time(cs_network_link_bytes(n, 0), 112.0);
    free(r);
    cs_network_free(n);
    cs_engine_free(e);
}
END_TEST

static Suite *network_suite(void)
{
    Suite *s = suite_create("network");
    TCase *t1 = tcase_create("single");
    tcase_add_test(t1, one_flow_exact);
    tcase_add_test(t1, one_flow_decimal);
    tcase_add_test(t1, factor_and_cap);
    tcase_add_test(t1, zero_bytes);
    tcase_add_test(t1, zero_bytes_alone);
    tcase_add_test(t1, sent_precedes_arrive_by_latency);
    tcase_add_test(t1, on_sent_may_be_null);
    suite_add_tcase(s, t1);
    TCase *t2 = tcase_create("sharing");
    tcase_add_test(t2, two_flows_share_then_speed_up);
    tcase_add_test(t2, late_joiner_slows_first);
    tcase_add_test(t2, sharing_with_factor);
    tcase_add_test(t2, equal_split_not_max_min);
    tcase_add_test(t2, path_limited_by_slower);
    tcase_add_test(t2, path_shared_hop);
    suite_add_tcase(s, t2);
    TCase *t3 = tcase_create("many");
    tcase_add_test(t3, many_flows_together);
    tcase_add_test(t3, many_flows_staggered);
    suite_add_tcase(s, t3);
    /* Regression test for a fixed bug: completion-event versions restarted
     * when a flow slot was reused. */
    TCase *tb = tcase_create("regressions");
    tcase_add_test(tb, slot_reuse_ignores_stale_events);
    suite_add_tcase(s, tb);
    return s;
}

int main(void)
{
    return cs_test_run(network_suite());
}
