/* SPDX-License-Identifier: MIT */
/*
 * simdump - simulated machines, brought up through the unmodified library,
 * written out the way lspci and Linux would show them: the test data for
 * shapes no real dump has (2048-entry MSI-X tables, 64-bit BARs above
 * 4 GiB, sparse MSI-X entries, remapped messages, extended destination
 * IDs, 32-message MSI blocks with sparse masks).
 *
 *   simdump OUTDIR [--machine NAME] [--fault FAULT]
 *
 * For each machine NAME it writes
 *   OUTDIR/dumps/NAME         `lspci -xxxx` text of every function (the
 *                             files in tests/data/sim-dumps)
 *   OUTDIR/sysroot/NAME/      the sysfs and procfs files `umsi inspect
 *                             --sysroot` reads: config, resource,
 *                             resourceN (or a sparse dev/mem), msi_irqs,
 *                             /proc/interrupts, effective affinity,
 *                             /proc/cpuinfo
 *   OUTDIR/expect/NAME        the simulator's truth, one fact per line:
 *                             every MSI-X entry and its pending bit, every
 *                             IRQ with CPU, APIC ID, vector and per-CPU
 *                             counts, remapping entries, BAR addresses,
 *                             and the findings `umsi inspect --check`
 *                             must report, computed from that truth
 *
 * FAULT (machine "large" only) plants one fault after bring-up, through
 * the library or the simulated hardware: unowned (an unused entry left
 * unmasked), affinity (Linux's affinity file names another CPU), pending
 * (the library masks an IRQ and the device fires it), same (one entry
 * programmed with another function's message), fmask (Function Mask
 * set), bme (Bus Master Enable cleared), mme (Multiple Message Enable
 * raised above Multiple Message Capable).
 *
 * Everything is deterministic: the same library gives the same files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <umsi/umsi.h>
#include <umsi/matrix.h>
#include <sim/umsi_sim.h>

#define SD_MAX_FNS   8
#define SD_MAX_CPUS  64

struct sd_fn {
	umsi_bdf_t bdf;
	const char *what;               /* the dump's header text */
	struct umsi_sim_dev_desc desc;
	struct umsi_pci_dev *dev;
	int nvec;                       /* IRQs the driver got */
	uint32_t irqs[2048];            /* the n-th IRQ */
	uint32_t hwirq[2048];           /* its entry (MSI-X) or message */
	bool devmem;                    /* BARs through dev/mem, not resourceN */
};

struct sd_machine {
	const char *name;
	struct umsi_sim *sim;
	struct umsi_system *sys;
	uint32_t ncpus;
	uint32_t apic[SD_MAX_CPUS];
	uint32_t plat;
	struct sd_fn fn[SD_MAX_FNS];
	size_t nfn;
	/* effective_affinity_list override (the "affinity" fault). */
	uint32_t aff_irq;
	long aff_cpu;
	FILE *expect;
};

