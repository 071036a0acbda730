/* SPDX-License-Identifier: MIT */
/*
 * PCI functions: registration, the bounded capability walk, the MSI-X
 * table location check, and removal that reclaims everything.
 *
 * Everything read from a function is device-controlled data. The
 * capability list is walked with the bounded walker of src/pci/cap.c; a
 * broken list leaves MSI and MSI-X absent instead of failing the function,
 * and a function that reads all-ones (absent, surprise-removed) is reported
 * as gone (-UMSI_ENODEV).
 */
#include <umsi/internal/hostcall.h>
#include <umsi/internal/pci.h>
#include <umsi/internal/source.h>

/* ---- configuration access --------------------------------------------- */

int umsi_pci_cfg_read(struct umsi_pci_dev *dev, uint16_t off, uint8_t width,
		      uint32_t *val)
{
	struct umsi_system *sys = dev->sys;
	int ret = umsi_host_cfg_read(sys, dev->bdf, off, width,
					 val);

	if (ret)
		*val = width == 4 ? 0xffffffffu : (1u << (8 * width)) - 1;
	return ret;
}

int umsi_pci_cfg_write(struct umsi_pci_dev *dev, uint16_t off, uint8_t width,
		       uint32_t val)
{
	struct umsi_system *sys = dev->sys;

	return umsi_host_cfg_write(sys, dev->bdf, off, width, val);
}

void umsi_pci_restore_intx_disable(struct umsi_pci_dev *dev, uint16_t cmd)
{
	(void)umsi_pci_update_command(dev, cmd,
		(uint16_t)((cmd & ~UMSI_PCI_CMD_INTX_DISABLE) |
			   (dev->cmd_before & UMSI_PCI_CMD_INTX_DISABLE)));
}

/*
 * Command can never read 0xffff from a live function (bits 15:11 are
 * reserved and read 0), so all-ones there means the function is gone.
 */
int umsi_pci_read_command(struct umsi_pci_dev *dev, uint16_t *cmd)
{
	uint32_t v;
	int ret = umsi_pci_cfg_read(dev, UMSI_PCI_COMMAND, 2, &v);

	if (ret)
		return ret;
	if (v == 0xffff)
		return -UMSI_ENODEV;
	*cmd = (uint16_t)v;
	return 0;
}

int umsi_pci_update_command(struct umsi_pci_dev *dev, uint16_t old,
			    uint16_t cmd)
{
	if (old == cmd)
		return 0;
	return umsi_pci_cfg_write(dev, UMSI_PCI_COMMAND, 2, cmd);
}

/*
 * A message is a DMA write: MSI needs Bus Master Enable. INTx Disable
 * keeps a device that signals both from raising its pin too, except on
 * devices whose INTx Disable also stops MSI (the quirk).
 */
uint16_t umsi_pci_msi_command(struct umsi_pci_dev *dev, uint16_t cmd)
{
	cmd |= UMSI_PCI_CMD_MASTER;
	if (!(dev->quirks & UMSI_QUIRK_INTX_DISABLE_BUG))
		cmd |= UMSI_PCI_CMD_INTX_DISABLE;
	return cmd;
}

int umsi_pci_bme_check(struct umsi_pci_dev *dev, uint32_t irq)
{
	uint16_t cmd;
	int ret;

	ret = umsi_pci_read_command(dev, &cmd);
	if (ret)
		return ret;
	if (!(cmd & UMSI_PCI_CMD_MASTER)) {
		umsi_log(dev->sys, UMSI_LOG_ERROR, UMSI_BDF_FMT ": irq %u: Bus "
			 "Master Enable is clear in the Command register; an "
			 "MSI is a DMA write and cannot be sent. uMSI set it "
			 "when it enabled MSI: something turned it off",
			 UMSI_BDF_ARGS(dev->bdf), irq);
		return -UMSI_EPERM;
	}
	return 0;
}

int umsi_pci_descs_alloc(struct umsi_pci_dev *dev, uint32_t n)
{
	dev->descs = umsi_zalloc(dev->sys, n * sizeof(*dev->descs));
	if (!dev->descs)
		return -UMSI_ENOMEM;
	dev->descs_cap = n;
	dev->nvec = 0;
	dev->ndesc = 0;
	return 0;
}

void umsi_pci_descs_free(struct umsi_pci_dev *dev)
{
	umsi_free(dev->sys, dev->descs, dev->descs_cap * sizeof(*dev->descs));
	dev->descs = NULL;
	dev->descs_cap = 0;
	dev->nvec = 0;
	dev->ndesc = 0;
	dev->mode = UMSI_MODE_NONE;
}

