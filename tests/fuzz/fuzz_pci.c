/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the PCI layer: a function whose configuration space,
 * BAR sizes, INTx routing, host failures and boot parameters all come from
 * the input. The library is built from source into this binary with
 * ASan and UBSan; the host below is deliberately tiny and strict:
 *  - MMIO is plain heap memory of exactly the mapped length, so a table or
 *    PBA access outside what uMSI mapped is a heap overflow ASan reports;
 *  - every allocation, mapping and lock is counted and must be returned
 *    by the time the system is destroyed;
 *  - one fallible host call (chosen by the input) fails.
 *
 * Input layout (short inputs are zero-padded):
 *   [0, 256)     configuration space of 0000:00:03.0
 *   [256, 304)   six 64-bit little-endian BAR sizes (0: no BAR)
 *   304          flags: 1 fresh, 2 remapping, 4 platform forbids MSI,
 *                8 INTx routed, 16 also call the seed API
 *   305          fail the n-th fallible host call (0: none)
 *   306, 307     min, max vectors
 *   308          UMSI_IRQ_* types; 0x80: sparse MSI-X entries instead,
 *                indices 8 * byte 306..308 + 0..2
 *   309          GSI of the INTx line
 *   310          UMSI_QUIRK_* flags of a run-time quirk for this device
 *   311..        a kernel command line (up to 200 bytes)
 *
 * FUZZ_PCI_SEEDS=dir writes a few well-formed seeds there and exits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/compat.h>
#include <umsi/pci.h>
#include <umsi/pci_regs.h>
#include <umsi/x86.h>

#define HDR 311
#define BDF UMSI_BDF(0, 0, 3, 0)

struct fhost {
	uint8_t cfg[256];
	uint64_t bar_size[6];
	uint8_t probing[6];
	uint32_t plat;
	unsigned fail_at, fallible;
	uint8_t gsi;
	bool routed;
	long allocs, maps, locks;
};

static bool fail_now(struct fhost *h)
{
	return h->fail_at && ++h->fallible == h->fail_at;
}

static uint32_t cfg_get(const struct fhost *h, uint16_t off, uint8_t w)
{
	uint32_t v = 0;
	uint8_t i;

	for (i = 0; i < w; i++)
		v |= (uint32_t)h->cfg[off + i] << (8 * i);
	return v;
}

/* What a BAR register reads while being sized. */
static uint32_t bar_probe(const struct fhost *h, unsigned i)
{
	uint32_t prev = i ? cfg_get(h, UMSI_PCI_BAR0 + 4 * (i - 1), 4) : 0;
	uint32_t self = cfg_get(h, UMSI_PCI_BAR0 + 4 * i, 4);

	if (i && !(prev & 1) && (prev & 6) == 4 && h->bar_size[i - 1])
		return (uint32_t)(~(h->bar_size[i - 1] - 1) >> 32);
	if (!h->bar_size[i])
		return 0;
	if (self & 1)
		return ((uint32_t)~(h->bar_size[i] - 1) & ~3u) | (self & 3);
	return ((uint32_t)~(h->bar_size[i] - 1) & ~15u) | (self & 15);
}

static int f_cfg_read(void *host, umsi_bdf_t bdf, uint16_t off, uint8_t w,
		      uint32_t *val)
{
	struct fhost *h = host;

	if (fail_now(h)) {
		*val = 0xffffffffu;
		return -UMSI_EIO;
	}
	if (bdf != BDF || (off & (w - 1)) || off + w > 4096)
		abort();                /* uMSI must not do that */
	if (off >= 256) {
		*val = w == 4 ? 0xffffffffu : (1u << (8 * w)) - 1;
		return 0;
	}
	if (off >= UMSI_PCI_BAR0 && off < UMSI_PCI_BAR0 + 24 && w == 4 &&
	    h->probing[(off - UMSI_PCI_BAR0) / 4]) {
		*val = bar_probe(h, (off - UMSI_PCI_BAR0) / 4);
		return 0;
	}
	*val = cfg_get(h, off, w);
	return 0;
}

static int f_cfg_write(void *host, umsi_bdf_t bdf, uint16_t off, uint8_t w,
		       uint32_t val)
{
	struct fhost *h = host;
	uint8_t i;

	if (fail_now(h))
		return -UMSI_EIO;
	if (bdf != BDF || (off & (w - 1)) || off + w > 4096)
		abort();
	if (off >= 256)
		return 0;
	if (off >= UMSI_PCI_BAR0 && off < UMSI_PCI_BAR0 + 24 && w == 4) {
		unsigned b = (off - UMSI_PCI_BAR0) / 4;

		if (val == 0xffffffffu) {
			h->probing[b] = 1;
			return 0;
		}
		h->probing[b] = 0;
	}
	for (i = 0; i < w; i++)
		h->cfg[off + i] = (uint8_t)(val >> (8 * i));
	return 0;
}

