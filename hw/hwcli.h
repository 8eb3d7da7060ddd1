/* SPDX-License-Identifier: MIT */
/*
 * hwcli.h - internal to the collsim-hw executable: the commands main.c
 * dispatches to (cmd_*.c). Each takes argv from its own name on and
 * returns the exit status (hw/README.md).
 */
#ifndef CS_HW_HWCLI_H
#define CS_HW_HWCLI_H

int cs_hw_cmd_bench(int argc, char **argv);
int cs_hw_cmd_compute(int argc, char **argv);
int cs_hw_cmd_replay(int argc, char **argv);

#endif
