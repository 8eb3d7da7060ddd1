/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the Chrome / Perfetto trace of a simulated iteration (Trace
 * Event Format, "X" complete events and "C" counters, times in
 * microseconds): process "rank 0", one thread per stream (tid = the
 * stream's index), one event per task with its collective's op, size,
 * algorithm and protocol, and the dynamic-memory counter after each
 * change. Deterministic: the same run gives the same bytes.
 */
#include "out/trace.h"

void cs_trace_write(const cs_workload *w, const cs_iteration *it, cs_buf *b)
{
    cs_buf_printf(b, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    cs_buf_printf(b, "  {\"ph\": \"M\", \"pid\": 0, \"name\": \"process_name\", \"args\": {\"name\": \"rank 0\"}}");
    for (int s = 0; s < CS_STREAM_COUNT; s++)
        cs_buf_printf(b, ",\n  {\"ph\": \"M\", \"pid\": 0, \"tid\": %d, \"name\": \"thread_name\", "
                      "\"args\": {\"name\": \"%s stream\"}}", s, cs_stream_name((cs_stream)s));
    for (size_t i = 0; i < it->ntasks; i++) {
        const cs_task *t = cs_workload_task(w, i);
        cs_buf_printf(b, ",\n  {\"ph\": \"X\", \"pid\": 0, \"tid\": %d, \"name\": \"%s\", "
                      "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"id\": %d",
                      (int)t->stream, t->name, it->start_s[i] * 1e6,
                      (it->end_s[i] - it->start_s[i]) * 1e6, t->id);
        if (t->kind == CS_TASK_COLLECTIVE)
            cs_buf_printf(b, ", \"op\": \"%s\", \"size_bytes\": %.0f, \"algo\": \"%s\", \"proto\": \"%s\"",
                          cs_op_name(t->op), t->size_bytes, cs_algo_name(t->algo),
                          cs_proto_name(t->proto));
        cs_buf_printf(b, "}}");
    }
    for (size_t i = 0; i < it->nmem; i++)
        cs_buf_printf(b, ",\n  {\"ph\": \"C\", \"pid\": 0, \"name\": \"dynamic memory\", \"ts\": %.3f, "
                      "\"args\": {\"GiB\": %.6f}}", it->mem_t_s[i] * 1e6, it->mem_bytes[i] / (1 << 30));
    cs_buf_printf(b, "\n]}\n");
}