static const char *out_dir;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("simdump: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* mkdir -p for the directory part of @path. */
static void sd_mkdirs(const char *path)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			die("mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
}

static FILE *sd_open(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static FILE *sd_open(const char *fmt, ...)
{
	char path[1024];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	sd_mkdirs(path);
	f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	return f;
}

static void sd_bdf(umsi_bdf_t b, char s[16])
{
	snprintf(s, 16, "%04x:%02x:%02x.%x", UMSI_BDF_SEG(b), UMSI_BDF_BUS(b),
		 UMSI_BDF_DEV(b), UMSI_BDF_FN(b));
}

static int sd_handler(uint32_t irq, void *dev_id)
{
	(void)irq;
	(void)dev_id;
	return UMSI_IRQ_HANDLED;
}

static int sd_dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

/* The offset of capability @id in @bdf's configuration space, or 0. */
static uint16_t sd_cap(struct sd_machine *m, umsi_bdf_t bdf, uint8_t id)
{
	uint8_t *c = umsi_sim_cfg_raw(m->sim, bdf);

	for (uint16_t p = c[UMSI_PCI_CAP_PTR] & 0xfc, n = 0; p && n < 48;
	     p = c[p + 1] & 0xfc, n++)
		if (c[p] == id)
			return p;
	return 0;
}

static void sd_cfg_or(struct sd_machine *m, umsi_bdf_t bdf, uint16_t off,
		      uint16_t set, uint16_t clear)
{
	uint32_t v = umsi_sim_cfg_read(m->sim, bdf, off, 2);

	umsi_sim_cfg_write(m->sim, bdf, off, 2, (v & ~(uint32_t)clear) | set);
}

static uint64_t sd_addr(uint32_t apic)
{
	return 0xfee00000u | (apic & 0xff) << 12 | ((apic >> 8) & 0x7f) << 5;
}

/* ---- machines ------------------------------------------------------------ */

static struct sd_fn *sd_add(struct sd_machine *m, umsi_bdf_t bdf,
			    const char *what, uint16_t device)
{
	struct sd_fn *f = &m->fn[m->nfn++];

	memset(f, 0, sizeof(*f));
	f->bdf = bdf;
	f->what = what;
	f->desc.vendor = 0x1b36;        /* Red Hat's QEMU range: a model */
	f->desc.device = device;
	f->desc.class_code = 0x010802;
	f->desc.pcie.present = true;
	f->desc.pcie.type = UMSI_PCIE_TYPE_ENDPOINT;
	return f;
}

static void sd_msix(struct sd_fn *f, uint16_t n, uint8_t tbar, uint32_t toff,
		    uint8_t pbar, uint32_t poff)
{
	f->desc.msix = (struct umsi_sim_msix_desc){
		.present = true, .nentries = n, .table_bar = tbar,
		.table_offset = toff, .pba_bar = pbar, .pba_offset = poff,
	};
}

static void sd_msi(struct sd_fn *f, uint8_t nvec, bool is64, bool maskbit)
{
	f->desc.msi = (struct umsi_sim_msi_desc){
		.present = true, .nvec = nvec, .is64 = is64, .maskbit = maskbit,
	};
}

static void sd_create(struct sd_machine *m)
{
	struct umsi_sim_config sc = {
		.ncpus = m->ncpus, .apic_ids = m->apic, .plat_flags = m->plat,
	};
	struct umsi_config uc = { .max_irqs = 8192 };
	int ret;

	m->sim = umsi_sim_create(&sc);
	if (!m->sim)
		die("%s: the simulator refused the machine", m->name);
	ret = umsi_system_create(umsi_sim_host_ops(), m->sim, &uc, &m->sys);
	if (ret)
		die("%s: umsi_system_create: %s", m->name, umsi_strerror(ret));
	umsi_sim_set_dispatch(m->sim, sd_dispatch, m->sys);
	for (size_t i = 0; i < m->nfn; i++) {
		struct sd_fn *f = &m->fn[i];
		char b[16];

		sd_bdf(f->bdf, b);
		ret = umsi_sim_add_device(m->sim, f->bdf, &f->desc);
		if (!ret)
			ret = umsi_pci_add(m->sys, f->bdf, NULL,
					   UMSI_PCI_ADD_FRESH, &f->dev);
		if (ret)
			die("%s %s: %s", m->name, b, umsi_strerror(ret));
	}
}

/* A driver: @want IRQs of @types, or the entries in @idx; @nreq handlers. */
static void sd_driver(struct sd_machine *m, struct sd_fn *f, uint32_t types,
		      uint32_t want, const uint16_t *idx, uint32_t nidx,
		      uint32_t nreq)
{
	char b[16];
	int ret;

	sd_bdf(f->bdf, b);
	if (idx) {
		ret = umsi_pci_alloc_msix_entries(f->dev, idx, nidx, f->irqs);
		f->nvec = ret ? ret : (int)nidx;
	} else {
		f->nvec = umsi_pci_alloc_irq_vectors(f->dev, want, want, types);
	}
	if (f->nvec < 0)
		die("%s %s: allocating %u vectors: %s", m->name, b,
		    idx ? nidx : want, umsi_strerror(f->nvec));
	for (int n = 0; n < f->nvec; n++) {
		struct umsi_irq_info info;

		f->irqs[n] = (uint32_t)umsi_pci_irq_vector(f->dev, (uint32_t)n);
		if (umsi_irq_get_info(m->sys, f->irqs[n], &info))
			die("%s %s: IRQ %u has no descriptor", m->name, b,
			    f->irqs[n]);
		f->hwirq[n] = info.hwirq;
		if ((uint32_t)n < nreq &&
		    (ret = umsi_pci_request_irq(f->dev, (uint32_t)n, sd_handler,
						0, "simdump", f)))
			die("%s %s: request %d: %s", m->name, b, n,
			    umsi_strerror(ret));
	}
}

/* Every requested vector fires 1 to 3 times; the library handles each. */
static void sd_fire(struct sd_machine *m)
{
	for (size_t i = 0; i < m->nfn; i++) {
		struct sd_fn *f = &m->fn[i];

		for (int n = 0; n < f->nvec; n++) {
			struct umsi_irq_info info;

			if (umsi_irq_get_info(m->sys, f->irqs[n], &info) ||
			    info.masked || !info.owner)
				continue;
			for (uint32_t k = 0; k <= f->hwirq[n] % 3; k++)
				umsi_sim_fire(m->sim, f->bdf, f->hwirq[n]);
		}
	}
	umsi_sim_quiesce(m->sim);
}

static void sd_gapped(struct sd_machine *m, uint32_t n, uint32_t base,
		      uint32_t step)
{
	m->ncpus = n;
	for (uint32_t i = 0; i < n; i++)
		m->apic[i] = base + i * step;
}

/*
 * "large": 16 CPUs with gapped APIC IDs; an NVMe-like function with a
 * 2048-entry table in a 64-bit BAR above 4 GiB, all 2048 vectors spread
 * as managed IRQs; one with sparse entries (0, 5, 17, 63 of 64) whose
 * table and PBA sit in two different 64-bit BARs, read through dev/mem; a
 * 32-message MSI block of which 20 are requested (12 masked); a 32-bit
 * single-message MSI function.
 */
static void sd_large(struct sd_machine *m)
{
	static const uint16_t sparse[] = { 0, 5, 17, 63 };
	struct sd_fn *f;

	sd_gapped(m, 16, 0, 2);
	f = sd_add(m, UMSI_BDF(0, 3, 0, 0), "2048-entry MSI-X table, 64-bit BAR 0 above 4 GiB", 0x0010);
	f->desc.bars[0] = (struct umsi_sim_bar_desc){ .size = 0x10000, .is64 = true };
	sd_msix(f, 2048, 0, 0, 0, 0x8000);
	f = sd_add(m, UMSI_BDF(0, 4, 0, 0), "sparse MSI-X entries, table in 64-bit BAR 2, PBA in 64-bit BAR 4", 0x0011);
	f->desc.bars[2] = (struct umsi_sim_bar_desc){ .size = 0x4000, .is64 = true, .prefetch = true };
	f->desc.bars[4] = (struct umsi_sim_bar_desc){ .size = 0x1000, .is64 = true };
	sd_msix(f, 64, 2, 0x1000, 4, 0x800);
	f->devmem = true;
	f = sd_add(m, UMSI_BDF(0, 5, 0, 0), "32-message MSI block, 64-bit, per-vector masks", 0x0012);
	sd_msi(f, 32, true, true);
	f = sd_add(m, UMSI_BDF(0, 6, 0, 0), "single-message 32-bit MSI", 0x0013);
	f->desc.class_code = 0x020000;
	sd_msi(f, 1, false, false);
	sd_create(m);
	sd_driver(m, &m->fn[0], UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_AFFINITY, 2048, NULL, 0, 2048);
	sd_driver(m, &m->fn[1], UMSI_PCI_IRQ_MSIX, 0, sparse, 4, 4);
	sd_driver(m, &m->fn[2], UMSI_PCI_IRQ_MSI, 20, NULL, 0, 20);
	sd_driver(m, &m->fn[3], UMSI_PCI_IRQ_MSI, 1, NULL, 0, 1);
}

/*
 * "remap": 8 CPUs with x2APIC IDs above 255 behind interrupt remapping:
 * every message in the remappable format (an IRTE handle).
 */
static void sd_remap(struct sd_machine *m)
{
	struct sd_fn *f;

	sd_gapped(m, 8, 0x100, 0x11);
	m->plat = UMSI_PLAT_X2APIC | UMSI_PLAT_IRQ_REMAP;
	f = sd_add(m, UMSI_BDF(0, 2, 0, 0), "MSI-X behind interrupt remapping", 0x0020);
	f->desc.bars[0] = (struct umsi_sim_bar_desc){ .size = 0x4000 };
	sd_msix(f, 16, 0, 0, 0, 0x2000);
	f = sd_add(m, UMSI_BDF(0, 3, 0, 0), "MSI behind interrupt remapping", 0x0021);
	sd_msi(f, 4, true, true);
	sd_create(m);
	sd_driver(m, &m->fn[0], UMSI_PCI_IRQ_MSIX, 16, NULL, 0, 16);
	sd_driver(m, &m->fn[1], UMSI_PCI_IRQ_MSI, 1, NULL, 0, 1);
}

/*
 * "extdest": 32 CPUs, half with APIC IDs above 255, reached without
 * remapping through the extended destination ID (address bits 11:5).
 */
static void sd_extdest(struct sd_machine *m)
{
	struct sd_fn *f;

	m->ncpus = 32;
	for (uint32_t i = 0; i < 32; i++)
		m->apic[i] = i < 16 ? i : 0x200 + 3 * i;
	m->plat = UMSI_PLAT_X2APIC | UMSI_PLAT_EXT_DEST_ID;
	f = sd_add(m, UMSI_BDF(1, 0x3a, 0, 0), "MSI-X to APIC IDs above 255 (extended destination ID), domain 1", 0x0030);
	f->desc.bars[0] = (struct umsi_sim_bar_desc){ .size = 0x2000, .is64 = true };
	sd_msix(f, 64, 0, 0, 0, 0x1000);
	f = sd_add(m, UMSI_BDF(1, 0x3b, 0, 0), "8-message MSI to an APIC ID above 255", 0x0031);
	sd_msi(f, 8, true, true);
	sd_create(m);
	sd_driver(m, &m->fn[0], UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_AFFINITY, 64, NULL, 0, 64);
	/* The MSI block on a CPU above 255: the last CPUs are emptiest. */
	sd_driver(m, &m->fn[1], UMSI_PCI_IRQ_MSI, 8, NULL, 0, 8);
}

/*
 * "faults": what configuration space can show wrong, for --check on a
 * dump: Bus Master off with MSI on, MSI-X with its Function Mask left
 * set, Multiple Message Enable above Capable, an MSI vector pending
 * behind its mask, two functions sending one MSI message.
 */
static void sd_faults(struct sd_machine *m)
{
	struct sd_fn *f;
	uint16_t x;

	sd_gapped(m, 4, 0, 1);
	for (int i = 0; i < 6; i++) {
		f = sd_add(m, UMSI_BDF(0, 0, 0x10 + i, 0), "", (uint16_t)(0x40 + i));
		if (i == 1) {
			f->desc.bars[0] = (struct umsi_sim_bar_desc){ .size = 0x1000 };
			sd_msix(f, 8, 0, 0, 0, 0x800);
		} else {
			sd_msi(f, i == 2 ? 2 : 4, true, true);
		}
	}
	m->fn[0].what = "MSI enabled, Bus Master Enable cleared";
	m->fn[1].what = "MSI-X enabled, Function Mask left set";
	m->fn[2].what = "MSI Multiple Message Enable 4 above Capable 2";
	m->fn[3].what = "MSI message 1 pending behind its mask";
	m->fn[4].what = "MSI programmed with 00:15.0's message";
	m->fn[5].what = "MSI whose message 00:14.0 copies";
	sd_create(m);
	for (size_t i = 0; i < m->nfn; i++)
		sd_driver(m, &m->fn[i], i == 1 ? UMSI_PCI_IRQ_MSIX : UMSI_PCI_IRQ_MSI,
			  i == 1 ? 8 : 2, NULL, 0, i == 1 ? 8 : 2);
	sd_fire(m);
	sd_cfg_or(m, m->fn[0].bdf, UMSI_PCI_COMMAND, 0, UMSI_PCI_CMD_MASTER);
	x = sd_cap(m, m->fn[1].bdf, UMSI_PCI_CAP_ID_MSIX);
	sd_cfg_or(m, m->fn[1].bdf, x + UMSI_MSIX_FLAGS, UMSI_MSIX_FLAGS_MASKALL, 0);
	x = sd_cap(m, m->fn[2].bdf, UMSI_PCI_CAP_ID_MSI);
	sd_cfg_or(m, m->fn[2].bdf, x + UMSI_MSI_FLAGS, 2 << UMSI_MSI_FLAGS_QSIZE_SHIFT,
		  UMSI_MSI_FLAGS_QSIZE);
	umsi_irq_mask(m->sys, m->fn[3].irqs[1]);
	umsi_sim_fire(m->sim, m->fn[3].bdf, 1);
	/* 00:14.0 takes 00:15.0's address and data (64-bit layout). */
	x = sd_cap(m, m->fn[4].bdf, UMSI_PCI_CAP_ID_MSI);
	{
		uint16_t y = sd_cap(m, m->fn[5].bdf, UMSI_PCI_CAP_ID_MSI);

		for (uint16_t o = 4; o <= 12; o += 4)
			umsi_sim_cfg_write(m->sim, m->fn[4].bdf, x + o, 4,
					   umsi_sim_cfg_read(m->sim, m->fn[5].bdf,
							     y + o, 4));
	}
}

/* ---- the fault plants ---------------------------------------------------- */

static void sd_plant(struct sd_machine *m, const char *fault)
{
	struct sd_fn *big = &m->fn[0], *sparse = &m->fn[1], *msi = &m->fn[2];
	struct sd_fn *one = &m->fn[3];
	uint64_t a;
	uint32_t d, c;

	if (!strcmp(fault, "unowned")) {
		/* Entry 3 of the sparse function has no IRQ. */
		umsi_sim_msix_entry_set(m->sim, sparse->bdf, 3, sd_addr(m->apic[1]),
					0xef, 0);
	} else if (!strcmp(fault, "affinity")) {
		struct umsi_irq_info info;

		umsi_irq_get_info(m->sys, big->irqs[7], &info);
		m->aff_irq = big->irqs[7];
		m->aff_cpu = (long)((info.cpu + 1) % m->ncpus);
	} else if (!strcmp(fault, "pending")) {
		umsi_irq_mask(m->sys, big->irqs[9]);
		umsi_sim_fire(m->sim, big->bdf, big->hwirq[9]);
	} else if (!strcmp(fault, "same")) {
		/* Entry 5 of the sparse function sends what entry 0 of the
		 * big one sends. */
		umsi_sim_msix_entry_get(m->sim, big->bdf, 0, &a, &d, &c);
		umsi_sim_msix_entry_set(m->sim, sparse->bdf, 5, a, d, 0);
	} else if (!strcmp(fault, "fmask")) {
		sd_cfg_or(m, big->bdf, sd_cap(m, big->bdf, UMSI_PCI_CAP_ID_MSIX) +
			  UMSI_MSIX_FLAGS, UMSI_MSIX_FLAGS_MASKALL, 0);
	} else if (!strcmp(fault, "bme")) {
		sd_cfg_or(m, msi->bdf, UMSI_PCI_COMMAND, 0, UMSI_PCI_CMD_MASTER);
	} else if (!strcmp(fault, "mme")) {
		/* One message capable, two enabled. */
		sd_cfg_or(m, one->bdf, sd_cap(m, one->bdf, UMSI_PCI_CAP_ID_MSI) +
			  UMSI_MSI_FLAGS, 1 << UMSI_MSI_FLAGS_QSIZE_SHIFT, 0);
	} else {
		die("unknown fault '%s' (unowned, affinity, pending, same, fmask, bme, mme)",
		    fault);
	}
}

/* ---- what lspci and Linux would show ------------------------------------ */

/* Configuration space as the host reads it. */
static void sd_cfg(struct sd_machine *m, const struct sd_fn *f, uint8_t *c)
{
	for (uint16_t o = 0; o < 4096; o += 4) {
		uint32_t v = umsi_sim_cfg_read(m->sim, f->bdf, o, 4);

		for (int k = 0; k < 4; k++)
			c[o + k] = (uint8_t)(v >> (8 * k));
	}
}

/* lspci -xxxx: a header line, 256 rows of 16 bytes, an empty line. */
static void sd_dump(struct sd_machine *m)
{
	FILE *f = sd_open("%s/dumps/sim-%s", out_dir, m->name);
	uint8_t c[4096];
	char b[16];

	for (size_t i = 0; i < m->nfn; i++) {
		sd_bdf(m->fn[i].bdf, b);
		sd_cfg(m, &m->fn[i], c);
		fprintf(f, "%s Simulated device [%04x:%04x]: %s\n", b,
			m->fn[i].desc.vendor, m->fn[i].desc.device,
			m->fn[i].what);
		for (int r = 0; r < 256; r++) {
			fprintf(f, "%02x:", r * 16);
			for (int k = 0; k < 16; k++)
				fprintf(f, " %02x", c[r * 16 + k]);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
	fclose(f);
}

/* BAR @bar's bytes, as the device answers reads of its memory. */
static void sd_bar_bytes(struct sd_machine *m, const struct sd_fn *f, int bar,
			 uint8_t *buf, uint64_t size)
{
	uint64_t base = umsi_sim_bar_addr(m->sim, f->bdf, (unsigned)bar);

	for (uint64_t o = 0; o < size; o += 4) {
		uint32_t v = umsi_sim_mmio_read32(m->sim, base + o);

		memcpy(buf + o, &v, 4);
	}
}

static void sd_write(const char *path, const void *p, size_t n)
{
	FILE *f = sd_open("%s", path);

	if (fwrite(p, 1, n, f) != n)
		die("%s: short write", path);
	fclose(f);
}

static void sd_sysfs_fn(struct sd_machine *m, const char *root,
			const struct sd_fn *f)
{
	char dir[600], p[700], b[16];
	uint8_t c[4096];
	FILE *res;

	sd_bdf(f->bdf, b);
	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices/%s", root, b);
	sd_cfg(m, f, c);
	snprintf(p, sizeof(p), "%s/config", dir);
	sd_write(p, c, sizeof(c));
	res = sd_open("%s/resource", dir);
	for (int i = 0; i < 13; i++) {
		uint64_t size = i < 6 ? f->desc.bars[i].size : 0;
		uint64_t a = size ? umsi_sim_bar_addr(m->sim, f->bdf, (unsigned)i) : 0;

		fprintf(res, "0x%016llx 0x%016llx 0x%016llx\n",
			(unsigned long long)a,
			(unsigned long long)(size ? a + size - 1 : 0),
			size ? (f->desc.bars[i].is64 ? 0x140204ull : 0x40200ull) : 0ull);
	}
	fclose(res);
	for (int i = 0; i < 6; i++) {
		uint64_t size = f->desc.bars[i].size;
		uint8_t *buf;

		if (!size || f->desc.bars[i].io)
			continue;
		buf = malloc(size);
		if (!buf)
			die("out of memory");
		sd_bar_bytes(m, f, i, buf, size);
		if (f->devmem) {
			/* A sparse /dev/mem holding the BAR at its address. */
			int fd;

			snprintf(p, sizeof(p), "%s/dev/mem", root);
			sd_mkdirs(p);
			fd = open(p, O_WRONLY | O_CREAT, 0644);
			if (fd < 0 || pwrite(fd, buf, size,
					     (off_t)umsi_sim_bar_addr(m->sim, f->bdf,
								      (unsigned)i)) !=
			    (ssize_t)size)
				die("%s: %s", p, strerror(errno));
			close(fd);
		} else {
			snprintf(p, sizeof(p), "%s/resource%d", dir, i);
			sd_write(p, buf, size);
		}
		free(buf);
	}
	for (int n = 0; n < f->nvec; n++) {
		FILE *k = sd_open("%s/msi_irqs/%u", dir, f->irqs[n]);

		fputs(f->desc.msix.present && umsi_pci_mode(f->dev) == UMSI_MODE_MSIX ?
		      "msix\n" : "msi\n", k);
		fclose(k);
	}
}

/* The CPU Linux would list as IRQ @irq's effective affinity. */
static uint32_t sd_affinity(const struct sd_machine *m,
			    const struct umsi_irq_info *info)
{
	return info->irq == m->aff_irq && m->aff_cpu >= 0 ?
	       (uint32_t)m->aff_cpu : info->cpu;
}

static void sd_sysroot(struct sd_machine *m)
{
	char root[512];
	FILE *pi, *ci;

	snprintf(root, sizeof(root), "%s/sysroot/sim-%s", out_dir, m->name);
	for (size_t i = 0; i < m->nfn; i++)
		sd_sysfs_fn(m, root, &m->fn[i]);
	ci = sd_open("%s/proc/cpuinfo", root);
	for (uint32_t c = 0; c < m->ncpus; c++)
		fprintf(ci, "processor\t: %u\nvendor_id\t: GenuineIntel\n"
			"apicid\t\t: %u\ninitial apicid\t: %u\n\n", c, m->apic[c],
			m->apic[c]);
	fclose(ci);
	pi = sd_open("%s/proc/interrupts", root);
	fputs("     ", pi);
	for (uint32_t c = 0; c < m->ncpus; c++)
		fprintf(pi, "      CPU%-4u", c);
	fputc('\n', pi);
	/* IRQs in number order, as /proc/interrupts lists them. */
	for (int irq = umsi_irq_next(m->sys, 0); irq >= 0;
	     irq = umsi_irq_next(m->sys, (uint32_t)irq + 1)) {
		struct umsi_irq_info info;
		const struct sd_fn *f = NULL;
		char b[16];
		FILE *a;

		for (size_t i = 0; i < m->nfn && !f; i++)
			for (int n = 0; n < m->fn[i].nvec && !f; n++)
				if (m->fn[i].irqs[n] == (uint32_t)irq)
					f = &m->fn[i];
		if (!f || umsi_irq_get_info(m->sys, (uint32_t)irq, &info))
			continue;
		sd_bdf(f->bdf, b);
		fprintf(pi, "%4d:", irq);
		for (uint32_t c = 0; c < m->ncpus; c++)
			fprintf(pi, " %10llu", (unsigned long long)
				umsi_irq_count(m->sys, (uint32_t)irq, c));
		fprintf(pi, "  %sPCI-%s-%s %u-edge      simdump\n",
			m->plat & UMSI_PLAT_IRQ_REMAP ? "IR-" : "",
			umsi_pci_mode(f->dev) == UMSI_MODE_MSIX ? "MSIX" : "MSI",
			b, info.hwirq);
		a = sd_open("%s/proc/irq/%d/effective_affinity_list", root, irq);
		fprintf(a, "%u\n", sd_affinity(m, &info));
		fclose(a);
	}
	fputs(" NMI:", pi);
	for (uint32_t c = 0; c < m->ncpus; c++)
		fprintf(pi, " %10u", 0u);
	fputs("   Non-maskable interrupts\n", pi);
	fclose(pi);
}

/* ---- the truth, and the findings it implies ------------------------------ */

/* One message a function sends, decoded from the raw registers. */
struct sd_msg {
	bool x86, remapped, logical, has_vector;
	uint32_t dest;
	uint8_t vector;
};

static struct sd_msg sd_decode(uint64_t addr, uint32_t data)
{
	struct sd_msg g = { 0 };
	uint8_t dm = (data >> 8) & 7;

	g.x86 = (addr & 0xfff00000u) == 0xfee00000u && !(addr >> 32);
	g.remapped = g.x86 && (addr & 0x10);
	g.logical = addr & 4;
	g.dest = (uint32_t)((addr >> 12) & 0xff) | (uint32_t)((addr >> 5) & 0x7f) << 8;
	g.vector = data & 0xff;
	g.has_vector = g.x86 && !g.remapped && (dm == 0 || dm == 1) &&
		       g.vector >= 16;
	return g;
}

static long sd_cpu_of(const struct sd_machine *m, uint32_t apic)
{
	for (uint32_t c = 0; c < m->ncpus; c++)
		if (m->apic[c] == apic)
			return c;
	return -1;
}

struct sd_send {
	const struct sd_fn *f;
	bool msix;
	uint32_t idx;
	struct sd_msg g;
	uint8_t vector;
};

static void sd_finding(struct sd_machine *m, const struct sd_fn *f,
		       const char *where, long idx, const char *check)
{
	char b[16];

	sd_bdf(f->bdf, b);
	if (idx >= 0)
		fprintf(m->expect, "finding %s %s %ld [%s]\n", b, where, idx, check);
	else
		fprintf(m->expect, "finding %s %s [%s]\n", b, where, check);
}

/* A message sent for Linux IRQ @irq: is its destination the affinity? */
static void sd_affinity_finding(struct sd_machine *m, const struct sd_fn *f,
				const char *where, long idx, struct sd_msg g,
				uint32_t irq)
{
	struct umsi_irq_info info;

	if (!g.x86 || g.remapped || g.logical ||
	    umsi_irq_get_info(m->sys, irq, &info))
		return;
	if (sd_cpu_of(m, g.dest) != (long)sd_affinity(m, &info))
		sd_finding(m, f, where, idx, "outside-affinity");
}

static int sd_cmp_send(const void *a, const void *b)
{
	const struct sd_send *x = a, *y = b;

	if (x->g.logical != y->g.logical)
		return x->g.logical ? 1 : -1;
	if (x->g.dest != y->g.dest)
		return x->g.dest < y->g.dest ? -1 : 1;
	return (int)x->vector - (int)y->vector;
}

static void sd_truth(struct sd_machine *m)
{
	struct sd_send *sends = NULL;
	size_t nsend = 0, cap = 0;

	for (uint32_t c = 0; c < m->ncpus; c++)
		fprintf(m->expect, "cpu %u %u\n", c, m->apic[c]);
	for (size_t i = 0; i < m->nfn; i++) {
		const struct sd_fn *f = &m->fn[i];
		uint16_t cmd = (uint16_t)umsi_sim_cfg_read(m->sim, f->bdf, UMSI_PCI_COMMAND, 2);
		uint16_t mo = sd_cap(m, f->bdf, UMSI_PCI_CAP_ID_MSI);
		uint16_t xo = sd_cap(m, f->bdf, UMSI_PCI_CAP_ID_MSIX);
		uint16_t mc = mo ? (uint16_t)umsi_sim_cfg_read(m->sim, f->bdf, mo + 2, 2) : 0;
		uint16_t xc = xo ? (uint16_t)umsi_sim_cfg_read(m->sim, f->bdf, xo + 2, 2) : 0;
		bool msi_on = mc & 1, msix_on = xc & 0x8000, fmask = xc & 0x4000;
		unsigned mmc = (mc >> 1) & 7, mme = (mc >> 4) & 7;
		char b[16];

		sd_bdf(f->bdf, b);
		fprintf(m->expect, "fn %s mode %s nvec %d\n", b,
			msix_on ? "msix" : msi_on ? "msi" : "none", f->nvec);
		for (int k = 0; k < 6; k++)
			if (f->desc.bars[k].size)
				fprintf(m->expect, "bar %s %d 0x%llx 0x%llx\n", b, k,
					(unsigned long long)umsi_sim_bar_addr(m->sim, f->bdf, (unsigned)k),
					(unsigned long long)f->desc.bars[k].size);
		for (int n = 0; n < f->nvec; n++) {
			struct umsi_irq_info info;

			if (umsi_irq_get_info(m->sys, f->irqs[n], &info))
				continue;
			fprintf(m->expect, "irq %u %s %s %u %u %u %u ", f->irqs[n], b,
				msix_on ? "msix" : "msi", info.hwirq,
				sd_affinity(m, &info), info.hwid, info.vector);
			for (uint32_t c = 0; c < m->ncpus; c++)
				fprintf(m->expect, "%s%llu", c ? "," : "",
					(unsigned long long)umsi_irq_count(m->sys, f->irqs[n], c));
			fputc('\n', m->expect);
		}
		/* Faults of configuration space. */
		if ((msi_on || msix_on) && !(cmd & UMSI_PCI_CMD_MASTER))
			sd_finding(m, f, msix_on ? "MSI-X" : "MSI", -1, "bus-master-off");
		if (msix_on && fmask)
			sd_finding(m, f, "MSI-X", -1, "function-masked");
		if (msi_on && mme > mmc)
			sd_finding(m, f, "MSI", -1, "mme-over-capable");
		if (msi_on) {
			bool is64 = mc & 0x80, maskable = mc & 0x100;
			uint64_t a = umsi_sim_cfg_read(m->sim, f->bdf, mo + 4, 4);
			uint32_t d, mask = 0, pend = 0;
			unsigned cnt = 1u << (mme > 5 ? 5 : mme);
			struct sd_msg g;

			if (is64)
				a |= (uint64_t)umsi_sim_cfg_read(m->sim, f->bdf, mo + 8, 4) << 32;
			d = umsi_sim_cfg_read(m->sim, f->bdf, mo + (is64 ? 12 : 8), 2);
			if (maskable) {
				mask = umsi_sim_cfg_read(m->sim, f->bdf, mo + (is64 ? 16 : 12), 4);
				pend = umsi_sim_cfg_read(m->sim, f->bdf, mo + (is64 ? 20 : 16), 4);
			}
			fprintf(m->expect, "msi %s 0x%llx 0x%x 0x%x 0x%x\n", b,
				(unsigned long long)a, d, mask, pend);
			for (unsigned k = 0; k < cnt; k++)
				if ((mask & pend) >> k & 1)
					sd_finding(m, f, "MSI message", k, "pending-masked");
			g = sd_decode(a, d);
			if (g.remapped) {
				uint32_t irq, apic;
				uint8_t vec;
				uint32_t h = (uint32_t)((a >> 5) & 0x7fff) | (uint32_t)((a >> 2) & 1) << 15;

				if (!umsi_sim_irte_get(m->sim, h, &irq, &apic, &vec))
					fprintf(m->expect, "irte %s msi 0 %u %u %u %u\n", b, h, irq, apic, vec);
			}
			for (int n = 0; n < f->nvec; n++)
				sd_affinity_finding(m, f, "MSI message", (long)f->hwirq[n], g, f->irqs[n]);
			for (unsigned k = 0; g.has_vector && k < cnt; k++) {
				struct sd_send s = { f, false, k, g, (uint8_t)((g.vector & ~(cnt - 1)) + k) };

				if (s.vector < 16)
					continue;
				if (nsend == cap) {
					cap = cap ? cap * 2 : 256;
					sends = realloc(sends, cap * sizeof(*sends));
					if (!sends)
						die("out of memory");
				}
				sends[nsend++] = s;
			}
		}
		if (!xo)
			continue;
		for (uint32_t k = 0; k < f->desc.msix.nentries; k++) {
			uint64_t a;
			uint32_t d, ctrl;
			int pend = umsi_sim_msix_pending(m->sim, f->bdf, k);
			long owner = -1;
			struct sd_msg g;

			umsi_sim_msix_entry_get(m->sim, f->bdf, k, &a, &d, &ctrl);
			fprintf(m->expect, "entry %s %u 0x%llx 0x%x 0x%x %d\n", b, k,
				(unsigned long long)a, d, ctrl, pend);
			if (!msix_on)
				continue;
			for (int n = 0; n < f->nvec; n++)
				if (f->hwirq[n] == k)
					owner = n;
			g = sd_decode(a, d);
			if (g.remapped) {
				uint32_t irq, apic;
				uint8_t vec;
				uint32_t h = (uint32_t)((a >> 5) & 0x7fff) | (uint32_t)((a >> 2) & 1) << 15;

				if (!umsi_sim_irte_get(m->sim, h, &irq, &apic, &vec))
					fprintf(m->expect, "irte %s msix %u %u %u %u %u\n", b, k, h, irq, apic, vec);
			}
			if (pend == 1 && ((ctrl & 1) || fmask))
				sd_finding(m, f, "MSI-X entry", k, "pending-masked");
			if (owner >= 0)
				sd_affinity_finding(m, f, "MSI-X entry", k, g, f->irqs[owner]);
			if (ctrl & 1)
				continue;
			if (owner < 0)
				sd_finding(m, f, "MSI-X entry", k, "unowned-entry");
			if (!g.has_vector)
				continue;
			if (nsend == cap) {
				cap = cap ? cap * 2 : 256;
				sends = realloc(sends, cap * sizeof(*sends));
				if (!sends)
					die("out of memory");
			}
			sends[nsend++] = (struct sd_send){ f, true, k, g, g.vector };
		}
	}
	/* Two functions sending one (mode, destination, vector). */
	if (nsend)
		qsort(sends, nsend, sizeof(*sends), sd_cmp_send);
	for (size_t g = 0, e; g < nsend; g = e) {
		bool two = false;

		for (e = g + 1; e < nsend && !sd_cmp_send(&sends[g], &sends[e]); e++)
			two |= sends[e].f != sends[g].f;
		for (size_t i = g; two && i < e; i++)
			sd_finding(m, sends[i].f, sends[i].msix ? "MSI-X entry" : "MSI message",
				   sends[i].idx, "same-message");
	}
	free(sends);
}

/* ---- main ------------------------------------------------------------------ */

static const struct {
	const char *name;
	void (*build)(struct sd_machine *m);
	bool fires;     /* the builder fires what it needs itself */
} sd_machines[] = {
	{ "large", sd_large, false },
	{ "remap", sd_remap, false },
	{ "extdest", sd_extdest, false },
	{ "faults", sd_faults, true },
};

static struct sd_machine sd_m;

int main(int argc, char **argv)
{
	const char *only = NULL, *fault = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--machine") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--fault") && i + 1 < argc)
			fault = argv[++i];
		else if (argv[i][0] != '-' && !out_dir)
			out_dir = argv[i];
		else
			die("usage: simdump OUTDIR [--machine NAME] [--fault FAULT]");
	}
	if (!out_dir)
		die("usage: simdump OUTDIR [--machine NAME] [--fault FAULT]");
	for (size_t k = 0; k < sizeof(sd_machines) / sizeof(sd_machines[0]); k++) {
		struct sd_machine *m = &sd_m;

		if (only && strcmp(only, sd_machines[k].name))
			continue;
		memset(m, 0, sizeof(*m));
		m->name = sd_machines[k].name;
		m->aff_cpu = -1;
		sd_machines[k].build(m);
		if (!sd_machines[k].fires)
			sd_fire(m);
		if (fault) {
			if (strcmp(m->name, "large"))
				die("--fault applies to the machine 'large'");
			sd_plant(m, fault);
		}
		sd_dump(m);
		sd_sysroot(m);
		m->expect = sd_open("%s/expect/sim-%s", out_dir, m->name);
		sd_truth(m);
		fclose(m->expect);
		umsi_system_destroy(m->sys);
		umsi_sim_destroy(m->sim);
	}
	return 0;
}