static int f_map(void *host, uint64_t phys, uint64_t len, void **virt)
{
	struct fhost *h = host;

	(void)phys;
	if (fail_now(h))
		return -UMSI_ENOMEM;
	if (!len || len > 2048 * 16)
		abort();                /* larger than any table or PBA */
	*virt = calloc(1, len);
	if (!*virt)
		abort();
	h->maps++;
	return 0;
}

static void f_unmap(void *host, void *virt, uint64_t len)
{
	struct fhost *h = host;

	(void)len;
	free(virt);
	h->maps--;
}

static uint32_t f_rd(void *host, volatile void *a)
{
	(void)host;
	return *(volatile uint32_t *)a;
}

static void f_wr(void *host, volatile void *a, uint32_t v)
{
	(void)host;
	*(volatile uint32_t *)a = v;
}


static void *f_lock_create(void *host)
{
	struct fhost *h = host;
	int *l;

	if (fail_now(h))
		return NULL;
	l = calloc(1, sizeof(*l));
	h->locks++;
	return l;
}

static void f_lock_destroy(void *host, void *lock)
{
	struct fhost *h = host;

	if (*(int *)lock)
		abort();
	free(lock);
	h->locks--;
}

static umsi_irqflags_t f_acquire(void *host, void *lock)
{
	(void)host;
	if ((*(int *)lock)++)
		abort();                /* not recursive */
	return 0;
}

static void f_release(void *host, void *lock, umsi_irqflags_t f)
{
	(void)host;
	(void)f;
	if (!(*(int *)lock)--)
		abort();
}

static void *f_alloc(void *host, size_t size)
{
	struct fhost *h = host;
	void *p;

	if (fail_now(h))
		return NULL;
	p = calloc(1, size ? size : 1);
	if (p)
		h->allocs++;
	return p;
}

static void f_free(void *host, void *p, size_t size)
{
	struct fhost *h = host;

	(void)size;
	free(p);
	h->allocs--;
}

static uint64_t f_clock(void *host) { (void)host; return 1; }
static uint32_t f_cur(void *host) { (void)host; return 0; }
static uint32_t f_count(void *host) { (void)host; return 4; }

static int f_apic(void *host, uint32_t cpu, uint32_t *id)
{
	(void)host;
	if (cpu >= 4)
		return -UMSI_EINVAL;
	*id = cpu;
	return 0;
}

static bool f_online(void *host, uint32_t cpu) { (void)host; (void)cpu; return true; }

static uint32_t f_plat(void *host)
{
	return ((struct fhost *)host)->plat;
}

static bool f_pending(void *host, uint32_t id)
{
	(void)host; (void)id;
	return false;
}

static void f_eoi(void *host, uint32_t id)
{
	(void)host; (void)id;
}

static void f_ipi(void *host, uint32_t hwid, uint32_t id)
{
	(void)host; (void)hwid; (void)id;
}

static int f_run(void *host, uint32_t cpu, void (*fn)(void *), void *arg)
{
	(void)host;
	(void)cpu;
	fn(arg);
	return 0;
}


static int f_route(void *host, umsi_bdf_t bdf, uint8_t pin,
		   struct umsi_intx_route *r)
{
	struct fhost *h = host;

	(void)bdf;
	if (fail_now(h))
		return -UMSI_EIO;
	if (!h->routed || pin < 1 || pin > 4)
		return -UMSI_ENOENT;
	r->gsi = h->gsi;
	r->trigger = UMSI_INTX_LEVEL;
	r->polarity = UMSI_INTX_ACTIVE_LOW;
	return 0;
}

static int f_gsi(void *host, uint32_t gsi, const struct umsi_gsi_entry *e)
{
	struct fhost *h = host;

	(void)gsi;
	(void)e;
	return fail_now(h) ? -UMSI_EIO : 0;
}

static int f_remap(void *host, uint32_t irq, uint32_t apic, uint8_t vector,
		   struct umsi_msg *msg)
{
	struct fhost *h = host;

