/* SPDX-License-Identifier: MIT */
/*
 * ncclmodel.h - the constants of NCCL's public cost model, as defaults.
 *
 * Source: NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel and
 * ncclTopoGetAlgoTime), NCCL 2.19-2.23 series: baseLat, hwLat per link type
 * (NVLink, PCI, network), the LL / LL128 bandwidth factors and the
 * per-channel caps (llMaxBws, perChMaxRingLL128Bws, perChMaxTreeBws,
 * perChMaxTreeLL128Bws), the Tree correction factors by size, and the ring
 * "plateau" latency factor; NVLS (NVLink SHARP) as in ncclmodel.c. Every cluster starts from these values and may
 * override them in YAML (section `collectives:`) or by calibration.
 */
#ifndef CS_NCCLMODEL_H
#define CS_NCCLMODEL_H

typedef enum cs_algo_id { CS_ALGO_RING, CS_ALGO_TREE, CS_ALGO_NVLS, CS_ALGO_COUNT } cs_algo_id;
typedef enum cs_proto { CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE, CS_PROTO_COUNT } cs_proto;
/* The link class NCCL's latency table is indexed by. */
typedef enum cs_hw { CS_HW_NVLINK, CS_HW_PCI, CS_HW_NET, CS_HW_COUNT } cs_hw;
/* NCCL's compute-capability rows of the per-channel cap tables. */
typedef enum cs_arch { CS_ARCH_VOLTA, CS_ARCH_AMPERE, CS_ARCH_HOPPER, CS_ARCH_BLACKWELL, CS_ARCH_COUNT } cs_arch;

/* Value meaning "not set in YAML: use the default". */
#define CS_UNSET (-1.0)

const char *cs_algo_name(cs_algo_id a);   /* "ring", "tree", "nvls" */
const char *cs_proto_name(cs_proto p);    /* "ll", "ll128", "simple" */
const char *cs_hw_name(cs_hw h);          /* "nvlink", "pci", "net" */
int cs_algo_parse(const char *s, cs_algo_id *out);   /* 0 or CS_EINVAL */
int cs_proto_parse(const char *s, cs_proto *out);    /* 0 or CS_EINVAL */

/* Architecture row from a CUDA compute capability (70, 80, 90, 100). */
cs_arch cs_ncclmodel_arch(int compute_capability);

/* Default latencies in seconds (NCCL's tables are in microseconds). */
double cs_ncclmodel_base_latency_s(cs_algo_id a, cs_proto p);
double cs_ncclmodel_hw_latency_s(cs_hw h, cs_algo_id a, cs_proto p);

/* NCCL's per-channel bandwidth caps in bytes/s. scale: 0 = 1 node,
 * 1 = 2 nodes, 2 = 4+ nodes (NCCL's index2). */
double cs_ncclmodel_ll_max_Bps(cs_arch arch, int scale);
double cs_ncclmodel_ring_ll128_max_per_channel_Bps(cs_arch arch, int scale);
double cs_ncclmodel_tree_max_per_channel_Bps(cs_arch arch, int scale);
double cs_ncclmodel_tree_ll128_max_per_channel_Bps(cs_arch arch, int scale);
/* Tree bandwidth correction for medium sizes (ncclTopoGetAlgoTime). */
double cs_ncclmodel_tree_correction(cs_proto p, double bytes);
/* NCCL's NVLS efficiency for an architecture (nvlsEfficiency: 0 before
 * Hopper, where NVLS does not exist). */
double cs_ncclmodel_nvls_efficiency(cs_arch arch);
/* NCCL's NVLS busBw -> algbw ratio (5/6, NVLS and NVLS_TREE). */
#define CS_NCCL_NVLS_RATIO (5.0 / 6.0)
/* Scale index (0, 1, 2) for a node count. */
int cs_ncclmodel_scale(int nodes);

#endif
