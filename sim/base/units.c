/* SPDX-License-Identifier: MIT */
/*
 * units.c - parsing and formatting of sizes, rates and times.
 *
 * A value is a number followed by an optional unit, with optional blanks
 * before, between and after. The number grammar is deliberately narrower
 * than strtod's: [+] digits [. digits] [e|E [+|-] digits] (a leading "."
 * is allowed), so "0x10", "inf", "nan" and "1,5" are rejected with a
 * message rather than half-parsed. Conventions follow units.h:
 *   - sizes: "iB" after a prefix is binary (GiB = 2^30), "B" after it is
 *     decimal (GB = 1e9), as in the SI/IEC convention and in rates; a bare
 *     prefix letter (8G, 4K) is binary, as nccl-tests -b/-e read it;
 *   - rates in bits ("Gbps", "Gb/s") and bytes ("GB/s", "GBps") are
 *     decimal, "GiB/s" is binary; a bare number is bytes per second;
 *   - times take ns, us (also the micro sign), ms and s; a bare number
 *     is seconds.
 * The numeric part is converted with strtod after it has been validated,
 * so the result depends on the C locale's decimal point (the library never
 * calls setlocale; a program that does must keep LC_NUMERIC as "C").
 * No state: everything lives in caller buffers.
 */
#include "base/units.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* What each parser promises, repeated in every error message. */
#define EXPECT_SIZE   "a size such as 8, 4K, 25MiB, 8G or 80GB"
#define EXPECT_RATE   "a rate such as 400Gbps, 50GB/s or 25GiB/s"
#define EXPECT_TIME   "a time such as 500ns, 3us, 1.5ms or 2s"
#define EXPECT_NUMBER "a non-negative number such as 0.5 or 13e9"

/* A number split from its unit; unit points into the input, blanks trimmed. */
typedef struct parsed {
    double value;
    const char *unit; /* may be "" */
    size_t unit_len;
} parsed;

static int fail(char *err, size_t errlen, const char *expect, const char *s, const char *why)
{
    if (err && errlen) snprintf(err, errlen, "expected %s, got '%s' (%s)", expect, s ? s : "", why);
    return CS_EINVAL;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Splits s into a validated non-negative finite number and a unit. */
static int split(const char *s, parsed *out, char *err, size_t errlen, const char *expect)
{
    if (!s) return fail(err, errlen, expect, "", "no value");
    const char *p = s;
    while (is_blank(*p)) p++;
    if (!*p) return fail(err, errlen, expect, s, "empty");
    if (*p == '-') return fail(err, errlen, expect, s, "negative values are not allowed");
    const char *num = p;
    if (*p == '+') p++;
    size_t int_digits = 0, frac_digits = 0;
    while (isdigit((unsigned char)*p)) p++, int_digits++;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) p++, frac_digits++;
    }
    if (int_digits + frac_digits == 0) {
        if (!strncmp(p, "inf", 3) || !strncmp(p, "INF", 3) || !strncmp(p, "Inf", 3) ||
            !strncmp(p, "nan", 3) || !strncmp(p, "NaN", 3) || !strncmp(p, "NAN", 3))
            return fail(err, errlen, expect, s, "infinities and NaN are not allowed");
        return fail(err, errlen, expect, s, "not a number");
    }
    /* An exponent only if digits follow, so "8e" is a (bad) unit, not a number. */
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-') q++;
        if (isdigit((unsigned char)*q)) {
            while (isdigit((unsigned char)*q)) q++;
            p = q;
        }
    }
    size_t nlen = (size_t)(p - num);
    char buf[128];
    if (nlen >= sizeof buf) return fail(err, errlen, expect, s, "number too long");
    memcpy(buf, num, nlen);
    buf[nlen] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    if (!isfinite(v) || (errno == ERANGE && v != 0.0))
        return fail(err, errlen, expect, s, "number out of range");
    while (is_blank(*p)) p++;
    const char *unit = p;
    const char *end = unit + strlen(unit);
    while (end > unit && is_blank(end[-1])) end--;
    out->value = v;
    out->unit = unit;
    out->unit_len = (size_t)(end - unit);
    return 0;
}