	(void)apic;
	(void)vector;
	if (fail_now(h))
		return -UMSI_EIO;
	msg->address = UMSI_X86_MSI_BASE | UMSI_X86_ADDR_REMAP |
		       ((irq & 0x7fff) << 5);
	msg->data = 0;
	return 0;
}

static void f_remap_free(void *host, uint32_t irq) { (void)host; (void)irq; }

static const struct umsi_host_ops ops = {
	.cfg_read = f_cfg_read, .cfg_write = f_cfg_write,
	.mmio_map = f_map, .mmio_unmap = f_unmap,
	.mmio_read32 = f_rd, .mmio_write32 = f_wr,
	.lock_create = f_lock_create, .lock_destroy = f_lock_destroy,
	.lock_acquire = f_acquire, .lock_release = f_release,
	.alloc = f_alloc, .free = f_free, .clock_ns = f_clock,
	.current_cpu = f_cur, .cpu_count = f_count, .cpu_hwid = f_apic,
	.cpu_is_online = f_online, .platform_flags = f_plat,
	.run_on_cpu = f_run, .eoi = f_eoi, .irq_pending = f_pending,
	.send_ipi = f_ipi,
	.intx_route = f_route,
	.gsi_program = f_gsi, .remap_compose = f_remap,
	.remap_free = f_remap_free,
};

static int handler(uint32_t irq, void *dev_id)
{
	(void)irq;
	(void)dev_id;
	return UMSI_IRQ_HANDLED;
}

