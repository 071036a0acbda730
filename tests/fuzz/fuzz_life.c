/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the whole device life cycle: a machine, up to four
 * PCI functions and a sequence of operations on them, all from the input,
 * run by the real library on the simulator (both built into this binary
 * with ASan and UBSan). Any host call may be failed, or the device made to
 * vanish, at a point the input chooses.
 *
 * After every operation it checks what hardware would show:
 *  - no source (MSI-X entry, MSI message, IO-APIC input) can send to a
 *    (CPU, vector) the allocator thinks free;
 *  - no handler runs for a device other than the one that fired (an MSI
 *    or MSI-X vector reaching a stranger), and none of a removed device;
 *  - the allocator's own consistency check passes, and the simulator saw
 *    no access real hardware would not forgive and no lock misuse.
 * At the end every device is removed and the system destroyed: every
 * allocation, mapping and lock must be back.
 *
 * Input layout:
 *   0      CPUs - 1 (low 3 bits: 1..8); bit 3: APIC IDs spread (0, 3, 6..,
 *          with one above 255 when bit 4 is set too)
 *   1      platform: 1 remapping, 2 x2APIC, 4 extended destination ID
 *   2..9   four devices, two bytes each (shape, see dev_desc())
 *   10..   operations, three bytes each: opcode, a, b (see run_op())
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/internal/core.h>
#include <umsi/matrix.h>
#include <umsi/pci.h>
#include <umsi/pci_regs.h>
#include "sim/umsi_sim.h"

#define NDEV 4
#define MAX_OPS 64

struct fdev {
	struct fuzz *fz;
	umsi_bdf_t bdf;
	struct umsi_sim_dev_desc desc;
	struct umsi_pci_dev *dev;   /* NULL when not added to uMSI */
	bool plugged;               /* present in the simulator */
	bool requested;
	int nvec;
	uint64_t handled;
};

struct fuzz {
	struct umsi_sim *sim;
	struct umsi_system *sys;
	struct fdev devs[NDEV];
	struct fdev *firing;        /* the device being fired, or NULL */
	uint64_t vanish_at;         /* host call at which firing_dev vanishes */
	struct fdev *vanish;
	uint64_t calls;
	bool bad;
};

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_life: %s\n", what);
	abort();
}

static int life_handler(uint32_t irq, void *arg)
{
	struct fdev *d = arg;
	struct fuzz *fz = d->fz;

	(void)irq;
	if (!d->dev)
		fail("a handler of a removed device ran");
	/* Only INTx lines are shared: an MSI reaching another is a bug. */
	if (fz->firing && fz->firing != d &&
	    umsi_pci_mode(fz->firing->dev) != UMSI_MODE_INTX)
		fail("a message reached another device's handler");
	/* On a shared line a handler claims only what its device raised. */
	if (umsi_pci_mode(d->dev) == UMSI_MODE_INTX) {
		if (!(umsi_sim_cfg_read(fz->sim, d->bdf, UMSI_PCI_STATUS, 2) &
		      UMSI_PCI_STATUS_INTX))
			return UMSI_IRQ_NONE;
		umsi_sim_intx_set(fz->sim, d->bdf, false);
	}
	d->handled++;
	return UMSI_IRQ_HANDLED;
}

static int life_dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

/* The hook: make a device vanish at a chosen host call. */
static void life_hook(void *arg, enum umsi_sim_op op)
{
	struct fuzz *fz = arg;

	(void)op;
	if (fz->vanish && ++fz->calls == fz->vanish_at) {
		umsi_sim_remove_device(fz->sim, fz->vanish->bdf);
		fz->vanish->plugged = false;
		fz->vanish = NULL;
	}
}

/*
 * Shape from two bytes. a: bits 0-1 kind (0 MSI-X, 1 MSI, 2 MSI + MSI-X,
 * 3 INTx only), bit 2 64-bit MSI, bit 3 MSI mask bits, bits 4-6 MSI
 * log2(messages), bit 7 no INTx pin. b: MSI-X table size - 1 (1..64 via
 * the low 6 bits), bit 6 FLR, bit 7 reserved.
 */
