/* SPDX-License-Identifier: MIT */
/*
 * memopts.h - internal to the train wing: the time of torchtune's two
 * memory options in the iteration graph (memopts.c): activation
 * offloading's host copies on their own stream, and the optimizer step
 * run inside backward, one task per layer (optimizer_in_backward).
 */
#ifndef CS_MEMOPTS_H
#define CS_MEMOPTS_H

#include "base/error.h"
#include "coll/cluster.h"
#include "train/wbuild.h"

/* The rate of the GPU's link to host memory, bytes/s per direction, into
 * *out: the cluster's inter.pcie (each GPU's PCIe link, as each NIC's,
 * at NCCL's rate), else a PCIe-only node's fabric rate (intra.bandwidth:
 * the GPU's one link). 0, or CS_EINVAL with d filled when the cluster
 * gives neither (e.g. GB200 / GB300, whose GPUs reach the host over
 * NVLink-C2C). */
int cs__memopts_host_link_Bps(const cs_cluster *c, double *out, cs_diag *d);

/* Activation offloading, around block `layer`'s forward compute task
 * `fwd` (just added): that forward waits for an earlier block's copy to
 * the host (the forward stash's bound), then the copy of what the block
 * saves goes to the host on the offload stream. No-op without
 * activation_offloading. */
void cs__memopts_forward(cs_wbuild *b, int layer, int fwd);
/* Before block `layer`'s backward: the copy back from the host; returns
 * its id for the backward to wait for, or -1 without offloading. */
int cs__memopts_fetch(cs_wbuild *b, int layer);

/* optimizer_in_backward: the step of `params` parameters of this rank
 * (named "optimizer step <layer>", or "optimizer step <what>" for
 * layer -1) on the compute stream once task `after` has made their
 * gradients; returns its id. */
int cs__memopts_step(cs_wbuild *b, int layer, double params, const char *what, int after);
/* The task after which the gradients made by task `after` are this
 * rank's to step: `after` itself, or where the strategy shards gradients
 * the last gradient reduction (reduce-scatter, all-reduce) added since
 * it; -1 when none was (a unit's reduction comes with its last block). */
int cs__memopts_reduction(const cs_wbuild *b, int after);

#endif
