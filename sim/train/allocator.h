/* SPDX-License-Identifier: MIT */
/*
 * allocator.h - PyTorch's CUDA caching allocator replayed over a sequence
 * of tensor allocations and frees: what torch reports as allocated and as
 * reserved (torch.cuda.max_memory_allocated / max_memory_reserved), from
 * the rules of c10/cuda/CUDACachingAllocator.cpp (allocator.c cites each).
 * The caller owns the handle: cs_allocator_new, cs_allocator_free_all.
 */
#ifndef CS_ALLOCATOR_H
#define CS_ALLOCATOR_H

typedef struct cs_allocator cs_allocator;

/* An empty allocator on a device of capacity_bytes (what torch can use;
 * <= 0: unbounded). Caller frees with cs_allocator_delete. */
cs_allocator *cs_allocator_new(double capacity_bytes);
void cs_allocator_delete(cs_allocator *a);

/* Allocates `bytes` on `stream` (blocks are cached per stream, as torch
 * keys its pools' blocks by stream) and returns its id (>= 0) for
 * cs_allocator_release. Never fails: a request that cannot be met within
 * capacity, even after freeing the cached segments, sets the
 * out-of-memory flag and is granted anyway; from then on nothing is
 * released (torch would have raised: the peak is what it would need). */
int cs_allocator_alloc(cs_allocator *a, double bytes, int stream);
/* The bytes allocation id was handed (its rounded size, or the whole
 * block when not split); 0 for id < 0. */
double cs_allocator_block_bytes(const cs_allocator *a, int id);
/* Frees allocation id (back to the cache, not to the device). */
void cs_allocator_release(cs_allocator *a, int id);

/* Peaks and current values, bytes; whether any request went past
 * capacity. */
double cs_allocator_peak_allocated(const cs_allocator *a);
double cs_allocator_peak_reserved(const cs_allocator *a);
double cs_allocator_allocated(const cs_allocator *a);
double cs_allocator_reserved(const cs_allocator *a);
int cs_allocator_out_of_memory(const cs_allocator *a);

#endif
