/* SPDX-License-Identifier: MIT */
/*
 * minimal_host.c - uMSI hosted on a toy platform, in one file: the host
 * operations a kernel writes (umsi/host.h), a system on the x86 local
 * APIC back end, one MSI-X function set up through the driver API, and
 * one interrupt dispatched. The "hardware" is a few arrays: a 2-CPU
 * machine, one function's configuration space and its MSI-X table.
 *
 *   cc -Iinclude examples/minimal-host/minimal_host.c build/libumsi.a
 *
 * A kernel replaces each h_* below with the real thing (ECAM, its page
 * mapper, its spinlock, its allocator, the LAPIC); the calls in main()
 * are the moments it calls uMSI at (docs/PORTING.md, section 4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/pci.h>
#include <umsi/pci_regs.h>

#define NCPUS     2
#define FN        UMSI_BDF(0, 0, 3, 0)        /* our one function */
#define BAR0      0xfebf0000ull                /* its memory BAR */
#define MSIX_CAP  0x40

static uint8_t cfg[4096];               /* the function's config space */
static uint32_t bar0[1024];             /* 4 KiB: MSI-X table at 0 */
static uint32_t this_cpu;               /* the CPU "running" this code */
static uint32_t eois;

/* ---- the host operations ----------------------------------------------- */

static int h_cfg_read(void *h, umsi_bdf_t bdf, uint16_t off, uint8_t w,
		      uint32_t *v)
{
	(void)h;
	*v = 0;
	if (bdf != FN) {                 /* nothing else: all-ones */
		*v = w == 4 ? 0xffffffffu : (1u << 8 * w) - 1;
		return 0;
	}
	memcpy(v, &cfg[off], w);
	return 0;
}

static int h_cfg_write(void *h, umsi_bdf_t bdf, uint16_t off, uint8_t w,
		       uint32_t v)
{
	(void)h;
	if (bdf == FN && off != 0x10)    /* the BAR stays where it is */
		memcpy(&cfg[off], &v, w);
	return 0;
}

static int h_map(void *h, uint64_t phys, uint64_t len, void **virt)
{
	(void)h;
	if (phys < BAR0 || phys + len > BAR0 + sizeof(bar0))
		return -UMSI_ENOMEM;
	*virt = (uint8_t *)bar0 + (phys - BAR0);
	return 0;
}

static void h_unmap(void *h, void *virt, uint64_t len)
{
	(void)h; (void)virt; (void)len;
}

/* One CPU at a time here: a lock only saves and restores "interrupts". */
static void *h_lock_create(void *h) { (void)h; return malloc(1); }
static void h_lock_destroy(void *h, void *l) { (void)h; free(l); }
static umsi_irqflags_t h_lock(void *h, void *l) { (void)h; (void)l; return 0; }
static void h_unlock(void *h, void *l, umsi_irqflags_t f)
{
	(void)h; (void)l; (void)f;
}

static void *h_alloc(void *h, size_t n) { (void)h; return malloc(n); }
static void h_free(void *h, void *p, size_t n) { (void)h; (void)n; free(p); }
static void h_log(void *h, enum umsi_log_level l, const char *msg)
{
	(void)h;
	printf("umsi[%d]: %s\n", (int)l, msg);
}
static uint64_t h_clock(void *h) { static uint64_t t; (void)h; return t += 1000; }
static uint32_t h_current_cpu(void *h) { (void)h; return this_cpu; }
static uint32_t h_cpu_count(void *h) { (void)h; return NCPUS; }
static int h_cpu_hwid(void *h, uint32_t cpu, uint32_t *id)
{
	(void)h;
	*id = cpu;                       /* APIC ID = CPU number */
	return cpu < NCPUS ? 0 : -UMSI_EINVAL;
}
static bool h_online(void *h, uint32_t cpu) { (void)h; (void)cpu; return true; }
static uint32_t h_platform(void *h) { (void)h; return 0; }

static int h_run_on_cpu(void *h, uint32_t cpu, void (*fn)(void *), void *arg)
{
	uint32_t was = this_cpu;

	(void)h;
	this_cpu = cpu;                  /* a real kernel sends an IPI */
	fn(arg);
	this_cpu = was;
	return 0;
}

