/* SPDX-License-Identifier: MIT */
/*
 * pcireset.c - knowing when a PCI function is fresh from reset.
 *
 * uMSI may skip masking the unused MSI-X entries of a function it is told
 * is in its reset state (UMSI_PCI_ADD_FRESH): reset leaves every entry
 * masked (PCI 3.0, 6.8.2.9: the Mask Bit's default is 1). The kernel
 * knows that in two cases:
 *
 *  - it reset the function itself: a Function Level Reset (PCIe 4.0,
 *    6.6.2) on functions that offer it, when `umsi.flr=` asks for one;
 *  - at cold boot, when the firmware left the MSI-X capability as reset
 *    made it: MSI-X Enable and Function Mask clear, and every table entry
 *    masked (read here: one read of each entry's Vector Control, N reads
 *    for an N-entry table, beside the 4N+2 accesses of uMSI's set-up).
 *
 * A wrong "fresh" is harmless by construction: what uMSI relies on (every
 * entry masked, MSI-X off) is exactly what the cold-boot judgement reads,
 * and nothing else writes the table before uMSI enables MSI-X. Address
 * and data of a masked entry do not matter: uMSI writes both before it
 * unmasks one, and a masked entry sends nothing. A wrong "not fresh"
 * costs what every set-up cost before: one mask write per table entry.
 */
#include <umsi/pci_regs.h>

#include "kernel.h"
#include "pci.h"

/* PCI Express capability registers beyond umsi/pci_regs.h (PCIe 4.0, 7.5.3). */
#define PCIE_DEVSTA        0x0a
#define  PCIE_DEVSTA_TRPND  0x0020	/* Transactions Pending */
#define PCIE_DEVCTL2       0x28	/* capability version 2 and later */
#define  PCIE_FLAGS_VERSION 0x000f

#define FLR_WAIT_US      100000	/* PCIe 4.0, 6.6.2: 100 ms after FLR */
#define FLR_PENDING_US   100000	/* Transactions Pending to drain */
#define FLR_READY_US     1000000	/* config reads returning all-ones */

/* Config space a Function Level Reset clears and we put back. */
struct pci_saved {
	uint32_t hdr[16];	/* the type 0 header, 0x00-0x3f */
	uint16_t devctl, devctl2;
};

static struct pci_saved flr_saved[PCI_MAX_DEVS];

bool pci_has_flr(const struct pci_dev *d)
{
	return d->header_type == UMSI_PCI_HEADER_NORMAL && d->pcie_cap &&
	       (pci_cfg_read(d->bdf, d->pcie_cap + UMSI_PCIE_DEVCAP, 4) &
		UMSI_PCIE_DEVCAP_FLR);
}

/* The MSI-X table of @d, mapped, with its size; 0 when it has none usable. */
static uint64_t msix_table(const struct pci_dev *d, uint32_t *size)
{
	uint32_t loc, ctrl;
	const struct pci_bar *b;

	if (!d->msix_cap)
		return 0;
	ctrl = pci_cfg_read(d->bdf, d->msix_cap + UMSI_MSIX_FLAGS, 2);
	loc = pci_cfg_read(d->bdf, d->msix_cap + UMSI_MSIX_TABLE, 4);
	b = &d->bar[loc & UMSI_MSIX_BIR_MASK];
	*size = (ctrl & UMSI_MSIX_FLAGS_QSIZE) + 1;
	if ((loc & UMSI_MSIX_BIR_MASK) > 5 || !b->assigned ||
	    (b->kind != PCI_BAR_MEM32 && b->kind != PCI_BAR_MEM64) ||
	    (loc & UMSI_MSIX_OFFSET_MASK) + (uint64_t)*size * 16 > b->size)
		return 0;
	return (uint64_t)mm_map_mmio(b->addr, b->size) +
	       (loc & UMSI_MSIX_OFFSET_MASK);
}

/*
 * Is the MSI-X state of @d as reset leaves it, as far as uMSI relies on
 * it? Fills d->stale with the first thing that says no. Reads each
 * entry's Vector Control word (its Mask bit) and nothing else, with
 * memory decoding turned on for the time it takes if the firmware left
 * it off.
 */