/* ---- capability walk ---------------------------------------------------- */

/*
 * A VF's Vendor and Device ID read 0xffff (PCIe SR-IOV 3.4.1.1, 3.4.1.2):
 * the view shows the PF's vendor and the VF Device ID, as lspci does.
 */
static int view_read(void *ctx, uint16_t off, uint8_t width, uint32_t *val)
{
	struct umsi_pci_dev *dev = ctx;

	if (dev->pf && off < 4) {
		uint32_t id = (uint32_t)dev->device << 16 | dev->vendor;

		id >>= 8 * off;
		*val = width == 4 ? id : id & ((1u << (8 * width)) - 1);
		return 0;
	}
	return umsi_pci_cfg_read(ctx, off, width, val);
}

/*
 * Is the function gone (reads all-ones)? A VF's IDs always read 0xffff,
 * so for a VF the revision and class dword says it.
 */
static bool dev_gone(struct umsi_pci_dev *dev)
{
	uint32_t v;

	if (dev->pf)
		return !umsi_pci_cfg_read(dev, UMSI_PCI_REVISION, 4, &v) &&
		       v == 0xffffffffu;
	return !umsi_pci_cfg_read(dev, UMSI_PCI_VENDOR_ID, 2, &v) &&
	       v == 0xffff;
}

struct caps_found {
	uint16_t msi, msix, pcie;
};

static int note_cap(void *arg, uint8_t id, uint16_t off)
{
	struct caps_found *c = arg;

	if (id == UMSI_PCI_CAP_ID_MSI && !c->msi)
		c->msi = off;
	else if (id == UMSI_PCI_CAP_ID_MSIX && !c->msix)
		c->msix = off;
	else if (id == UMSI_PCI_CAP_ID_EXP && !c->pcie)
		c->pcie = off;
	return 0;
}


static void log_dev(struct umsi_pci_dev *dev, enum umsi_log_level lvl,
		    const char *what, int err)
{
	umsi_log(dev->sys, lvl, UMSI_BDF_FMT ": %s (%s)",
		 UMSI_BDF_ARGS(dev->bdf), what,
		 umsi_strerror(err));
}

/* ---- BARs and the MSI-X table location --------------------------------- */

struct bar {
	uint64_t addr;
	uint64_t size;
	bool mem;
	bool is64;
};

/*
 * Put back a register sizing changed. A failed write is tried once more:
 * a BAR left all-ones would decode at the top of memory.
 */
static int restore_reg(struct umsi_pci_dev *dev, uint16_t off, uint8_t width,
		       uint32_t val)
{
	int ret = umsi_pci_cfg_write(dev, off, width, val);

	if (ret)
		ret = umsi_pci_cfg_write(dev, off, width, val);
	if (ret)
		log_dev(dev, UMSI_LOG_ERROR, "cannot restore a register after "
			"sizing a BAR", ret);
	return ret;
}

int umsi_pci_size_bar_reg(struct umsi_pci_dev *dev, uint16_t off, bool is64,
			  uint32_t lo, uint32_t hi, uint64_t *size)
{
	uint32_t szlo, szhi = 0xffffffffu;
	uint64_t mask;
	int ret, ret2;

	ret = umsi_pci_cfg_write(dev, off, 4, 0xffffffffu);
	if (!ret)
		ret = umsi_pci_cfg_read(dev, off, 4, &szlo);
	ret2 = restore_reg(dev, off, 4, lo);
	ret = ret ? ret : ret2;
	if (is64 && !ret) {
		ret = umsi_pci_cfg_write(dev, (uint16_t)(off + 4), 4,
					 0xffffffffu);
		if (!ret)
			ret = umsi_pci_cfg_read(dev, (uint16_t)(off + 4), 4,
						&szhi);
		ret2 = restore_reg(dev, (uint16_t)(off + 4), 4, hi);
		ret = ret ? ret : ret2;
	}
	if (ret)
		return ret;
	/* A memory BAR's type bits never read all-ones: the function went. */
	if (szlo == 0xffffffffu && szhi == 0xffffffffu)
		return -UMSI_ENODEV;
	/* A BAR that does not exist reads 0 when sized. */
	if (is64) {
		mask = ((uint64_t)szhi << 32) | (szlo & UMSI_PCI_BAR_MEM_MASK);
		*size = mask ? ~mask + 1 : 0;
	} else {
		uint32_t m32 = szlo & UMSI_PCI_BAR_MEM_MASK;

		*size = m32 ? (uint32_t)(~m32 + 1) : 0;
	}
	return 0;
}

