/* SPDX-License-Identifier: MIT */
/*
 * MSI-X (PCI 3.0, 6.8.2): a table of (address, data, vector control)
 * entries in a memory BAR, and a Pending Bit Array.
 *
 * Table writes are posted MMIO writes: they may still be on their way when
 * mmio_write32() returns, but they reach the device in order (posted writes
 * do not pass posted writes), so a mask write followed by address and data
 * writes is safe without reads in between. A read from the same function
 * flushes them when uMSI needs them to have landed: after masking an entry
 * (so no message follows the return), after reprogramming a live entry,
 * and once at the end of set-up (which also verifies the device took the
 * writes).
 *
 * Vector Control reserved bits (31:1) are written as zero. A copy of each
 * used entry is kept, so masking, unmasking and retargeting never read the
 * table first.
 *
 * The table is a source of the message layer (umsi/source.h), as it would
 * be for a kernel that writes the device itself: the layer allocates the
 * targets at table slots and composes their messages; the operations
 * below write them (and again when a target moves), mask and unmask.
 */
#include <umsi/internal/hostcall.h>
#include <umsi/internal/pci.h>
#include <umsi/internal/source.h>

static volatile void *entry_reg(struct umsi_pci_dev *dev, uint32_t idx,
				uint32_t reg)
{
	return (volatile uint8_t *)dev->table + idx * UMSI_MSIX_ENTRY_SIZE + reg;
}

static void twrite(struct umsi_pci_dev *dev, uint32_t idx, uint32_t reg,
		   uint32_t val)
{
	umsi_mmio_write32(dev->sys, entry_reg(dev, idx, reg), val);
}

static uint32_t tread(struct umsi_pci_dev *dev, uint32_t idx, uint32_t reg)
{
	return umsi_mmio_read32(dev->sys, entry_reg(dev, idx, reg));
}

static uint64_t pba_len(const struct umsi_pci_dev *dev)
{
	return ((uint64_t)dev->msix_size + 63) / 64 * 8;
}

/* The entries' state and, after it, the bitmap of dynamic ones. */
static size_t state_size(const struct umsi_pci_dev *dev)
{
	return (size_t)dev->msix_size * sizeof(struct umsi_msix_vec) +
	       ((size_t)dev->msix_size + 63) / 64 * 8;
}

static bool used(const struct umsi_pci_dev *dev, uint32_t idx)
{
	return (dev->msix_used[idx / 64] >> (idx % 64)) & 1;
}

static void set_used(struct umsi_pci_dev *dev, uint32_t idx, bool on)
{
	if (on)
		dev->msix_used[idx / 64] |= 1ull << (idx % 64);
	else
		dev->msix_used[idx / 64] &= ~(1ull << (idx % 64));
}

/* Write the three message words of entry @idx. [dev lock] */
static void put_msg(struct umsi_pci_dev *dev, uint32_t idx,
		    const struct umsi_msg *msg)
{
	twrite(dev, idx, UMSI_MSIX_ENTRY_ADDR_LO, (uint32_t)msg->address);
	twrite(dev, idx, UMSI_MSIX_ENTRY_ADDR_HI,
	       (uint32_t)(msg->address >> 32));
	twrite(dev, idx, UMSI_MSIX_ENTRY_DATA, msg->data);
}

/*
 * Set entry @idx's Vector Control to @ctrl (mask bit set) and read it
 * back: the read flushes the posted writes before it, so no message
 * leaves the entry after this returns. Return: what the read gave.
 * [dev lock]
 */
static uint32_t mask_flush(struct umsi_pci_dev *dev, uint32_t idx,
			   uint32_t ctrl)
{
	twrite(dev, idx, UMSI_MSIX_ENTRY_CTRL, ctrl);
	return tread(dev, idx, UMSI_MSIX_ENTRY_CTRL);
}

/* The table index of entry state @v: its position. */
static uint32_t vidx(const struct umsi_pci_dev *dev,
		     const struct umsi_msix_vec *v)
{
	return (uint32_t)(v - dev->msix_state);
}

