/* SPDX-License-Identifier: MIT */
/*
 * report.h - the collective report: rows of `collsim collective` (and the
 * columns collsim-hw measurements share) in every format of out/table.h.
 * Number formats are fixed, so the same input gives the same bytes; the
 * bytes go through base/buf.h (written whole or not at all).
 */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "base/buf.h"
#include "coll/collective.h"
#include "coll/topology.h"
#include "out/table.h"

/* The CSV header line (without newline): the column contract. */
const char *cs_report_collective_csv_header(void);

/* nccl-tests lists every rank ("#  Rank N ... on HOST device D ...")
 * up to this many ranks; above, one comment line says how many. */
#define CS_REPORT_RANK_LINES 256

/* Renders rows. `title` is printed as a comment in table format and as a
 * "title" field in JSON; CSV has no preamble. topo (may be NULL): the
 * ranks, listed in the table's "# Using devices" block as nccl-tests
 * lists its devices, host "nodeK", device the rank's index on its node. */
void cs_report_collective(cs_buf *b, cs_format f, const char *title, const cs_topology *topo,
                          const cs_coll_row *rows, size_t n);

#endif
