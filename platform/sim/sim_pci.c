/* SPDX-License-Identifier: MIT */
/*
 * sim_pci.c - PCI functions: configuration space with the specification's
 * read-only and write-1-to-clear bits, BARs assigned as firmware would,
 * and the device side of MSI, MSI-X and INTx.
 *
 * Behaviour follows PCI Local Bus 3.0 (6.1-6.2 header, 6.2.5 BARs, 6.8
 * MSI/MSI-X) and PCI Express Base 4.0 (7.5, 7.7). QEMU's hw/pci/msi.c and
 * msix.c were read for how a device model sends a message; nothing is
 * copied.
 *
 * Every register lives in d->cfg; d->m->wmask says which bits software may
 * write and d->m->w1c which bits a written 1 clears. The layout (capability
 * offsets, table location, BAR sizes) is fixed when the function is added.
 */
#include <stdlib.h>
#include <string.h>

#include <umsi/pci_regs.h>

#include "sim_priv.h"

/* ---- Register helpers ---------------------------------------------------- */

static uint16_t cfg16(const struct sim_dev *d, uint16_t off)
{
	return (uint16_t)(d->cfg[off] | d->cfg[off + 1] << 8);
}

static uint32_t cfg32(const struct sim_dev *d, uint16_t off)
{
	return (uint32_t)d->cfg[off] | (uint32_t)d->cfg[off + 1] << 8 |
	       (uint32_t)d->cfg[off + 2] << 16 | (uint32_t)d->cfg[off + 3] << 24;
}

static void put(uint8_t *a, uint16_t off, uint8_t width, uint32_t v)
{
	for (uint8_t i = 0; i < width; i++)
		a[off + i] = (uint8_t)(v >> (8 * i));
}

static void set_cfg16(struct sim_dev *d, uint16_t off, uint16_t v)
{
	put(d->cfg, off, 2, v);
}

static void set_cfg32(struct sim_dev *d, uint16_t off, uint32_t v)
{
	put(d->cfg, off, 4, v);
}

static uint32_t ones(uint8_t width)
{
	return width == 4 ? 0xffffffffu : (1u << (8 * width)) - 1;
}

/* The bytes of @d's configuration space held: 256 in cfg_low, or 4 KiB. */
static uint32_t sim_cfg_size(const struct sim_dev *d)
{
	return d->cfg == d->cfg_low ? sizeof(d->cfg_low) : SIM_CFG_SIZE;
}

int sim_cfg_full(struct sim_dev *d)
{
	uint8_t *big;

	if (d->cfg != d->cfg_low)
		return 0;
	big = calloc(1, SIM_CFG_SIZE);
	if (!big)
		return -UMSI_ENOMEM;
	memcpy(big, d->cfg_low, sizeof(d->cfg_low));
	d->cfg = big;
	return 0;
}

/* A new function's configuration space: the 256 bytes inside it. */
static void cfg_init(struct sim_dev *d)
{
	d->cfg = d->cfg_low;
}

bool sim_cfg_access_ok(uint16_t off, uint8_t width)
{
	if (width != 1 && width != 2 && width != 4)
		return false;
	return (off & (width - 1)) == 0 && off + width <= SIM_CFG_SIZE;
}

/* ---- Capability registers ------------------------------------------------- */

static uint16_t msi_data_off(const struct sim_dev *d)
{
	return (uint16_t)(d->msi_off + (d->desc.msi.is64 ? UMSI_MSI_DATA_64 :
					UMSI_MSI_DATA_32));
}

static uint16_t msi_mask_off(const struct sim_dev *d)
{
	return (uint16_t)(d->msi_off + (d->desc.msi.is64 ? UMSI_MSI_MASK_64 :
					UMSI_MSI_MASK_32));
}

static uint16_t msi_pending_off(const struct sim_dev *d)
{
	return (uint16_t)(d->msi_off + (d->desc.msi.is64 ?
					UMSI_MSI_PENDING_64 :
					UMSI_MSI_PENDING_32));
}

static uint16_t msi_size(const struct sim_dev *d)
{
	uint16_t n = d->desc.msi.is64 ? 0x0e : 0x0a;

	if (d->desc.msi.maskbit)
		n = (uint16_t)(n + 10);
	return n;
}

static bool msi_enabled(const struct sim_dev *d)
{
	return d->msi_off &&
	       (cfg16(d, d->msi_off + UMSI_MSI_FLAGS) & UMSI_MSI_FLAGS_ENABLE);
}

static bool msix_enabled(const struct sim_dev *d)
{
	return d->msix_off &&
	       (cfg16(d, d->msix_off + UMSI_MSIX_FLAGS) &
		UMSI_MSIX_FLAGS_ENABLE);
}

static bool msix_function_masked(const struct sim_dev *d)
{
	return cfg16(d, d->msix_off + UMSI_MSIX_FLAGS) &
	       UMSI_MSIX_FLAGS_MASKALL;
}

/* log2 of the messages the device may use: MME, but never above MMC. */
static unsigned int msi_mme(const struct sim_dev *d)
{
	return (cfg16(d, d->msi_off + UMSI_MSI_FLAGS) & UMSI_MSI_FLAGS_QSIZE) >>
	       UMSI_MSI_FLAGS_QSIZE_SHIFT;
}

static unsigned int msi_log2_enabled(const struct sim_dev *d)
{
	unsigned int mme = msi_mme(d);

	return mme > d->msi_mmc ? d->msi_mmc : mme;
}

/* ---- Sending ----------------------------------------------------------------- */

/*
 * The requester ID the root sees on @d's writes, as the fabric rewrites
 * it on the way up (PCI Express to PCI/PCI-X Bridge Specification 2.3;
 * QEMU's pci_req_id_cache_get): a PCI Express to PCI bridge forwards a
 * request from its secondary side as (that bus, devfn 0), a conventional
 * PCI-to-PCI bridge as itself; PCIe ports and switches keep it. The last
 * bridge on the way to the root decides. Bounded: a bus list that loops
 * ends after 256 bridges.
 */
uint32_t sim_requester_locked(struct umsi_sim *sim, const struct sim_dev *d)
{
	uint32_t rid = d->bdf;
	umsi_bdf_t at = d->bdf;

	for (int depth = 0; depth < 256; depth++) {
		struct sim_dev *b = sim_bridge_to_locked(sim, at);
		unsigned int type;

		if (!b || b == d)
			break;
		if (!b->pcie_off) {
			rid = b->bdf;
		} else {
			type = (cfg16(b, b->pcie_off + UMSI_PCIE_FLAGS) &
				UMSI_PCIE_FLAGS_TYPE) >> UMSI_PCIE_FLAGS_TYPE_SHIFT;
			if (type == UMSI_PCIE_TYPE_PCI_BRIDGE)
				rid = (uint32_t)(at & ~0xffu);
		}
		at = b->bdf;
	}
	return rid;
}

/* The device writes @data to @addr as a bus master. */
static int dev_dma_msg_locked(struct umsi_sim *sim, struct sim_dev *d,
			      uint64_t addr, uint32_t data)
{
	if (!(cfg16(d, UMSI_PCI_COMMAND) & UMSI_PCI_CMD_MASTER)) {
		d->st.bme_blocked++;
		sim->st.bme_blocked++;
		return UMSI_SIM_FIRE_BLOCKED;
	}
	d->st.msgs++;
	sim_msg_write_from_locked(sim, sim_requester_locked(sim, d), addr,
				  data);
	return UMSI_SIM_FIRE_SENT;
}