static void dev_desc(struct umsi_sim_dev_desc *d, uint8_t a, uint8_t b)
{
	unsigned kind = a & 3, lg = (a >> 4) & 7;

	memset(d, 0, sizeof(*d));
	d->vendor = 0x1b36;
	d->device = 0x0010;
	d->class_code = 0x010802;
	d->bars[0].size = 0x4000;
	d->bars[0].is64 = true;
	d->intx_pin = (a & 0x80) ? 0 : 1;
	d->pcie.present = true;
	d->pcie.type = UMSI_PCIE_TYPE_ENDPOINT;
	d->pcie.flr = b & 0x40;
	if (kind == 0 || kind == 2) {
		d->msix.present = true;
		d->msix.nentries = (uint16_t)((b & 63) + 1);
		d->msix.table_bar = 0;
		d->msix.table_offset = 0x2000;
		d->msix.pba_bar = 0;
		d->msix.pba_offset = 0x3000;
	}
	if (kind == 1 || kind == 2) {
		d->msi.present = true;
		d->msi.nvec = (uint8_t)(1u << (lg > 5 ? 5 : lg));
		d->msi.is64 = a & 4;
		d->msi.maskbit = a & 8;
	}
	if (kind == 3 && !d->intx_pin)
		d->intx_pin = 1;
}

/* Every source that can still send must aim at an allocated vector. */
static void check_target(void *arg, const struct umsi_sim_target *t)
{
	struct fuzz *fz = arg;

	if (!t->resolved || t->cpu == UINT32_MAX)
		return;
	if (!umsi_matrix_is_allocated(umsi_system_matrix(fz->sys), t->cpu,
				      t->vector)) {
		fz->bad = true;
		if (getenv("FUZZ_LIFE_TRACE"))
			fprintf(stderr, "  free target: %04x gsi %d -> cpu %u "
				"vector 0x%x\n", t->bdf, t->gsi, t->cpu,
				t->vector);
	}
}

static void check(struct fuzz *fz)
{
	struct umsi_sim_stats st;

	fz->bad = false;
	umsi_sim_live_targets(fz->sim, check_target, fz);
	if (fz->bad)
		fail("a source can send to a vector the allocator thinks free");
	if (umsi_matrix_check(umsi_system_matrix(fz->sys)))
		fail("matrix check");
	umsi_sim_stats(fz->sim, &st);
	if (st.bad_accesses || st.lock_errors)
		fail("the simulator saw a bad access or lock misuse");
}

static void dev_remove(struct fuzz *fz, struct fdev *d)
{
	/* Hot removal: the function goes, then the OS forgets it. */
	if (d->plugged)
		umsi_sim_remove_device(fz->sim, d->bdf);
	d->plugged = false;
	if (d->dev)
		umsi_pci_remove(fz->sys, d->dev);
	d->dev = NULL;
	d->requested = false;
	d->nvec = 0;
}

static void dev_add(struct fuzz *fz, struct fdev *d, bool fresh)
{
	if (!d->plugged) {
		/* A surprise-removed slot may be reused only once forgotten. */
		if (d->dev)
			return;
		if (umsi_sim_add_device(fz->sim, d->bdf, &d->desc))
			return;
		d->plugged = true;
	}
	if (!d->dev && umsi_pci_add(fz->sys, d->bdf, NULL,
				    fresh ? UMSI_PCI_ADD_FRESH : 0, &d->dev))
		d->dev = NULL;
}

static void request_all(struct fuzz *fz, struct fdev *d)
{
	int i;

	(void)fz;
	if (!d->dev || d->requested)
		return;
	for (i = 0; i < d->nvec; i++)
		if (!umsi_pci_request_irq(d->dev, (uint32_t)i, life_handler,
					  UMSI_IRQF_SHARED, "fuzz", d))
			d->requested = true;
}

static void free_handlers(struct fuzz *fz, struct fdev *d)
{
	int i, irq;

	if (!d->dev || !d->requested)
		return;
	for (i = 0; i < d->nvec; i++) {
		irq = umsi_pci_irq_vector(d->dev, (uint32_t)i);
		if (irq >= 0)
			(void)umsi_free_irq(fz->sys, (uint32_t)irq, d);
	}
	d->requested = false;
}

static void fire(struct fuzz *fz, struct fdev *d, unsigned k)
{
	if (!d->dev || !d->plugged)
		return;
	/*
	 * A level line nobody claims would storm until storm detection
	 * (100,000 interrupts): raise INTx only with a handler to take it.
	 */
	if (umsi_pci_mode(d->dev) == UMSI_MODE_INTX && !d->requested)
		return;
	fz->firing = d;
	if (umsi_pci_mode(d->dev) == UMSI_MODE_INTX)
		umsi_sim_intx_set(fz->sim, d->bdf, true);
	else
		(void)umsi_sim_fire(fz->sim, d->bdf, k);
	umsi_sim_quiesce(fz->sim);
	fz->firing = NULL;
	/* An unclaimed level line stays asserted; drop it. */
	if (d->plugged)
		umsi_sim_intx_set(fz->sim, d->bdf, false);
	umsi_sim_quiesce(fz->sim);
}

