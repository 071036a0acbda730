/* SPDX-License-Identifier: MIT */
/*
 * Decoding one function's MSI and MSI-X state.
 *
 * All PCI knowledge is the library's: the capability walk, the MSI and
 * MSI-X register decoding (umsi/pcicap.h) and the x86 message format
 * (umsi/msg.h). What lives here is what only a diagnostic tool needs:
 * turning each failure into a sentence that names the device and the
 * problem, and checking that an MSI-X table is somewhere it can be.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/pci_regs.h>

#include "inspect.h"

void inspect_report_init(struct inspect_report *rep, const char *source)
{
	memset(rep, 0, sizeof(*rep));
	rep->source = source;
}

static void free_irqs(struct inspect_irq *irqs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(irqs[i].counts);
	free(irqs);
}

void inspect_report_free(struct inspect_report *rep)
{
	for (size_t i = 0; i < rep->ndevs; i++) {
		struct inspect_dev *d = &rep->devs[i];

		free(d->entries);
		free_irqs(d->msi_irqs, d->n_msi_irqs);
		free_irqs(d->msix_irqs, d->n_msix_irqs);
	}
	free(rep->devs);
	free(rep->errs);
	free(rep->cpus);
	free(rep->apics);
	free(rep->topo_cpus);
	free(rep->topo_pkg);
	if (rep->vectors)
		free(rep->vectors->cpus);
	free(rep->vectors);
	free(rep->findings);
	memset(rep, 0, sizeof(*rep));
}

void inspect_bdf_str(umsi_bdf_t bdf, char buf[16])
{
	snprintf(buf, 16, "%04x:%02x:%02x.%x", UMSI_BDF_SEG(bdf),
		 UMSI_BDF_BUS(bdf), UMSI_BDF_DEV(bdf), UMSI_BDF_FN(bdf));
}

bool inspect_err_is_for(const struct inspect_err *e,
			const struct inspect_dev *d)
{
	char bdf[16];

	if (!e->bdf[0] || e->line != d->line)
		return false;
	inspect_bdf_str(d->bdf, bdf);
	return !strcmp(e->bdf, bdf);
}

static void add_error(struct inspect_report *rep, const umsi_bdf_t *bdf,
		      unsigned line, const char *fmt, va_list ap)
{
	struct inspect_err *e;

	if (rep->nerrs == rep->cap_errs) {
		size_t cap = rep->cap_errs ? rep->cap_errs * 2 : 16;
		struct inspect_err *p = realloc(rep->errs, cap * sizeof(*p));

		/* Losing a message is better than losing the report. */
		if (!p)
			return;
		rep->errs = p;
		rep->cap_errs = cap;
	}
	e = &rep->errs[rep->nerrs++];
	e->bdf[0] = 0;
	if (bdf)
		inspect_bdf_str(*bdf, e->bdf);
	e->line = line;
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
}

void inspect_error(struct inspect_report *rep, umsi_bdf_t bdf, bool has_bdf,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_error(rep, has_bdf ? &bdf : NULL, 0, fmt, ap);
	va_end(ap);
}

void inspect_fn_error(struct inspect_report *rep, const struct inspect_fn *fn,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_error(rep, &fn->bdf, fn->line, fmt, ap);
	va_end(ap);
}

static int view_read(void *ctx, uint16_t off, uint8_t width, uint32_t *val)
{
	const struct inspect_fn *fn = ctx;
	uint32_t v = 0;

	if ((uint32_t)off + width > fn->size)
		return -UMSI_EIO;
	for (unsigned i = 0; i < width; i++)
		v |= (uint32_t)fn->cfg[off + i] << (8 * i);
	*val = v;
	return 0;
}

static uint32_t cfg32(const struct inspect_fn *fn, unsigned off)
{
	uint32_t v = 0xffffffffu;

	if (off + 4 <= fn->size)
		view_read((void *)fn, (uint16_t)off, 4, &v);
	return v;
}

struct walk_state {
	uint16_t msi, msix;     /* first offset of each, 0 when absent */
	uint16_t last;          /* last capability visited */
	uint16_t broken_at;     /* capability with ID 0xff, 0 if none */
	unsigned visited;
};

/* walk_one()'s verdict on a capability with ID 0xff. */
#define WALK_BROKEN 1

