/* SPDX-License-Identifier: MIT */
/*
 * treepipe.c - the tree pipeline's event runs (see treepipe.h): the heads'
 * tree (and the reference run over every rank) on the engine, the chains
 * on coll/treechain.h's loop, and the memo that runs equal chains once.
 *
 * An engine part is a set of vertices (ranks), each with, per tree, a
 * parent and up to three children; a head's chain is its first child,
 * EXT: its up chunks enter at given times and nothing is sent to it. An
 * EXT child's chunks are counted whenever something happens at its vertex
 * (an arrival, a wake-up), and a wake-up is scheduled at the next entering
 * time only while that chunk is what holds the vertex back (its other
 * children are ahead): most entering chunks, those that arrive before the
 * network's, cost no event. A vertex marked `rec` records when it holds
 * each reduced chunk (the heads, for the chains' broadcast). The
 * rules are algo_tree.c's as they were in one run: a rank forwards chunk k
 * up once every child has delivered it and its last up chunk has left,
 * and down to each child once it holds chunk k (the root: once reduced)
 * and its last chunk to that child has left; a flow from rank r runs on
 * r's out lane and the receiver's in lane (ports within a node, the node
 * networks across), factor and cap divided by r's slowdown.
 */
#include "coll/treepipe.h"

#include <stdlib.h>
#include <string.h>

#include "base/engine.h"
#include "base/error.h"
#include "coll/algo.h"
#include "coll/deslinks.h"
#include "coll/network.h"
#include "coll/treechain.h"

#define MAX_CHILD 3
#define EXT (-2)

enum { UP_OUT, UP_IN, DN_OUT, DN_IN };

typedef struct tvert {
    int parent; /* vertex or -1 (root) */
    int child[MAX_CHILD];
    int nchild;
    long up_recv[MAX_CHILD];
    long up_sent;
    char up_busy;
    long down_recv;
    long down_sent[MAX_CHILD];
    char down_busy[MAX_CHILD];
    char wake; /* a wake-up for the EXT child's next chunk is pending */
} tvert;

typedef struct part {
    const cs_treepipe *q;
    int nv;
    int *rank, *node;     /* per vertex: its rank and node */
    int *lane;            /* per vertex: 4 port lanes, then 4 network lanes */
    double *factor, *cap; /* per vertex, as a sender */
    char *started, *rec;  /* per vertex */
    tvert *v[2];          /* per tree, per vertex */
    const double **in;    /* per (vertex, tree): entering times, or NULL */
    double *out;          /* per (vertex, tree, chunk): recorded times */
    cs_engine *eng;
    cs_network *net;
    double done_s;
} part;

static void part_init(part *s, const cs_treepipe *q, int nv)
{
    *s = (part){.q = q, .nv = nv};
    s->rank = cs_xcalloc((size_t)nv, sizeof *s->rank);
    s->node = cs_xcalloc((size_t)nv, sizeof *s->node);
    s->lane = cs_xmalloc((size_t)8 * nv * sizeof *s->lane);
    memset(s->lane, 0xff, (size_t)8 * nv * sizeof *s->lane);
    s->factor = cs_xcalloc((size_t)nv, sizeof *s->factor);
    s->cap = cs_xcalloc((size_t)nv, sizeof *s->cap);
    s->started = cs_xcalloc((size_t)nv, 1);
    s->rec = cs_xcalloc((size_t)nv, 1);
    for (int w = 0; w < 2; w++) {
        s->v[w] = cs_xcalloc((size_t)nv, sizeof(tvert));
        for (int i = 0; i < nv; i++) s->v[w][i].parent = -1;
    }
    s->in = cs_xcalloc((size_t)2 * nv, sizeof *s->in);
    s->eng = cs_engine_new();
    s->net = cs_network_new(s->eng);
}

static void part_free(part *s)
{
    free(s->rank);
    free(s->node);
    free(s->lane);
    free(s->factor);
    free(s->cap);
    free(s->started);
    free(s->rec);
    free(s->v[0]);
    free(s->v[1]);
    free(s->in);
    free(s->out);
    cs_network_free(s->net);
    cs_engine_free(s->eng);
}

/* Vertex i stands for rank r: its sender factor and cap. */
static void part_rank(part *s, int i, int r)
{
    double slow = cs_deslinks_slowdown(s->q->t, r);
    s->rank[i] = r;
    s->node[i] = cs_topology_node_of(s->q->t, r);
    s->factor[i] = s->q->factor / slow;
    s->cap[i] = s->q->cap_Bps / slow;
}

