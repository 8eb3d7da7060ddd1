/* SPDX-License-Identifier: MIT */
/*
 * allocator.c - the CUDA caching allocator's rules (allocator.h), from
 * c10/cuda/CUDACachingAllocator.cpp (torch 2.x; unchanged in substance
 * since 1.13):
 *   round_size         requests round up to kMinBlockSize = 512 bytes;
 *   pools              <= kSmallSize (1 MiB) from the small pool, larger
 *                      from the large pool; blocks are found per (pool,
 *                      stream): get_free_block takes the smallest cached
 *                      block >= the request (best fit; torch takes the
 *                      lowest address of equal sizes, BlockComparatorSize,
 *                      this the last cached: there are no addresses here);
 *   get_allocation_size  a new segment (cudaMalloc) when none fits:
 *                      kSmallBuffer 2 MiB for small requests, kLargeBuffer
 *                      20 MiB for requests under kMinLargeAlloc (10 MiB),
 *                      else the request rounded up to kRoundLarge (2 MiB);
 *   should_split       a block larger than the request is split when the
 *                      rest is >= kMinBlockSize (small pool) or > kSmallSize
 *                      (large pool); otherwise the whole block is handed out
 *                      and counted allocated;
 *   free_block         a freed block merges with free neighbours of the
 *                      same segment (try_merge_blocks), never across
 *                      segments: two adjacent cudaMalloc segments are two;
 *   release_cached_blocks  when cudaMalloc would go past capacity, every
 *                      segment with no block in use is returned and the
 *                      request retried (alloc_malloc then free_cached);
 *                      beyond that the request is out of memory.
 * Allocated counts blocks handed out (their rounded, possibly unsplit
 * sizes), reserved the segments held, as torch's stats do.
 * What it cannot see: only the requests it is given. The order of a real
 * run's tensors, the autograd engine's temporaries, cross-stream
 * record_stream delays (a block freed on one stream but used by another
 * is cached only once that stream's event completes), max_split_size_mb,
 * garbage_collection_threshold and expandable_segments (not modelled:
 * one virtual segment per stream growing by pages) are not replayed.
 * Cost: O(free blocks) per request (best fit scans the list of cached
 * blocks, not every block ever made), O(blocks of the segment) per free:
 * the few thousand tensors of one iteration replay in well under a
 * millisecond.
 */
#include "train/allocator.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define KMIN_BLOCK 512.0                   /* kMinBlockSize */
#define KSMALL_SIZE (1024.0 * 1024.0)      /* kSmallSize */
#define KSMALL_BUFFER (2.0 * 1024 * 1024)  /* kSmallBuffer */
#define KLARGE_BUFFER (20.0 * 1024 * 1024) /* kLargeBuffer */
#define KMIN_LARGE (10.0 * 1024 * 1024)    /* kMinLargeAlloc */
#define KROUND_LARGE (2.0 * 1024 * 1024)   /* kRoundLarge */

typedef struct block {
    double off, size;
    int seg, used, next; /* next block of the segment by address, -1 at the end */
    int prev;            /* the one before, -1 at the start */
    int fpos;            /* 1 when cached (in its size class), -1 when not */
    int fnext, fprev;    /* its size class's list */
} block;

typedef struct segment {
    double size;
    int small, stream, first, live; /* first block; live: 0 once released */
    int pool;                       /* its (small, stream) pool */
    int nused;                      /* blocks in use */
} segment;

/* The cached blocks of one (pool, stream), by size: the distinct sizes
 * ascending, each with its blocks (a stack: the last cached is handed
 * out first). */
typedef struct sizeclass {
    double size;
    int head; /* its blocks linked by fnext / fprev, the last cached first */
} sizeclass;

typedef struct pool {
    int small, stream;
    sizeclass *c;
    int n, cap;
} pool;

struct cs_allocator {
    double capacity, allocated, reserved, peak_allocated, peak_reserved;
    int oom;
    block *b;
    int nb, capb;
    segment *s;
    int ns, caps;
    pool *p;
    int np, capp;
    int idle; /* live segments with no block in use (release_cached's prey) */
};

cs_allocator *cs_allocator_new(double capacity_bytes)
{
    cs_allocator *a = cs_xmalloc(sizeof *a);
    memset(a, 0, sizeof *a);
    a->capacity = capacity_bytes;
    return a;
}

