/* SPDX-License-Identifier: MIT */
/*
 * Bounded capability-list walks and MSI/MSI-X capability decoding.
 *
 * Everything read here comes from the device and is treated as hostile: a
 * list may loop, point into the header or off the end, and a removed
 * device reads all-ones. Walks are bounded by the number of capabilities
 * that can physically fit, so a loop costs at most 48 (or 960) reads.
 */
#include <umsi/pci_regs.h>
#include <umsi/pcicap.h>

static int cfg_read(const struct umsi_cfg_view *v, uint16_t off, uint8_t width,
		    uint32_t *val)
{
	if ((uint32_t)off + width > v->size)
		return -UMSI_ERANGE;
	return v->read(v->ctx, off, width, val);
}

/* A function that is absent or gone reads all-ones in its vendor ID. */
static int check_present(const struct umsi_cfg_view *v)
{
	uint32_t id;
	int ret = cfg_read(v, UMSI_PCI_VENDOR_ID, 2, &id);

	if (ret)
		return ret;
	return id == 0xffff ? -UMSI_ENODEV : 0;
}

static int first_cap_ptr(const struct umsi_cfg_view *v, uint16_t *ptr)
{
	uint32_t status, hdr, p;
	uint16_t where = UMSI_PCI_CAP_PTR;
	int ret;

	ret = cfg_read(v, UMSI_PCI_STATUS, 2, &status);
	if (ret)
		return ret;
	if (status == 0xffff)
		return -UMSI_ENODEV;
	if (!(status & UMSI_PCI_STATUS_CAP_LIST))
		return -UMSI_ENOENT;
	ret = cfg_read(v, UMSI_PCI_HEADER_TYPE, 1, &hdr);
	if (ret)
		return ret;
	/* Types 3-127 are undefined: no known place for the pointer. */
	if ((hdr & UMSI_PCI_HEADER_TYPE_MASK) > UMSI_PCI_HEADER_CARDBUS)
		return -UMSI_ERANGE;
	if ((hdr & UMSI_PCI_HEADER_TYPE_MASK) == UMSI_PCI_HEADER_CARDBUS)
		where = UMSI_PCI_CB_CAP_PTR;
	ret = cfg_read(v, where, 1, &p);
	if (ret)
		return ret;
	*ptr = (uint16_t)p;
	return 0;
}

/* Validate a next pointer; 0 ends the list. */
static int check_ptr(const struct umsi_cfg_view *v, uint16_t *ptr)
{
	if (*ptr & 3) {
		if (v->strict)
			return -UMSI_EINVAL;
		*ptr &= (uint16_t)~3u;
	}
	if (*ptr == 0)
		return 0;
	if (*ptr < UMSI_PCI_STD_HEADER_END)
		return -UMSI_ERANGE;
	if ((uint32_t)*ptr + 2 > v->size || *ptr > UMSI_PCI_CFG_SIZE - 4)
		return -UMSI_ERANGE;
	return 0;
}

int umsi_pci_walk_caps(const struct umsi_cfg_view *v,
		       int (*fn)(void *arg, uint8_t id, uint16_t off),
		       void *arg)
{
	uint16_t ptr;
	int ret, n;

	ret = check_present(v);
	if (ret)
		return ret;
	ret = first_cap_ptr(v, &ptr);
	if (ret)
		return ret == -UMSI_ENOENT ? 0 : ret;
	for (n = 0; ; n++) {
		uint32_t hdr;

		ret = check_ptr(v, &ptr);
		if (ret)
			return ret;
		if (ptr == 0)
			return 0;
		if (n == UMSI_PCI_CAP_MAX)
			return -UMSI_ELOOP;
		ret = cfg_read(v, ptr, 2, &hdr);
		if (ret)
			return ret;
		if (hdr == 0xffff)
			return -UMSI_ENODEV;
		ret = fn(arg, (uint8_t)hdr, ptr);
		if (ret)
			return ret;
		ptr = (uint16_t)(hdr >> 8);
	}
}

struct find_arg {
	uint8_t id;
	uint16_t after;
	bool passed;
	uint16_t found;
};

static int find_one(void *arg, uint8_t id, uint16_t off)
{
	struct find_arg *f = arg;

	if (f->after && !f->passed) {
		f->passed = off == f->after;
		return 0;
	}
	if (id != f->id)
		return 0;
	f->found = off;
	return 1;
}

