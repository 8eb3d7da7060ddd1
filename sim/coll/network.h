/* SPDX-License-Identifier: MIT */
/*
 * network.h - the link-level transfer model that runs inside the engine.
 *
 * Links have a finite capacity (bytes/s per direction: a link is one
 * direction). A flow moves bytes along a path of up to CS_NET_MAX_PATH
 * links; concurrent flows on a link split its capacity equally (processor
 * sharing), and a flow runs at
 *     rate = min(cap_Bps, factor * min over its links of capacity / nflows)
 * where `factor` is the protocol's payload efficiency (e.g. NCCL LL carries
 * one flag per data word) and `cap_Bps` a per-flow processing cap (NCCL's
 * per-channel maxima). Rates are recomputed whenever a flow starts or ends
 * on a shared link. The last byte arrives `latency_s` after it leaves; only
 * then the flow's handler runs. Deterministic: ties resolve by the engine's
 * (time, sequence) order. The model follows the flow-level (fluid) network
 * abstraction of SimGrid (Velho et al. 2013, ACM TOMACS 23(4)) with equal
 * rather than max-min sharing; departures are listed in network.c.
 */
#ifndef CS_NETWORK_H
#define CS_NETWORK_H

#include <stdint.h>

#include "base/engine.h"

#define CS_NET_MAX_PATH 4

typedef struct cs_network cs_network;

/* Creates a network bound to engine e (not owned). Caller frees with
 * cs_network_free. */
cs_network *cs_network_new(cs_engine *e);
void cs_network_free(cs_network *n);

/* Adds a link; returns its id (0, 1, 2, ...). capacity_Bps > 0. */
int cs_network_add_link(cs_network *n, double capacity_Bps);
double cs_network_link_capacity(const cs_network *n, int link);
int cs_network_link_count(const cs_network *n);
/* Bytes carried by a link so far (for tests and reports). */
double cs_network_link_bytes(const cs_network *n, int link);

/* What to send: bytes >= 0 over links[0..nlinks) (1..CS_NET_MAX_PATH);
 * factor in (0, inf); cap_Bps <= 0 means no cap. on_sent (may be NULL)
 * runs when the last byte leaves, on_arrive latency_s later; both get
 * (ctx, a, b). */
typedef struct cs_flow_spec {
    const int *links;
    int nlinks;
    double bytes;
    double factor;
    double cap_Bps;
    double latency_s;
    cs_event_fn on_sent;
    cs_event_fn on_arrive;
    void *ctx;
    int64_t a, b;
} cs_flow_spec;

/* The rate a flow of (factor, cap_Bps) gets while it has links of
 * capacities caps[0..n) to itself: what cs_network_start_flow computes for
 * it then, bit for bit (schedules that never share a link use it to skip
 * the engine, coll/maxplus.h). */
double cs_network_solo_rate(const double *caps, int n, double factor, double cap_Bps);

/* Starts a flow at the current engine time. */
void cs_network_start_flow(cs_network *n, const cs_flow_spec *spec);

/* Flows currently transmitting. */
int cs_network_active_flows(const cs_network *n);

#endif