/* MSI message @k: address and data read now; k ORed into the data. */
static int msi_send_locked(struct umsi_sim *sim, struct sim_dev *d,
			   unsigned int k)
{
	uint32_t nvec = 1u << msi_log2_enabled(d);
	uint64_t addr = cfg32(d, d->msi_off + UMSI_MSI_ADDR_LO);
	uint32_t data = cfg16(d, msi_data_off(d));

	if (msi_mme(d) > d->msi_mmc)
		d->st.mme_over_cap++;
	if (d->desc.msi.is64)
		addr |= (uint64_t)cfg32(d, d->msi_off + UMSI_MSI_ADDR_HI) << 32;
	data = (data & ~(nvec - 1)) | (k & (nvec - 1));
	return dev_dma_msg_locked(sim, d, addr, data);
}

/* Send every MSI message that is pending and no longer masked. */
static void msi_flush_locked(struct umsi_sim *sim, struct sim_dev *d)
{
	uint32_t mask, pend, nvec;

	if (!msi_enabled(d) || !d->desc.msi.maskbit)
		return;
	nvec = 1u << msi_log2_enabled(d);
	mask = cfg32(d, msi_mask_off(d));
	pend = cfg32(d, msi_pending_off(d));
	for (unsigned int k = 0; k < nvec; k++) {
		if (!(pend & (1u << k)) || (mask & (1u << k)))
			continue;
		pend &= ~(1u << k);
		set_cfg32(d, msi_pending_off(d), pend);
		msi_send_locked(sim, d, k);
	}
}

static int msi_fire_locked(struct umsi_sim *sim, struct sim_dev *d,
			   unsigned int k)
{
	uint32_t nvec = 1u << msi_log2_enabled(d);

	if (k >= nvec)
		return -UMSI_EINVAL;
	if (d->desc.msi.maskbit &&
	    (cfg32(d, msi_mask_off(d)) & (1u << k))) {
		uint32_t pend = cfg32(d, msi_pending_off(d));

		if (pend & (1u << k)) {
			d->st.coalesced++;
			return UMSI_SIM_FIRE_COALESCED;
		}
		set_cfg32(d, msi_pending_off(d), pend | (1u << k));
		d->st.pending_set++;
		return UMSI_SIM_FIRE_PENDING;
	}
	return msi_send_locked(sim, d, k);
}

static bool msix_entry_masked(const struct sim_dev *d, unsigned int k)
{
	return d->msix_tbl[k * 4 + 3] & UMSI_MSIX_CTRL_MASKBIT;
}

static bool pba_test(const struct sim_dev *d, unsigned int k)
{
	return (d->pba[k / 64] >> (k % 64)) & 1;
}

static int msix_send_locked(struct umsi_sim *sim, struct sim_dev *d,
			    unsigned int k)
{
	uint64_t addr = d->msix_tbl[k * 4] |
			(uint64_t)d->msix_tbl[k * 4 + 1] << 32;

	return dev_dma_msg_locked(sim, d, addr, d->msix_tbl[k * 4 + 2]);
}

/* Entry @k: if pending and now unmasked, clear its PBA bit and send. */
static void msix_flush_one_locked(struct umsi_sim *sim, struct sim_dev *d,
				  unsigned int k)
{
	if (!msix_enabled(d) || msix_function_masked(d) ||
	    msix_entry_masked(d, k) || !pba_test(d, k))
		return;
	d->pba[k / 64] &= ~(1ull << (k % 64));
	msix_send_locked(sim, d, k);
}

static void msix_flush_all_locked(struct umsi_sim *sim, struct sim_dev *d)
{
	for (unsigned int k = 0; k < d->msix_n; k++)
		msix_flush_one_locked(sim, d, k);
}

static int msix_fire_locked(struct umsi_sim *sim, struct sim_dev *d,
			    unsigned int k)
{
	if (k >= d->msix_n)
		return -UMSI_EINVAL;
	if (msix_function_masked(d) || msix_entry_masked(d, k)) {
		if (pba_test(d, k)) {
			d->st.coalesced++;
			return UMSI_SIM_FIRE_COALESCED;
		}
		d->pba[k / 64] |= 1ull << (k % 64);
		d->st.pending_set++;
		return UMSI_SIM_FIRE_PENDING;
	}
	return msix_send_locked(sim, d, k);
}

/* ---- INTx ------------------------------------------------------------------ */

/*
 * Keep sim->intx_active, the functions driving their pin, in step with
 * d->intx_out, so an IO-APIC input is evaluated without a scan of every
 * function. Return: false when the list could not grow.
 */
static bool intx_active_set(struct umsi_sim *sim, struct sim_dev *d, bool out)
{
	if (out) {
		if (sim->nintx_active == sim->intx_active_cap) {
			size_t cap = sim->intx_active_cap ?
				     sim->intx_active_cap * 2 : 16;
			struct sim_dev **p = realloc(sim->intx_active,
						     cap * sizeof(*p));

			if (!p)
				return false;
			sim->intx_active = p;
			sim->intx_active_cap = cap;
		}
		d->intx_slot = sim->nintx_active;
		sim->intx_active[sim->nintx_active++] = d;
	} else {
		struct sim_dev *last = sim->intx_active[--sim->nintx_active];

		sim->intx_active[d->intx_slot] = last;
		last->intx_slot = d->intx_slot;
	}
	d->intx_out = out;
	return true;
}

/* Recompute Status.Interrupt Status and what the pin drives. */
static void intx_update_locked(struct umsi_sim *sim, struct sim_dev *d)
{
	uint16_t status = cfg16(d, UMSI_PCI_STATUS);
	bool out;
	int gsi;

	if (d->intx_level)
		status |= UMSI_PCI_STATUS_INTX;
	else
		status &= (uint16_t)~UMSI_PCI_STATUS_INTX;
	set_cfg16(d, UMSI_PCI_STATUS, status);
	/* PCI 3.0 6.8: a function with MSI or MSI-X enabled must not use INTx. */
	out = d->present && d->desc.intx_pin && d->intx_level &&
	      !(cfg16(d, UMSI_PCI_COMMAND) & UMSI_PCI_CMD_INTX_DISABLE) &&
	      !msi_enabled(d) && !msix_enabled(d);
	if (out == d->intx_out)
		return;
	if (!intx_active_set(sim, d, out))
		return;	/* out of memory: the pin keeps its old level */
	gsi = sim_dev_gsi_locked(sim, d, d->desc.intx_pin);
	if (gsi >= 0)
		sim_wired_line_locked(sim, (uint32_t)gsi);
}

static int fire_locked(struct umsi_sim *sim, struct sim_dev *d, unsigned int k)
{
	d->st.fires++;
	if (msix_enabled(d))
		return msix_fire_locked(sim, d, k);
	if (msi_enabled(d))
		return msi_fire_locked(sim, d, k);
	if (!d->desc.intx_pin)
		return -UMSI_ENOTSUP;
	if (d->intx_level) {
		d->st.coalesced++;
		return UMSI_SIM_FIRE_INTX;
	}
	d->intx_level = true;
	d->st.intx_asserts++;
	intx_update_locked(sim, d);
	return UMSI_SIM_FIRE_INTX;
}

/* ---- Configuration space ------------------------------------------------------ */

int sim_cfg_read_locked(struct umsi_sim *sim, struct sim_dev *d,
			uint16_t off, uint8_t width, uint32_t *val)
{
	uint32_t v = 0;

	(void)sim;
	for (uint8_t i = 0; i < width && off + i < sim_cfg_size(d); i++)
		v |= (uint32_t)d->cfg[off + i] << (8 * i);
	*val = v;
	return 0;
}

static bool touches(uint16_t off, uint8_t width, uint16_t reg, uint16_t len)
{
	return off < reg + len && reg < off + width;
}

/* Address or data of an enabled MSI rewritten while a vector could fire. */
static bool msi_live(const struct sim_dev *d)
{
	uint32_t nvec, live;

	if (!msi_enabled(d))
		return false;
	if (!d->desc.msi.maskbit)
		return true;
	nvec = 1u << msi_log2_enabled(d);
	live = nvec == 32 ? 0xffffffffu : (1u << nvec) - 1;
	return (cfg32(d, msi_mask_off(d)) & live) != live;
}

