/* SPDX-License-Identifier: MIT */
/*
 * umsi/pci.h - PCI functions, MSI and MSI-X, and the driver API.
 *
 * The kernel tells uMSI about each PCI function it enumerates
 * (umsi_pci_add) and removes it on hot removal (umsi_pci_remove, which
 * reclaims everything). Drivers then ask for interrupt vectors with
 * umsi_pci_alloc_irq_vectors(), attach handlers to the returned IRQs
 * (umsi/irq.h) and free them with umsi_pci_free_irq_vectors().
 *
 * The 2003 patch's API (msi_get_pci_irq_vector, msix_alloc_vectors, ...) is
 * in umsi/compat.h, as a thin layer over this one.
 *
 * Concurrency: the process-context calls on one function (alloc, free,
 * dynamic entries, save/restore, remove) must not run at the same time;
 * the driver that owns the function serialises them, as a PCI core does.
 * Calls on different functions may run in parallel, and all of them may
 * run beside CPU online/offline, affinity changes and the IRQ walkers of
 * umsi/irq.h: an IRQ being set up is invisible to those until it is bound
 * (then -UMSI_EAGAIN until set up), and freeing one waits for a move in
 * flight. Masking, unmasking (any context) and retargeting a live IRQ are
 * safe against each other and against dynamic entries being added or
 * removed beside it. umsi_policy_parse() and umsi_quirk_add() belong to
 * boot, before the first umsi_pci_add().
 */
#ifndef UMSI_PCI_H
#define UMSI_PCI_H

#ifdef UMSI_LAYER_CORE
#error "the IRQ core, allocator and back ends know no PCI: this header is the PCI layer's"
#endif

#include <umsi/irq.h>
#include <umsi/pcicap.h>

struct umsi_pci_dev;

/* Flags of umsi_pci_add(). */
/* The function is in its reset state (uMSI may skip masking unused MSI-X
 * entries: reset leaves every entry masked). */
#define UMSI_PCI_ADD_FRESH  (1u << 0)

/**
 * umsi_pci_add - register a PCI function with uMSI
 * @sys: the system
 * @bdf: its address
 * @parent: the bridge it sits behind (NULL on a root bus); used by the
 *          "no MSI below this bridge" quirk
 * @flags: UMSI_PCI_ADD_*
 * @out: the function's record
 *
 * Reads IDs and the capability lists (bounded walks: a broken list is
 * reported and MSI/MSI-X treated as absent), sizes the BARs that hold an
 * MSI-X table or PBA (with memory decode briefly off, as a PCI core does at
 * enumeration), validates the table location, and applies quirks and the
 * boot-parameter policy. Does not enable anything.
 *
 * Return: 0; -UMSI_ENODEV when the function reads all-ones; -UMSI_EEXIST;
 * -UMSI_ENOMEM; -UMSI_EIO. Context: process.
 */
int umsi_pci_add(struct umsi_system *sys, umsi_bdf_t bdf,
		 struct umsi_pci_dev *parent, uint32_t flags,
		 struct umsi_pci_dev **out);

/**
 * umsi_pci_remove - forget a PCI function, reclaiming everything
 * @sys: the system
 * @dev: the function
 *
 * Frees handlers, IRQs, vectors, MSI-X mappings and the record; disables
 * MSI/MSI-X on the device unless it reads all-ones (already gone). On a
 * shared INTx line, the handlers requested for this function with
 * umsi_pci_request_irq() go with it and no other's do. Vectors kept in
 * quarantine for the function (umsi_pci_free_irq_vectors()) go back when
 * it reads all-ones (gone) or MSI and MSI-X can now be turned off; if
 * neither, they stay reserved until umsi_system_destroy() (logged). Then
 * the vector allocator's state equals its state before the device was
 * added. This is the 2003 patch's
 * transparent reclaim on hot removal. Context: process.
 */
void umsi_pci_remove(struct umsi_system *sys, struct umsi_pci_dev *dev);

/**
 * umsi_pci_find - the record of a registered function
 * @sys: the system
 * @bdf: its address
 *
 * Return: the record or NULL. Context: process.
 */
