/* SPDX-License-Identifier: MIT */
/*
 * INTx fallback: a function's interrupt pin through the host's routing
 * (ACPI _PRT or chipset) to an IO-APIC input, and the IO-APIC chip.
 *
 * The IRQ number of an INTx line is its GSI, as on Linux and in the 2003 patch,
 * whose msi_get_pci_irq_vector() reused the IO-APIC vector of a function
 * whose line nobody else shared. Functions routed to the same GSI share
 * one descriptor: their handlers share it (UMSI_IRQF_SHARED), and the line
 * goes when its last user does.
 */
#include <umsi/internal/hostcall.h>
#include <umsi/internal/pci.h>

/*
 * Program the line's input with message @msg (composed by the core as a
 * wired one: on x86 the redirection entry's destination and vector come
 * from it), its trigger and polarity, and the mask bit.
 */
static int wired_write(struct umsi_system *sys, struct umsi_intx_line *l,
			const struct umsi_msg *msg, bool masked)
{
	struct umsi_gsi_entry e = {
		.msg = *msg,
		.trigger = l->route.trigger,
		.polarity = l->route.polarity,
		.masked = masked,
	};
	int ret = umsi_host_gsi_program(sys, l->gsi, &e);

	if (!ret)
		l->msg = *msg;
	return ret;
}

/* Mask and unmask: the entry as last written, its mask bit changed. */
static int wired_mask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_intx_line *l = d->chip_data;

	return wired_write(sys, l, &l->msg, true);
}

static int wired_unmask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_intx_line *l = d->chip_data;

	return wired_write(sys, l, &l->msg, false);
}

/* A redirection entry is rewritten as a whole; its mask bit is kept. */
static int wired_write_msg(struct umsi_system *sys, struct umsi_irq_desc *d,
			    const struct umsi_msg *msg)
{
	bool masked = atomic_load(&d->gate) != 0;

	return wired_write(sys, d->chip_data, msg, masked);
}

static void wired_describe(struct umsi_system *sys,
			    const struct umsi_irq_desc *d,
			    struct umsi_irq_info *info)
{
	const struct umsi_intx_line *l = d->chip_data;
	const struct umsi_irq_action *a = umsi_desc_actions(d);
	const struct umsi_pci_dev *o = a ? a->owner : NULL;

	(void)sys;
	/* The function whose handler names the line (info->owner). */
	info->bdf = o ? o->bdf : l->bdf;
}

/* Trigger mode is the line's (l->route); the core needs no copy of it. */
static const struct umsi_irq_chip wired_chip = {
	.name = "IO-APIC",
	.mask = wired_mask,
	.unmask = wired_unmask,
	.write_msg = wired_write_msg,
	.describe = wired_describe,
	.wired = true,
};

bool umsi_intx_shared(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	struct umsi_pci_dev *o;
	umsi_irqflags_t fl;
	bool shared = false;

	if (!dev->intx_routed)
		return false;
	fl = umsi_lock(sys);
	for (o = umsi_pci_devs(sys); o && !shared; o = o->next)
		shared = o != dev && o->intx_routed &&
			 o->route.gsi == dev->route.gsi;
	umsi_unlock(sys, fl);
	return shared;
}

/*
 * Join the line at the GSI if another function has it. The line is found
 * through the functions, not through IRQ number = GSI: that number may
 * belong to an MSI (the 2003 patch's API hands an unshared line's GSI to MSI), and
 * then the line has another number. [sys lock]
 */
static void join_line(struct umsi_system *sys, uint32_t gsi,
		      struct umsi_intx_line **out)
{
	struct umsi_pci_dev *o;

	*out = NULL;
	for (o = umsi_pci_devs(sys); o; o = o->next) {
		if (o->intx && o->intx->gsi == gsi && o->intx->users) {
			o->intx->users++;
			*out = o->intx;
			return;
		}
	}
}

/* A new line: IRQ number = GSI, entry programmed masked. */
static int new_line(struct umsi_pci_dev *dev, struct umsi_intx_line **out)
{
	struct umsi_system *sys = dev->sys;
	const struct umsi_irq_chip *chip = &wired_chip;
	struct umsi_intx_line *l = umsi_zalloc(sys, sizeof(*l));
	struct umsi_irq_desc *d;
	umsi_irqflags_t fl;
	int ret;

	if (!l)
		return -UMSI_ENOMEM;
	l->gsi = dev->route.gsi;
	l->route = dev->route;
	l->bdf = dev->bdf;
	ret = umsi_irq_alloc_at(sys, l->gsi, chip, &d);
	/* The GSI's number went to an MSI: the line takes another. */
	if (ret == -UMSI_EBUSY)
		ret = umsi_irq_alloc(sys, chip, 1, false, NULL, false, &d);
	if (ret) {
		umsi_free(sys, l, sizeof(*l));
		return ret;
	}
	d->chip_data = l;
	d->hwirq = l->gsi;
	l->desc = d;
	umsi_irq_publish(sys, &d, 1);
	/* Written masked: depth 1 until the first handler. */
	ret = umsi_irq_program(sys, d);
	if (!ret)
		ret = umsi_irq_activate(sys, &d, 1);
	if (ret) {
		/* Never unmasked: the input cannot have sent. */
		umsi_irq_release(sys, &d, 1);
		umsi_free(sys, l, sizeof(*l));
		return ret;
	}
	fl = umsi_lock(sys);
	l->users = 1;
	umsi_unlock(sys, fl);
	*out = l;
	return 0;
}

