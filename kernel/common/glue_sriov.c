/* SPDX-License-Identifier: MIT */
/*
 * glue_sriov.c - SR-IOV through uMSI: a PF's virtual functions enabled,
 * served by the PF's driver and taken away again, as often as asked.
 *
 *   umsi.sriov=BB:DD.F:N    the PF at BB:DD.F ends with N VFs enabled
 *   umsi.sriov_cycles=K     first K cycles of enable, serve, disable, each
 *                           ending in a UMSI sriov_cycle line whose
 *                           "allocated" must equal the count before
 *   umsi.sriov_nowait       skip the SR-IOV specification's waits (100 ms
 *                           after VF Enable, 1 s after clearing it): for
 *                           VFs a hypervisor emulates, ready at once
 *
 * One cycle, as a PF driver and a kernel's PCI core share the work:
 *  1. the kernel sizes the VF BARs and gives them room in the PF's bridge
 *     window (N VFs, each one VF's size apart), as it assigns any BAR;
 *  2. umsi_pci_sriov_enable(): uMSI checks the capability, sets NumVFs
 *     and VF Enable, and registers each VF as a function;
 *  3. the PF's driver readies the VFs (an NVMe primary gives each
 *     secondary controller queues and interrupts and brings it online);
 *  4. each VF gets a pci_devs entry and the PF's driver, which takes its
 *     MSI-X vectors through the uMSI driver API, is fired (umsi.fire=)
 *     and checked; its device line names its PF ("pf");
 *  5. down: each VF's driver stops and its vectors go (glue_hot_remove),
 *     the PF's driver takes the VFs' resources back, then
 *     umsi_pci_sriov_disable() clears VF Enable, and the kernel gives the
 *     VF BARs' room back.
 */
#include <umsi/pci.h>
#include <umsi/pci_regs.h>

#include "kernel.h"
#include "drivers/drivers.h"
#include "glue.h"
#include "pci.h"

#define SRIOV_MAX_VFS 64

static struct {
	struct glue *gl;	/* whose functions (glue_sriov()) */
	int pf;			/* pci_devs index of the PF */
	uint16_t want;		/* umsi.sriov=...:N */
	uint16_t nvfs;		/* VFs up now */
	bool nowait;
	int vf[SRIOV_MAX_VFS];	/* pci_devs index of each VF */
} sr = { .pf = -1 };

static void bdf_str(uint32_t bdf, char *b, size_t n)
{
	ksnprintf(b, n, "0000:%02x:%02x.%u", PCI_BUS(bdf), PCI_DEV(bdf),
		  PCI_FN(bdf));
}

static void sriov_error(const char *what, int err)
{
	char b[16];

	bdf_str(pci_devs[sr.pf].bdf, b, sizeof(b));
	kprintf("UMSI {\"event\":\"error\",\"reason\":\"sriov %s %s: %s\"}\n",
		b, what, umsi_strerror(err));
	glue_fail();
}

/* 1. Room for every VF BAR; the registers hold VF 0's addresses. */
static int place_vf_bars(uint16_t cap, uint16_t n)
{
	uint32_t bdf = pci_devs[sr.pf].bdf;

	for (int i = 0; i < 6;) {
		uint16_t reg = (uint16_t)(cap + UMSI_SRIOV_BAR + 4 * i);
		struct pci_bar b;
		int used = pci_size_bar_at(bdf, reg, i == 5, &b);
		uint64_t at;

		i += used;
		/* VF BARs are memory (SR-IOV 3.3.14); uMSI refuses others. */
		if (b.kind != PCI_BAR_MEM32 && b.kind != PCI_BAR_MEM64)
			continue;
		at = pci_sriov_place(sr.pf, i - used, b.size * n, b.size,
				     b.prefetchable);
		if (!at) {
			pci_sriov_unplace(sr.pf);
			return -UMSI_ENOSPC;
		}
		pci_cfg_write(bdf, reg, 4, (pci_cfg_read(bdf, reg, 4) & 0xf) |
			      (uint32_t)at);
		if (used == 2)
			pci_cfg_write(bdf, reg + 4, 4, (uint32_t)(at >> 32));
	}
	return 0;
}

static void unplace_vf_bars(uint16_t cap)
{
	uint32_t bdf = pci_devs[sr.pf].bdf;

	for (int i = 0; i < 6; i++) {
		uint16_t reg = (uint16_t)(cap + UMSI_SRIOV_BAR + 4 * i);

		pci_cfg_write(bdf, reg, 4, pci_cfg_read(bdf, reg, 4) & 0xf);
	}
	pci_sriov_unplace(sr.pf);
}

static void vfs_down(void);

