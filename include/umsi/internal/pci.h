/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/pci.h - private structures of the PCI layer (src/pci).
 *
 * Not a public interface: it changes without notice. The IRQ core never
 * sees a PCI function: it knows the chip operations the PCI layer hands to
 * umsi_irq_alloc(), and the layer's state only as the opaque pointer and
 * tear-down hook of umsi_system_set_upper() (src/pci/state.c).
 *
 * Contract with the IRQ core (src/irq), for the record:
 *  - write_msg() of an MSI block (block_order > 0) must be called on the
 *    block leader with the message of the new base vector; the whole
 *    block moves. Calls on another member return -UMSI_EINVAL. (The core
 *    does not move blocks today; single-message MSI is a block of one.)
 *  - startup() refuses an MSI/MSI-X IRQ whose device has Bus Master
 *    Enable clear (-UMSI_EPERM, logged), and a device that reads
 *    all-ones (-UMSI_ENODEV).
 *  - umsi_pci_remove() unlinks the function from the list itself, so the
 *    layer's tear-down "while (st->devs) umsi_pci_remove()" ends.
 */
#ifndef UMSI_INTERNAL_PCI_H
#define UMSI_INTERNAL_PCI_H

#ifdef UMSI_LAYER_CORE
#error "the IRQ core, allocator and back ends know no PCI: this header is the PCI layer's"
#endif

#include <umsi/internal/core.h>
#include <umsi/pci.h>
#include <umsi/pci_regs.h>

/* The 2003 patch's lists held 31 entries (32 words, the first one a count). */
#define UMSI_POLICY_LIST_MAX 31

/* Boot-parameter policy and quirks added at run time. */
struct umsi_policy {
	bool nomsi;                 /* pci_nomsi or pci=nomsi */
	bool specific;              /* pci_msi=specific */
	uint32_t nomsi_n;
	uint32_t nomsi_ids[UMSI_POLICY_LIST_MAX];   /* device << 16 | vendor */
	uint32_t msi_n;
	uint32_t msi_ids[UMSI_POLICY_LIST_MAX];
	struct umsi_quirk *quirks;  /* added by umsi_quirk_add() */
	size_t nquirks, quirks_cap;
};

/* The PCI layer's state in a system (src/pci/state.c). */
struct umsi_pci_state {
	struct umsi_pci_dev *devs;  /* functions added [sys lock] */
	struct umsi_policy policy;
};

/* The state, or NULL before the layer's first use. */
static inline struct umsi_pci_state *umsi_pci_state(struct umsi_system *sys)
{
	return (struct umsi_pci_state *)sys->upper;
}

/* The state, made at the first call; NULL when out of memory. */
struct umsi_pci_state *umsi_pci_state_get(struct umsi_system *sys);

/* The first function added (NULL: none), for walks of the list. */
static inline struct umsi_pci_dev *umsi_pci_devs(struct umsi_system *sys)
{
	struct umsi_pci_state *st = umsi_pci_state(sys);

	return st ? st->devs : NULL;
}

/* The policy, or NULL when nothing was ever set. */
static inline const struct umsi_policy *umsi_pci_policy(struct umsi_system *sys)
{
	struct umsi_pci_state *st = umsi_pci_state(sys);

	return st ? &st->policy : NULL;
}

/*
 * One MSI-X table entry's state, in dev->msix_state (an array of the
 * table's size while MSI-X is on: one allocation a function, not one a
 * vector; its table index is its position). Meaningful while the entry is
 * used (umsi_pci_dev.msix_used). 16 bytes: which entries were added while
 * MSI-X was on is a bitmap right after the array (src/pci/msix.c).
 */
struct umsi_msix_vec {
	uint64_t address;           /* the message as last written */
	uint32_t data;
	uint32_t ctrl;              /* Vector Control as last written [dev lock] */
};