/* Four new lanes of capacity cap_Bps, their ids into lane[0..4). */
static void add_lanes(part *s, int *lane, double cap_Bps)
{
    for (int l = 0; l < 4; l++) lane[l] = cs_network_add_link(s->net, cap_Bps);
}

static double port_cap(const cs_treepipe *q, int r)
{
    const cs_topology *t = q->t;
    return cs_deslinks_port_ch_Bps(t, cs_topology_node_of(t, r), cs_topology_local_of(t, r)) *
           q->ch_scale;
}

static double net_cap(const cs_treepipe *q, int node)
{
    return q->t->nodes > 1 ? cs_deslinks_net_ch_Bps(q->t, node) * q->ch_scale : 1.0;
}

static long ready_up(const part *s, const tvert *x)
{
    long m = s->q->chunks;
    for (int i = 0; i < x->nchild; i++)
        if (x->up_recv[i] < m) m = x->up_recv[i];
    return m;
}

static long ready_down(const part *s, const tvert *x)
{
    return x->parent == -1 ? ready_up(s, x) : x->down_recv;
}

static void pump(part *s, int w, int i);
static void on_sent(cs_engine *e, void *ctx, int64_t a, int64_t b);
static void on_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b);

static void send(part *s, int w, int from, int to, int up, int slot)
{
    int inter = s->node[from] != s->node[to];
    int off = inter ? 4 : 0;
    int links[2] = {s->lane[8 * from + off + (up ? UP_OUT : DN_OUT)],
                    s->lane[8 * to + off + (up ? UP_IN : DN_IN)]};
    /* payload: a = from << 32 | to; b = tree << 8 | up << 4 | child slot */
    int64_t a = ((int64_t)from << 32) | (uint32_t)to;
    int64_t b = ((int64_t)w << 8) | ((int64_t)up << 4) | slot;
    cs_flow_spec f = {.links = links, .nlinks = 2, .bytes = s->q->chunk_bytes,
                      .factor = s->factor[from], .cap_Bps = s->cap[from],
                      .latency_s = inter ? s->q->inter_lat_s : s->q->intra_lat_s,
                      .on_sent = on_sent, .on_arrive = on_arrive, .ctx = s, .a = a, .b = b};
    cs_network_start_flow(s->net, &f);
}

static void pump(part *s, int w, int i)
{
    tvert *x = &s->v[w][i];
    if (!s->started[i]) return;
    if (x->parent >= 0 && !x->up_busy && x->up_sent < ready_up(s, x)) {
        x->up_busy = 1;
        x->up_sent++;
        send(s, w, i, x->parent, 1, 0);
    }
    long rd = ready_down(s, x);
    for (int c = 0; c < x->nchild; c++) {
        if (x->child[c] >= 0 && !x->down_busy[c] && x->down_sent[c] < rd) {
            x->down_busy[c] = 1;
            x->down_sent[c]++;
            send(s, w, i, x->child[c], 0, c);
        }
    }
}

static void on_sent(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)e;
    part *s = ctx;
    int from = (int)(a >> 32), w = (int)(b >> 8), up = (int)((b >> 4) & 1), slot = (int)(b & 15);
    tvert *x = &s->v[w][from];
    if (up)
        x->up_busy = 0;
    else
        x->down_busy[slot] = 0;
    pump(s, w, from);
}

/* The EXT child (slot 0, where a vertex has one) has delivered every
 * chunk whose entering time has come. */
static void ext_sync(part *s, int w, int i, double now)
{
    const double *in = s->in[2 * i + w];
    tvert *x = &s->v[w][i];
    if (in)
        while (x->up_recv[0] < s->q->chunks && in[x->up_recv[0]] <= now) x->up_recv[0]++;
}

static void on_wake(cs_engine *e, void *ctx, int64_t a, int64_t unused);

/* A wake-up at the EXT child's next entering time when that chunk is what
 * holds the vertex back (the other children are ahead of it): its chunks
 * are counted when something happens at the vertex, so only the entering
 * times that can start something are events. */
static void ext_arm(part *s, int w, int i)
{
    const double *in = s->in[2 * i + w];
    tvert *x = &s->v[w][i];
    if (!in || x->wake || x->up_recv[0] >= s->q->chunks) return;
    long others = s->q->chunks;
    for (int c = 1; c < x->nchild; c++)
        if (x->up_recv[c] < others) others = x->up_recv[c];
    if (x->up_recv[0] >= others) return;
    x->wake = 1;
    cs_engine_schedule(s->eng, in[x->up_recv[0]], on_wake, s, 2 * i + w, 0);
}

