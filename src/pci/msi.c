/* SPDX-License-Identifier: MIT */
/*
 * MSI (PCI 3.0, 6.8.1): one address, one data word, 1-32 messages.
 *
 * A device with Multiple Message Enable = k may send any of 2^k messages,
 * ORing the message number into the low k bits of the data. So n messages
 * take the smallest 2^k >= n vectors as one aligned block on one CPU, and
 * all 2^k become IRQs (a message the driver did not ask for still reaches
 * a descriptor and is counted, never a stranger's vector).
 *
 * Per-vector mask bits are optional; uMSI keeps a copy of the mask
 * register so masking is one configuration write. Configuration writes
 * are non-posted (the device has the value when the write returns), so
 * MSI needs no flushing reads.
 *
 * The capability is a block source of the message layer (umsi/source.h):
 * the layer allocates the block and composes its message; the operations
 * below write it, mask and unmask.
 */
#include <umsi/internal/bitops.h>
#include <umsi/internal/pci.h>
#include <umsi/internal/source.h>

static uint16_t data_reg(const struct umsi_pci_dev *dev)
{
	return (uint16_t)(dev->msi_cap + (dev->msi_64 ? UMSI_MSI_DATA_64 :
					  UMSI_MSI_DATA_32));
}

static uint16_t mask_reg(const struct umsi_pci_dev *dev)
{
	return (uint16_t)(dev->msi_cap + (dev->msi_64 ? UMSI_MSI_MASK_64 :
					  UMSI_MSI_MASK_32));
}

static uint16_t pending_reg(const struct umsi_pci_dev *dev)
{
	return (uint16_t)(dev->msi_cap + (dev->msi_64 ? UMSI_MSI_PENDING_64 :
					  UMSI_MSI_PENDING_32));
}

/* Bits of @n vectors from 0 (n up to 32). */
static uint32_t low_bits(uint32_t n)
{
	return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}

/* Write the mask register and keep the copy in step. [dev lock] */
static int write_mask(struct umsi_pci_dev *dev, uint32_t mask)
{
	int ret = umsi_pci_cfg_write(dev, mask_reg(dev), 4, mask);

	if (!ret)
		dev->msi_mask = mask;
	return ret;
}

static int msi_mask(void *ctx, uint32_t index)
{
	struct umsi_pci_dev *dev = ctx;
	umsi_irqflags_t fl;
	int ret;

	fl = umsi_pci_dev_lock(dev);
	ret = write_mask(dev, dev->msi_want | 1u << index);
	if (!ret)
		dev->msi_want = dev->msi_mask;
	umsi_pci_dev_unlock(dev, fl);
	return ret;
}

static int msi_unmask(void *ctx, uint32_t index)
{
	struct umsi_pci_dev *dev = ctx;
	umsi_irqflags_t fl;
	int ret;

	fl = umsi_pci_dev_lock(dev);
	ret = write_mask(dev, dev->msi_want & ~(1u << index));
	if (!ret)
		dev->msi_want = dev->msi_mask;
	umsi_pci_dev_unlock(dev, fl);
	return ret;
}

/*
 * Write the words of @msg that differ from what the device holds, data
 * first, then the low address, then the high address; the copy follows
 * each write that succeeded, so a failure leaves it telling the truth.
 */
static int write_msg(struct umsi_pci_dev *dev, const struct umsi_msg *msg)
{
	struct umsi_msg *cur = &dev->msi_msg;
	uint32_t lo = (uint32_t)msg->address, hi = (uint32_t)(msg->address >> 32);
	int ret;

	if ((cur->data & 0xffff) != (msg->data & 0xffff)) {
		ret = umsi_pci_cfg_write(dev, data_reg(dev), 2,
					 msg->data & 0xffff);
		if (ret)
			return ret;
		cur->data = msg->data & 0xffff;
	}
	if ((uint32_t)cur->address != lo) {
		ret = umsi_pci_cfg_write(dev, dev->msi_cap + UMSI_MSI_ADDR_LO,
					 4, lo);
		if (ret)
			return ret;
		cur->address = (cur->address & ~0xffffffffull) | lo;
	}
	if ((uint32_t)(cur->address >> 32) != hi) {
		ret = umsi_pci_cfg_write(dev, dev->msi_cap + UMSI_MSI_ADDR_HI,
					 4, hi);
		if (ret)
			return ret;
		cur->address = ((uint64_t)hi << 32) | (uint32_t)cur->address;
	}
	return 0;
}

