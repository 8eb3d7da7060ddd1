/* SPDX-License-Identifier: MIT */
/*
 * test-units.c - sizes (binary, as nccl-tests), rates (bits and bytes,
 * decimal; GiB/s binary), times, plain numbers, rejections and formatting.
 */
#include <check.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/units.h"
#include "testutil.h"


typedef int (*parse_fn)(const char *, double *, char *, size_t);

static void expect_value(parse_fn fn, const char *s, double want, int line)
{
    double v = -1.0;
    char err[256] = "";
    int rc = fn(s, &v, err, sizeof err);
    ck_assert_msg(rc == 0, "line %d: '%s' rejected: %s", line, s, err);
    ck_assert_msg(v == want ||
                      (want != 0 && (v - want) / want < 1e-15 && (want - v) / want < 1e-15),
                  "line %d: '%s' gave %.17g, want %.17g", line, s, v, want);
}

static void expect_reject(parse_fn fn, const char *s, const char *expect_text, int line)
{
    double v = 12345.0;
    char err[256] = "";
    int rc = fn(s, &v, err, sizeof err);
    ck_assert_msg(rc == CS_EINVAL, "line %d: '%s' accepted as %g", line, s ? s : "(null)", v);
    ck_assert_msg(strstr(err, expect_text) != NULL, "line %d: '%s': message '%s' lacks '%s'", line,
                  s ? s : "(null)", err, expect_text);
    ck_assert_msg(v == 12345.0, "line %d: output written on error", line);
}

#define OK(fn, s, want)  expect_value(fn, s, want, __LINE__)
#define BAD(fn, s, text) expect_reject(fn, s, text, __LINE__)

#define SIZE_EXPECT "expected a size such as 8, 4K, 25MiB, 8G or 80GB"
#define RATE_EXPECT "expected a rate such as 400Gbps, 50GB/s or 25GiB/s"
#define TIME_EXPECT "expected a time such as 500ns, 3us, 1.5ms or 2s"

START_TEST(size_forms)
{
    OK(cs_units_parse_size, "8", 8);
    OK(cs_units_parse_size, "0", 0);
    OK(cs_units_parse_size, "8B", 8);
    OK(cs_units_parse_size, "4K", 4 * KiB);
    OK(cs_units_parse_size, "4k", 4 * KiB);
    OK(cs_units_parse_size, "4KiB", 4 * KiB);
    OK(cs_units_parse_size, "4KB", 4e3); /* decimal: B after the prefix */
    OK(cs_units_parse_size, "4kB", 4e3);
    OK(cs_units_parse_size, "25MiB", 25 * MiB);
    OK(cs_units_parse_size, "25M", 25 * MiB);
    OK(cs_units_parse_size, "25MB", 25e6);
    OK(cs_units_parse_size, "8G", 8 * GiB);
    OK(cs_units_parse_size, "8GiB", 8 * GiB);
    OK(cs_units_parse_size, "8GB", 8e9); /* decimal, as 8GB/s is */
    OK(cs_units_parse_size, "80GB", 80e9);
    OK(cs_units_parse_size, "1TB", 1e12);
    OK(cs_units_parse_size, "1T", TiB);
    OK(cs_units_parse_size, "2TiB", 2 * TiB);
    OK(cs_units_parse_size, "1.5GiB", 1.5 * GiB);
    OK(cs_units_parse_size, ".5K", 512);
    OK(cs_units_parse_size, "+3", 3);
}
END_TEST

START_TEST(size_decimal_via_exponent)
{
    OK(cs_units_parse_size, "141e9", 141e9);
    OK(cs_units_parse_size, "25e6", 25e6);
    OK(cs_units_parse_size, "1E3", 1000);
    OK(cs_units_parse_size, "1e3K", 1000 * KiB);
    OK(cs_units_parse_size, "  42  ", 42);
    OK(cs_units_parse_size, "\t8 GiB\n", 8 * GiB);
}
END_TEST

