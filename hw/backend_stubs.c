/* SPDX-License-Identifier: MIT */
/*
 * backend_stubs.c - backends left out of this build (hw/meson.build
 * defines CS_HW_HAVE_MPI / CS_HW_HAVE_NCCL for those it found) answer
 * NULL, and the commands report "not built in" (exit 77).
 */
#include "backend.h"

#ifndef CS_HW_HAVE_MPI
const cs_hw_backend *cs_hw_backend_mpi(void) { return 0; }
#endif
#ifndef CS_HW_HAVE_NCCL
const cs_hw_backend *cs_hw_backend_nccl(void) { return 0; }
#endif