struct umsi_pci_dev *umsi_pci_find(struct umsi_system *sys, umsi_bdf_t bdf);

/*
 * Flags of umsi_pci_alloc_irq_vectors(): which kinds of interrupt a driver
 * accepts (Linux's PCI_IRQ_*). Not handler results (UMSI_IRQ_NONE and
 * UMSI_IRQ_HANDLED, umsi/irq.h).
 */
#define UMSI_PCI_IRQ_INTX      (1u << 0)  /* INTx through the IO-APIC allowed */
#define UMSI_PCI_IRQ_MSI       (1u << 1)
#define UMSI_PCI_IRQ_MSIX      (1u << 2)
#define UMSI_PCI_IRQ_AFFINITY  (1u << 3)  /* spread over CPUs, managed */
#define UMSI_PCI_IRQ_ALL_TYPES (UMSI_PCI_IRQ_INTX | UMSI_PCI_IRQ_MSI | \
				UMSI_PCI_IRQ_MSIX)

/* Interrupt mode of a function. */
enum umsi_pci_mode {
	UMSI_MODE_NONE = 0,
	UMSI_MODE_INTX,
	UMSI_MODE_MSI,
	UMSI_MODE_MSIX,
};

/**
 * umsi_pci_alloc_irq_vectors - give a function between @min and @max IRQs
 * @dev: the function
 * @min: fewest acceptable (>= 1)
 * @max: most wanted
 * @flags: UMSI_PCI_IRQ_* types to try, in the order MSI-X, MSI, INTx
 *
 * Tries each allowed type, shrinking towards @min to what the device and
 * the vector allocator allow. MSI gets 2^k vectors as one aligned block
 * (the device may send any of them) of which the first n are returned;
 * the other IRQs of the block exist, masked, without handlers. Under
 * interrupt remapping MSI gets one message. INTx is tried only when @min
 * is 1; its IRQ number is the GSI, shared with other functions on the
 * same line. UMSI_PCI_IRQ_AFFINITY spreads MSI-X vectors over the CPUs as
 * managed vectors (ignored for MSI, whose block sits on one CPU).
 *
 * Enabling MSI or MSI-X also sets Bus Master Enable in the Command
 * register (a message is a DMA write), and MSI-X sets Memory Space Enable
 * when it is clear (the table is in a memory BAR). MSI/MSI-X set INTx
 * Disable, except on functions with the INTx-disable quirk. The IRQs
 * start masked; umsi_request_irq() unmasks each.
 *
 * Return: the number of IRQs (>= @min), or -UMSI_ENOSPC when not even
 * @min fit, -UMSI_EPERM when policy or a quirk forbids every allowed type,
 * -UMSI_ENOENT when the function has none of the allowed types (or only
 * an MSI-X table it cannot use, see umsi_pci_info.msix_reason),
 * -UMSI_EBUSY when vectors are already allocated, -UMSI_ENODEV when the
 * device is gone, -UMSI_EINVAL, -UMSI_ENOMEM, -UMSI_EIO. On failure the
 * device is left with MSI and MSI-X disabled, Command as it was, and
 * nothing allocated. Context: process.
 */
int umsi_pci_alloc_irq_vectors(struct umsi_pci_dev *dev, uint32_t min,
			       uint32_t max, uint32_t flags);

/**
 * umsi_pci_free_irq_vectors - release every IRQ of a function
 * @dev: the function
 *
 * Disables MSI/MSI-X (every MSI-X entry left masked), gives INTx back
 * (INTx Disable as it was before), frees handlers still attached, IRQs and
 * vectors. On a shared INTx line only this function's handlers requested
 * through umsi_pci_request_irq() go; handlers requested with
 * umsi_request_irq() belong to the line (free them with umsi_free_irq()
 * first); the line goes with its last user.
 *
 * A vector never goes back while the device may still send to it. MSI-X
 * entries are masked through MMIO and the mask read back; MSI and MSI-X
 * are turned off by a configuration write, which is non-posted. When
 * neither can be proven (a host configuration access failed and the
 * masks did not read back), the IRQs are dropped but their vectors stay
 * quarantined: published to a dead descriptor that counts and
 * acknowledges what the device still sends, logged, and shown in
 * umsi_pci_info.quarantined, until umsi_pci_remove(). A function that
 * reads all-ones is gone and quarantines nothing. Context: process.
 */