static void vset(struct umsi_msix_vec *v, const struct umsi_msg *msg)
{
	v->address = msg->address;
	v->data = msg->data;
}

/* Write the entry's message as kept. [dev lock] */
static void vput(struct umsi_pci_dev *dev, const struct umsi_msix_vec *v)
{
	struct umsi_msg m = { .address = v->address, .data = v->data };

	put_msg(dev, vidx(dev, v), &m);
}

/* The bitmap of entries added while MSI-X was on, after the states. */
_Static_assert(sizeof(struct umsi_msix_vec) % sizeof(uint64_t) == 0,
	       "the bitmap after the entry states is aligned");
static uint64_t *dynamic_map(const struct umsi_pci_dev *dev)
{
	return (uint64_t *)(void *)(dev->msix_state + dev->msix_size);
}

static void set_dynamic(struct umsi_pci_dev *dev, uint32_t idx, bool on)
{
	if (on)
		dynamic_map(dev)[idx / 64] |= 1ull << (idx % 64);
	else
		dynamic_map(dev)[idx / 64] &= ~(1ull << (idx % 64));
}

bool umsi_msix_vec_dynamic(const struct umsi_pci_dev *dev,
			   const struct umsi_msix_vec *v)
{
	uint32_t idx = vidx(dev, v);

	return (dynamic_map(dev)[idx / 64] >> (idx % 64)) & 1;
}

/* Write the words of @msg that differ from the entry's copy. [dev lock] */
static void write_msg(struct umsi_pci_dev *dev, struct umsi_msix_vec *v,
		      const struct umsi_msg *msg)
{
	uint32_t idx = vidx(dev, v);

	if ((uint32_t)v->address != (uint32_t)msg->address)
		twrite(dev, idx, UMSI_MSIX_ENTRY_ADDR_LO,
		       (uint32_t)msg->address);
	if ((uint32_t)(v->address >> 32) != (uint32_t)(msg->address >> 32))
		twrite(dev, idx, UMSI_MSIX_ENTRY_ADDR_HI,
		       (uint32_t)(msg->address >> 32));
	if (v->data != msg->data)
		twrite(dev, idx, UMSI_MSIX_ENTRY_DATA, msg->data);
	vset(v, msg);
}

/* The state of table entry @index (MSI-X on). */
static struct umsi_msix_vec *vec(struct umsi_pci_dev *dev, uint32_t index)
{
	return &dev->msix_state[index];
}

/* The state of the @i-th vector handed out. */
static struct umsi_msix_vec *vec_nth(struct umsi_pci_dev *dev, uint32_t i)
{
	return vec(dev, dev->descs[i]->hwirq);
}

/* Mask: 1 write and 1 flushing read, so nothing is sent after return. */
static int msix_mask(void *ctx, uint32_t index)
{
	struct umsi_pci_dev *dev = ctx;
	struct umsi_msix_vec *v;
	umsi_irqflags_t fl;

	/* MSI-X went off (its IRQs quarantined): the table is not ours. */
	if (!dev->msix_state)
		return -UMSI_ENODEV;
	v = vec(dev, index);
	fl = umsi_pci_dev_lock(dev);
	v->ctrl |= UMSI_MSIX_CTRL_MASKBIT;
	(void)mask_flush(dev, vidx(dev, v), v->ctrl);
	umsi_pci_dev_unlock(dev, fl);
	return 0;
}

/* Unmask: 1 write; it needs no flush (a late unmask loses nothing). */
static int msix_unmask(void *ctx, uint32_t index)
{
	struct umsi_pci_dev *dev = ctx;
	struct umsi_msix_vec *v;
	umsi_irqflags_t fl;

	/* MSI-X went off (its IRQs quarantined): the table is not ours. */
	if (!dev->msix_state)
		return -UMSI_ENODEV;
	v = vec(dev, index);
	fl = umsi_pci_dev_lock(dev);
	v->ctrl &= ~UMSI_MSIX_CTRL_MASKBIT;
	twrite(dev, vidx(dev, v), UMSI_MSIX_ENTRY_CTRL, v->ctrl);
	umsi_pci_dev_unlock(dev, fl);
	return 0;
}

