/* SPDX-License-Identifier: MIT */
/*
 * ncclmodel.h - the constants of NCCL's public cost model, as defaults:
 * every NCCL number collsim's collectives use is named here, with the NCCL
 * file and function it comes from.
 *
 * Source: NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel and
 * ncclTopoGetAlgoTime), NCCL 2.19-2.23 series: baseLat, hwLat per link type
 * (NVLink, PCI, network), the LL / LL128 bandwidth factors and the
 * per-channel caps (llMaxBws, perChMaxRingLL128Bws, perChMaxTreeBws,
 * perChMaxTreeLL128Bws), the Tree correction factors by size, and the ring
 * "plateau" latency factor; NVLS (NVLink SHARP) as in ncclmodel.c. Every
 * cluster starts from these values and may override them in YAML (section
 * `collectives:`) or by calibration. Which algorithm uses which entry is
 * said by its row (coll/algo.h, algo_<name>.c).
 */
#ifndef CS_NCCLMODEL_H
#define CS_NCCLMODEL_H

typedef enum cs_proto { CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE, CS_PROTO_COUNT } cs_proto;
/* The link class NCCL's latency table is indexed by. */
typedef enum cs_hw { CS_HW_NVLINK, CS_HW_PCI, CS_HW_NET, CS_HW_COUNT } cs_hw;
/* NCCL's compute-capability rows of the per-channel cap tables. */
typedef enum cs_arch { CS_ARCH_VOLTA, CS_ARCH_AMPERE, CS_ARCH_HOPPER, CS_ARCH_BLACKWELL, CS_ARCH_COUNT } cs_arch;

/* Value meaning "not set in YAML: use the default". */
#define CS_UNSET (-1.0)

const char *cs_proto_name(cs_proto p);    /* "ll", "ll128", "simple" */
const char *cs_hw_name(cs_hw h);          /* "nvlink", "pci", "net" */
int cs_proto_parse(const char *s, cs_proto *out);    /* 0 or CS_EINVAL */

/* Architecture row from a CUDA compute capability (70, 80, 90, 100). */
cs_arch cs_ncclmodel_arch(int compute_capability);

/* One algorithm's entries of NCCL's latency tables, in microseconds
 * (tuning.cc, "Latencies in us"): baseLat[algo][proto] and
 * hwLat[NVLINK|PCI|NET][algo][proto]. */
typedef struct cs_nccl_latency {
    double base_us[CS_PROTO_COUNT];
    double hw_us[CS_HW_COUNT][CS_PROTO_COUNT];
} cs_nccl_latency;
extern const cs_nccl_latency cs_ncclmodel_ring_latency;
extern const cs_nccl_latency cs_ncclmodel_tree_latency;
extern const cs_nccl_latency cs_ncclmodel_nvls_latency;
extern const cs_nccl_latency cs_ncclmodel_nvlstree_latency;

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
/* Scale index (0, 1, 2) for a node count. */
int cs_ncclmodel_scale(int nodes);

/* ---- bandwidth refinements: src/graph/tuning.cc ncclTopoTuneModel,
 * "Various model refinements" (2.19), as payload factors on busBw ---- */
/* Ring/LL: busBw x 1/4 across nodes or for all_reduce and reduce, x 1/3
 * otherwise (then min(llMaxBw, ...)). */
#define CS_NCCL_RING_LL_FACTOR (1.0 / 4.0)
#define CS_NCCL_RING_LL_FACTOR_1NODE (1.0 / 3.0)
/* Ring/LL128: busBw x 0.92 (NCCL's comment beside it: 120.0/128.0), x 0.7
 * when ppn < 2 ("sending/receiving at the same GPU through the NIC"). */
#define CS_NCCL_RING_LL128_FACTOR 0.92
#define CS_NCCL_RING_LL128_FACTOR_1PPN 0.7
/* Tree: busBw x .92 (then min(nChannels x perChMaxTreeBw, ...)). */
#define CS_NCCL_TREE_FACTOR 0.92
/* Tree/LL: busBw x 1.0/3.8 on top of the tree factor. */
#define CS_NCCL_TREE_LL_DIVISOR 3.8
/* Tree/LL128: busBw x 7/9 on one node, x 120/128 across nodes. */
#define CS_NCCL_TREE_LL128_FACTOR_1NODE (7.0 / 9.0)
#define CS_NCCL_TREE_LL128_FACTOR (120.0 / 128.0)
/* busBw -> algbw: tree x .5 (the up and down halves of a channel), NVLS and
 * NVLS_TREE x 5/6 ("Convert bus BW to algorithm BW"). */