/* The local APIC: EOI, "is vector v pending in my IRR", a fixed IPI. */
static void h_eoi(void *h, uint32_t id) { (void)h; (void)id; eois++; }
static bool h_irq_pending(void *h, uint32_t id) { (void)h; (void)id; return false; }
static void h_send_ipi(void *h, uint32_t hwid, uint32_t id)
{
	(void)h; (void)hwid; (void)id;
}

static const struct umsi_host_ops ops = {
	.cfg_read = h_cfg_read, .cfg_write = h_cfg_write,
	.mmio_map = h_map, .mmio_unmap = h_unmap,
	.lock_create = h_lock_create, .lock_destroy = h_lock_destroy,
	.lock_acquire = h_lock, .lock_release = h_unlock,
	.alloc = h_alloc, .free = h_free, .log = h_log, .clock_ns = h_clock,
	.current_cpu = h_current_cpu, .cpu_count = h_cpu_count,
	.cpu_hwid = h_cpu_hwid, .cpu_is_online = h_online,
	.platform_flags = h_platform, .run_on_cpu = h_run_on_cpu,
	.eoi = h_eoi, .irq_pending = h_irq_pending, .send_ipi = h_send_ipi,
};

/* ---- the toy function: an MSI-X capability with 4 entries in BAR0 -------- */

static void make_function(void)
{
	uint32_t i;

	memcpy(&cfg[0x00], &(uint32_t){ 0x00111234 }, 4); /* vendor, device */
	cfg[0x06] = 0x10;                          /* Status: capability list */
	cfg[0x0b] = 0x02;                          /* class: network */
	memcpy(&cfg[0x10], &(uint32_t){ (uint32_t)BAR0 }, 4);
	cfg[0x34] = MSIX_CAP;
	cfg[MSIX_CAP] = UMSI_PCI_CAP_ID_MSIX;      /* next: none */
	cfg[MSIX_CAP + 2] = 3;                     /* table size 4 (N - 1) */
	/* Table at BAR0 offset 0, PBA at 0x800: both BIR 0. */
	memcpy(&cfg[MSIX_CAP + 8], &(uint32_t){ 0x800 }, 4);
	for (i = 0; i < 4; i++)
		bar0[4 * i + 3] = 1;               /* every entry masked */
}

/* The driver's handler: what a device interrupt reaches. */
static int my_handler(uint32_t irq, void *dev_id)
{
	printf("handler: irq %u on cpu %u (%s)\n", irq, this_cpu,
	       (const char *)dev_id);
	return UMSI_IRQ_HANDLED;
}

int main(void)
{
	struct umsi_system *sys;
	struct umsi_pci_dev *dev;
	uint32_t addr, data, cpu, vector;
	int n, irq;

	make_function();
	/* Boot: one system on this machine (x86 LAPIC, the default). */
	if (umsi_system_create(&ops, NULL, NULL, &sys))
		return 1;
	/* Enumeration: the function, fresh from reset. */
	if (umsi_pci_add(sys, FN, NULL, UMSI_PCI_ADD_FRESH, &dev))
		return 1;
	/* The driver: 1 to 4 vectors, MSI-X first. */
	n = umsi_pci_alloc_irq_vectors(dev, 1, 4, UMSI_PCI_IRQ_MSIX);
	irq = umsi_pci_irq_vector(dev, 0);
	if (n < 1 || irq < 0 ||
	    umsi_request_irq(sys, (uint32_t)irq, my_handler, 0, "toy", "toy"))
		return 1;
	printf("%d MSI-X vectors, vector 0 is irq %d\n", n, irq);

	/* The device fires entry 0: it writes data to address. The LAPIC
	 * named by address bits 19:12 takes vector data & 0xff. */
	addr = bar0[0];
	data = bar0[2];
	cpu = (addr >> 12) & 0xff;
	vector = data & 0xff;
	printf("entry 0: address 0x%08x data 0x%04x -> cpu %u vector 0x%x, "
	       "%s\n", addr, data, cpu, vector,
	       bar0[3] & 1 ? "masked" : "unmasked");
	/* The kernel's interrupt entry on that CPU: */
	this_cpu = cpu;
	if (umsi_dispatch(sys, cpu, vector) != 1 || eois != 1)
		return 1;
	this_cpu = 0;

	/* Removal gives everything back. */
	umsi_pci_remove(sys, dev);
	umsi_system_destroy(sys);
	printf("ok: one interrupt dispatched, %u EOI\n", eois);
	return 0;
}
