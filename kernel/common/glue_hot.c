/* SPDX-License-Identifier: MIT */
/*
 * glue_hot.c - functions that come and go after boot: hot-added ones are
 * registered with uMSI (fresh from reset) and served like those found at
 * boot; removed ones, asked for or gone by surprise, give everything
 * back (umsi_pci_remove). And the boot CPU's work loop that serves those
 * events outside interrupt context.
 */
#include <umsi/irq.h>
#include <umsi/matrix.h>
#include <umsi/pci.h>

#include "kernel.h"
#include "drivers/drivers.h"
#include "glue.h"
#include "pci.h"
#include "pciehp.h"
#include "smp.h"
#include "umsi_glue.h"

static volatile uint32_t work_flag;

void glue_kick(void)
{
	__atomic_store_n(&work_flag, 1, __ATOMIC_RELEASE);
	if (this_cpu_id() != smp_bsp_cpu)
		arch_wake_cpu(smp_bsp_cpu);
}

bool umsi_glue_work_pending(void)
{
	return __atomic_load_n(&work_flag, __ATOMIC_ACQUIRE) != 0 ||
	       pciehp_pending();
}

uint32_t glue_allocated(void)
{
	struct umsi_matrix_stats st;

	if (!kernel_umsi_system())
		return 0;
	umsi_matrix_stats(umsi_system_matrix(kernel_umsi_system()), &st);
	return st.allocated + st.managed_allocated;
}

uint32_t umsi_glue_allocated(void)
{
	return glue_allocated();
}

/* Does a driver (umsi.drivers=) or umsi.probe=all serve @g? */
static void hot_serve(struct glue *gl, struct glue_dev *g)
{
	const struct kdriver *drv = gl->cfg.have_dlist ?
		glue_driver_for(g->pci, gl->cfg.dlist) : NULL;

	g->to_serve = drv || (gl->cfg.probe_all && glue_probe_wanted(g));
	share_begin(gl);
	if (drv) {
		glue_claim(g, drv, NULL);
	} else if (g->to_serve) {
		share_probe_plan(&g, 1);	/* what it offers, as it fits */
		glue_probe_one(g);
	}
	share_served(g);
}

int glue_hot_add(struct glue *gl, int idx)
{
	struct glue_dev *g = &gl->devs[idx];
	struct pci_dev *d = &pci_devs[idx];
	struct umsi_pci_dev *parent =
		d->parent >= 0 ? gl->devs[d->parent].udev : NULL;
	int err;

	memset(g, 0, sizeof(*g));
	g->pci = d;
	/* Its slot was just powered on (pcihot.c set d->fresh): every
	 * MSI-X entry is masked as reset left it (PCI 3.0, 6.8.2.9). */
	err = umsi_pci_add(kernel_umsi_system(), d->bdf, parent,
			   UMSI_PCI_ADD_FRESH, &g->udev);
	if (err) {
		kprintf("UMSI {\"event\":\"error\",\"reason\":\"pci_add "
			"0000:%02x:%02x.%u: %s\"}\n", PCI_BUS(d->bdf),
			PCI_DEV(d->bdf), PCI_FN(d->bdf), umsi_strerror(err));
		g->udev = NULL;
		return -1;
	}
	hot_serve(gl, g);
	glue_report(g, false);
	if (g->kd && gl->cfg.have_fire && g->kd->drv->raise) {
		glue_fire(g, gl->cfg.fire);
		if (g->kd && g->kd->drv->check && !g->kd->drv->check(g->kd))
			glue_fail();
	}
	return 0;
}

void glue_hot_remove(struct glue *gl, int idx)
{
	struct glue_dev *g = &gl->devs[idx];
	struct kdev *kd = g->kd;

	if (!g->udev) {
		memset(g, 0, sizeof(*g));
		return;
	}
	/* 0. A PF's VFs go before it (a VF removed alone is an ordinary
	 * function; uMSI forgets it in its PF's list). */
	glue_sriov_pf_removing(gl, idx);
	if (pci_devs[idx].pf >= 0 && !pci_devs[idx].present) {
		memset(g, 0, sizeof(*g));
		return;
	}
	/* 1. The driver makes the device quiet (or finds it gone). */
	if (kd && kd->drv->stop)
		kd->drv->stop(kd);
	/* 2. Its vectors and handlers go: no handler runs after this. */
	umsi_pci_free_irq_vectors(g->udev);
	/* 3. uMSI forgets the function and everything it held. */
	umsi_pci_remove(kernel_umsi_system(), g->udev);
	/* 4. The driver's memory, and ours. */
	if (kd) {
		if (kd->drv->release)
			kd->drv->release(kd);
		if (kd->vecs)
			kfree(kd->vecs, sizeof(*kd->vecs) * kd->cap);
		kfree(kd, sizeof(*kd));
	}
	if (g->vecs)
		kfree(g->vecs, sizeof(*g->vecs) * g->nvec);
	memset(g, 0, sizeof(*g));
}

void glue_function_gone(struct glue_dev *g)
{
	char b[16];

	if (g->gone)
		return;
	g->gone = true;
	ksnprintf(b, sizeof(b), "0000:%02x:%02x.%u", PCI_BUS(g->pci->bdf),
		  PCI_DEV(g->pci->bdf), PCI_FN(g->pci->bdf));
	kprintf("umsi: %s reads all-ones: gone\n", b);
	/* Below a hot-plug port, its slot is checked as a whole. */
	if (!pciehp_function_gone((int)(g->pci - pci_devs)))
		glue_kick();
}

void glue_reclaim_gone(struct glue *gl)
{
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct glue_dev *g = &gl->devs[i];
		uint32_t bdf = pci_devs[i].bdf;

		if (!pci_devs[i].present || !g->gone || !pci_gone(&pci_devs[i]))
			continue;
		glue_hot_remove(gl, (int)i);
		pci_hot_release((int)i);
		kprintf("UMSI {\"event\":\"removed\",\"bdf\":\"0000:%02x:%02x.%u\","
			"\"surprise\":true,\"allocated\":%u}\n", PCI_BUS(bdf),
			PCI_DEV(bdf), PCI_FN(bdf), glue_allocated());
	}
}

void glue_work_begin(void)
{
	__atomic_store_n(&work_flag, 0, __ATOMIC_RELEASE);
}