static bool msix_untouched(struct pci_dev *d)
{
	uint32_t ctrl = pci_cfg_read(d->bdf, d->msix_cap + UMSI_MSIX_FLAGS, 2);
	uint32_t cmd, size = 0, i;
	uint64_t t;
	bool ok = true;

	if (ctrl & UMSI_MSIX_FLAGS_ENABLE) {
		ksnprintf(d->stale, sizeof(d->stale), "msix_enabled");
		return false;
	}
	if (ctrl & UMSI_MSIX_FLAGS_MASKALL) {
		ksnprintf(d->stale, sizeof(d->stale), "function_mask");
		return false;
	}
	t = msix_table(d, &size);
	if (!t) {
		ksnprintf(d->stale, sizeof(d->stale), "table_unreachable");
		return false;
	}
	cmd = pci_cfg_read(d->bdf, UMSI_PCI_COMMAND, 2);
	if (!(cmd & UMSI_PCI_CMD_MEMORY))
		pci_cfg_write(d->bdf, UMSI_PCI_COMMAND, 2,
			      cmd | UMSI_PCI_CMD_MEMORY);
	for (i = 0; i < size && ok; i++) {
		uint64_t e = t + 16ull * i;

		if (!(mmio_read32(e + UMSI_MSIX_ENTRY_CTRL) &
		      UMSI_MSIX_CTRL_MASKBIT)) {
			ksnprintf(d->stale, sizeof(d->stale),
				  "entry_unmasked:%u", i);
			ok = false;
		}
	}
	if (!(cmd & UMSI_PCI_CMD_MEMORY))
		pci_cfg_write(d->bdf, UMSI_PCI_COMMAND, 2, cmd);
	return ok;
}

/*
 * Start a Function Level Reset of @d: save what it clears, stop the
 * function (decoding and Bus Master off, INTx off), give outstanding
 * requests up to 100 ms to complete (Device Status: Transactions
 * Pending), then set Initiate FLR. The caller waits 100 ms before
 * pci_flr_finish().
 */
static void pci_flr_start(struct pci_dev *d, struct pci_saved *s)
{
	uint16_t pcie = d->pcie_cap;
	uint64_t end;

	for (int i = 0; i < 16; i++)
		s->hdr[i] = pci_cfg_read(d->bdf, (uint16_t)(4 * i), 4);
	s->devctl = (uint16_t)pci_cfg_read(d->bdf, pcie + UMSI_PCIE_DEVCTL, 2);
	s->devctl2 = (uint16_t)pci_cfg_read(d->bdf, pcie + PCIE_DEVCTL2, 2);
	pci_cfg_write(d->bdf, UMSI_PCI_COMMAND, 2, UMSI_PCI_CMD_INTX_DISABLE);
	end = clock_ns() + FLR_PENDING_US * 1000;
	while ((pci_cfg_read(d->bdf, pcie + PCIE_DEVSTA, 2) & PCIE_DEVSTA_TRPND) &&
	       clock_ns() < end)
		cpu_relax();
	pci_cfg_write(d->bdf, pcie + UMSI_PCIE_DEVCTL, 2,
		      s->devctl | UMSI_PCIE_DEVCTL_BCR_FLR);
}

/*
 * After the 100 ms: wait until the function answers configuration reads
 * again, then put back BARs, expansion ROM, cache line size, latency
 * timer, interrupt line and the PCIe Device Control registers, and the
 * Command register last (its decode bits make the BARs live).
 */
static bool pci_flr_finish(struct pci_dev *d, const struct pci_saved *s)
{
	uint64_t end = clock_ns() + FLR_READY_US * 1000;
	uint16_t pcie = d->pcie_cap;

	while ((pci_cfg_read(d->bdf, UMSI_PCI_VENDOR_ID, 2) & 0xffff) == 0xffff) {
		if (clock_ns() >= end)
			return false;
		udelay(1000);
	}
	for (uint16_t off = UMSI_PCI_BAR0; off <= 0x30; off += 4)
		pci_cfg_write(d->bdf, off, 4, s->hdr[off / 4]);
	pci_cfg_write(d->bdf, 0x0c, 1, s->hdr[3] & 0xff);
	pci_cfg_write(d->bdf, 0x0d, 1, (s->hdr[3] >> 8) & 0xff);
	pci_cfg_write(d->bdf, UMSI_PCI_INTERRUPT_LINE, 1, s->hdr[15] & 0xff);
	pci_cfg_write(d->bdf, pcie + UMSI_PCIE_DEVCTL, 2,
		      s->devctl & ~UMSI_PCIE_DEVCTL_BCR_FLR);
	if ((pci_cfg_read(d->bdf, pcie + UMSI_PCIE_FLAGS, 2) &
	     PCIE_FLAGS_VERSION) >= 2)
		pci_cfg_write(d->bdf, pcie + PCIE_DEVCTL2, 2, s->devctl2);
	pci_cfg_write(d->bdf, UMSI_PCI_COMMAND, 2, s->hdr[1] & 0xffff);
	return true;
}