#define CS_NCCL_TREE_RATIO 0.5
#define CS_NCCL_NVLS_RATIO (5.0 / 6.0)

/* ---- latency refinements ---- */
/* ncclTopoTuneModel: "Inter-node rings still have to launch nsteps * net
 * overhead", netOverhead x 3 for Simple. */
#define CS_NCCL_NET_OVERHEAD_SIMPLE_MULT 3.0
/* ncclTopoGetAlgoTime: "Plateau effect of ring", ring/Simple all_reduce
 * across nodes once nBytes / (nChannels x nRanks) >= 64: lat x 1.9 when
 * minCompCap < 80, else x 1.4. */
#define CS_NCCL_PLATEAU_MIN_BYTES 64
#define CS_NCCL_PLATEAU_MIN_CC 80
#define CS_NCCL_PLATEAU_PRE_AMPERE 1.9
#define CS_NCCL_PLATEAU 1.4

/* ---- search channels: src/graph/connect.cc ncclTopoPostset ---- */
/* NCCL runs every channel its topology search found twice ("nChannels =
 * comm->nChannels = std::min(MAXCHANNELS,nChannels*2)"). tuning.cc's
 * per-channel caps count the search's channels (graphs[a]->nChannels x
 * perChMaxTreeBw), a cluster's `channels` the runtime's (comm->nChannels),
 * so a cap per runtime channel is the per-search-channel cap x this share.
 * Not derived: the second doubling across nodes on Hopper when the ring's
 * search speed exceeds 45 GB/s (2.18-2.21 up to 32 channels; 2.22+ only
 * below 16, which an 8-NIC node at 16 runtime channels does not meet). */
#define CS_NCCL_SEARCH_SHARE 0.5

/* ---- channels for small messages: src/enqueue.cc topoGetAlgoInfo ("Ring/Tree
 * channel tuning": while nBytes < nc x nt x threadThreshold, nc--), with nt
 * = maxThreads (src/graph/tuning.cc ncclTopoTuneModel; NCCL_*_MAX_NTHREADS
 * of src/include/device.h) and threadThresholds (NCCL_*_THREAD_THRESHOLD of
 * src/include/comm.h, x nRanks for ring/LL). NCCL's tuner picks the
 * algorithm and protocol with every channel; the reduction follows. ---- */
#define CS_NCCL_SIMPLE_MAX_NTHREADS 512
#define CS_NCCL_LL_MAX_NTHREADS 512
#define CS_NCCL_LL128_MAX_NTHREADS 640
/* ring/Simple: 256 threads when bwIntra x nChannels <= PCI_BW (topo.h,
 * 12 GB/s: PCIe Gen3 x16), else NCCL_SIMPLE_MAX_NTHREADS */
#define CS_NCCL_SIMPLE_PCI_NTHREADS 256
#define CS_NCCL_PCI_BW_Bps 12e9
#define CS_NCCL_LL_THREAD_THRESHOLD 8
#define CS_NCCL_LL128_THREAD_THRESHOLD 8
#define CS_NCCL_SIMPLE_THREAD_THRESHOLD 64
/* Channels NCCL runs bytes on, from `channels`: the largest nc <= channels
 * (at least 1) with bytes >= nc x nthreads x threshold. */
int cs_ncclmodel_channels(double bytes, int channels, int nthreads, double threshold);
/* maxThreads and threadThreshold of ring and tree for protocol p. */
int cs_ncclmodel_max_threads(cs_proto p);
double cs_ncclmodel_thread_threshold(cs_proto p);

/* ---- NVLSTree chunking: src/transport/nvls.cc ncclNvlsTuning and
 * src/enqueue.cc calcCollChunking ---- */
/* NCCL_NVLS_CHUNKSIZE default (ncclParamNvlsChunkSize: 128 KiB); the tree's
 * ceiling nvlsTreeMaxChunkSize is 64 KiB at 4+ nodes, else the chunk size. */
#define CS_NCCL_NVLS_CHUNK_BYTES (128.0 * 1024)
#define CS_NCCL_NVLSTREE_MAX_CHUNK_4NODES (64.0 * 1024)
#define CS_NCCL_NVLSTREE_4NODES 4

/* ---- availability ---- */
/* NVLS needs NVSwitch multicast (src/transport/nvls.cc ncclNvlsInit:
 * CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED), which Hopper (sm_90) and later
 * have; tuning.cc disables NVLS across nodes without CollNet
 * ("if (comm->nNodes > 1) algoEnable[NCCL_ALGO_NVLS] = 0"). */
#define CS_NCCL_NVLS_MIN_CC 90

#endif