/* Something happened at vertex i of tree w at now: a chunk arrived from
 * child slot `slot` (up), from the parent (slot -1) or none (slot -2). The
 * EXT child is brought up to date, what the vertex now holds is recorded,
 * and it pumps. */
static void arrive(part *s, int w, int i, int slot, double now)
{
    tvert *y = &s->v[w][i];
    long before = s->rec[i] ? ready_down(s, y) : 0;
    ext_sync(s, w, i, now);
    if (slot >= 0)
        y->up_recv[slot]++;
    else if (slot == -1)
        y->down_recv++;
    long rd = ready_down(s, y);
    if (s->rec[i])
        for (long k = before; k < rd; k++) s->out[((size_t)i * 2 + w) * s->q->chunks + k] = now;
    /* a rank is done when it holds every reduced chunk */
    if (rd == s->q->chunks && now > s->done_s) s->done_s = now;
    pump(s, w, i);
    ext_arm(s, w, i);
}

static void on_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    part *s = ctx;
    int from = (int)(a >> 32), to = (int)(uint32_t)a, w = (int)(b >> 8), up = (int)((b >> 4) & 1);
    int slot = -1;
    if (up) {
        const tvert *y = &s->v[w][to];
        for (int c = 0; c < y->nchild; c++)
            if (y->child[c] == from) slot = c;
    }
    arrive(s, w, to, slot, cs_engine_now(e));
}

/* a = vertex << 1 | tree */
static void on_wake(cs_engine *e, void *ctx, int64_t a, int64_t unused)
{
    (void)unused;
    part *s = ctx;
    int i = (int)(a >> 1), w = (int)(a & 1);
    s->v[w][i].wake = 0;
    arrive(s, w, i, -2, cs_engine_now(e));
}

static void on_start(cs_engine *e, void *ctx, int64_t i, int64_t unused)
{
    (void)e;
    (void)unused;
    part *s = ctx;
    s->started[i] = 1;
    for (int w = 0; w < 2; w++) pump(s, w, (int)i);
}

/* Runs part s: every vertex starts at its rank's delay (in vertex order),
 * then the EXT children's wake-ups; panics if a vertex that should hold every
 * reduced chunk does not. Returns the last such arrival. */
static double part_run(part *s)
{
    const cs_topology *t = s->q->t;
    int recs = 0;
    for (int i = 0; i < s->nv; i++) recs |= s->rec[i];
    if (recs && s->out == NULL)
        s->out = cs_xmalloc((size_t)2 * s->nv * (size_t)s->q->chunks * sizeof *s->out);
    for (int i = 0; i < s->nv; i++)
        cs_engine_schedule(s->eng, cs_deslinks_delay_s(t, s->rank[i]), on_start, s, i, 0);
    for (int i = 0; i < s->nv; i++)
        for (int w = 0; w < 2; w++) ext_arm(s, w, i);
    cs_engine_run(s->eng);
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < s->nv; i++)
            if (ready_down(s, &s->v[w][i]) != s->q->chunks)
                CS_PANIC("tree schedule stalled: tree %d rank %d", w, s->rank[i]);
    return s->done_s;
}

static int head_of(const cs_topology *t, int node)
{
    /* first rank of a node: ranks are placed in node order */
    int r = 0;
    for (int k = 0; k < node; k++) r += cs_topology_ranks_on(t, k);
    return r;
}

/* Tree w's inter-node edges at the head of node k, given each node's
 * vertex: parent, then the children after those already in x. */
static void link_heads(const cs_topology *t, int w, int k, const int *vert_of_node, tvert *x)
{
    int up, d0, d1;
    cs__algo_dtree(t->nodes, w, k, &up, &d0, &d1);
    if (up >= 0) x->parent = vert_of_node[up];
    if (d0 >= 0) x->child[x->nchild++] = vert_of_node[d0];
    if (d1 >= 0) x->child[x->nchild++] = vert_of_node[d1];
}