/*
 * Reprogram an entry that may be live. The specification leaves a write
 * to an unmasked entry undefined (6.8.2.9), so: mask it, write the words
 * that change, restore Vector Control, and read to flush. A message the
 * device raises meanwhile sets the PBA bit and goes out to the new target
 * on unmask. A masked entry needs only the writes. Minimum accesses: live,
 * vector change only: 3 writes (mask, data, unmask) + 1 read; masked: 1.
 */
static int msix_write_msg(void *ctx, uint32_t index, const struct umsi_msg *m)
{
	struct umsi_pci_dev *dev = ctx;
	struct umsi_msix_vec *v;
	struct umsi_msg msg = *m;
	umsi_irqflags_t fl;
	bool live;

	/* MSI-X went off (its IRQs quarantined): the table is not ours. */
	if (!dev->msix_state)
		return -UMSI_ENODEV;
	v = vec(dev, index);
	fl = umsi_pci_dev_lock(dev);
	if (v->address == msg.address && v->data == msg.data) {
		umsi_pci_dev_unlock(dev, fl);
		return 0;
	}
	live = !(v->ctrl & UMSI_MSIX_CTRL_MASKBIT);
	if (live)
		twrite(dev, vidx(dev, v), UMSI_MSIX_ENTRY_CTRL,
		       v->ctrl | UMSI_MSIX_CTRL_MASKBIT);
	write_msg(dev, v, &msg);
	/* The restore read flushes it all (the unmasked value: no mask). */
	if (live) {
		twrite(dev, vidx(dev, v), UMSI_MSIX_ENTRY_CTRL, v->ctrl);
		(void)tread(dev, vidx(dev, v), UMSI_MSIX_ENTRY_CTRL);
	}
	umsi_pci_dev_unlock(dev, fl);
	return 0;
}

static int msix_startup(void *ctx, uint32_t index, uint32_t irq)
{
	(void)index;
	return umsi_pci_bme_check(ctx, irq);
}

static const struct umsi_source_ops msix_ops = {
	.write_msg = msix_write_msg,
	.mask = msix_mask,
	.unmask = msix_unmask,
	.startup = msix_startup,
};

struct umsi_msix_vec *umsi_msix_vec_of(struct umsi_pci_dev *dev, uint32_t irq)
{
	int32_t s;

	if (!dev->msix_src)
		return NULL;
	s = umsi_source_slot(dev->msix_src, irq);
	return s < 0 ? NULL : vec(dev, (uint32_t)s);
}

/* ---- set-up ----------------------------------------------------------- */

/* Free every entry's state; its IRQ is gone already. */
static void free_vecs(struct umsi_pci_dev *dev)
{
	uint32_t i;

	if (!dev->msix_state)
		return;
	for (i = 0; i < dev->msix_size; i++)
		set_used(dev, i, false);
	umsi_free(dev->sys, dev->msix_state, state_size(dev));
	dev->msix_state = NULL;
}

static int map_table(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	void *t, *p;
	int ret;

	ret = umsi_host_mmio_map(sys, dev->msix_table_phys,
				 (uint64_t)dev->msix_size * UMSI_MSIX_ENTRY_SIZE,
				 &t);
	if (ret)
		return ret;
	ret = umsi_host_mmio_map(sys, dev->msix_pba_phys, pba_len(dev),
				 &p);
	if (ret) {
		umsi_host_mmio_unmap(sys, t, (uint64_t)dev->msix_size *
				     UMSI_MSIX_ENTRY_SIZE);
		return ret;
	}
	dev->table = t;
	dev->pba = p;
	return 0;
}

static void unmap_table(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;

	if (dev->table)
		umsi_host_mmio_unmap(sys, (void *)dev->table,
				     (uint64_t)dev->msix_size *
				     UMSI_MSIX_ENTRY_SIZE);
	if (dev->pba)
		umsi_host_mmio_unmap(sys, (void *)dev->pba, pba_len(dev));
	dev->table = NULL;
	dev->pba = NULL;
}

