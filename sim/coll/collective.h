/* SPDX-License-Identifier: MIT */
/*
 * collective.h - collective operations on a topology: algorithm and
 * protocol choice, the closed-form cost, and the discrete-event run.
 *
 * Sizes follow nccl-tests: for all_gather and reduce_scatter `bytes` is the
 * total over ranks (count x ranks x type size); for all_to_all it is a
 * rank's whole send buffer (bytes / ranks to each rank, itself included:
 * src/alltoall.cu AlltoAllGetCollByteCount); for send_recv the buffer each
 * rank sends to its successor (src/sendrecv.cu); for the others it is the
 * buffer size. busbw factors are nccl-tests' (docs/PERFORMANCE.md, the
 * *GetBw functions): 2(n-1)/n all_reduce, (n-1)/n all_gather,
 * reduce_scatter and all_to_all, 1 broadcast, reduce and send_recv.
 * all_to_all and send_recv are NCCL's point-to-point operations (grouped
 * ncclSend/ncclRecv); only the p2p algorithm row implements them.
 */
#ifndef CS_COLLECTIVE_H
#define CS_COLLECTIVE_H

#include "base/dtype.h"
#include "base/error.h"
#include "coll/algos.h"
#include "coll/ncclmodel.h"
#include "coll/topology.h"

typedef enum cs_op {
    CS_OP_ALL_REDUCE,
    CS_OP_ALL_GATHER,
    CS_OP_REDUCE_SCATTER,
    CS_OP_BROADCAST,
    CS_OP_REDUCE,
    CS_OP_ALL_TO_ALL, /* point-to-point: every rank to every rank */
    CS_OP_SEND_RECV,  /* point-to-point: rank r to r + 1 (nccl-tests' sendrecv) */
    CS_OP_COUNT
} cs_op;

typedef enum cs_engine_kind { CS_ENGINE_ANALYTIC, CS_ENGINE_DES, CS_ENGINE_COUNT } cs_engine_kind;

#define CS_CHOICE_AUTO (-1)

const char *cs_op_name(cs_op op); /* "all_reduce", ... */
/* nccl-tests' binary without "_perf": "all_reduce", "alltoall", "sendrecv" */
const char *cs_op_nccl_tests_name(cs_op op);
/* A name, an alias (nccl-tests' "alltoall", "sendrecv") or either with
 * "_perf" (the nccl-tests binary); 0 or CS_EINVAL. */
int cs_op_parse(const char *s, cs_op *out);
const char *cs_engine_name(cs_engine_kind k);
/* nccl-tests bus-bandwidth factor for op on n ranks. */
double cs_op_busbw_factor(cs_op op, int n);

/* One request: algo / proto are a cs_algo_id / cs_proto or CS_CHOICE_AUTO. */
typedef struct cs_coll_request {
    cs_op op;
    double bytes;
    int algo;
    int proto;
    cs_engine_kind engine;
} cs_coll_request;

typedef struct cs_coll_result {
    cs_algo_id algo;
    cs_proto proto;
    double time_s;
    double algbw_Bps; /* bytes / time */
    double busbw_Bps; /* algbw x busbw factor */
    /* the closed form's latency term, either engine: its time for 0 bytes
     * with this choice's channels and latencies (NCCL's time = latency +
     * bytes / algbw; pipeline fill that grows with bytes is not in it) */
    double latency_s;
    unsigned long long events; /* DES events run (0 for analytic) */
} cs_coll_result;

/* Whether algorithm a implements op (its row's ops; NCCL: tree is
 * all_reduce only; nvls all_reduce, all_gather and reduce_scatter; p2p
 * all_to_all and send_recv, which no other row implements). */
int cs_collective_supports(cs_algo_id a, cs_op op);

/* Closed-form time of one (algo, proto) choice, on the channels NCCL runs
 * the size on (fewer for small messages: enqueue.cc); returns 0 and sets
 * *time_s, or CS_ENOTSUP when the algorithm does not implement op or the
 * protocol is disabled on this topology (LL128 off). Allocation-free: safe
 * for sweeps. */
int cs_collective_time(const cs_topology *t, cs_op op, double bytes, cs_algo_id a,
                       cs_proto p, double *time_s);

/* NCCL's protocol bandwidth factor for (algo, proto) in this situation
 * (op, nodes, ranks per node), before any collectives.bw_factor override:
 * e.g. ring LL 1/4 for all_reduce or across nodes, 1/3 otherwise. */
double cs_collective_nccl_bw_factor(const cs_topology *t, cs_op op, cs_algo_id a, cs_proto p);

/* Picks the fastest supported (algo, proto) by closed-form time, as NCCL's
 * tuner does (with every channel: NCCL lowers the channel count only after
 * choosing); forced choices restrict the search (NCCL_ALGO/NCCL_PROTO).
 * CS_ENOTSUP with a message if nothing allowed implements op. */
int cs_collective_choose(const cs_topology *t, cs_op op, double bytes, int algo,
                         int proto, cs_algo_id *a_out, cs_proto *p_out, cs_diag *d);

/* Chooses, then evaluates with the requested engine. */
int cs_collective_run(const cs_topology *t, const cs_coll_request *req,
                      cs_coll_result *res, cs_diag *d);

/* One measured or predicted collective (the CSV contract columns). */
typedef struct cs_coll_row {
    cs_op op;
    cs_algo_id algo;
    cs_proto proto;
    cs_engine_kind engine;
    int ranks;
    double size_bytes; /* nccl-tests convention: total for all_gather/reduce_scatter */
    double count;      /* nccl-tests' count column: elements per rank buffer
                        * (all_to_all: per peer) */
    cs_dtype dtype;
    double time_us;
    double algbw_GBps;
    double busbw_GBps;
} cs_coll_row;

#endif
