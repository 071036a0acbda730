/* SPDX-License-Identifier: MIT */
/*
 * sbi.h - calls into the SBI firmware (OpenSBI under QEMU), RISC-V
 * Supervisor Binary Interface specification v1.0.
 */
#ifndef RISCV64_SBI_H
#define RISCV64_SBI_H

#include <stdint.h>

/* Extension IDs (SBI spec chapters 3, 5, 9, 10). */
#define SBI_EXT_LEGACY_PUTCHAR	0x01
#define SBI_EXT_BASE		0x10
#define SBI_EXT_HSM		0x48534d	/* "HSM" */
#define SBI_EXT_IPI		0x735049	/* "sPI" */
#define SBI_EXT_SRST		0x53525354	/* "SRST" */

#define SBI_BASE_PROBE_EXT	3
#define SBI_HSM_HART_START	0
#define SBI_HSM_HART_STOP	1
#define SBI_HSM_HART_STATUS	2
#define SBI_SRST_RESET		0

#define SBI_SRST_SHUTDOWN	0
#define SBI_SRST_REASON_NONE	0
#define SBI_SRST_REASON_FAILURE	1

/* HSM states (SBI spec 9.1). */
#define SBI_HSM_STARTED		0
#define SBI_HSM_STOPPED		1

#define SBI_SUCCESS		0
#define SBI_ERR_ALREADY_AVAILABLE	(-6)

struct sbiret {
	long error;
	long value;
};

struct sbiret sbi_call(unsigned long ext, unsigned long fid,
		       unsigned long a0, unsigned long a1, unsigned long a2);

/* Nonzero when the firmware implements extension @ext. */
long sbi_probe_extension(unsigned long ext);

/**
 * sbi_hart_start - start a stopped hart in S-mode at @start
 * @hartid: the hart
 * @start: physical address; the hart enters it with a0 = @hartid,
 *         a1 = @opaque, satp = 0 and sstatus.SIE = 0 (SBI spec 9.2)
 *
 * Return: an SBI error code (0 on success).
 */
long sbi_hart_start(unsigned long hartid, unsigned long start,
		    unsigned long opaque);
long sbi_hart_status(unsigned long hartid);
/* Stop the calling hart (returns only on failure, with the error). */
long sbi_hart_stop(void);
/* A supervisor software interrupt (sip.SSIP) on hart @hartid (SBI 6.1). */
long sbi_send_ipi_hart(unsigned long hartid);
void sbi_legacy_putchar(char c);
void sbi_shutdown(int failure);

#endif /* RISCV64_SBI_H */