/*
 * Bring MSI-X up the way Linux does, because some devices accept table
 * writes only while MSI-X is enabled:
 *  1. Memory Space on if it is off (the table lives in a memory BAR);
 *  2. MSI-X Enable and Function Mask set in one write: the function may
 *     send nothing, whatever its entries say;
 *  3. unless the table is known clean (reset state, or uMSI left it so),
 *     every entry masked: a previous kernel or firmware may have left
 *     entries live, pointing anywhere;
 *  4. each used entry's address and data written; its mask bit stays set
 *     until a handler is requested;
 *  5. one read, of the last data word written: it flushes the posted
 *     writes and shows the device took them (all-ones: gone or not
 *     decoding);
 *  6. Bus Master on, INTx off;
 *  7. Function Mask cleared.
 * Table accesses for N entries: 3N writes + 1 read on a clean table, plus
 * one write per entry (T for a table of T entries) otherwise; the N unmask
 * writes come with the requests. Configuration: 1 read (Command) and 2
 * writes (Message Control twice), plus Command when it changes.
 */
static int msix_program(struct umsi_pci_dev *dev, bool restore)
{
	uint16_t cmd, newcmd, ctrl_reg = dev->msix_cap + UMSI_MSIX_FLAGS;
	bool cmd_written = false, ctrl_written = false;
	uint32_t i, last = 0, expect = 0, got;
	int ret;

	ret = umsi_pci_read_command(dev, &cmd);
	if (ret)
		return ret;
	if (!restore)
		dev->cmd_before = cmd;
	newcmd = cmd;
	/* 1. Memory decode. */
	if (!(cmd & UMSI_PCI_CMD_MEMORY)) {
		newcmd = cmd | UMSI_PCI_CMD_MEMORY;
		cmd_written = true;
		ret = umsi_pci_cfg_write(dev, UMSI_PCI_COMMAND, 2, newcmd);
		if (ret)
			goto fail;
	}
	/* 2. Enable + Function Mask. */
	ctrl_written = true;
	ret = umsi_pci_cfg_write(dev, ctrl_reg, 2, dev->msix_ctrl |
				 UMSI_MSIX_FLAGS_ENABLE |
				 UMSI_MSIX_FLAGS_MASKALL);
	if (ret)
		goto fail;
	/* 3. Mask what may be live. */
	if (!dev->msix_clean && !(restore && dev->reset_expected)) {
		for (i = 0; i < dev->msix_size; i++)
			if (!restore || !used(dev, i))
				twrite(dev, i, UMSI_MSIX_ENTRY_CTRL,
				       UMSI_MSIX_CTRL_MASKBIT);
		dev->msix_clean = true;
	}
	/* 4. The used entries (restore: with their mask state). */
	for (i = 0; i < dev->ndesc; i++) {
		struct umsi_msix_vec *v = vec_nth(dev, i);

		vput(dev, v);
		if (restore)
			twrite(dev, vidx(dev, v), UMSI_MSIX_ENTRY_CTRL, v->ctrl);
		last = vidx(dev, v);
		expect = v->data;
	}
	/* 5. Flush and verify. */
	if (dev->ndesc) {
		got = tread(dev, last, UMSI_MSIX_ENTRY_DATA);
		if (got != expect) {
			ret = got == 0xffffffffu ? -UMSI_ENODEV : -UMSI_EIO;
			umsi_log(dev->sys, UMSI_LOG_ERROR, UMSI_BDF_FMT ": "
				 "MSI-X entry %u reads back 0x%x, not 0x%x",
				 UMSI_BDF_ARGS(dev->bdf),
				 last, got, expect);
			goto fail;
		}
	}
	/* 6. Bus Master on, INTx off. */
	cmd_written = true;
	ret = umsi_pci_update_command(dev, newcmd,
				      umsi_pci_msi_command(dev, newcmd));
	if (ret)
		goto fail;
	/* 7. Function Mask off. */
	ret = umsi_pci_cfg_write(dev, ctrl_reg, 2, dev->msix_ctrl |
				 UMSI_MSIX_FLAGS_ENABLE);
	if (ret)
		goto fail;
	dev->reset_expected = false;
	return 0;
fail:
	if (ctrl_written)
		(void)umsi_pci_cfg_write(dev, ctrl_reg, 2, dev->msix_ctrl);
	if (cmd_written)
		(void)umsi_pci_cfg_write(dev, UMSI_PCI_COMMAND, 2, cmd);
	return ret;
}

