/* SPDX-License-Identifier: MIT */
/*
 * cluster_yaml.c - cs_cluster -> cluster YAML: the schema tables of
 * cluster_schema.c walked by yamlwriter.c, with the source's comments.
 *
 * Which keys: every row of the schema, in table order, except what has no
 * value to write: inter without NICs, des without links or stragglers,
 * the unset entries of tflops and bw_factor, and the latency tables while
 * they hold NCCL's defaults (unless the source wrote them). What changed
 * is judged against the cluster the source text loads as.
 */
#include "config/cluster_yaml.h"

#include <stdlib.h>

#include "config/cluster_schema.h"
#include "config/config.h"
#include "config/yamlwriter.h"

/* The written text must load back as c. */
static void check_round_trip(const cs_cluster *c, const char *text, size_t len)
{
    cs_cluster *back = cs_xmalloc(sizeof *back);
    cs_diag d;
    char path[256];
    if (cs_config_load_cluster_string(NULL, text, len, back, &d))
        CS_PANIC("cluster YAML written for '%s' does not load: %d:%d: %s", c->name, d.line,
                 d.column, d.message);
    if (cs_config_cluster_diff(c, back, path, sizeof path))
        CS_PANIC("cluster YAML written for '%s' loads back with another %s", c->name, path);
    free(back);
}

void cs_config_write_cluster(cs_buf *b, const cs_cluster *c, const cs_cluster_yaml_opts *o)
{
    cs__ysrc *src = NULL;
    cs_cluster *loaded = NULL;
    const cs_cluster *base = o ? o->base : NULL;
    if (o && o->src_text) {
        cs_diag d;
        loaded = cs_xmalloc(sizeof *loaded);
        src = cs__ysrc_new(o->src_text, o->src_len);
        if (src && !cs_config_load_cluster_string(NULL, o->src_text, o->src_len, loaded, &d))
            base = loaded;
        else {
            cs__ysrc_free(src);
            src = NULL;
        }
    }
    size_t start = b->len;
    cs__yw w = {.b = b, .src = src, .note = o ? o->note : NULL, .ud = o ? o->ud : NULL};
    cs__yw_head(&w);
    cs__cluster_schema s;
    cs__yw_table(&w, cs__cluster_schema_build(&s), c, base);
    cs__yw_tail(&w);
    cs__ysrc_free(src);
    free(loaded);
    check_round_trip(c, b->data + start, b->len - start);
}

const char *cs_config_cluster_diff(const cs_cluster *a, const cs_cluster *b, char *buf,
                                   size_t len)
{
    cs__cluster_schema s;
    return cs__yw_table_diff(cs__cluster_schema_build(&s), a, b, "", buf, len);
}
