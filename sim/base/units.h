/* SPDX-License-Identifier: MIT */
/*
 * units.h - parsing and formatting of sizes, rates and times.
 *
 * Conventions (SI / IEC 80000-13, the same for sizes and rates; a bare
 * prefix letter as nccl-tests reads it):
 *   sizes  "8", "4KiB", "25MiB", "8GiB" -> bytes, BINARY (1KiB = 1024);
 *          "4kB", "25MB", "80GB", "1TB" -> DECIMAL (1GB = 1e9);
 *          "4K", "25M", "8G", "1T" (a prefix letter alone) -> binary, as
 *          nccl-tests -b/-e (and its logs' byte counts, which are plain
 *          numbers) have it.
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

/* The conventions above in one paragraph for --help texts (static
 * storage; lines of at most 78 characters, each ending in a newline). */
const char *cs_units_help(void);
/* An integer filling the whole of s[0, len) (no blanks, an optional '-'
 * or '+', decimal digits only: "1K", "1e3", "0x10" and "" are refused) in
 * lo..hi, overflow included: never wraps. Returns 0 and *v, CS_EINVAL (not
 * an integer) or CS_ERANGE (outside lo..hi; *v untouched). */
int cs_units_parse_int(const char *s, size_t len, long long lo, long long hi, long long *v);

/* Formatting into buf: "1.5GiB", "400Gbps"-style human strings. */
void cs_units_format_size(double bytes, char *buf, size_t len);
void cs_units_format_time(double seconds, char *buf, size_t len);

#endif