static void sim_sriov_changed_locked(struct umsi_sim *sim, struct sim_dev *pf);

int sim_cfg_write_locked(struct umsi_sim *sim, struct sim_dev *d,
			 uint16_t off, uint8_t width, uint32_t val)
{
	bool msi_was_live = d->msi_off && msi_live(d);

	for (uint8_t i = 0; i < width && off + i < sim_cfg_size(d); i++) {
		uint16_t o = (uint16_t)(off + i);
		uint8_t b = (uint8_t)(val >> (8 * i));

		d->cfg[o] = (uint8_t)((d->cfg[o] & ~d->m->wmask[o]) |
				      (b & d->m->wmask[o]));
		d->cfg[o] &= (uint8_t)~(b & d->m->w1c[o]);
	}
	if (touches(off, width, UMSI_PCI_BAR0, 24))
		sim_bars_changed_locked(sim, d);
	if (d->sriov_off && touches(off, width, d->sriov_off, UMSI_SRIOV_SIZE))
		sim_sriov_changed_locked(sim, d);
	/* Initiate Function Level Reset (PCIe 4.0 6.6.2). */
	if (d->pcie_off && d->desc.pcie.flr &&
	    touches(off, width, d->pcie_off + UMSI_PCIE_DEVCTL + 1, 1) &&
	    ((val >> (8 * (d->pcie_off + UMSI_PCIE_DEVCTL + 1 - off))) &
	     (UMSI_PCIE_DEVCTL_BCR_FLR >> 8)))
		return sim_dev_reset_locked(sim, d, false);
	/* Side effects, in the order a device would act on them. */
	if (d->msi_off && touches(off, width, d->msi_off, msi_size(d))) {
		if (msi_was_live &&
		    touches(off, width, d->msi_off + UMSI_MSI_ADDR_LO,
			    (uint16_t)(msi_data_off(d) + 2 - d->msi_off -
				       UMSI_MSI_ADDR_LO)))
			d->st.msi_live_writes++;
		/* Unmasking (or enabling) sends what was pending. */
		msi_flush_locked(sim, d);
	}
	if (d->msix_off && touches(off, width, d->msix_off + UMSI_MSIX_FLAGS, 2))
		msix_flush_all_locked(sim, d);
	intx_update_locked(sim, d);
	return 0;
}

/* ---- MMIO --------------------------------------------------------------------- */

/* A PF's VF BAR @i register pair: VF 0's address (0: unassigned). */
static uint64_t vf_bar_base(const struct sim_dev *pf, unsigned int i)
{
	uint16_t reg = (uint16_t)(pf->sriov_off + UMSI_SRIOV_BAR + 4 * i);
	uint64_t base = cfg32(pf, reg) & UMSI_PCI_BAR_MEM_MASK;

	if (pf->desc.sriov.vf_bars[i].is64)
		base |= (uint64_t)cfg32(pf, (uint16_t)(reg + 4)) << 32;
	return base;
}

uint64_t sim_bar_base(const struct sim_dev *d, unsigned int i)
{
	const struct sim_bar *b = &d->bars[i];
	uint64_t base;

	if (!b->size || b->upper)
		return 0;
	if (d->pf) {
		base = vf_bar_base(d->pf, i);
		return base ? base + (uint64_t)d->vf_index * b->size : 0;
	}
	if (b->io)
		return cfg32(d, (uint16_t)(UMSI_PCI_BAR0 + 4 * i)) &
		       UMSI_PCI_BAR_IO_MASK;
	base = cfg32(d, (uint16_t)(UMSI_PCI_BAR0 + 4 * i)) &
	       UMSI_PCI_BAR_MEM_MASK;
	if (b->is64)
		base |= (uint64_t)cfg32(d, (uint16_t)(UMSI_PCI_BAR0 +
						      4 * (i + 1))) << 32;
	return base;
}

static bool in_region(uint64_t off, uint32_t start, uint64_t len)
{
	return off >= start && off - start < len;
}

static uint64_t pba_bytes(const struct sim_dev *d)
{
	return ((uint64_t)d->msix_n + 63) / 64 * 8;
}

static bool dev_decodes(struct umsi_sim *sim, struct sim_dev *d, bool counted,
			bool write)
{
	(void)sim;
	if (counted) {
		if (write)
			d->st.mmio_writes++;
		else
			d->st.mmio_reads++;
	}
	if (!d->present)
		return false;
	/* A VF's Memory Space Enable is the PF's VF MSE (SR-IOV 3.4.1.3). */
	if (d->pf ? !(cfg16(d->pf, d->pf->sriov_off + UMSI_SRIOV_CTRL) &
		      UMSI_SRIOV_CTRL_MSE) :
	    !(cfg16(d, UMSI_PCI_COMMAND) & UMSI_PCI_CMD_MEMORY)) {
		d->st.mmio_disabled++;
		return false;
	}
	return true;
}

uint32_t sim_phys_read32_locked(struct umsi_sim *sim, uint64_t phys,
				bool counted)
{
	unsigned int bar;
	uint64_t off;
	struct sim_dev *d;
	const struct umsi_sim_msix_desc *mx;
	uint32_t v;

	/* A device model's registers (an ITS, a v2m frame, a VT-d unit). */
	if (sim_models_mmio_locked(sim, phys, false, &v))
		return v;
	d = sim_decode_locked(sim, phys, &bar, &off);
	if (!d) {
		if (counted)
			sim_bad_access_locked(sim, "MMIO read of unclaimed "
					      "address 0x%llx",
					      (unsigned long long)phys);
		return 0xffffffffu;
	}
	if (!dev_decodes(sim, d, counted, false))
		return 0xffffffffu;
	mx = &d->desc.msix;
	if (d->msix_off && bar == mx->table_bar &&
	    in_region(off, mx->table_offset, (uint64_t)d->msix_n * 16)) {
		uint64_t r = off - mx->table_offset;

		return d->msix_tbl[r / 4];
	}
	if (d->msix_off && bar == mx->pba_bar &&
	    in_region(off, mx->pba_offset, pba_bytes(d))) {
		uint64_t r = off - mx->pba_offset;

		return (uint32_t)(d->pba[r / 8] >> (32 * ((r / 4) & 1)));
	}
	return 0;	/* other device registers: not modelled */
}

void sim_phys_write32_locked(struct umsi_sim *sim, uint64_t phys, uint32_t val,
			     bool counted)
{
	unsigned int bar, k, w;
	uint64_t off, r;
	struct sim_dev *d;
	const struct umsi_sim_msix_desc *mx;
	uint32_t old;

	/* A device model's registers (an interrupt file, an ITS ...). */
	if (sim_models_mmio_locked(sim, phys, true, &val))
		return;
	d = sim_decode_locked(sim, phys, &bar, &off);
	if (!d) {
		if (counted)
			sim_bad_access_locked(sim, "MMIO write of unclaimed "
					      "address 0x%llx",
					      (unsigned long long)phys);
		return;
	}
	if (!dev_decodes(sim, d, counted, true))
		return;
	mx = &d->desc.msix;
	if (!d->msix_off || bar != mx->table_bar ||
	    !in_region(off, mx->table_offset, (uint64_t)d->msix_n * 16))
		return;	/* PBA is read-only; other registers not modelled */
	r = off - mx->table_offset;
	k = (unsigned int)(r / 16);
	w = (unsigned int)(r % 16) / 4;
	old = d->msix_tbl[r / 4];
	switch (w) {
	case 0:	/* Message Address: bits 1:0 read as 0 (DWORD aligned) */
		val &= ~3u;
		/* fall through */
	case 1:
	case 2:
		if (msix_enabled(d) && !msix_function_masked(d) &&
		    !msix_entry_masked(d, k) && val != old)
			d->st.msix_live_writes++;
		d->msix_tbl[r / 4] = val;
		break;
	default:	/* Vector Control: only the mask bit is implemented */
		d->msix_tbl[r / 4] = val & UMSI_MSIX_CTRL_MASKBIT;
		if ((old & UMSI_MSIX_CTRL_MASKBIT) &&
		    !(val & UMSI_MSIX_CTRL_MASKBIT))
			msix_flush_one_locked(sim, d, k);
		break;
	}
}

