/* SPDX-License-Identifier: MIT */
/*
 * ncclmodel.c - NCCL's published cost-model constants, as default values.
 *
 * Source: NVIDIA/nccl src/graph/tuning.cc, NCCL 2.19-2.23 series:
 *   baseLat[algo][proto]            ("Latencies in us")
 *   hwLat[NVLINK|PCI|NET][algo][proto]
 *   llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws
 *   ("LL128 max BW per channel", GB/s, rows Volta/Ampere/Hopper/Blackwell,
 *    columns 1 node / 2 nodes / 4+ nodes)
 *   treeCorrectionFactor[proto][log2(bytes/64)] (ncclTopoGetAlgoTime).
 * NVLS (NVLink SHARP, Hopper+ NVSwitch) from NVIDIA/nccl src/graph/tuning.cc
 * at commit b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2 (2.19 series):
 *   baseLat[NVLS] = {0, 0, 0}; hwLat[NVLINK][NVLS] = {0, 0, 23},
 *   hwLat[PCI][NVLS] = {0, 0, 0}, hwLat[NET][NVLS] = {0, 0, 18} (Simple only:
 *   LL / LL128 entries are 0 and NCCL skips them);
 * and nvlsEfficiency {Volta 0, Ampere 0, Hopper 0.85, Blackwell 0.74} from
 * NCCL's later NVLS cost model (src/tuning/nvls.cc, "NVLS efficiency
 * factor"), which 2.19 lacks: the 2.19 bandwidth form with the later
 * efficiency (see algo_nvls.c).
 * Departure: the Tree/Simple hardware latencies use the 2.23 values
 * (NVLink 4 us, PCI 4 us, NET 14 us) which replaced the 28 us placeholders
 * of earlier releases. Tables are read-only; clusters copy them and may
 * override any entry (YAML `collectives:`) or have them calibrated.
 */
#include "coll/ncclmodel.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"

#define GBPS 1e9

static const char *const proto_names[CS_PROTO_COUNT] = {"ll", "ll128", "simple"};
static const char *const hw_names[CS_HW_COUNT] = {"nvlink", "pci", "net"};

/* tuning.cc baseLat (us): Tree {6.8, 14.0, 0}, Ring {6.6, 14.0, 8.4},
 * NVLS {0, 0, 0}; hwLat (us): NVLink Tree {.6, 1.25, 4}, Ring {.6, 1.9, 3.4};
 * PCI Tree {1.0, 1.9, 4}, Ring {1.0, 2.5, 5.7};
 * NET Tree {5.0, 8.5, 14}, Ring {2.7, 4.0, 14.0};
 * NVLS (Simple only) NVLink 23, PCI 0, NET 18. */
const cs_nccl_latency cs_ncclmodel_ring_latency = {
    .base_us = {6.6, 14.0, 8.4},
    .hw_us = {[CS_HW_NVLINK] = {0.6, 1.9, 3.4}, [CS_HW_PCI] = {1.0, 2.5, 5.7},
              [CS_HW_NET] = {2.7, 4.0, 14.0}},
};
const cs_nccl_latency cs_ncclmodel_tree_latency = {
    .base_us = {6.8, 14.0, 0.0},
    .hw_us = {[CS_HW_NVLINK] = {0.6, 1.25, 4.0}, [CS_HW_PCI] = {1.0, 1.9, 4.0},
              [CS_HW_NET] = {5.0, 8.5, 14.0}},
};
const cs_nccl_latency cs_ncclmodel_nvls_latency = {
    .base_us = {0.0, 0.0, 0.0},
    .hw_us = {[CS_HW_NVLINK] = {0.0, 0.0, 23.0}, [CS_HW_PCI] = {0.0, 0.0, 0.0},
              [CS_HW_NET] = {0.0, 0.0, 18.0}},
};
/* NVLSTree at b6475625 (2.20.3; 2.27 has NVLink 25): baseLat {0, 0, 0}; hwLat NVLink {0, 0, 23},
 * PCI {0, 0, 0}, NET {0, 0, 14} (Simple only). */
const cs_nccl_latency cs_ncclmodel_nvlstree_latency = {
    .base_us = {0.0, 0.0, 0.0},
    .hw_us = {[CS_HW_NVLINK] = {0.0, 0.0, 23.0}, [CS_HW_PCI] = {0.0, 0.0, 0.0},
              [CS_HW_NET] = {0.0, 0.0, 14.0}},
};

/* nvlsEfficiency (later NCCL, src/tuning/nvls.cc). */
static const double nvls_eff[CS_ARCH_COUNT] = {
    [CS_ARCH_VOLTA] = 0.0, [CS_ARCH_AMPERE] = 0.0, [CS_ARCH_HOPPER] = 0.85, [CS_ARCH_BLACKWELL] = 0.74,
};

/* tuning.cc llMaxBws (GB/s): rows are GPU arch for 1 node and CPU vendor
 * for multi-node in NCCL; we index by GPU arch throughout (Intel rows for
 * multi-node are the Volta row's 2-/4-node entries). */
