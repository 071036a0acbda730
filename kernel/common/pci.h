/* SPDX-License-Identifier: MIT */
/*
 * pci.h - configuration access through ECAM, enumeration, BARs as the
 * firmware left them, and q35 INTx routing.
 */
#ifndef KERNEL_PCI_H
#define KERNEL_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCI_MAX_DEVS 128

/* A PCI function's address, as umsi_bdf_t: seg 31:16, bus 15:8, devfn 7:0. */
#define PCI_BDF(bus, dev, fn) (((uint32_t)(bus) << 8) | ((uint32_t)(dev) << 3) | (fn))
#define PCI_BUS(bdf) (((bdf) >> 8) & 0xff)
#define PCI_DEV(bdf) (((bdf) >> 3) & 0x1f)
#define PCI_FN(bdf)  ((bdf) & 7)

enum pci_bar_kind { PCI_BAR_NONE, PCI_BAR_IO, PCI_BAR_MEM32, PCI_BAR_MEM64 };

/* How the kernel knows a function is in its reset state (pcireset.c). */
enum pci_fresh {
	PCI_FRESH_NO,		/* not known: d->stale says why */
	PCI_FRESH_BOOT,		/* cold boot, MSI-X left as reset made it */
	PCI_FRESH_FLR,		/* the kernel reset it (Function Level Reset) */
	PCI_FRESH_HOTPLUG,	/* hot-added: its slot was just powered on */
};

/* A bridge's forwarding windows (PCI-to-PCI Bridge 1.2, 3.2.5.6-3.2.5.9). */
enum pci_win { PCI_WIN_IO, PCI_WIN_MEM, PCI_WIN_PREF, PCI_NWIN };

struct pci_window {
	bool open;		/* base <= limit */
	uint64_t base, limit;	/* inclusive */
};

struct pci_bar {
	enum pci_bar_kind kind;
	bool prefetchable;
	bool assigned;		/* the firmware gave it an address */
	uint64_t addr;
	uint64_t size;
};

struct pci_dev {
	uint32_t bdf;
	uint16_t vendor, device;
	uint32_t class;		/* class 23:16, subclass 15:8, prog-if 7:0 */
	uint8_t header_type;	/* 0 device, 1 bridge */
	uint8_t irq_pin;	/* 1 = INTA .. 4 = INTD, 0 none */
	int parent;		/* index of the upstream bridge, -1 on a root bus */
	uint8_t root_bus;	/* the root bus of its hierarchy (0, or another
				 * host bridge's) */
	uint8_t secondary, subordinate;
	uint8_t msi_cap, msix_cap, pcie_cap;
	struct pci_bar bar[6];
	enum pci_fresh fresh;
	char stale[32];		/* why not fresh: "msix_enabled", ... */
	bool flr_pending;	/* FLR initiated, restore outstanding */
	bool reset_done;	/* the kernel issued an FLR */
	bool present;		/* the entry is in use (hot removal frees it) */
	bool hotplug;		/* enumerated by the hot-plug service */
	uint8_t pcie_type;	/* PCIe Capabilities: Device/Port Type */
	struct pci_window win[PCI_NWIN];	/* bridges */
	int pf;			/* an SR-IOV VF: its PF's index; else -1 */
};

extern struct pci_dev pci_devs[PCI_MAX_DEVS];
extern uint32_t pci_ndevs;

void pci_init(void);		/* x86: ECAM from MCFG, or 0xcf8 without it */
/* Configuration space through the ECAM window at @base for buses @start-@end. */
void pci_set_ecam(uint64_t base, uint8_t start, uint8_t end);
void pci_enumerate(void);	/* fills pci_devs, sizes BARs */
/*
 * After the architecture made configuration space reachable (pci_init()
 * or pci_set_ecam()): enumerate, judge which functions are fresh from
 * reset, record the resources for hot plug, print a line per function.
 */
void pci_bring_up(void);
struct pci_dev *pci_find(uint32_t bdf);	/* a present function, or NULL */
/*
 * The message function @bdf holds for its MSI-X entry @index (@msix) or
 * MSI message @index (a block's message i: the data with i in its low
 * bits, as the function sends it), read from the function itself.
 * Returns 0, or -1 when it has no such capability or table.
 */
int pci_read_msg(uint32_t bdf, bool msix, uint32_t index, uint64_t *addr,
		 uint32_t *data);

/*
 * Size the BAR register at @off of @bdf into *@b (PCI 3.0, 6.2.5.1):
 * write all-ones, read back the size mask, restore; @last: the register
 * cannot start a 64-bit pair. Decoding must be off. A BAR left at address
 * 0 is marked unassigned. Returns the registers it takes (1 or 2). Used
 * for a function's own BARs and for a PF's VF BARs (glue_sriov.c).
 */
int pci_size_bar_at(uint32_t bdf, uint16_t off, bool last, struct pci_bar *b);

/* Print @d's "pci" lines (IDs, capabilities, INTx route, BARs). */
void pci_print(const struct pci_dev *d);