void umsi_pci_free_irq_vectors(struct umsi_pci_dev *dev);

/**
 * umsi_pci_request_irq - attach a handler to vector @n of a function
 * @dev: the function
 * @n: 0 .. count-1, as for umsi_pci_irq_vector()
 * @handler: the handler
 * @flags: UMSI_IRQF_SHARED to share an INTx line
 * @name: a name for statistics (kept by pointer)
 * @dev_id: cookie passed to @handler
 *
 * umsi_request_irq() on umsi_pci_irq_vector(@dev, @n), with the handler
 * tagged as this function's: removing or freeing the function drops it
 * even from an INTx line other functions still share.
 *
 * Return: as umsi_request_irq(), and -UMSI_EINVAL for a bad @n.
 * Context: process.
 */
int umsi_pci_request_irq(struct umsi_pci_dev *dev, uint32_t n,
			 umsi_handler_t handler, uint32_t flags,
			 const char *name, void *dev_id);

/**
 * umsi_pci_irq_vector - the IRQ number of vector @n
 * @dev: the function
 * @n: 0 .. count-1 (for MSI-X: the n-th allocated entry)
 *
 * Return: the IRQ, or -UMSI_EINVAL. Context: any.
 */
int umsi_pci_irq_vector(struct umsi_pci_dev *dev, uint32_t n);

/**
 * umsi_pci_mode - current interrupt mode of a function
 * @dev: the function
 *
 * Return: an enum umsi_pci_mode. Context: any.
 */
enum umsi_pci_mode umsi_pci_mode(struct umsi_pci_dev *dev);

/**
 * umsi_pci_msix_alloc_entry - add one MSI-X entry while MSI-X is enabled
 * @dev: the function, in MSI-X mode
 * @index: table index wanted, or -1 for the lowest free one
 *
 * Dynamic MSI-X: the entry is programmed masked (3 table writes) and
 * unmasked when its handler is requested; running entries are not
 * disturbed. The IRQ is the n-th vector for umsi_pci_irq_vector(), n being
 * the count before the call.
 *
 * Return: the IRQ; -UMSI_EBUSY when @index is in use; -UMSI_ENOSPC when no
 * entry or vector is free; -UMSI_EINVAL when not in MSI-X mode or @index
 * is out of the table. Context: process.
 */
int umsi_pci_msix_alloc_entry(struct umsi_pci_dev *dev, int32_t index);

/**
 * umsi_pci_msix_free_entry - remove one MSI-X entry while MSI-X is on
 * @dev: the function
 * @irq: the entry's IRQ (any entry of the function)
 *
 * Masks the entry (with a flushing read when it was live) and frees
 * handlers, IRQ and vector; later vectors move down one place for
 * umsi_pci_irq_vector().
 *
 * Return: 0 or -UMSI_ENOENT. Context: process.
 */
int umsi_pci_msix_free_entry(struct umsi_pci_dev *dev, uint32_t irq);

/**
 * umsi_pci_alloc_msix_entries - MSI-X with table indices chosen by the
 * driver (sparse entries)
 * @dev: the function
 * @indices: table indices, distinct
 * @n: how many
 * @irqs: filled with the IRQ of each index
 *
 * Return: 0 or as umsi_pci_alloc_irq_vectors() (all or nothing).
 * Context: process.
 */
int umsi_pci_alloc_msix_entries(struct umsi_pci_dev *dev,
				const uint16_t *indices, uint32_t n,
				uint32_t *irqs);

/**
 * umsi_pci_irq_pending - read a vector's pending bit from the device
 * @dev: the function
 * @n: vector number as for umsi_pci_irq_vector()
 *
 * Return: 1 pending, 0 not, -UMSI_ENOTSUP for MSI without mask bits,
 * -UMSI_EINVAL. Context: any.
 */
int umsi_pci_irq_pending(struct umsi_pci_dev *dev, uint32_t n);