double cs_treepipe_run_whole(const cs_treepipe *q, unsigned long long *events)
{
    const cs_topology *t = q->t;
    int n = t->ranks, nn = t->nodes;
    CS_ASSERT(n >= 2);
    part s;
    part_init(&s, q, n);
    int *heads = cs_xmalloc((size_t)nn * sizeof *heads);
    for (int k = 0; k < nn; k++) heads[k] = head_of(t, k);
    for (int r = 0; r < n; r++) {
        part_rank(&s, r, r);
        add_lanes(&s, &s.lane[8 * r], port_cap(q, r));
    }
    for (int k = 0; k < nn; k++) {
        int net[4];
        add_lanes(&s, net, net_cap(q, k));
        for (int r = heads[k]; r < heads[k] + cs_topology_ranks_on(t, k); r++)
            memcpy(&s.lane[8 * r + 4], net, sizeof net);
    }
    for (int w = 0; w < 2; w++)
        for (int r = 0; r < n; r++) {
            tvert *x = &s.v[w][r];
            int k = cs_topology_node_of(t, r), i = cs_topology_local_of(t, r);
            if (i > 0) x->parent = r - 1;
            if (i + 1 < cs_topology_ranks_on(t, k)) x->child[x->nchild++] = r + 1;
            if (i == 0) link_heads(t, w, k, heads, x);
        }
    free(heads);
    double done = part_run(&s);
    *events = cs_engine_events_run(s.eng);
    part_free(&s);
    return done;
}

/* ---- the parts ----------------------------------------------------------- */

/* Runs of equal inputs, looked up by the inputs' bytes: keys of klen
 * doubles, values of vlen, an open-addressing index grown at half load. */
typedef struct memo {
    size_t klen, vlen;
    double *keys, *vals;
    int n, cap;
    int *index; /* entry + 1; 0 empty */
    size_t icap;
} memo;

static uint64_t key_hash(const double *key, size_t klen)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < klen; i++) {
        uint64_t bits;
        memcpy(&bits, &key[i], sizeof bits);
        h = (h ^ bits) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}

static void memo_grow(memo *m)
{
    free(m->index);
    m->icap = m->icap ? 2 * m->icap : 64;
    m->index = cs_xcalloc(m->icap, sizeof *m->index);
    for (int e = 0; e < m->n; e++) {
        size_t h = key_hash(&m->keys[(size_t)e * m->klen], m->klen) & (m->icap - 1);
        while (m->index[h]) h = (h + 1) & (m->icap - 1);
        m->index[h] = e + 1;
    }
}

/* The entry holding key, or a new one (*fresh = 1: its values are the
 * caller's to fill). Pointers into vals last until the next new entry. */
static int memo_find(memo *m, const double *key, int *fresh)
{
    if ((size_t)2 * (m->n + 1) > m->icap) memo_grow(m);
    size_t h = key_hash(key, m->klen) & (m->icap - 1);
    for (; m->index[h]; h = (h + 1) & (m->icap - 1)) {
        int e = m->index[h] - 1;
        if (!memcmp(&m->keys[(size_t)e * m->klen], key, m->klen * sizeof *key)) {
            *fresh = 0;
            return e;
        }
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 8;
        m->keys = cs_xrealloc(m->keys, (size_t)m->cap * m->klen * sizeof *m->keys);
        m->vals = cs_xrealloc(m->vals, (size_t)m->cap * m->vlen * sizeof *m->vals);
    }
    memcpy(&m->keys[(size_t)m->n * m->klen], key, m->klen * sizeof *key);
    m->index[h] = m->n + 1;
    *fresh = 1;
    return m->n++;
}

static void memo_free(memo *m)
{
    free(m->keys);
    free(m->vals);
    free(m->index);
}

/* What a node's chain depends on: its rank count, then each rank's port
 * lane capacity, slowdown and start delay (zeros after the last rank). */
static void chain_key(const cs_treepipe *q, int head, int m, int width, double *key)
{
    memset(key, 0, (size_t)(1 + 3 * width) * sizeof *key);
    key[0] = m;
    for (int i = 0; i < m; i++) {
        key[1 + 3 * i] = port_cap(q, head + i);
        key[2 + 3 * i] = cs_deslinks_slowdown(q->t, head + i);
        key[3 + 3 * i] = cs_deslinks_delay_s(q->t, head + i);
    }
}

/* Runs the chain of node `head`'s m ranks (coll/treechain.h) up or down. */
static double chain_run(const cs_treepipe *q, int head, int m, int up, const double *in, double *out)
{
    double *v = cs_xmalloc((size_t)4 * m * sizeof *v);
    cs_treechain c = {.ranks = m, .up = up, .chunks = q->chunks, .chunk_bytes = q->chunk_bytes,
                      .lat_s = q->intra_lat_s, .port_Bps = v, .factor = v + m, .cap_Bps = v + 2 * m,
                      .start_s = v + 3 * m};
    for (int i = 0; i < m; i++) {
        double slow = cs_deslinks_slowdown(q->t, head + i);
        v[i] = port_cap(q, head + i);
        v[m + i] = q->factor / slow;
        v[2 * m + i] = q->cap_Bps / slow;
        v[3 * m + i] = cs_deslinks_delay_s(q->t, head + i);
    }
    double done = cs_treechain_run(&c, in, out);
    free(v);
    return done;
}