/* ---- Building a function --------------------------------------------------------- */

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static int bars_valid(const struct umsi_sim_dev_desc *desc)
{
	unsigned int nbars = desc->header_type == 1 ? 2 : 6;

	for (unsigned int i = 0; i < 6; i++) {
		const struct umsi_sim_bar_desc *b = &desc->bars[i];

		if (!b->size)
			continue;
		if (i >= nbars || !is_pow2(b->size))
			return -UMSI_EINVAL;
		if (b->io && (b->is64 || b->size < 4 || b->size > 256))
			return -UMSI_EINVAL;
		if (!b->io && b->size < 16)
			return -UMSI_EINVAL;
		if (!b->io && !b->is64 && b->size > 0x80000000ull)
			return -UMSI_EINVAL;
		if (b->is64 && (i + 1 >= nbars || desc->bars[i + 1].size))
			return -UMSI_EINVAL;
		if (b->is64)
			i++;
	}
	return 0;
}

static bool mem_bar_fits(const struct umsi_sim_dev_desc *desc, uint8_t bar,
			 uint32_t off, uint64_t len)
{
	const struct umsi_sim_bar_desc *b;

	if (bar >= 6)
		return false;
	if (bar > 0 && desc->bars[bar - 1].is64 && desc->bars[bar - 1].size)
		return false;	/* the upper half of a 64-bit BAR */
	b = &desc->bars[bar];
	return b->size && !b->io && (off & 7) == 0 && off + len <= b->size;
}

static int msix_valid(const struct umsi_sim_dev_desc *desc)
{
	const struct umsi_sim_msix_desc *m = &desc->msix;
	uint64_t tlen = (uint64_t)m->nentries * 16;
	uint64_t plen = ((uint64_t)m->nentries + 63) / 64 * 8;

	if (!m->present)
		return 0;
	if (m->nentries < 1 || m->nentries > UMSI_MSIX_MAX_VECTORS)
		return -UMSI_EINVAL;
	if (!mem_bar_fits(desc, m->table_bar, m->table_offset, tlen) ||
	    !mem_bar_fits(desc, m->pba_bar, m->pba_offset, plen))
		return -UMSI_EINVAL;
	if (m->table_bar == m->pba_bar &&
	    m->table_offset < m->pba_offset + plen &&
	    m->pba_offset < m->table_offset + tlen)
		return -UMSI_EINVAL;
	return 0;
}

/* A VF as the sim builds it from its PF's description. */
static void vf_desc(const struct umsi_sim_dev_desc *pf,
		    struct umsi_sim_dev_desc *vf)
{
	*vf = (struct umsi_sim_dev_desc){
		.vendor = 0xffff, .device = 0xffff,
		.class_code = pf->class_code, .revision = pf->revision,
		.msix = pf->sriov.vf_msix,
		.pcie = { .present = true, .type = UMSI_PCIE_TYPE_ENDPOINT },
	};
	for (unsigned int i = 0; i < 6; i++)
		vf->bars[i] = pf->sriov.vf_bars[i];
}

static int sriov_valid(const struct umsi_sim_dev_desc *desc)
{
	const struct umsi_sim_sriov_desc *sr = &desc->sriov;
	struct umsi_sim_dev_desc vf;

	if (!desc->pcie.present || desc->header_type != 0 ||
	    !sr->total_vfs || sr->total_vfs > 256)
		return -UMSI_EINVAL;
	vf_desc(desc, &vf);
	for (unsigned int i = 0; i < 6; i++)
		if (vf.bars[i].io || (vf.bars[i].size &&
				      vf.bars[i].size < 4096))
			return -UMSI_EINVAL;
	if (bars_valid(&vf))
		return -UMSI_EINVAL;
	return msix_valid(&vf);
}

static int desc_valid(const struct umsi_sim_dev_desc *desc)
{
	if (desc->header_type > 1 || desc->intx_pin > 4)
		return -UMSI_EINVAL;
	if (desc->msi.present && (!is_pow2(desc->msi.nvec) ||
				  desc->msi.nvec > UMSI_MSI_MAX_VECTORS))
		return -UMSI_EINVAL;
	if (bars_valid(desc))
		return -UMSI_EINVAL;
	if (desc->sriov.present && sriov_valid(desc))
		return -UMSI_EINVAL;
	return msix_valid(desc);
}

static int assign_bar_locked(struct umsi_sim *sim,
			     const struct umsi_sim_bar_desc *b, uint64_t *addr)
{
	uint64_t *next, limit, base;

	if (b->unassigned) {
		*addr = 0;
		return 0;
	}
	if (b->io) {
		next = &sim->next_io;
		limit = 0x10000;
	} else if (b->is64) {
		next = &sim->next_mem64;
		limit = 0x10000000000000ull;
	} else {
		next = &sim->next_mem32;
		limit = 0xfec00000u;	/* IO-APIC, LAPIC, MSI window above */
	}
	base = (*next + b->size - 1) & ~(b->size - 1);
	if (base + b->size > limit)
		return -UMSI_ENOSPC;
	*next = base + b->size;
	*addr = base;
	return 0;
}

static void set_wmask(struct sim_dev *d, uint16_t off, uint8_t width,
		      uint32_t m)
{
	put(d->m->wmask, off, width, m);
}

/* BAR registers and their masks; addresses from @addrs, or assigned. */
static int build_bars_locked(struct umsi_sim *sim, struct sim_dev *d,
			     const uint64_t *addrs)
{
	for (unsigned int i = 0; i < 6; i++) {
		const struct umsi_sim_bar_desc *b = &d->desc.bars[i];
		uint16_t reg = (uint16_t)(UMSI_PCI_BAR0 + 4 * i);
		uint64_t addr;
		uint32_t flags;
		int err;

		if (!b->size)
			continue;
		if (d->pf) {
			/* Its BAR registers are RO zero; the PF's decide. */
			d->bars[i] = (struct sim_bar){ b->size, b->is64, false,
						       b->prefetch, false };
			if (b->is64 && i < 5)
				d->bars[++i] = (struct sim_bar){ b->size, true,
						false, b->prefetch, true };
			continue;
		}
		if (addrs) {
			addr = addrs[i];
		} else {
			err = assign_bar_locked(sim, b, &addr);
			if (err)
				return err;
		}
		d->bars[i] = (struct sim_bar){ b->size, b->is64, b->io,
					       b->prefetch, false };
		if (b->io) {
			set_cfg32(d, reg, (uint32_t)addr | UMSI_PCI_BAR_IO);
			set_wmask(d, reg, 4, (uint32_t)~(b->size - 1) &
				  UMSI_PCI_BAR_IO_MASK);
			continue;
		}
		flags = (b->is64 ? UMSI_PCI_BAR_MEM_TYPE_64 : 0) |
			(b->prefetch ? UMSI_PCI_BAR_PREFETCH : 0);
		set_cfg32(d, reg, (uint32_t)addr | flags);
		set_wmask(d, reg, 4, (uint32_t)~(b->size - 1) &
			  UMSI_PCI_BAR_MEM_MASK);
		if (b->is64) {
			i++;
			d->bars[i] = (struct sim_bar){ b->size, true, false,
						       b->prefetch, true };
			set_cfg32(d, (uint16_t)(reg + 4),
				  (uint32_t)(addr >> 32));
			set_wmask(d, (uint16_t)(reg + 4), 4,
				  (uint32_t)~((b->size - 1) >> 32));
		}
	}
	return 0;
}

