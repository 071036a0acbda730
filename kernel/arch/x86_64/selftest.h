/* SPDX-License-Identifier: MIT */
/*
 * selftest.h - kernel self-tests (umsi.selftest=NAME).
 */
#ifndef KERNEL_SELFTEST_H
#define KERNEL_SELFTEST_H

#include <stdbool.h>
#include <stdint.h>

int selftest_run(const char *name);	/* failures, 0 when all passed */
bool selftest_irq(uint8_t vector);	/* true when a self-test owned it */

#endif /* KERNEL_SELFTEST_H */
