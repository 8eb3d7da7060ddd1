/* SPDX-License-Identifier: MIT */
/*
 * calib_train_yaml.c - what the cluster YAML a training fit writes says
 * (calib_train.h): the comment on every key the fit changed, and the
 * header naming the runs and every parameter, fitted (value, 95%
 * interval, input, the key it lands in) or kept (and why; a key the input
 * left unset stays unset and says so).
 */
#include <stdio.h>
#include <string.h>

#include "study/calib_train.h"

const char *cs_calib_train_note(void *ud, const char *path, char *buf, size_t len)
{
    const cs_calib_train_result *r = ud;
    if (!strcmp(path, "gpu.hbm_bandwidth"))
        return snprintf(buf, len, "fitted to kernel timings: the achievable rate, above the "
                                  "bandwidth given (hbm x %.6g)",
                        r->cluster.gpu.hbm_Bps / r->input.gpu.hbm_Bps),
               buf;
    for (int j = 0; j < r->nparams; j++)
        if (r->params[j].fitted && !strcmp(r->params[j].yaml, path)) {
            snprintf(buf, len, "fitted to training runs: %s = %.6g%s (95%% CI %.6g .. %.6g)",
                     r->params[j].name, r->params[j].value, r->params[j].unit, r->params[j].ci_lo,
                     r->params[j].ci_hi);
            return buf;
        }
    return NULL;
}

void cs_calib_train_header(cs_buf *b, const cs_calib_train_result *r, const cs_trun_set *s)
{
    cs_buf_printf(b, "# Compute model fitted to %zu measured training runs and %zu kernel timings "
                     "in:\n", s->n, s->nk);
    for (size_t f = 0; f < s->nfiles; f++) cs_buf_printf(b, "#   %s\n", s->files[f]);
    cs_buf_printf(b, "# Training fit: %s; RMS relative error %.2f%% -> %.2f%%.\n", r->status,
                  r->rms_before_pct, r->rms_after_pct);
    for (int j = 0; j < r->nparams; j++) {
        const cs_calib_param *p = &r->params[j];
        if (p->fitted)
            cs_buf_printf(b, "# fitted %s = %.6g%s (95%% CI %.6g .. %.6g; input %.6g) -> %s, %s\n",
                          p->name, p->value, p->unit, p->ci_lo, p->ci_hi, p->initial, p->yaml,
                          p->why);
        else if (r->input_unset[j])
            cs_buf_printf(b, "# kept   %s unset: %s\n", p->name, p->why);
        else
            cs_buf_printf(b, "# kept   %s = %.6g%s: %s\n", p->name, p->value, p->unit, p->why);
    }
}
