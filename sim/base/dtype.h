/* SPDX-License-Identifier: MIT */
/*
 * dtype.h - element types of collectives and compute, with their sizes.
 * Names follow nccl-tests' "type" column (float, half, bfloat16, ...) and
 * the short forms users type (fp32, fp16, bf16, fp8).
 */
#ifndef CS_DTYPE_H
#define CS_DTYPE_H

typedef enum cs_dtype {
    CS_DTYPE_FP32,
    CS_DTYPE_TF32, /* compute-only: stored as 4 bytes */
    CS_DTYPE_BF16,
    CS_DTYPE_FP16,
    CS_DTYPE_FP8,
    CS_DTYPE_FP64,
    CS_DTYPE_COUNT
} cs_dtype;

/* Bytes per element. */
int cs_dtype_size(cs_dtype t);
/* Short name: "fp32", "tf32", "bf16", "fp16", "fp8", "fp64". */
const char *cs_dtype_name(cs_dtype t);
/* nccl-tests type column: "float", "half", "bfloat16", "fp8", "double". */
const char *cs_dtype_nccl_name(cs_dtype t);
/* Parses either spelling (case-insensitive); returns 0 or CS_EINVAL. */
int cs_dtype_parse(const char *s, cs_dtype *out);

#endif
