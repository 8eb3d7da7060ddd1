/* SPDX-License-Identifier: MIT */
/*
 * allocator.c - the CUDA caching allocator's rules (allocator.h), from
 * c10/cuda/CUDACachingAllocator.cpp (torch 2.x; unchanged in substance
 * since 1.13):
 *   round_size         requests round up to kMinBlockSize = 512 bytes;
 *   pools              <= kSmallSize (1 MiB) from the small pool, larger
 *                      from the large pool; blocks are found per (pool,
 *                      stream): get_free_block takes the smallest cached
 *                      block >= the request (best fit, lowest address on
 *                      ties: BlockComparatorSize);
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
 * Cost: O(blocks) per request (a list scan), enough for the few thousand
 * tensors of one iteration.
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
} block;

typedef struct segment {
    double size;
    int small, stream, first, live; /* first block; live: 0 once released */
} segment;

struct cs_allocator {
    double capacity, allocated, reserved, peak_allocated, peak_reserved;
    int oom;
    block *b;
    int nb, capb;
    segment *s;
    int ns, caps;
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
    free(a);
}

static int new_block(cs_allocator *a, int seg, double off, double size, int next)
{
    if (a->nb == a->capb) {
        a->capb = a->capb ? 2 * a->capb : 64;
        a->b = cs_xrealloc(a->b, (size_t)a->capb * sizeof *a->b);
    }
    a->b[a->nb] = (block){.off = off, .size = size, .seg = seg, .used = 0, .next = next};
    return a->nb++;
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

/* smallest free block of (small, stream) >= size; lowest id on ties */
static int best_fit(const cs_allocator *a, int small, int stream, double size)
{
    int best = -1;
    for (int i = 0; i < a->nb; i++) {
        const block *k = &a->b[i];
        const segment *g = &a->s[k->seg];
        if (k->used || !g->live || g->small != small || g->stream != stream || k->size < size) continue;
        if (best < 0 || k->size < a->b[best].size) best = i;
    }
    return best;
}

/* release_cached_blocks: every live segment with nothing in use */
static void release_cached(cs_allocator *a)
{
    for (int g = 0; g < a->ns; g++) {
        segment *s = &a->s[g];
        if (!s->live) continue;
        int busy = 0;
        for (int k = s->first; k >= 0; k = a->b[k].next) busy |= a->b[k].used;
        if (!busy) {
            s->live = 0;
            a->reserved -= s->size;
        }
    }
}

static int new_segment(cs_allocator *a, double size, int small, int stream)
{
    if (a->capacity > 0 && a->reserved + size > a->capacity) {
        release_cached(a);
        if (a->reserved + size > a->capacity) a->oom = 1;
    }
    if (a->ns == a->caps) {
        a->caps = a->caps ? 2 * a->caps : 32;
        a->s = cs_xrealloc(a->s, (size_t)a->caps * sizeof *a->s);
    }
    int g = a->ns++;
    a->s[g] = (segment){.size = size, .small = small, .stream = stream, .live = 1};
    a->s[g].first = new_block(a, g, 0, size, -1);
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
        int r = new_block(a, a->b[k].seg, a->b[k].off + size, rest, a->b[k].next);
        a->b[k].size = size;
        a->b[k].next = r;
    }
    a->b[k].used = 1;
    a->allocated += a->b[k].size;
    if (a->allocated > a->peak_allocated) a->peak_allocated = a->allocated;
    return k;
}

void cs_allocator_release(cs_allocator *a, int id)
{
    CS_ASSERT(id >= 0 && id < a->nb && a->b[id].used && a->b[id].size > 0);
    block *k = &a->b[id];
    k->used = 0;
    a->allocated -= k->size;
    /* try_merge_blocks: with the free neighbours of its segment */
    segment *g = &a->s[k->seg];
    for (int i = g->first; i >= 0; i = a->b[i].next) {
        int n = a->b[i].next;
        while (!a->b[i].used && n >= 0 && !a->b[n].used) {
            a->b[i].size += a->b[n].size;
            a->b[i].next = a->b[n].next;
            a->b[n].size = 0; /* unlinked; never free again */
            a->b[n].used = 1;
            a->b[n].seg = k->seg;
            n = a->b[i].next;
        }
    }
}

double cs_allocator_peak_allocated(const cs_allocator *a) { return a->peak_allocated; }
double cs_allocator_peak_reserved(const cs_allocator *a) { return a->peak_reserved; }
double cs_allocator_allocated(const cs_allocator *a) { return a->allocated; }
double cs_allocator_reserved(const cs_allocator *a) { return a->reserved; }
int cs_allocator_out_of_memory(const cs_allocator *a) { return a->oom; }