/* A message this device can hold: 64-bit only when it (truly) is. */
static int check_msg(struct umsi_pci_dev *dev, const struct umsi_msg *msg)
{
	if (!(msg->address >> 32))
		return 0;
	if (!dev->msi_64 || (dev->quirks & UMSI_QUIRK_NO_64BIT_MSI))
		return -UMSI_ENOTSUP;
	return 0;
}

/*
 * Retarget a live MSI (the whole block when it has several vectors).
 *
 * With mask bits: mask the block, write, restore the mask; a message
 * raised meanwhile waits in the pending bits and goes out, to the new
 * target, on unmask.
 *
 * Without mask bits the device may fire between any two writes, so the
 * order is what makes it safe: data first, then address. The message in
 * between is (old address, new data): the new vector on the old CPU,
 * which the IRQ core keeps reserved and published there until this
 * returns (or the vector did not change, and it is simply the old
 * message). Writing the address first would give (new CPU, old vector),
 * which nobody reserved. The upper address half cannot be part of that
 * dance; on x86 it is always 0, and a change of it is refused.
 */
static int msi_write_msg(void *ctx, uint32_t index, const struct umsi_msg *m)
{
	struct umsi_pci_dev *dev = ctx;
	struct umsi_msg msg = *m;
	umsi_irqflags_t fl;
	uint32_t bits, saved;
	int ret, ret2;

	if (index)
		return -UMSI_EINVAL;    /* the block's one message is slot 0's */
	ret = check_msg(dev, &msg);
	if (ret)
		return ret;
	fl = umsi_pci_dev_lock(dev);
	if (!dev->msi_maskable) {
		if ((msg.address >> 32) != (dev->msi_msg.address >> 32))
			ret = -UMSI_ENOTSUP;
		else
			ret = write_msg(dev, &msg);
		umsi_pci_dev_unlock(dev, fl);
		return ret;
	}
	/*
	 * Restore what mask()/unmask() asked for, not what the register held:
	 * after a restore that failed, the next call puts it right.
	 */
	bits = low_bits(dev->ndesc ? dev->ndesc : 1);
	saved = dev->msi_want;
	if ((dev->msi_mask & bits) != bits)
		ret = write_mask(dev, dev->msi_mask | bits);
	if (!ret)
		ret = write_msg(dev, &msg);
	if (dev->msi_mask != saved) {
		ret2 = write_mask(dev, saved);
		ret = ret ? ret : ret2;
	}
	umsi_pci_dev_unlock(dev, fl);
	return ret;
}

static int msi_startup(void *ctx, uint32_t index, uint32_t irq)
{
	(void)index;
	return umsi_pci_bme_check(ctx, irq);
}

static const struct umsi_source_ops msi_mask_ops = {
	.write_msg = msi_write_msg,
	.mask = msi_mask,
	.unmask = msi_unmask,
	.startup = msi_startup,
};

/* The 2003 patch's "MSI without mask bits" type: the core masks lazily. */
static const struct umsi_source_ops msi_nomask_ops = {
	.write_msg = msi_write_msg,
	.startup = msi_startup,
};

/*
 * Program the capability for a block of @block vectors, in the order the
 * hardware needs (PCI 3.0 6.8.3.1; Linux msi_capability_init()):
 *  1. MSI off, so no half-written message can be sent;
 *  2. address and data;
 *  3. every vector masked (they stay masked until a handler is
 *     requested);
 *  4. Bus Master on (a message is a DMA write) and INTx off;
 *  5. Multiple Message Enable and MSI Enable in one write.
 * Accesses: 1 read (Command) and, for a 64-bit maskable capability, 6
 * writes: address low/high, data, mask, Command, Message Control. Step 1
 * costs a write only when uMSI's copy says MSI is on; Command is written
 * only when it changes. On failure MSI is off and Command as it was.
 */