/* An IO-APIC line used for INTx; the chip_data of IRQ number = GSI. */
struct umsi_intx_line {
	uint32_t gsi;
	struct umsi_intx_route route;
	uint32_t users;             /* functions using it [sys lock] */
	struct umsi_irq_desc *desc;
	struct umsi_msg msg;        /* the entry's message as last written */
	umsi_bdf_t bdf;             /* a user: its creator until it leaves */
};

#define UMSI_MSIX_BITMAP_WORDS (UMSI_MSIX_MAX_VECTORS / 64)

/* A PCI function known to uMSI. */
struct umsi_pci_dev {
	struct umsi_system *sys;
	struct umsi_pci_dev *next;          /* state->devs [sys lock] */
	struct umsi_pci_dev *parent;
	void *lock;                         /* mask caches, table writes */
	umsi_bdf_t bdf;
	uint16_t vendor, device;
	uint32_t class_code;
	uint8_t header_type;
	uint32_t add_flags;
	uint16_t pcie_cap;
	/* A PCIe bridge's device/port type (UMSI_PCIE_TYPE_*), once read. */
	uint8_t port_type;
	bool port_type_known;
	/* The requester ID its messages carry upstream (requester_of). */
	uint32_t requester_id;
	/* A bridge on the way up takes its requests over: it may share. */
	bool aliased;

	/* Why MSI and MSI-X are forbidden (policy, quirk), or NULL. */
	const char *deny_reason;
	char reason_buf[40];
	/* Why MSI-X in particular is unusable (table location), or NULL. */
	const char *msix_reason;
	uint32_t quirks;                    /* UMSI_QUIRK_* of this function */
	bool caps_broken;                   /* the capability list broke */

	/* MSI capability. */
	uint16_t msi_cap;
	uint16_t msi_ctrl;                  /* Message Control as last written */
	uint8_t msi_mmc;                    /* messages the device offers */
	bool msi_64;
	bool msi_maskable;                  /* mask bits, and not quirked off */
	uint32_t msi_mask;                  /* mask bits as last written [lock] */
	uint32_t msi_want;                  /* ... as mask/unmask want [lock] */
	struct umsi_msg msi_msg;            /* message of vector 0 */
	uint32_t msi_block;                 /* 2^MME vectors reserved */
	struct umsi_source *msi_src;        /* while in MSI mode */

	/* MSI-X capability and its table. */
	uint16_t msix_cap;
	uint16_t msix_ctrl;                 /* Message Control at add */
	uint16_t msix_size;                 /* table entries */
	uint64_t msix_table_phys, msix_pba_phys;
	volatile uint32_t *table;           /* mapped while in MSI-X mode */
	volatile uint32_t *pba;
	bool msix_clean;                    /* every table entry is masked */
	bool reset_expected;                /* umsi_pci_save_state() called */
	uint64_t msix_used[UMSI_MSIX_BITMAP_WORDS];
	/*
	 * Every entry's state, msix_size of them, while in MSI-X mode: freed
	 * after the IRQs (a move in flight may write an entry until then).
	 */
	struct umsi_msix_vec *msix_state;
	/* The table as a source of the message layer (while in MSI-X mode). */
	struct umsi_source *msix_src;

	/* INTx. */
	uint8_t intx_pin;
	bool intx_routed;
	struct umsi_intx_route route;
	struct umsi_intx_line *intx;        /* in INTx mode */

	/* The IRQs handed out. */
	enum umsi_pci_mode mode;
	struct umsi_irq_desc **descs;       /* descs_cap slots */
	uint32_t descs_cap;
	uint32_t nvec;                      /* IRQs given to the driver */
	uint32_t ndesc;                     /* descriptors held (MSI: 2^MME) */
	uint16_t cmd_before;                /* Command before we enabled */

	/* SR-IOV: a VF's physical function and number; a PF's VFs. */
	struct umsi_pci_dev *pf;
	uint16_t vf_index;
	struct umsi_pci_sriov *sriov;       /* VFs enabled by uMSI */
};

