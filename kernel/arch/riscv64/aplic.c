// SPDX-License-Identifier: MIT
/*
 * aplic.c - the S-level APLIC domain in MSI delivery mode (RISC-V AIA 1.0,
 * chapter 4): PCI INTx lines as the wired sources QEMU virt connects to
 * it (the host bridge's interrupt-map: INTA-D of the root bus's slots on
 * sources 32-35), each forwarded as an MSI to a hart's S-level IMSIC file.
 *
 * OpenSBI delegates the sources from the M-level domain (riscv,delegate)
 * and sets the S-level MSI address configuration (smsiaddrcfg) from the
 * device tree; this domain is the kernel's: domaincfg IE and DM (MSI
 * mode), each source's mode (sourcecfg: level high or low, as the map
 * says), target (hart index << 18 | EIID) and enable (setienum /
 * clrienum). uMSI composes the message (the hart's file, the identity)
 * and the host's gsi_program (host.c) writes it here.
 *
 * Level in MSI mode (AIA 4.9.2): a level source's pending bit is cleared
 * when its MSI is sent and is not set again while the input stays high.
 * So after each dispatch of an identity that is a source's, the kernel
 * reads the source's rectified input (in_clrip) and, if the line is still
 * asserted (not served, or shared with a device that is still waiting),
 * writes the source to setipnum_le: it becomes pending and another MSI
 * goes out. (QEMU 7.2's setipnum pends a level source whatever its input,
 * hence the read first.)
 */
#include "rv.h"
#include "aplic.h"

#define APLIC_DOMAINCFG		0x0000
#define APLIC_DOMAINCFG_IE	(1u << 8)
#define APLIC_DOMAINCFG_DM	(1u << 2)
#define APLIC_SOURCECFG(i)	(0x0004 + 4 * ((i) - 1))
#define APLIC_SM_LEVEL_HIGH	6u
#define APLIC_SM_LEVEL_LOW	7u
#define APLIC_IN_CLRIP		0x1d00
#define APLIC_SETIENUM		0x1edc
#define APLIC_CLRIENUM		0x1fdc
#define APLIC_SETIPNUM_LE	0x2000
#define APLIC_TARGET(i)		(0x3004 + 4 * ((i) - 1))
#define APLIC_TARGET_HART_SHIFT	18

static uint64_t aplic_base;
static uint32_t aplic_sources;
/* Per CPU, which source each identity is (0: none), for the retrigger. */
static uint16_t wired_of[RV_MAX_HARTS][APLIC_MAX_IDS];
/* Per source, the (CPU, identity) it was last aimed at. */
static struct { uint16_t cpu, id; } aimed[APLIC_MAX_SOURCES + 1];

int aplic_init(uint64_t base, uint32_t nsources)
{
	if (!base || !nsources)
		return -1;
	aplic_base = base;
	aplic_sources = nsources > APLIC_MAX_SOURCES ? APLIC_MAX_SOURCES :
			nsources;
	mmio_write32(base + APLIC_DOMAINCFG,
		     APLIC_DOMAINCFG_IE | APLIC_DOMAINCFG_DM);
	kprintf("aplic: S-level domain 0x%llx, %u sources, MSI delivery mode (domaincfg 0x%x)\n",
		(unsigned long long)base, aplic_sources,
		mmio_read32(base + APLIC_DOMAINCFG));
	return 0;
}

int aplic_program(uint32_t source, uint32_t cpu, uint32_t hart, uint32_t id,
		  bool level_low, bool masked)
{
	if (!aplic_base || !source || source > aplic_sources ||
	    cpu >= RV_MAX_HARTS || hart > 0x3fff || !id || id >= APLIC_MAX_IDS)
		return -1;
	/* Disabled while it changes: no MSI to a half-written target. */
	mmio_write32(aplic_base + APLIC_CLRIENUM, source);
	mmio_write32(aplic_base + APLIC_SOURCECFG(source),
		     level_low ? APLIC_SM_LEVEL_LOW : APLIC_SM_LEVEL_HIGH);
	mmio_write32(aplic_base + APLIC_TARGET(source),
		     hart << APLIC_TARGET_HART_SHIFT | id);
	if (aimed[source].id)
		__atomic_store_n(&wired_of[aimed[source].cpu][aimed[source].id],
				 0, __ATOMIC_RELAXED);
	aimed[source].cpu = (uint16_t)cpu;
	aimed[source].id = (uint16_t)id;
	__atomic_store_n(&wired_of[cpu][id], (uint16_t)source, __ATOMIC_RELAXED);
	if (!masked)
		mmio_write32(aplic_base + APLIC_SETIENUM, source);
	return 0;
}

void aplic_after_dispatch(uint32_t cpu, uint32_t id)
{
	uint16_t source;

	if (cpu >= RV_MAX_HARTS || id >= APLIC_MAX_IDS)
		return;
	source = __atomic_load_n(&wired_of[cpu][id], __ATOMIC_RELAXED);
	/* in_clrip reads the rectified inputs: pend again only if high. */
	if (source && (mmio_read32(aplic_base + APLIC_IN_CLRIP +
				   4 * (source / 32)) >> (source % 32) & 1))
		mmio_write32(aplic_base + APLIC_SETIPNUM_LE, source);
}
