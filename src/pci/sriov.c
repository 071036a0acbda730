/* SPDX-License-Identifier: MIT */
/*
 * SR-IOV: a physical function's virtual functions enabled, added as
 * functions, and taken away again with everything they held.
 *
 * A VF is a PCI function like any other once added: its own routing ID
 * (the requester ID of its messages), its own MSI-X table (in the PF's VF
 * BARs, one VF's size apart), the driver API and the message layer. What
 * differs is how it comes and goes: VF Enable in the PF's capability makes
 * all of them at once and clearing it takes all of them away, so uMSI adds
 * and removes them here, all or nothing, and the PF's removal takes them
 * first. The capability is device data: umsi_pci_sriov_check() (cap.c)
 * refuses what would put a VF outside the PF's buses or its BARs on top of
 * each other before VF Enable is set.
 */
#include <umsi/internal/hostcall.h>
#include <umsi/internal/pci.h>

/* PCIe SR-IOV 1.1, 3.3.3.1: after VF Enable is set / cleared. */
#define VF_ENABLE_WAIT_US   100000u
#define VF_DISABLE_WAIT_US 1000000u

static void sriov_log(struct umsi_pci_dev *pf, enum umsi_log_level lvl,
		      const char *what, const char *why)
{
	umsi_log(pf->sys, lvl, UMSI_BDF_FMT ": SR-IOV: %s%s%s",
		 UMSI_BDF_ARGS(pf->bdf), what, why ? ": " : "", why ? why : "");
}

static void wait_us(struct umsi_system *sys, uint32_t us, uint32_t flags)
{
	if (!(flags & UMSI_SRIOV_NOWAIT))
		umsi_host_sleep_us(sys, us);
}

static int pf_read(void *ctx, uint16_t off, uint8_t width, uint32_t *val)
{
	return umsi_pci_cfg_read(ctx, off, width, val);
}

/* The PF's extended configuration space, for the capability walks. */
#define PF_VIEW(pf) ((struct umsi_cfg_view){ \
	.read = pf_read, .ctx = (pf), .size = UMSI_PCIE_CFG_SIZE })

static int find_cap(struct umsi_pci_dev *pf, uint16_t *off)
{
	if (!pf->pcie_cap || pf->pf)
		return -UMSI_ENOENT;
	return umsi_pci_find_ext_cap(&PF_VIEW(pf), UMSI_PCI_EXT_CAP_ID_SRIOV, 0,
				     off);
}

static int read_cap(struct umsi_pci_dev *pf, uint16_t off,
		    struct umsi_sriov_cap *c)
{
	return umsi_pci_read_sriov_cap(&PF_VIEW(pf), off, c);
}

int umsi_pci_sriov_get_info(struct umsi_pci_dev *pf,
			    struct umsi_pci_sriov_info *info)
{
	struct umsi_sriov_cap c;
	uint16_t off;
	int ret;

	if (!pf || !info)
		return -UMSI_EINVAL;
	umsi_memset(info, 0, sizeof(*info));
	ret = find_cap(pf, &off);
	if (!ret)
		ret = read_cap(pf, off, &c);
	if (ret)
		return ret;
	info->cap = off;
	info->total_vfs = c.total_vfs;
	info->vf_device = c.vf_device;
	if (pf->sriov) {
		const struct umsi_sriov_layout *lay = &pf->sriov->lay;

		info->num_vfs = lay->nvfs;
		info->first = (pf->bdf & 0xffff0000u) | lay->first;
		info->stride = c.stride;
		for (unsigned int i = 0; i < 6; i++) {
			info->bar_addr[i] = lay->bar_addr[i];
			info->bar_size[i] = lay->bar_size[i];
			info->bar_is64[i] = lay->bar_is64[i];
		}
	}
	return 0;
}

/*
 * Size VF BAR @i (PCIe SR-IOV 3.3.14: as a BAR of a type 0 header, with
 * VF Memory Space Enable clear), as a function's own BAR is sized. An I/O
 * one is sized too, so that the check can name it.
 */