START_TEST(size_rejects)
{
    BAD(cs_units_parse_size, "", "(empty)");
    BAD(cs_units_parse_size, "   ", "(empty)");
    BAD(cs_units_parse_size, NULL, SIZE_EXPECT);
    BAD(cs_units_parse_size, "-1", "negative");
    BAD(cs_units_parse_size, "-4K", "negative");
    BAD(cs_units_parse_size, "abc", "not a number");
    BAD(cs_units_parse_size, "8Gib", "unknown unit 'Gib'");
    BAD(cs_units_parse_size, "8Gb", "unknown unit 'Gb'");
    BAD(cs_units_parse_size, "4KK", "unknown unit");
    BAD(cs_units_parse_size, "4K junk", "unknown unit");
    BAD(cs_units_parse_size, "8e", "unknown unit 'e'");
    BAD(cs_units_parse_size, "0x10", SIZE_EXPECT);
    BAD(cs_units_parse_size, "nan", "NaN");
    BAD(cs_units_parse_size, "inf", "infinities");
    BAD(cs_units_parse_size, "1e999", "out of range");
    BAD(cs_units_parse_size, "1,5K", SIZE_EXPECT);
    BAD(cs_units_parse_size, "1.2.3", SIZE_EXPECT);
    BAD(cs_units_parse_size, "8GB/s", "unknown unit");
    /* Every rejection says what was expected and what was given. */
    BAD(cs_units_parse_size, "12 parsecs", "got '12 parsecs'");
}
END_TEST

START_TEST(size_err_may_be_null)
{
    double v;
    ck_assert_int_eq(cs_units_parse_size("bad", &v, NULL, 0), CS_EINVAL);
    char tiny[4];
    ck_assert_int_eq(cs_units_parse_size("bad", &v, tiny, sizeof tiny), CS_EINVAL);
    ck_assert_int_eq((int)strlen(tiny), 3);
}
END_TEST

START_TEST(rate_forms)
{
    /* bits, decimal */
    OK(cs_units_parse_rate, "400Gbps", 50e9);
    OK(cs_units_parse_rate, "400Gb/s", 50e9);
    OK(cs_units_parse_rate, "200Gbps", 25e9);
    OK(cs_units_parse_rate, "100Mbps", 12.5e6);
    OK(cs_units_parse_rate, "100Mb/s", 12.5e6);
    OK(cs_units_parse_rate, "1Tbps", 125e9);
    OK(cs_units_parse_rate, "8bps", 1);
    OK(cs_units_parse_rate, "8kbps", 1000);
    /* bytes, decimal (nccl-tests busbw GB/s) */
    OK(cs_units_parse_rate, "50GB/s", 50e9);
    OK(cs_units_parse_rate, "50GBps", 50e9);
    OK(cs_units_parse_rate, "450GB/s", 450e9);
    OK(cs_units_parse_rate, "3.35TB/s", 3.35e12);
    OK(cs_units_parse_rate, "100MB/s", 100e6);
    OK(cs_units_parse_rate, "10KB/s", 10e3);
    OK(cs_units_parse_rate, "1B/s", 1);
    OK(cs_units_parse_rate, "31.5GB/s", 31.5e9);
    /* bytes, binary */
    OK(cs_units_parse_rate, "50GiB/s", 50 * GiB);
    OK(cs_units_parse_rate, "2MiB/s", 2 * MiB);
    OK(cs_units_parse_rate, "1TiB/s", TiB);
    /* plain numbers are bytes per second */
    OK(cs_units_parse_rate, "100", 100);
    OK(cs_units_parse_rate, "25e9", 25e9);
    OK(cs_units_parse_rate, " 50 GB/s ", 50e9);
}
END_TEST

START_TEST(rate_bits_differ_from_bytes)
{
    double bits, bytes;
    ck_assert_int_eq(cs_units_parse_rate("400Gbps", &bits, NULL, 0), 0);
    ck_assert_int_eq(cs_units_parse_rate("400GBps", &bytes, NULL, 0), 0);
    ck_assert_double_eq_tol(bytes / bits, 8.0, 1e-12);
    double gib, gb;
    ck_assert_int_eq(cs_units_parse_rate("1GiB/s", &gib, NULL, 0), 0);
    ck_assert_int_eq(cs_units_parse_rate("1GB/s", &gb, NULL, 0), 0);
    ck_assert_double_eq_tol(gib / gb, 1.073741824, 1e-12);
}
END_TEST

