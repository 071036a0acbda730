/* SPDX-License-Identifier: MIT */
/*
 * sbi.c - the SBI calling convention: extension in a7, function in a6,
 * arguments in a0-a5, error back in a0 and value in a1 (SBI spec 3.1).
 */
#include "sbi.h"

struct sbiret sbi_call(unsigned long ext, unsigned long fid,
		       unsigned long a0, unsigned long a1, unsigned long a2)
{
	register unsigned long r_a0 __asm__("a0") = a0;
	register unsigned long r_a1 __asm__("a1") = a1;
	register unsigned long r_a2 __asm__("a2") = a2;
	register unsigned long r_a6 __asm__("a6") = fid;
	register unsigned long r_a7 __asm__("a7") = ext;
	struct sbiret ret;

	__asm__ volatile("ecall"
			 : "+r"(r_a0), "+r"(r_a1)
			 : "r"(r_a2), "r"(r_a6), "r"(r_a7)
			 : "memory");
	ret.error = (long)r_a0;
	ret.value = (long)r_a1;
	return ret;
}

long sbi_probe_extension(unsigned long ext)
{
	struct sbiret r = sbi_call(SBI_EXT_BASE, SBI_BASE_PROBE_EXT, ext, 0, 0);

	return r.error ? 0 : r.value;
}

long sbi_hart_start(unsigned long hartid, unsigned long start,
		    unsigned long opaque)
{
	return sbi_call(SBI_EXT_HSM, SBI_HSM_HART_START, hartid, start,
			opaque).error;
}

long sbi_hart_status(unsigned long hartid)
{
	struct sbiret r = sbi_call(SBI_EXT_HSM, SBI_HSM_HART_STATUS, hartid,
				   0, 0);

	return r.error ? r.error : r.value;
}

long sbi_hart_stop(void)
{
	return sbi_call(SBI_EXT_HSM, SBI_HSM_HART_STOP, 0, 0, 0).error;
}

/* hart_mask bit 0 with hart_mask_base = the hart: just that one. */
long sbi_send_ipi_hart(unsigned long hartid)
{
	return sbi_call(SBI_EXT_IPI, 0, 1, hartid, 0).error;
}

void sbi_legacy_putchar(char c)
{
	/* Legacy extensions take no function ID (SBI spec 5). */
	sbi_call(SBI_EXT_LEGACY_PUTCHAR, 0, (unsigned char)c, 0, 0);
}

void sbi_shutdown(int failure)
{
	sbi_call(SBI_EXT_SRST, SBI_SRST_RESET, SBI_SRST_SHUTDOWN,
		 failure ? SBI_SRST_REASON_FAILURE : SBI_SRST_REASON_NONE, 0);
}