int umsi_pci_find_cap(const struct umsi_cfg_view *v, uint8_t id,
		      uint16_t after, uint16_t *off)
{
	struct find_arg f = { .id = id, .after = after };
	int ret = umsi_pci_walk_caps(v, find_one, &f);

	if (ret == 1) {
		*off = f.found;
		return 0;
	}
	return ret ? ret : -UMSI_ENOENT;
}

int umsi_pci_find_ext_cap(const struct umsi_cfg_view *v, uint16_t id,
			  uint16_t after, uint16_t *off)
{
	uint16_t ptr = UMSI_PCIE_EXT_CAP_START;
	bool passed = after == 0;
	int ret, n;

	if (v->size < UMSI_PCIE_CFG_SIZE)
		return -UMSI_ENOENT;
	ret = check_present(v);
	if (ret)
		return ret;
	for (n = 0; n < UMSI_PCIE_EXT_CAP_MAX; n++) {
		uint32_t hdr;

		ret = cfg_read(v, ptr, 4, &hdr);
		if (ret)
			return ret;
		/* 0 (empty list) or all-ones (no extended space) ends it. */
		if (hdr == 0 || hdr == 0xffffffffu)
			return -UMSI_ENOENT;
		if (passed && UMSI_PCIE_EXT_CAP_ID(hdr) == id) {
			*off = ptr;
			return 0;
		}
		if (ptr == after)
			passed = true;
		ptr = (uint16_t)UMSI_PCIE_EXT_CAP_NEXT(hdr);
		if (ptr == 0)
			return -UMSI_ENOENT;
		if (ptr < UMSI_PCIE_EXT_CAP_START)
			return -UMSI_ERANGE;
	}
	return -UMSI_ELOOP;
}

int umsi_pci_read_msi_cap(const struct umsi_cfg_view *v, uint16_t off,
			  struct umsi_msi_cap *out)
{
	uint32_t ctrl, lo, hi = 0, data, mask = 0, pend = 0;
	uint16_t data_off;
	unsigned mmc_log2, mme_log2;
	uint32_t end;
	int ret;

	ret = cfg_read(v, off + UMSI_MSI_FLAGS, 2, &ctrl);
	if (ret)
		return ret;
	*out = (struct umsi_msi_cap){ .off = off, .ctrl = (uint16_t)ctrl };
	out->addr64 = ctrl & UMSI_MSI_FLAGS_64BIT;
	out->maskable = ctrl & UMSI_MSI_FLAGS_MASKBIT;
	end = off + (out->addr64 ? UMSI_MSI_DATA_64 : UMSI_MSI_DATA_32) + 2;
	if (out->maskable)
		end = off + (out->addr64 ? UMSI_MSI_PENDING_64 :
			     UMSI_MSI_PENDING_32) + 4;
	if (end > v->size)
		return -UMSI_ERANGE;
	out->enabled = ctrl & UMSI_MSI_FLAGS_ENABLE;
	mmc_log2 = (ctrl & UMSI_MSI_FLAGS_QMASK) >> UMSI_MSI_FLAGS_QMASK_SHIFT;
	mme_log2 = (ctrl & UMSI_MSI_FLAGS_QSIZE) >> UMSI_MSI_FLAGS_QSIZE_SHIFT;
	out->mmc_reserved = mmc_log2 > 5;
	out->mmc = (uint8_t)(1u << (mmc_log2 > 5 ? 5 : mmc_log2));
	out->mme = (uint8_t)(1u << (mme_log2 > 5 ? 5 : mme_log2));
	ret = cfg_read(v, off + UMSI_MSI_ADDR_LO, 4, &lo);
	if (!ret && out->addr64)
		ret = cfg_read(v, off + UMSI_MSI_ADDR_HI, 4, &hi);
	data_off = out->addr64 ? UMSI_MSI_DATA_64 : UMSI_MSI_DATA_32;
	if (!ret)
		ret = cfg_read(v, off + data_off, 2, &data);
	if (!ret && out->maskable) {
		ret = cfg_read(v, off + (out->addr64 ? UMSI_MSI_MASK_64 :
					 UMSI_MSI_MASK_32), 4, &mask);
		if (!ret)
			ret = cfg_read(v, off + (out->addr64 ?
						 UMSI_MSI_PENDING_64 :
						 UMSI_MSI_PENDING_32), 4, &pend);
	}
	if (ret)
		return ret;
	out->address = ((uint64_t)hi << 32) | lo;
	out->data = (uint16_t)data;
	out->mask = mask;
	out->pending = pend;
	return 0;
}

int umsi_pci_read_msix_cap(const struct umsi_cfg_view *v, uint16_t off,
			   struct umsi_msix_cap *out)
{
	uint32_t ctrl, table, pba;
	int ret;