static int walk_one(void *arg, uint8_t id, uint16_t off)
{
	struct walk_state *w = arg;

	/*
	 * 0xff is no capability ID: bytes that read as all-ones or garbage.
	 * lspci stops there ("<chain broken>"), and so do we, rather than
	 * follow a pointer read from such bytes.
	 */
	if (id == 0xff) {
		w->broken_at = off;
		return WALK_BROKEN;
	}

	if (id == UMSI_PCI_CAP_ID_MSI && !w->msi)
		w->msi = off;
	if (id == UMSI_PCI_CAP_ID_MSIX && !w->msix)
		w->msix = off;
	w->last = off;
	w->visited++;
	return 0;
}

/* Explain a failed walk, naming where it went wrong. */
static void walk_error(struct inspect_report *rep, const struct inspect_fn *fn,
		       const struct walk_state *w, int err)
{
	unsigned from = w->last ? w->last + 1u : UMSI_PCI_CAP_PTR;
	unsigned ptr = from < fn->size ? fn->cfg[from] : 0;
	char where[48];

	if (w->last)
		snprintf(where, sizeof(where), "the capability at 0x%02x", w->last);
	else
		snprintf(where, sizeof(where), "the header (0x34)");
	switch (err) {
	case -UMSI_ELOOP:
		inspect_fn_error(rep, fn,
				 "capability list loops (more than %d capabilities; %s points back to 0x%02x); capabilities after the loop are not decoded",
				 UMSI_PCI_CAP_MAX, where, ptr & ~3u);
		break;
	case -UMSI_ERANGE:
		if ((ptr & ~3u) >= UMSI_PCI_STD_HEADER_END)
			inspect_fn_error(rep, fn,
					 "capability pointer 0x%02x in %s lies past the %u bytes of configuration space available; capabilities from there on are not decoded",
					 ptr, where, fn->size);
		else
			inspect_fn_error(rep, fn,
					 "capability pointer 0x%02x in %s points into the standard header (below 0x40); capabilities from there on are not decoded",
					 ptr, where);
		break;
	case -UMSI_ENODEV:
		if (cfg32(fn, UMSI_PCI_VENDOR_ID) == 0xffffffffu)
			inspect_fn_error(rep, fn,
					 "the function reads all-ones (vendor ID 0xffff): absent or removed; nothing decoded");
		else
			inspect_fn_error(rep, fn,
					 "capability pointer 0x%02x in %s leads to bytes that read all-ones (missing from the dump, or the function is gone); capabilities from there on are not decoded",
					 ptr, where);
		break;
	case -UMSI_EINVAL:
		inspect_fn_error(rep, fn,
				 "capability pointer 0x%02x in %s is not 4-byte aligned",
				 ptr, where);
		break;
	default:
		inspect_fn_error(rep, fn,
				 "capability list could not be read (%s)",
				 umsi_strerror(err));
	}
}

static unsigned bars_of(uint8_t hdr_type)
{
	switch (hdr_type & UMSI_PCI_HEADER_TYPE_MASK) {
	case UMSI_PCI_HEADER_NORMAL: return 6;
	case UMSI_PCI_HEADER_BRIDGE: return 2;
	case UMSI_PCI_HEADER_CARDBUS: return 1;
	default: return 0;
	}
}

/*
 * Is BAR @bir a memory BAR of its own (not I/O, not the upper half of a
 * 64-bit BAR)? Return NULL if so, else why not.
 */
static const char *bar_problem(const struct inspect_fn *fn, unsigned bir,
			       unsigned nbars)
{
	for (unsigned i = 0; i < nbars; i++) {
		uint32_t bar = cfg32(fn, UMSI_PCI_BAR0 + 4 * i);
		bool is64 = !(bar & UMSI_PCI_BAR_IO) &&
			    (bar & UMSI_PCI_BAR_MEM_TYPE_MASK) ==
			    UMSI_PCI_BAR_MEM_TYPE_64;

		if (i == bir) {
			if (bar & UMSI_PCI_BAR_IO)
				return "is an I/O BAR (the table must be in memory space)";
			if (is64 && i + 1 == nbars)
				return "is a 64-bit BAR without room for its upper half";
			return NULL;
		}
		if (is64) {
			i++;
			if (i == bir)
				return "is the upper half of a 64-bit BAR";
		}
	}
	return NULL;
}