START_TEST(rate_rejects)
{
    BAD(cs_units_parse_rate, "", RATE_EXPECT);
    BAD(cs_units_parse_rate, "5G", "unknown unit 'G'");
    BAD(cs_units_parse_rate, "5GB", "unknown unit 'GB'");
    BAD(cs_units_parse_rate, "5 Gbit/s", "unknown unit");
    BAD(cs_units_parse_rate, "50GB/h", "unknown unit");
    BAD(cs_units_parse_rate, "GB/s", "not a number");
    BAD(cs_units_parse_rate, "-5GB/s", "negative");
    BAD(cs_units_parse_rate, "iB/s", "not a number");
    BAD(cs_units_parse_rate, "5iB/s", "unknown unit");
    BAD(cs_units_parse_rate, "NaN", "NaN");
    BAD(cs_units_parse_rate, "1e308TB/s", "out of range");
}
END_TEST

START_TEST(time_forms)
{
    OK(cs_units_parse_time, "500ns", 5e-7);
    OK(cs_units_parse_time, "3us", 3e-6);
    OK(cs_units_parse_time, "3\xc2\xb5s", 3e-6); /* U+00B5 MICRO SIGN */
    OK(cs_units_parse_time, "3\xce\xbcs", 3e-6); /* U+03BC GREEK MU */
    OK(cs_units_parse_time, "1.5ms", 1.5e-3);
    OK(cs_units_parse_time, "2s", 2);
    OK(cs_units_parse_time, "2", 2);
    OK(cs_units_parse_time, "0", 0);
    OK(cs_units_parse_time, "0ns", 0);
    OK(cs_units_parse_time, "6.6us", 6.6e-6);
    OK(cs_units_parse_time, " 1 us ", 1e-6);
}
END_TEST

START_TEST(time_rejects)
{
    BAD(cs_units_parse_time, "1h", "unknown unit 'h'");
    BAD(cs_units_parse_time, "1 sec", "unknown unit 'sec'");
    BAD(cs_units_parse_time, "1US", "unknown unit");
    BAD(cs_units_parse_time, "-1us", "negative");
    BAD(cs_units_parse_time, "us", "not a number");
    BAD(cs_units_parse_time, "", TIME_EXPECT);
    BAD(cs_units_parse_time, "inf", TIME_EXPECT);
}
END_TEST

START_TEST(number_forms_and_rejects)
{
    OK(cs_units_parse_number, "0.5", 0.5);
    OK(cs_units_parse_number, "13e9", 13e9);
    OK(cs_units_parse_number, "1E-3", 1e-3);
    OK(cs_units_parse_number, "+2", 2);
    OK(cs_units_parse_number, " 7 ", 7);
    BAD(cs_units_parse_number, "1K", "trailing characters");
    BAD(cs_units_parse_number, "-1", "negative");
    BAD(cs_units_parse_number, "", "expected a non-negative number");
    BAD(cs_units_parse_number, "nan", "NaN");
    BAD(cs_units_parse_number, "1e", "trailing");
}
END_TEST

/* Range-checked integers: overflow is refused, never wrapped. */
static int pint(const char *s, long long lo, long long hi, long long *v)
{
    return cs_units_parse_int(s, strlen(s), lo, hi, v);
}