static int msi_program(struct umsi_pci_dev *dev, uint32_t block,
		       const struct umsi_msg *msg, bool restore)
{
	uint16_t cmd, newcmd, ctrl_reg = dev->msi_cap + UMSI_MSI_FLAGS;
	uint16_t ctrl;
	bool cmd_written = false, ctrl_written = false;
	int ret;

	ret = umsi_pci_read_command(dev, &cmd);
	if (ret)
		return ret;
	if (!restore)
		dev->cmd_before = cmd;
	/* 1. MSI off. After a reset uMSI's copy cannot be trusted. */
	if (restore || (dev->msi_ctrl & UMSI_MSI_FLAGS_ENABLE)) {
		ctrl = dev->msi_ctrl & (uint16_t)~UMSI_MSI_FLAGS_ENABLE;
		ret = umsi_pci_cfg_write(dev, ctrl_reg, 2, ctrl);
		if (ret)
			goto fail;
		dev->msi_ctrl = ctrl;
	}
	/* 2. Address and data: a full write, the device's copy is unknown. */
	ret = umsi_pci_cfg_write(dev, dev->msi_cap + UMSI_MSI_ADDR_LO, 4,
				 (uint32_t)msg->address);
	if (!ret && dev->msi_64)
		ret = umsi_pci_cfg_write(dev, dev->msi_cap + UMSI_MSI_ADDR_HI,
					 4, (uint32_t)(msg->address >> 32));
	if (!ret)
		ret = umsi_pci_cfg_write(dev, data_reg(dev), 2,
					 msg->data & 0xffff);
	if (ret)
		goto fail;
	dev->msi_msg = *msg;
	dev->msi_msg.data &= 0xffff;
	/* 3. Mask all (restore: the masks as they were). */
	if (dev->msi_maskable) {
		ret = write_mask(dev, restore ? dev->msi_want :
				 low_bits(dev->msi_mmc));
		if (ret)
			goto fail;
		dev->msi_want = dev->msi_mask;
	}
	/* 4. Bus Master on, INTx off. */
	newcmd = umsi_pci_msi_command(dev, cmd);
	cmd_written = newcmd != cmd;
	ret = umsi_pci_update_command(dev, cmd, newcmd);
	if (ret)
		goto fail;
	/* 5. Enable. */
	ctrl = (uint16_t)((dev->msi_ctrl & ~UMSI_MSI_FLAGS_QSIZE) |
			  (umsi_order_of(block) << UMSI_MSI_FLAGS_QSIZE_SHIFT) |
			  UMSI_MSI_FLAGS_ENABLE);
	ctrl_written = true;
	ret = umsi_pci_cfg_write(dev, ctrl_reg, 2, ctrl);
	if (ret)
		goto fail;
	dev->msi_ctrl = ctrl;
	return 0;
fail:
	/* Leave MSI off and Command as it was; best effort, the device may
	 * be gone. */
	if (ctrl_written) {
		ctrl = dev->msi_ctrl & (uint16_t)~(UMSI_MSI_FLAGS_ENABLE |
						   UMSI_MSI_FLAGS_QSIZE);
		if (!umsi_pci_cfg_write(dev, ctrl_reg, 2, ctrl))
			dev->msi_ctrl = ctrl;
	}
	if (cmd_written)
		(void)umsi_pci_cfg_write(dev, UMSI_PCI_COMMAND, 2, cmd);
	return ret;
}

/*
 * The block from the message layer: its one message in @msg. Halved
 * while the vectors or the controller have no room for it (an ITS's ITT
 * shared by the functions behind one bridge), down to @min.
 */
static int msi_alloc_block(struct umsi_pci_dev *dev, uint32_t min,
			   uint32_t *n, int64_t irq_at, struct umsi_msg *msg)
{
	struct umsi_msg msgs[32];
	uint32_t irqs[32], num = (uint32_t)irq_at, block, i;
	struct umsi_target_req req = {
		.index = 0,
		.flags = UMSI_TARGET_NO_WRITE | UMSI_TARGET_CLAIMED,
		.irqs = irq_at >= 0 ? &num : NULL,
		.msgs = msgs,
	};
	int ret;

	block = irq_at >= 0 ? 1 : 1u << umsi_order_of(*n);
	for (;;) {
		ret = umsi_pci_descs_alloc(dev, block);
		if (ret)
			return ret;
		req.count = block;
		umsi_source_set_events(dev->msi_src,
				       umsi_pci_source_events(dev));
		ret = umsi_source_alloc(dev->msi_src, &req, irqs);
		if (ret >= 0)
			break;
		umsi_pci_descs_free(dev);
		if (ret != -UMSI_ENOSPC || block == 1 || block / 2 < min ||
		    irq_at >= 0)
			return ret;
		block /= 2;
		*n = block;
	}
	for (i = 0; i < block; i++)
		dev->descs[i] = umsi_source_desc(dev->msi_src, i);
	dev->ndesc = block;
	*msg = msgs[0];
	return (int)block;
}

