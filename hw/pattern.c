/* SPDX-License-Identifier: MIT */
/*
 * pattern.c - check patterns and reduced-precision conversions (see
 * pattern.h). The fp16 conversion follows IEEE 754 binary16 with
 * subnormals; fp8 E4M3 is encoded by binary search over its 127 ordered
 * positive codes (O(log 127) per element: fine for host-side checks).
 */
#include "pattern.h"

#include <math.h>
#include <string.h>

#include "base/error.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t cs_hw_float_to_bf16(float f)
{
    uint32_t u = bits_of(f);
    if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float cs_hw_bf16_to_float(uint16_t h) { return float_of((uint32_t)h << 16); }

uint16_t cs_hw_float_to_fp16(float f)
{
    uint32_t u = bits_of(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
    if (a < 0x38800000u) { /* below 2^-14: subnormal or zero */
        float m = float_of(a) * 16777216.0f; /* x / 2^-24, exact */
        uint32_t q = (uint32_t)m;
        float rem = m - (float)q;
        if (rem > 0.5f || (rem == 0.5f && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t e = ((a >> 23) - 127 + 15) << 10;
    uint32_t mant = a & 0x7fffffu;
    uint32_t h = e | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

float cs_hw_fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        float v = (float)m / 16777216.0f;
        return sign ? -v : v;
    }
    if (e == 31) return float_of(sign | 0x7f800000u | (m << 13));
    return float_of(sign | ((e - 15 + 127) << 23) | (m << 13));
}

float cs_hw_fp8_to_float(uint8_t b)
{
    int e = (b >> 3) & 0xf, m = b & 7;
    float v;
    if ((b & 0x7f) == 0x7f) return NAN;
    if (e == 0) v = ldexpf((float)m / 8.0f, -6);
    else v = ldexpf(1.0f + (float)m / 8.0f, e - 7);
    return (b & 0x80) ? -v : v;
}

uint8_t cs_hw_float_to_fp8(float f)
{
    if (isnan(f)) return 0x7f;
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f);
    if (a >= 448.0f) return (uint8_t)(sign | 0x7e); /* saturate (NCCL/OCP "satfinite") */
    /* positive codes 0..0x7e are increasing: find the nearest */
    int lo = 0, hi = 0x7e;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (cs_hw_fp8_to_float((uint8_t)mid) <= a) lo = mid;
        else hi = mid;
    }
    float dl = a - cs_hw_fp8_to_float((uint8_t)lo), dh = cs_hw_fp8_to_float((uint8_t)hi) - a;
    int code = dl < dh ? lo : dh < dl ? hi : (lo & 1 ? hi : lo);
    return (uint8_t)(sign | code);
}

double cs_hw_elem_get(const void *buf, cs_dtype t, size_t i)
{
    switch (t) {
    case CS_DTYPE_FP32:
    case CS_DTYPE_TF32: return ((const float *)buf)[i];
    case CS_DTYPE_FP64: return ((const double *)buf)[i];
    case CS_DTYPE_BF16: return cs_hw_bf16_to_float(((const uint16_t *)buf)[i]);
    case CS_DTYPE_FP16: return cs_hw_fp16_to_float(((const uint16_t *)buf)[i]);
    case CS_DTYPE_FP8: return cs_hw_fp8_to_float(((const uint8_t *)buf)[i]);
    default: CS_PANIC("bad dtype %d", (int)t);
    }
}

void cs_hw_elem_set(void *buf, cs_dtype t, size_t i, double v)
{
    switch (t) {
    case CS_DTYPE_FP32:
    case CS_DTYPE_TF32: ((float *)buf)[i] = (float)v; break;
    case CS_DTYPE_FP64: ((double *)buf)[i] = v; break;
    case CS_DTYPE_BF16: ((uint16_t *)buf)[i] = cs_hw_float_to_bf16((float)v); break;
    case CS_DTYPE_FP16: ((uint16_t *)buf)[i] = cs_hw_float_to_fp16((float)v); break;
    case CS_DTYPE_FP8: ((uint8_t *)buf)[i] = cs_hw_float_to_fp8((float)v); break;
    default: CS_PANIC("bad dtype %d", (int)t);
    }
}

/* all_to_all: count per peer, a block for every rank each way */
size_t cs_hw_send_count(cs_op op, size_t count, int nranks)
{
    return op == CS_OP_REDUCE_SCATTER || op == CS_OP_ALL_TO_ALL ? count * (size_t)nranks : count;
}

size_t cs_hw_recv_count(cs_op op, size_t count, int nranks)
{
    return op == CS_OP_ALL_GATHER || op == CS_OP_ALL_TO_ALL ? count * (size_t)nranks : count;
}

double cs_hw_pattern_value(int rank, size_t i)
{
    return (double)(1 + ((size_t)rank * 7 + i * 13) % 5);
}

void cs_hw_pattern_fill(void *send, cs_dtype t, cs_op op, size_t count, int rank, int nranks)
{
    size_t n = cs_hw_send_count(op, count, nranks);
    for (size_t i = 0; i < n; i++) cs_hw_elem_set(send, t, i, cs_hw_pattern_value(rank, i));
}

/* Units in the last place of type t at magnitude v. */
static double ulp(cs_dtype t, double v)
{
    int mant = t == CS_DTYPE_FP64 ? 52 : t == CS_DTYPE_BF16 ? 7 : t == CS_DTYPE_FP16 ? 10
             : t == CS_DTYPE_FP8 ? 3 : 23;
    int e;
    frexp(fabs(v) > 0 ? fabs(v) : 1.0, &e);
    return ldexp(1.0, e - 1 - mant);
}

long long cs_hw_pattern_check(const void *recv, cs_dtype t, cs_op op, size_t count, int rank,
                              int nranks)
{
    long long wrong = 0;
    if (op == CS_OP_REDUCE && rank != 0) return 0;
    size_t n = cs_hw_recv_count(op, count, nranks);
    for (size_t i = 0; i < n; i++) {
        double want = 0;
        int reduced = 0;
        switch (op) {
        case CS_OP_ALL_REDUCE:
        case CS_OP_REDUCE:
            for (int r = 0; r < nranks; r++) want += cs_hw_pattern_value(r, i);
            reduced = 1;
            break;
        case CS_OP_REDUCE_SCATTER:
            for (int r = 0; r < nranks; r++) want += cs_hw_pattern_value(r, (size_t)rank * count + i);
            reduced = 1;
            break;
        case CS_OP_ALL_GATHER: want = cs_hw_pattern_value((int)(i / count), i % count); break;
        case CS_OP_BROADCAST: want = cs_hw_pattern_value(0, i); break;
        case CS_OP_ALL_TO_ALL: /* block p from rank p: its block for this rank */
            want = cs_hw_pattern_value((int)(i / count), (size_t)rank * count + i % count);
            break;
        case CS_OP_SEND_RECV: want = cs_hw_pattern_value((rank + nranks - 1) % nranks, i); break;
        default: CS_PANIC("bad op %d", (int)op);
        }
        double got = cs_hw_elem_get(recv, t, i);
        double tol = reduced ? (nranks > 1 ? nranks - 1 : 0) * ulp(t, want) : 0;
        if (!(fabs(got - want) <= tol)) wrong++;
    }
    return wrong;
}