struct cap_slot {
	uint8_t id;
	uint16_t off, len;
};

/* Choose capability offsets and check they do not overlap. */
static int layout_caps(struct sim_dev *d, struct cap_slot *s, int *n)
{
	const struct umsi_sim_dev_desc *c = &d->desc;

	*n = 0;
	if (c->pcie.present)
		s[(*n)++] = (struct cap_slot){ UMSI_PCI_CAP_ID_EXP,
					       c->pcie.offset ? c->pcie.offset
							      : 0x40, 0x3c };
	if (c->msi.present)
		s[(*n)++] = (struct cap_slot){ UMSI_PCI_CAP_ID_MSI,
					       c->msi.offset ? c->msi.offset
							     : 0x80,
					       msi_size(d) };
	if (c->msix.present)
		s[(*n)++] = (struct cap_slot){ UMSI_PCI_CAP_ID_MSIX,
					       c->msix.offset ? c->msix.offset
							      : 0xa0, 12 };
	for (int i = 0; i < *n; i++) {
		if (s[i].off < UMSI_PCI_STD_HEADER_END || (s[i].off & 3) ||
		    s[i].off + s[i].len > UMSI_PCI_CFG_SIZE)
			return -UMSI_EINVAL;
		for (int j = 0; j < i; j++)
			if (s[i].off < s[j].off + s[j].len &&
			    s[j].off < s[i].off + s[i].len)
				return -UMSI_EINVAL;
	}
	return 0;
}

static void build_msi(struct sim_dev *d, uint16_t o)
{
	const struct umsi_sim_msi_desc *m = &d->desc.msi;
	uint16_t ctrl;

	d->msi_off = o;
	d->msi_mmc = (unsigned int)__builtin_ctz(m->nvec);
	ctrl = (uint16_t)(d->msi_mmc << UMSI_MSI_FLAGS_QMASK_SHIFT);
	if (m->is64)
		ctrl |= UMSI_MSI_FLAGS_64BIT;
	if (m->maskbit)
		ctrl |= UMSI_MSI_FLAGS_MASKBIT;
	set_cfg16(d, o + UMSI_MSI_FLAGS, ctrl);
	/* Enable and Multiple Message Enable are RW; the rest RO. */
	set_wmask(d, o + UMSI_MSI_FLAGS, 2,
		  UMSI_MSI_FLAGS_ENABLE | UMSI_MSI_FLAGS_QSIZE);
	set_wmask(d, o + UMSI_MSI_ADDR_LO, 4, 0xfffffffcu);
	if (m->is64)
		set_wmask(d, o + UMSI_MSI_ADDR_HI, 4, 0xffffffffu);
	set_wmask(d, msi_data_off(d), 2, 0xffff);
	/* Mask bits of vectors the function does not have are reserved. */
	if (m->maskbit)
		set_wmask(d, msi_mask_off(d), 4, m->nvec == 32 ? 0xffffffffu :
			  (1u << m->nvec) - 1);
}

static int build_msix(struct sim_dev *d, uint16_t o)
{
	const struct umsi_sim_msix_desc *m = &d->desc.msix;

	d->msix_off = o;
	d->msix_n = m->nentries;
	d->msix_tbl = calloc((size_t)m->nentries * 4, sizeof(uint32_t));
	d->pba = calloc(((size_t)m->nentries + 63) / 64, sizeof(uint64_t));
	if (!d->msix_tbl || !d->pba)
		return -UMSI_ENOMEM;
	/* Reset: every entry masked (PCI 3.0 6.8.2.9). */
	for (unsigned int k = 0; k < m->nentries; k++)
		d->msix_tbl[k * 4 + 3] = UMSI_MSIX_CTRL_MASKBIT;
	set_cfg16(d, o + UMSI_MSIX_FLAGS, (uint16_t)(m->nentries - 1));
	set_wmask(d, o + UMSI_MSIX_FLAGS, 2,
		  UMSI_MSIX_FLAGS_MASKALL | UMSI_MSIX_FLAGS_ENABLE);
	set_cfg32(d, o + UMSI_MSIX_TABLE, m->table_offset | m->table_bar);
	set_cfg32(d, o + UMSI_MSIX_PBA, m->pba_offset | m->pba_bar);
	return 0;
}

static void build_pcie(struct sim_dev *d, uint16_t o)
{
	d->pcie_off = o;
	/* Capability version 2, device/port type. */
	set_cfg16(d, o + UMSI_PCIE_FLAGS,
		  (uint16_t)(2 | (d->desc.pcie.type & 0xf) <<
			     UMSI_PCIE_FLAGS_TYPE_SHIFT));
	if (d->desc.pcie.flr)
		set_cfg32(d, o + UMSI_PCIE_DEVCAP, UMSI_PCIE_DEVCAP_FLR);
	/* Device Control RW; Initiate FLR (bit 15) always reads 0. */
	set_wmask(d, o + UMSI_PCIE_DEVCTL, 2, 0x7fff);
	/* Device Status error bits are RW1C. */
	put(d->m->w1c, (uint16_t)(o + UMSI_PCIE_DEVCTL + 2), 2, 0x000f);
}

/* The SR-IOV capability's registers; VF BAR addresses come later. */
static void build_sriov(struct sim_dev *d, uint16_t o)
{
	const struct umsi_sim_sriov_desc *sr = &d->desc.sriov;

	d->sriov_off = o;
	set_cfg32(d, o, UMSI_PCI_EXT_CAP_ID_SRIOV | 1u << 16);
	set_wmask(d, o + UMSI_SRIOV_CTRL, 2, UMSI_SRIOV_CTRL_VFE |
		  UMSI_SRIOV_CTRL_MSE | UMSI_SRIOV_CTRL_ARI);
	set_cfg16(d, o + UMSI_SRIOV_INITIAL_VF, sr->total_vfs);
	set_cfg16(d, o + UMSI_SRIOV_TOTAL_VF, sr->total_vfs);
	set_wmask(d, o + UMSI_SRIOV_NUM_VF, 2, 0xffff);
	set_cfg16(d, o + UMSI_SRIOV_VF_OFFSET, sr->first_offset);
	set_cfg16(d, o + UMSI_SRIOV_VF_STRIDE, sr->stride);
	set_cfg16(d, o + UMSI_SRIOV_VF_DID, sr->vf_device);
	set_cfg32(d, o + UMSI_SRIOV_SUP_PGSIZE, 0x553);	/* 4K 8K 64K 256K 1M 4M */
	set_cfg32(d, o + UMSI_SRIOV_SYS_PGSIZE, 1);
	set_wmask(d, o + UMSI_SRIOV_SYS_PGSIZE, 4, 0x553);
}

/*
 * The VF BAR registers: type bits, size masks, and room for TotalVFs VFs
 * each (@addrs: addresses to keep, else assigned now).
 */
static int build_vf_bars_locked(struct umsi_sim *sim, struct sim_dev *d,
				const uint64_t *addrs)
{
	const struct umsi_sim_sriov_desc *sr = &d->desc.sriov;

	for (unsigned int i = 0; i < 6; i++) {
		const struct umsi_sim_bar_desc *b = &sr->vf_bars[i];
		uint16_t reg = (uint16_t)(d->sriov_off + UMSI_SRIOV_BAR + 4 * i);
		struct umsi_sim_bar_desc room = *b;
		uint64_t addr = 0;
		int err;

		if (!b->size)
			continue;
		room.size = b->size;
		while (room.size < b->size * sr->total_vfs)
			room.size <<= 1;
		if (addrs) {
			addr = addrs[i];
		} else {
			err = assign_bar_locked(sim, &room, &addr);
			if (err)
				return err;
		}
		set_cfg32(d, reg, (uint32_t)addr |
			  (b->is64 ? UMSI_PCI_BAR_MEM_TYPE_64 : 0) |
			  (b->prefetch ? UMSI_PCI_BAR_PREFETCH : 0));
		set_wmask(d, reg, 4, (uint32_t)~(b->size - 1) &
			  UMSI_PCI_BAR_MEM_MASK);
		if (b->is64) {
			set_cfg32(d, (uint16_t)(reg + 4), (uint32_t)(addr >> 32));
			set_wmask(d, (uint16_t)(reg + 4), 4,
				  (uint32_t)~((b->size - 1) >> 32));
			i++;
		}
	}
	return 0;
}

