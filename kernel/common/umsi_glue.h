/* SPDX-License-Identifier: MIT */
/*
 * umsi_glue.h - where the kernel hands over to the uMSI library.
 */
#ifndef KERNEL_UMSI_GLUE_H
#define KERNEL_UMSI_GLUE_H

#include <stdbool.h>

void umsi_glue_run(void);	/* create the system, apply policy, probe */
bool umsi_glue_failed(void);	/* a check failed: exit with FAIL */

/*
 * After set-up, the boot CPU serves live events (hot plug, surprise
 * removal) in a work loop: umsi_glue_work_pending() says whether there
 * is something to do (any context), umsi_glue_work() does it (process
 * context, interrupts enabled).
 */
bool umsi_glue_work_pending(void);
void umsi_glue_work(void);

/* Vectors the matrix holds, for the ready line. */
uint32_t umsi_glue_allocated(void);

#endif /* KERNEL_UMSI_GLUE_H */