/**
 * umsi_pci_save_state - remember MSI/MSI-X programming for a reset
 * @dev: the function
 *
 * uMSI already caches what it programmed; this records that a reset is
 * coming, so restore knows the MSI-X table will be in its reset state
 * (every entry masked) and skips masking it. Return: 0, -UMSI_EINVAL.
 * Context: process.
 */
int umsi_pci_save_state(struct umsi_pci_dev *dev);

/**
 * umsi_pci_restore_state - reprogram MSI/MSI-X after reset or resume
 * @dev: the function
 *
 * Rewrites the capability and every table entry (masked ones masked)
 * from uMSI's cache, in the set-up order, then Bus Master and INTx
 * disable. Return: 0 or -UMSI_EIO / -UMSI_ENODEV. Context: process.
 */
int umsi_pci_restore_state(struct umsi_pci_dev *dev);

/**
 * struct umsi_pci_info - what uMSI knows about a function
 * @bdf: address
 * @vendor: vendor ID
 * @device: device ID
 * @class_code: class (24 bits)
 * @msi_cap: MSI capability offset (0: none)
 * @msix_cap: MSI-X capability offset (0: none)
 * @msi_max: messages the MSI capability offers
 * @msix_max: MSI-X table size
 * @intx_pin: 0 none, 1-4 INTA-INTD
 * @mode: current mode
 * @nvec: IRQs allocated
 * @msi_reserved: MSI: vectors in the block (2^MME)
 * @gsi: INTx: the GSI, when in INTx mode
 * @reason: why neither MSI nor MSI-X can be used (NULL when one can):
 *          one of "policy:pci_nomsi", "policy:device_nomsi",
 *          "policy:not_listed", "policy:platform", "quirk:NAME" (the
 *          function's own quirk or a bridge's above it), "no_capability",
 *          "bar_unassigned", "bad_msix_table", "bad_capability"
 * @msix_reason: why MSI-X in particular cannot be used (NULL when it can,
 *          policy aside): "no_capability"; "bar_unassigned" (the BAR of
 *          the table or PBA has address 0); "bad_msix_table" (BIR 6/7 or
 *          beyond the header's BARs, an I/O or absent BAR, the upper half
 *          of a 64-bit BAR, table or PBA outside the BAR, or overlapping);
 *          "bad_capability" (the capability list is broken)
 * @quarantined: vectors kept for this function after a free that could
 *          not prove the device quiet (see umsi_pci_free_irq_vectors());
 *          they go back when the function is removed
 * @is_vf: an SR-IOV virtual function (umsi_pci_sriov_enable() added it)
 * @pf: a VF's physical function
 * @vf_index: a VF's number, 0 .. NumVFs-1
 * @num_vfs: a PF's VFs enabled through uMSI (0: none)
 */
struct umsi_pci_info {
	umsi_bdf_t bdf;
	uint16_t vendor;
	uint16_t device;
	uint32_t class_code;
	uint16_t msi_cap;
	uint16_t msix_cap;
	uint32_t msi_max;
	uint32_t msix_max;
	uint8_t intx_pin;
	enum umsi_pci_mode mode;
	uint32_t nvec;
	uint32_t msi_reserved;
	uint32_t gsi;
	const char *reason;
	const char *msix_reason;
	uint32_t quarantined;
	bool is_vf;
	umsi_bdf_t pf;
	uint16_t vf_index;
	uint16_t num_vfs;
};

/**
 * umsi_pci_get_info - describe a function
 * @dev: the function
 * @info: filled
 *
 * Context: process.
 */
void umsi_pci_get_info(struct umsi_pci_dev *dev, struct umsi_pci_info *info);

/* ---- SR-IOV ------------------------------------------------------------- */

/* Flags of umsi_pci_sriov_enable() and umsi_pci_sriov_disable(). */
/*
 * Skip the waits the SR-IOV specification asks of software after VF
 * Enable is set (100 ms before the first request to a VF) and cleared
 * (1 s before the capability is touched again). For VFs that are ready at
 * once: a hypervisor's emulated device (QEMU's), or hardware whose
 * readiness the kernel has seen otherwise (Function Readiness Status).
 */