static int size_vf_bar(struct umsi_pci_dev *pf, uint16_t cap, unsigned int i,
		       const struct umsi_sriov_cap *c, uint64_t *size)
{
	bool is64 = i < 5 && !(c->vf_bar[i] & UMSI_PCI_BAR_IO) &&
		    (c->vf_bar[i] & UMSI_PCI_BAR_MEM_TYPE_MASK) ==
		    UMSI_PCI_BAR_MEM_TYPE_64;

	return umsi_pci_size_bar_reg(pf, (uint16_t)(cap + UMSI_SRIOV_BAR + 4 * i),
				     is64, c->vf_bar[i],
				     is64 ? c->vf_bar[i + 1] : 0, size);
}

/* The buses VFs may use: behind the PF's bridge, or the PF's own. */
static int vf_buses(struct umsi_pci_dev *pf, uint8_t *lo, uint8_t *hi)
{
	uint32_t sec, sub;
	int ret;

	*lo = *hi = UMSI_BDF_BUS(pf->bdf);
	if (!pf->parent)
		return 0;
	ret = umsi_pci_cfg_read(pf->parent, UMSI_PCI_SECONDARY_BUS, 1, &sec);
	if (!ret)
		ret = umsi_pci_cfg_read(pf->parent, UMSI_PCI_SUBORDINATE_BUS, 1,
					&sub);
	if (ret)
		return ret;
	/* A bridge whose secondary bus is not the PF's says nothing. */
	if (sec == *lo && sub >= sec)
		*hi = (uint8_t)sub;
	return 0;
}

static void set_ctrl(struct umsi_pci_dev *pf, struct umsi_pci_sriov *s,
		     uint16_t ctrl)
{
	s->ctrl = ctrl;
	(void)umsi_pci_cfg_write(pf, (uint16_t)(s->cap + UMSI_SRIOV_CTRL), 2,
				 ctrl);
}

static size_t sriov_size(uint16_t nvfs)
{
	return sizeof(struct umsi_pci_sriov) +
	       (size_t)nvfs * sizeof(struct umsi_pci_dev *);
}

/* Remove the VFs, then make them go away: the order of a hot removal. */
static void vfs_down(struct umsi_pci_dev *pf, uint32_t flags)
{
	struct umsi_pci_sriov *s = pf->sriov;
	uint16_t i;

	for (i = s->lay.nvfs; i-- > 0;)
		if (s->vfs[i])
			umsi_pci_remove(pf->sys, s->vfs[i]);
	set_ctrl(pf, s, s->ctrl & (uint16_t)~(UMSI_SRIOV_CTRL_VFE |
					      UMSI_SRIOV_CTRL_MSE));
	wait_us(pf->sys, VF_DISABLE_WAIT_US, flags);
	(void)umsi_pci_cfg_write(pf, (uint16_t)(s->cap + UMSI_SRIOV_NUM_VF), 2,
				 0);
	pf->sriov = NULL;
	umsi_free(pf->sys, s, sriov_size(s->lay.nvfs));
}