void cs_allocator_delete(cs_allocator *a)
{
    if (!a) return;
    free(a->b);
    free(a->s);
    for (int i = 0; i < a->np; i++) free(a->p[i].c);
    free(a->p);
    free(a);
}

static int new_block(cs_allocator *a, int seg, double off, double size, int prev, int next)
{
    if (a->nb == a->capb) {
        a->capb = a->capb ? 2 * a->capb : 64;
        a->b = cs_xrealloc(a->b, (size_t)a->capb * sizeof *a->b);
    }
    a->b[a->nb] = (block){.off = off, .size = size, .seg = seg, .used = 0, .next = next, .prev = prev, .fpos = -1,
                            .fnext = -1, .fprev = -1};
    return a->nb++;
}

/* The pool of (small, stream), made when first asked for. */
static int pool_of(cs_allocator *a, int small, int stream)
{
    for (int i = 0; i < a->np; i++)
        if (a->p[i].small == small && a->p[i].stream == stream) return i;
    if (a->np == a->capp) {
        a->capp = a->capp ? 2 * a->capp : 4;
        a->p = cs_xrealloc(a->p, (size_t)a->capp * sizeof *a->p);
    }
    a->p[a->np] = (pool){.small = small, .stream = stream};
    return a->np++;
}

/* first size class of q not below size */
static int lower(const pool *q, double size)
{
    int lo = 0, hi = q->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (q->c[mid].size < size) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void fl_add(cs_allocator *a, int k)
{
    pool *q = &a->p[a->s[a->b[k].seg].pool];
    double size = a->b[k].size;
    int at = lower(q, size);
    if (at == q->n || q->c[at].size != size) { /* a new class */
        if (q->n == q->cap) {
            q->cap = q->cap ? 2 * q->cap : 16;
            q->c = cs_xrealloc(q->c, (size_t)q->cap * sizeof *q->c);
        }
        memmove(q->c + at + 1, q->c + at, (size_t)(q->n - at) * sizeof *q->c);
        q->c[at] = (sizeclass){.size = size, .head = -1};
        q->n++;
    }
    sizeclass *c = &q->c[at];
    block *x = &a->b[k];
    x->fprev = -1;
    x->fnext = c->head;
    if (c->head >= 0) a->b[c->head].fprev = k;
    c->head = k;
    x->fpos = 1;
}

/* k out of class `at` of pool q */
static void fl_remove_at(cs_allocator *a, pool *q, int at, int k)
{
    block *x = &a->b[k];
    sizeclass *c = &q->c[at];
    if (x->fprev >= 0) a->b[x->fprev].fnext = x->fnext;
    else c->head = x->fnext;
    if (x->fnext >= 0) a->b[x->fnext].fprev = x->fprev;
    x->fpos = -1;
    if (c->head < 0) { /* drop the empty class */
        memmove(q->c + at, q->c + at + 1, (size_t)(q->n - at - 1) * sizeof *q->c);
        q->n--;
    }
}

static void fl_remove(cs_allocator *a, int k)
{
    block *x = &a->b[k];
    if (x->fpos < 0) return;
    pool *q = &a->p[a->s[x->seg].pool];
    int at = lower(q, x->size);
    CS_ASSERT(at < q->n && q->c[at].size == x->size);
    fl_remove_at(a, q, at, k);
}

static double round_up(double x, double q) { return q * (double)(long long)((x + q - 1) / q); }

/* torch's round_size */
static double round_size(double bytes) { return bytes < KMIN_BLOCK ? KMIN_BLOCK : round_up(bytes, KMIN_BLOCK); }

/* torch's get_allocation_size */
static double allocation_size(double size)
{
    if (size <= KSMALL_SIZE) return KSMALL_BUFFER;
    if (size < KMIN_LARGE) return KLARGE_BUFFER;
    return round_up(size, KROUND_LARGE);
}

/* smallest free block of (small, stream) >= size, taken out of the cache;
 * of equal sizes the last cached (torch: the lowest address) */
static int best_fit(cs_allocator *a, int small, int stream, double size)
{
    int i = pool_of(a, small, stream); /* may grow a->p */
    pool *q = &a->p[i];
    int at = lower(q, size);
    if (at == q->n) return -1;
    int k = q->c[at].head;
    fl_remove_at(a, q, at, k); /* handed out */
    return k;
}

/* release_cached_blocks: every live segment with nothing in use; O(1)
 * when there is none (idle counts them), else O(segments) */
static void release_cached(cs_allocator *a)
{
    for (int g = 0; g < a->ns && a->idle > 0; g++) {
        segment *s = &a->s[g];
        if (!s->live || s->nused) continue;
        for (int k = s->first; k >= 0; k = a->b[k].next) fl_remove(a, k);
        s->live = 0;
        a->idle--;
        a->reserved -= s->size;
    }
}

static int new_segment(cs_allocator *a, double size, int small, int stream)
{
    if (a->capacity > 0 && !a->oom && a->reserved + size > a->capacity) {
        /* (once out of memory torch has raised: the rest runs unbounded,
         * for the peak it would have needed) */
        release_cached(a);
        if (a->reserved + size > a->capacity) a->oom = 1;
    }
    if (a->ns == a->caps) {
        a->caps = a->caps ? 2 * a->caps : 32;
        a->s = cs_xrealloc(a->s, (size_t)a->caps * sizeof *a->s);
    }
    int g = a->ns++, q = pool_of(a, small, stream);
    a->s[g] = (segment){.size = size, .small = small, .stream = stream, .live = 1, .pool = q};
    a->s[g].first = new_block(a, g, 0, size, -1, -1); /* handed out at once: not cached */
    a->idle++;
    a->reserved += size;
    if (a->reserved > a->peak_reserved) a->peak_reserved = a->reserved;
    return a->s[g].first;
}

int cs_allocator_alloc(cs_allocator *a, double bytes, int stream)
{
    double size = round_size(bytes);
    int small = size <= KSMALL_SIZE;
    int k = best_fit(a, small, stream, size);
    if (k < 0) k = new_segment(a, allocation_size(size), small, stream);
    double rest = a->b[k].size - size;
    if (small ? rest >= KMIN_BLOCK : rest > KSMALL_SIZE) { /* should_split */
        int r = new_block(a, a->b[k].seg, a->b[k].off + size, rest, k, a->b[k].next);
        if (a->b[r].next >= 0) a->b[a->b[r].next].prev = r;
        a->b[k].size = size;
        a->b[k].next = r;
        fl_add(a, r);
    }
    a->b[k].used = 1;
    if (a->s[a->b[k].seg].nused++ == 0) a->idle--;
    a->allocated += a->b[k].size;
    if (a->allocated > a->peak_allocated) a->peak_allocated = a->allocated;
    return k;
}

void cs_allocator_release(cs_allocator *a, int id)
{
    CS_ASSERT(id >= 0 && id < a->nb && a->b[id].used && a->b[id].size > 0);
    block *k = &a->b[id];
    k->used = 0;
    if (--a->s[k->seg].nused == 0) a->idle++;
    a->allocated -= k->size;
    /* try_merge_blocks: with its free neighbours (prev, next) in the segment */
    int i = id;
    if (k->prev >= 0 && !a->b[k->prev].used) i = k->prev;
    fl_remove(a, i);
    for (int n = a->b[i].next; n >= 0 && !a->b[n].used && a->b[n].size > 0; n = a->b[i].next) {
        fl_remove(a, n);
        a->b[i].size += a->b[n].size;
        a->b[i].next = a->b[n].next;
        if (a->b[n].next >= 0) a->b[a->b[n].next].prev = i;
        a->b[n].size = 0; /* unlinked; never free again */
        a->b[n].used = 1;
        a->b[n].fpos = -1;
    }
    fl_add(a, i);
}

double cs_allocator_peak_allocated(const cs_allocator *a) { return a->peak_allocated; }
double cs_allocator_peak_reserved(const cs_allocator *a) { return a->peak_reserved; }
double cs_allocator_allocated(const cs_allocator *a) { return a->allocated; }
double cs_allocator_reserved(const cs_allocator *a) { return a->reserved; }
int cs_allocator_out_of_memory(const cs_allocator *a) { return a->oom; }

double cs_allocator_block_bytes(const cs_allocator *a, int id) { return id >= 0 && id < a->nb ? a->b[id].size : 0; }