#define UMSI_SRIOV_NOWAIT  (1u << 0)

/**
 * umsi_pci_sriov_enable - enable @nvfs virtual functions of a PF and add them
 * @pf: the physical function (umsi_pci_add()); its SR-IOV capability's VF
 *      BARs must already hold addresses (the kernel assigns them, as it
 *      assigns the BARs of any function)
 * @nvfs: 1 .. TotalVFs
 * @flags: UMSI_SRIOV_*
 *
 * Sizes the VF BARs (VF Memory Space Enable off), writes NumVFs, reads
 * First VF Offset and VF Stride again (they may depend on NumVFs) and
 * checks everything with umsi_pci_sriov_check() against the buses the
 * PF's bridge decodes. Then sets VF Enable and VF Memory Space Enable,
 * waits as the specification says (host sleep_us, else a spin on
 * clock_ns; none with UMSI_SRIOV_NOWAIT) and adds every VF as a function
 * (umsi_pci_add()): its routing ID is the PF's plus First VF Offset plus
 * its number times VF Stride, and that is the requester ID its messages
 * carry (VT-d's source ID, the ITS's DeviceID), behind the PF's bridge
 * (which may alias it as it does the PF). A VF's Vendor ID is the PF's
 * and its Device ID the VF Device ID, so device_nomsi= and quirks apply
 * to VFs by those. Its MSI-X table is found through the PF's VF BARs.
 * Drivers then use a VF like any function: umsi_pci_sriov_vf(),
 * umsi_pci_alloc_irq_vectors() or the message-level API (umsi/source.h).
 * ARI and the System Page Size are left as the kernel set them.
 *
 * All or nothing: on any failure the VFs added are removed, VF Enable and
 * NumVFs are cleared again and the allocator is as before.
 *
 * Return: 0; -UMSI_ENOENT: no SR-IOV capability (or no extended space);
 * -UMSI_EBUSY: VFs already enabled (by uMSI or by firmware); -UMSI_EINVAL
 * or -UMSI_ERANGE: @nvfs out of range or a hostile capability (the reason
 * is logged); -UMSI_EEXIST: a function is already registered at a VF's
 * address; -UMSI_ENODEV: the PF or a VF reads all-ones; -UMSI_ENOMEM;
 * -UMSI_EIO. Context: process; sleeps through the host.
 */
int umsi_pci_sriov_enable(struct umsi_pci_dev *pf, uint16_t nvfs,
			  uint32_t flags);

/**
 * umsi_pci_sriov_disable - remove a PF's VFs and disable them
 * @pf: the physical function
 * @flags: UMSI_SRIOV_*
 *
 * Removes every VF as umsi_pci_remove() does (its handlers, IRQs, vectors,
 * table mappings; MSI-X turned off on the VF, so no vector returns while
 * a VF may still send), then clears VF Enable and VF Memory Space Enable,
 * waits 1 s unless UMSI_SRIOV_NOWAIT, and sets NumVFs to 0. The
 * allocator is then as before umsi_pci_sriov_enable(): the 2003 patch's
 * reclaim on hot removal, for VFs. Nothing when no VFs are enabled.
 * umsi_pci_remove() of the PF does this first. Context: process.
 */
void umsi_pci_sriov_disable(struct umsi_pci_dev *pf, uint32_t flags);

/**
 * umsi_pci_sriov_vf - a PF's virtual function
 * @pf: the physical function
 * @index: 0 .. NumVFs-1
 *
 * Return: the VF's record, or NULL (no such VF, or it was removed with
 * umsi_pci_remove()). Context: process.
 */
struct umsi_pci_dev *umsi_pci_sriov_vf(struct umsi_pci_dev *pf,
				       uint16_t index);