/* Is the entry's function there (present, answering configuration reads)? */
bool pci_gone(const struct pci_dev *d);

/* ---- hot plug (pcihot.c) -------------------------------------------------- */

/* A new pci_devs entry for the function at @bdf (pci.c): index or -1. */
int pci_new_function(uint32_t bdf, uint8_t root, int parent);

/*
 * Record the BARs the firmware assigned and the bridges' windows, so that
 * hot-added functions get addresses no one else uses. After pci_enumerate().
 */
void pci_resources_init(void);

/*
 * Enumerate what appeared below the bridge @port (its secondary bus and,
 * through bridges found there, everything below): new pci_devs entries
 * with bus numbers from the port's range and BARs inside its windows,
 * decoding enabled. Parents come before their children in @list (up to
 * @max). Returns how many, 0 when nothing answered, or -1 when a
 * function could not get what it needs; then nothing stays set up and
 * @why says what was missing (e.g. "no_bar_space 0000:01:00.0 bar 2
 * size 0x4000000").
 */
int pci_hot_scan(int port, int *list, int max, char *why, size_t whylen);

/*
 * Forget a function found by pci_hot_scan() or at boot: decoding and Bus
 * Master off (when it still answers), its BARs and bus numbers back to
 * the windows it came from, its entry free for reuse.
 */
void pci_hot_release(int idx);

/* The present functions below bridge @port, deepest first (for removal). */
int pci_below(int port, int *list, int max);

/*
 * Room an enumerating firmware leaves below a hot-plug port (a root or
 * downstream port whose slot says Hot-Plug Capable, PCIe 4.0 7.5.3.9)
 * for a card that is not there yet: its own windows, used by
 * pci_hot_scan() when a card comes. The arm64 and riscv64 kernels
 * enumerate like a firmware and ask this of every bridge; on x86 SeaBIOS
 * does it. Defaults 2 MiB of memory and 2 MiB of prefetchable memory
 * (Linux's hpmemsize and hpmmioprefsize) and one bus number, the
 * port's secondary; umsi.hp_mem=N and umsi.hp_pref=N (MiB, 1-1024) and
 * umsi.hp_buses=N (1-32: bus numbers from the secondary on, room for a
 * bridge or switch card) change them, and so does QEMU's hint on its own
 * ports (bus-reserve=N: N more buses, as SeaBIOS reads it).
 * pci_set_ecam() first.
 */
struct pci_hp_room {
	uint64_t mem;
	uint64_t pref;
	uint32_t buses;
};
bool pci_hp_port_room(uint32_t bdf, struct pci_hp_room *room);

/* ---- SR-IOV (pci.c, pcihot.c; kernel/common/glue_sriov.c drives them) ---------- */

/*
 * A pci_devs entry for VF @bdf of PF @pf: its IDs as uMSI names them (a
 * VF's own read 0xffff), its BARs from the PF's VF BARs (@addr, one VF's
 * @size, @is64), its capabilities read. Index, or -1 when the table is
 * full.
 */
int pci_new_vf(uint32_t bdf, int pf, uint16_t vendor, uint16_t device,
	       const uint64_t addr[6], const uint64_t size[6],
	       const bool is64[6]);

/*
 * Room for VF BAR @n of PF @pf: @total bytes aligned to @align (one VF's
 * size) in the window of the PF's bridge (prefetchable when @pref and the
 * bridge has one). Returns the address, or 0 when there is none (or the
 * PF sits on a root bus, whose windows the kernel does not track).
 */
uint64_t pci_sriov_place(int pf, int n, uint64_t total, uint64_t align,
			 bool pref);
/* Give back everything pci_sriov_place() handed @pf. */
void pci_sriov_unplace(int pf);

/* Configuration access; a missing function reads as all-ones. */
uint32_t pci_cfg_read(uint32_t bdf, uint16_t off, uint8_t width);
void pci_cfg_write(uint32_t bdf, uint16_t off, uint8_t width, uint32_t v);

/* Does @d offer Function Level Reset (PCIe Device Capabilities bit 28)? */
bool pci_has_flr(const struct pci_dev *d);

/*
 * Set every function's `fresh`: FLR where `umsi.flr=` asks (all at once,
 * one 100 ms wait), else the cold-boot judgement of its MSI-X state.
 */
void pci_judge_fresh(void);

/*
 * The GSI INTx pin @pin (1..4) of @bdf arrives on, after the bridge
 * swizzle: by q35's fixed routing on x86, through karch_intx_root() on
 * the others. Returns -1 when not routable.
 */
int pci_intx_gsi(uint32_t bdf, uint8_t pin);

#if !defined(__x86_64__)
/*
 * The architecture's input for INTx pin @pin (1..4) of slot @slot on the
 * root bus, from the host bridge's interrupt-map (riscv64: an APLIC
 * source), or -1 when the map names none the kernel uses.
 */
int karch_intx_root(uint32_t slot, uint8_t pin);
#endif

#endif /* KERNEL_PCI_H */
