/* SPDX-License-Identifier: MIT */
/*
 * calib_recheck.c - the fitted parameters checked again at the solution.
 *
 * After a fit every fitted parameter is checked at the solution: if its
 * protocol / algorithm no longer runs (it priced itself out: fewer than 2
 * rows still run it), or its 95% interval is wider than x10, it returns to
 * its input value and leaves the fit; a latency driven to its floor (no
 * prediction depends on it any more) is held there; a bandwidth term
 * pushed past NCCL's per-channel cap (likewise) is dropped. With second
 * chances (the second of calibrate.c's two passes), a parameter priced
 * out or past its cap the first time is not dropped but starts the next
 * round from its input: the fit's choice of protocol moves with the
 * parameters, so a partner it traded off against may have pushed it there
 * at a point the fit then left (seen on CPU MPI rows: LL priced out and
 * intra.efficiency past the cap in round one left nothing to fit the
 * bandwidth, a weighted RMS of 83% where 23% fits). Intervals:
 * t x sqrt(s^2 covar_aa), s^2 = chi^2 / (n - p), in fitting coordinates;
 * a parameter at a limit leaves J^T J singular, so intervals are judged
 * only in a round where none is, and wide intervals usually come in pairs
 * (two parameters that nearly trade off), so only the lowest-priority open
 * one leaves per round. When something changed, the rest are warm-started
 * at their fitted values for the next round, where the choice is made
 * again (a parameter set aside as redundant may enter once another left).
 */
#include <math.h>
#include <stdio.h>

#include "study/calib_phases.h"

/* How many used rows run each (algo, proto) on the cluster at pv. */
static void runs_at(const cs__calib_run *st, const cs__calib_vals *pv,
                    int runs[CS_ALGO_COUNT][CS_PROTO_COUNT])
{
    cs_cluster cf;
    cs__calib_apply(st->fc.base, pv, &cf);
    for (size_t k = 0; k < st->n; k++) {
        cs_calib_pred pr;
        CS_ASSERT(cs__calib_predict_on(&cf, NULL, st->fc.m, st->rows[k], &pr, NULL) == 0 &&
                  pr.status == 0);
        runs[pr.algo][pr.proto]++;
    }
}

/* Rows that run what parameter j prices (2 when it prices everything). */
static int rows_priced(int j, const int runs[CS_ALGO_COUNT][CS_PROTO_COUNT])
{
    cs__calib_pdef pd = cs__calib_param(j);
    if (pd.proto < 0 && pd.algo < 0) return 2;
    int used = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            if ((pd.algo < 0 || pd.algo == a) && (pd.proto < 0 || pd.proto == p))
                used += runs[a][p];
    return used;
}

/* Largest |J| of parameter j's column. */
static double column_max(const cs__calib_run *st, int j)
{
    double vmax = 0;
    for (size_t k = 0; k < st->n; k++) vmax = fmax(vmax, fabs(st->J[k * P_COUNT + (size_t)j]));
    return vmax;
}

/* Half widths of the 95% intervals at the solution (fitting coordinates),
 * and the one parameter (index into which) that leaves for a wide one, or
 * -1. */
static int open_interval(const cs__calib_run *st, double *hw)
{
    double chi2 = 0;
    for (size_t k = 0; k < st->n; k++) chi2 += st->w[k] * st->f[k] * st->f[k];
    int dof = (int)st->n - st->np;
    double s2 = dof > 0 ? chi2 / dof : NAN, tq = cs__calib_t_quantile(dof);
    int at_limit = 0;
    for (int a = 0; a < st->np; a++) {
        hw[a] = tq * sqrt(s2 * st->covar[a * st->np + a]);
        at_limit |= column_max(st, st->which[a]) < 1e-3;
    }
    int last_open = -1;
    if (!at_limit)
        for (int a = 0; a < st->np; a++)
            if (cs__calib_param(st->which[a]).tr != T_LAUNCH && isfinite(hw[a]) &&
                2 * hw[a] > log(10.0))
                last_open = a;
    return last_open;
}

/* The verdict on fitted parameter which[a]: 1 if it leaves the fit or is
 * frozen at pv, 0 if it stays. */
static int judge(cs__calib_run *st, int a, int used, int open, double hw, const cs__calib_vals *pv)
{
    int j = st->which[a];
    double vmax = column_max(st, j);
    int capped = vmax < 1e-3 && !cs__calib_param(j).latency;
    if ((used < 2 || capped) && st->second_chances && !st->second[j]) {
        /* priced out or past the cap the first time: the partners it
         * traded off against may have pushed it there at a point the
         * fit then left, so it starts once more from its input */
        st->second[j] = st->restart[j] = 1;
    } else if (used < 2) {
        st->eligible[j] = 0;
        snprintf(st->why[j], sizeof st->why[j],
                 "fitting it priced its protocol / algorithm out of the data (fewer than "
                 "2 rows still run it), so the data does not determine it");
    } else if (capped) {
        /* a bandwidth term past a per-channel cap again: any value beyond
         * the cap fits equally, so none is supported */
        st->eligible[j] = 0;
        snprintf(st->why[j], sizeof st->why[j],
                 "the fit pushed it past NCCL's per-channel cap, where no prediction "
                 "depends on it: the data asks for more bandwidth than the cap allows");
    } else if (vmax < 1e-3) {
        st->frozen[j] = 1;
        st->fc.start.v[j] = pv->v[j];
        st->fc.start.use[j] = 1;
        snprintf(st->why[j], sizeof st->why[j],
                 "held at its floor: the fit removed this latency entirely (no "
                 "prediction depends on it any more); the data asks for less latency "
                 "than the model can give");
    } else if (open) {
        st->eligible[j] = 0;
        snprintf(st->why[j], sizeof st->why[j],
                 "the data leaves it open: its 95%% interval spans more than a factor "
                 "of 10 (x%.2g .. x%.2g)", exp(-hw), exp(hw));
    } else
        return 0;
    return 1;
}

/* The next round starts from the kept parameters at their fitted values
 * and the dropped ones back at their inputs. */
static void warm_start(cs__calib_run *st, const cs__calib_vals *pv)
{
    for (int a = 0; a < st->np; a++) {
        int j = st->which[a];
        if (st->frozen[j]) continue;
        if (st->eligible[j] && !st->restart[j]) {
            st->fc.start.v[j] = pv->v[j];
            st->fc.start.use[j] = 1;
        } else {
            st->fc.start.v[j] = st->orig.v[j];
            st->fc.start.use[j] = st->orig.use[j];
        }
        st->restart[j] = 0;
    }
    st->np = st->fc.np = 0;
}

int cs__calib_recheck(cs__calib_run *st)
{
    cs__calib_vals pv;
    cs__calib_x_to_vals(&st->fc, st->x, &pv);
    int runs[CS_ALGO_COUNT][CS_PROTO_COUNT] = {{0}};
    runs_at(st, &pv, runs);
    cs__calib_jacobian(&st->fc, &pv, st->J);
    cs__calib_residuals(&st->fc, &pv, st->f);
    double hw[P_COUNT];
    int last_open = open_interval(st, hw), changed = 0;
    for (int a = 0; a < st->np; a++)
        changed |= judge(st, a, rows_priced(st->which[a], runs), a == last_open, hw[a], &pv);
    if (changed) warm_start(st, &pv);
    return changed;
}