int umsi_pci_sriov_enable(struct umsi_pci_dev *pf, uint16_t nvfs,
			  uint32_t flags)
{
	struct umsi_system *sys;
	struct umsi_sriov_cap c;
	struct umsi_sriov_layout lay;
	struct umsi_pci_sriov *s;
	uint64_t size[6] = { 0 };
	const char *why;
	uint8_t lo, hi;
	uint16_t off, i;
	int ret;

	if (!pf || (flags & ~UMSI_SRIOV_NOWAIT))
		return -UMSI_EINVAL;
	sys = pf->sys;
	if (pf->sriov)
		return -UMSI_EBUSY;
	ret = find_cap(pf, &off);
	if (!ret)
		ret = read_cap(pf, off, &c);
	if (ret) {
		if (ret != -UMSI_ENOENT)
			sriov_log(pf, UMSI_LOG_ERROR, "cannot read the "
				  "capability", umsi_strerror(ret));
		return ret;
	}
	if (c.ctrl & (UMSI_SRIOV_CTRL_VFE | UMSI_SRIOV_CTRL_MSE)) {
		sriov_log(pf, UMSI_LOG_ERROR, "VFs already enabled", "disable "
			  "them (clear VF Enable) first");
		return -UMSI_EBUSY;
	}
	if (!nvfs || nvfs > c.total_vfs) {
		sriov_log(pf, UMSI_LOG_ERROR, "cannot enable that many VFs",
			  nvfs ? "above TotalVFs" : "NumVFs of 0");
		return nvfs ? -UMSI_ERANGE : -UMSI_EINVAL;
	}
	for (i = 0; i < 6; i++) {
		ret = size_vf_bar(pf, off, i, &c, &size[i]);
		if (ret)
			return ret;
		if ((c.vf_bar[i] & (UMSI_PCI_BAR_IO |
				    UMSI_PCI_BAR_MEM_TYPE_MASK)) ==
		    UMSI_PCI_BAR_MEM_TYPE_64)
			i++;	/* the upper half */
	}
	/* Offset and stride may change with NumVFs: write, then read. */
	ret = umsi_pci_cfg_write(pf, (uint16_t)(off + UMSI_SRIOV_NUM_VF), 2,
				 nvfs);
	if (!ret)
		ret = read_cap(pf, off, &c);
	if (!ret)
		ret = vf_buses(pf, &lo, &hi);
	if (ret)
		goto undo_numvfs;
	ret = umsi_pci_sriov_check(&c, (uint16_t)pf->bdf, lo, hi, size, nvfs,
				   &lay, &why);
	if (ret) {
		sriov_log(pf, UMSI_LOG_ERROR, "refused", why);
		goto undo_numvfs;
	}
	for (i = 0; i < nvfs; i++) {
		umsi_bdf_t bdf = (pf->bdf & 0xffff0000u) |
				 (uint32_t)(lay.first + i * c.stride);

		if (umsi_pci_find(sys, bdf)) {
			sriov_log(pf, UMSI_LOG_ERROR, "refused", "a function is "
				  "already registered at a VF's address");
			ret = -UMSI_EEXIST;
			goto undo_numvfs;
		}
	}
	s = umsi_zalloc(sys, sriov_size(nvfs));
	if (!s) {
		ret = -UMSI_ENOMEM;
		goto undo_numvfs;
	}
	s->cap = off;
	s->vf_device = c.vf_device;
	s->lay = lay;
	s->ctrl = c.ctrl;
	pf->sriov = s;
	set_ctrl(pf, s, s->ctrl | UMSI_SRIOV_CTRL_VFE | UMSI_SRIOV_CTRL_MSE);
	wait_us(sys, VF_ENABLE_WAIT_US, flags);
	for (i = 0; i < nvfs; i++) {
		umsi_bdf_t bdf = (pf->bdf & 0xffff0000u) |
				 (uint32_t)(lay.first + i * c.stride);

		ret = umsi_pci_add_vf(pf, bdf, i, &s->vfs[i]);
		if (ret) {
			sriov_log(pf, UMSI_LOG_ERROR, "a VF cannot be added",
				  umsi_strerror(ret));
			vfs_down(pf, flags);
			return ret;
		}
	}
	umsi_log(sys, UMSI_LOG_INFO, UMSI_BDF_FMT ": SR-IOV: %u VFs from "
		 UMSI_BDF_FMT ", stride %u", UMSI_BDF_ARGS(pf->bdf), nvfs,
		 UMSI_BDF_ARGS((pf->bdf & 0xffff0000u) | lay.first), c.stride);
	return 0;

undo_numvfs:
	(void)umsi_pci_cfg_write(pf, (uint16_t)(off + UMSI_SRIOV_NUM_VF), 2, 0);
	return ret;
}

void umsi_pci_sriov_disable(struct umsi_pci_dev *pf, uint32_t flags)
{
	if (pf && pf->sriov)
		vfs_down(pf, flags);
}

/* The PF goes: its VFs go first, with the specification's wait. */
void umsi_pci_sriov_teardown(struct umsi_pci_dev *pf)
{
	vfs_down(pf, 0);
}

void umsi_pci_sriov_forget(struct umsi_pci_dev *vf)
{
	struct umsi_pci_sriov *s = vf->pf->sriov;

	if (s && vf->vf_index < s->lay.nvfs && s->vfs[vf->vf_index] == vf)
		s->vfs[vf->vf_index] = NULL;
}

struct umsi_pci_dev *umsi_pci_sriov_vf(struct umsi_pci_dev *pf,
				       uint16_t index)
{
	if (!pf || !pf->sriov || index >= pf->sriov->lay.nvfs)
		return NULL;
	return pf->sriov->vfs[index];
}