static int life_nvec(struct umsi_pci_dev *dev)
{
	struct umsi_pci_info info;

	umsi_pci_get_info(dev, &info);
	return (int)info.nvec;
}

static void cpumask_of(struct fuzz *fz, uint8_t bits, uint64_t *w,
		       struct umsi_cpumask *m)
{
	*w = bits;
	m->words = w;
	m->nbits = umsi_cpu_count(fz->sys);
}

/*
 * One operation. op % 16: 0 add (b&1: fresh), 1 alloc vectors (a: min
 * 1..4 in bits 0-1 / types in bits 2-4 / affinity bit 5; b: max), 2
 * request handlers, 3 free handlers, 4 set affinity of vector a to CPUs
 * b, 5 CPU a offline, 6 CPU a online, 7 free vectors, 8 remove (hot), 9
 * fire vector a, 10 add MSI-X entry a (b&1: any index), 11 remove MSI-X
 * entry of vector a, 12 fail the a-th fallible host call of the next
 * operation with EIO (b even) or ENOMEM, 13 vanish at host call a of the
 * next operation, 14 save + FLR-like reset + restore, 15 mask/unmask
 * vector a.
 * The device is chosen by the opcode's bits 4-5.
 */
static void run_op(struct fuzz *fz, uint8_t op, uint8_t a, uint8_t b)
{
	struct fdev *d = &fz->devs[(op >> 4) & 3];
	struct umsi_cpumask m;
	uint64_t w;
	int irq;

	switch (op & 15) {
	case 0:
		dev_add(fz, d, b & 1);
		break;
	case 1:
		if (d->dev && umsi_pci_mode(d->dev) == UMSI_MODE_NONE) {
			uint32_t min = (a & 3) + 1, max = b ? b : 1;
			uint32_t types = (a >> 2) & 7;

			if (!types)
				types = UMSI_PCI_IRQ_ALL_TYPES;
			if (a & 0x20)
				types |= UMSI_PCI_IRQ_AFFINITY;
			if (max < min)
				max = min;
			d->nvec = umsi_pci_alloc_irq_vectors(d->dev, min, max,
							     types);
			if (d->nvec < 0)
				d->nvec = 0;
			d->requested = false;
		}
		break;
	case 2:
		request_all(fz, d);
		break;
	case 3:
		free_handlers(fz, d);
		break;
	case 4:
		if (d->dev && d->nvec) {
			irq = umsi_pci_irq_vector(d->dev, a % (unsigned)d->nvec);
			cpumask_of(fz, b, &w, &m);
			if (irq >= 0)
				(void)umsi_irq_set_affinity(fz->sys,
							    (uint32_t)irq, &m);
		}
		break;
	case 5:
		(void)umsi_cpu_offline(fz->sys, a % umsi_cpu_count(fz->sys));
		break;
	case 6:
		(void)umsi_cpu_online(fz->sys, a % umsi_cpu_count(fz->sys));
		break;
	case 7:
		if (d->dev) {
			umsi_pci_free_irq_vectors(d->dev);
			d->nvec = 0;
			d->requested = false;
		}
		break;
	case 8:
		dev_remove(fz, d);
		break;
	case 9:
		if (d->nvec)
			fire(fz, d, a % (unsigned)d->nvec);
		break;
	case 10:
		if (d->dev && umsi_pci_mode(d->dev) == UMSI_MODE_MSIX) {
			irq = umsi_pci_msix_alloc_entry(d->dev, (b & 1) ? -1 :
							(int32_t)a);
			if (irq >= 0) {
				d->nvec = life_nvec(d->dev);
				if (d->requested)
					(void)umsi_request_irq(fz->sys,
						(uint32_t)irq, life_handler,
						0, "fuzz", d);
			}
		}
		break;
	case 11:
		if (d->dev && d->nvec &&
		    umsi_pci_mode(d->dev) == UMSI_MODE_MSIX) {
			irq = umsi_pci_irq_vector(d->dev, a % (unsigned)d->nvec);
			if (irq >= 0 &&
			    !umsi_pci_msix_free_entry(d->dev, (uint32_t)irq))
				d->nvec = life_nvec(d->dev);
		}
		break;
	case 12:
		umsi_sim_fail_at(fz->sim, a ? a : 1, (b & 1) ? -UMSI_ENOMEM :
				 -UMSI_EIO);
		break;
	case 13:
		if (d->plugged) {
			fz->vanish = d;
			fz->vanish_at = a ? a : 1;
			fz->calls = 0;
		}
		break;
	case 14:
		if (d->dev && d->plugged && !umsi_pci_save_state(d->dev)) {
			umsi_sim_reset_function(fz->sim, d->bdf, true);
			(void)umsi_pci_restore_state(d->dev);
		}
		break;
	case 15:
		if (d->dev && d->nvec) {
			irq = umsi_pci_irq_vector(d->dev, a % (unsigned)d->nvec);
			if (irq >= 0 && (b & 1))
				(void)umsi_irq_mask(fz->sys, (uint32_t)irq);
			else if (irq >= 0)
				(void)umsi_irq_unmask(fz->sys, (uint32_t)irq);
		}
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t hdr[10] = { 0 };
	uint32_t apic[8], ncpus, i;
	struct umsi_sim_config scfg = { 0 };
	struct umsi_sim_leaks l0, l1;
	struct fuzz fz;
	size_t pos, nops = 0;
	bool arm_pending = false;

	memcpy(hdr, data, size < sizeof(hdr) ? size : sizeof(hdr));
	memset(&fz, 0, sizeof(fz));
	ncpus = (hdr[0] & 7) + 1;
	for (i = 0; i < ncpus; i++)
		apic[i] = (hdr[0] & 8) ? i * 3 : i;
	if ((hdr[0] & 0x18) == 0x18)
		apic[ncpus - 1] = 300;
	scfg.ncpus = ncpus;
	scfg.apic_ids = apic;
	scfg.plat_flags = ((hdr[1] & 1) ? UMSI_PLAT_IRQ_REMAP : 0) |
			  ((hdr[1] & 2) ? UMSI_PLAT_X2APIC : 0) |
			  ((hdr[1] & 4) ? UMSI_PLAT_EXT_DEST_ID : 0);
	fz.sim = umsi_sim_create(&scfg);
	if (!fz.sim)
		return 0;
	umsi_sim_leaks(fz.sim, &l0);
	if (umsi_system_create(umsi_sim_host_ops(), fz.sim, NULL, &fz.sys)) {
		umsi_sim_destroy(fz.sim);
		return 0;
	}
	umsi_sim_set_dispatch(fz.sim, life_dispatch, fz.sys);
	umsi_sim_set_hook(fz.sim, life_hook, &fz);
	for (i = 0; i < NDEV; i++) {
		struct fdev *d = &fz.devs[i];

		d->fz = &fz;
		/* Devices 0 and 1 share slot-based INTx routing with 2, 3. */
		d->bdf = UMSI_BDF(0, 0, 3 + i, 0);
		dev_desc(&d->desc, hdr[2 + 2 * i], hdr[3 + 2 * i]);
		if (umsi_sim_add_device(fz.sim, d->bdf, &d->desc) == 0)
			d->plugged = true;
		/* Same GSI for all four: a shared INTx line. */
		if (d->plugged)
			umsi_sim_set_intx_route(fz.sim, d->bdf, 16);
	}
	for (pos = sizeof(hdr); pos + 3 <= size && nops < MAX_OPS; pos += 3) {
		uint8_t op = data[pos];

		if (getenv("FUZZ_LIFE_TRACE"))
			fprintf(stderr, "op %u dev %u a %u b %u\n", op & 15,
				(op >> 4) & 3, data[pos + 1], data[pos + 2]);
		run_op(&fz, op, data[pos + 1], data[pos + 2]);
		/* A failure or vanishing armed by 12/13 covers the next op. */
		if ((op & 15) == 12 || (op & 15) == 13) {
			arm_pending = true;
			continue;
		}
		if (arm_pending) {
			umsi_sim_fail_at(fz.sim, 0, 0);
			fz.vanish = NULL;
			arm_pending = false;
		}
		umsi_sim_quiesce(fz.sim);
		check(&fz);
		nops++;
	}
	umsi_sim_fail_at(fz.sim, 0, 0);
	fz.vanish = NULL;
	for (i = 0; i < NDEV; i++)
		dev_remove(&fz, &fz.devs[i]);
	check(&fz);
	/* Only an IO-APIC input that could not be masked may stay held. */
	umsi_system_destroy(fz.sys);
	umsi_sim_leaks(fz.sim, &l1);
	if (!umsi_sim_leaks_equal(&l0, &l1))
		fail("allocations, mappings or locks left behind");
	umsi_sim_destroy(fz.sim);
	return 0;
}
