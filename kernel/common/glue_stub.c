/* SPDX-License-Identifier: MIT */
/*
 * glue_stub.c - stand-in for the uMSI hand-over until the library's
 * system and dispatch API exist.
 */
#include "kernel.h"
#include "umsi_glue.h"

void umsi_glue_run(void)
{
	kprintf("umsi: library not linked (stub)\n");
}

bool umsi_glue_failed(void)
{
	return false;
}

bool umsi_glue_work_pending(void)
{
	return false;
}

void umsi_glue_work(void)
{
}

uint32_t umsi_glue_allocated(void)
{
	return 0;
}
