/* SPDX-License-Identifier: MIT */
/*
 * schedule.c - schedule JSON -> cs_hw_schedule with checks (schedule.h
 * states the format and what is checked); the timeline it predicts and the
 * exposed communication of a timeline are schedule_timeline.c's.
 */
#include "schedule.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"

static const char *const kind_names[] = {"compute", "memory", "collective"};
static const char *const stream_names[] = {"compute", "comm", "comm_reduce", "tp", "offload"};
_Static_assert(sizeof stream_names / sizeof *stream_names == CS_STREAM_COUNT,
               "one name per stream (workload.h)");
/* Version 1's group names, in cs_group order (world, dp_shard, dp_replicate). */
static const char *const v1_group_names[] = {"world", "shard", "replica"};

static int at(cs_diag *d, const char *file, const cs_json *v, const char *fmt, const char *a,
              const char *b)
{
    cs_diag_set(d, CS_ECONFIG, file, v->line, v->column, fmt, a, b);
    return CS_ECONFIG;
}

/* Member key of object o with type t; NULL + error if absent or mistyped
 * (absent is allowed when optional). */
static const cs_json *member(const cs_json *o, const char *key, cs_json_type t, int optional,
                             const char *file, cs_diag *d, int *rc)
{
    const cs_json *v = cs_json_get(o, key);
    if (!v) {
        if (!optional) *rc = at(d, file, o, "missing member '%s'%s", key, "");
        return NULL;
    }
    if (v->type != t) {
        *rc = at(d, file, v, "'%s' must be a %s", key, cs_json_type_name(t));
        return NULL;
    }
    return v;
}

static int name_index(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

static int number(const cs_json *o, const char *key, int optional, double lo, double *out,
                  const char *file, cs_diag *d)
{
    int rc = 0;
    const cs_json *v = member(o, key, CS_JSON_NUMBER, optional, file, d, &rc);
    if (rc) return rc;
    if (!v) return 0;
    if (!isfinite(v->number) || v->number < lo) {
        char buf[32];
        snprintf(buf, sizeof buf, "%g", lo);
        return at(d, file, v, "'%s' must be a finite number >= %s", key, buf);
    }
    *out = v->number;
    return 0;
}

static int enum_member(const cs_json *o, const char *key, const char *const *names, int n,
                       const char *expected, int *out, const char *file, cs_diag *d)
{
    int rc = 0;
    const cs_json *v = member(o, key, CS_JSON_STRING, 0, file, d, &rc);
    if (rc) return rc;
    int i = name_index(v->string, names, n);
    if (i < 0) return at(d, file, v, "'%s' must be one of %s", key, expected);
    *out = i;
    return 0;
}

/* A collective's group: by version 1's names, or by the layout's. */
static int task_group(const cs_json *o, const cs_hw_schedule *s, cs_hw_stask *t, const char *file,
                      cs_diag *d)
{
    int g = 0, rc = 0;
    if (s->version == 1) {
        rc = enum_member(o, "group", v1_group_names, 3, "world, shard, replica", &g, file, d);
        t->group = (cs_group)g;
        return rc;
    }
    const cs_json *v = member(o, "group", CS_JSON_STRING, 0, file, d, &rc);
    if (rc) return rc;
    if (cs_group_parse(v->string, &t->group) || !s->has_group[t->group])
        return at(d, file, v, "'group' must name one of the schedule's groups, got \"%s\"%s",
                  v->string, "");
    return 0;
}

/* An integer member in [lo, hi] (optional: *out kept when absent). */
static int integer(const cs_json *o, const char *key, int optional, int lo, int hi, int *out,
                   const char *file, cs_diag *d)
{
    double v = *out;
    int rc = number(o, key, optional, lo, &v, file, d);
    if (rc) return rc;
    if (v != floor(v) || v > hi) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", hi);
        return at(d, file, cs_json_get(o, key), "'%s' must be an integer at most %s", key, buf);
    }
    *out = (int)v;
    return 0;
}

/* "size_bytes": a finite number in [0, 2^60] (1 EiB: beyond any transfer a
 * run makes, and the element count replay derives from it, cmd_replay.c
 * map_task, stays far below SIZE_MAX). */