static int build_caps(struct sim_dev *d)
{
	struct cap_slot s[3];
	int n, err = layout_caps(d, s, &n);

	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		d->cfg[s[i].off] = s[i].id;
		d->cfg[s[i].off + 1] = i + 1 < n ? (uint8_t)s[i + 1].off : 0;
		if (s[i].id == UMSI_PCI_CAP_ID_EXP)
			build_pcie(d, s[i].off);
		else if (s[i].id == UMSI_PCI_CAP_ID_MSI)
			build_msi(d, s[i].off);
		else if (build_msix(d, s[i].off))
			return -UMSI_ENOMEM;
	}
	if (n) {
		d->cfg[UMSI_PCI_CAP_PTR] = (uint8_t)s[0].off;
		set_cfg16(d, UMSI_PCI_STATUS, UMSI_PCI_STATUS_CAP_LIST);
	}
	if (d->desc.sriov.present && !d->pf) {
		if (sim_cfg_full(d))
			return -UMSI_ENOMEM;
		build_sriov(d, UMSI_PCIE_EXT_CAP_START);
	}
	return 0;
}

static void build_header(struct sim_dev *d)
{
	const struct umsi_sim_dev_desc *c = &d->desc;

	set_cfg16(d, UMSI_PCI_VENDOR_ID, c->vendor);
	set_cfg16(d, UMSI_PCI_DEVICE_ID, c->device);
	d->cfg[UMSI_PCI_REVISION] = c->revision;
	put(d->cfg, UMSI_PCI_CLASS_PROG, 3, c->class_code & 0xffffff);
	d->cfg[UMSI_PCI_HEADER_TYPE] = (uint8_t)(c->header_type |
			(c->multifunction ? UMSI_PCI_HEADER_MULTIFN : 0));
	d->cfg[UMSI_PCI_INTERRUPT_PIN] = c->intx_pin;
	/* Command: I/O, Memory, Bus Master, Parity, SERR#, INTx Disable;
	 * a VF's has Bus Master alone (SR-IOV 3.4.1.3). */
	set_wmask(d, UMSI_PCI_COMMAND, 2, d->pf ? UMSI_PCI_CMD_MASTER : 0x0547);
	/* Status: error bits are RW1C, the rest RO. */
	put(d->m->w1c, UMSI_PCI_STATUS, 2, 0xf900);
	set_wmask(d, 0x0c, 2, 0xffff);	/* cache line size, latency timer */
	set_wmask(d, UMSI_PCI_INTERRUPT_LINE, 1, 0xff);
	if (c->header_type == 1) {
		d->cfg[UMSI_PCI_PRIMARY_BUS] = UMSI_BDF_BUS(d->bdf);
		d->cfg[UMSI_PCI_SECONDARY_BUS] = c->secondary_bus;
		d->cfg[UMSI_PCI_SUBORDINATE_BUS] = c->subordinate_bus;
		/* Bus numbers, windows, I/O upper halves: RW. */
		set_wmask(d, UMSI_PCI_PRIMARY_BUS, 4, 0xffffffffu);
		set_wmask(d, 0x1c, 2, 0xffff);
		put(d->m->w1c, 0x1e, 2, 0xf900);	/* secondary status */
		for (uint16_t o = 0x20; o < 0x34; o += 4)
			set_wmask(d, o, 4, 0xffffffffu);
		set_wmask(d, UMSI_PCI_BRIDGE_CONTROL, 2, 0x0fff);
	}
}

static void initial_command(struct sim_dev *d)
{
	uint16_t cmd = 0;

	for (unsigned int i = 0; i < 6; i++) {
		const struct umsi_sim_bar_desc *b = &d->desc.bars[i];

		if (!b->size || b->unassigned)
			continue;
		cmd |= b->io ? UMSI_PCI_CMD_IO : UMSI_PCI_CMD_MEMORY;
	}
	cmd |= d->desc.command & 0x0547;
	set_cfg16(d, UMSI_PCI_COMMAND, cmd);
}

struct sim_masks *sim_masks_new(void)
{
	struct sim_masks *m = calloc(1, sizeof(*m));

	if (m)
		m->refs = 1;
	return m;
}

void sim_masks_put(struct sim_masks *m)
{
	if (m && --m->refs == 0)
		free(m);
}

void sim_masks_intern_locked(struct umsi_sim *sim, struct sim_dev *d)
{
	struct sim_masks *last = sim->masks_last;

	if (last == d->m)
		return;
	if (last && !memcmp(last->wmask, d->m->wmask, sizeof(last->wmask)) &&
	    !memcmp(last->w1c, d->m->w1c, sizeof(last->w1c))) {
		sim_masks_put(d->m);
		d->m = last;
		last->refs++;
		return;
	}
	sim_masks_put(last);
	sim->masks_last = d->m;
	d->m->refs++;
}

void sim_dev_free(struct sim_dev *d)
{
	if (!d)
		return;
	sim_masks_put(d->m);
	free(d->msix_tbl);
	free(d->pba);
	free(d->vfs);
	if (d->cfg != d->cfg_low)
		free(d->cfg);
	free(d);
}

/*
 * The function's reset state: everything software programmed is gone
 * (MSI/MSI-X off, entries masked with zero address and data, pending bits
 * clear, Command 0, BARs 0, interrupt condition clear). With @keep_bars,
 * BARs, Command and Interrupt Line keep their values, as after an OS has
 * restored the standard header.
 */
int sim_dev_reset_locked(struct umsi_sim *sim, struct sim_dev *d,
			 bool keep_bars)
{
	uint64_t addrs[6] = { 0 };
	uint16_t cmd = cfg16(d, UMSI_PCI_COMMAND);
	uint8_t line = d->cfg[UMSI_PCI_INTERRUPT_LINE];
	int err;

	uint64_t vf_addrs[6] = { 0 };

	if (keep_bars)
		for (unsigned int i = 0; i < 6; i++)
			addrs[i] = sim_bar_base(d, i);
	if (d->sriov_off) {
		/* VF Enable goes with the reset: so do the VFs. */
		sim_vfs_gone_locked(sim, d);
		for (unsigned int i = 0; keep_bars && i < 6; i++)
			vf_addrs[i] = vf_bar_base(d, i);
	}
	free(d->msix_tbl);
	free(d->pba);
	d->msix_tbl = NULL;
	d->pba = NULL;
	memset(d->cfg, 0, sim_cfg_size(d));
	/* New masks: the old ones may be shared. */
	sim_masks_put(d->m);
	d->m = sim_masks_new();
	if (!d->m)
		return -UMSI_ENOMEM;
	d->msi_off = d->msix_off = d->pcie_off = d->sriov_off = 0;
	d->msix_n = 0;
	sim_bars_changed_locked(sim, d);	/* zero until rebuilt, if ever */
	build_header(d);
	err = build_caps(d);
	if (err)
		return err;	/* out of memory: the function stays broken */
	build_bars_locked(sim, d, addrs);
	if (d->sriov_off)
		build_vf_bars_locked(sim, d, vf_addrs);
	sim_masks_intern_locked(sim, d);
	if (keep_bars) {
		set_cfg16(d, UMSI_PCI_COMMAND, cmd);
		d->cfg[UMSI_PCI_INTERRUPT_LINE] = line;
	}
	d->intx_level = false;
	intx_update_locked(sim, d);
	return 0;
}