static bool check_msix_location(struct inspect_report *rep,
				const struct inspect_fn *fn,
				const struct inspect_dev *dev,
				const uint64_t *bar_size)
{
	const struct umsi_msix_cap *x = &dev->msix;
	unsigned nbars = bars_of(dev->hdr_type);
	uint64_t tend = (uint64_t)x->table_offset +
			(uint64_t)x->table_size * UMSI_MSIX_ENTRY_SIZE;
	uint64_t pend = (uint64_t)x->pba_offset +
			((uint64_t)x->table_size + 63) / 64 * 8;
	const struct { const char *what; unsigned bir; uint64_t off, end; } r[2] = {
		{ "vector table", x->table_bir, x->table_offset, tend },
		{ "PBA", x->pba_bir, x->pba_offset, pend },
	};
	bool ok = true;

	for (int i = 0; i < 2; i++) {
		const char *why;

		if (r[i].bir >= nbars) {
			inspect_fn_error(rep, fn,
					 "MSI-X %s is in BAR %u, which %s",
					 r[i].what, r[i].bir,
					 r[i].bir > 5 ? "is a reserved BIR value" :
					 "this header type does not have");
			ok = false;
			continue;
		}
		why = bar_problem(fn, r[i].bir, nbars);
		if (why) {
			inspect_fn_error(rep, fn,
					 "MSI-X %s is in BAR %u, which %s",
					 r[i].what, r[i].bir, why);
			ok = false;
			continue;
		}
		if (!bar_size)
			continue;
		if (!bar_size[r[i].bir]) {
			inspect_fn_error(rep, fn,
					 "MSI-X %s is in BAR %u, which is not assigned (size 0)",
					 r[i].what, r[i].bir);
			ok = false;
		} else if (r[i].end > bar_size[r[i].bir]) {
			inspect_fn_error(rep, fn,
					 "MSI-X %s (0x%llx-0x%llx) runs past the end of BAR %u (size 0x%llx)",
					 r[i].what, (unsigned long long)r[i].off,
					 (unsigned long long)r[i].end - 1, r[i].bir,
					 (unsigned long long)bar_size[r[i].bir]);
			ok = false;
		}
	}
	if (x->table_bir == x->pba_bir && x->table_offset < pend &&
	    x->pba_offset < tend) {
		inspect_fn_error(rep, fn,
				 "MSI-X vector table (0x%x-0x%llx) and PBA (0x%x-0x%llx) overlap in BAR %u",
				 x->table_offset, (unsigned long long)tend - 1,
				 x->pba_offset, (unsigned long long)pend - 1,
				 x->table_bir);
		ok = false;
	}
	return ok;
}

static void decode_msi(struct inspect_report *rep, const struct inspect_fn *fn,
		       const struct umsi_cfg_view *v, struct inspect_dev *dev,
		       uint16_t off)
{
	struct umsi_msg m;
	int ret = umsi_pci_read_msi_cap(v, off, &dev->msi);

	if (ret) {
		inspect_fn_error(rep, fn,
				 "MSI capability at 0x%02x runs past the %u bytes of configuration space available (%s); not decoded",
				 off, fn->size, umsi_strerror(ret));
		return;
	}
	dev->has_msi = true;
	/*
	 * The library clamps reserved encodings (6, 7) to 32 vectors; lspci
	 * prints 2^field, and so do we, with a note.
	 */
	dev->msi_count_cap = 1u << ((dev->msi.ctrl & UMSI_MSI_FLAGS_QMASK) >>
				    UMSI_MSI_FLAGS_QMASK_SHIFT);
	dev->msi_count_enabled = 1u << ((dev->msi.ctrl & UMSI_MSI_FLAGS_QSIZE) >>
					UMSI_MSI_FLAGS_QSIZE_SHIFT);
	if (dev->msi_count_cap > UMSI_MSI_MAX_VECTORS)
		inspect_fn_error(rep, fn,
				 "MSI Multiple Message Capable encodes %u vectors, a reserved value (at most 32)",
				 dev->msi_count_cap);
	if (dev->msi_count_enabled > UMSI_MSI_MAX_VECTORS)
		inspect_fn_error(rep, fn,
				 "MSI Multiple Message Enable encodes %u vectors, a reserved value (at most 32)",
				 dev->msi_count_enabled);
	m.address = dev->msi.address;
	m.data = dev->msi.data;
	umsi_x86_msg_decode(&m, true, &dev->msi_msg);
}

static void decode_msix(struct inspect_report *rep, const struct inspect_fn *fn,
			const struct umsi_cfg_view *v, struct inspect_dev *dev,
			uint16_t off, const uint64_t *bar_size)
{
	int ret = umsi_pci_read_msix_cap(v, off, &dev->msix);

	if (ret) {
		inspect_fn_error(rep, fn,
				 "MSI-X capability at 0x%02x runs past the %u bytes of configuration space available (%s); not decoded",
				 off, fn->size, umsi_strerror(ret));
		return;
	}
	dev->has_msix = true;
	dev->msix_location_ok = check_msix_location(rep, fn, dev, bar_size);
}

static struct inspect_dev *new_dev(struct inspect_report *rep)
{
	struct inspect_dev *d;

