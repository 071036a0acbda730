/* SPDX-License-Identifier: MIT */
/*
 * INTx fallback: a function's interrupt pin through the host's routing
 * (ACPI _PRT or chipset) to an IO-APIC input, and the IO-APIC chip.
 *
 * The IRQ number of an INTx line is its GSI, as on Linux and in the seed,
 * whose msi_get_pci_irq_vector() reused the IO-APIC vector of a function
 * whose line nobody else shared. Functions routed to the same GSI share
 * one descriptor: their handlers share it (UMSI_IRQF_SHARED), and the line
 * goes when its last user does.
 */
#include <umsi/internal/pci.h>

static int ioapic_write(struct umsi_system *sys, struct umsi_irq_desc *d,
			uint32_t cpu, uint8_t vector, bool masked)
{
	struct umsi_intx_line *l = d->chip_data;
	struct umsi_gsi_entry e = {
		.apic_id = sys->cpus[cpu].apic_id,
		.vector = vector,
		.trigger = l->route.trigger,
		.polarity = l->route.polarity,
		.masked = masked,
	};

	return sys->ops->gsi_program(sys->host, l->gsi, &e);
}

/* Mask and unmask: the redirection entry's mask bit (host gsi_program). */
static int ioapic_mask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	return ioapic_write(sys, d, d->cpu, d->vector, true);
}

static int ioapic_unmask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	return ioapic_write(sys, d, d->cpu, d->vector, false);
}

/* A redirection entry is rewritten as a whole; its mask bit is kept. */
static int ioapic_set_target(struct umsi_system *sys, struct umsi_irq_desc *d,
			     uint32_t cpu, uint8_t vector)
{
	bool masked = atomic_load(&d->mask_depth) > 0 ||
		      atomic_load(&d->disabled);

	return ioapic_write(sys, d, cpu, vector, masked);
}

static const struct umsi_irq_chip ioapic_level_chip = {
	.name = "IO-APIC",
	.mask = ioapic_mask,
	.unmask = ioapic_unmask,
	.set_target = ioapic_set_target,
	.level = true,
};

static const struct umsi_irq_chip ioapic_edge_chip = {
	.name = "IO-APIC",
	.mask = ioapic_mask,
	.unmask = ioapic_unmask,
	.set_target = ioapic_set_target,
	.level = false,
};

static bool is_ioapic(const struct umsi_irq_chip *c)
{
	return c == &ioapic_level_chip || c == &ioapic_edge_chip;
}

bool umsi_intx_shared(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	struct umsi_pci_dev *o;
	umsi_irqflags_t fl;
	bool shared = false;

	if (!dev->intx_routed)
		return false;
	fl = umsi_lock(sys);
	for (o = sys->devs; o && !shared; o = o->next)
		shared = o != dev && o->intx_routed &&
			 o->route.gsi == dev->route.gsi;
	umsi_unlock(sys, fl);
	return shared;
}

/* Join the line at the GSI if another function has it. [sys lock] */
static int join_line(struct umsi_system *sys, uint32_t gsi,
		     struct umsi_intx_line **out)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, gsi);
	struct umsi_intx_line *l;

	*out = NULL;
	if (!d)
		return 0;
	if (!is_ioapic(d->chip))
		return -UMSI_EBUSY;         /* the number went to an MSI */
	l = d->chip_data;
	if (!l || !l->users)
		return -UMSI_EBUSY;         /* being set up or torn down */
	l->users++;
	*out = l;
	return 0;
}

/* A new line: IRQ number = GSI, entry programmed masked. */
static int new_line(struct umsi_pci_dev *dev, struct umsi_intx_line **out)
{
	struct umsi_system *sys = dev->sys;
	const struct umsi_irq_chip *chip = dev->route.trigger ==
		UMSI_INTX_LEVEL ? &ioapic_level_chip : &ioapic_edge_chip;
	struct umsi_intx_line *l = umsi_zalloc(sys, sizeof(*l));
	struct umsi_irq_desc *d;
	umsi_irqflags_t fl;
	int ret;

	if (!l)
		return -UMSI_ENOMEM;
	l->gsi = dev->route.gsi;
	l->route = dev->route;
	ret = umsi_irq_alloc_at(sys, l->gsi, chip, &d);
	if (ret) {
		umsi_free(sys, l, sizeof(*l));
		return ret;
	}
	d->chip_data = l;
	d->bdf = dev->bdf;
	d->hwirq = l->gsi;
	l->desc = d;
	ret = ioapic_write(sys, d, d->cpu, d->vector, true);
	if (ret) {
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

static void put_line(struct umsi_system *sys, struct umsi_intx_line *l)
{
	umsi_irqflags_t fl = umsi_lock(sys);
	bool last = --l->users == 0;

	umsi_unlock(sys, fl);
	if (!last)
		return;
	(void)ioapic_write(sys, l->desc, l->desc->cpu, l->desc->vector, true);
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
	ret = join_line(sys, dev->route.gsi, &l);
	umsi_unlock(sys, fl);
	if (!ret && !l)
		ret = new_line(dev, &l);
	if (ret)
		goto fail;
	ret = umsi_pci_read_command(dev, &cmd);
	if (!ret) {
		dev->cmd_before = cmd;
		ret = umsi_pci_update_command(dev, cmd,
			cmd & (uint16_t)~UMSI_PCI_CMD_INTX_DISABLE);
	}
	if (ret) {
		put_line(sys, l);
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
 * IRQ. On a shared line, handlers belong to the line, not to a function:
 * a driver frees its own handler (umsi_free_irq) before this.
 */
void umsi_intx_disable(struct umsi_pci_dev *dev)
{
	uint16_t cmd;

	if (!umsi_pci_read_command(dev, &cmd))
		(void)umsi_pci_update_command(dev, cmd,
			(uint16_t)((cmd & ~UMSI_PCI_CMD_INTX_DISABLE) |
				   (dev->cmd_before & UMSI_PCI_CMD_INTX_DISABLE)));
	put_line(dev->sys, dev->intx);
	dev->intx = NULL;
	umsi_pci_descs_free(dev);
}