int umsi_sim_reset_function(struct umsi_sim *sim, umsi_bdf_t bdf,
			    bool keep_bars)
{
	struct sim_dev *d;
	int err;

	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (!d || !d->present)
		err = -UMSI_ENODEV;
	else
		err = sim_dev_reset_locked(sim, d, keep_bars);
	sim_unlock(sim);
	sim_drain(sim);
	return err;
}

/*
 * Room for one more function in sim->devs and the BDF index, so that
 * appending it cannot fail. Return: 0 or -UMSI_ENOMEM.
 */
static int devs_reserve_locked(struct umsi_sim *sim)
{
	int err = sim_dev_index_reserve(sim);

	if (!err && sim->ndevs == sim->devs_cap) {
		size_t cap = sim->devs_cap ? sim->devs_cap * 2 : 16;
		struct sim_dev **p = realloc(sim->devs, cap * sizeof(*p));

		if (!p)
			return -UMSI_ENOMEM;
		sim->devs = p;
		sim->devs_cap = cap;
	}
	return err;
}

/* ---- SR-IOV: VFs come and go with VF Enable ------------------------------ */

void sim_vfs_gone_locked(struct umsi_sim *sim, struct sim_dev *pf)
{
	for (unsigned int i = 0; pf->vfs && i < pf->desc.sriov.total_vfs; i++) {
		struct sim_dev *vf = pf->vfs[i];

		if (vf && vf->present) {
			vf->present = false;
			intx_update_locked(sim, vf);
		}
	}
}

/* VF @i of @pf at @bdf: made, or the one made before brought back. */
static void vf_make_locked(struct umsi_sim *sim, struct sim_dev *pf,
			   unsigned int i, umsi_bdf_t bdf)
{
	struct sim_dev *vf = pf->vfs[i], *old = sim_dev_find(sim, bdf);

	if (old && old->present) {
		sim_bad_access_locked(sim, "VF %u of %02x:%02x.%x would be at "
				      "%02x:%02x.%x, where a function is", i,
				      UMSI_BDF_BUS(pf->bdf), UMSI_BDF_DEV(pf->bdf),
				      UMSI_BDF_FN(pf->bdf), UMSI_BDF_BUS(bdf),
				      UMSI_BDF_DEV(bdf), UMSI_BDF_FN(bdf));
		return;
	}
	if (vf && vf->bdf == bdf && old == vf) {
		if (sim_dev_reset_locked(sim, vf, false))
			return;
		vf->present = true;
		return;
	}
	vf = calloc(1, sizeof(*vf));
	if (!vf)
		return;
	cfg_init(vf);
	vf->m = sim_masks_new();
	if (!vf->m) {
		free(vf);
		return;
	}
	vf->bdf = bdf;
	vf->present = true;
	vf->pf = pf;
	vf->vf_index = (uint16_t)i;
	vf_desc(&pf->desc, &vf->desc);
	build_header(vf);
	if (build_caps(vf) || build_bars_locked(sim, vf, NULL) ||
	    devs_reserve_locked(sim))
		goto fail;
	sim_masks_intern_locked(sim, vf);
	sim->devs[sim->ndevs++] = vf;
	sim_dev_index_add(sim, vf);
	pf->vfs[i] = vf;
	return;
fail:
	sim_dev_free(vf);
}

/* A write to the PF's SR-IOV capability. */
static void sim_sriov_changed_locked(struct umsi_sim *sim, struct sim_dev *pf)
{
	const struct umsi_sim_sriov_desc *sr = &pf->desc.sriov;
	uint16_t ctrl = cfg16(pf, pf->sriov_off + UMSI_SRIOV_CTRL);
	uint16_t n = cfg16(pf, pf->sriov_off + UMSI_SRIOV_NUM_VF);
	bool live = false;

	for (unsigned int i = 0; i < sr->total_vfs; i++) {
		if (!pf->vfs[i])
			continue;
		live |= pf->vfs[i]->present;
		sim_bars_changed_locked(sim, pf->vfs[i]);
	}
	if (!(ctrl & UMSI_SRIOV_CTRL_VFE)) {
		if (live)
			sim_vfs_gone_locked(sim, pf);
		return;
	}
	if (live || !n || n > sr->total_vfs)
		return;
	for (unsigned int i = 0; i < n; i++) {
		uint32_t rid = (pf->bdf & 0xffff) + sr->first_offset +
			       i * (uint32_t)sr->stride;

		if (rid > 0xffff)
			break;
		vf_make_locked(sim, pf, i, (pf->bdf & 0xffff0000u) | rid);
	}
}

int umsi_sim_add_device(struct umsi_sim *sim, umsi_bdf_t bdf,
			const struct umsi_sim_dev_desc *desc)
{
	struct sim_dev *d, *old;
	uint64_t save32, save64, saveio;
	int err;

	if (!desc || desc_valid(desc))
		return -UMSI_EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -UMSI_ENOMEM;
	cfg_init(d);
	d->m = sim_masks_new();
	if (!d->m) {
		free(d);
		return -UMSI_ENOMEM;
	}
	d->bdf = bdf;
	d->present = true;
	d->desc = *desc;
	build_header(d);
	err = build_caps(d);
	if (err) {
		sim_dev_free(d);
		return err;
	}
	sim_lock(sim);
	old = sim_dev_find(sim, bdf);
	if (old && old->present) {
		err = -UMSI_EEXIST;
		goto fail;
	}
	save32 = sim->next_mem32;
	save64 = sim->next_mem64;
	saveio = sim->next_io;
	err = build_bars_locked(sim, d, NULL);
	if (!err && d->sriov_off)
		err = build_vf_bars_locked(sim, d, NULL);
	if (!err && d->sriov_off) {
		d->vfs = calloc(desc->sriov.total_vfs, sizeof(*d->vfs));
		if (!d->vfs)
			err = -UMSI_ENOMEM;
	}
	if (!err)
		err = devs_reserve_locked(sim);
	if (err) {
		sim->next_mem32 = save32;
		sim->next_mem64 = save64;
		sim->next_io = saveio;
		goto fail;
	}
	initial_command(d);
	sim_masks_intern_locked(sim, d);
	sim->devs[sim->ndevs++] = d;
	sim_dev_index_add(sim, d);
	sim_unlock(sim);
	return 0;
fail:
	sim_unlock(sim);
	sim_dev_free(d);
	return err;
}

int umsi_sim_remove_device(struct umsi_sim *sim, umsi_bdf_t bdf)
{
	struct sim_dev *d;
	int err = 0;

	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (!d || !d->present) {
		err = -UMSI_ENOENT;
	} else {
		d->present = false;
		intx_update_locked(sim, d);
	}
	sim_unlock(sim);
	sim_drain(sim);
	return err;
}

uint8_t *umsi_sim_cfg_raw(struct umsi_sim *sim, umsi_bdf_t bdf)
{
	struct sim_dev *d;

	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	/* Pokes are not seen: check its BARs at every decode from now on. */
	if (d)
		sim_bars_exposed_locked(sim, d);
	/* All 4 KiB, as the caller may poke any of them. */
	if (d && sim_cfg_full(d))
		d = NULL;
	sim_unlock(sim);
	return d ? d->cfg : NULL;
}

uint32_t umsi_sim_cfg_read(struct umsi_sim *sim, umsi_bdf_t bdf,
			   uint16_t off, uint8_t width)
{
	struct sim_dev *d;
	uint32_t v;

	if (!sim_cfg_access_ok(off, width))
		return 0xffffffffu;
	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (!d || !d->present)
		v = ones(width);
	else
		sim_cfg_read_locked(sim, d, off, width, &v);
	sim_unlock(sim);
	return v;
}

