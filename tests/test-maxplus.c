/* SPDX-License-Identifier: MIT */
/*
 * test-maxplus.c - the max-plus ring and chain (coll/maxplus.h) against
 * the event engine they replace: random rings and chains (link capacities,
 * per-rank slowdowns, start delays and latencies drawn from a fixed seed)
 * run through cs_engine + cs_network with the schedule algo_ring.c used to
 * run (send the next message once the last has left and the needed one
 * has arrived), then through the recurrence; times must agree bit for bit
 * and event counts exactly. A deliberately wrong recurrence (arrivals
 * without latency) must be caught.
 */
#include <math.h>

#include "base/engine.h"
#include "coll/maxplus.h"
#include "coll/network.h"
#include "testutil.h"

typedef struct ref {
    cs_engine *e;
    cs_network *net;
    int n, chain;
    long steps;
    double bytes;
    const double *cap_out, *cap_in, *factor, *cap, *lat, *delay;
    int *out, *in;
    long *recvd, *sent;
    char *busy, *started;
    double done;
} ref;

static void on_sent(cs_engine *e, void *ctx, int64_t r, int64_t step);
static void on_arrive(cs_engine *e, void *ctx, int64_t to, int64_t step);

/* ring: step k needs k arrivals; chain: chunk k needs k + 1 */
static void advance(ref *s, int r)
{
    long need = s->sent[r] + (s->chain ? 1 : 0);
    if (!s->started[r] || s->busy[r] || s->sent[r] >= s->steps || s->recvd[r] < need) return;
    if (s->chain && r == s->n - 1) return;
    s->busy[r] = 1;
    int to = (r + 1) % s->n, links[2] = {s->out[r], s->in[to]};
    cs_flow_spec f = {.links = links, .nlinks = 2, .bytes = s->bytes, .factor = s->factor[r],
                      .cap_Bps = s->cap[r], .latency_s = s->lat[r], .on_sent = on_sent,
                      .on_arrive = on_arrive, .ctx = s, .a = r, .b = s->sent[r]};
    cs_network_start_flow(s->net, &f);
}

static void on_sent(cs_engine *e, void *ctx, int64_t r, int64_t step)
{
    (void)e;
    ref *s = ctx;
    s->sent[r] = step + 1;
    s->busy[r] = 0;
    advance(s, (int)r);
}

static void on_arrive(cs_engine *e, void *ctx, int64_t from, int64_t step)
{
    ref *s = ctx;
    int to = (int)((from + 1) % s->n);
    s->recvd[to] = step + 1;
    if (cs_engine_now(e) > s->done) s->done = cs_engine_now(e);
    advance(s, to);
}

static void start(cs_engine *e, void *ctx, int64_t r, int64_t unused)
{
    (void)e;
    (void)unused;
    ref *s = ctx;
    s->started[r] = 1;
    advance(s, (int)r);
}

static double ref_run(ref *s, unsigned long long *events)
{
    int n = s->n;
    s->e = cs_engine_new();
    s->net = cs_network_new(s->e);
    s->out = calloc((size_t)n, sizeof(int));
    s->in = calloc((size_t)n, sizeof(int));
    s->recvd = calloc((size_t)n, sizeof(long));
    s->sent = calloc((size_t)n, sizeof(long));
    s->busy = calloc((size_t)n, 1);
    s->started = calloc((size_t)n, 1);
    for (int r = 0; r < n; r++) {
        s->out[r] = cs_network_add_link(s->net, s->cap_out[r]);
        s->in[r] = cs_network_add_link(s->net, s->cap_in[r]);
    }
    if (s->chain) s->recvd[0] = s->steps; /* the root holds every chunk */
    for (int r = 0; r < n; r++) cs_engine_schedule(s->e, s->delay[r], start, s, r, 0);
    cs_engine_run(s->e);
    *events = cs_engine_events_run(s->e);
    cs_network_free(s->net);
    cs_engine_free(s->e);
    free(s->out);
    free(s->in);
    free(s->recvd);
    free(s->sent);
    free(s->busy);
    free(s->started);
    return s->done;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double uniform01(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) / 9007199254740992.0;
}

#define MAXN 40

/* One random case: n ranks, steps, ring or chain; `wrong` drops the
 * latencies from the recurrence's input. Returns 1 when both agree. */
static int agree(int n, long steps, int chain, int wrong)
{
    double cap_out[MAXN], cap_in[MAXN], factor[MAXN], cap[MAXN], lat[MAXN], delay[MAXN];
    cs_maxplus_hop h[MAXN];
    double bytes = 1e4 + 1e6 * uniform01();
    for (int r = 0; r < n; r++) {
        cap_out[r] = 1e9 * (1 + 20 * uniform01());
        cap_in[r] = uniform01() < 0.3 ? 1e9 * (1 + 20 * uniform01()) : cap_out[r];
        double slow = uniform01() < 0.2 ? 1 + uniform01() : 1.0;
        factor[r] = (uniform01() < 0.5 ? 1.0 : 0.92) / slow;
        cap[r] = uniform01() < 0.5 ? 5e9 / slow : INFINITY;
        lat[r] = uniform01() < 0.5 ? 0 : 1e-6 * uniform01();
        delay[r] = uniform01() < 0.2 ? 1e-5 * uniform01() : 0;
    }
    for (int r = 0; r < n; r++) {
        double caps[2] = {cap_out[r], cap_in[(r + 1) % n]};
        h[r] = (cs_maxplus_hop){delay[r], bytes / cs_network_solo_rate(caps, 2, factor[r], cap[r]),
                                wrong ? 0 : lat[r]};
    }
    ref s = {.n = n, .chain = chain, .steps = steps, .bytes = bytes, .cap_out = cap_out,
             .cap_in = cap_in, .factor = factor, .cap = cap, .lat = lat, .delay = delay};
    unsigned long long ev_ref, ev;
    double t_ref = ref_run(&s, &ev_ref);
    double t = chain ? cs_maxplus_chain(h, n, steps, &ev) : cs_maxplus_ring(h, n, steps, &ev);
    ck_assert_uint_eq(ev, ev_ref);
    return memcmp(&t, &t_ref, sizeof t) == 0;
}

START_TEST(ring_equals_event_engine)
{
    for (int i = 0; i < 60; i++) {
        int n = 1 + (int)(uniform01() * (MAXN - 1));
        long steps = 1 + (long)(uniform01() * 2 * n);
        ck_assert_msg(agree(n, steps, 0, 0), "case %d: ring of %d, %ld steps", i, n, steps);
    }
}
END_TEST

START_TEST(chain_equals_event_engine)
{
    for (int i = 0; i < 60; i++) {
        int n = 2 + (int)(uniform01() * (MAXN - 2));
        long chunks = 1 + (long)(uniform01() * 50);
        ck_assert_msg(agree(n, chunks, 1, 0), "case %d: chain of %d, %ld chunks", i, n, chunks);
    }
}
END_TEST

START_TEST(wrong_recurrence_is_caught)
{
    int caught = 0;
    for (int i = 0; i < 20; i++) caught += !agree(8, 14, i % 2, 1);
    ck_assert_int_ge(caught, 10); /* where the sends, not the latencies, are critical both agree */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("maxplus");
    TCase *tc = tcase_create("maxplus");
    tcase_add_test(tc, ring_equals_event_engine);
    tcase_add_test(tc, chain_equals_event_engine);
    tcase_add_test(tc, wrong_recurrence_is_caught);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