#define CS_HW_SIZE_BYTES_MAX 1152921504606846976.0 /* 2^60 */
static int size_bytes(const cs_json *o, cs_hw_stask *t, const char *file, cs_diag *d)
{
    int rc = number(o, "size_bytes", 0, 0, &t->size_bytes, file, d);
    if (rc || t->size_bytes <= CS_HW_SIZE_BYTES_MAX) return rc;
    char buf[32];
    snprintf(buf, sizeof buf, "%d", t->id);
    return at(d, file, cs_json_get(o, "size_bytes"),
              "task %s: 'size_bytes' must be at most 2^60 (1152921504606846976)%s", buf, "");
}

/* A pipeline task's stage (-1 without a pipeline, where "stage" is ignored). */
static int task_stage(const cs_json *o, const cs_hw_schedule *s, cs_hw_stask *t,
                      const char *file, cs_diag *d)
{
    t->stage = -1;
    if (!s->stages) return 0;
    return integer(o, "stage", 0, 0, s->stages - 1, &t->stage, file, d);
}

/* A p2p task: op send / recv of size_bytes in dtype to / from the stage
 * peer {"pp": S}, with its tag and batch. */
static int parse_p2p(const cs_json *o, const cs_hw_schedule *s, cs_hw_stask *t, const char *file,
                     cs_diag *d)
{
    static const char *const ops[] = {"send", "recv"};
    int op = 0, rc;
    if ((rc = enum_member(o, "op", ops, 2, "send, recv", &op, file, d))) return rc;
    t->p2p = op ? CS_HW_P2P_RECV : CS_HW_P2P_SEND;
    t->op = CS_OP_SEND_RECV;
    t->group = CS_GROUP_PP;
    const cs_json *v = member(o, "dtype", CS_JSON_STRING, 0, file, d, &rc);
    if (rc) return rc;
    if (cs_dtype_parse(v->string, &t->dtype) || t->dtype == CS_DTYPE_TF32)
        return at(d, file, v, "'%s' must be one of %s", "dtype", "fp32, bf16, fp16, fp8, fp64");
    if ((rc = size_bytes(o, t, file, d))) return rc;
    const cs_json *peer = member(o, "peer", CS_JSON_OBJECT, 0, file, d, &rc);
    if (rc) return rc;
    t->peer_stage = -1;
    if ((rc = integer(peer, "pp", 0, 0, s->stages - 1, &t->peer_stage, file, d))) return rc;
    if (t->peer_stage == t->stage)
        return at(d, file, peer, "a p2p task's peer must be another stage%s%s", "", "");
    if ((rc = integer(o, "tag", 0, 0, 1 << 30, &t->tag, file, d)) ||
        (rc = integer(o, "batch", 0, 0, 1 << 30, &t->batch, file, d)))
        return rc;
    snprintf(t->algo, sizeof t->algo, "p2p");
    snprintf(t->proto, sizeof t->proto, "auto");
    return 0;
}

/* "pipeline" {stages, ...}: s->stages (0 without), which must be the
 * mesh's pp dimension. */
static int read_pipeline(const cs_json *root, cs_hw_schedule *s, const char *file, cs_diag *d)
{
    int rc = 0;
    const cs_json *pl = member(root, "pipeline", CS_JSON_OBJECT, 1, file, d, &rc);
    if (rc || !pl) return rc;
    if ((rc = integer(pl, "stages", 0, 1, 1 << 20, &s->stages, file, d))) return rc;
    int pp = cs_mesh_find(&s->mesh, "pp");
    if (pp < 0 || s->mesh.dim[pp].size != s->stages || !s->has_group[CS_GROUP_PP])
        return at(d, file, pl, "'stages' must be the size of the mesh's pp dimension, and the "
                  "schedule must name the pp group%s%s", "", "");
    return 0;
}

/* By tag, then sends first. */
static int by_tag(const void *a, const void *b)
{
    const cs_hw_stask *x = *(const cs_hw_stask *const *)a, *y = *(const cs_hw_stask *const *)b;
    if (x->tag != y->tag) return (x->tag > y->tag) - (x->tag < y->tag);
    return (x->p2p > y->p2p) - (x->p2p < y->p2p);
}