	if ((uint32_t)off + 12 > v->size)
		return -UMSI_ERANGE;
	ret = cfg_read(v, off + UMSI_MSIX_FLAGS, 2, &ctrl);
	if (!ret)
		ret = cfg_read(v, off + UMSI_MSIX_TABLE, 4, &table);
	if (!ret)
		ret = cfg_read(v, off + UMSI_MSIX_PBA, 4, &pba);
	if (ret)
		return ret;
	*out = (struct umsi_msix_cap){ .off = off, .ctrl = (uint16_t)ctrl };
	out->enabled = ctrl & UMSI_MSIX_FLAGS_ENABLE;
	out->function_mask = ctrl & UMSI_MSIX_FLAGS_MASKALL;
	out->table_size = (uint16_t)((ctrl & UMSI_MSIX_FLAGS_QSIZE) + 1);
	out->table_bir = (uint8_t)(table & UMSI_MSIX_BIR_MASK);
	out->table_offset = table & UMSI_MSIX_OFFSET_MASK;
	out->pba_bir = (uint8_t)(pba & UMSI_MSIX_BIR_MASK);
	out->pba_offset = pba & UMSI_MSIX_OFFSET_MASK;
	return 0;
}

/* ---- SR-IOV ------------------------------------------------------------- */

int umsi_pci_read_sriov_cap(const struct umsi_cfg_view *v, uint16_t off,
			    struct umsi_sriov_cap *out)
{
	uint32_t r[UMSI_SRIOV_SIZE / 4];
	unsigned int i;
	int ret;

	if ((uint32_t)off + UMSI_SRIOV_SIZE > v->size || (off & 3))
		return -UMSI_ERANGE;
	for (i = 0; i < UMSI_SRIOV_SIZE / 4; i++) {
		ret = cfg_read(v, (uint16_t)(off + 4 * i), 4, &r[i]);
		if (ret)
			return ret;
	}
	if (r[0] == 0xffffffffu && r[UMSI_SRIOV_CTRL / 4] == 0xffffffffu)
		return -UMSI_ENODEV;
	*out = (struct umsi_sriov_cap){
		.off = off,
		.caps = r[UMSI_SRIOV_CAP / 4],
		.ctrl = (uint16_t)r[UMSI_SRIOV_CTRL / 4],
		.initial_vfs = (uint16_t)r[UMSI_SRIOV_INITIAL_VF / 4],
		.total_vfs = (uint16_t)(r[UMSI_SRIOV_TOTAL_VF / 4] >> 16),
		.num_vfs = (uint16_t)r[UMSI_SRIOV_NUM_VF / 4],
		.func_link = (uint8_t)(r[UMSI_SRIOV_FUNC_LINK / 4] >> 16),
		.first_offset = (uint16_t)r[UMSI_SRIOV_VF_OFFSET / 4],
		.stride = (uint16_t)(r[UMSI_SRIOV_VF_STRIDE / 4] >> 16),
		.vf_device = (uint16_t)(r[UMSI_SRIOV_VF_DID / 4] >> 16),
		.page_sizes = r[UMSI_SRIOV_SUP_PGSIZE / 4],
		.page_size = r[UMSI_SRIOV_SYS_PGSIZE / 4],
	};
	for (i = 0; i < 6; i++)
		out->vf_bar[i] = r[UMSI_SRIOV_BAR / 4 + i];
	return 0;
}

static int sriov_refuse(const char **reason, const char *why, int err)
{
	*reason = why;
	return err;
}

/* VF BARs: memory, sized, assigned, aligned; returns the layout's part. */
static int sriov_bars(const struct umsi_sriov_cap *c, uint64_t page,
		      const uint64_t bar_size[6], uint16_t nvfs,
		      struct umsi_sriov_layout *out, const char **reason)
{
	uint64_t end[6] = { 0 };
	unsigned int i, j;

