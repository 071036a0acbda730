/* SPDX-License-Identifier: MIT */
/*
 * The 2003 patch's driver API, as a thin layer over the modern one.
 *
 * The 2003 patch configured one vector at enumeration (MSI-X entry 0 when the
 * function had MSI-X, else one MSI message) that replaced the function's
 * INTx IRQ, and let MSI-X drivers ask for more entries all-or-nothing.
 * When the function's INTx line is not shared with another present
 * function, the 2003 patch gave the MSI the IO-APIC vector of that line; here
 * that is the line's IRQ number (the GSI), so the function keeps its
 * number whether it interrupts by pin or by message.
 */
#include <umsi/compat.h>
#include <umsi/internal/pci.h>

/* The 2003 patch's reuse: the GSI, when nobody shares it and it is free. */
static int64_t reuse_irq(struct umsi_pci_dev *dev)
{
	if (!dev->intx_routed || umsi_intx_shared(dev) ||
	    umsi_irq_to_desc(dev->sys, dev->route.gsi))
		return -1;
	return dev->route.gsi;
}

static int first_irq(struct umsi_pci_dev *dev, int ret)
{
	return ret < 0 ? ret : (int)dev->descs[0]->irq;
}

int umsi_msi_get_pci_irq_vector(struct umsi_pci_dev *dev)
{
	int64_t at;
	int ret;

	if (!dev)
		return -UMSI_EINVAL;
	if (dev->mode == UMSI_MODE_MSI || dev->mode == UMSI_MODE_MSIX)
		return (int)dev->descs[0]->irq;     /* already enabled */
	if (dev->mode != UMSI_MODE_NONE)
		return -UMSI_EBUSY;
	if (dev->deny_reason)
		return -UMSI_EPERM;
	at = reuse_irq(dev);
	ret = umsi_msix_enable(dev, NULL, 1, 1, false, at);
	if (ret == -UMSI_EBUSY && at >= 0)
		ret = umsi_msix_enable(dev, NULL, 1, 1, false, -1);
	/* The 2003 patch fell back to MSI only when MSI-X was not there. */
	if (ret != -UMSI_ENOENT && ret != -UMSI_ENOTSUP)
		return first_irq(dev, ret);
	ret = umsi_msi_enable(dev, 1, 1, at);
	if (ret == -UMSI_EBUSY && at >= 0)
		ret = umsi_msi_enable(dev, 1, 1, -1);
	if (ret == -UMSI_ENOTSUP)
		ret = -UMSI_ENOENT;
	return first_irq(dev, ret);
}

int umsi_msix_alloc_vectors(struct umsi_pci_dev *dev, uint32_t *irqs,
			    uint32_t nvec)
{
	uint32_t i, j;
	int ret;

	if (!dev || !irqs || !nvec || dev->mode != UMSI_MODE_MSIX)
		return -UMSI_EINVAL;
	if (nvec > (uint32_t)dev->msix_size - dev->ndesc)
		return -UMSI_ENOSPC;
	for (i = 0; i < nvec; i++) {
		ret = umsi_msix_add_entry(dev, -1, true);
		if (ret < 0)
			break;
		irqs[i] = (uint32_t)ret;
	}
	if (i == nvec)
		return 0;
	/* All or nothing. */
	for (j = 0; j < i; j++)
		(void)umsi_msix_remove_entry(dev,
				umsi_irq_to_desc(dev->sys, irqs[j]));
	return ret == -UMSI_EBUSY ? -UMSI_ENOSPC : ret;
}

int umsi_msix_free_vectors(struct umsi_pci_dev *dev, const uint32_t *irqs,
			   uint32_t nvec)
{
	struct umsi_msix_vec *v;
	uint32_t i, j;

	if (!dev || !irqs || !nvec || dev->mode != UMSI_MODE_MSIX)
		return -UMSI_EINVAL;
	/* Check every one first: none is freed unless all can be. */
	for (i = 0; i < nvec; i++) {
		v = umsi_msix_vec_of(dev, irqs[i]);
		if (!v || !umsi_msix_vec_dynamic(dev, v))
			return -UMSI_EINVAL;
		for (j = 0; j < i; j++)
			if (irqs[j] == irqs[i])
				return -UMSI_EINVAL;
	}
	for (i = 0; i < nvec; i++)
		(void)umsi_msix_remove_entry(dev,
				umsi_irq_to_desc(dev->sys, irqs[i]));
	return 0;
}

void umsi_msi_remove_pci_irq_vectors(struct umsi_pci_dev *dev)
{
	umsi_pci_free_irq_vectors(dev);
}