/* A physical function's VFs while uMSI has them enabled (sriov.c). */
struct umsi_pci_sriov {
	uint16_t cap;                       /* capability offset */
	uint16_t ctrl;                      /* SR-IOV Control as written */
	uint16_t vf_device;
	struct umsi_sriov_layout lay;
	struct umsi_pci_dev *vfs[];         /* lay.nvfs; NULL once removed */
};

/* ---- dev.c: configuration access ----------------------------------------- */

/*
 * Register VF @index of @pf at @bdf (its IDs from the PF, its BARs from
 * the PF's SR-IOV capability), as umsi_pci_add() does a function.
 */
int umsi_pci_add_vf(struct umsi_pci_dev *pf, umsi_bdf_t bdf, uint16_t index,
		    struct umsi_pci_dev **out);
/*
 * Size the memory BAR whose register (pair, when @is64) is at @off and
 * holds @lo (@hi): write all-ones, read the mask, put the value back (a
 * failed write tried once more). Decoding must be off. 0 with *@size (0:
 * not implemented); -UMSI_ENODEV when it read all-ones; a host error.
 * A function's own BARs (dev.c) and a PF's VF BARs (sriov.c).
 */
int umsi_pci_size_bar_reg(struct umsi_pci_dev *dev, uint16_t off, bool is64,
			  uint32_t lo, uint32_t hi, uint64_t *size);
/* A VF's MSI-X Table Size read again while MSI-X is off (dev.c). */
int umsi_pci_vf_refresh(struct umsi_pci_dev *dev);
/* sriov.c: take @pf's VFs away before @pf goes (umsi_pci_remove). */
void umsi_pci_sriov_teardown(struct umsi_pci_dev *pf);
/* sriov.c: forget VF @vf in its PF's list (umsi_pci_remove of a VF). */
void umsi_pci_sriov_forget(struct umsi_pci_dev *vf);

int umsi_pci_cfg_read(struct umsi_pci_dev *dev, uint16_t off, uint8_t width,
		      uint32_t *val);
int umsi_pci_cfg_write(struct umsi_pci_dev *dev, uint16_t off, uint8_t width,
		       uint32_t val);
/*
 * Messages all functions sharing @dev's requester ID can send together
 * (umsi_ctl_irq.source_events). Takes the system lock.
 */
uint32_t umsi_pci_source_events(struct umsi_pci_dev *dev);
/* Read Command; -UMSI_ENODEV when the function reads all-ones. */
int umsi_pci_read_command(struct umsi_pci_dev *dev, uint16_t *cmd);
/* Write Command only when @cmd differs from @old. */
int umsi_pci_update_command(struct umsi_pci_dev *dev, uint16_t old,
			    uint16_t cmd);
/* The Command bits MSI/MSI-X need: Bus Master, INTx Disable (quirk). */
uint16_t umsi_pci_msi_command(struct umsi_pci_dev *dev, uint16_t cmd);
/* Give back descs (NULL-safe) and reset the IRQ bookkeeping. */
int umsi_pci_descs_alloc(struct umsi_pci_dev *dev, uint32_t n);
void umsi_pci_descs_free(struct umsi_pci_dev *dev);
/* The startup check of MSI and MSI-X IRQs: Bus Master Enable is set. */
int umsi_pci_bme_check(struct umsi_pci_dev *dev, uint32_t irq);
/*
 * Put INTx Disable back as it was before uMSI enabled a mode (Command
 * @cmd as just read); other bits stay.
 */
void umsi_pci_restore_intx_disable(struct umsi_pci_dev *dev, uint16_t cmd);

/* The function's lock: mask caches and table writes. */
static inline umsi_irqflags_t umsi_pci_dev_lock(struct umsi_pci_dev *dev)
{
	struct umsi_ctl_env *env = umsi_ctl_env(dev->sys);

	return env->ops->lock_acquire(env->host, dev->lock);
}