	for (i = 0; i < 6; i++) {
		uint32_t lo = c->vf_bar[i];
		uint64_t sz = bar_size[i], addr;

		if (!sz)
			continue;
		if (lo & UMSI_PCI_BAR_IO)
			return sriov_refuse(reason, "a VF BAR is I/O space "
					    "(VF BARs are memory only)",
					    -UMSI_EINVAL);
		if (sz & (sz - 1))
			return sriov_refuse(reason, "a VF BAR's size is not a "
					    "power of two", -UMSI_EINVAL);
		if (sz < page)
			return sriov_refuse(reason, "a VF BAR is smaller than "
					    "the System Page Size",
					    -UMSI_EINVAL);
		addr = lo & UMSI_PCI_BAR_MEM_MASK;
		if ((lo & UMSI_PCI_BAR_MEM_TYPE_MASK) ==
		    UMSI_PCI_BAR_MEM_TYPE_64) {
			if (i == 5)
				return sriov_refuse(reason, "a 64-bit VF BAR "
						    "in slot 5", -UMSI_EINVAL);
			addr |= (uint64_t)c->vf_bar[i + 1] << 32;
			out->bar_is64[i] = true;
		} else if (sz > 0x80000000ull) {
			return sriov_refuse(reason, "a 32-bit VF BAR larger "
					    "than 2 GiB", -UMSI_EINVAL);
		}
		if (!addr)
			return sriov_refuse(reason, "a VF BAR is unassigned "
					    "(address 0)", -UMSI_EINVAL);
		if (addr & (sz - 1))
			return sriov_refuse(reason, "a VF BAR is not aligned to "
					    "its size", -UMSI_EINVAL);
		/* nvfs * sz, then addr + that, without wrapping. */
		if (sz > UINT64_MAX / nvfs ||
		    addr > UINT64_MAX - sz * nvfs + 1)
			return sriov_refuse(reason, "a VF BAR's range (NumVFs "
					    "times its size) overflows the "
					    "address space", -UMSI_ERANGE);
		out->bar_addr[i] = addr;
		out->bar_size[i] = sz;
		end[i] = addr + (sz * nvfs - 1);	/* inclusive */
		if (!out->bar_is64[i] && end[i] > 0xffffffffull)
			return sriov_refuse(reason, "a 32-bit VF BAR's range "
					    "runs past 4 GiB", -UMSI_ERANGE);
		if (out->bar_is64[i])
			i++;
	}
	for (i = 0; i < 6; i++)
		for (j = i + 1; j < 6; j++)
			if (out->bar_size[i] && out->bar_size[j] &&
			    out->bar_addr[i] <= end[j] &&
			    out->bar_addr[j] <= end[i])
				return sriov_refuse(reason, "two VF BARs "
						    "overlap", -UMSI_EINVAL);
	return 0;
}

int umsi_pci_sriov_check(const struct umsi_sriov_cap *c, uint16_t pf_rid,
			 uint8_t bus_lo, uint8_t bus_hi,
			 const uint64_t bar_size[6], uint16_t nvfs,
			 struct umsi_sriov_layout *out, const char **reason)
{
	uint32_t first, last;
	uint64_t page;
	unsigned int shift;

	*out = (struct umsi_sriov_layout){ .nvfs = nvfs };
	*reason = NULL;
	if (!nvfs)
		return sriov_refuse(reason, "NumVFs of 0", -UMSI_EINVAL);
	if (c->initial_vfs > c->total_vfs)
		return sriov_refuse(reason, "InitialVFs above TotalVFs",
				    -UMSI_ERANGE);
	if (nvfs > c->total_vfs)
		return sriov_refuse(reason, "NumVFs above TotalVFs",
				    -UMSI_ERANGE);
	if (!c->first_offset)
		return sriov_refuse(reason, "First VF Offset is 0 (VF 0 would "
				    "be the PF)", -UMSI_EINVAL);
	if (nvfs > 1 && !c->stride)
		return sriov_refuse(reason, "VF Stride is 0 with more than one "
				    "VF (all VFs would share one ID)",
				    -UMSI_EINVAL);
	first = (uint32_t)pf_rid + c->first_offset;
	last = first + (uint32_t)(nvfs - 1) * c->stride;
	if (last > 0xffff)
		return sriov_refuse(reason, "VF routing IDs run past bus 255",
				    -UMSI_ERANGE);
	if ((first >> 8) < bus_lo || (last >> 8) > bus_hi)
		return sriov_refuse(reason, "VFs on a bus outside the ones "
				    "the PF's bridge decodes", -UMSI_ERANGE);
	out->first = (uint16_t)first;
	out->last = (uint16_t)last;
	if (!c->page_size || (c->page_size & (c->page_size - 1)) ||
	    !(c->page_size & c->page_sizes))
		return sriov_refuse(reason, "System Page Size is not one of "
				    "the Supported Page Sizes", -UMSI_EINVAL);
	for (shift = 0; !(c->page_size & (1u << shift)); shift++)
		;
	if (shift > 51 - 12)
		return sriov_refuse(reason, "System Page Size beyond 2^51",
				    -UMSI_ERANGE);
	page = (uint64_t)1 << (shift + 12);
	return sriov_bars(c, page, bar_size, nvfs, out, reason);
}