int umsi_msi_enable(struct umsi_pci_dev *dev, uint32_t min, uint32_t max,
		    int64_t irq_at)
{
	struct umsi_msg msg;
	uint32_t n = max;
	int block, ret;

	if (!dev->msi_cap)
		return -UMSI_ENOENT;
	if (dev->deny_reason)
		return -UMSI_EPERM;
	if (n > dev->msi_mmc)
		n = dev->msi_mmc;
	/* What the controller can give one function (x86 remapping: 1). */
	if (n > umsi_irq_max_block(dev->sys))
		n = umsi_irq_max_block(dev->sys);
	if (irq_at >= 0)
		n = 1;
	if (n < min)
		return -UMSI_ENOSPC;
	ret = umsi_pci_source_get(dev, dev->msi_mmc, true,
				  dev->msi_maskable ? &msi_mask_ops :
				  &msi_nomask_ops, "PCI-MSI", &dev->msi_src);
	if (ret)
		return ret;
	/*
	 * Bound and composed, still claimed before MSI is on, so a message
	 * the device sends at once is taken, and replayed on request.
	 */
	block = msi_alloc_block(dev, min, &n, irq_at, &msg);
	if (block < 0) {
		umsi_pci_source_put(&dev->msi_src);
		return block;
	}
	ret = check_msg(dev, &msg);
	if (!ret)
		ret = msi_program(dev, (uint32_t)block, &msg, false);
	if (ret) {
		umsi_source_drop(dev->msi_src, dev->descs, (uint32_t)block, 0);
		umsi_pci_descs_free(dev);
		umsi_pci_source_put(&dev->msi_src);
		return ret;
	}
	dev->msi_block = (uint32_t)block;
	dev->nvec = n;
	dev->mode = UMSI_MODE_MSI;
	/* Its CPU went offline meanwhile and it could not leave: undo. */
	{
		uint32_t irqs[32], i;

		for (i = 0; i < (uint32_t)block; i++)
			irqs[i] = dev->descs[i]->irq;
		ret = umsi_source_activate(dev->msi_src, irqs,
					   (uint32_t)block);
	}
	if (ret) {
		umsi_pci_free_irq_vectors(dev);
		return ret;
	}
	return (int)n;
}

/*
 * Turn MSI off before the vectors go back, so the device cannot write to
 * a vector someone else gets next; give INTx back (clear INTx Disable
 * when uMSI set it). Accesses: Command read, Message Control write, and
 * a Command write when INTx Disable changes.
 *
 * Configuration writes are non-posted: one that succeeded has reached the
 * device. If the Message Control write fails, every vector is masked
 * instead where the capability has mask bits. A device proven off or
 * masked, or reading all-ones (gone), gives its vectors back; any other
 * keeps them quarantined until it is removed.
 */
void umsi_msi_disable(struct umsi_pci_dev *dev)
{
	uint16_t cmd, ctrl;
	bool quiet, gone;
	umsi_irqflags_t fl;
	int ret;

	ret = umsi_pci_read_command(dev, &cmd);
	gone = ret == -UMSI_ENODEV;
	ctrl = dev->msi_ctrl & (uint16_t)~(UMSI_MSI_FLAGS_ENABLE |
					   UMSI_MSI_FLAGS_QSIZE);
	quiet = gone || !umsi_pci_cfg_write(dev, dev->msi_cap + UMSI_MSI_FLAGS,
					    2, ctrl);
	if (quiet && !gone) {
		dev->msi_ctrl = ctrl;
	} else if (!quiet && dev->msi_maskable) {
		fl = umsi_pci_dev_lock(dev);
		quiet = !write_mask(dev, low_bits(dev->msi_block));
		umsi_pci_dev_unlock(dev, fl);
	}
	if (!ret)
		umsi_pci_restore_intx_disable(dev, cmd);
	umsi_source_drop(dev->msi_src, dev->descs, dev->ndesc,
			 quiet ? 0 : UMSI_SOURCE_MAY_SEND);
	umsi_pci_descs_free(dev);
	umsi_pci_source_put(&dev->msi_src);
	dev->msi_block = 0;
}

int umsi_msi_restore(struct umsi_pci_dev *dev)
{
	return msi_program(dev, dev->msi_block, &dev->msi_msg, true);
}

int umsi_msi_pending(struct umsi_pci_dev *dev, uint32_t n)
{
	uint32_t v;
	int ret;

	if (!dev->msi_maskable)
		return -UMSI_ENOTSUP;
	ret = umsi_pci_cfg_read(dev, pending_reg(dev), 4, &v);
	if (ret)
		return ret;
	return (v >> n) & 1;
}