static int check_indices(struct umsi_pci_dev *dev, const uint16_t *idx,
			 uint32_t n)
{
	uint64_t seen[UMSI_MSIX_BITMAP_WORDS] = { 0 };
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (idx[i] >= dev->msix_size)
			return -UMSI_EINVAL;
		if ((seen[idx[i] / 64] >> (idx[i] % 64)) & 1)
			return -UMSI_EINVAL;
		seen[idx[i] / 64] |= 1ull << (idx[i] % 64);
	}
	return 0;
}

int umsi_msix_enable(struct umsi_pci_dev *dev, const uint16_t *indices,
		     uint32_t min, uint32_t max, bool managed, int64_t irq_at)
{
	struct umsi_system *sys = dev->sys;
	struct umsi_target_req req = { .index = 0 };
	uint32_t n = max, i, irq_num, *slots = NULL, *irqs = NULL;
	struct umsi_msg *msgs = NULL;
	size_t bytes = 0;
	int got, ret;

	if (!dev->msix_cap)
		return -UMSI_ENOENT;
	if (dev->deny_reason)
		return -UMSI_EPERM;
	ret = umsi_pci_vf_refresh(dev);
	if (ret)
		return ret;
	if (dev->msix_reason)
		return -UMSI_ENOTSUP;
	if (indices) {
		ret = check_indices(dev, indices, max);
		if (ret)
			return ret;
		min = max;
	}
	if (n > dev->msix_size)
		n = dev->msix_size;
	if (irq_at >= 0)
		n = 1;
	if (n < min)
		return -UMSI_ENOSPC;
	ret = umsi_pci_descs_alloc(dev, dev->msix_size);
	if (ret)
		return ret;
	dev->msix_state = umsi_zalloc(sys, state_size(dev));
	if (!dev->msix_state) {
		ret = -UMSI_ENOMEM;
		goto fail_descs;
	}
	ret = umsi_pci_source_get(dev, dev->msix_size, false, &msix_ops,
				  "PCI-MSI-X", &dev->msix_src);
	if (ret)
		goto fail_state;
	/* Scratch: the slots asked for, and what the layer hands back. */
	bytes = n * (2 * sizeof(uint32_t) + sizeof(struct umsi_msg));
	msgs = umsi_zalloc(sys, bytes);
	if (!msgs) {
		ret = -UMSI_ENOMEM;
		goto fail_src;
	}
	irqs = (uint32_t *)(void *)(msgs + n);
	slots = irqs + n;
	for (i = 0; indices && i < n; i++)
		slots[i] = indices[i];
	irq_num = (uint32_t)irq_at;
	req.count = n;
	req.min = indices || irq_at >= 0 ? 0 : min;
	req.slots = indices ? slots : NULL;
	req.irqs = irq_at >= 0 ? &irq_num : NULL;
	req.msgs = msgs;
	/* Written below in one sequence, before anything may move them. */
	req.flags = UMSI_TARGET_NO_WRITE | UMSI_TARGET_CLAIMED |
		    (managed ? UMSI_TARGET_SPREAD : 0);
	umsi_source_set_events(dev->msix_src, umsi_pci_source_events(dev));
	got = umsi_source_alloc(dev->msix_src, &req, irqs);
	if (got < 0) {
		ret = got;
		goto fail_scratch;
	}
	n = (uint32_t)got;
	ret = 0;
	for (i = 0; i < n; i++)
		dev->descs[i] = umsi_irq_to_desc(sys, irqs[i]);
	for (i = 0; i < n; i++) {
		struct umsi_msix_vec *v = vec(dev, dev->descs[i]->hwirq);

		set_dynamic(dev, vidx(dev, v), false);
		v->ctrl = UMSI_MSIX_CTRL_MASKBIT;
		vset(v, &msgs[i]);
		set_used(dev, vidx(dev, v), true);
	}
	dev->ndesc = n;
	if (!ret)
		ret = map_table(dev);
	if (!ret) {
		ret = msix_program(dev, false);
		if (ret)
			unmap_table(dev);
	}
	if (ret) {
		/* Never written to a live table: nothing can send to them. */
		umsi_source_drop(dev->msix_src, dev->descs, n, 0);
		goto fail_scratch;     /* free_vecs() clears the used bits */
	}
	dev->nvec = n;
	dev->mode = UMSI_MODE_MSIX;
	/* Its CPU went offline meanwhile and it could not leave: undo. */
	ret = umsi_source_activate(dev->msix_src, irqs, n);
	umsi_free(sys, msgs, bytes);
	if (ret) {
		umsi_pci_free_irq_vectors(dev);
		return ret;
	}
	return (int)n;

fail_scratch:
	umsi_free(sys, msgs, bytes);
fail_src:
	umsi_pci_source_put(&dev->msix_src);
fail_state:
	free_vecs(dev);
fail_descs:
	umsi_pci_descs_free(dev);
	return ret;
}