/**
 * struct umsi_pci_sriov_info - a PF's SR-IOV capability and VFs
 * @cap: the capability's offset
 * @total_vfs: TotalVFs
 * @num_vfs: VFs enabled through uMSI (0: none)
 * @vf_device: VF Device ID
 * @first: address of VF 0 (while enabled)
 * @stride: VF Stride as a routing-ID step (while enabled)
 * @bar_addr: VF 0's BAR n (while enabled; VF i's is @bar_addr[n] +
 *            i * @bar_size[n])
 * @bar_size: one VF's BAR n (while enabled; 0: none)
 * @bar_is64: BAR n is the lower half of a 64-bit BAR (while enabled)
 */
struct umsi_pci_sriov_info {
	uint16_t cap;
	uint16_t total_vfs;
	uint16_t num_vfs;
	uint16_t vf_device;
	umsi_bdf_t first;
	uint16_t stride;
	uint64_t bar_addr[6];
	uint64_t bar_size[6];
	bool bar_is64[6];
};

/**
 * umsi_pci_sriov_get_info - describe a PF's SR-IOV capability
 * @pf: the function
 * @info: filled
 *
 * Return: 0; -UMSI_ENOENT without an SR-IOV capability; -UMSI_ENODEV;
 * -UMSI_ERANGE or -UMSI_EIO as umsi_pci_read_sriov_cap(). Context: process.
 */
int umsi_pci_sriov_get_info(struct umsi_pci_dev *pf,
			    struct umsi_pci_sriov_info *info);

/* ---- policy: boot parameters ------------------------------------------ */

/**
 * umsi_policy_parse - take MSI policy from a kernel command line
 * @sys: the system
 * @cmdline: space-separated words; the ones uMSI knows:
 *   pci_nomsi, pci=nomsi          no MSI or MSI-X for any device
 *   device_nomsi=0xDDDDVVVV,...   no MSI for these devices (device ID in
 *                                 the high 16 bits, vendor in the low)
 *   device_msi=0xDDDDVVVV,...     the devices allowed in specific mode
 *   pci_msi=specific              only devices in device_msi= get MSI;
 *                                 device_nomsi= is then ignored (warned)
 *   Lists hold at most 31 entries, as the 2003 patch's did.
 *
 * A malformed parameter is reported in the log and ignored as a whole,
 * never half-applied. Unknown words are ignored. Calling it again adds to
 * the policy. Applies to devices added afterwards.
 *
 * Return: 0, or the number of malformed parameters as a negative
 * -UMSI_EINVAL when any was (the rest still applied). Context: process.
 */
int umsi_policy_parse(struct umsi_system *sys, const char *cmdline);

/* ---- quirks ------------------------------------------------------------- */

/* Quirk flags. */
#define UMSI_QUIRK_NO_MSI          (1u << 0)  /* MSI and MSI-X broken */
#define UMSI_QUIRK_NO_MSI_BELOW    (1u << 1)  /* bridge: nothing below gets MSI */
#define UMSI_QUIRK_NO_64BIT_MSI    (1u << 2)  /* upper address ignored */
#define UMSI_QUIRK_INTX_DISABLE_BUG (1u << 3) /* INTx Disable stops MSI too */
#define UMSI_QUIRK_BROKEN_MASK     (1u << 4)  /* per-vector mask bits lie */

/**
 * struct umsi_quirk - one entry of the quirk table
 * @vendor: vendor ID to match
 * @device: device ID to match, or 0xffff for any device of @vendor
 * @flags: UMSI_QUIRK_*
 * @name: short name shown in reasons ("quirk:NAME")
 */
struct umsi_quirk {
	uint16_t vendor;
	uint16_t device;
	uint32_t flags;
	const char *name;
};

/**
 * umsi_quirk_add - add a quirk at run time (the kernel knows its platform)
 * @sys: the system
 * @q: the quirk (copied; @q->name is kept by pointer and must outlive
 *     the system)
 *
 * Applies to functions added afterwards, after the built-in table.
 * Return: 0, -UMSI_ENOMEM, -UMSI_EINVAL. Context: process.
 */
int umsi_quirk_add(struct umsi_system *sys, const struct umsi_quirk *q);

/**
 * umsi_quirk_table - the built-in quirk table
 * @n: set to its length
 *
 * Return: the table. Context: any.
 */
const struct umsi_quirk *umsi_quirk_table(size_t *n);

#endif /* UMSI_PCI_H */