static int size_bar(struct umsi_pci_dev *dev, unsigned int i, struct bar *b)
{
	uint16_t off = (uint16_t)(UMSI_PCI_BAR0 + 4 * i), cmd;
	uint32_t lo, hi = 0;
	int ret, ret2;

	ret = umsi_pci_cfg_read(dev, off, 4, &lo);
	if (ret)
		return ret;
	*b = (struct bar){ .mem = !(lo & UMSI_PCI_BAR_IO) };
	if (!b->mem)
		return 0;
	b->is64 = (lo & UMSI_PCI_BAR_MEM_TYPE_MASK) == UMSI_PCI_BAR_MEM_TYPE_64;
	if (b->is64) {
		if (i == 5)
			return -UMSI_ERANGE;
		ret = umsi_pci_cfg_read(dev, off + 4, 4, &hi);
		if (ret)
			return ret;
	}
	b->addr = ((uint64_t)hi << 32) | (lo & UMSI_PCI_BAR_MEM_MASK);
	/* Size it with memory decode off, so the probe address decodes
	 * nothing, as a PCI core does at enumeration. */
	ret = umsi_pci_read_command(dev, &cmd);
	if (ret)
		return ret;
	ret = umsi_pci_update_command(dev, cmd, cmd & ~UMSI_PCI_CMD_MEMORY);
	if (ret)
		return ret;
	ret = umsi_pci_size_bar_reg(dev, off, b->is64, lo, hi, &b->size);
	ret2 = cmd & UMSI_PCI_CMD_MEMORY ?
	       restore_reg(dev, UMSI_PCI_COMMAND, 2, cmd) : 0;
	return ret ? ret : ret2;
}

/*
 * Is BAR @bir the upper half of a 64-bit BAR? Walk the BARs from 0, as
 * the type bits of each say how many slots it takes.
 */
static int bar_is_upper_half(struct umsi_pci_dev *dev, unsigned int bir,
			     bool *upper)
{
	unsigned int i = 0;
	uint32_t v;
	int ret;

	while (i < bir) {
		ret = umsi_pci_cfg_read(dev, (uint16_t)(UMSI_PCI_BAR0 + 4 * i),
					4, &v);
		if (ret)
			return ret;
		if (!(v & UMSI_PCI_BAR_IO) && (v & UMSI_PCI_BAR_MEM_TYPE_MASK) ==
		    UMSI_PCI_BAR_MEM_TYPE_64)
			i += 2;
		else
			i += 1;
	}
	*upper = i != bir;
	return 0;
}

/*
 * VF BAR @bir of VF @dev: the PF's VF BAR, one VF's size apart per VF
 * (PCIe SR-IOV 3.3.14). -UMSI_ERANGE for the upper half of a 64-bit one.
 */
static int vf_bar(struct umsi_pci_dev *dev, unsigned int bir, struct bar *b)
{
	const struct umsi_sriov_layout *lay = &dev->pf->sriov->lay;

	if (bir && lay->bar_is64[bir - 1])
		return -UMSI_ERANGE;
	*b = (struct bar){
		.mem = true,
		.is64 = lay->bar_is64[bir],
		.size = lay->bar_size[bir],
		.addr = lay->bar_size[bir] ? lay->bar_addr[bir] +
			(uint64_t)dev->vf_index * lay->bar_size[bir] : 0,
	};
	return 0;
}

