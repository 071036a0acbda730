/* SPDX-License-Identifier: MIT */
/*
 * glue_report.c - the UMSI device lines: one JSON object per PCI function
 * that has MSI, MSI-X or an INTx pin, with every vector it was given.
 *
 * A function with many vectors (a 2048-entry MSI-X table) does not fit a
 * line of sensible length, so its vectors are split over continuation
 * lines (kernel/README.md, "Output"):
 *
 *   UMSI {"event":"device",...,"nvec":300,"vectors":[...],"more":true}
 *   UMSI {"event":"device_more","bdf":"...","vectors":[...],"more":true}
 *   UMSI {"event":"device_more","bdf":"...","vectors":[...]}
 *
 * Every line is whole JSON and at most REPORT_LINE_MAX bytes; the one without
 * "more" closes the device. Each line is written in one piece, so lines of
 * other CPUs never cut into one.
 */
#include <umsi/irq.h>
#include <umsi/pci.h>

#include "kernel.h"
#include "drivers/drivers.h"
#include "glue.h"
#include "smp.h"

#define REPORT_LINE_MAX   4096		/* bytes of one UMSI line, newline included */
#define REPORT_ITEM_MAX   256		/* one vector's JSON, with room to spare */
#define REPORT_TAIL_MAX   32		/* "],\"more\":true}\n" and the NUL */

struct rline {
	char buf[REPORT_LINE_MAX];
	size_t len;
	bool truncated;
};

/*
 * (CPU, identity) pairs of messages in this round of reports: x86 vectors
 * are below 256, IMSIC identities below 2048.
 */
#define REPORT_MAX_ID 2048
static uint64_t pairs[KERNEL_MAX_CPUS][REPORT_MAX_ID / 64];

void glue_report_start(void)
{
	memset(pairs, 0, sizeof(pairs));
}

static void rl_add(struct rline *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rl_add(struct rline *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(l->buf) - l->len) {
		l->truncated = true;	/* never happens with the fields we print */
		l->len = sizeof(l->buf) - 1;
		return;
	}
	l->len += (size_t)n;
}

static void report_note_pair(const struct umsi_irq_info *ii)
{
	uint64_t *w;

	if (ii->cpu >= KERNEL_MAX_CPUS || ii->vector >= REPORT_MAX_ID)
		return;
	w = &pairs[ii->cpu][ii->vector / 64];
	if ((*w >> (ii->vector % 64)) & 1) {
		kprintf("check: " KARCH_HWID_KEY " %u vector %u used twice (irq %u)\n",
			ii->hwid, ii->vector, ii->irq);
		glue_fail();
		return;
	}
	*w |= 1ull << (ii->vector % 64);
}

static uint32_t report_vec_irq(const struct glue_dev *g, uint32_t i)
{
	return g->kd ? g->kd->vecs[i].irq : g->vecs[i].irq;
}

static const char *report_mode_name(enum umsi_pci_mode m)
{
	switch (m) {
	case UMSI_MODE_INTX:
		return "intx";
	case UMSI_MODE_MSI:
		return "msi";
	case UMSI_MODE_MSIX:
		return "msix";
	default:
		return "none";
	}
}

static const char *report_none_reason(const struct glue_dev *g,
			       const struct umsi_pci_info *info,
			       char *buf, size_t len)
{
	if (!info->msi_cap && !info->msix_cap)
		return "no_capability";
	if (info->reason)
		return info->reason;
	if (!g->probed && !g->kd)
		return "no_driver";
	if (g->probe_err && g->probe_err != -UMSI_ENOSPC) {
		ksnprintf(buf, len, "error:%s", umsi_strerror(g->probe_err));
		return buf;
	}
	return "no_vectors";
}

/* Everything of the device line up to its vector list. */
static void report_head(struct rline *l, const struct glue_dev *g,
			const struct umsi_pci_info *info, uint32_t nvec)
{
	const struct pci_dev *d = g->pci;
	const char *shortfall = share_shortfall(g, info);
	char errbuf[32];

	rl_add(l, "UMSI {\"event\":\"device\",\"bdf\":\"%04x:%02x:%02x.%u\","
	       "\"vendor\":\"0x%04x\",\"device\":\"0x%04x\",\"mode\":\"%s\"",
	       info->bdf >> 16, PCI_BUS(d->bdf), PCI_DEV(d->bdf),
	       PCI_FN(d->bdf), info->vendor, info->device,
	       report_mode_name(info->mode));
	if (info->is_vf)
		rl_add(l, ",\"pf\":\"%04x:%02x:%02x.%u\",\"vf_index\":%u",
		       info->pf >> 16, PCI_BUS(info->pf), PCI_DEV(info->pf),
		       PCI_FN(info->pf), info->vf_index);
	if (g->kd)
		rl_add(l, ",\"driver\":\"%s\"", g->kd->drv->name);
	if (info->mode == UMSI_MODE_NONE)
		rl_add(l, ",\"reason\":\"%s\"",
		       report_none_reason(g, info, errbuf, sizeof(errbuf)));
	if (info->mode == UMSI_MODE_MSI)
		rl_add(l, ",\"reserved\":%u", info->msi_reserved);
	/* Why a function with MSI or MSI-X fell back to INTx. */
	if (info->mode == UMSI_MODE_INTX && info->reason)
		rl_add(l, ",\"msi_reason\":\"%s\"", info->reason);
	rl_add(l, ",\"msi_cap\":%u,\"msix_cap\":%u,\"msi_max\":%u,"
	       "\"msix_max\":%u", info->msi_cap, info->msix_cap,
	       info->msi_max, info->msix_max);
	if (d->msix_cap)
		rl_add(l, ",\"fresh\":\"%s\"%s%s%s",
		       d->fresh == PCI_FRESH_BOOT ? "boot" :
		       d->fresh == PCI_FRESH_FLR ? "flr" :
		       d->fresh == PCI_FRESH_HOTPLUG ? "hotplug" : "no",
		       d->stale[0] ? ",\"stale\":\"" : "", d->stale,
		       d->stale[0] ? "\"" : "");
	if (g->want)
		rl_add(l, ",\"want\":%u", g->want);
	if (shortfall)
		rl_add(l, ",\"short\":\"%s\"", shortfall);
	rl_add(l, ",\"nvec\":%u,\"vectors\":[", nvec);
}