START_TEST(int_forms_ranges_and_overflow)
{
    long long v = 7;
    ck_assert_int_eq(pint("0", 0, 10, &v), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(pint("-12", -20, 10, &v), 0);
    ck_assert_int_eq(v, -12);
    ck_assert_int_eq(pint("+3", 0, 10, &v), 0);
    ck_assert_int_eq(v, 3);
    ck_assert_int_eq(pint("9223372036854775807", LLONG_MIN, LLONG_MAX, &v), 0);
    ck_assert(v == LLONG_MAX);
    ck_assert_int_eq(pint("-9223372036854775808", LLONG_MIN, LLONG_MAX, &v), 0);
    ck_assert(v == LLONG_MIN);
    v = 7;
    ck_assert_int_eq(pint("9223372036854775808", LLONG_MIN, LLONG_MAX, &v), CS_ERANGE);
    ck_assert_int_eq(pint("4294967296", 0, 1 << 24, &v), CS_ERANGE);
    ck_assert_int_eq(pint("2147483647", 0, 1 << 24, &v), CS_ERANGE);
    ck_assert_int_eq(pint("99999999999999999999999999999", 0, 10, &v), CS_ERANGE);
    ck_assert_int_eq(pint("11", 0, 10, &v), CS_ERANGE);
    ck_assert_int_eq(pint("-1", 0, 10, &v), CS_ERANGE);
    ck_assert_int_eq(v, 7);
    static const char *const bad[] = {"", "-", "+", "1K", "1e3", "0x10", " 1", "1 ", "1.0", "--1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(pint(bad[i], 0, 1000, &v) == CS_EINVAL, "'%s' accepted", bad[i]);
    ck_assert_int_eq(cs_units_parse_int("12x", 2, 0, 100, &v), 0); /* only len bytes */
    ck_assert_int_eq(v, 12);
}
END_TEST

static void expect_format(void (*fn)(double, char *, size_t), double x, const char *want, int line)
{
    char buf[64];
    fn(x, buf, sizeof buf);
    ck_assert_msg(!strcmp(buf, want), "line %d: %.17g formatted as '%s', want '%s'", line, x, buf,
                  want);
}
#define FMT(fn, x, want) expect_format(fn, x, want, __LINE__)

START_TEST(format_size)
{
    FMT(cs_units_format_size, 0, "0 B");
    FMT(cs_units_format_size, 512, "512 B");
    FMT(cs_units_format_size, 1023, "1023 B");
    FMT(cs_units_format_size, 1024, "1.00 KiB");
    FMT(cs_units_format_size, 1536, "1.50 KiB");
    FMT(cs_units_format_size, 25 * MiB, "25.00 MiB");
    FMT(cs_units_format_size, 1.5 * GiB, "1.50 GiB");
    FMT(cs_units_format_size, 80 * GiB, "80.00 GiB");
    FMT(cs_units_format_size, 2 * TiB, "2.00 TiB");
    /* Rounding never prints "1024.00 KiB". */
    FMT(cs_units_format_size, MiB - 1, "1.00 MiB");
}
END_TEST

START_TEST(format_time)
{
    FMT(cs_units_format_time, 0, "0 s");
    FMT(cs_units_format_time, 5e-7, "500.00 ns");
    FMT(cs_units_format_time, 3.4e-6, "3.40 us");
    FMT(cs_units_format_time, 12.3e-3, "12.30 ms");
    FMT(cs_units_format_time, 2.5, "2.50 s");
    FMT(cs_units_format_time, 999.999e-9, "1.00 us");
    FMT(cs_units_format_time, 120, "120.00 s");
}
END_TEST

START_TEST(format_parse_round_trip)
{
    /* What format writes (minus the blank) parses back to about the value. */
    const double sizes[] = {1536, 25 * MiB, 1.5 * GiB, 3 * TiB};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char buf[64];
        double back;
        cs_units_format_size(sizes[i], buf, sizeof buf);
        ck_assert_int_eq(cs_units_parse_size(buf, &back, NULL, 0), 0);
        ck_assert_double_eq_tol(back, sizes[i], sizes[i] * 0.005);
    }
    const double times[] = {5e-7, 3.4e-6, 12.3e-3, 2.5};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        char buf[64];
        double back;
        cs_units_format_time(times[i], buf, sizeof buf);
        ck_assert_int_eq(cs_units_parse_time(buf, &back, NULL, 0), 0);
        ck_assert_double_eq_tol(back, times[i], times[i] * 0.005);
    }
}
END_TEST

static Suite *units_suite(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, size_forms);
    tcase_add_test(tc, size_decimal_via_exponent);
    tcase_add_test(tc, size_rejects);
    tcase_add_test(tc, size_err_may_be_null);
    tcase_add_test(tc, rate_forms);
    tcase_add_test(tc, rate_bits_differ_from_bytes);
    tcase_add_test(tc, rate_rejects);
    tcase_add_test(tc, time_forms);
    tcase_add_test(tc, time_rejects);
    tcase_add_test(tc, number_forms_and_rejects);
    suite_add_tcase(s, tc);
    TCase *tf = tcase_create("format");
    tcase_add_test(tf, format_size);
    tcase_add_test(tf, int_forms_ranges_and_overflow);
    tcase_add_test(tf, format_time);
    tcase_add_test(tf, format_parse_round_trip);
    suite_add_tcase(s, tf);
    return s;
}

int main(void)
{
    return cs_test_run(units_suite());
}
