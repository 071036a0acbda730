/* SPDX-License-Identifier: MIT */
/*
 * umsi_glue.h - where the kernel hands over to the uMSI library.
 */
#ifndef KERNEL_UMSI_GLUE_H
#define KERNEL_UMSI_GLUE_H

#include <stdbool.h>

void umsi_glue_run(void);	/* create the system, apply policy, probe */
bool umsi_glue_failed(void);	/* a check failed: exit with FAIL */

#endif /* KERNEL_UMSI_GLUE_H */