/* A range [off, off + len) inside a BAR of @size. */
static bool fits(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/*
 * Locate and validate the MSI-X table and PBA (PCI 3.0 6.8.2.4-5): BIR
 * names BAR 0-5 (0-1 on a bridge), that BAR exists, is memory and is not
 * the upper half of a 64-bit BAR; both structures lie inside their BAR and
 * do not overlap. Return: 0 with dev->msix_reason set when unusable, or a
 * host error.
 */
static int msix_locate(struct umsi_pci_dev *dev, const struct umsi_msix_cap *c)
{
	unsigned int nbars = dev->header_type == UMSI_PCI_HEADER_BRIDGE ? 2 :
			     dev->header_type == UMSI_PCI_HEADER_NORMAL ? 6 : 0;
	uint64_t tlen = (uint64_t)c->table_size * UMSI_MSIX_ENTRY_SIZE;
	uint64_t plen = ((uint64_t)c->table_size + 63) / 64 * 8;
	struct bar tb, pb;
	bool upper;
	int ret;

	if (c->table_bir >= nbars || c->pba_bir >= nbars)
		goto bad;
	if (dev->pf) {
		if (vf_bar(dev, c->table_bir, &tb) || vf_bar(dev, c->pba_bir,
							     &pb))
			goto bad;
		goto located;
	}
	ret = bar_is_upper_half(dev, c->table_bir, &upper);
	if (ret)
		return ret;
	if (upper)
		goto bad;
	if (c->pba_bir != c->table_bir) {
		ret = bar_is_upper_half(dev, c->pba_bir, &upper);
		if (ret)
			return ret;
		if (upper)
			goto bad;
	}
	ret = size_bar(dev, c->table_bir, &tb);
	if (ret)
		return ret == -UMSI_ERANGE ? (dev->msix_reason =
					      "bad_msix_table", 0) : ret;
	if (c->pba_bir == c->table_bir) {
		pb = tb;
	} else {
		ret = size_bar(dev, c->pba_bir, &pb);
		if (ret)
			return ret == -UMSI_ERANGE ? (dev->msix_reason =
						      "bad_msix_table", 0) : ret;
	}
located:
	if (!tb.mem || !pb.mem || !tb.size || !pb.size)
		goto bad;
	if (!fits(c->table_offset, tlen, tb.size) ||
	    !fits(c->pba_offset, plen, pb.size))
		goto bad;
	if (c->table_bir == c->pba_bir &&
	    c->table_offset < c->pba_offset + plen &&
	    c->pba_offset < c->table_offset + tlen)
		goto bad;
	if (!tb.addr || !pb.addr) {
		dev->msix_reason = "bar_unassigned";
		return 0;
	}
	if (tb.addr + c->table_offset < tb.addr ||
	    pb.addr + c->pba_offset < pb.addr)
		goto bad;
	dev->msix_table_phys = tb.addr + c->table_offset;
	dev->msix_pba_phys = pb.addr + c->pba_offset;
	return 0;
bad:
	dev->msix_reason = "bad_msix_table";
	return 0;
}

/*
 * A VF's MSI-X Table Size may follow the resources its PF gives it (an
 * NVMe secondary controller's interrupts, NVMe 1.4 8.5; QEMU's VFs update
 * it when they go online), so it is read again before each allocation
 * while MSI-X is off, as Linux's pci_msix_vec_count() does, and the table
 * is located again (from the PF's VF BARs: no configuration writes).
 */
int umsi_pci_vf_refresh(struct umsi_pci_dev *dev)
{
	struct umsi_cfg_view v = {
		.read = view_read, .ctx = dev, .size = UMSI_PCI_CFG_SIZE,
	};
	struct umsi_msix_cap c;
	int ret;

	if (!dev->pf || !dev->msix_cap || dev->mode != UMSI_MODE_NONE)
		return 0;
	ret = umsi_pci_read_msix_cap(&v, dev->msix_cap, &c);
	if (ret)
		return ret == -UMSI_ERANGE ? 0 : ret;
	if (c.ctrl == 0xffff)
		return -UMSI_ENODEV;
	if (c.table_size == dev->msix_size)
		return 0;
	umsi_log(dev->sys, UMSI_LOG_INFO, UMSI_BDF_FMT ": MSI-X Table Size "
		 "now %u (was %u)", UMSI_BDF_ARGS(dev->bdf), c.table_size,
		 dev->msix_size);
	dev->msix_size = c.table_size;
	dev->msix_reason = NULL;
	return msix_locate(dev, &c);
}

/* ---- registration ------------------------------------------------------- */

struct umsi_pci_dev *umsi_pci_find(struct umsi_system *sys, umsi_bdf_t bdf)
{
	struct umsi_pci_dev *dev;
	umsi_irqflags_t fl = umsi_lock(sys);

	for (dev = umsi_pci_devs(sys); dev && dev->bdf != bdf; dev = dev->next)
		;
	umsi_unlock(sys, fl);
	return dev;
}

static void dev_free(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;

	if (dev->lock)
		umsi_host_lock_destroy(sys, dev->lock);
	umsi_free(sys, dev, sizeof(*dev));
}

/* MSI: cache the capability, and turn MSI off if firmware left it on. */
static int probe_msi(struct umsi_pci_dev *dev, const struct umsi_cfg_view *v)
{
	struct umsi_msi_cap c;
	int ret = umsi_pci_read_msi_cap(v, dev->msi_cap, &c);

	if (ret == -UMSI_ERANGE) {
		log_dev(dev, UMSI_LOG_WARN, "MSI capability runs past the end "
			"of config space; MSI not used", ret);
		dev->msi_cap = 0;
		return 0;
	}
	if (ret)
		return ret;
	if (c.ctrl == 0xffff)
		return -UMSI_ENODEV;
	dev->msi_ctrl = c.ctrl;
	dev->msi_mmc = c.mmc;
	/*
	 * Encodings 6 and 7 are reserved: nothing says how many messages
	 * the device decodes. One is the only count every MSI device takes.
	 */
	if (c.mmc_reserved) {
		log_dev(dev, UMSI_LOG_WARN, "MSI Multiple Message Capable has a "
			"reserved encoding; using one message", -UMSI_ERANGE);
		dev->msi_mmc = 1;
	}
	dev->msi_64 = c.addr64;
	dev->msi_maskable = c.maskable &&
			    !(dev->quirks & UMSI_QUIRK_BROKEN_MASK);
	dev->msi_mask = dev->msi_want = c.mask;
	if (c.enabled) {
		dev->msi_ctrl &= (uint16_t)~UMSI_MSI_FLAGS_ENABLE;
		ret = umsi_pci_cfg_write(dev, dev->msi_cap + UMSI_MSI_FLAGS, 2,
					 dev->msi_ctrl);
	}
	return ret;
}

/* MSI-X: cache the capability, turn it off if left on, check the table. */
static int probe_msix(struct umsi_pci_dev *dev, const struct umsi_cfg_view *v,
		      bool check_table)
{
	struct umsi_msix_cap c;
	int ret = umsi_pci_read_msix_cap(v, dev->msix_cap, &c);

	if (ret == -UMSI_ERANGE) {
		dev->msix_reason = "bad_capability";
		return 0;
	}
	if (ret)
		return ret;
	if (c.ctrl == 0xffff)
		return -UMSI_ENODEV;
	dev->msix_ctrl = c.ctrl & (uint16_t)~(UMSI_MSIX_FLAGS_ENABLE |
					      UMSI_MSIX_FLAGS_MASKALL);
	dev->msix_size = c.table_size;
	/* Reset leaves every entry masked; anything else may have left live
	 * entries pointing anywhere. */
	dev->msix_clean = (dev->add_flags & UMSI_PCI_ADD_FRESH) &&
			  !c.enabled && !c.function_mask;
	if (c.enabled || c.function_mask) {
		ret = umsi_pci_cfg_write(dev, dev->msix_cap + UMSI_MSIX_FLAGS,
					 2, dev->msix_ctrl);
		if (ret)
			return ret;
	}
	return check_table ? msix_locate(dev, &c) : 0;
}

static int probe_intx(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	uint32_t pin;
	int ret = umsi_pci_cfg_read(dev, UMSI_PCI_INTERRUPT_PIN, 1, &pin);

	if (ret)
		return ret;
	if (pin == 0xff)
		return -UMSI_ENODEV;
	dev->intx_pin = pin <= 4 ? (uint8_t)pin : 0;
	if (!dev->intx_pin || !sys->env.ops->intx_route)
		return 0;
	ret = umsi_host_intx_route(sys, dev->bdf, dev->intx_pin,
				   &dev->route);
	if (ret == -UMSI_ENOENT)
		return 0;
	if (ret)
		return ret;
	dev->intx_routed = true;
	return 0;
}

static int probe(struct umsi_pci_dev *dev)
{
	struct umsi_cfg_view v = {
		.read = view_read, .ctx = dev, .size = UMSI_PCI_CFG_SIZE,
	};
	struct caps_found caps = { 0 };
	uint32_t id, cls, hdr;
	int ret;

	if (dev->pf) {
		/* A VF: the PF's vendor, the SR-IOV capability's device. */
		id = (uint32_t)dev->pf->sriov->vf_device << 16 | dev->pf->vendor;
	} else {
		ret = umsi_pci_cfg_read(dev, UMSI_PCI_VENDOR_ID, 4, &id);
		if (ret)
			return ret;
		if ((id & 0xffff) == 0xffff)
			return -UMSI_ENODEV;
	}
	dev->vendor = (uint16_t)id;
	dev->device = (uint16_t)(id >> 16);
	ret = umsi_pci_cfg_read(dev, UMSI_PCI_REVISION, 4, &cls);
	if (!ret)
		ret = umsi_pci_cfg_read(dev, UMSI_PCI_HEADER_TYPE, 1, &hdr);
	if (ret)
		return ret;
	if (dev->pf && cls == 0xffffffffu)
		return -UMSI_ENODEV;
	/* A VF is a type 0 function whatever the register says. */
	if (dev->pf)
		hdr = UMSI_PCI_HEADER_NORMAL;
	dev->class_code = cls >> 8;
	dev->header_type = (uint8_t)(hdr & UMSI_PCI_HEADER_TYPE_MASK);
	dev->quirks = umsi_quirk_lookup(dev->sys, dev->vendor, dev->device);
	umsi_pci_apply_policy(dev);

	ret = umsi_pci_walk_caps(&v, note_cap, &caps);
	if (ret == -UMSI_ENODEV || ret == -UMSI_EIO)
		return ret;
	if (ret) {
		/* A broken list: keep what came before the fault. */
		log_dev(dev, UMSI_LOG_WARN, "broken capability list", ret);
		dev->caps_broken = true;
		if (!caps.msi && !caps.msix)
			dev->msix_reason = "bad_capability";
	}
	dev->msi_cap = caps.msi;
	dev->msix_cap = caps.msix;
	dev->pcie_cap = caps.pcie;
	if (dev->msi_cap) {
		ret = probe_msi(dev, &v);
		if (ret)
			return ret;
	}
	if (dev->msix_cap) {
		ret = probe_msix(dev, &v, !dev->deny_reason);
		if (ret)
			return ret;
	}
	return probe_intx(dev);
}

/*
 * How bridge @b forwards a request from below (PCI Express to PCI/PCI-X
 * Bridge Specification 2.3): a conventional PCI-to-PCI bridge as its own
 * ID, a PCI Express to PCI bridge as (its secondary bus, devfn 0), PCI
 * Express ports and switches unchanged. The bridge's type is read once.
 */
static enum alias { ALIAS_NONE, ALIAS_BRIDGE, ALIAS_SECONDARY }
bridge_alias(struct umsi_pci_dev *b)
{
	uint32_t flags;

	if (!b->pcie_cap)
		return ALIAS_BRIDGE;
	if (!b->port_type_known) {
		if (umsi_pci_cfg_read(b, b->pcie_cap + UMSI_PCIE_FLAGS, 2,
				      &flags))
			return ALIAS_NONE;
		b->port_type = (uint8_t)((flags & UMSI_PCIE_FLAGS_TYPE) >>
					 UMSI_PCIE_FLAGS_TYPE_SHIFT);
		b->port_type_known = true;
	}
	switch (b->port_type) {
	case UMSI_PCIE_TYPE_PCI_BRIDGE:
		return ALIAS_SECONDARY;
	case UMSI_PCIE_TYPE_PCIE_BRIDGE:
		return ALIAS_BRIDGE;
	default:
		return ALIAS_NONE;
	}
}

/*
 * The requester ID @dev's messages carry when they reach the root (what
 * an IOMMU or an ITS sees): each bridge on the way up may take the
 * request over, and what the last one makes of it is what the root sees.
 * Which bridge, not which function, decides: a PCI Express function
 * behind a PCI Express to PCI bridge is aliased as a conventional one is.
 */
static uint32_t requester_of(struct umsi_pci_dev *dev)
{
	struct umsi_pci_dev *c = dev, *b = dev->parent;
	uint32_t rid = dev->bdf, depth;

	for (depth = 0; b && depth < 256; depth++, c = b, b = b->parent) {
		switch (bridge_alias(b)) {
		case ALIAS_BRIDGE:
			rid = b->bdf;
			dev->aliased = true;
			break;
		case ALIAS_SECONDARY:
			/* Same segment; the bus the function sits on. */
			rid = c->bdf & ~0xffu;
			dev->aliased = true;
			break;
		case ALIAS_NONE:
			break;
		}
	}
	return rid;
}

/* Messages @dev can send at most: its MSI-X table, or its MSI block. */
static uint32_t own_events(const struct umsi_pci_dev *dev)
{
	uint32_t n = dev->msix_cap ? dev->msix_size : 0;

	if (dev->msi_cap && dev->msi_mmc > n)
		n = dev->msi_mmc;
	return n;
}

/*
 * Messages every function that shares @dev's requester ID can send, all
 * together: a controller that names sources by requester (an ITS's
 * DeviceID) sizes one table for all of them.
 */
uint32_t umsi_pci_source_events(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	struct umsi_pci_dev *d;
	umsi_irqflags_t fl;
	uint64_t n = 0;

	/* Only a function behind an aliasing bridge, or a bridge, shares. */
	if (!dev->aliased && dev->header_type != 1)
		return own_events(dev);
	fl = umsi_lock(sys);
	for (d = umsi_pci_devs(sys); d; d = d->next)
		if (d->requester_id == dev->requester_id)
			n += own_events(d);
	umsi_unlock(sys, fl);
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static int dev_add(struct umsi_system *sys, umsi_bdf_t bdf,
		   struct umsi_pci_dev *parent, uint32_t flags,
		   struct umsi_pci_dev *pf, uint16_t vf_index,
		   struct umsi_pci_dev **out)
{
	struct umsi_pci_state *st;
	struct umsi_pci_dev *dev, *d;
	umsi_irqflags_t fl;
	int ret;

	if (umsi_pci_find(sys, bdf))
		return -UMSI_EEXIST;
	st = umsi_pci_state_get(sys);
	if (!st)
		return -UMSI_ENOMEM;
	dev = umsi_zalloc(sys, sizeof(*dev));
	if (!dev)
		return -UMSI_ENOMEM;
	dev->sys = sys;
	dev->bdf = bdf;
	dev->parent = parent;
	dev->add_flags = flags;
	dev->pf = pf;
	dev->vf_index = vf_index;
	dev->lock = umsi_host_lock_create(sys);
	if (!dev->lock) {
		dev_free(dev);
		return -UMSI_ENOMEM;
	}
	ret = probe(dev);
	if (ret) {
		if (ret != -UMSI_ENODEV)
			log_dev(dev, UMSI_LOG_ERROR, "cannot add function", ret);
		dev_free(dev);
		return ret;
	}
	dev->requester_id = requester_of(dev);
	fl = umsi_lock(sys);
	for (d = st->devs; d && d->bdf != bdf; d = d->next)
		;
	if (!d) {
		dev->next = st->devs;
		st->devs = dev;
	}
	umsi_unlock(sys, fl);
	if (d) {
		dev_free(dev);
		return -UMSI_EEXIST;
	}
	*out = dev;
	return 0;
}

int umsi_pci_add(struct umsi_system *sys, umsi_bdf_t bdf,
		 struct umsi_pci_dev *parent, uint32_t flags,
		 struct umsi_pci_dev **out)
{
	if (!sys || !out)
		return -UMSI_EINVAL;
	return dev_add(sys, bdf, parent, flags, NULL, 0, out);
}

/*
 * A VF sits where its PF does: behind the PF's bridge, so the same
 * aliasing applies to it. VF Enable just made it: every MSI-X entry is
 * masked (its reset state).
 */
int umsi_pci_add_vf(struct umsi_pci_dev *pf, umsi_bdf_t bdf, uint16_t index,
		    struct umsi_pci_dev **out)
{
	return dev_add(pf->sys, bdf, pf->parent, UMSI_PCI_ADD_FRESH, pf, index,
		       out);
}

void umsi_pci_free_irq_vectors(struct umsi_pci_dev *dev)
{
	if (!dev)
		return;
	switch (dev->mode) {
	case UMSI_MODE_MSI:
		umsi_msi_disable(dev);
		break;
	case UMSI_MODE_MSIX:
		umsi_msix_disable(dev);
		break;
	case UMSI_MODE_INTX:
		umsi_intx_disable(dev);
		break;
	case UMSI_MODE_NONE:
		break;
	}
}

/* Owner of quarantined vectors whose function was removed unsilenced. */
static const char orphan_quarantine[] = "removed";

/*
 * Is a function that had vectors quarantined silent now? Its IO-APIC
 * input masked (or owned by another line again), and the function gone
 * (reads all-ones) or MSI and MSI-X turned off by configuration writes
 * that completed (they are non-posted).
 */
static bool dev_silent(struct umsi_pci_dev *dev)
{
	bool off = umsi_intx_silence(dev);

	if (dev_gone(dev))
		return off;
	if (dev->msi_cap)
		off &= !umsi_pci_cfg_write(dev, dev->msi_cap + UMSI_MSI_FLAGS,
			2, dev->msi_ctrl & (uint16_t)~(UMSI_MSI_FLAGS_ENABLE |
						       UMSI_MSI_FLAGS_QSIZE));
	if (dev->msix_cap)
		off &= !umsi_pci_cfg_write(dev, dev->msix_cap +
					   UMSI_MSIX_FLAGS, 2, dev->msix_ctrl);
	return off;
}

void umsi_pci_remove(struct umsi_system *sys, struct umsi_pci_dev *dev)
{
	struct umsi_pci_dev **link, *d;
	umsi_irqflags_t fl;

	if (!sys || !dev)
		return;
	if (dev->sriov)
		umsi_pci_sriov_teardown(dev);
	umsi_pci_free_irq_vectors(dev);
	if (umsi_irq_quarantined(sys, dev)) {
		if (dev_silent(dev)) {
			umsi_irq_release_owned(sys, dev);
		} else {
			log_dev(dev, UMSI_LOG_ERROR, "removed while it may still "
				"send MSIs; its vectors stay reserved until the "
				"system goes down", -UMSI_EIO);
			umsi_irq_quarantine_transfer(sys, dev,
						     &orphan_quarantine);
		}
	}
	fl = umsi_lock(sys);
	for (link = &umsi_pci_state(sys)->devs; *link && *link != dev;
	     link = &(*link)->next)
		;
	if (*link)
		*link = dev->next;
	/* Children keep a pointer to their bridge for the quirk check. */
	for (d = umsi_pci_devs(sys); d; d = d->next)
		if (d->parent == dev)
			d->parent = dev->parent;
	umsi_unlock(sys, fl);
	if (dev->pf)
		umsi_pci_sriov_forget(dev);
	dev_free(dev);
}

enum umsi_pci_mode umsi_pci_mode(struct umsi_pci_dev *dev)
{
	return dev ? dev->mode : UMSI_MODE_NONE;
}

void umsi_pci_get_info(struct umsi_pci_dev *dev, struct umsi_pci_info *info)
{
	(void)umsi_pci_vf_refresh(dev);
	umsi_memset(info, 0, sizeof(*info));
	info->bdf = dev->bdf;
	info->vendor = dev->vendor;
	info->device = dev->device;
	info->class_code = dev->class_code;
	info->msi_cap = dev->msi_cap;
	info->msix_cap = dev->msix_cap;
	info->msi_max = dev->msi_cap ? dev->msi_mmc : 0;
	info->msix_max = dev->msix_cap ? dev->msix_size : 0;
	info->intx_pin = dev->intx_pin;
	info->mode = dev->mode;
	info->nvec = dev->nvec;
	info->msi_reserved = dev->mode == UMSI_MODE_MSI ? dev->msi_block : 0;
	info->gsi = dev->mode == UMSI_MODE_INTX ? dev->route.gsi : 0;
	/* A list that broke before MSI-X says nothing of MSI-X. */
	info->msix_reason = dev->msix_cap ? dev->msix_reason :
			    dev->caps_broken ? "bad_capability" : "no_capability";
	info->quarantined = umsi_irq_quarantined(dev->sys, dev);
	info->is_vf = dev->pf != NULL;
	info->pf = dev->pf ? dev->pf->bdf : 0;
	info->vf_index = dev->vf_index;
	info->num_vfs = dev->sriov ? dev->sriov->lay.nvfs : 0;
	if (dev->deny_reason)
		info->reason = dev->deny_reason;
	else if (!dev->msi_cap && !dev->msix_cap)
		info->reason = dev->msix_reason ? dev->msix_reason :
			       "no_capability";
	else if (!dev->msi_cap && dev->msix_reason)
		info->reason = dev->msix_reason;
	else
		info->reason = NULL;
}

/*
 * The function's MSI-X table or MSI capability as a source of the
 * message layer: its requester, @nslots slots, uMSI's own operations on
 * it; quarantined vectors belong to the function (freed at remove).
 */
int umsi_pci_source_get(struct umsi_pci_dev *dev, uint32_t nslots, bool block,
			const struct umsi_source_ops *ops, const char *name,
			struct umsi_source **out)
{
	struct umsi_source_config cfg = {
		.requester_id = dev->requester_id,
		.bdf = dev->bdf,
		.nslots = nslots,
		.block = block,
		.ops = ops,
		.ctx = dev,
		.name = name,
	};

	return umsi_source_create_owned(dev->sys, &cfg, dev, out);
}

/* Forget the source once its targets are gone. */
void umsi_pci_source_put(struct umsi_source **src)
{
	if (*src && !umsi_source_destroy(*src))
		*src = NULL;
}