/* Play a firmware or earlier kernel that left the last MSI-X entry live. */
static void msix_dirty(struct pci_dev *d)
{
	uint32_t size = 0;
	uint64_t t = msix_table(d, &size), e;
	uint32_t cmd = pci_cfg_read(d->bdf, UMSI_PCI_COMMAND, 2);

	if (!t)
		return;
	pci_cfg_write(d->bdf, UMSI_PCI_COMMAND, 2, cmd | UMSI_PCI_CMD_MEMORY);
	e = t + 16ull * (size - 1);
	mmio_write32(e + UMSI_MSIX_ENTRY_ADDR_LO, 0xfee00000u);
	mmio_write32(e + UMSI_MSIX_ENTRY_ADDR_HI, 0);
	mmio_write32(e + UMSI_MSIX_ENTRY_DATA, 0xef);
	mmio_write32(e + UMSI_MSIX_ENTRY_CTRL, 0);
	pci_cfg_write(d->bdf, UMSI_PCI_COMMAND, 2, cmd);
	kprintf("pci 0000:%02x:%02x.%u msix entry %u left live (umsi.dirty)\n",
		PCI_BUS(d->bdf), PCI_DEV(d->bdf), PCI_FN(d->bdf), size - 1);
}

/* Is @d named in the comma list @list of BB:DD.F (or "all")? */
static bool bdf_listed(const char *list, uint32_t bdf)
{
	char want[16];

	(void)ksnprintf(want, sizeof(want), "%02x:%02x.%u", PCI_BUS(bdf),
			PCI_DEV(bdf), PCI_FN(bdf));
	return cmdline_list_has(list, want);
}

/*
 * Decide, for every function, whether it is fresh from reset, resetting
 * those `umsi.flr=` names first: `dirty` (those whose MSI-X is not
 * judged untouched), `all` (every function offering FLR), or a list of
 * BB:DD.F. All resets run together: one 100 ms wait for all of them.
 * `umsi.fresh=off` trusts nothing (every set-up masks the whole table).
 */
void pci_judge_fresh(void)
{
	char flr[128], dirty[128], val[8];
	bool trust = !(cmdline_value("umsi.fresh", val, sizeof(val)) &&
		       !strcmp(val, "off"));
	bool any = false;

	if (!cmdline_value("umsi.flr", flr, sizeof(flr)))
		flr[0] = '\0';
	if (cmdline_value("umsi.dirty", dirty, sizeof(dirty))) {
		for (uint32_t i = 0; i < pci_ndevs; i++)
			if (pci_devs[i].msix_cap &&
			    bdf_listed(dirty, pci_devs[i].bdf))
				msix_dirty(&pci_devs[i]);
	}
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct pci_dev *d = &pci_devs[i];
		bool can = pci_has_flr(d) && flr[0] && strcmp(flr, "off");
		bool dirty_only = can && !strcmp(flr, "dirty");
		bool reset = can && !dirty_only && bdf_listed(flr, d->bdf);
		bool clean = false;

		/* A function about to be reset, or when nothing is trusted
		 * and no reset depends on it, needs no judging. */
		if (d->msix_cap && !reset && (trust || dirty_only)) {
			clean = msix_untouched(d);
			reset = dirty_only && !clean;
		}
		d->fresh = clean && trust ? PCI_FRESH_BOOT : PCI_FRESH_NO;
		if (d->msix_cap && !trust && !d->stale[0])
			ksnprintf(d->stale, sizeof(d->stale), "umsi.fresh=off");
		if (!reset)
			continue;
		pci_flr_start(d, &flr_saved[i]);
		d->flr_pending = true;
		any = true;
	}
	if (!any)
		return;
	udelay(FLR_WAIT_US);
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct pci_dev *d = &pci_devs[i];

		if (!d->flr_pending)
			continue;
		d->flr_pending = false;
		if (!pci_flr_finish(d, &flr_saved[i])) {
			kprintf("pci 0000:%02x:%02x.%u: no answer after FLR\n",
				PCI_BUS(d->bdf), PCI_DEV(d->bdf), PCI_FN(d->bdf));
			d->fresh = PCI_FRESH_NO;
			ksnprintf(d->stale, sizeof(d->stale), "flr_failed");
			continue;
		}
		d->fresh = trust ? PCI_FRESH_FLR : PCI_FRESH_NO;
		ksnprintf(d->stale, sizeof(d->stale), "%s",
			  trust ? "" : "umsi.fresh=off");
		d->reset_done = true;
		kprintf("pci 0000:%02x:%02x.%u function level reset\n",
			PCI_BUS(d->bdf), PCI_DEV(d->bdf), PCI_FN(d->bdf));
	}
}