/*
 * Leave @l; the last user (@dev) masks the input and frees the IRQ. An
 * input that could not be masked may still deliver the vector: it stays
 * quarantined, owned by @dev, until umsi_intx_silence() masks it.
 */
static void put_line(struct umsi_pci_dev *dev, struct umsi_intx_line *l)
{
	struct umsi_system *sys = dev->sys;
	umsi_irqflags_t fl = umsi_lock(sys);
	bool last = --l->users == 0;
	struct umsi_pci_dev *o;

	/* The line is no longer the leaver's: name one who stays. */
	if (!last && l->bdf == dev->bdf)
		for (o = umsi_pci_devs(sys); o; o = o->next)
			if (o != dev && o->intx == l) {
				l->bdf = o->bdf;
				break;
			}
	umsi_unlock(sys, fl);
	if (!last)
		return;
	if (wired_write(sys, l, &l->msg, true))
		umsi_irq_quarantine(sys, &l->desc, 1, dev);
	else
		umsi_irq_release(sys, &l->desc, 1);
	umsi_free(sys, l, sizeof(*l));
}

/*
 * Use the INTx pin: join or create the line, then clear INTx Disable in
 * Command (1 read, 1 write when it was set). The line stays masked until
 * a handler is requested.
 */
int umsi_intx_enable(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	struct umsi_intx_line *l;
	umsi_irqflags_t fl;
	uint16_t cmd;
	int ret;

	if (!dev->intx_routed)
		return -UMSI_ENOENT;
	ret = umsi_pci_descs_alloc(dev, 1);
	if (ret)
		return ret;
	fl = umsi_lock(sys);
	join_line(sys, dev->route.gsi, &l);
	umsi_unlock(sys, fl);
	ret = l ? 0 : new_line(dev, &l);
	if (ret)
		goto fail;
	ret = umsi_pci_read_command(dev, &cmd);
	if (!ret) {
		dev->cmd_before = cmd;
		ret = umsi_pci_update_command(dev, cmd,
			cmd & (uint16_t)~UMSI_PCI_CMD_INTX_DISABLE);
	}
	if (ret) {
		put_line(dev, l);
		goto fail;
	}
	dev->intx = l;
	dev->descs[0] = l->desc;
	dev->ndesc = 1;
	dev->nvec = 1;
	dev->mode = UMSI_MODE_INTX;
	return 1;
fail:
	umsi_pci_descs_free(dev);
	return ret;
}

/*
 * Leave the line; the last user masks the redirection entry and frees the
 * IRQ. The handlers this function requested through umsi_pci_request_irq()
 * go with it; on a line others still use, handlers requested without an
 * owner (umsi_request_irq) cannot be told apart and stay, which is logged:
 * their driver must free them before removal.
 */
void umsi_intx_disable(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	uint32_t irq = dev->intx->desc->irq, left;
	uint16_t cmd;

	umsi_irq_free_owned(sys, irq, dev);
	left = umsi_irq_untagged_handlers(sys, irq);
	if (left && dev->intx->users > 1)
		umsi_log(sys, UMSI_LOG_WARN, UMSI_BDF_FMT " leaves shared "
			 "irq %u with %u handler(s) requested without an "
			 "owner; they stay on the line", UMSI_BDF_ARGS(dev->bdf), irq, left);

	if (!umsi_pci_read_command(dev, &cmd))
		umsi_pci_restore_intx_disable(dev, cmd);
	put_line(dev, dev->intx);
	dev->intx = NULL;
	umsi_pci_descs_free(dev);
}

/*
 * For removal: can @dev's IO-APIC input no longer deliver a quarantined
 * vector? Yes when another function's line owns the GSI again (its set-up
 * reprogrammed the entry), or when masking the entry now succeeds.
 */
bool umsi_intx_silence(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	struct umsi_intx_line *l;
	/* A masked entry's message does not matter (umsi/host.h): none. */
	struct umsi_gsi_entry e = {
		.trigger = dev->route.trigger,
		.polarity = dev->route.polarity,
		.masked = true,
	};
	umsi_irqflags_t fl;
	struct umsi_pci_dev *o;

	if (!dev->intx_routed || !sys->env.ops->gsi_program)
		return true;
	fl = umsi_lock(sys);
	for (l = NULL, o = umsi_pci_devs(sys); o && !l; o = o->next)
		if (o != dev && o->intx && o->intx->gsi == dev->route.gsi &&
		    o->intx->users)
			l = o->intx;
	umsi_unlock(sys, fl);
	if (l)
		return true;
	return !umsi_host_gsi_program(sys, dev->route.gsi, &e);
}
