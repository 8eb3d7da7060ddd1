/* SPDX-License-Identifier: MIT */
/*
 * memreplay.h - one rank's allocation timeline of a training iteration
 * (the tensors autograd saves per op and block, FSDP's gathered and
 * reduced buffers as FSDP1 and FSDP2 allocate and free them, gradients,
 * optimizer states, the loss's buffers, the checkpoint policy's
 * recompute, the optimizer step's intermediates), replayed through the
 * caching allocator (allocator.h): the peak allocated and the peak
 * reserved bytes torch would report. memreplay.c cites each source.
 */
#ifndef CS_MEMREPLAY_H
#define CS_MEMREPLAY_H

#include "train/layout.h"
#include "train/memory.h"
#include "train/model.h"
#include "train/training.h"

typedef struct cs_memreplay {
    double peak_allocated_bytes; /* torch.cuda.max_memory_allocated */
    double peak_reserved_bytes;  /* torch.cuda.max_memory_reserved */
    int out_of_memory;           /* a request went past the capacity given */
    char peak_phase[64];         /* where reserved last grew, e.g. "backward, layer 3" */
} cs_memreplay;

/* Replays two iterations (the second sees the first's cache, as a real
 * run's steady state does) of m (the whole model; tensor parallelism is
 * applied inside) under t on layout l, whose analytic lines mem (memory.c,
 * not model_states_only) give the state sizes, against capacity_bytes
 * (what torch can use; <= 0: unbounded). O(layers x ops) allocator calls,
 * each O(cached blocks). */
void cs_memreplay_run(const cs_model *m, const cs_training *t, const cs_layout *l,
                      const cs_memory *mem, double capacity_bytes, cs_memreplay *out);

#endif