static int unit_is(const parsed *u, const char *text)
{
    return u->unit_len == strlen(text) && !memcmp(u->unit, text, u->unit_len);
}

/* Multiplier of a decimal/binary prefix letter, or 0 if c is not one. */
static double prefix_mult(char c, int binary)
{
    switch (c) {
    case 'k':
    case 'K':
        return binary ? 1024.0 : 1e3;
    case 'm':
    case 'M':
        return binary ? 1048576.0 : 1e6;
    case 'g':
    case 'G':
        return binary ? 1073741824.0 : 1e9;
    case 't':
    case 'T':
        return binary ? 1099511627776.0 : 1e12;
    default:
        return 0.0;
    }
}

static int bad_unit(const parsed *u, char *err, size_t errlen, const char *expect, const char *s)
{
    char why[96];
    snprintf(why, sizeof why, "unknown unit '%.*s'", (int)(u->unit_len > 40 ? 40 : u->unit_len),
             u->unit);
    return fail(err, errlen, expect, s, why);
}

int cs_units_parse_size(const char *s, double *bytes, char *err, size_t errlen)
{
    parsed u;
    int rc = split(s, &u, err, errlen, EXPECT_SIZE);
    if (rc) return rc;
    /* "", "B"; a prefix alone or with "iB": binary; with "B": decimal. */
    double mult = 0.0;
    if (u.unit_len == 0 || unit_is(&u, "B")) {
        mult = 1.0;
    } else if (prefix_mult(u.unit[0], 1) > 0.0) {
        const char *rest = u.unit + 1;
        size_t rlen = u.unit_len - 1;
        if (rlen == 0 || (rlen == 2 && rest[0] == 'i' && rest[1] == 'B'))
            mult = prefix_mult(u.unit[0], 1);
        else if (rlen == 1 && rest[0] == 'B')
            mult = prefix_mult(u.unit[0], 0);
    }
    if (mult == 0.0) return bad_unit(&u, err, errlen, EXPECT_SIZE, s);
    double v = u.value * mult;
    if (!isfinite(v)) return fail(err, errlen, EXPECT_SIZE, s, "number out of range");
    *bytes = v;
    return 0;
}

int cs_units_parse_rate(const char *s, double *bytes_per_s, char *err, size_t errlen)
{
    parsed u;
    int rc = split(s, &u, err, errlen, EXPECT_RATE);
    if (rc) return rc;
    double v = u.value;
    if (u.unit_len > 0) {
        /* [prefix [i]] (b|B) ("/s"|"ps") */
        const char *p = u.unit, *end = u.unit + u.unit_len;
        double mult = 1.0;
        int binary = 0;
        if (p < end && prefix_mult(*p, 0) > 0.0) {
            char pre = *p++;
            if (p < end && *p == 'i') binary = 1, p++;
            mult = prefix_mult(pre, binary);
        }
        int bits = -1;
        if (p < end && *p == 'b')
            bits = 1, p++;
        else if (p < end && *p == 'B')
            bits = 0, p++;
        size_t left = (size_t)(end - p);
        int per_s = left == 2 && ((p[0] == '/' && p[1] == 's') || (p[0] == 'p' && p[1] == 's'));
        if (bits < 0 || !per_s) return bad_unit(&u, err, errlen, EXPECT_RATE, s);
        v *= mult;
        if (bits) v /= 8.0;
    }
    if (!isfinite(v)) return fail(err, errlen, EXPECT_RATE, s, "number out of range");
    *bytes_per_s = v;
    return 0;
}