	if (rep->ndevs == rep->cap_devs) {
		size_t cap = rep->cap_devs ? rep->cap_devs * 2 : 16;
		struct inspect_dev *p = realloc(rep->devs, cap * sizeof(*p));

		if (!p)
			return NULL;
		rep->devs = p;
		rep->cap_devs = cap;
	}
	d = &rep->devs[rep->ndevs++];
	memset(d, 0, sizeof(*d));
	return d;
}

struct inspect_dev *inspect_decode_fn(struct inspect_report *rep,
				      const struct inspect_fn *fn,
				      const uint64_t *bar_size)
{
	struct umsi_cfg_view v = {
		.read = view_read, .ctx = (void *)fn, .size = fn->size,
		/* lspci masks the low pointer bits, as PCI 3.0 6.7 says to. */
		.strict = false,
	};
	struct walk_state w = { 0 };
	struct inspect_dev *dev;
	int ret;

	if (fn->size < UMSI_PCI_STD_HEADER_END) {
		inspect_fn_error(rep, fn,
				 "only %u bytes of configuration space%s; the 64-byte standard header is incomplete, nothing decoded",
				 fn->size, fn->line ? " in the dump" : " readable");
		return NULL;
	}
	if ((cfg32(fn, UMSI_PCI_VENDOR_ID) & 0xffff) == 0xffff) {
		inspect_fn_error(rep, fn,
				 "the function reads all-ones (vendor ID 0xffff): absent or removed; nothing decoded");
		return NULL;
	}
	dev = new_dev(rep);
	if (!dev) {
		inspect_fn_error(rep, fn, "out of memory");
		return NULL;
	}
	rep->decoded++;
	dev->bdf = fn->bdf;
	dev->line = fn->line;
	dev->cfg_size = fn->size;
	dev->vendor = (uint16_t)cfg32(fn, UMSI_PCI_VENDOR_ID);
	dev->device = (uint16_t)(cfg32(fn, UMSI_PCI_VENDOR_ID) >> 16);
	dev->hdr_type = fn->cfg[UMSI_PCI_HEADER_TYPE];
	dev->command = (uint16_t)cfg32(fn, UMSI_PCI_COMMAND);
	if (fn->size <= UMSI_PCI_STD_HEADER_END) {
		/* A non-root sysfs read, or an `lspci -x` dump. */
		dev->cfg_short = true;
		inspect_fn_error(rep, fn,
				 "only the first 64 bytes of configuration space are %s; the capabilities (MSI, MSI-X) live beyond them and are not decoded%s",
				 fn->line ? "in the dump" : "readable",
				 fn->line ? " (use lspci -xxx)" : " (run as root)");
		return dev;
	}
	/* lspci, too, decodes no capabilities for an undefined layout. */
	if ((dev->hdr_type & UMSI_PCI_HEADER_TYPE_MASK) > UMSI_PCI_HEADER_CARDBUS) {
		inspect_fn_error(rep, fn,
				 "unknown header type 0x%02x: the layout beyond the first 16 bytes is undefined, capabilities not decoded",
				 dev->hdr_type & UMSI_PCI_HEADER_TYPE_MASK);
		return dev;
	}
	ret = umsi_pci_walk_caps(&v, walk_one, &w);
	if (ret == WALK_BROKEN)
		inspect_fn_error(rep, fn,
				 "the capability at 0x%02x has ID 0xff (chain broken: all-ones or garbage); capabilities from there on are not decoded",
				 w.broken_at);
	else if (ret)
		walk_error(rep, fn, &w, ret);
	if (w.msi)
		decode_msi(rep, fn, &v, dev, w.msi);
	if (w.msix)
		decode_msix(rep, fn, &v, dev, w.msix, bar_size);
	return dev;
}

void inspect_decode_entry(struct inspect_msix_entry *e)
{
	struct umsi_msg m = { .address = e->address, .data = e->data };

	/*
	 * Decode bits 11:5 as destination ID 14:8: they are reserved (zero)
	 * where the extension is not in use, so this is right either way.
	 */
	umsi_x86_msg_decode(&m, true, &e->msg);
}

const char *inspect_delivery_name(uint8_t dm)
{
	switch (dm) {
	case UMSI_X86_DM_FIXED: return "fixed";
	case UMSI_X86_DM_LOWPRI: return "lowest-priority";
	case UMSI_X86_DM_SMI: return "smi";
	case UMSI_X86_DM_NMI: return "nmi";
	case UMSI_X86_DM_INIT: return "init";
	case UMSI_X86_DM_EXTINT: return "extint";
	default: return "reserved";
	}
}
