/* SPDX-License-Identifier: MIT */
/*
 * watchdog.h - the last line of defence against a hung measurement.
 *
 * A blocking MPI collective, MPI_Init or a NCCL communicator init cannot
 * be polled, so collsim-hw arms a process-wide ITIMER_REAL around each
 * measurement. If it fires, the SIGALRM handler writes the message given
 * at arming time (async-signal-safe write(2)) and calls _exit(5): every
 * CSV row measured so far is already on disk (rows are fsync'ed one by
 * one), and mpirun tears down the other ranks. This is process state, not
 * library state: it lives in the executable only.
 */
#ifndef CS_HW_WATCHDOG_H
#define CS_HW_WATCHDOG_H

/* Arms (or re-arms) the timer: after seconds, prints
 * "collsim-hw: rank R: timeout: WHAT did not finish within S s ..." and
 * exits with status 5. seconds <= 0 disarms. */
void cs_hw_watchdog_arm(double seconds, int rank, const char *what, const char *kept);
void cs_hw_watchdog_disarm(void);

#endif
