/* SPDX-License-Identifier: MIT */
/*
 * umsi/msg.h - an MSI message: the (address, data) pair a device writes
 * to raise an interrupt. What they mean is the interrupt controller's
 * business: the x86 format is in umsi/x86.h, and a back end composes them
 * (umsi/ctl.h).
 */
#ifndef UMSI_MSG_H
#define UMSI_MSG_H

#include <umsi/types.h>

/**
 * struct umsi_msg - one MSI/MSI-X message
 * @address: the full 64-bit message address
 * @data: message data; MSI uses the low 16 bits, MSI-X all 32
 */
struct umsi_msg {
	uint64_t address;
	uint32_t data;
};

#endif /* UMSI_MSG_H */