/* Every tag is one send and one receive, on the stages they name each
 * other by, with one size and type. O(tasks log tasks). */
static int check_p2p(const cs_hw_schedule *s, const char *file, cs_diag *d)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) n += s->tasks[i].p2p != 0;
    if (!n) return 0;
    const cs_hw_stask **by = cs_xmalloc(n * sizeof *by);
    n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->tasks[i].p2p) by[n++] = &s->tasks[i];
    qsort(by, n, sizeof *by, by_tag);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i += 2) {
        const cs_hw_stask *a = by[i], *b = i + 1 < n ? by[i + 1] : NULL;
        if (!b || b->tag != a->tag || a->p2p != CS_HW_P2P_SEND || b->p2p != CS_HW_P2P_RECV ||
            (i + 2 < n && by[i + 2]->tag == a->tag))
            rc = cs_diag_set(d, CS_ECONFIG, file, 0, 0,
                             "p2p task %d: tag %d is not one send and one receive", a->id, a->tag);
        else if (b->stage != a->peer_stage || b->peer_stage != a->stage ||
                 b->size_bytes != a->size_bytes || b->dtype != a->dtype)
            rc = cs_diag_set(d, CS_ECONFIG, file, 0, 0,
                             "p2p tasks %d and %d (tag %d) do not name each other's stages, or "
                             "differ in size or dtype", a->id, b->id, a->tag);
    }
    free(by);
    return rc;
}

/* A collective task's op, dtype, group, size, and algorithm and protocol
 * ("auto" when absent). */
