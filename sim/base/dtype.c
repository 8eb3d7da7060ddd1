/* SPDX-License-Identifier: MIT */
/*
 * dtype.c - the element-type table (one row per type).
 */
#include "base/dtype.h"

#include <strings.h>

#include "base/error.h"

static const struct {
    const char *name;
    const char *nccl_name;
    int size;
} dtype_table[CS_DTYPE_COUNT] = {
    [CS_DTYPE_FP32] = {"fp32", "float", 4},
    [CS_DTYPE_TF32] = {"tf32", "float", 4},
    [CS_DTYPE_BF16] = {"bf16", "bfloat16", 2},
    [CS_DTYPE_FP16] = {"fp16", "half", 2},
    [CS_DTYPE_FP8] = {"fp8", "fp8", 1},
    [CS_DTYPE_FP64] = {"fp64", "double", 8},
};

int cs_dtype_size(cs_dtype t)
{
    CS_ASSERT(t >= 0 && t < CS_DTYPE_COUNT);
    return dtype_table[t].size;
}

const char *cs_dtype_name(cs_dtype t)
{
    CS_ASSERT(t >= 0 && t < CS_DTYPE_COUNT);
    return dtype_table[t].name;
}

const char *cs_dtype_nccl_name(cs_dtype t)
{
    CS_ASSERT(t >= 0 && t < CS_DTYPE_COUNT);
    return dtype_table[t].nccl_name;
}

int cs_dtype_parse(const char *s, cs_dtype *out)
{
    for (int i = 0; i < CS_DTYPE_COUNT; i++) {
        if (!strcasecmp(s, dtype_table[i].name) ||
            (i != CS_DTYPE_TF32 && !strcasecmp(s, dtype_table[i].nccl_name))) {
            *out = (cs_dtype)i;
            return 0;
        }
    }
    return CS_EINVAL;
}
