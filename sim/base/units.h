/* SPDX-License-Identifier: MIT */
/*
 * units.h - parsing and formatting of sizes, rates and times.
 *
 * Conventions (the ones nccl-tests uses, so numbers line up with its logs):
 *   sizes  "8", "4K", "4KiB", "25MiB", "8G"  -> bytes; K/M/G/T (with or
 *          without "iB"/"B") are BINARY (1K = 1024), as nccl-tests -b/-e.
 *          "kB", "MB", "GB", "TB" (capital B after a decimal prefix) are also
 *          binary for sizes, matching nccl-tests; write e.g. 25e6 for decimal.
 *   rates  "400Gbps", "400Gb/s" (bits, decimal: 1G = 1e9), "50GB/s", "50GBps"
 *          (bytes, decimal: GB/s = 1e9 B/s as nccl-tests busbw), "50GiB/s"
 *          (bytes, binary), "TB/s". Plain numbers are bytes per second.
 *   times  "500ns", "3us", "1.5ms", "2s"; plain numbers are seconds.
 * All parsers accept leading/trailing blanks and reject anything else,
 * negatives, NaN and infinities.
 */
#ifndef CS_UNITS_H
#define CS_UNITS_H

#include <stddef.h>

/* Each returns 0 and stores the value, or CS_EINVAL with a message in
 * err (may be NULL) of size errlen saying what was expected. */
int cs_units_parse_size(const char *s, double *bytes, char *err, size_t errlen);
int cs_units_parse_rate(const char *s, double *bytes_per_s, char *err, size_t errlen);
int cs_units_parse_time(const char *s, double *seconds, char *err, size_t errlen);
/* A plain non-negative number, allowing exponent forms such as 13e9. */
int cs_units_parse_number(const char *s, double *v, char *err, size_t errlen);

/* An integer filling the whole of s[0, len) (no blanks, an optional '-'
 * or '+', decimal digits only: "1K", "1e3", "0x10" and "" are refused) in
 * lo..hi, overflow included: never wraps. Returns 0 and *v, CS_EINVAL (not
 * an integer) or CS_ERANGE (outside lo..hi; *v untouched). */
int cs_units_parse_int(const char *s, size_t len, long long lo, long long hi, long long *v);

/* Formatting into buf: "1.5GiB", "400Gbps"-style human strings. */
void cs_units_format_size(double bytes, char *buf, size_t len);
void cs_units_format_time(double seconds, char *buf, size_t len);

#endif