/* Part 1: when the head of the chain (head, m) holds each chunk its chain
 * reduced, tree 0's chunks then tree 1's, into out[0..2 chunks). */
static void chain_up(const cs_treepipe *q, int head, int m, double *out)
{
    chain_run(q, head, m, 1, NULL, out);
}

/* Part 3: the last arrival of the chain (head, m) broadcasting down the
 * chunks its head holds at in[0..2 chunks) (tree 0's, then tree 1's). */
static double chain_down(const cs_treepipe *q, int head, int m, const double *in)
{
    return chain_run(q, head, m, 0, in, NULL);
}

/* Part 2 set up: vertex k = node k's head; a head with a chain has it as
 * its first child (EXT), entering at up[k] (NULL: no chain), and records
 * when it holds each reduced chunk. */
static void heads_init(part *s, const cs_treepipe *q, const int *heads, const double *const *up)
{
    const cs_topology *t = q->t;
    int nn = t->nodes;
    part_init(s, q, nn);
    int *self = cs_xmalloc((size_t)nn * sizeof *self);
    for (int k = 0; k < nn; k++) {
        self[k] = k;
        part_rank(s, k, heads[k]);
        add_lanes(s, &s->lane[8 * k + 4], net_cap(q, k));
    }
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < nn; k++) {
            tvert *x = &s->v[w][k];
            if (up[k]) {
                x->child[x->nchild++] = EXT;
                s->in[2 * k + w] = up[k] + (size_t)w * q->chunks;
                s->rec[k] = 1;
            }
            link_heads(t, w, k, self, x);
        }
    free(self);
}

double cs_treepipe_run(const cs_treepipe *q, unsigned long long *events)
{
    const cs_topology *t = q->t;
    int n = t->ranks, nn = t->nodes, width = 0;
    long C = q->chunks;
    CS_ASSERT(n >= 2 && C >= 1);
    *events = (unsigned long long)n + 8ull * (unsigned long long)(n - 1) * (unsigned long long)C;
    int *heads = cs_xmalloc((size_t)nn * sizeof *heads), *cls = cs_xmalloc((size_t)nn * sizeof *cls);
    for (int k = 0; k < nn; k++) {
        heads[k] = head_of(t, k);
        if (cs_topology_ranks_on(t, k) > width) width = cs_topology_ranks_on(t, k);
    }
    size_t klen = 1 + 3 * (size_t)width;
    double *key = cs_xmalloc((klen + 2 * (size_t)C) * sizeof *key);
    memo ups = {.klen = klen, .vlen = 2 * (size_t)C};
    for (int k = 0; k < nn; k++) {
        int m = cs_topology_ranks_on(t, k), fresh;
        cls[k] = -1;
        if (m < 2) continue;
        chain_key(q, heads[k], m, width, key);
        cls[k] = memo_find(&ups, key, &fresh);
        if (fresh) chain_up(q, heads[k], m, &ups.vals[(size_t)cls[k] * ups.vlen]);
    }
    const double **up = cs_xmalloc((size_t)nn * sizeof *up);
    for (int k = 0; k < nn; k++) up[k] = cls[k] < 0 ? NULL : &ups.vals[(size_t)cls[k] * ups.vlen];
    part h;
    heads_init(&h, q, heads, up);
    double done = part_run(&h);
    memo downs = {.klen = klen + 2 * (size_t)C, .vlen = 1};
    for (int k = 0; k < nn; k++) {
        int m = cs_topology_ranks_on(t, k), fresh;
        if (m < 2) continue;
        const double *in = &h.out[(size_t)k * 2 * C];
        chain_key(q, heads[k], m, width, key);
        memcpy(key + klen, in, 2 * (size_t)C * sizeof *key);
        int e = memo_find(&downs, key, &fresh);
        if (fresh) downs.vals[e] = chain_down(q, heads[k], m, in);
        if (downs.vals[e] > done) done = downs.vals[e];
    }
    part_free(&h);
    memo_free(&ups);
    memo_free(&downs);
    free(up);
    free(key);
    free(cls);
    free(heads);
    return done;
}