/*
 * Tear down, in the order that keeps every vector safe:
 *  1. mask each used entry still unmasked (MMIO: posted writes, which
 *     cannot fail the way a configuration access can), then one read of
 *     the last entry masked: it flushes the writes, and a mask bit read
 *     back set proves the device took them;
 *  2. MSI-X Enable off (a non-posted configuration write: success means
 *     the device has it), INTx Disable as it was;
 *  3. the IRQs go (no CPU still dispatches them), then the mapping.
 * The device is quiet when its entries are proven masked, or MSI-X is
 * proven off, or it reads all-ones (gone). Otherwise its vectors are
 * quarantined, not freed: it may still send to them. The table is left
 * with every entry masked, so the next enable can skip masking it.
 */
void umsi_msix_disable(struct umsi_pci_dev *dev)
{
	umsi_irqflags_t fl;
	uint16_t cmd;
	uint32_t i, last = 0, got;
	bool wrote = false, masked = true, off, gone;
	int ret;

	fl = umsi_pci_dev_lock(dev);
	for (i = 0; i < dev->ndesc; i++) {
		struct umsi_msix_vec *v = vec_nth(dev, i);

		if (v->ctrl & UMSI_MSIX_CTRL_MASKBIT)
			continue;
		v->ctrl |= UMSI_MSIX_CTRL_MASKBIT;
		twrite(dev, vidx(dev, v), UMSI_MSIX_ENTRY_CTRL, v->ctrl);
		last = vidx(dev, v);
		wrote = true;
	}
	if (wrote) {
		got = tread(dev, last, UMSI_MSIX_ENTRY_CTRL);
		masked = got != 0xffffffffu && (got & UMSI_MSIX_CTRL_MASKBIT);
	}
	umsi_pci_dev_unlock(dev, fl);
	ret = umsi_pci_read_command(dev, &cmd);
	gone = ret == -UMSI_ENODEV;
	off = !gone && !umsi_pci_cfg_write(dev, dev->msix_cap +
					   UMSI_MSIX_FLAGS, 2, dev->msix_ctrl);
	if (!ret)
		umsi_pci_restore_intx_disable(dev, cmd);
	dev->msix_clean = masked && !gone;
	umsi_source_drop(dev->msix_src, dev->descs, dev->ndesc,
			 gone || masked || off ? 0 : UMSI_SOURCE_MAY_SEND);
	unmap_table(dev);
	umsi_pci_source_put(&dev->msix_src);
	free_vecs(dev);
	umsi_pci_descs_free(dev);
}

int umsi_msix_restore(struct umsi_pci_dev *dev)
{
	return msix_program(dev, true);
}

int umsi_msix_pending(struct umsi_pci_dev *dev, uint32_t n)
{
	struct umsi_msix_vec *v;
	uint32_t w;

	if (n >= dev->nvec)
		return -UMSI_EINVAL;
	v = vec_nth(dev, n);
	w = umsi_mmio_read32(dev->sys, dev->pba + vidx(dev, v) / 32);
	return (w >> (vidx(dev, v) % 32)) & 1;
}

