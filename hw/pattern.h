/* SPDX-License-Identifier: MIT */
/*
 * pattern.h - the data collsim-hw puts in collective buffers and how it
 * checks the results, like nccl-tests -c: every rank fills its send buffer
 * with rank-dependent values, and after the collective each rank compares
 * its receive buffer with what the operation must produce.
 *
 * Element i of rank r's send buffer holds 1 + (7r + 13i) mod 5 (small
 * integers, exactly representable in every type, sums exact in fp32,
 * bf16 up to 51 ranks, fp16 up to 409). Reduced results are accepted within
 * (n - 1) units in the last place of the type at the expected value, which
 * covers the rounding of intermediate sums in 16- and 8-bit types (as
 * nccl-tests' per-type tolerance does). Broadcast uses root 0 and reduce
 * checks root 0 only.
 *
 * Also here: host conversions between float and the 16/8-bit types
 * (round to nearest even), used to fill buffers and by the MPI backend's
 * summation operators for types MPI lacks. fp8 is OCP E4M3 (bias 7, max
 * 448, no infinities), as NCCL's ncclFloat8e4m3.
 */
#ifndef CS_HW_PATTERN_H
#define CS_HW_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "coll/collective.h"
#include "base/dtype.h"

uint16_t cs_hw_float_to_bf16(float f);
float cs_hw_bf16_to_float(uint16_t h);
uint16_t cs_hw_float_to_fp16(float f);
float cs_hw_fp16_to_float(uint16_t h);
uint8_t cs_hw_float_to_fp8(float f);
float cs_hw_fp8_to_float(uint8_t b);

/* Element i of a buffer of type t, as a double / stored from a double. */
double cs_hw_elem_get(const void *buf, cs_dtype t, size_t i);
void cs_hw_elem_set(void *buf, cs_dtype t, size_t i, double v);

/* Elements in the send / receive buffer of op for a per-rank count on
 * nranks ranks (nccl-tests convention). */
size_t cs_hw_send_count(cs_op op, size_t count, int nranks);
size_t cs_hw_recv_count(cs_op op, size_t count, int nranks);

/* The value rank r contributes at send-buffer element i. */
double cs_hw_pattern_value(int rank, size_t i);
/* Fills rank's send buffer (cs_hw_send_count elements). */
void cs_hw_pattern_fill(void *send, cs_dtype t, cs_op op, size_t count, int rank, int nranks);
/* Wrong elements in rank's receive buffer after op. */
long long cs_hw_pattern_check(const void *recv, cs_dtype t, cs_op op, size_t count, int rank,
                              int nranks);

#endif
