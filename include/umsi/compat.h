/* SPDX-License-Identifier: MIT */
/*
 * umsi/compat.h - the 2003 patch's driver API, as a thin layer over
 * umsi/pci.h. Names keep the 2003 patch's spelling with a umsi_ prefix; a kernel
 * that wants the bare names of the 2003 patch can #define them.
 */
#ifndef UMSI_COMPAT_H
#define UMSI_COMPAT_H

#ifdef UMSI_LAYER_CORE
#error "the IRQ core, allocator and back ends know no PCI: this header is the PCI layer's"
#endif

#include <umsi/pci.h>

/**
 * umsi_msi_get_pci_irq_vector - the 2003 patch's msi_get_pci_irq_vector()
 * @dev: a function being enumerated
 *
 * Configures MSI-X (one vector, entry 0) when the function has a usable
 * MSI-X capability, else MSI (one message), when policy allows; the
 * returned IRQ replaces the function's INTx IRQ. As the 2003 patch reused the
 * IO-APIC vector of an unshared INTx line, the IRQ number is the line's
 * GSI when no other registered function routes to that GSI (and the
 * number is free); otherwise a new number. Called again on a function
 * already using MSI/MSI-X, it returns the same IRQ.
 *
 * Return: the IRQ (> 0), or a negative code when the function keeps INTx:
 * -UMSI_EPERM (policy or quirk), -UMSI_ENOENT (no capability),
 * -UMSI_ENOSPC (no vector), -UMSI_EBUSY (in INTx mode), -UMSI_ENODEV
 * (gone), -UMSI_ENOMEM, -UMSI_EIO. Context: process.
 */
int umsi_msi_get_pci_irq_vector(struct umsi_pci_dev *dev);

/**
 * umsi_msix_alloc_vectors - the 2003 patch's msix_alloc_vectors(): more MSI-X
 * vectors for a function already using MSI-X
 * @dev: the function
 * @irqs: receives @nvec IRQ numbers
 * @nvec: how many more
 *
 * All or nothing: either @nvec new entries exist (the lowest free table
 * indices, each masked until its handler is requested), or none does.
 *
 * Return: 0; -UMSI_EINVAL when the function is not in MSI-X mode or @nvec
 * is 0; -UMSI_ENOSPC when the table or the allocator lacks room.
 * Context: process.
 */
int umsi_msix_alloc_vectors(struct umsi_pci_dev *dev, uint32_t *irqs,
			    uint32_t nvec);

/**
 * umsi_msix_free_vectors - the 2003 patch's msix_free_vectors()
 * @dev: the function
 * @irqs: IRQs obtained from umsi_msix_alloc_vectors()
 * @nvec: how many
 *
 * Return: 0; -UMSI_EINVAL when any IRQ was not allocated that way (then
 * none is freed). Context: process.
 */
int umsi_msix_free_vectors(struct umsi_pci_dev *dev, const uint32_t *irqs,
			   uint32_t nvec);

/**
 * umsi_msi_remove_pci_irq_vectors - the 2003 patch's msi_remove_pci_irq_vectors():
 * reclaim every vector of a function on hot removal
 * @dev: the function
 *
 * Equivalent to umsi_pci_free_irq_vectors(); safe on a device that has
 * already disappeared. Context: process.
 */
void umsi_msi_remove_pci_irq_vectors(struct umsi_pci_dev *dev);

#endif /* UMSI_COMPAT_H */