static void exercise(struct umsi_system *sys, struct umsi_pci_dev *dev,
		     const uint8_t *hdr)
{
	struct umsi_pci_info info;
	uint64_t w = 2, w2 = 4;
	struct umsi_cpumask m = { &w, 4 }, m2 = { &w2, 4 };
	uint32_t irqs[4];
	uint16_t idx[3];
	int n, irq, i;

	umsi_pci_get_info(dev, &info);
	if (hdr[308] & 0x80) {
		/* Sparse MSI-X: three table indices from the input. */
		for (i = 0; i < 3; i++)
			idx[i] = (uint16_t)(hdr[306 + i] * 8 + i);
		n = umsi_pci_alloc_msix_entries(dev, idx, 3, irqs) ? -1 : 3;
	} else {
		n = umsi_pci_alloc_irq_vectors(dev, hdr[306] ? hdr[306] : 1,
					       hdr[307], hdr[308]);
	}
	if (n <= 0)
		return;
	for (i = 0; i < n && i < 40; i++) {
		irq = umsi_pci_irq_vector(dev, (uint32_t)i);
		if (irq < 0)
			abort();
		if (!umsi_request_irq(sys, (uint32_t)irq, handler,
				      UMSI_IRQF_SHARED, "fuzz", dev)) {
			umsi_irq_mask(sys, (uint32_t)irq);
			(void)umsi_pci_irq_pending(dev, (uint32_t)i);
			umsi_irq_unmask(sys, (uint32_t)irq);
			(void)umsi_irq_set_affinity(sys, (uint32_t)irq, &m);
			(void)umsi_irq_set_affinity(sys, (uint32_t)irq, &m2);
			umsi_free_irq(sys, (uint32_t)irq, dev);
		}
	}
	if (umsi_pci_mode(dev) == UMSI_MODE_MSIX) {
		irq = umsi_pci_msix_alloc_entry(dev, -1);
		if (irq > 0)
			(void)umsi_pci_msix_free_entry(dev, (uint32_t)irq);
		if (!umsi_msix_alloc_vectors(dev, irqs, 2))
			(void)umsi_msix_free_vectors(dev, irqs, 2);
	}
	(void)umsi_pci_save_state(dev);
	(void)umsi_pci_restore_state(dev);
	umsi_pci_free_irq_vectors(dev);
	if (hdr[304] & 16) {
		(void)umsi_msi_get_pci_irq_vector(dev);
		umsi_msi_remove_pci_irq_vectors(dev);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t in[HDR + 201];
	struct fhost h;
	struct umsi_config cfg = { 0 };
	struct umsi_system *sys;
	struct umsi_pci_dev *dev;
	unsigned i;

	memset(in, 0, sizeof(in));
	memcpy(in, data, size < sizeof(in) - 1 ? size : sizeof(in) - 1);
	memset(&h, 0, sizeof(h));
	memcpy(h.cfg, in, 256);
	for (i = 0; i < 6; i++) {
		memcpy(&h.bar_size[i], in + 256 + 8 * i, 8);
		/* A BAR's size is a power of two of at least 16. */
		if (h.bar_size[i] & (h.bar_size[i] - 1))
			h.bar_size[i] &= ~(h.bar_size[i] - 1);
		if (h.bar_size[i] && h.bar_size[i] < 16)
			h.bar_size[i] = 16;
	}
	h.plat = (in[304] & 2 ? UMSI_PLAT_IRQ_REMAP : 0) |
		 (in[304] & 4 ? UMSI_PLAT_NO_MSI : 0);
	h.routed = in[304] & 8;
	h.gsi = in[309];
	cfg.max_irqs = 512;
	if (umsi_system_create(&ops, &h, &cfg, &sys))
		abort();
	(void)umsi_policy_parse(sys, (const char *)in + HDR);
	if (in[310]) {
		struct umsi_quirk q = {
			.vendor = (uint16_t)(in[0] | in[1] << 8),
			.device = in[310] & 0x80 ? 0xffff :
				  (uint16_t)(in[2] | in[3] << 8),
			.flags = in[310] & 0x1f, .name = "fuzz",
		};

		if (umsi_quirk_add(sys, &q))
			abort();
	}
	h.fail_at = in[305];
	if (!umsi_pci_add(sys, BDF, NULL, in[304] & 1 ? UMSI_PCI_ADD_FRESH : 0,
			  &dev)) {
		exercise(sys, dev, in);
		umsi_pci_remove(sys, dev);
	}
	h.fail_at = 0;
	umsi_system_destroy(sys);
	if (h.allocs || h.maps || h.locks)
		abort();                /* something was not given back */
	return 0;
}

/* ---- seeds ------------------------------------------------------------ */

static void put16(uint8_t *b, unsigned off, uint16_t v)
{
	b[off] = (uint8_t)v;
	b[off + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *b, unsigned off, uint32_t v)
{
	put16(b, off, (uint16_t)v);
	put16(b, off + 2, (uint16_t)(v >> 16));
}

static void write_seed(const char *dir, const char *name, const uint8_t *b,
		       size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(b, 1, n, f);
	fclose(f);
}

static void seeds(const char *dir)
{
	static uint8_t b[HDR + 64];
	uint64_t sz = 0x4000;

	/* MSI-X (65 entries, table and PBA in a 64-bit BAR0) and MSI. */
	memset(b, 0, sizeof(b));
	put32(b, 0, 0x00101b36);
	put16(b, UMSI_PCI_COMMAND, UMSI_PCI_CMD_MEMORY);
	put16(b, UMSI_PCI_STATUS, UMSI_PCI_STATUS_CAP_LIST);
	put32(b, UMSI_PCI_BAR0, 0xfebf0000u | UMSI_PCI_BAR_MEM_TYPE_64);
	b[UMSI_PCI_CAP_PTR] = 0x40;
	b[UMSI_PCI_INTERRUPT_PIN] = 1;
	b[0x40] = UMSI_PCI_CAP_ID_MSIX;
	b[0x41] = 0x50;
	put16(b, 0x42, 64);
	put32(b, 0x44, 0x2000);
	put32(b, 0x48, 0x3000);
	b[0x50] = UMSI_PCI_CAP_ID_MSI;
	put16(b, 0x52, UMSI_MSI_FLAGS_64BIT | UMSI_MSI_FLAGS_MASKBIT | (5 << 1));
	memcpy(b + 256, &sz, 8);
	b[304] = 8 | 16;
	b[306] = 1;
	b[307] = 8;
	b[308] = UMSI_PCI_IRQ_ALL_TYPES;
	b[309] = 16;
	write_seed(dir, "msix-msi", b, HDR);
	b[308] = UMSI_PCI_IRQ_MSI | UMSI_PCI_IRQ_INTX;
	b[307] = 5;
	write_seed(dir, "msi-block", b, HDR);
	b[304] = 1 | 2 | 8;
	b[308] = UMSI_PCI_IRQ_ALL_TYPES | UMSI_PCI_IRQ_AFFINITY;
	write_seed(dir, "remap-fresh", b, HDR);
	b[305] = 20;
	write_seed(dir, "fail20", b, HDR);
	b[305] = 0;
	memcpy(b + HDR, "device_nomsi=0x00101b36 pci_msi=specific", 41);
	write_seed(dir, "cmdline", b, HDR + 41);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_PCI_SEEDS");

	(void)argc;
	(void)argv;
	if (dir) {
		seeds(dir);
		exit(0);
	}
	return 0;
}
