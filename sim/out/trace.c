/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the Chrome / Perfetto trace of simulated iterations (Trace
 * Event Format, "X" complete events and "C" counters, times in
 * microseconds): one process per run added (`simulate --strategy a,b`
 * gives one per strategy), in it one thread per stream (tid = the
 * stream's index), one event per task with its collective's op, size,
 * algorithm and protocol, and the dynamic-memory counter after each
 * change; "otherData" names the format and version.
 *
 * Times are rounded once, to whole nanoseconds, and printed from those
 * integers: a slice's end is ts + dur exactly, so consecutive tasks of a
 * stream (end == next start in the simulation) touch and never overlap
 * (rounding ts and dur separately made them overlap by 1 ns).
 *
 * Ranks: where every rank runs alike one timeline stands for all (the
 * caller's process name says which rank it shows). Where ranks differ
 * (iteration.h: rank classes, des: stragglers under the DES engine) each
 * class has a thread per stream, tid = class x streams shown + stream (the tp stream only in a tensor-parallel graph, the offload stream only with activation offloading's copies),
 * named "<stream> stream: <its ranks> (<slowdown>x)" and sorted so, and a
 * memory counter of its own: a track per stream per distinct rank, not
 * per rank (identical ranks would repeat one another). Deterministic: the
 * same runs give the same bytes.
 *
 * Pipelines have no task graph: cs_trace_add_pipeline draws their
 * timeline (train/pipeline.h), a thread per stage.
 */
#include "out/trace.h"

#include <math.h>
#include <stdlib.h>

/* t seconds as whole nanoseconds. */
static long long ns(double t_s) { return llround(t_s * 1e9); }

/* Prints x nanoseconds as microseconds with 3 decimals, exactly. */
static void us(cs_buf *b, long long x)
{
    cs_buf_printf(b, "%s%lld.%03lld", x < 0 ? "-" : "", llabs(x) / 1000, llabs(x) % 1000);
}

void cs_trace_begin(cs_buf *b)
{
    cs_buf_printf(b, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [");
}

/* The streams a timeline shows, as a count from the first: the tp
 * stream only in a tensor-parallel graph, the offload stream only in a
 * graph with copies on it (so a graph without them keeps its thread ids). */
static int shown_streams(const cs_workload *w)
{
    for (size_t i = 0; i < cs_workload_count(w); i++)
        if (cs_workload_task(w, i)->stream == CS_STREAM_OFFLOAD) return CS_STREAM_OFFLOAD + 1;
    const cs_layout *l = cs_workload_layout(w);
    return l->group[CS_GROUP_TP].size > 1 ? CS_STREAM_TP + 1 : CS_STREAM_TP;
}

/* The separator before an event: none right after the opening bracket. */
static void next(cs_buf *b) { cs_buf_printf(b, "%s\n  ", b->data[b->len - 1] == '[' ? "" : ","); }

/* One timeline: a thread per stream (tids tid0.., named "<stream> stream"
 * and, for a rank class, ": <its ranks> (<slowdown>x)"), its slices, its
 * memory counter (named after the class too). */
static void add_timeline(cs_buf *b, int pid, int tid0, const cs_rank_class *rc,
                         const cs_workload *w, const cs_iteration *it)
{
    char who[192] = "";
    if (rc && rc->slowdown != 1.0) snprintf(who, sizeof who, ": %s (%gx)", rc->label, rc->slowdown);
    else if (rc) snprintf(who, sizeof who, ": %s", rc->label);
    int tp = cs_workload_layout(w)->group[CS_GROUP_TP].size > 1;
    for (int s = 0; s < shown_streams(w); s++) {
        char name[256];
        if (s == CS_STREAM_TP && !tp) continue; /* below the offload stream: no thread */
        snprintf(name, sizeof name, "%s stream%s", cs_stream_name((cs_stream)s), who);
        next(b);
        cs_buf_printf(b, "{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_name\", "
                         "\"args\": {\"name\": ", pid, tid0 + s);
        cs_buf_json_string(b, name);
        cs_buf_printf(b, "}}");
        if (!rc) continue;
        next(b);
        cs_buf_printf(b, "{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_sort_index\", "
                         "\"args\": {\"sort_index\": %d}}", pid, tid0 + s, tid0 + s);
    }
    for (size_t i = 0; i < it->ntasks; i++) {
        const cs_task *t = cs_workload_task(w, i);
        long long t0 = ns(it->start_s[i]), t1 = ns(it->end_s[i]);
        next(b);
        cs_buf_printf(b, "{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"name\": ", pid,
                      tid0 + (int)t->stream);
        cs_buf_json_string(b, t->name);
        cs_buf_printf(b, ", \"ts\": ");
        us(b, t0);
        cs_buf_printf(b, ", \"dur\": ");
        us(b, t1 - t0);
        cs_buf_printf(b, ", \"args\": {\"id\": %d", t->id);
        if (t->kind == CS_TASK_COLLECTIVE)
            cs_buf_printf(b, ", \"op\": \"%s\", \"size_bytes\": %.0f, \"algo\": \"%s\", \"proto\": \"%s\"",
                          cs_op_name(t->op), t->size_bytes, cs_algo_name(t->algo),
                          cs_proto_name(t->proto));
        if (t->count > 1) cs_buf_printf(b, ", \"count\": %.0f", t->count);
        cs_buf_printf(b, "}}");
    }
    for (size_t i = 0; i < it->nmem; i++) {
        next(b);
        cs_buf_printf(b, "{\"ph\": \"C\", \"pid\": %d, \"name\": ", pid);
        char name[256];
        snprintf(name, sizeof name, "dynamic memory%s", who);
        cs_buf_json_string(b, name);
        cs_buf_printf(b, ", \"ts\": ");
        us(b, ns(it->mem_t_s[i]));
        cs_buf_printf(b, ", \"args\": {\"GiB\": %.6f}}", it->mem_bytes[i] / (1 << 30));
    }
}

/* The process's metadata: its name, and its place (pid) in the list. */
static void process_meta(cs_buf *b, int pid, const char *name)
{
    next(b);
    cs_buf_printf(b, "{\"ph\": \"M\", \"pid\": %d, \"name\": \"process_name\", \"args\": {\"name\": ",
                  pid);
    cs_buf_json_string(b, name);
    cs_buf_printf(b, "}}");
    next(b);
    cs_buf_printf(b, "{\"ph\": \"M\", \"pid\": %d, \"name\": \"process_sort_index\", "
                     "\"args\": {\"sort_index\": %d}}", pid, pid);
}

void cs_trace_add(cs_buf *b, int pid, const char *name, const cs_workload *w,
                  const cs_iteration *it)
{
    process_meta(b, pid, name);
    if (it->nclasses == 0) add_timeline(b, pid, 0, NULL, w, it);
    for (int k = 0; k < it->nclasses; k++)
        add_timeline(b, pid, k * shown_streams(w), &it->classes[k].ranks, w, &it->classes[k].it);
}

/* One slice of a pipeline's stage track: [t0, t1] named name, args (a
 * JSON object's members, without braces). */
static void pp_slice(cs_buf *b, int pid, int tid, const char *name, double t0_s, double t1_s,
                     const char *args)
{
    long long t0 = ns(t0_s), t1 = ns(t1_s);
    next(b);
    cs_buf_printf(b, "{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"name\": ", pid, tid);
    cs_buf_json_string(b, name);
    cs_buf_printf(b, ", \"ts\": ");
    us(b, t0);
    cs_buf_printf(b, ", \"dur\": ");
    us(b, t1 - t0);
    cs_buf_printf(b, ", \"args\": {%s}}", args);
}

static const char *const pass_names[] = {"F", "B", "W"};

/* Pipelines (train/pipeline.h): a thread per stage, "stage S (of P)";
 * each pass a slice named "F 3" (pass and micro-batch; "F 3.1" with
 * chunk 1 of interleaved stages), then the transfer it sends as a slice
 * "send F 3 -> stage 1" while it holds the sender (pipeline.c: the sender
 * waits for its send; the receiver's pass starts no earlier than its
 * end), then the stage's gradient synchronisation and optimizer step
 * after its last pass and send. A sharded strategy's all-gather of the
 * stage's parameters opens its track (review finding 11: it was drawn
 * inside the sync slice); every stage's passes are drawn after the
 * longest stage's gather, so a receive never precedes its send (the
 * executor's times run from the gathers' end; pipeline.c adds each
 * stage's own gather_s to its time: a stage with a shorter gather is
 * drawn up to the difference later than it counts). */
void cs_trace_add_pipeline(cs_buf *b, int pid, const char *name, const cs_pp_timeline *tl)
{
    process_meta(b, pid, name);
    for (int s = 0; s < tl->P; s++) {
        next(b);
        cs_buf_printf(b, "{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_name\", "
                         "\"args\": {\"name\": \"stage %d (of %d)\"}}", pid, s, s, tl->P);
        next(b);
        cs_buf_printf(b, "{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_sort_index\", "
                         "\"args\": {\"sort_index\": %d}}", pid, s, s);
    }
    double g = 0; /* the longest gather: the passes' offset */
    for (int s = 0; s < tl->P; s++)
        if (tl->gather_s[s] > g) g = tl->gather_s[s];
    for (int s = 0; s < tl->P; s++) {
        double end = g;
        char label[96], args[256];
        if (tl->gather_s[s] > 0) {
            snprintf(args, sizeof args, "\"op\": \"all_gather\", \"size_bytes\": %.0f",
                     tl->gather_bytes[s]);
            pp_slice(b, pid, s, "all_gather parameters", 0, tl->gather_s[s], args);
        }
        for (int i = 0; i < tl->nslices[s]; i++) {
            const cs_pp_slice *x = &tl->slice[tl->first[s] + i];
            char mb[32];
            if (tl->V > 1) snprintf(mb, sizeof mb, "%d.%d", x->micro, x->chunk);
            else snprintf(mb, sizeof mb, "%d", x->micro);
            snprintf(label, sizeof label, "%s %s", pass_names[x->pass], mb);
            snprintf(args, sizeof args, "\"stage\": %d, \"pass\": \"%s\", \"micro\": %d, "
                     "\"chunk\": %d, \"from_stage\": %d, \"recv_tag\": %d", s, pass_names[x->pass],
                     x->micro, x->chunk, x->from_stage, x->recv_tag);
            pp_slice(b, pid, s, label, g + x->start_s, g + x->end_s, args);
            end = g + x->end_s;
            if (x->to_stage < 0) continue;
            snprintf(label, sizeof label, "send %s %s -> stage %d", pass_names[x->pass], mb,
                     x->to_stage);
            snprintf(args, sizeof args, "\"op\": \"send_recv\", \"size_bytes\": %.0f, "
                     "\"peer_stage\": %d, \"tag\": %d", tl->p2p_bytes, x->to_stage, x->tag);
            pp_slice(b, pid, s, label, g + x->end_s, g + x->end_s + x->send_s, args);
            end = g + x->end_s + x->send_s;
        }
        double sync = tl->sync_s[s];
        snprintf(label, sizeof label, "gradient sync (%s)", cs_op_name(tl->sync_op));
        snprintf(args, sizeof args, "\"op\": \"%s\", \"size_bytes\": %.0f", cs_op_name(tl->sync_op),
                 tl->sync_bytes[s]);
        if (sync > 0) pp_slice(b, pid, s, label, end, end + sync, args);
        if (tl->optimizer_s[s] > 0)
            pp_slice(b, pid, s, "optimizer step", end + sync, end + sync + tl->optimizer_s[s], "");
    }
}

void cs_trace_end(cs_buf *b)
{
    cs_buf_printf(b, "\n], \"otherData\": {\"format\": \"collsim-trace\", \"version\": %d}}\n",
                  CS_TRACE_VERSION);
}

void cs_trace_write(const cs_workload *w, const cs_iteration *it, cs_buf *b)
{
    cs_trace_begin(b);
    cs_trace_add(b, 0, it->nclasses > 0 ? "every rank, by class" : "rank 0", w, it);
    cs_trace_end(b);
}