/* One enable: VFs registered, readied, driven and reported. */
static int vfs_up(uint16_t n)
{
	struct glue_dev *pg = &sr.gl->devs[sr.pf];
	struct umsi_pci_sriov_info si;
	void *vf_priv[SRIOV_MAX_VFS] = { 0 };
	int err;

	err = umsi_pci_sriov_get_info(pg->udev, &si);
	if (err)
		return err;
	if (n > si.total_vfs || n > SRIOV_MAX_VFS)
		return -UMSI_ERANGE;
	err = place_vf_bars(si.cap, n);
	if (err)
		return err;
	err = umsi_pci_sriov_enable(pg->udev, n, sr.nowait ?
				    UMSI_SRIOV_NOWAIT : 0);
	if (err) {
		unplace_vf_bars(si.cap);
		return err;
	}
	sr.nvfs = n;
	for (uint16_t i = 0; i < n; i++)
		sr.vf[i] = -1;
	(void)umsi_pci_sriov_get_info(pg->udev, &si);
	if (pg->kd && pg->kd->drv->sriov_up) {
		err = pg->kd->drv->sriov_up(pg->kd, n, vf_priv);
		if (err) {
			vfs_down();
			return err;
		}
	}
	for (uint16_t i = 0; i < n; i++) {
		struct umsi_pci_dev *vu = umsi_pci_sriov_vf(pg->udev, i);
		struct umsi_pci_info info;
		uint64_t addr[6];
		struct glue_dev *g;
		int idx;

		umsi_pci_get_info(vu, &info);
		for (int b = 0; b < 6; b++)
			addr[b] = si.bar_size[b] ? si.bar_addr[b] +
				  i * si.bar_size[b] : 0;
		idx = pci_new_vf(info.bdf & 0xffff, sr.pf, info.vendor,
				 info.device, addr, si.bar_size, si.bar_is64);
		if (idx < 0) {
			vfs_down();
			return -UMSI_ENOMEM;
		}
		sr.vf[i] = idx;
		g = &sr.gl->devs[idx];
		memset(g, 0, sizeof(*g));
		g->pci = &pci_devs[idx];
		g->udev = vu;
		/* The PF's driver serves its VFs (with what it gave each). */
		if (pg->kd) {
			g->to_serve = true;
			share_begin(sr.gl);
			glue_claim(g, pg->kd->drv, vf_priv[i]);
		}
		glue_report(g, false);
		if (g->kd && sr.gl->cfg.have_fire && g->kd->drv->raise) {
			glue_fire(g, sr.gl->cfg.fire);
			if (g->kd && g->kd->drv->check &&
			    !g->kd->drv->check(g->kd))
				glue_fail();
		}
	}
	return 0;
}

/* Every VF's driver and vectors go, then the VFs. */
static void vfs_down(void)
{
	struct glue_dev *pg = &sr.gl->devs[sr.pf];
	struct umsi_pci_sriov_info si;

	for (uint16_t i = sr.nvfs; i-- > 0;) {
		if (sr.vf[i] < 0)
			continue;
		glue_hot_remove(sr.gl, sr.vf[i]);
		pci_devs[sr.vf[i]].present = false;
		sr.vf[i] = -1;
	}
	if (pg->kd && pg->kd->drv->sriov_down)
		pg->kd->drv->sriov_down(pg->kd, sr.nvfs);
	if (!umsi_pci_sriov_get_info(pg->udev, &si)) {
		umsi_pci_sriov_disable(pg->udev, sr.nowait ?
				       UMSI_SRIOV_NOWAIT : 0);
		unplace_vf_bars(si.cap);
	}
	sr.nvfs = 0;
}

/*
 * The PF at @idx is about to go (hot removal): its VFs go first, so that
 * no VF entry outlives the PF's record in uMSI (which takes the VFs'
 * records with it). A PF that reads all-ones is gone: no wait.
 */
void glue_sriov_pf_removing(struct glue *gl, int idx)
{
	if (idx != sr.pf || !sr.nvfs || gl != sr.gl)
		return;
	if (pci_gone(&pci_devs[idx]))
		sr.nowait = true;
	vfs_down();
	sr.pf = -1;
}

void glue_sriov(struct glue *gl)
{
	char val[32], b[16];
	uint64_t cycles = 0;
	uint64_t want;
	uint32_t bdf;
	uint16_t n;
	struct pci_dev *pd;
	int err;

	if (!cmdline_value("umsi.sriov", val, sizeof(val)))
		return;
	if (!cmdline_bdf_count(val, &bdf, &want, SRIOV_MAX_VFS)) {
		kprintf("umsi: umsi.sriov=%s: not BB:DD.F:N with N from 1 to "
			"%u; ignored\n", val, SRIOV_MAX_VFS);
		return;
	}
	n = (uint16_t)want;
	(void)glue_cmdline_number("umsi.sriov_cycles", 100000, &cycles);
	sr.nowait = cmdline_flag("umsi.sriov_nowait");
	pd = pci_find(bdf);
	bdf_str(bdf, b, sizeof(b));
	if (!pd || !gl->devs[pd - pci_devs].udev) {
		kprintf("UMSI {\"event\":\"error\",\"reason\":\"sriov %s: no "
			"such function\"}\n", b);
		glue_fail();
		return;
	}
	sr.gl = gl;
	sr.pf = (int)(pd - pci_devs);
	for (uint64_t c = 0; c < cycles; c++) {
		uint32_t before = glue_allocated(), up, after;
		uint64_t t0 = clock_ns();

		err = vfs_up(n);
		if (err) {
			sriov_error("enable", err);
			return;
		}
		up = glue_allocated();
		vfs_down();
		after = glue_allocated();
		kprintf("UMSI {\"event\":\"sriov_cycle\",\"pf\":\"%s\","
			"\"cycle\":%llu,\"vfs\":%u,\"allocated_up\":%u,"
			"\"allocated\":%u,\"allocated_before\":%u,\"heap\":%llu,"
			"\"ms\":%llu}\n", b, (unsigned long long)c + 1, n, up,
			after, before, (unsigned long long)mm_heap_used(),
			(unsigned long long)((clock_ns() - t0) / 1000000));
		if (after != before)
			glue_fail();
	}
	err = vfs_up(n);
	if (err) {
		sriov_error("enable", err);
		return;
	}
	kprintf("UMSI {\"event\":\"sriov\",\"pf\":\"%s\",\"vfs\":%u,"
		"\"cycles\":%llu,\"allocated\":%u}\n", b, n,
		(unsigned long long)cycles, glue_allocated());
}
