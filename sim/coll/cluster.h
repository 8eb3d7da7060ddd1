/* SPDX-License-Identifier: MIT */
/*
 * cluster.h - the validated description of a cluster (what a YAML file or a
 * built-in preset says), as a plain value type.
 *
 * A cs_cluster holds numbers in SI base units (bytes, bytes/s, seconds,
 * FLOP/s). It is filled only by the config wing (from YAML) so every field is
 * validated; callers may copy it freely (no owned pointers).
 * The meaning of each field and its default is documented in
 * configs/clusters/README.md and in `collsim collective --help`.
 */
#ifndef CS_CLUSTER_H
#define CS_CLUSTER_H

#include "base/dtype.h"
#include "coll/algos.h"
#include "coll/ncclmodel.h"

typedef enum cs_fabric { CS_FABRIC_NVSWITCH, CS_FABRIC_NVLINK, CS_FABRIC_PCIE } cs_fabric;
typedef enum cs_net_topology { CS_NET_RAIL_OPTIMIZED, CS_NET_FAT_TREE } cs_net_topology;

#define CS_MAX_OVERRIDES 64

/* A DES-only change to one physical link's bandwidth. */
typedef struct cs_link_override {
    int node;          /* node index (0-based) */
    int gpu;           /* local GPU index for kind=gpu, NIC index for kind=nic */
    int is_nic;        /* 0: the GPU's fabric port, 1: the node's NIC */
    double bw_Bps;     /* new bandwidth per direction */
    int line, column;  /* where it was written, for messages */
} cs_link_override;

/* A DES-only slow rank: its sends take slowdown x longer, start later. */
typedef struct cs_straggler {
    int rank;
    double slowdown;   /* >= 1 */
    double delay_s;    /* start delay */
    int line, column;
} cs_straggler;

typedef struct cs_cluster {
    char name[64];
    int nodes;
    int gpus_per_node;

    struct {
        char model[64];
        double memory_bytes;
        double peak_flops[CS_DTYPE_COUNT]; /* dense, FLOP/s; 0 = unsupported */
        double hbm_Bps;
        int compute_capability;            /* 70, 80, 90, 100 */
        /* the SM clock the tflops are quoted at and the one the GPU
         * holds under load (a power limit, a clock lock), MHz; 0: not
         * given. Tensor throughput scales with the SM clock
         * (cs_compute_peak_flops): what the time model runs at; MFU keeps
         * the quoted peak */
        double peak_clock_mhz, sustained_clock_mhz;
        /* the compute model's efficiencies (train/compute.h; the cited
         * values are configs/clusters/NAME.yaml's `gpu.compute`); a field a
         * YAML leaves out comes from the preset of the same compute
         * capability (config.c) */
        struct {
            double gemm;               /* max achievable matmul fraction of peak */
            double gemm_half_flops;    /* GEMM work at which it reaches half of gemm */
            double tile;               /* GEMM tile edge for tile quantisation */
            /* fused attention, forward + backward, causal, d = 128: the
             * fraction of peak at long sequences and the sequence length at
             * which a kernel reaches half of it; per kernel (cs_attn_kernel) */
            double flash2, flash2_half_seq;
            double flash1, flash1_half_seq;
            double hbm;                /* achievable fraction of hbm_Bps, large streams */
            double hbm_half_bytes;     /* kernel size at which it reaches half of hbm */
            double kernel_floor_s;     /* shortest kernel */
            double sms;                /* streaming multiprocessors (0: not a GPU) */
            /* the GPU's software stack, optional (CS_UNSET: not given), a
             * training's default where its scenario leaves the key out
             * (training.h cs_training_comm_compute_slowdown /
             * cs_training_fsdp_hook_cpu_s); what `calibrate
             * --training-runs` writes when the runs determine them */
            double comm_compute_slowdown; /* compute and collectives both slowed by this while
                                           * they overlap */
            double fsdp1_hook_cpu_s;   /* FSDP1's hooks, CPU per block per pass */
            double fsdp2_hook_cpu_s;   /* FSDP2's */
        } compute;
    } gpu;

    struct {
        cs_fabric kind;
        double bw_Bps;      /* per GPU per direction, datasheet line rate */
        double efficiency;  /* achievable fraction of bw_Bps for collectives */
        double latency_s;   /* extra per-hop latency added to NCCL's hwLat */
        /* GPUs that share one NVLink domain (intra.domain_size), a multiple
         * of gpus_per_node: trays of a rack on NVLink switches (GB200 /
         * GB300 NVL72: 72); 0 = the node alone (topology.c) */
        int domain_size;
    } intra;

    struct {
        int nics_per_node;
        double nic_bw_Bps;  /* per NIC per direction, line rate */
        double efficiency;  /* achievable fraction of the NIC path's rate,
                             * NCCL's min(line rate, pcie) (topology.c) */
        /* the GPU-NIC PCIe path per direction, one link's rate (each NIC's
         * own link and each GPU's: topology.c caps a NIC, and the NICs a
         * GPU drives together, at it); 0: not limited (no `inter.pcie`) */
        double pcie_Bps;
        double latency_s;   /* network latency per hop (NCCL latencyInter) */
        cs_net_topology topology;
        double oversubscription; /* >= 1; fat-tree core taper */
        int sharp;          /* the switches reduce in the network (NVIDIA
                             * SHARP): NCCL's CollNet rows can run */
    } inter;

    struct {
        int channels;
        double net_overhead_s;  /* NCCL getNetOverhead (1 us Intel x86) */
        double base_latency_s[CS_ALGO_COUNT][CS_PROTO_COUNT];
        double hw_latency_s[CS_HW_COUNT][CS_ALGO_COUNT][CS_PROTO_COUNT];
        double proto_bw_factor[CS_ALGO_COUNT][CS_PROTO_COUNT];
        double algo_efficiency[CS_ALGO_COUNT]; /* multiplies bus bandwidth */
        double chunk_bytes[CS_PROTO_COUNT];    /* pipelining unit per channel */
        int ll128_enabled;
        /* collectives.<flag key> (nvls: NVLink SHARP, NVSwitch fabric and
         * compute capability >= 90); 1 for algorithms without a flag */
        int algo_enabled[CS_ALGO_COUNT];
    } coll;

    int n_overrides;
    cs_link_override overrides[CS_MAX_OVERRIDES];
    int n_stragglers;
    cs_straggler stragglers[CS_MAX_OVERRIDES];
} cs_cluster;

#endif
