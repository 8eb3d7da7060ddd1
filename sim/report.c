/* SPDX-License-Identifier: MIT */
/*
 * report.c - text buffers and renderings of collective rows.
 * The table mimics nccl-tests' (size, count, type, redop, time, algbw,
 * busbw) with the chosen algorithm and protocol appended.
 */
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void cs_buf_printf(cs_buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t avail = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->data ? b->data + b->len : NULL, avail, fmt, ap);
        va_end(ap);
        CS_ASSERT(n >= 0);
        if ((size_t)n < avail) {
            b->len += (size_t)n;
            return;
        }
        size_t need = b->len + (size_t)n + 1;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < need) cap *= 2;
        b->data = cs_xrealloc(b->data, cap);
        b->cap = cap;
    }
}

void cs_buf_free(cs_buf *b)
{
    free(b->data);
    *b = (cs_buf){0};
}

int cs_buf_write(const cs_buf *b, const char *path, cs_diag *d)
{
    if (!path || !strcmp(path, "-")) {
        if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len)
            return cs_diag_set(d, CS_EIO, NULL, 0, 0, "cannot write to standard output");
        fflush(stdout);
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device, FIFO or /dev/stdout: write in place (no rename) */
        FILE *f = fopen(path, "wb");
        int ok = f && (b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len);
        if (f) ok = (fclose(f) == 0) && ok;
        if (!ok)
            return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output: %s", strerror(errno));
        return 0;
    }
    size_t n = strlen(path) + 16;
    char *tmp = cs_xmalloc(n);
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        free(tmp);
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot create output file: %s", strerror(e));
    }
    int ok = (b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        free(tmp);
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output file: %s", strerror(e));
    }
    free(tmp);
    return 0;
}

int cs_format_parse(const char *s, cs_format *out)
{
    static const char *const names[] = {"table", "csv", "json"};
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(s, names[i])) {
            *out = (cs_format)i;
            return 0;
        }
    return CS_EINVAL;
}

const char *cs_report_collective_csv_header(void)
{
    return "op,algo,proto,engine,ranks,size_bytes,count,dtype,time_us,algbw_GBps,busbw_GBps";
}

static const char *redop(cs_op op)
{
    return (op == CS_OP_ALL_REDUCE || op == CS_OP_REDUCE_SCATTER || op == CS_OP_REDUCE) ? "sum"
                                                                                         : "none";
}

void cs_report_json_string(cs_buf *b, const char *s)
{
    cs_buf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            cs_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            cs_buf_printf(b, "\\u%04x", c);
        else
            cs_buf_printf(b, "%c", c);
    }
    cs_buf_printf(b, "\"");
}

void cs_report_collective(cs_buf *b, cs_format f, const char *title, const cs_coll_row *rows,
                          size_t n)
{
    switch (f) {
    case CS_FORMAT_CSV:
        cs_buf_printf(b, "%s\n", cs_report_collective_csv_header());
        for (size_t i = 0; i < n; i++) {
            const cs_coll_row *r = &rows[i];
            cs_buf_printf(b, "%s,%s,%s,%s,%d,%.0f,%.0f,%s,%.4f,%.4f,%.4f\n", cs_op_name(r->op),
                          cs_algo_name(r->algo), cs_proto_name(r->proto), cs_engine_name(r->engine),
                          r->ranks, r->size_bytes, r->count, cs_dtype_nccl_name(r->dtype),
                          r->time_us, r->algbw_GBps, r->busbw_GBps);
        }
        break;
    case CS_FORMAT_JSON:
        cs_buf_printf(b, "{\n  \"title\": ");
        cs_report_json_string(b, title);
        cs_buf_printf(b, ",\n  \"rows\": [");
        for (size_t i = 0; i < n; i++) {
            const cs_coll_row *r = &rows[i];
            cs_buf_printf(b,
                          "%s\n    {\"op\": \"%s\", \"algo\": \"%s\", \"proto\": \"%s\", "
                          "\"engine\": \"%s\", \"ranks\": %d, \"size_bytes\": %.0f, "
                          "\"count\": %.0f, \"dtype\": \"%s\", \"time_us\": %.4f, "
                          "\"algbw_GBps\": %.4f, \"busbw_GBps\": %.4f}",
                          i ? "," : "", cs_op_name(r->op), cs_algo_name(r->algo),
                          cs_proto_name(r->proto), cs_engine_name(r->engine), r->ranks,
                          r->size_bytes, r->count, cs_dtype_nccl_name(r->dtype), r->time_us,
                          r->algbw_GBps, r->busbw_GBps);
        }
        cs_buf_printf(b, "\n  ]\n}\n");
        break;
    default:
        cs_buf_printf(b, "# %s\n#\n", title);
        cs_buf_printf(b, "# %12s %12s %9s %6s %11s %8s %8s  %-5s %-6s\n", "size", "count", "type",
                      "redop", "time", "algbw", "busbw", "algo", "proto");
        cs_buf_printf(b, "# %12s %12s %9s %6s %11s %8s %8s\n", "(B)", "(elements)", "", "",
                      "(us)", "(GB/s)", "(GB/s)");
        for (size_t i = 0; i < n; i++) {
            const cs_coll_row *r = &rows[i];
            cs_buf_printf(b, "  %12.0f %12.0f %9s %6s %11.2f %8.2f %8.2f  %-5s %-6s\n",
                          r->size_bytes, r->count, cs_dtype_nccl_name(r->dtype), redop(r->op),
                          r->time_us, r->algbw_GBps, r->busbw_GBps, cs_algo_name(r->algo),
                          cs_proto_name(r->proto));
        }
    }
}