static int parse_collective(const cs_json *o, cs_hw_schedule *s, cs_hw_stask *t, const char *file,
                            cs_diag *d)
{
    int rc = 0;
    const cs_json *v = member(o, "op", CS_JSON_STRING, 0, file, d, &rc);
    if (rc) return rc;
    if (cs_op_parse(v->string, &t->op))
        return at(d, file, v, "'%s' must be one of %s", "op",
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce");
    v = member(o, "dtype", CS_JSON_STRING, 0, file, d, &rc);
    if (rc) return rc;
    if (cs_dtype_parse(v->string, &t->dtype) || t->dtype == CS_DTYPE_TF32)
        return at(d, file, v, "'%s' must be one of %s", "dtype", "fp32, bf16, fp16, fp8, fp64");
    if ((rc = task_group(o, s, t, file, d))) return rc;
    if ((rc = size_bytes(o, t, file, d))) return rc;
    v = member(o, "algo", CS_JSON_STRING, 1, file, d, &rc);
    if (rc) return rc;
    snprintf(t->algo, sizeof t->algo, "%s", v ? v->string : "auto");
    v = member(o, "proto", CS_JSON_STRING, 1, file, d, &rc);
    if (rc) return rc;
    snprintf(t->proto, sizeof t->proto, "%s", v ? v->string : "auto");
    return 0;
}

/* "count": a task standing for several runs of itself (collsim's folded
 * bucket runs, cs_task.count) is not replayed one NCCL call per run yet;
 * only 1 is accepted. */
static int check_count(const cs_json *o, const char *file, cs_diag *d)
{
    double count = 1;
    int rc = number(o, "count", 1, 1, &count, file, d);
    if (rc || count == 1) return rc;
    char runs[32];
    snprintf(runs, sizeof runs, "%.0f", count);
    return at(d, file, cs_json_get(o, "count"),
              "a task of %s runs (a folded run of equal buckets) cannot be replayed; emit "
              "the schedule with a larger bucket_cap_mb%s",
              runs, "");
}

/* Task idx's "deps" (at most 4 {task, when}), as indices of earlier tasks
 * of the same stage. */
static int parse_deps(const cs_json *o, cs_hw_schedule *s, size_t idx, const char *file,
                      cs_diag *d)
{
    cs_hw_stask *t = &s->tasks[idx];
    int rc = 0;
    const cs_json *deps = member(o, "deps", CS_JSON_ARRAY, 1, file, d, &rc);
    if (rc) return rc;
    if (deps && deps->n > 4) return at(d, file, deps, "at most 4 dependencies per task%s%s", "", "");
    for (size_t i = 0; deps && i < deps->n; i++) {
        const cs_json *dep = deps->items[i];
        if (dep->type != CS_JSON_OBJECT)
            return at(d, file, dep, "a dependency must be an object {task, when}%s%s", "", "");
        double dt = -1;
        if ((rc = number(dep, "task", 0, 0, &dt, file, d))) return rc;
        int w;
        static const char *const when_names[] = {"end", "start"};
        if ((rc = enum_member(dep, "when", when_names, 2, "start, end", &w, file, d))) return rc;
        /* ids -> indices: dependencies must name earlier tasks */
        size_t j = 0;
        while (j < idx && s->tasks[j].id != dt) j++;
        if (j == idx) {
            char buf[32];
            snprintf(buf, sizeof buf, "%.0f", dt);
            return at(d, file, cs_json_get(dep, "task"),
                      "dependency on task %s, which is not an earlier task%s", buf, "");
        }
        if (s->tasks[j].stage != t->stage)
            return at(d, file, cs_json_get(dep, "task"),
                      "a dependency on a task of another pipeline stage%s%s", "", "");
        t->deps[t->ndeps] = (int)j;
        t->on_start[t->ndeps] = (char)w;
        t->ndeps++;
    }
    return 0;
}

/* Task idx: its id, kind, stream, name, prediction and stage, then what
 * its kind carries, its count and its dependencies; ids are unique. */
static int parse_task(const cs_json *o, cs_hw_schedule *s, size_t idx, const char *file,
                      cs_diag *d)
{
    cs_hw_stask *t = &s->tasks[idx];
    int rc = 0;
    if (o->type != CS_JSON_OBJECT) return at(d, file, o, "a task must be an object%s%s", "", "");
    double id = -1;
    if ((rc = number(o, "id", 0, 0, &id, file, d))) return rc;
    if (id != floor(id) || id > 1e9)
        return at(d, file, cs_json_get(o, "id"), "'id' must be an integer%s%s", "", "");
    t->id = (int)id;
    int k, st;
    const cs_json *kv = cs_json_get(o, "kind");
    int p2p = s->stages > 0 && kv && kv->type == CS_JSON_STRING && !strcmp(kv->string, "p2p");
    if (p2p) k = CS_TASK_COLLECTIVE;
    else if ((rc = enum_member(o, "kind", kind_names, 3, "compute, memory, collective", &k, file, d)))
        return rc;
    if ((rc = enum_member(o, "stream", stream_names, CS_STREAM_COUNT, "compute, comm, comm_reduce, tp, offload", &st, file, d)))
        return rc;
    t->kind = (cs_task_kind)k;
    t->stream = (cs_stream)st;
    const cs_json *nm = member(o, "name", CS_JSON_STRING, 0, file, d, &rc);
    if (rc) return rc;
    snprintf(t->name, sizeof t->name, "%s", nm->string);
    if ((rc = number(o, "predicted_s", 0, 0, &t->predicted_s, file, d))) return rc;
    if ((rc = task_stage(o, s, t, file, d))) return rc;
    if (p2p) rc = parse_p2p(o, s, t, file, d);
    else if (t->kind == CS_TASK_COLLECTIVE) rc = parse_collective(o, s, t, file, d);
    else if (!(rc = number(o, "flops", 1, 0, &t->flops, file, d)))
        rc = number(o, "mem_bytes", 1, 0, &t->mem_bytes, file, d);
    if (rc || (rc = check_count(o, file, d)) || (rc = parse_deps(o, s, idx, file, d))) return rc;
    for (size_t j = 0; j < idx; j++)
        if (s->tasks[j].id == t->id) {
            char buf[32];
            snprintf(buf, sizeof buf, "%d", t->id);
            return at(d, file, cs_json_get(o, "id"), "duplicate task id %s%s", buf, "");
        }
    return 0;
}

/* An integer member >= 1 (a rank count, a size). */
static int count(const cs_json *o, const char *key, int *out, const char *file, cs_diag *d)
{
    double r = 0;
    int rc = number(o, key, 0, 1, &r, file, d);
    if (rc) return rc;
    if (r != floor(r) || r > 1e8)
        return at(d, file, cs_json_get(o, key), "'%s' must be an integer >= 1%s", key, "");
    *out = (int)r;
    return 0;
}

/* Version 1: "groups" {world, shard, replica} rank counts, read as the
 * mesh tp 1 x dp_shard shard x dp_replicate replica (the layout's). */
static int read_v1_groups(const cs_json *root, cs_hw_schedule *s, const char *file, cs_diag *d)
{
    int rc = 0, n[3];
    const cs_json *groups = member(root, "groups", CS_JSON_OBJECT, 0, file, d, &rc);
    if (rc) return rc;
    for (int g = 0; g < 3; g++)
        if ((rc = count(groups, v1_group_names[g], &n[g], file, d))) return rc;
    if ((long long)n[1] * n[2] != n[0])
        return at(d, file, groups, "groups: world must equal shard x replica%s%s", "", "");
    cs_mesh_init(&s->mesh);
    cs_mesh_add(&s->mesh, "tp", 1);
    cs_mesh_add(&s->mesh, "dp_shard", n[1]);
    cs_mesh_add(&s->mesh, "dp_replicate", n[2]);
    for (int g = 0; g < CS_GROUP_COUNT; g++) {
        s->group_dims[g] = cs_layout_group_dims(&s->mesh, (cs_group)g);
        s->has_group[g] = 1;
    }
    return 0;
}

/* Version 2: "mesh" [{name, size}] innermost first, and "groups" {NAME:
 * {ranks, dims: [dimension names]}} with the layout's group names. */
static int read_mesh(const cs_json *root, cs_hw_schedule *s, const char *file, cs_diag *d)
{
    int rc = 0;
    const cs_json *mesh = member(root, "mesh", CS_JSON_ARRAY, 0, file, d, &rc);
    if (rc) return rc;
    if (mesh->n > CS_MESH_MAX_DIMS)
        return at(d, file, mesh, "'mesh' has more dimensions than this reader knows%s%s", "", "");
    cs_mesh_init(&s->mesh);
    for (size_t i = 0; i < mesh->n; i++) {
        const cs_json *dim = mesh->items[i];
        if (dim->type != CS_JSON_OBJECT)
            return at(d, file, dim, "a mesh dimension must be an object {name, size}%s%s", "", "");
        const cs_json *nm = member(dim, "name", CS_JSON_STRING, 0, file, d, &rc);
        int size = 0;
        if (rc || (rc = count(dim, "size", &size, file, d))) return rc;
        if (strlen(nm->string) >= CS_MESH_NAME_MAX || cs_mesh_find(&s->mesh, nm->string) >= 0)
            return at(d, file, nm, "mesh dimension '%s' is too long or repeated%s", nm->string, "");
        if ((long long)s->mesh.ranks * size > 100000000)
            return at(d, file, dim, "the mesh has too many ranks%s%s", "", "");
        cs_mesh_add(&s->mesh, nm->string, size);
    }
    const cs_json *groups = member(root, "groups", CS_JSON_OBJECT, 0, file, d, &rc);
    if (rc) return rc;
    for (size_t k = 0; k < groups->n; k++) {
        const cs_json *gr = groups->items[k];
        cs_group g;
        if (cs_group_parse(groups->keys[k], &g))
            return at(d, file, gr, "unknown group '%s'%s", groups->keys[k], "");
        if (gr->type != CS_JSON_OBJECT)
            return at(d, file, gr, "group '%s' must be an object {ranks, dims}%s", groups->keys[k], "");
        const cs_json *dims = member(gr, "dims", CS_JSON_ARRAY, 0, file, d, &rc);
        int ranks = 0;
        if (rc || (rc = count(gr, "ranks", &ranks, file, d))) return rc;
        cs_mesh_dims set = 0;
        for (size_t i = 0; i < dims->n; i++) {
            int j = dims->items[i]->type == CS_JSON_STRING
                        ? cs_mesh_find(&s->mesh, dims->items[i]->string) : -1;
            if (j < 0)
                return at(d, file, dims->items[i], "group '%s' names a dimension not in the mesh%s",
                          groups->keys[k], "");
            set |= CS_MESH_BIT(j);
        }
        if (cs_mesh_group_size(&s->mesh, set) != ranks)
            return at(d, file, gr, "group '%s': ranks is not the product of its dimensions' sizes%s",
                      groups->keys[k], "");
        s->group_dims[g] = set;
        s->has_group[g] = 1;
    }
    if (!s->has_group[CS_GROUP_WORLD] || s->group_dims[CS_GROUP_WORLD] != cs_mesh_all(&s->mesh))
        return at(d, file, groups, "groups: 'world' must span every mesh dimension%s%s", "", "");
    return 0;
}

int cs_hw_schedule_parse(const char *text, size_t len, const char *file, cs_hw_schedule *s,
                         cs_diag *d)
{
    memset(s, 0, sizeof *s);
    cs_json *root;
    int rc = cs_json_parse(text, len, file, &root, d);
    if (rc) return rc;
    if (root->type != CS_JSON_OBJECT) {
        rc = at(d, file, root, "expected an object with \"format\": \"collsim-schedule\"%s%s", "", "");
        goto out;
    }
    const cs_json *v = member(root, "format", CS_JSON_STRING, 0, file, d, &rc);
    if (rc) goto out;
    if (strcmp(v->string, "collsim-schedule")) {
        rc = at(d, file, v, "'format' must be \"collsim-schedule\", got \"%s\"%s", v->string, "");
        goto out;
    }
    double version = 0;
    if ((rc = number(root, "version", 0, 0, &version, file, d))) goto out;
    if (version != 1 && version != CS_WORKLOAD_SCHEDULE_VERSION) {
        rc = at(d, file, cs_json_get(root, "version"), "unsupported schedule version (this reader "
                "knows versions 1 and 2)%s%s", "", "");
        goto out;
    }
    s->version = (int)version;
    if ((rc = version == 1 ? read_v1_groups(root, s, file, d) : read_mesh(root, s, file, d)))
        goto out;
    for (int g = 0; g < CS_GROUP_COUNT; g++)
        s->group_ranks[g] = cs_mesh_group_size(&s->mesh, s->group_dims[g]);
    if (version == 2 && (rc = read_pipeline(root, s, file, d))) goto out;
    const cs_json *tasks = member(root, "tasks", CS_JSON_ARRAY, 0, file, d, &rc);
    if (rc) goto out;
    s->tasks = cs_xcalloc(tasks->n ? tasks->n : 1, sizeof *s->tasks);
    for (size_t i = 0; i < tasks->n; i++) {
        if ((rc = parse_task(tasks->items[i], s, i, file, d))) goto out;
        s->n = i + 1;
    }
    if ((rc = check_p2p(s, file, d))) goto out;
    size_t k;
    if (cs_hw_schedule_deadlock(s, &k)) {
        char buf[64];
        snprintf(buf, sizeof buf, "p2p task %d (stage %d, tag %d)", s->tasks[k].id,
                 s->tasks[k].stage, s->tasks[k].tag);
        rc = at(d, file, tasks->items[k],
                "%s: its send is held back behind a receive that waits in turn (a circular "
                "wait): the stages deadlock%s", buf, "");
    }
out:
    cs_json_free(root);
    if (rc) cs_hw_schedule_free(s);
    return rc;
}

int cs_hw_schedule_load(const char *path, cs_hw_schedule *s, cs_diag *d)
{
    memset(s, 0, sizeof *s);
    struct stat st;
    if (stat(path, &st) != 0)
        return cs_diag_set(d, errno == ENOENT ? CS_ENOENT : CS_EIO, path, 0, 0,
                           "cannot read schedule: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot read schedule: %s", "not a regular file");
    FILE *f = fopen(path, "rb");
    if (!f) return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot read schedule: %s", strerror(errno));
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = cs_xmalloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = cs_xrealloc(buf, cap *= 2);
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot read schedule: %s", "read error");
    }
    int rc = cs_hw_schedule_parse(buf, n, path, s, d);
    free(buf);
    return rc;
}

void cs_hw_schedule_free(cs_hw_schedule *s)
{
    free(s->tasks);
    memset(s, 0, sizeof *s);
}