int umsi_sim_cfg_write(struct umsi_sim *sim, umsi_bdf_t bdf, uint16_t off,
		       uint8_t width, uint32_t val)
{
	struct sim_dev *d;
	int err;

	if (!sim_cfg_access_ok(off, width))
		return -UMSI_EINVAL;
	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (!d || !d->present)
		err = -UMSI_ENODEV;
	else
		err = sim_cfg_write_locked(sim, d, off, width, val);
	sim_unlock(sim);
	sim_drain(sim);
	return err;
}

uint64_t umsi_sim_bar_addr(struct umsi_sim *sim, umsi_bdf_t bdf,
			   unsigned int bar)
{
	struct sim_dev *d;
	uint64_t a = 0;

	if (bar >= 6)
		return 0;
	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (d)
		a = sim_bar_base(d, bar);
	sim_unlock(sim);
	return a;
}

uint32_t umsi_sim_mmio_read32(struct umsi_sim *sim, uint64_t phys)
{
	uint32_t v;

	sim_lock(sim);
	v = sim_phys_read32_locked(sim, phys, false);
	sim_unlock(sim);
	return v;
}

void umsi_sim_mmio_write32(struct umsi_sim *sim, uint64_t phys, uint32_t val)
{
	sim_lock(sim);
	sim_phys_write32_locked(sim, phys, val, false);
	sim_unlock(sim);
	sim_drain(sim);
}

static struct sim_dev *msix_dev_locked(struct umsi_sim *sim, umsi_bdf_t bdf,
				       unsigned int idx, int *err)
{
	struct sim_dev *d = sim_dev_find(sim, bdf);

	*err = 0;
	if (!d || !d->msix_off)
		*err = -UMSI_ENOENT;
	else if (idx >= d->msix_n)
		*err = -UMSI_EINVAL;
	return *err ? NULL : d;
}

int umsi_sim_msix_entry_set(struct umsi_sim *sim, umsi_bdf_t bdf,
			    unsigned int idx, uint64_t addr, uint32_t data,
			    uint32_t ctrl)
{
	struct sim_dev *d;
	int err;

	sim_lock(sim);
	d = msix_dev_locked(sim, bdf, idx, &err);
	if (d) {
		d->msix_tbl[idx * 4] = (uint32_t)addr & ~3u;
		d->msix_tbl[idx * 4 + 1] = (uint32_t)(addr >> 32);
		d->msix_tbl[idx * 4 + 2] = data;
		d->msix_tbl[idx * 4 + 3] = ctrl & UMSI_MSIX_CTRL_MASKBIT;
	}
	sim_unlock(sim);
	return err;
}

int umsi_sim_msix_entry_get(struct umsi_sim *sim, umsi_bdf_t bdf,
			    unsigned int idx, uint64_t *addr, uint32_t *data,
			    uint32_t *ctrl)
{
	struct sim_dev *d;
	int err;

	sim_lock(sim);
	d = msix_dev_locked(sim, bdf, idx, &err);
	if (d) {
		if (addr)
			*addr = d->msix_tbl[idx * 4] |
				(uint64_t)d->msix_tbl[idx * 4 + 1] << 32;
		if (data)
			*data = d->msix_tbl[idx * 4 + 2];
		if (ctrl)
			*ctrl = d->msix_tbl[idx * 4 + 3];
	}
	sim_unlock(sim);
	return err;
}

int umsi_sim_msix_pending(struct umsi_sim *sim, umsi_bdf_t bdf,
			  unsigned int idx)
{
	struct sim_dev *d;
	int err;

	sim_lock(sim);
	d = msix_dev_locked(sim, bdf, idx, &err);
	if (d)
		err = pba_test(d, idx);
	sim_unlock(sim);
	return err;
}

uint32_t umsi_sim_msi_pending(struct umsi_sim *sim, umsi_bdf_t bdf)
{
	struct sim_dev *d;
	uint32_t p = 0;

	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (d && d->msi_off && d->desc.msi.maskbit)
		p = cfg32(d, msi_pending_off(d));
	sim_unlock(sim);
	return p;
}

int umsi_sim_fire(struct umsi_sim *sim, umsi_bdf_t bdf, unsigned int k)
{
	struct sim_dev *d;
	int ret;

	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (!d || !d->present)
		ret = -UMSI_ENODEV;
	else
		ret = fire_locked(sim, d, k);
	sim_unlock(sim);
	sim_drain(sim);
	return ret;
}

int umsi_sim_intx_set(struct umsi_sim *sim, umsi_bdf_t bdf, bool asserted)
{
	struct sim_dev *d;
	int err = 0;

	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (!d || !d->present) {
		err = -UMSI_ENODEV;
	} else {
		if (asserted && !d->intx_level)
			d->st.intx_asserts++;
		d->intx_level = asserted;
		intx_update_locked(sim, d);
	}
	sim_unlock(sim);
	sim_drain(sim);
	return err;
}

int umsi_sim_dev_stats(struct umsi_sim *sim, umsi_bdf_t bdf,
		       struct umsi_sim_dev_stats *out)
{
	struct sim_dev *d;

	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (d)
		*out = d->st;
	sim_unlock(sim);
	return d ? 0 : -UMSI_ENOENT;
}

/* ---- What can still send ---------------------------------------------------- */

static void live_target(struct umsi_sim *sim, const struct sim_dev *d,
			uint64_t addr, uint32_t data,
			void (*fn)(void *arg, const struct umsi_sim_target *t),
			void *arg, unsigned *n)
{
	struct umsi_sim_target t = { .bdf = d->bdf, .gsi = -1, .address = addr,
				     .data = data };

	sim->msg_requester = sim_requester_locked(sim, d);
	t.resolved = sim_msg_target_locked(sim, addr, data, &t.cpu, &t.id);
	sim->msg_requester = UMSI_SIM_NO_REQUESTER;
	t.vector = (uint8_t)t.id;
	(*n)++;
	fn(arg, &t);
}

unsigned umsi_sim_live_targets(struct umsi_sim *sim,
			       void (*fn)(void *arg,
					  const struct umsi_sim_target *t),
			       void *arg)
{
	unsigned n = 0;

	sim_lock(sim);
	for (size_t i = 0; i < sim->ndevs; i++) {
		struct sim_dev *d = sim->devs[i];

		if (!d->present)
			continue;
		if (msix_enabled(d) && !msix_function_masked(d)) {
			for (unsigned k = 0; k < d->msix_n; k++) {
				uint64_t a = d->msix_tbl[k * 4] |
					     (uint64_t)d->msix_tbl[k * 4 + 1] << 32;

				if (!msix_entry_masked(d, k))
					live_target(sim, d, a,
						    d->msix_tbl[k * 4 + 2], fn,
						    arg, &n);
			}
		} else if (msi_enabled(d)) {
			uint32_t nvec = 1u << msi_log2_enabled(d);
			uint32_t mask = d->desc.msi.maskbit ?
					cfg32(d, msi_mask_off(d)) : 0;
			uint64_t a = cfg32(d, d->msi_off + UMSI_MSI_ADDR_LO);
			uint32_t data = cfg16(d, msi_data_off(d));

			if (d->desc.msi.is64)
				a |= (uint64_t)cfg32(d, d->msi_off +
						     UMSI_MSI_ADDR_HI) << 32;
			for (uint32_t k = 0; k < nvec; k++)
				if (!(mask & (1u << k)))
					live_target(sim, d, a,
						    (data & ~(nvec - 1)) | k,
						    fn, arg, &n);
		}
	}
	/* The wired inputs' routes, and any other model's. */
	sim_models_targets_locked(sim, fn, arg, &n);
	sim_unlock(sim);
	return n;
}