static const double ll_max_GBps[CS_ARCH_COUNT][3] = {
    [CS_ARCH_VOLTA] = {39.0, 39.0, 20.4},
    [CS_ARCH_AMPERE] = {87.7, 22.5, 19.0},
    [CS_ARCH_HOPPER] = {141.0, 45.0, 35.0},
    [CS_ARCH_BLACKWELL] = {2 * 141.0, 2 * 45.0, 2 * 35.0},
};
static const double ring_ll128_max_GBps[CS_ARCH_COUNT][3] = {
    [CS_ARCH_VOLTA] = {20.0, 20.0, 20.0},
    [CS_ARCH_AMPERE] = {20.0, 20.0, 20.0},
    [CS_ARCH_HOPPER] = {36.7, 36.7, 36.7},
    [CS_ARCH_BLACKWELL] = {2 * 36.7, 2 * 36.7, 2 * 36.7},
};
static const double tree_ll128_max_GBps[CS_ARCH_COUNT][3] = {
    [CS_ARCH_VOLTA] = {20.0, 20.0, 20.0},
    [CS_ARCH_AMPERE] = {20.0, 20.0, 20.0},
    [CS_ARCH_HOPPER] = {36.7, 36.7, 29.0},
    [CS_ARCH_BLACKWELL] = {2 * 36.7, 2 * 36.7, 2 * 29.0},
};
static const double tree_max_GBps[CS_ARCH_COUNT][3] = {
    [CS_ARCH_VOLTA] = {26.5, 18.5, 10.0},
    [CS_ARCH_AMPERE] = {24.0, 23.6, 17.8},
    [CS_ARCH_HOPPER] = {38.7, 41.4, 36.0},
    [CS_ARCH_BLACKWELL] = {70.0, 42.8, 24.0},
};

/* tuning.cc treeCorrectionFactor, powers of two from 64 B to 256 MiB. */
#define TREE_CORR_N 23
static const double tree_corr[CS_PROTO_COUNT][TREE_CORR_N] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

const char *cs_proto_name(cs_proto p)
{
    CS_ASSERT(p >= 0 && p < CS_PROTO_COUNT);
    return proto_names[p];
}

const char *cs_hw_name(cs_hw h)
{
    CS_ASSERT(h >= 0 && h < CS_HW_COUNT);
    return hw_names[h];
}

int cs_proto_parse(const char *s, cs_proto *out)
{
    for (int i = 0; i < CS_PROTO_COUNT; i++)
        if (!strcasecmp(s, proto_names[i])) {
            *out = (cs_proto)i;
            return 0;
        }
    return CS_EINVAL;
}

/* tuning.cc ncclTopoTuneModel: compCapIndex = minCompCap >= 90 ? HOPPER :
 * >= 80 ? AMPERE : VOLTA (later releases add >= 100 BLACKWELL). */
cs_arch cs_ncclmodel_arch(int cc)
{
    if (cc >= 100) return CS_ARCH_BLACKWELL;
    if (cc >= 90) return CS_ARCH_HOPPER;
    if (cc >= 80) return CS_ARCH_AMPERE;
    return CS_ARCH_VOLTA;
}

/* tuning.cc ncclTopoTuneModel: index2 = nNodes <= 2 ? nNodes-1 : 2. */
int cs_ncclmodel_scale(int nodes)
{
    return nodes <= 2 ? (nodes < 1 ? 0 : nodes - 1) : 2;
}

double cs_ncclmodel_ll_max_Bps(cs_arch arch, int scale)
{
    return ll_max_GBps[arch][scale] * GBPS;
}

double cs_ncclmodel_ring_ll128_max_per_channel_Bps(cs_arch arch, int scale)
{
    return ring_ll128_max_GBps[arch][scale] * GBPS;
}

double cs_ncclmodel_tree_max_per_channel_Bps(cs_arch arch, int scale)
{
    return tree_max_GBps[arch][scale] * GBPS;
}

double cs_ncclmodel_tree_ll128_max_per_channel_Bps(cs_arch arch, int scale)
{
    return tree_ll128_max_GBps[arch][scale] * GBPS;
}

double cs_ncclmodel_nvls_efficiency(cs_arch arch)
{
    CS_ASSERT(arch >= 0 && arch < CS_ARCH_COUNT);
    return nvls_eff[arch];
}

double cs_ncclmodel_tree_correction(cs_proto p, double bytes)
{
    /* NCCL: logSize = log2i(nBytes >> 6); applied when logSize < 23. */
    double units = floor(bytes / 64.0);
    if (units < 1.0) return tree_corr[p][0];
    int log_size = (int)floor(log2(units));
    if (log_size >= TREE_CORR_N) return 1.0;
    return tree_corr[p][log_size];
}

/* NCCL's loop, solved: it stops at the largest nc with bytes >= nc x nt x
 * threshold, floor(bytes / (nt x threshold)), within [1, channels]. */
int cs_ncclmodel_channels(double bytes, int channels, int nthreads, double threshold)
{
    double nc = floor(bytes / ((double)nthreads * threshold));
    if (!(nc < channels)) return channels;
    return nc < 1 ? 1 : (int)nc;
}

int cs_ncclmodel_max_threads(cs_proto p)
{
    static const int nt[CS_PROTO_COUNT] = {CS_NCCL_LL_MAX_NTHREADS, CS_NCCL_LL128_MAX_NTHREADS,
                                           CS_NCCL_SIMPLE_MAX_NTHREADS};
    CS_ASSERT(p >= 0 && p < CS_PROTO_COUNT);
    return nt[p];
}

double cs_ncclmodel_thread_threshold(cs_proto p)
{
    static const double th[CS_PROTO_COUNT] = {CS_NCCL_LL_THREAD_THRESHOLD,
                                              CS_NCCL_LL128_THREAD_THRESHOLD,
                                              CS_NCCL_SIMPLE_THREAD_THRESHOLD};
    CS_ASSERT(p >= 0 && p < CS_PROTO_COUNT);
    return th[p];
}
