/* SPDX-License-Identifier: MIT */
/*
 * The driver API: vectors between min and max, MSI-X then MSI then INTx;
 * sparse and dynamic MSI-X entries; pending bits; save and restore.
 */
#include <umsi/internal/pci.h>

/*
 * Errors that end the search at once: the device is gone, or the host
 * failed in a way a smaller request would not fix.
 */
static bool fatal(int err)
{
	return err == -UMSI_ENODEV || err == -UMSI_ENOMEM || err == -UMSI_EIO;
}

int umsi_pci_alloc_irq_vectors(struct umsi_pci_dev *dev, uint32_t min,
			       uint32_t max, uint32_t flags)
{
	int ret, err = 0;
	bool denied = false;

	if (!dev || !min || min > max || !(flags & UMSI_PCI_IRQ_ALL_TYPES))
		return -UMSI_EINVAL;
	if (dev->mode != UMSI_MODE_NONE)
		return -UMSI_EBUSY;
	if (flags & UMSI_PCI_IRQ_MSIX) {
		ret = umsi_msix_enable(dev, NULL, min, max,
				       flags & UMSI_PCI_IRQ_AFFINITY, -1);
		if (ret > 0 || fatal(ret))
			return ret;
		denied |= ret == -UMSI_EPERM;
		if (ret != -UMSI_ENOENT && ret != -UMSI_EPERM)
			err = ret;
	}
	if (flags & UMSI_PCI_IRQ_MSI) {
		ret = umsi_msi_enable(dev, min, max, -1);
		if (ret > 0 || fatal(ret))
			return ret;
		denied |= ret == -UMSI_EPERM;
		if (ret != -UMSI_ENOENT && ret != -UMSI_EPERM)
			err = ret;
	}
	if ((flags & UMSI_PCI_IRQ_INTX) && min == 1) {
		ret = umsi_intx_enable(dev);
		if (ret > 0 || fatal(ret))
			return ret;
		if (ret != -UMSI_ENOENT)
			err = ret;
	}
	if (err)
		return err == -UMSI_ENOTSUP ? -UMSI_ENOENT : err;
	return denied ? -UMSI_EPERM : -UMSI_ENOENT;
}

int umsi_pci_request_irq(struct umsi_pci_dev *dev, uint32_t n,
			 umsi_handler_t handler, uint32_t flags,
			 const char *name, void *dev_id)
{
	int irq = umsi_pci_irq_vector(dev, n);

	if (irq < 0)
		return irq;
	return umsi_irq_request_owned(dev->sys, (uint32_t)irq, handler, flags,
				      name, dev_id, dev);
}

int umsi_pci_irq_vector(struct umsi_pci_dev *dev, uint32_t n)
{
	if (!dev || n >= dev->nvec)
		return -UMSI_EINVAL;
	return (int)dev->descs[n]->irq;
}

int umsi_pci_msix_alloc_entry(struct umsi_pci_dev *dev, int32_t index)
{
	if (!dev)
		return -UMSI_EINVAL;
	return umsi_msix_add_entry(dev, index, true);
}

int umsi_pci_msix_free_entry(struct umsi_pci_dev *dev, uint32_t irq)
{
	struct umsi_msix_vec *v;

	if (!dev || dev->mode != UMSI_MODE_MSIX)
		return -UMSI_ENOENT;
	v = umsi_msix_vec_of(dev, irq);
	if (!v)
		return -UMSI_ENOENT;
	return umsi_msix_remove_entry(dev, umsi_irq_to_desc(dev->sys, irq));
}

int umsi_pci_alloc_msix_entries(struct umsi_pci_dev *dev,
				const uint16_t *indices, uint32_t n,
				uint32_t *irqs)
{
	uint32_t i;
	int ret;

	if (!dev || !indices || !n || !irqs)
		return -UMSI_EINVAL;
	if (dev->mode != UMSI_MODE_NONE)
		return -UMSI_EBUSY;
	ret = umsi_msix_enable(dev, indices, n, n, false, -1);
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++)
		irqs[i] = dev->descs[i]->irq;
	return 0;
}

int umsi_pci_irq_pending(struct umsi_pci_dev *dev, uint32_t n)
{
	if (!dev || n >= dev->nvec)
		return -UMSI_EINVAL;
	switch (dev->mode) {
	case UMSI_MODE_MSI:
		return umsi_msi_pending(dev, n);
	case UMSI_MODE_MSIX:
		return umsi_msix_pending(dev, n);
	default:
		return -UMSI_ENOTSUP;
	}
}

int umsi_pci_save_state(struct umsi_pci_dev *dev)
{
	if (!dev)
		return -UMSI_EINVAL;
	dev->reset_expected = true;
	return 0;
}

int umsi_pci_restore_state(struct umsi_pci_dev *dev)
{
	uint16_t cmd;
	int ret;

	if (!dev)
		return -UMSI_EINVAL;
	switch (dev->mode) {
	case UMSI_MODE_MSI:
		ret = umsi_msi_restore(dev);
		break;
	case UMSI_MODE_MSIX:
		ret = umsi_msix_restore(dev);
		break;
	case UMSI_MODE_INTX:
		ret = umsi_pci_read_command(dev, &cmd);
		if (!ret)
			ret = umsi_pci_update_command(dev, cmd,
				cmd & (uint16_t)~UMSI_PCI_CMD_INTX_DISABLE);
		break;
	default:
		ret = 0;
		break;
	}
	if (!ret)
		dev->reset_expected = false;
	return ret;
}
