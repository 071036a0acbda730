/* SPDX-License-Identifier: MIT */
/*
 * host.h - the kernel's implementation of the uMSI host interface.
 */
#ifndef KERNEL_HOST_H
#define KERNEL_HOST_H

#include <stdbool.h>

struct umsi_host_ops;

extern const struct umsi_host_ops kernel_host_ops;
void host_set_debug(bool on);	/* pass uMSI's debug messages to COM1 */

#endif /* KERNEL_HOST_H */