/* ---- dynamic entries ------------------------------------------------------ */

/*
 * Add one entry while MSI-X is on. Unused entries are masked (uMSI masked
 * them at enable, or the table was clean), so the new entry is written
 * masked: address and data, 3 writes, no flush (the unmask that makes it
 * live is a later posted write to the same function and cannot pass them).
 */
int umsi_msix_add_entry(struct umsi_pci_dev *dev, int32_t index, bool dynamic)
{
	struct umsi_system *sys = dev->sys;
	struct umsi_target_req req = { .count = 1, .index = UMSI_SLOT_ANY };
	struct umsi_irq_desc *d;
	struct umsi_msix_vec *v;
	struct umsi_msg msg;
	umsi_irqflags_t fl;
	uint32_t irq;
	int ret;

	if (dev->mode != UMSI_MODE_MSIX)
		return -UMSI_EINVAL;
	if (index >= 0 && (uint32_t)index >= dev->msix_size)
		return -UMSI_EINVAL;
	if (index >= 0 && used(dev, (uint32_t)index))
		return -UMSI_EBUSY;
	if (dev->ndesc == dev->descs_cap)
		return -UMSI_ENOSPC;
	req.index = index >= 0 ? index : UMSI_SLOT_ANY;
	req.msgs = &msg;
	req.flags = UMSI_TARGET_NO_WRITE | UMSI_TARGET_CLAIMED;
	umsi_source_set_events(dev->msix_src, umsi_pci_source_events(dev));
	ret = umsi_source_alloc(dev->msix_src, &req, &irq);
	if (ret < 0)
		return ret;
	d = umsi_irq_to_desc(sys, irq);
	v = vec(dev, d->hwirq);
	set_dynamic(dev, vidx(dev, v), dynamic);
	v->ctrl = UMSI_MSIX_CTRL_MASKBIT;
	vset(v, &msg);
	fl = umsi_pci_dev_lock(dev);
	vput(dev, v);
	umsi_pci_dev_unlock(dev, fl);
	set_used(dev, vidx(dev, v), true);
	dev->descs[dev->ndesc++] = d;
	dev->nvec = dev->ndesc;
	/* Its CPU went offline meanwhile and it could not leave: undo. */
	ret = umsi_source_activate(dev->msix_src, &irq, 1);
	if (ret) {
		umsi_msix_remove_entry(dev, d);
		return ret;
	}
	return (int)irq;
}

/*
 * Remove one entry: masked (1 write + 1 read if live), then freed. A mask
 * that does not read back set (the function stopped decoding, or is gone)
 * leaves the entry's vector quarantined until the function is removed.
 */
int umsi_msix_remove_entry(struct umsi_pci_dev *dev, struct umsi_irq_desc *d)
{
	struct umsi_msix_vec *v;
	umsi_irqflags_t fl;
	uint32_t i, got;
	bool masked = true;

	for (i = 0; i < dev->ndesc && dev->descs[i] != d; i++)
		;
	if (i == dev->ndesc)
		return -UMSI_ENOENT;
	v = vec(dev, d->hwirq);
	fl = umsi_pci_dev_lock(dev);
	if (!(v->ctrl & UMSI_MSIX_CTRL_MASKBIT)) {
		v->ctrl |= UMSI_MSIX_CTRL_MASKBIT;
		got = mask_flush(dev, vidx(dev, v), v->ctrl);
		masked = got != 0xffffffffu && (got & UMSI_MSIX_CTRL_MASKBIT);
	}
	umsi_pci_dev_unlock(dev, fl);
	umsi_source_drop(dev->msix_src, &d, 1,
			 masked ? 0 : UMSI_SOURCE_MAY_SEND);
	set_used(dev, vidx(dev, v), false);
	for (; i + 1 < dev->ndesc; i++)
		dev->descs[i] = dev->descs[i + 1];
	dev->ndesc--;
	dev->nvec = dev->ndesc;
	return 0;
}
