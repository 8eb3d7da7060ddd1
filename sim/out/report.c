/* SPDX-License-Identifier: MIT */
/*
 * report.c - the table / CSV / JSON renderings of collective rows.
 * The table mimics nccl-tests' (size, count, type, redop, time, algbw,
 * busbw) with the chosen algorithm and protocol appended.
 */
#include "out/report.h"

#include <strings.h>

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
        cs_buf_json_string(b, title);
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