static inline void umsi_pci_dev_unlock(struct umsi_pci_dev *dev,
				       umsi_irqflags_t fl)
{
	struct umsi_ctl_env *env = umsi_ctl_env(dev->sys);

	env->ops->lock_release(env->host, dev->lock, fl);
}

/* ---- msi.c ----------------------------------------------------------------- */

/*
 * Enable MSI with between @min and @max messages; @irq_at >= 0 asks for
 * that IRQ number (single message only). Return: messages, or an error.
 */
int umsi_msi_enable(struct umsi_pci_dev *dev, uint32_t min, uint32_t max,
		    int64_t irq_at);
void umsi_msi_disable(struct umsi_pci_dev *dev);
int umsi_msi_restore(struct umsi_pci_dev *dev);
int umsi_msi_pending(struct umsi_pci_dev *dev, uint32_t n);

/* ---- dev.c: the message layer's sources (umsi/internal/source.h) ------- */

struct umsi_source_ops;
int umsi_pci_source_get(struct umsi_pci_dev *dev, uint32_t nslots, bool block,
			const struct umsi_source_ops *ops, const char *name,
			struct umsi_source **out);
void umsi_pci_source_put(struct umsi_source **src);

/* ---- msix.c ---------------------------------------------------------------- */

/*
 * Enable MSI-X. With @indices, exactly those @n entries (sparse, all or
 * nothing); without, between @min and @max entries 0.. . @managed spreads
 * the vectors over the CPUs. @irq_at >= 0: that IRQ number (one entry).
 * Return: entries enabled, or an error.
 */
int umsi_msix_enable(struct umsi_pci_dev *dev, const uint16_t *indices,
		     uint32_t min, uint32_t max, bool managed, int64_t irq_at);
void umsi_msix_disable(struct umsi_pci_dev *dev);
int umsi_msix_restore(struct umsi_pci_dev *dev);
int umsi_msix_pending(struct umsi_pci_dev *dev, uint32_t n);
int umsi_msix_add_entry(struct umsi_pci_dev *dev, int32_t index,
			bool dynamic);
int umsi_msix_remove_entry(struct umsi_pci_dev *dev,
			   struct umsi_irq_desc *d);
/* Whether the entry of @v was added while MSI-X was on. */
bool umsi_msix_vec_dynamic(const struct umsi_pci_dev *dev,
			   const struct umsi_msix_vec *v);
struct umsi_msix_vec *umsi_msix_vec_of(struct umsi_pci_dev *dev,
				       uint32_t irq);

/* ---- intx.c ---------------------------------------------------------------- */

int umsi_intx_enable(struct umsi_pci_dev *dev);
void umsi_intx_disable(struct umsi_pci_dev *dev);
/* @dev's IO-APIC input can deliver no quarantined vector (see intx.c). */
bool umsi_intx_silence(struct umsi_pci_dev *dev);
/* Another registered function routes its INTx to @dev's GSI. */
bool umsi_intx_shared(struct umsi_pci_dev *dev);

/* ---- policy.c and quirks.c --------------------------------------------------- */

/* The policy, the layer's state made on first use; NULL without memory. */
struct umsi_policy *umsi_policy_get(struct umsi_system *sys);
/* Set dev->deny_reason from platform, boot parameters and quirks. */
void umsi_pci_apply_policy(struct umsi_pci_dev *dev);
/* UMSI_QUIRK_* flags of every entry matching vendor/device. */
uint32_t umsi_quirk_lookup(struct umsi_system *sys, uint16_t vendor,
			   uint16_t device);
/* Name of the first matching entry that has @flag ("?" when none). */
const char *umsi_quirk_name(struct umsi_system *sys, uint16_t vendor,
			    uint16_t device, uint32_t flag);

#endif /* UMSI_INTERNAL_PCI_H */