int cs_units_parse_time(const char *s, double *seconds, char *err, size_t errlen)
{
    parsed u;
    int rc = split(s, &u, err, errlen, EXPECT_TIME);
    if (rc) return rc;
    /* Divide rather than multiply by 1e-9 etc.: 500ns gives exactly the
     * double nearest 5e-7. */
    double div;
    if (u.unit_len == 0 || unit_is(&u, "s"))
        div = 1.0;
    else if (unit_is(&u, "ms"))
        div = 1e3;
    else if (unit_is(&u, "us") || unit_is(&u, "\xc2\xb5s") /* MICRO SIGN */ ||
             unit_is(&u, "\xce\xbcs") /* GREEK SMALL LETTER MU */)
        div = 1e6;
    else if (unit_is(&u, "ns"))
        div = 1e9;
    else
        return bad_unit(&u, err, errlen, EXPECT_TIME, s);
    *seconds = u.value / div;
    return 0;
}

int cs_units_parse_number(const char *s, double *v, char *err, size_t errlen)
{
    parsed u;
    int rc = split(s, &u, err, errlen, EXPECT_NUMBER);
    if (rc) return rc;
    if (u.unit_len) return fail(err, errlen, EXPECT_NUMBER, s, "trailing characters");
    *v = u.value;
    return 0;
}

const char *cs_units_help(void)
{
    return "Units: sizes 25MiB, 8GiB are binary (2^20, 2^30), 25MB, 80GB decimal (1e6, 1e9);\n"
           "a bare prefix (4K, 8G) is binary, as nccl-tests -b/-e. Rates 400Gbps (bits),\n"
           "50GB/s (decimal), 25GiB/s (binary). Times 500ns, 3us, 1.5ms, 2s. Outputs print\n"
           "binary sizes as GiB/MiB and bandwidths as GB/s (1e9 B/s, as nccl-tests).\n";
}

int cs_units_parse_int(const char *s, size_t len, long long lo, long long hi, long long *v)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == len) return CS_EINVAL;
    /* accumulate as a negative number: its range holds LLONG_MIN */
    long long x = 0;
    int over = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return CS_EINVAL;
        int dig = s[i] - '0';
        if (x < (LLONG_MIN + dig) / 10) over = 1;
        else x = x * 10 - dig;
    }
    if (!neg && !over && x == LLONG_MIN) over = 1;
    if (over) return CS_ERANGE;
    if (!neg) x = -x;
    if (x < lo || x > hi) return CS_ERANGE;
    *v = x;
    return 0;
}

/* Prints x in the largest unit it reaches (after rounding to 2 decimals). */
static void format_scaled(double x, const double *scale, const char *const *name, int n, char *buf,
                          size_t len)
{
    if (!isfinite(x)) {
        snprintf(buf, len, "%g", x);
        return;
    }
    double a = fabs(x);
    int i = 0;
    /* Move up while the value would print as >= one of the next unit
     * (so 1023.999 KiB prints "1.00 MiB", not "1024.00 KiB"). */
    while (i + 1 < n && a / scale[i] >= scale[i + 1] / scale[i] - 0.005) i++;
    snprintf(buf, len, "%.2f %s", x / scale[i], name[i]);
}

void cs_units_format_size(double bytes, char *buf, size_t len)
{
    static const double scale[] = {1.0,          1024.0,          1048576.0,
                                   1073741824.0, 1099511627776.0, 1125899906842624.0};
    static const char *const name[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (isfinite(bytes) && fabs(bytes) < 1024.0 && bytes == floor(bytes)) {
        snprintf(buf, len, "%.0f B", bytes);
        return;
    }
    format_scaled(bytes, scale, name, 6, buf, len);
}

void cs_units_format_time(double seconds, char *buf, size_t len)
{
    static const double scale[] = {1e-9, 1e-6, 1e-3, 1.0};
    static const char *const name[] = {"ns", "us", "ms", "s"};
    if (seconds == 0.0) {
        snprintf(buf, len, "0 s");
        return;
    }
    format_scaled(seconds, scale, name, 4, buf, len);
}
