/* SPDX-License-Identifier: MIT */
/*
 * plot.h - the crossover plots, drawn by gnuplot from a sweep's points and
 * crossings (sweep.h): what `collsim crossover --plot FILE` and
 * tools/plot-crossover.sh produce.
 *
 * Five files are written next to FILE, named after FILE without its
 * extension (the extension picks the format: .svg -> SVG, .png -> PNG;
 * FILE itself is not created):
 *   <base>-throughput.<ext>  tokens/s vs P per strategy (log-log), one panel
 *                            per rank count; points that do not fit are
 *                            hollow on a dashed line and a colored band at
 *                            the bottom marks each strategy's OOM range;
 *                            throughput crossovers are black dots labelled
 *                            with P, OOM crossings dotted vertical lines
 *   <base>-memory.<ext>      peak memory per GPU (GiB) vs P per strategy
 *                            (log-log), one panel per rank count, with the
 *                            GPU capacity line
 *   <base>-winner.<ext>      the fastest strategy that fits at each (P, N)
 *                            grid point ("none fits" in grey)
 *   <base>-wire.<ext>        bytes sent per rank per iteration vs N per
 *                            strategy (log-log) at the middle P of the grid
 *   <base>-breakdown.<ext>   each strategy's iteration at the middle P and
 *                            the largest N as stacked parts (compute,
 *                            recompute, copies, optimizer, exposed time per
 *                            primitive, waiting for the CPU): why it wins
 * Each is written whole or not at all (gnuplot writes temporary names in
 * the destination directory; they are renamed once gnuplot has succeeded).
 */
#ifndef CS_PLOT_H
#define CS_PLOT_H

#include <stddef.h>

#include "base/error.h"
#include "study/sweep.h"

/* Draws the five plots for n points (any order) and nc crossings (c may be
 * NULL when nc is 0). Runs `gnuplot` from PATH on a script and data files
 * in a temporary directory ($TMPDIR or /tmp, removed afterwards).
 * Returns 0; CS_EINVAL if path does not end in .svg or .png or there are no
 * points; CS_EIO if gnuplot is missing ("gnuplot not found: install
 * gnuplot-nox (tools/install-deps.sh)"), fails (its first error line is in
 * the message) or an output cannot be written. */
int cs_plot_crossover(const cs_sweep_spec *s, const cs_sweep_point *pts, size_t n,
                      const cs_crossing *c, size_t nc, const char *path, cs_diag *d);
/* What cs_plot_crossover checks before drawing, for a caller to check
 * before its work: the extension, the five files' directory, gnuplot on
 * PATH. Returns 0, CS_EINVAL or CS_EIO as cs_plot_crossover. */
int cs_plot_check(const char *path, cs_diag *d);
/* The files written for path (which ends in .svg or .png): how many, and
 * the name of file k (caller frees); each is written through its
 * temporary cs_buf_temp_name(name). */
size_t cs_plot_file_count(void);
char *cs_plot_file_name(const char *path, size_t k);

#endif