/* Close @l (continued or not) and write it out. */
static void report_flush(struct rline *l, bool more)
{
	rl_add(l, more ? "],\"more\":true}\n" : "]}\n");
	if (l->truncated) {
		kprintf("UMSI {\"event\":\"error\",\"reason\":\"device line overflow\"}\n");
		glue_fail();
		return;
	}
	console_write(l->buf);
}

void glue_report(struct glue_dev *g, bool check_pairs)
{
	static struct rline l;	/* one report at a time, from the BSP */
	struct umsi_pci_info info;
	struct umsi_irq_info ii;
	uint32_t n = 0, nvec;
	bool first = true;

	umsi_pci_get_info(g->udev, &info);
	if (!info.msi_cap && !info.msix_cap && !info.intx_pin)
		return;
	nvec = info.mode == UMSI_MODE_NONE ? 0 : g->nvec;
	/* Only vectors uMSI knows are listed; count them first. */
	for (uint32_t i = 0; i < nvec; i++)
		if (!umsi_irq_get_info(kernel_umsi_system(), report_vec_irq(g, i), &ii))
			n++;
	l.len = 0;
	l.truncated = false;
	report_head(&l, g, &info, n);
	for (uint32_t i = 0; i < nvec; i++) {
		char item[REPORT_ITEM_MAX];
		size_t len;

		if (umsi_irq_get_info(kernel_umsi_system(), report_vec_irq(g, i), &ii))
			continue;
		len = (size_t)ksnprintf(item, sizeof(item),
			"%s{\"index\":%u,\"irq\":%u,\"cpu\":%u,\"" KARCH_HWID_KEY "\":%u,"
			"\"vector\":%u", first ? "" : ",",
			info.mode == UMSI_MODE_INTX ? i : ii.hwirq, ii.irq,
			ii.cpu, ii.hwid, ii.vector);
		if (info.mode == UMSI_MODE_INTX) {
			len += (size_t)ksnprintf(item + len, sizeof(item) - len,
				",\"gsi\":%u,\"pin\":\"%c\"", info.gsi,
				'A' + info.intx_pin - 1);
#ifdef KARCH_VECTOR_FIELDS_INTX
			len += (size_t)karch_vector_fields(item + len,
						sizeof(item) - len, &ii);
#endif
		}
#ifdef KARCH_VECTOR_FIELDS
		else
			len += (size_t)karch_vector_fields(item + len,
						sizeof(item) - len, &ii);
#endif
		if (ii.disabled)	/* by storm detection */
			len += (size_t)ksnprintf(item + len, sizeof(item) - len,
						 ",\"disabled\":true");
		/* A managed IRQ whose CPUs all went offline: shut down, masked. */
		if (ii.managed && !smp_cpu_online(ii.cpu))
			len += (size_t)ksnprintf(item + len, sizeof(item) - len,
						 ",\"managed\":true,\"shutdown\":true");
		else if (ii.managed)
			len += (size_t)ksnprintf(item + len, sizeof(item) - len,
						 ",\"managed\":true");
		ksnprintf(item + len, sizeof(item) - len, "}");
		if (l.len + strlen(item) + REPORT_TAIL_MAX > sizeof(l.buf)) {
			report_flush(&l, true);
			l.len = 0;
			rl_add(&l, "UMSI {\"event\":\"device_more\","
			       "\"bdf\":\"%04x:%02x:%02x.%u\",\"vectors\":[",
			       info.bdf >> 16, PCI_BUS(g->pci->bdf),
			       PCI_DEV(g->pci->bdf), PCI_FN(g->pci->bdf));
			rl_add(&l, "%s", item + (first ? 0 : 1));
		} else {
			rl_add(&l, "%s", item);
		}
		first = false;
		/* INTx lines may be shared; messages never (a shut-down
		 * IRQ's vector has gone back). */
		if (info.mode != UMSI_MODE_INTX && check_pairs &&
		    !(ii.managed && !smp_cpu_online(ii.cpu)))
			report_note_pair(&ii);
	}
	report_flush(&l, false);
}
