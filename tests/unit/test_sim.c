/* SPDX-License-Identifier: MIT */
/*
 * test_sim.c - the simulator on its own: what a device, a bus and a CPU
 * would observe. The "kernel" here is a tiny dispatch function that records
 * (cpu, vector) and ends the interrupt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <cmocka.h>

#include <umsi/msg.h>
#include <umsi/x86.h>
#include <umsi/pci_regs.h>
#include <umsi/umsi.h>
#include <umsi/matrix.h>
#include <sim/umsi_sim.h>

/* ---- The test's "kernel" ----------------------------------------------------- */

struct rec {
	uint32_t cpu;
	uint8_t vector;
	uint32_t current;	/* current_cpu() inside the handler */
	int phase;		/* w->phase when the interrupt arrived */
};

struct world {
	struct umsi_sim *sim;
	const struct umsi_host_ops *ops;
	pthread_mutex_t mu;
	struct rec log[512];
	unsigned int n;
	int phase;
	bool no_eoi;
	bool host_eoi;		/* end interrupts through the host op */
	int ret;		/* what dispatch returns */
	/* Level INTx: deassert @intx_bdf on the @intx_after-th interrupt. */
	umsi_bdf_t intx_bdf;
	unsigned int intx_after, intx_seen;
};

static int rec_dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	struct world *w = arg;

	pthread_mutex_lock(&w->mu);
	if (w->n < 512)
		w->log[w->n++] = (struct rec){ cpu, vector,
			umsi_sim_current_cpu(w->sim), w->phase };
	if (w->intx_after && ++w->intx_seen == w->intx_after)
		umsi_sim_intx_set(w->sim, w->intx_bdf, false);
	pthread_mutex_unlock(&w->mu);
	if (w->host_eoi)
		w->ops->eoi(w->sim, vector);
	else if (!w->no_eoi)
		umsi_sim_eoi(w->sim, vector);
	return w->ret;
}

static struct world *world_new(const struct umsi_sim_config *cfg)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	pthread_mutex_init(&w->mu, NULL);
	w->sim = umsi_sim_create(cfg);
	assert_non_null(w->sim);
	w->ops = umsi_sim_host_ops();
	w->ret = 1;
	umsi_sim_set_dispatch(w->sim, rec_dispatch, w);
	return w;
}

static struct world *world_cpus(uint32_t n, const uint32_t *ids,
				uint32_t flags)
{
	struct umsi_sim_config cfg = { .ncpus = n, .apic_ids = ids,
				       .plat_flags = flags };

	return world_new(&cfg);
}

static void world_free(struct world *w)
{
	umsi_sim_destroy(w->sim);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

static uint32_t nrec(struct world *w)
{
	uint32_t n;

	pthread_mutex_lock(&w->mu);
	n = w->n;
	pthread_mutex_unlock(&w->mu);
	return n;
}

static uint64_t msg_addr(uint32_t apic_id, uint32_t flags)
{
	struct umsi_msg m;

	assert_int_equal(umsi_x86_msg_compose(apic_id, 0x20, flags, &m), 0);
	return m.address;
}

/* ---- Devices ---------------------------------------------------------------------- */

#define DEV_A UMSI_BDF(0, 0, 3, 0)
#define DEV_B UMSI_BDF(0, 0, 4, 0)

/* MSI-X: BAR0 64 KiB, table at 0, PBA at 0x8000; Bus Master set. */
static void add_msix(struct world *w, umsi_bdf_t bdf, uint16_t n)
{
	struct umsi_sim_dev_desc d = {
		.vendor = 0x1af4, .device = 0x1041, .class_code = 0x020000,
		.bars = { [0] = { .size = 0x10000 } },
		.intx_pin = 1, .command = UMSI_PCI_CMD_MASTER,
		.msix = { .present = true, .nentries = n, .table_bar = 0,
			  .table_offset = 0, .pba_bar = 0,
			  .pba_offset = 0x8000 },
		.pcie = { .present = true, .type = UMSI_PCIE_TYPE_ENDPOINT },
	};

	assert_int_equal(umsi_sim_add_device(w->sim, bdf, &d), 0);
}

static void add_msi(struct world *w, umsi_bdf_t bdf, uint8_t nvec, bool is64,
		    bool maskbit)
{
	struct umsi_sim_dev_desc d = {
		.vendor = 0x8086, .device = 0x10d3, .class_code = 0x020000,
		.bars = { [0] = { .size = 0x1000 } },
		.intx_pin = 1, .command = UMSI_PCI_CMD_MASTER,
		.msi = { .present = true, .nvec = nvec, .is64 = is64,
			 .maskbit = maskbit },
	};

	assert_int_equal(umsi_sim_add_device(w->sim, bdf, &d), 0);
}

static uint16_t msix_ctrl_off(void)
{
	return 0xa0 + UMSI_MSIX_FLAGS;
}

static void msix_enable(struct world *w, umsi_bdf_t bdf, bool maskall)
{
	assert_int_equal(umsi_sim_cfg_write(w->sim, bdf, msix_ctrl_off(), 2,
					    UMSI_MSIX_FLAGS_ENABLE |
					    (maskall ? UMSI_MSIX_FLAGS_MASKALL
						     : 0)), 0);
}

/* Program MSI at 0x80: address, data, MME (log2), enable. */
static void msi_program(struct world *w, umsi_bdf_t bdf, bool is64,
			uint64_t addr, uint16_t data, unsigned int mme)
{
	struct umsi_sim *s = w->sim;

	umsi_sim_cfg_write(s, bdf, 0x80 + UMSI_MSI_ADDR_LO, 4, (uint32_t)addr);
	if (is64) {
		umsi_sim_cfg_write(s, bdf, 0x80 + UMSI_MSI_ADDR_HI, 4,
				   (uint32_t)(addr >> 32));
		umsi_sim_cfg_write(s, bdf, 0x80 + UMSI_MSI_DATA_64, 2, data);
	} else {
		umsi_sim_cfg_write(s, bdf, 0x80 + UMSI_MSI_DATA_32, 2, data);
	}
	umsi_sim_cfg_write(s, bdf, 0x80 + UMSI_MSI_FLAGS, 2,
			   UMSI_MSI_FLAGS_ENABLE |
			   (mme << UMSI_MSI_FLAGS_QSIZE_SHIFT));
}

static uint64_t entry_ctrl_phys(struct world *w, umsi_bdf_t bdf, unsigned k)
{
	return umsi_sim_bar_addr(w->sim, bdf, 0) + 16 * k + UMSI_MSIX_ENTRY_CTRL;
}

static const uint32_t gap_ids[4] = { 0, 2, 4, 6 };

/* ---- Fire -> decode -> deliver ------------------------------------------------------ */

/* An IO-APIC entry for the x86 message to @apic, @vec. */
#define GSI(apic, vec, trig, pol, masked) \
	{ { 0xfee00000u | ((uint32_t)(apic) & 0xff) << 12 | \
	    (((uint32_t)(apic) >> 8) & 0x7f) << 5, (vec) }, \
	  (trig), (pol), (masked) }

/* The current CPU's IRR bit @v, through the host's irq_pending. */
static bool irr_bit(struct world *w, uint32_t v)
{
	return w->ops->irq_pending(w->sim, v);
}

static void test_msix_message_reaches_the_cpu_and_vector_in_its_entry(void **st)
{
	struct world *w = world_cpus(4, gap_ids, 0);
	struct umsi_sim_stats s;
	struct umsi_sim_dev_stats ds;

	(void)st;
	add_msix(w, DEV_A, 8);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 3, msg_addr(4, 0), 0x41, 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 3), UMSI_SIM_FIRE_SENT);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].cpu, 2);	/* APIC ID 4 is CPU 2 */
	assert_int_equal(w->log[0].vector, 0x41);
	assert_int_equal(w->log[0].current, 2);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.msgs, 1);
	assert_int_equal(s.delivered, 1);
	assert_int_equal(s.dispatched, 1);
	assert_int_equal(s.eois, 1);
	assert_int_equal(s.undeliverable, 0);
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	assert_int_equal(ds.msgs, 1);
	assert_int_equal(ds.fires, 1);
	world_free(w);
}

static void test_msi_message_reaches_the_cpu_and_vector_programmed(void **st)
{
	struct world *w = world_cpus(4, gap_ids, 0);

	(void)st;
	add_msi(w, DEV_A, 1, false, false);
	add_msi(w, DEV_B, 1, true, false);
	msi_program(w, DEV_A, false, msg_addr(6, 0), 0x31, 0);
	msi_program(w, DEV_B, true, msg_addr(2, 0), 0x32, 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_B, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(w->n, 2);
	assert_int_equal(w->log[0].cpu, 3);
	assert_int_equal(w->log[0].vector, 0x31);
	assert_int_equal(w->log[1].cpu, 1);
	assert_int_equal(w->log[1].vector, 0x32);
	world_free(w);
}

static void test_msi_multiple_messages_or_the_index_into_low_data_bits(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);

	(void)st;
	add_msi(w, DEV_A, 8, true, false);
	/* MME = 4 messages: the device owns data bits 1:0. */
	msi_program(w, DEV_A, true, msg_addr(0, 0), 0x43, 2);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 2), 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 3), 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 4), -UMSI_EINVAL);
	assert_int_equal(w->n, 3);
	assert_int_equal(w->log[0].vector, 0x40);
	assert_int_equal(w->log[1].vector, 0x42);
	assert_int_equal(w->log[2].vector, 0x43);
	world_free(w);
}

static void test_msi_mme_above_capable_is_stored_but_used_as_capable(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_stats ds;
	uint16_t ctrl;

	(void)st;
	add_msi(w, DEV_A, 2, false, false);
	msi_program(w, DEV_A, false, msg_addr(0, 0), 0x50, 3);
	ctrl = (uint16_t)umsi_sim_cfg_read(w->sim, DEV_A, 0x80 + 2, 2);
	assert_int_equal((ctrl & UMSI_MSI_FLAGS_QSIZE) >> 4, 3);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 1), 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 2), -UMSI_EINVAL);
	assert_int_equal(w->log[0].vector, 0x51);
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	assert_int_equal(ds.mme_over_cap, 1);
	world_free(w);
}

/* ---- Masking and pending ------------------------------------------------------------- */

static void test_msix_masked_entry_sets_pba_and_sends_on_mmio_unmask(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	uint64_t ctrl = 0;

	(void)st;
	add_msix(w, DEV_A, 4);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 1, msg_addr(1, 0), 0x60,
				UMSI_MSIX_CTRL_MASKBIT);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 1),
			 UMSI_SIM_FIRE_PENDING);
	assert_int_equal(w->n, 0);
	assert_int_equal(umsi_sim_msix_pending(w->sim, DEV_A, 1), 1);
	/* The PBA reads back through the BAR. */
	assert_int_equal(umsi_sim_mmio_read32(w->sim,
		umsi_sim_bar_addr(w->sim, DEV_A, 0) + 0x8000), 0x2);
	/* Software moves the entry while masked; the device reads it late. */
	umsi_sim_msix_entry_set(w->sim, DEV_A, 1, msg_addr(0, 0), 0x61,
				UMSI_MSIX_CTRL_MASKBIT);
	umsi_sim_mmio_write32(w->sim, entry_ctrl_phys(w, DEV_A, 1), 0);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].cpu, 0);
	assert_int_equal(w->log[0].vector, 0x61);
	assert_int_equal(umsi_sim_msix_pending(w->sim, DEV_A, 1), 0);
	umsi_sim_msix_entry_get(w->sim, DEV_A, 1, NULL, NULL, (uint32_t *)&ctrl);
	assert_int_equal(ctrl, 0);
	world_free(w);
}

static void test_msix_function_mask_holds_every_entry_until_cleared(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);

	(void)st;
	add_msix(w, DEV_A, 4);
	msix_enable(w, DEV_A, true);
	for (unsigned int k = 0; k < 4; k++)
		umsi_sim_msix_entry_set(w->sim, DEV_A, k, msg_addr(0, 0),
					0x70 + k * 0x10, k == 2);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), UMSI_SIM_FIRE_PENDING);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 2), UMSI_SIM_FIRE_PENDING);
	assert_int_equal(w->n, 0);
	/* Clearing Function Mask sends entry 0; entry 2 is still masked. */
	msix_enable(w, DEV_A, false);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].vector, 0x70);
	assert_int_equal(umsi_sim_msix_pending(w->sim, DEV_A, 2), 1);
	world_free(w);
}

static void test_msix_fire_while_pending_coalesces(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_stats ds;

	(void)st;
	add_msix(w, DEV_A, 2);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 0, msg_addr(0, 0), 0x40, 1);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), UMSI_SIM_FIRE_PENDING);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0),
			 UMSI_SIM_FIRE_COALESCED);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0),
			 UMSI_SIM_FIRE_COALESCED);
	umsi_sim_mmio_write32(w->sim, entry_ctrl_phys(w, DEV_A, 0), 0);
	assert_int_equal(w->n, 1);
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	assert_int_equal(ds.pending_set, 1);
	assert_int_equal(ds.coalesced, 2);
	world_free(w);
}

static void test_msi_masked_vector_sets_pending_and_sends_on_unmask(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	uint16_t mask = 0x80 + UMSI_MSI_MASK_64;

	(void)st;
	add_msi(w, DEV_A, 4, true, true);
	umsi_sim_cfg_write(w->sim, DEV_A, mask, 4, 0xf);
	msi_program(w, DEV_A, true, msg_addr(0, 0), 0x80, 2);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 1), UMSI_SIM_FIRE_PENDING);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 1),
			 UMSI_SIM_FIRE_COALESCED);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 3), UMSI_SIM_FIRE_PENDING);
	assert_int_equal(umsi_sim_msi_pending(w->sim, DEV_A), 0xa);
	assert_int_equal(w->n, 0);
	/* Unmask vector 1 only: its message goes out during the write. */
	umsi_sim_cfg_write(w->sim, DEV_A, mask, 4, 0xd);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].vector, 0x81);
	assert_int_equal(umsi_sim_msi_pending(w->sim, DEV_A), 0x8);
	/* Bits of vectors the function lacks are reserved: read 0. */
	umsi_sim_cfg_write(w->sim, DEV_A, mask, 4, 0xffffffff);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, mask, 4), 0xf);
	world_free(w);
}

static void test_bus_master_disabled_sends_nothing_and_is_counted(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_stats ds;
	struct umsi_sim_stats s;
	uint16_t cmd;

	(void)st;
	add_msix(w, DEV_A, 2);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 0, msg_addr(0, 0), 0x40, 0);
	cmd = (uint16_t)umsi_sim_cfg_read(w->sim, DEV_A, UMSI_PCI_COMMAND, 2);
	umsi_sim_cfg_write(w->sim, DEV_A, UMSI_PCI_COMMAND, 2,
			   cmd & ~UMSI_PCI_CMD_MASTER);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), UMSI_SIM_FIRE_BLOCKED);
	assert_int_equal(w->n, 0);
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(ds.bme_blocked, 1);
	assert_int_equal(ds.msgs, 0);
	assert_int_equal(s.bme_blocked, 1);
	assert_int_equal(s.msgs, 0);
	umsi_sim_cfg_write(w->sim, DEV_A, UMSI_PCI_COMMAND, 2, cmd);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(w->n, 1);
	world_free(w);
}

static void test_no_msi_enabled_means_intx_and_status_bit(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_rte r;
	struct umsi_gsi_entry e = GSI(0, 0x60, UMSI_INTX_LEVEL, UMSI_INTX_ACTIVE_LOW, false);
	uint16_t status;

	(void)st;
	add_msix(w, DEV_A, 2);	/* 00:03.0 INTA -> GSI 16 + 3 % 4 = 19 */
	/* INTx Disable: Interrupt Status is set, the pin stays quiet. */
	umsi_sim_cfg_write(w->sim, DEV_A, UMSI_PCI_COMMAND, 2,
			   UMSI_PCI_CMD_MEMORY | UMSI_PCI_CMD_MASTER |
			   UMSI_PCI_CMD_INTX_DISABLE);
	assert_int_equal(w->ops->gsi_program(w->sim, 19, &e), 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), UMSI_SIM_FIRE_INTX);
	status = (uint16_t)umsi_sim_cfg_read(w->sim, DEV_A, UMSI_PCI_STATUS, 2);
	assert_true(status & UMSI_PCI_STATUS_INTX);
	umsi_sim_ioapic_get(w->sim, 19, &r);
	assert_false(r.line);
	assert_int_equal(w->n, 0);
	/* Clearing INTx Disable lets the asserted pin through. */
	w->intx_bdf = DEV_A;
	w->intx_after = 1;
	umsi_sim_cfg_write(w->sim, DEV_A, UMSI_PCI_COMMAND, 2,
			   UMSI_PCI_CMD_MEMORY | UMSI_PCI_CMD_MASTER);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].vector, 0x60);
	status = (uint16_t)umsi_sim_cfg_read(w->sim, DEV_A, UMSI_PCI_STATUS, 2);
	assert_false(status & UMSI_PCI_STATUS_INTX);
	world_free(w);
}

/* ---- Message formats --------------------------------------------------------------------- */

static void test_extended_destination_id_reaches_apic_ids_above_255(void **st)
{
	static const uint32_t ids[2] = { 0, 300 };
	struct world *w = world_cpus(2, ids, UMSI_PLAT_EXT_DEST_ID);
	struct world *plain = world_cpus(2, ids, 0);
	uint64_t a = 0xfee00000u | (300u & 0xff) << 12 | (300u >> 8) << 5;
	struct umsi_sim_stats s;

	(void)st;
	assert_int_equal(a, msg_addr(300, UMSI_PLAT_EXT_DEST_ID));
	assert_int_equal(umsi_sim_msg_write(w->sim, a, 0x45), 1);
	assert_int_equal(w->log[0].cpu, 1);
	/* Without the extension bits 11:5 are ignored: APIC ID 44. */
	assert_int_equal(umsi_sim_msg_write(plain->sim, a, 0x45), 0);
	umsi_sim_stats(plain->sim, &s);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_NO_CPU], 1);
	world_free(w);
	world_free(plain);
}

static void test_remappable_format_is_resolved_through_the_remap_table(void **st)
{
	static const uint32_t ids[2] = { 0, 70000 };
	struct world *w = world_cpus(2, ids, UMSI_PLAT_IRQ_REMAP |
				     UMSI_PLAT_X2APIC);
	struct umsi_msg m0, m1;
	struct umsi_sim_stats s;
	uint32_t irq, apic;
	uint8_t vec;

	(void)st;
	assert_int_equal(w->ops->remap_compose(w->sim, 7, 70000, 0x55, &m0), 0);
	assert_int_equal(w->ops->remap_compose(w->sim, 8, 0, 0x56, &m1), 0);
	assert_true(m0.address & UMSI_X86_ADDR_REMAP);
	assert_int_equal(umsi_sim_irte_used(w->sim), 2);
	assert_int_equal(umsi_sim_irte_get(w->sim, 0, &irq, &apic, &vec), 0);
	assert_int_equal(irq, 7);
	assert_int_equal(apic, 70000);
	assert_int_equal(umsi_sim_msg_write(w->sim, m0.address, m0.data), 1);
	assert_int_equal(w->log[0].cpu, 1);
	assert_int_equal(w->log[0].vector, 0x55);
	/* SHV: the data's subhandle is added to the handle. */
	assert_int_equal(umsi_sim_msg_write(w->sim, m0.address, 1), 1);
	assert_int_equal(w->log[1].cpu, 0);
	assert_int_equal(w->log[1].vector, 0x56);
	/* Recomposing an IRQ updates its entry in place. */
	assert_int_equal(w->ops->remap_compose(w->sim, 7, 0, 0x57, &m1), 0);
	assert_int_equal(m1.address, m0.address);
	umsi_sim_msg_write(w->sim, m0.address, m0.data);
	assert_int_equal(w->log[2].cpu, 0);
	assert_int_equal(w->log[2].vector, 0x57);
	/* A freed entry faults. */
	w->ops->remap_free(w->sim, 7);
	assert_int_equal(umsi_sim_msg_write(w->sim, m0.address, m0.data), 0);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_REMAP], 1);
	assert_int_equal(umsi_sim_irte_used(w->sim), 1);
	world_free(w);
}

static void test_remappable_message_without_remapping_is_undeliverable(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_msg m;
	struct umsi_sim_stats s;

	(void)st;
	assert_int_equal(w->ops->remap_compose(w->sim, 1, 0, 0x40, &m),
			 -UMSI_ENOTSUP);
	assert_int_equal(umsi_sim_msg_write(w->sim, 0xfee00018u, 0), 0);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_REMAP], 1);
	world_free(w);
}

static void test_xapic_physical_0xff_is_a_broadcast_to_online_cpus(void **st)
{
	struct world *w = world_cpus(4, gap_ids, 0);
	static const uint32_t ids[2] = { 0, 255 };
	struct world *x2 = world_cpus(2, ids, UMSI_PLAT_X2APIC);

	(void)st;
	umsi_sim_cpu_set_online(w->sim, 2, false);
	assert_int_equal(umsi_sim_msg_write(w->sim, 0xfeeff000u, 0x90), 3);
	assert_int_equal(w->n, 3);
	assert_int_equal(w->log[0].cpu, 0);
	assert_int_equal(w->log[1].cpu, 1);
	assert_int_equal(w->log[2].cpu, 3);
	/* In x2APIC mode 0xff is APIC ID 255, not a broadcast. */
	assert_int_equal(umsi_sim_msg_write(x2->sim, 0xfeeff000u, 0x90), 1);
	assert_int_equal(x2->log[0].cpu, 1);
	world_free(w);
	world_free(x2);
}

static void test_logical_flat_mode_reaches_every_cpu_in_the_mask(void **st)
{
	struct world *w = world_cpus(4, gap_ids, 0);
	uint32_t logical = 0xfee00000u | UMSI_X86_ADDR_DM_LOGICAL;

	(void)st;
	assert_int_equal(umsi_sim_msg_write(w->sim, logical | 0x0a << 12,
					    0x44), 2);
	assert_int_equal(w->log[0].cpu, 1);
	assert_int_equal(w->log[1].cpu, 3);
	/* Lowest priority: one CPU of the set. */
	assert_int_equal(umsi_sim_msg_write(w->sim, logical | 0x0c << 12,
			 0x45 | UMSI_X86_DM_LOWPRI << 8), 1);
	assert_int_equal(w->log[2].cpu, 2);
	world_free(w);
}

static void test_undeliverable_messages_are_counted_by_reason(void **st)
{
	struct world *w = world_cpus(4, gap_ids, 0);
	struct umsi_sim_stats s;

	(void)st;
	umsi_sim_cpu_set_online(w->sim, 1, false);
	umsi_sim_msg_write(w->sim, msg_addr(0, 0), 0x0e);	/* vector < 16 */
	umsi_sim_msg_write(w->sim, msg_addr(5, 0), 0x40);	/* no APIC 5 */
	umsi_sim_msg_write(w->sim, msg_addr(2, 0), 0x40);	/* CPU 1 off */
	umsi_sim_msg_write(w->sim, 0xfed00000u, 0x40);		/* stray */
	umsi_sim_msg_write(w->sim, 0x1fee00000ull, 0x40);	/* stray, 64b */
	umsi_sim_msg_write(w->sim, msg_addr(0, 0), 0x40 | UMSI_X86_DM_NMI << 8);
	umsi_sim_msg_write(w->sim, 0xfee00000u | UMSI_X86_ADDR_DM_LOGICAL |
			   0x80 << 12, 0x40);			/* no CPU 7 */
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(w->n, 0);
	assert_int_equal(s.undeliverable, 7);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_VECTOR], 1);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_NO_CPU], 2);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_OFFLINE], 1);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_STRAY], 2);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_MODE], 1);
	assert_int_equal(s.stray_dma, 2);
	assert_true(s.last_undeliverable.valid);
	assert_int_equal(s.last_undeliverable.reason, UMSI_SIM_UNDELIV_NO_CPU);
	world_free(w);
}

/* ---- The local APIC ---------------------------------------------------------------------- */

static void test_irr_coalesces_while_the_cpu_has_interrupts_off(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	struct umsi_sim_vec_stats v;
	struct umsi_sim_stats s;

	(void)st;
	umsi_sim_cpu_irq_disable(w->sim, 1);
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x50);
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x50);
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x30);
	assert_int_equal(w->n, 0);
	assert_true(umsi_sim_irr_test(w->sim, 1, 0x50));
	umsi_sim_cpu_irq_enable(w->sim, 1);
	/* Highest vector first; the duplicate was lost. */
	assert_int_equal(w->n, 2);
	assert_int_equal(w->log[0].vector, 0x50);
	assert_int_equal(w->log[1].vector, 0x30);
	umsi_sim_vec_stats(w->sim, 1, 0x50, &v);
	assert_int_equal(v.delivered, 1);
	assert_int_equal(v.coalesced, 1);
	assert_int_equal(v.dispatched, 1);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.irr_coalesced, 1);
	world_free(w);
}

/*
 * The per-vector counters keep 16 bits beside each vector and the rest
 * apart: past 65535 they still count exactly, and a reset clears both.
 */
static void test_vector_counters_count_past_16_bits(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	struct umsi_sim_vec_stats v;
	uint32_t k;

	(void)st;
	for (k = 0; k < 70000; k++)
		umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x42);
	umsi_sim_vec_stats(w->sim, 1, 0x42, &v);
	assert_int_equal(v.delivered, 70000);
	assert_int_equal(v.dispatched, 70000);
	assert_int_equal(v.coalesced, 0);
	umsi_sim_vec_stats(w->sim, 0, 0x42, &v);
	assert_int_equal(v.delivered, 0);
	umsi_sim_stats_reset(w->sim);
	umsi_sim_vec_stats(w->sim, 1, 0x42, &v);
	assert_int_equal(v.delivered, 0);
	assert_int_equal(v.dispatched, 0);
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x42);
	umsi_sim_vec_stats(w->sim, 1, 0x42, &v);
	assert_int_equal(v.delivered, 1);
	world_free(w);
}

static void test_in_service_vector_blocks_its_priority_class_until_eoi(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_stats s;

	(void)st;
	w->no_eoi = true;
	umsi_sim_msg_write(w->sim, msg_addr(0, 0), 0x55);
	assert_int_equal(w->n, 1);
	assert_true(umsi_sim_isr_test(w->sim, 0, 0x55));
	umsi_sim_msg_write(w->sim, msg_addr(0, 0), 0x51);	/* same class */
	umsi_sim_msg_write(w->sim, msg_addr(0, 0), 0x61);	/* higher */
	assert_int_equal(w->n, 2);
	assert_int_equal(w->log[1].vector, 0x61);
	w->no_eoi = false;
	umsi_sim_eoi(w->sim, 0x61);	/* ends 0x61 */
	umsi_sim_eoi(w->sim, 0x55);	/* ends 0x55, 0x51 can go */
	assert_int_equal(w->n, 3);
	assert_int_equal(w->log[2].vector, 0x51);
	umsi_sim_eoi(w->sim, 0x20);	/* nothing in service */
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.eoi_missing, 2);
	assert_int_equal(s.eoi_spurious, 1);
	assert_int_equal(s.eoi_mismatch, 0);
	world_free(w);
}

static void test_spurious_dispatches_count_as_unassigned_per_cpu_vector(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	struct umsi_sim_vec_stats v;
	struct umsi_sim_stats s;

	(void)st;
	w->ret = 0;
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x77);
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x77);
	umsi_sim_vec_stats(w->sim, 1, 0x77, &v);
	assert_int_equal(v.unassigned, 2);
	umsi_sim_vec_stats(w->sim, 0, 0x77, &v);
	assert_int_equal(v.unassigned, 0);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.unassigned, 2);
	world_free(w);
}

static void test_icr_ipi_and_irr_read_see_the_target_irr(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);

	(void)st;
	umsi_sim_cpu_irq_disable(w->sim, 1);
	/* A fixed IPI through the ICR (the host's send_ipi), to APIC ID 1. */
	w->ops->send_ipi(w->sim, 1, 0x66);
	assert_true(umsi_sim_irr_test(w->sim, 1, 0x66));
	/* The IRR reads the current CPU's. */
	assert_false(irr_bit(w, 0x66));	/* CPU 0 */
	umsi_sim_set_current_cpu(w->sim, 1);
	assert_true(irr_bit(w, 0x66));
	umsi_sim_set_current_cpu(w->sim, 0);
	umsi_sim_cpu_irq_enable(w->sim, 1);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].cpu, 1);
	world_free(w);
}

struct xcall_probe {
	struct world *w;
	uint32_t cpu_seen;
	bool irq_on_seen;
	bool pending_seen;
};

static void xcall_fn(void *arg)
{
	struct xcall_probe *p = arg;

	p->cpu_seen = p->w->ops->current_cpu(p->w->sim);
	p->irq_on_seen = umsi_sim_cpu_irq_enabled(p->w->sim, p->cpu_seen);
	/* Interrupts are off here: this one waits in the IRR. */
	umsi_sim_msg_write(p->w->sim, msg_addr(p->cpu_seen, 0), 0x48);
	p->pending_seen = irr_bit(p->w, 0x48);
}

static void test_run_on_cpu_runs_there_with_interrupts_off(void **st)
{
	struct world *w = world_cpus(4, NULL, 0);
	struct xcall_probe p = { w, 99, true, false };

	(void)st;
	assert_int_equal(w->ops->run_on_cpu(w->sim, 2, xcall_fn, &p), 0);
	assert_int_equal(p.cpu_seen, 2);
	assert_false(p.irq_on_seen);
	assert_true(p.pending_seen);
	/* Back on CPU 0; CPU 2 took the interrupt when it re-enabled. */
	assert_int_equal(umsi_sim_current_cpu(w->sim), 0);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].cpu, 2);
	umsi_sim_cpu_set_online(w->sim, 3, false);
	assert_int_equal(w->ops->run_on_cpu(w->sim, 3, xcall_fn, &p),
			 -UMSI_EINVAL);
	world_free(w);
}

/* ---- Races, provoked deterministically ------------------------------------------------------ */

static void test_interrupt_is_taken_in_the_middle_of_a_host_call(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);

	(void)st;
	add_msix(w, DEV_A, 2);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 0, msg_addr(1, 0), 0x40, 1);
	umsi_sim_fire(w->sim, DEV_A, 0);
	/* The library, on CPU 0, maps the table and unmasks entry 0. */
	void *v;
	uint64_t bar = umsi_sim_bar_addr(w->sim, DEV_A, 0);

	assert_int_equal(w->ops->mmio_map(w->sim, bar, 0x1000, &v), 0);
	w->phase = 1;
	w->ops->mmio_write32(w->sim, (char *)v + UMSI_MSIX_ENTRY_CTRL, 0);
	w->phase = 2;
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].phase, 1);	/* before the write returned */
	assert_int_equal(w->log[0].cpu, 1);
	assert_int_equal(w->log[0].current, 1);
	assert_int_equal(umsi_sim_current_cpu(w->sim), 0);
	w->ops->mmio_unmap(w->sim, v, 0x1000);
	world_free(w);
}

static void test_interrupts_wait_while_any_cpu_holds_a_lock(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	void *l = w->ops->lock_create(w->sim);
	umsi_irqflags_t f;

	(void)st;
	umsi_sim_set_dispatch_through_locks(w->sim, false);	/* default */
	f = w->ops->lock_acquire(w->sim, l);
	assert_true(f);
	assert_false(umsi_sim_cpu_irq_enabled(w->sim, 0));
	umsi_sim_msg_write(w->sim, msg_addr(0, 0), 0x40);
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x41);
	assert_int_equal(w->n, 0);
	w->phase = 1;
	w->ops->lock_release(w->sim, l, f);
	assert_int_equal(w->n, 2);
	assert_int_equal(w->log[0].cpu, 0);
	assert_int_equal(w->log[1].cpu, 1);
	w->ops->lock_destroy(w->sim, l);
	world_free(w);
}

struct hook_probe {
	struct world *w;
	unsigned int calls;
	enum umsi_sim_op last;
};

static void fire_hook(void *arg, enum umsi_sim_op op)
{
	struct hook_probe *h = arg;

	h->calls++;
	h->last = op;
	umsi_sim_fire(h->w->sim, DEV_A, 0);
}

static void test_hook_runs_after_each_host_call_and_may_fire(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct hook_probe h = { w, 0, UMSI_SIM_OP_NR };
	uint32_t v;

	(void)st;
	add_msix(w, DEV_A, 1);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 0, msg_addr(0, 0), 0x40, 0);
	umsi_sim_set_hook(w->sim, fire_hook, &h);
	w->ops->cfg_read(w->sim, DEV_A, 0, 4, &v);
	assert_int_equal(h.calls, 1);
	assert_int_equal(h.last, UMSI_SIM_OP_CFG_READ);
	assert_int_equal(w->n, 1);
	(void)w->ops->clock_ns(w->sim);
	assert_int_equal(h.calls, 2);
	assert_int_equal(h.last, UMSI_SIM_OP_CLOCK_NS);
	assert_int_equal(w->n, 2);
	assert_string_equal(umsi_sim_op_name(UMSI_SIM_OP_MMIO_WRITE32),
			    "mmio_write32");
	umsi_sim_set_hook(w->sim, NULL, NULL);
	(void)w->ops->clock_ns(w->sim);
	assert_int_equal(h.calls, 2);
	world_free(w);
}

/* ---- Configuration space as the specification says ------------------------------------------ */

static void test_status_is_read_only_with_rw1c_error_bits(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	uint8_t *raw;
	uint16_t s;

	(void)st;
	add_msix(w, DEV_A, 1);
	s = (uint16_t)umsi_sim_cfg_read(w->sim, DEV_A, UMSI_PCI_STATUS, 2);
	assert_int_equal(s, UMSI_PCI_STATUS_CAP_LIST);
	/* The device reports a master abort (bit 13) and parity error (15). */
	raw = umsi_sim_cfg_raw(w->sim, DEV_A);
	raw[UMSI_PCI_STATUS + 1] |= 0xa0;
	umsi_sim_cfg_write(w->sim, DEV_A, UMSI_PCI_STATUS, 2, 0x2000);
	s = (uint16_t)umsi_sim_cfg_read(w->sim, DEV_A, UMSI_PCI_STATUS, 2);
	assert_int_equal(s, 0x8000 | UMSI_PCI_STATUS_CAP_LIST);
	/* Writing all-ones clears errors, leaves RO bits alone. */
	umsi_sim_cfg_write(w->sim, DEV_A, UMSI_PCI_STATUS, 2, 0xffff);
	s = (uint16_t)umsi_sim_cfg_read(w->sim, DEV_A, UMSI_PCI_STATUS, 2);
	assert_int_equal(s, UMSI_PCI_STATUS_CAP_LIST);
	/* IDs, header type and capability pointer are read-only. */
	umsi_sim_cfg_write(w->sim, DEV_A, 0, 4, 0);
	umsi_sim_cfg_write(w->sim, DEV_A, UMSI_PCI_CAP_PTR, 1, 0x90);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, 0, 4), 0x10411af4);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, UMSI_PCI_CAP_PTR, 1),
			 0x40);
	world_free(w);
}

static void test_msi_and_msix_read_only_fields_keep_their_values(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	uint16_t msix_ctrl = msix_ctrl_off();

	(void)st;
	add_msix(w, DEV_A, 300);
	add_msi(w, DEV_B, 8, false, true);
	/* MSI-X: Table Size is RO, reserved bits 13:11 read 0. */
	umsi_sim_cfg_write(w->sim, DEV_A, msix_ctrl, 2, 0xffff);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, msix_ctrl, 2),
			 0xc000 | 299);
	umsi_sim_cfg_write(w->sim, DEV_A, 0xa0 + UMSI_MSIX_TABLE, 4, 0x1234);
	umsi_sim_cfg_write(w->sim, DEV_A, 0xa0 + UMSI_MSIX_PBA, 4, 0x1234);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, 0xa0 + 4, 4), 0);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, 0xa0 + 8, 4), 0x8000);
	/* MSI: capable, 64-bit and mask-capable bits are RO. */
	umsi_sim_cfg_write(w->sim, DEV_B, 0x80 + 2, 2, 0xffff);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, 0x80 + 2, 2),
			 UMSI_MSI_FLAGS_MASKBIT | 0x70 | 3 << 1 |
			 UMSI_MSI_FLAGS_ENABLE);
	/* Address bits 1:0 read 0; pending bits are RO to software. */
	umsi_sim_cfg_write(w->sim, DEV_B, 0x80 + 4, 4, 0xfee00003);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, 0x80 + 4, 4),
			 0xfee00000);
	umsi_sim_cfg_write(w->sim, DEV_B, 0x80 + UMSI_MSI_PENDING_32, 4, 0xff);
	assert_int_equal(umsi_sim_msi_pending(w->sim, DEV_B), 0);
	/* MSI-X PBA is RO; Vector Control has only the mask bit. */
	uint64_t bar = umsi_sim_bar_addr(w->sim, DEV_A, 0);

	umsi_sim_mmio_write32(w->sim, bar + 0x8000, 0xffffffff);
	assert_int_equal(umsi_sim_mmio_read32(w->sim, bar + 0x8000), 0);
	umsi_sim_mmio_write32(w->sim, bar + 12, 0xfffffffe);
	assert_int_equal(umsi_sim_mmio_read32(w->sim, bar + 12), 0);
	umsi_sim_mmio_write32(w->sim, bar + 0, 0xfee00003);
	assert_int_equal(umsi_sim_mmio_read32(w->sim, bar + 0), 0xfee00000);
	/* Reset state: entries masked. */
	assert_int_equal(umsi_sim_mmio_read32(w->sim, bar + 16 * 299 + 12), 1);
	world_free(w);
}

static void test_bars_are_assigned_like_firmware_and_size_like_hardware(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_desc d = {
		.vendor = 0x1234, .device = 0x11,
		.bars = {
			[0] = { .size = 0x1000 },
			[1] = { .size = 0x100000, .is64 = true,
				.prefetch = true },
			[3] = { .size = 0x20, .io = true },
			[4] = { .size = 0x4000, .unassigned = true },
		},
	};
	uint16_t b0 = UMSI_PCI_BAR0;

	(void)st;
	add_msix(w, DEV_A, 4);		/* takes 0xe0000000, 64 KiB */
	assert_int_equal(umsi_sim_add_device(w->sim, DEV_B, &d), 0);
	assert_int_equal(umsi_sim_bar_addr(w->sim, DEV_A, 0), 0xe0000000u);
	assert_int_equal(umsi_sim_bar_addr(w->sim, DEV_B, 0), 0xe0010000u);
	assert_int_equal(umsi_sim_bar_addr(w->sim, DEV_B, 1), 0x800000000ull);
	assert_int_equal(umsi_sim_bar_addr(w->sim, DEV_B, 4), 0);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, b0 + 4, 4),
			 UMSI_PCI_BAR_MEM_TYPE_64 | UMSI_PCI_BAR_PREFETCH);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, b0 + 8, 4), 8);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, b0 + 12, 4),
			 0xc000 | UMSI_PCI_BAR_IO);
	/* Sizing: write all-ones, read the size mask with RO flag bits. */
	umsi_sim_cfg_write(w->sim, DEV_B, b0, 4, 0xffffffff);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, b0, 4), 0xfffff000u);
	umsi_sim_cfg_write(w->sim, DEV_B, b0 + 4, 4, 0xffffffff);
	umsi_sim_cfg_write(w->sim, DEV_B, b0 + 8, 4, 0xffffffff);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, b0 + 4, 4),
			 0xfff00000u | 0xc);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, b0 + 8, 4),
			 0xffffffffu);
	umsi_sim_cfg_write(w->sim, DEV_B, b0 + 12, 4, 0xffffffff);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, b0 + 12, 4),
			 0xffffffe1u);
	/* Unimplemented BARs read 0 and ignore writes. */
	umsi_sim_cfg_write(w->sim, DEV_B, b0 + 20, 4, 0xffffffff);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_B, b0 + 20, 4), 0);
	/* Restoring moves the BAR. */
	umsi_sim_cfg_write(w->sim, DEV_B, b0, 4, 0xe0100000u);
	assert_int_equal(umsi_sim_bar_addr(w->sim, DEV_B, 0), 0xe0100000u);
	world_free(w);
}

static void test_inconsistent_device_descriptions_are_rejected(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_desc d = {
		.bars = { [0] = { .size = 0x1000 }, [2] = { .size = 0x1000 } },
		.msix = { .present = true, .nentries = 64, .table_bar = 0,
			  .table_offset = 0, .pba_bar = 0,
			  .pba_offset = 0x200 },
	};

	(void)st;
	/* PBA inside the table. */
	assert_int_equal(umsi_sim_add_device(w->sim, DEV_A, &d), -UMSI_EINVAL);
	/* Table and PBA in different BARs is fine, sharing is too. */
	d.msix.pba_bar = 2;
	d.msix.pba_offset = 0x800;
	assert_int_equal(umsi_sim_add_device(w->sim, DEV_A, &d), 0);
	assert_int_equal(umsi_sim_add_device(w->sim, DEV_A, &d), -UMSI_EEXIST);
	d.msix.pba_bar = 0;
	d.msix.pba_offset = 0x400;
	assert_int_equal(umsi_sim_add_device(w->sim, DEV_B, &d), 0);
	/* A table beyond its BAR, a BAR of odd size, a bad MSI count. */
	d.msix.table_offset = 0xe00;
	assert_int_equal(umsi_sim_add_device(w->sim, UMSI_BDF(0, 0, 5, 0), &d),
			 -UMSI_EINVAL);
	d.msix.present = false;
	d.bars[0].size = 0x1800;
	assert_int_equal(umsi_sim_add_device(w->sim, UMSI_BDF(0, 0, 5, 0), &d),
			 -UMSI_EINVAL);
	d.bars[0].size = 0x1000;
	d.msi = (struct umsi_sim_msi_desc){ .present = true, .nvec = 3 };
	assert_int_equal(umsi_sim_add_device(w->sim, UMSI_BDF(0, 0, 5, 0), &d),
			 -UMSI_EINVAL);
	world_free(w);
}

static void test_memory_space_disabled_bars_read_all_ones(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	uint64_t bar;
	struct umsi_sim_dev_stats ds;

	(void)st;
	add_msix(w, DEV_A, 1);
	bar = umsi_sim_bar_addr(w->sim, DEV_A, 0);
	assert_int_equal(umsi_sim_mmio_read32(w->sim, bar + 12), 1);
	umsi_sim_cfg_write(w->sim, DEV_A, UMSI_PCI_COMMAND, 2, 0);
	assert_int_equal(umsi_sim_mmio_read32(w->sim, bar + 12), 0xffffffffu);
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	assert_int_equal(ds.mmio_disabled, 1);
	world_free(w);
}

static void test_raw_config_pokes_are_uncounted_and_seen_by_software(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_stats s;
	uint8_t *raw;
	uint32_t v;

	(void)st;
	add_msi(w, DEV_A, 1, false, false);
	raw = umsi_sim_cfg_raw(w->sim, DEV_A);
	assert_non_null(raw);
	assert_null(umsi_sim_cfg_raw(w->sim, DEV_B));
	/* A capability list that points back at itself. */
	raw[0x81] = 0x80;
	w->ops->cfg_read(w->sim, DEV_A, 0x80, 2, &v);
	assert_int_equal(v, 0x8005);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.cfg_reads, 1);
	world_free(w);
}

static void test_function_reset_forgets_interrupt_programming(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_desc d = {
		.vendor = 0x8086, .device = 0x1533,
		.bars = { [0] = { .size = 0x4000 } },
		.intx_pin = 1, .command = UMSI_PCI_CMD_MASTER,
		.msix = { .present = true, .nentries = 4, .table_bar = 0,
			  .table_offset = 0x2000, .pba_bar = 0,
			  .pba_offset = 0x3000 },
		.pcie = { .present = true, .flr = true },
	};
	uint16_t devctl = 0x40 + UMSI_PCIE_DEVCTL;
	uint64_t bar, addr;
	uint32_t data, ctrl;

	(void)st;
	assert_int_equal(umsi_sim_add_device(w->sim, DEV_A, &d), 0);
	bar = umsi_sim_bar_addr(w->sim, DEV_A, 0);
	assert_true(umsi_sim_cfg_read(w->sim, DEV_A, 0x40 + UMSI_PCIE_DEVCAP, 4) &
		    UMSI_PCIE_DEVCAP_FLR);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 1, msg_addr(0, 0), 0x44, 0);
	/* The OS restored the header; MSI-X is off, entries masked. */
	assert_int_equal(umsi_sim_reset_function(w->sim, DEV_A, true), 0);
	assert_int_equal(umsi_sim_bar_addr(w->sim, DEV_A, 0), bar);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, msix_ctrl_off(), 2), 3);
	umsi_sim_msix_entry_get(w->sim, DEV_A, 1, &addr, &data, &ctrl);
	assert_int_equal(addr, 0);
	assert_int_equal(data, 0);
	assert_int_equal(ctrl, UMSI_MSIX_CTRL_MASKBIT);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 1), UMSI_SIM_FIRE_INTX);
	/* Initiate FLR: BARs and Command are gone too; the bit reads 0. */
	umsi_sim_intx_set(w->sim, DEV_A, false);
	umsi_sim_cfg_write(w->sim, DEV_A, devctl, 2, UMSI_PCIE_DEVCTL_BCR_FLR);
	assert_int_equal(umsi_sim_bar_addr(w->sim, DEV_A, 0), 0);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, UMSI_PCI_COMMAND, 2), 0);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, devctl, 2), 0);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, 0, 2), 0x8086);
	world_free(w);
}

/* ---- Surprise removal ------------------------------------------------------------------------- */

static void test_surprise_removed_function_reads_all_ones(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	uint64_t bar;
	void *v;
	uint32_t val;

	(void)st;
	add_msix(w, DEV_A, 4);
	bar = umsi_sim_bar_addr(w->sim, DEV_A, 0);
	assert_int_equal(w->ops->mmio_map(w->sim, bar, 0x1000, &v), 0);
	assert_int_equal(w->ops->mmio_read32(w->sim, (char *)v + 12), 1);
	assert_int_equal(umsi_sim_remove_device(w->sim, DEV_A), 0);
	assert_int_equal(umsi_sim_remove_device(w->sim, DEV_A), -UMSI_ENOENT);
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 0, 4, &val), 0);
	assert_int_equal(val, 0xffffffffu);
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 0xa2, 2, &val), 0);
	assert_int_equal(val, 0xffff);
	assert_int_equal(w->ops->cfg_write(w->sim, DEV_A, 4, 2, 0), 0);
	assert_int_equal(w->ops->mmio_read32(w->sim, (char *)v + 12),
			 0xffffffffu);
	w->ops->mmio_write32(w->sim, (char *)v + 12, 0);
	assert_int_equal(w->ops->mmio_read32(w->sim, (char *)v + 12),
			 0xffffffffu);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), -UMSI_ENODEV);
	/* An absent function reads all-ones too. */
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_B, 0, 2, &val), 0);
	assert_int_equal(val, 0xffff);
	w->ops->mmio_unmap(w->sim, v, 0x1000);
	/* Hot add at the same address. */
	add_msix(w, DEV_A, 4);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, 0, 2), 0x1af4);
	world_free(w);
}

/* ---- Accounting ------------------------------------------------------------------------------ */

static void test_host_accesses_are_counted_per_device_and_globally(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_stats a, b;
	struct umsi_sim_stats s;
	uint32_t v;
	void *m;

	(void)st;
	add_msix(w, DEV_A, 4);
	add_msi(w, DEV_B, 1, false, false);
	w->ops->cfg_read(w->sim, DEV_A, 0, 4, &v);
	w->ops->cfg_read(w->sim, DEV_A, 0xa2, 2, &v);
	w->ops->cfg_write(w->sim, DEV_B, 0x82, 2, 0);
	w->ops->cfg_read(w->sim, UMSI_BDF(0, 1, 0, 0), 0, 4, &v);
	w->ops->mmio_map(w->sim, umsi_sim_bar_addr(w->sim, DEV_A, 0), 64, &m);
	w->ops->mmio_write32(w->sim, (char *)m + 8, 0x40);
	w->ops->mmio_read32(w->sim, (char *)m + 8);
	w->ops->mmio_unmap(w->sim, m, 64);
	umsi_sim_dev_stats(w->sim, DEV_A, &a);
	umsi_sim_dev_stats(w->sim, DEV_B, &b);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(a.cfg_reads, 2);
	assert_int_equal(a.cfg_writes, 0);
	assert_int_equal(a.mmio_reads, 1);
	assert_int_equal(a.mmio_writes, 1);
	assert_int_equal(b.cfg_writes, 1);
	assert_int_equal(s.cfg_reads, 3);
	assert_int_equal(s.cfg_writes, 1);
	assert_int_equal(s.mmio_reads, 1);
	assert_int_equal(s.mmio_writes, 1);
	assert_int_equal(s.host_calls, 8);
	assert_int_equal(s.op_calls[UMSI_SIM_OP_MMIO_MAP], 1);
	assert_int_equal(s.bad_accesses, 0);
	/* Uncounted test accessors leave the counters alone. */
	umsi_sim_cfg_read(w->sim, DEV_A, 0, 4);
	assert_int_equal(umsi_sim_host_calls(w->sim), 8);
	umsi_sim_stats_reset(w->sim);
	umsi_sim_dev_stats(w->sim, DEV_A, &a);
	assert_int_equal(a.cfg_reads, 0);
	assert_int_equal(umsi_sim_host_calls(w->sim), 0);
	world_free(w);
}

static void test_misuse_of_the_host_interface_is_counted(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_stats s;
	uint32_t v;
	void *p;
	int dummy;

	(void)st;
	add_msix(w, DEV_A, 1);
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 0x3, 2, &v),
			 -UMSI_EINVAL);
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 4094, 4, &v),
			 -UMSI_EINVAL);
	assert_int_equal(w->ops->mmio_read32(w->sim, &dummy), 0xffffffffu);
	w->ops->mmio_unmap(w->sim, &dummy, 4);
	p = w->ops->alloc(w->sim, 24);
	w->ops->free(w->sim, p, 32);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.bad_accesses, 5);
	assert_non_null(strstr(umsi_sim_log_text(w->sim), "bad access"));
	world_free(w);
}

static void test_fail_at_fails_exactly_the_kth_fallible_call(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	struct umsi_sim_stats s;
	uint32_t v = 0, id;
	void *m = NULL;

	(void)st;
	add_msix(w, DEV_A, 1);
	umsi_sim_fail_at(w->sim, 3, -UMSI_EIO);
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 0, 4, &v), 0); /* 1 */
	(void)w->ops->clock_ns(w->sim);				/* not numbered */
	w->ops->mmio_write32(w->sim, &v, 0);			/* not numbered */
	assert_int_equal(w->ops->cpu_hwid(w->sim, 1, &id), 0);	/* 2 */
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 0, 4, &v),
			 -UMSI_EIO);					/* 3 */
	assert_int_equal(v, 0xffffffffu);
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 0, 4, &v), 0);
	assert_int_equal(v, 0x10411af4);
	umsi_sim_fail_at(w->sim, 1, UMSI_ENOMEM);	/* sign normalised */
	assert_null(w->ops->alloc(w->sim, 16));
	umsi_sim_fail_at(w->sim, 1, -UMSI_ENOMEM);
	assert_null(w->ops->lock_create(w->sim));
	umsi_sim_fail_at(w->sim, 1, -UMSI_ENOMEM);
	assert_int_equal(w->ops->mmio_map(w->sim, 0xe0000000u, 16, &m),
			 -UMSI_ENOMEM);
	umsi_sim_fail_at(w->sim, 1, -UMSI_EIO);
	assert_int_equal(w->ops->cfg_write(w->sim, DEV_A, 0x3c, 1, 9),
			 -UMSI_EIO);
	assert_int_equal(umsi_sim_cfg_read(w->sim, DEV_A, 0x3c, 1), 0);
	umsi_sim_fail_at(w->sim, 2, -UMSI_EIO);
	umsi_sim_fail_at(w->sim, 0, 0);			/* cancelled */
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 0, 4, &v), 0);
	assert_int_equal(w->ops->cfg_read(w->sim, DEV_A, 0, 4, &v), 0);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.failures_injected, 5);
	assert_int_equal(s.fallible_calls, 10);
	world_free(w);
}

static void test_leaks_of_allocations_mappings_and_locks_are_visible(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_leaks before, l;
	void *a, *b, *m, *lock;
	umsi_irqflags_t f;

	(void)st;
	umsi_sim_leaks(w->sim, &before);
	a = w->ops->alloc(w->sim, 100);
	b = w->ops->alloc(w->sim, 28);
	assert_true(((uintptr_t)a & 15) == 0);
	/* Not zeroed (umsi/host.h): poisoned, so a library that relied on it fails. */
	assert_int_equal(((uint8_t *)a)[99], 0xa5);
	w->ops->mmio_map(w->sim, 0xe0000010u, 0x20, &m);
	assert_int_equal((uintptr_t)m & 0xfff, 0x10);
	lock = w->ops->lock_create(w->sim);
	f = w->ops->lock_acquire(w->sim, lock);
	umsi_sim_leaks(w->sim, &l);
	assert_int_equal(l.allocs, 2);
	assert_int_equal(l.alloc_bytes, 128);
	assert_int_equal(l.maps, 1);
	assert_int_equal(l.locks, 1);
	assert_int_equal(l.locks_held, 1);
	assert_false(umsi_sim_leaks_equal(&before, &l));
	w->ops->lock_release(w->sim, lock, f);
	w->ops->lock_destroy(w->sim, lock);
	w->ops->mmio_unmap(w->sim, m, 0x20);
	w->ops->free(w->sim, a, 100);
	umsi_sim_leaks(w->sim, &l);
	assert_int_equal(l.allocs, 1);
	assert_int_equal(l.locks_created, 1);
	assert_int_equal(l.locks_destroyed, 1);
	/* b leaks on purpose: destroy releases it. */
	(void)b;
	w->ops->free(w->sim, b, 28);
	umsi_sim_leaks(w->sim, &l);
	assert_true(umsi_sim_leaks_equal(&before, &l));
	world_free(w);
}

static void test_clock_is_virtual_and_moves_only_when_told(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);

	(void)st;
	assert_int_equal(w->ops->clock_ns(w->sim), 0);
	umsi_sim_clock_advance(w->sim, 1500);
	assert_int_equal(w->ops->clock_ns(w->sim), 1500);
	umsi_sim_clock_set_tick(w->sim, 10);
	assert_int_equal(w->ops->clock_ns(w->sim), 1500);
	assert_int_equal(w->ops->clock_ns(w->sim), 1510);
	assert_int_equal(umsi_sim_clock_now(w->sim), 1520);
	world_free(w);
}

static void test_log_lines_are_collected_for_the_test(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);

	(void)st;
	w->ops->log(w->sim, UMSI_LOG_WARN, "vector space low");
	w->ops->log(w->sim, UMSI_LOG_DEBUG, "hello");
	assert_string_equal(umsi_sim_log_text(w->sim),
			    "W: vector space low\nD: hello\n");
	umsi_sim_log_clear(w->sim);
	assert_string_equal(umsi_sim_log_text(w->sim), "");
	world_free(w);
}

static void test_dump_shows_pending_vectors_and_live_entries(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)st;
	add_msix(w, DEV_A, 4);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 2, msg_addr(1, 0), 0x41, 0);
	umsi_sim_cpu_irq_disable(w->sim, 1);
	umsi_sim_fire(w->sim, DEV_A, 2);
	umsi_sim_dump(w->sim, f);
	fclose(f);
	assert_non_null(strstr(buf, "cpu 1 apic 1 online irq-off 1 irr 0x41"));
	assert_non_null(strstr(buf, "0000:00:03.0 1af4:1041 present"));
	assert_non_null(strstr(buf, "unmasked/pending: 2u\n"));
	free(buf);
	world_free(w);
}

static void test_topology_reports_apic_ids_with_gaps_and_above_255(void **st)
{
	static const uint32_t ids[3] = { 1, 256, 4000 };
	struct world *w = world_cpus(3, ids, UMSI_PLAT_X2APIC |
				     UMSI_PLAT_EXT_DEST_ID);
	static const uint32_t dup[2] = { 3, 3 };
	struct umsi_sim_config bad = { .ncpus = 2, .apic_ids = dup };
	uint32_t id;

	(void)st;
	assert_int_equal(w->ops->cpu_count(w->sim), 3);
	assert_int_equal(w->ops->cpu_hwid(w->sim, 2, &id), 0);
	assert_int_equal(id, 4000);
	assert_int_equal(w->ops->cpu_hwid(w->sim, 3, &id), -UMSI_EINVAL);
	assert_true(w->ops->cpu_is_online(w->sim, 1));
	assert_int_equal(w->ops->platform_flags(w->sim),
			 UMSI_PLAT_X2APIC | UMSI_PLAT_EXT_DEST_ID);
	assert_int_equal(umsi_sim_msg_write(w->sim, msg_addr(4000,
				UMSI_PLAT_EXT_DEST_ID), 0x40), 1);
	assert_int_equal(w->log[0].cpu, 2);
	assert_null(umsi_sim_create(&bad));
	world_free(w);
}

/* ---- IO-APIC ------------------------------------------------------------------------------- */

/*
 * Several IO-APICs (config.ioapics): their inputs are the GSIs, back to
 * back from 0; a table with a gap, an IO-APIC of no inputs, more than 240
 * inputs in all, a pin count that disagrees, too many IO-APICs or none
 * given is refused.
 */
static void test_ioapics_are_back_to_back_from_gsi_0(void **st)
{
	struct umsi_ioapic_source t[2] = {
		{ .gsi_base = 0, .gsi_count = 24, .source_id = 0xf0f8 },
		{ .gsi_base = 24, .gsi_count = 32, .source_id = 0x0010 },
	};
	struct umsi_sim_config cfg = { .ncpus = 2, .ioapics = t,
				       .nioapics = 2 };
	struct umsi_sim_rte r;
	struct umsi_sim *sim = umsi_sim_create(&cfg);

	(void)st;
	assert_non_null(sim);
	assert_int_equal(umsi_sim_ioapic_get(sim, 55, &r), 0);
	assert_int_equal(umsi_sim_ioapic_get(sim, 56, &r), -UMSI_EINVAL);
	umsi_sim_destroy(sim);
	cfg.ioapic_pins = 56;
	sim = umsi_sim_create(&cfg);
	assert_non_null(sim);
	umsi_sim_destroy(sim);
	cfg.ioapic_pins = 48;
	assert_null(umsi_sim_create(&cfg));
	cfg.ioapic_pins = 0;
	t[1].gsi_base = 25;
	assert_null(umsi_sim_create(&cfg));
	t[1].gsi_base = 24;
	t[1].gsi_count = 0;
	assert_null(umsi_sim_create(&cfg));
	t[1].gsi_count = 217;
	assert_null(umsi_sim_create(&cfg));
	t[1].gsi_count = 216;
	sim = umsi_sim_create(&cfg);
	assert_non_null(sim);
	umsi_sim_destroy(sim);
	cfg.nioapics = UMSI_MAX_IOAPICS + 1;
	assert_null(umsi_sim_create(&cfg));
	cfg.nioapics = 2;
	cfg.ioapics = NULL;
	assert_null(umsi_sim_create(&cfg));
}

static void test_level_intx_is_redelivered_after_eoi_while_asserted(void **st)
{
	struct world *w = world_cpus(4, gap_ids, 0);
	struct umsi_intx_route r;
	struct umsi_sim_rte rte;
	struct umsi_gsi_entry e = GSI(4, 0x60, UMSI_INTX_LEVEL, UMSI_INTX_ACTIVE_LOW, false);

	(void)st;
	add_msix(w, DEV_A, 1);
	assert_int_equal(w->ops->intx_route(w->sim, DEV_A, 1, &r), 0);
	assert_int_equal(r.gsi, 19);
	assert_int_equal(r.trigger, UMSI_INTX_LEVEL);
	assert_int_equal(r.polarity, UMSI_INTX_ACTIVE_LOW);
	assert_int_equal(w->ops->gsi_program(w->sim, 19, &e), 0);
	/* The handler clears the device's condition on the third run. */
	w->intx_bdf = DEV_A;
	w->intx_after = 3;
	umsi_sim_intx_set(w->sim, DEV_A, true);
	assert_int_equal(w->n, 3);
	assert_int_equal(w->log[0].cpu, 2);
	umsi_sim_ioapic_get(w->sim, 19, &rte);
	assert_int_equal(rte.deliveries, 3);
	assert_false(rte.remote_irr);
	assert_false(rte.line);
	world_free(w);
}

static void test_level_intx_waits_for_eoi_with_remote_irr_set(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_rte rte;
	struct umsi_gsi_entry e = GSI(0, 0x60, UMSI_INTX_LEVEL, UMSI_INTX_ACTIVE_LOW, false);

	(void)st;
	add_msix(w, DEV_A, 1);
	w->ops->gsi_program(w->sim, 19, &e);
	w->no_eoi = true;
	umsi_sim_intx_set(w->sim, DEV_A, true);
	assert_int_equal(w->n, 1);
	umsi_sim_ioapic_get(w->sim, 19, &rte);
	assert_true(rte.remote_irr);
	assert_true(rte.line);
	/* Masking and unmasking does not resend while Remote IRR is set. */
	e.masked = true;
	w->ops->gsi_program(w->sim, 19, &e);
	e.masked = false;
	w->ops->gsi_program(w->sim, 19, &e);
	assert_int_equal(w->n, 1);
	w->no_eoi = false;
	w->intx_bdf = DEV_A;
	w->intx_after = 1;
	w->intx_seen = 0;
	umsi_sim_eoi(w->sim, 0x60);
	assert_int_equal(w->n, 2);
	world_free(w);
}

static void test_edge_gsi_delivers_on_rising_edges_only(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_gsi_entry e = GSI(0, 0x30, UMSI_INTX_EDGE, UMSI_INTX_ACTIVE_HIGH, false);

	(void)st;
	assert_int_equal(w->ops->gsi_program(w->sim, 4, &e), 0);
	umsi_sim_gsi_set(w->sim, 4, true);
	umsi_sim_gsi_set(w->sim, 4, true);
	assert_int_equal(w->n, 1);
	umsi_sim_gsi_set(w->sim, 4, false);
	umsi_sim_gsi_set(w->sim, 4, true);
	assert_int_equal(w->n, 2);
	/* An edge while masked is lost. */
	e.masked = true;
	w->ops->gsi_program(w->sim, 4, &e);
	umsi_sim_gsi_set(w->sim, 4, false);
	umsi_sim_gsi_set(w->sim, 4, true);
	e.masked = false;
	w->ops->gsi_program(w->sim, 4, &e);
	assert_int_equal(w->n, 2);
	e.msg.data = 5;
	assert_int_equal(w->ops->gsi_program(w->sim, 4, &e), -UMSI_EINVAL);
	assert_int_equal(w->ops->gsi_program(w->sim, 24, &e), -UMSI_EINVAL);
	world_free(w);
}

static void test_wrong_polarity_makes_an_idle_pci_line_active(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_gsi_entry e = GSI(0, 0x60, UMSI_INTX_LEVEL, UMSI_INTX_ACTIVE_HIGH, false);

	(void)st;
	w->no_eoi = true;
	assert_int_equal(w->ops->gsi_program(w->sim, 20, &e), 0);
	assert_int_equal(w->n, 1);
	world_free(w);
}

static void test_intx_pins_are_swizzled_behind_bridges(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_desc br = {
		.vendor = 0x8086, .device = 0x2448, .class_code = 0x060400,
		.header_type = 1, .secondary_bus = 1, .subordinate_bus = 1,
	};
	struct umsi_sim_dev_desc ep = { .vendor = 1, .device = 2,
					.intx_pin = 2 };
	struct umsi_intx_route r;

	(void)st;
	assert_int_equal(umsi_sim_add_device(w->sim, UMSI_BDF(0, 0, 1, 0),
					     &br), 0);
	assert_int_equal(umsi_sim_add_device(w->sim, UMSI_BDF(0, 1, 2, 0),
					     &ep), 0);
	/* INTB of 01:02.0 -> INTD at the bridge 00:01.0 -> 16 + (1+3)%4. */
	assert_int_equal(w->ops->intx_route(w->sim, UMSI_BDF(0, 1, 2, 0), 2,
					    &r), 0);
	assert_int_equal(r.gsi, 16);
	assert_int_equal(umsi_sim_set_intx_route(w->sim, UMSI_BDF(0, 1, 2, 0),
						 22), 0);
	w->ops->intx_route(w->sim, UMSI_BDF(0, 1, 2, 0), 2, &r);
	assert_int_equal(r.gsi, 22);
	umsi_sim_set_intx_route(w->sim, UMSI_BDF(0, 1, 2, 0), -1);
	assert_int_equal(w->ops->intx_route(w->sim, UMSI_BDF(0, 1, 2, 0), 2,
					    &r), -UMSI_ENOENT);
	assert_int_equal(w->ops->intx_route(w->sim, UMSI_BDF(0, 1, 2, 0), 0,
					    &r), -UMSI_ENOENT);
	world_free(w);
}

static void test_msix_entry_rewritten_while_live_is_counted(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_stats ds;
	uint64_t bar;

	(void)st;
	add_msix(w, DEV_A, 2);
	bar = umsi_sim_bar_addr(w->sim, DEV_A, 0);
	msix_enable(w, DEV_A, false);
	umsi_sim_mmio_write32(w->sim, bar + 8, 0x40);		/* masked */
	umsi_sim_mmio_write32(w->sim, bar + 12, 0);		/* unmask */
	umsi_sim_mmio_write32(w->sim, bar + 8, 0x41);		/* live! */
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	assert_int_equal(ds.msix_live_writes, 1);
	world_free(w);
}

static void count_hook(void *arg, enum umsi_sim_op op)
{
	(void)op;
	(*(unsigned int *)arg)++;
}

static void test_hook_skips_host_calls_made_by_interrupt_handlers(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	unsigned int calls = 0;
	struct umsi_sim_stats s;

	(void)st;
	w->host_eoi = true;
	umsi_sim_set_hook(w->sim, count_hook, &calls);
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x40);
	assert_int_equal(w->n, 1);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.op_calls[UMSI_SIM_OP_EOI], 1);
	assert_int_equal(s.eoi_missing, 0);
	assert_int_equal(calls, 0);
	(void)w->ops->clock_ns(w->sim);
	assert_int_equal(calls, 1);
	world_free(w);
}

static void test_dispatch_through_locks_interrupts_a_locked_section(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	void *l = w->ops->lock_create(w->sim);
	umsi_irqflags_t f;

	(void)st;
	umsi_sim_set_dispatch_through_locks(w->sim, true);
	f = w->ops->lock_acquire(w->sim, l);
	umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x41);	/* CPU 1: now */
	umsi_sim_msg_write(w->sim, msg_addr(0, 0), 0x40);	/* CPU 0: off */
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].cpu, 1);
	w->ops->lock_release(w->sim, l, f);
	assert_int_equal(w->n, 2);
	assert_int_equal(w->log[1].cpu, 0);
	w->ops->lock_destroy(w->sim, l);
	world_free(w);
}

static void test_device_left_enabled_by_firmware_sends_its_junk(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_stats s;

	(void)st;
	add_msix(w, DEV_A, 4);
	add_msi(w, DEV_B, 1, false, false);
	/* A previous kernel left MSI-X on, entry 2 unmasked, a stale address. */
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 2, 0xdead0000u, 0x41, 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 2), UMSI_SIM_FIRE_SENT);
	/* ... and MSI on with a message to a CPU that no longer exists. */
	msi_program(w, DEV_B, false, msg_addr(9, 0), 0x42, 0);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_B, 0), UMSI_SIM_FIRE_SENT);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(w->n, 0);
	assert_int_equal(s.stray_dma, 1);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_NO_CPU], 1);
	world_free(w);
}

static void test_multi_message_msi_through_remapping_uses_next_entries(void **st)
{
	static const uint32_t ids[2] = { 0, 500 };
	struct world *w = world_cpus(2, ids, UMSI_PLAT_IRQ_REMAP);
	struct umsi_msg m0, m1;

	(void)st;
	add_msi(w, DEV_A, 2, true, false);
	assert_int_equal(w->ops->remap_compose(w->sim, 10, 0, 0x60, &m0), 0);
	assert_int_equal(w->ops->remap_compose(w->sim, 11, 500, 0x61, &m1), 0);
	msi_program(w, DEV_A, true, m0.address, (uint16_t)m0.data, 1);
	umsi_sim_fire(w->sim, DEV_A, 0);
	umsi_sim_fire(w->sim, DEV_A, 1);	/* subhandle 1: entry 0 + 1 */
	assert_int_equal(w->n, 2);
	assert_int_equal(w->log[0].cpu, 0);
	assert_int_equal(w->log[0].vector, 0x60);
	assert_int_equal(w->log[1].cpu, 1);
	assert_int_equal(w->log[1].vector, 0x61);
	world_free(w);
}

static void test_ioapic_refuses_destinations_it_cannot_address(void **st)
{
	static const uint32_t ids[2] = { 0, 300 };
	struct world *w = world_cpus(2, ids, 0);
	struct world *x = world_cpus(2, ids, UMSI_PLAT_EXT_DEST_ID);
	struct umsi_gsi_entry e = GSI(300, 0x30, UMSI_INTX_EDGE, UMSI_INTX_ACTIVE_HIGH, false);

	(void)st;
	assert_int_equal(w->ops->gsi_program(w->sim, 3, &e), -UMSI_ERANGE);
	assert_int_equal(x->ops->gsi_program(x->sim, 3, &e), 0);
	umsi_sim_gsi_set(x->sim, 3, true);
	assert_int_equal(x->n, 1);
	assert_int_equal(x->log[0].cpu, 1);
	world_free(w);
	world_free(x);
}

static void test_msi_address_rewritten_while_enabled_is_counted(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	struct umsi_sim_dev_stats ds;

	(void)st;
	add_msi(w, DEV_A, 1, false, true);
	msi_program(w, DEV_A, false, msg_addr(0, 0), 0x40, 0);
	umsi_sim_cfg_write(w->sim, DEV_A, 0x80 + UMSI_MSI_DATA_32, 2, 0x41);
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	assert_int_equal(ds.msi_live_writes, 1);
	/* Masked first, as the safe update protocol does: not counted. */
	umsi_sim_cfg_write(w->sim, DEV_A, 0x80 + UMSI_MSI_MASK_32, 4, 1);
	umsi_sim_cfg_write(w->sim, DEV_A, 0x80 + UMSI_MSI_DATA_32, 2, 0x42);
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	assert_int_equal(ds.msi_live_writes, 1);
	world_free(w);
}

/*
 * A reference model of one MSI-X function, driven by random steps: every
 * fire is delivered at once, or becomes pending (once per entry) and is
 * delivered exactly when the entry and the function are both unmasked.
 */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_msix_random_mask_fire_sequences_match_the_spec_model(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	bool masked[8], pending[8], fmask = false;
	unsigned int expect[8] = { 0 };
	uint64_t x = 0x9e3779b97f4a7c15ull, bar;

	(void)st;
	add_msix(w, DEV_A, 8);
	bar = umsi_sim_bar_addr(w->sim, DEV_A, 0);
	msix_enable(w, DEV_A, false);
	for (unsigned int k = 0; k < 8; k++) {
		umsi_sim_msix_entry_set(w->sim, DEV_A, k, msg_addr(0, 0),
					0x40 + 0x10 * k + k, 1);
		masked[k] = true;
		pending[k] = false;
	}
	for (int step = 0; step < 20000; step++) {
		unsigned int k = (unsigned int)(rnd(&x) % 8);
		unsigned int op = (unsigned int)(rnd(&x) % 5);

		switch (op) {
		case 0:
		case 1:	/* fire */
			umsi_sim_fire(w->sim, DEV_A, k);
			if (masked[k] || fmask)
				pending[k] = true;
			else
				expect[k]++;
			break;
		case 2:	/* toggle the entry's mask bit */
			masked[k] = !masked[k];
			umsi_sim_mmio_write32(w->sim, bar + 16 * k + 12,
					      masked[k]);
			break;
		default:	/* toggle Function Mask now and then */
			if (op == 4 && k != 0)
				break;
			fmask = !fmask;
			msix_enable(w, DEV_A, fmask);
			break;
		}
		for (unsigned int j = 0; j < 8; j++) {
			if (pending[j] && !masked[j] && !fmask) {
				pending[j] = false;
				expect[j]++;
			}
			assert_int_equal(umsi_sim_msix_pending(w->sim, DEV_A, j),
					 pending[j]);
		}
	}
	/* Each entry has its own vector: count per vector at the APIC. */
	for (unsigned int k = 0; k < 8; k++) {
		struct umsi_sim_vec_stats v;

		umsi_sim_vec_stats(w->sim, 0, (uint8_t)(0x40 + 0x10 * k + k),
				   &v);
		assert_int_equal(v.dispatched, expect[k]);
		assert_true(expect[k] > 100);
	}
	world_free(w);
}

/* ---- Threaded mode ------------------------------------------------------------------------------ */

static void test_threaded_cpus_take_their_own_interrupts(void **st)
{
	struct umsi_sim_config cfg = { .ncpus = 4, .apic_ids = gap_ids,
				       .threaded = true };
	struct world *w = world_new(&cfg);
	struct umsi_sim_stats s;
	unsigned int per_cpu[4] = { 0 };

	(void)st;
	add_msix(w, DEV_A, 4);
	msix_enable(w, DEV_A, false);
	for (unsigned int k = 0; k < 4; k++)
		umsi_sim_msix_entry_set(w->sim, DEV_A, k,
					msg_addr(gap_ids[k], 0), 0x40 + k, 0);
	for (unsigned int i = 0; i < 200; i++)
		umsi_sim_fire(w->sim, DEV_A, i % 4);
	umsi_sim_quiesce(w->sim);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.delivered + s.irr_coalesced, 200);
	assert_int_equal(nrec(w), s.dispatched);
	pthread_mutex_lock(&w->mu);
	for (unsigned int i = 0; i < w->n; i++) {
		assert_int_equal(w->log[i].vector, 0x40 + w->log[i].cpu);
		assert_int_equal(w->log[i].current, w->log[i].cpu);
		per_cpu[w->log[i].cpu]++;
	}
	pthread_mutex_unlock(&w->mu);
	for (unsigned int c = 0; c < 4; c++)
		assert_true(per_cpu[c] >= 1);
	assert_int_equal(s.eoi_missing, 0);
	world_free(w);
}

struct lock_worker {
	struct world *w;
	void *lock;
	unsigned int *counter;
};

static void locked_increment(void *arg)
{
	struct lock_worker *lw = arg;

	for (int i = 0; i < 100; i++) {
		umsi_irqflags_t f = lw->w->ops->lock_acquire(lw->w->sim,
							     lw->lock);
		(*lw->counter)++;
		lw->w->ops->lock_release(lw->w->sim, lw->lock, f);
	}
}

struct xcall_arg {
	struct lock_worker lw;
	uint32_t cpu;
	uint32_t seen;
};

static void xcall_body(void *arg)
{
	struct xcall_arg *x = arg;

	x->seen = x->lw.w->ops->current_cpu(x->lw.w->sim);
	locked_increment(&x->lw);
}

static void *xcall_poster(void *arg)
{
	struct xcall_arg *x = arg;

	assert_int_equal(x->lw.w->ops->run_on_cpu(x->lw.w->sim, x->cpu,
						  xcall_body, x), 0);
	return NULL;
}

static void test_threaded_cross_calls_and_locks_are_real(void **st)
{
	struct umsi_sim_config cfg = { .ncpus = 3, .threaded = true };
	struct world *w = world_new(&cfg);
	unsigned int counter = 0;
	void *lock = w->ops->lock_create(w->sim);
	struct xcall_arg xa[2] = {
		{ { w, lock, &counter }, 1, 99 },
		{ { w, lock, &counter }, 2, 99 },
	};
	pthread_t th[2];
	struct umsi_sim_leaks l;

	(void)st;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, xcall_poster, &xa[i]);
	/* Meanwhile interrupts keep arriving everywhere. */
	for (int i = 0; i < 100; i++)
		umsi_sim_msg_write(w->sim, msg_addr((uint32_t)i % 3, 0),
				   0x40 + (uint32_t)i % 16);
	locked_increment(&xa[0].lw);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	umsi_sim_quiesce(w->sim);
	assert_int_equal(xa[0].seen, 1);
	assert_int_equal(xa[1].seen, 2);
	pthread_mutex_lock(&w->mu);
	assert_int_equal(counter, 300);
	pthread_mutex_unlock(&w->mu);
	umsi_sim_leaks(w->sim, &l);
	assert_int_equal(l.locks_held, 0);
	w->ops->lock_destroy(w->sim, lock);
	world_free(w);
}

struct firer {
	struct world *w;
	unsigned int sent, pending, coalesced;
};

static void *fire_thread(void *arg)
{
	struct firer *f = arg;

	for (int i = 0; i < 2000; i++) {
		int r = umsi_sim_fire(f->w->sim, DEV_A, (unsigned int)i % 2);

		if (r == UMSI_SIM_FIRE_SENT)
			f->sent++;
		else if (r == UMSI_SIM_FIRE_PENDING)
			f->pending++;
		else if (r == UMSI_SIM_FIRE_COALESCED)
			f->coalesced++;
	}
	return NULL;
}

static void test_threaded_masking_races_lose_no_message(void **st)
{
	struct umsi_sim_config cfg = { .ncpus = 2, .threaded = true };
	struct world *w = world_new(&cfg);
	struct firer f = { w, 0, 0, 0 };
	struct umsi_sim_dev_stats ds;
	struct umsi_sim_stats s;
	pthread_t th;
	void *v;

	(void)st;
	add_msix(w, DEV_A, 2);
	msix_enable(w, DEV_A, false);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 0, msg_addr(0, 0), 0x40, 0);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 1, msg_addr(1, 0), 0x50, 0);
	assert_int_equal(w->ops->mmio_map(w->sim,
		umsi_sim_bar_addr(w->sim, DEV_A, 0), 32, &v), 0);
	pthread_create(&th, NULL, fire_thread, &f);
	/* The library masks and unmasks both entries while the device fires. */
	for (int i = 0; i < 2000; i++)
		w->ops->mmio_write32(w->sim, (char *)v + 16 * (i % 2) + 12,
				     (uint32_t)(i / 2) & 1);
	pthread_join(th, NULL);
	w->ops->mmio_write32(w->sim, (char *)v + 12, 0);
	w->ops->mmio_write32(w->sim, (char *)v + 16 + 12, 0);
	umsi_sim_quiesce(w->sim);
	umsi_sim_dev_stats(w->sim, DEV_A, &ds);
	umsi_sim_stats(w->sim, &s);
	/* Every fire was sent, or made pending and sent on unmask, or
	 * merged into a pending one. */
	assert_int_equal(f.sent + f.pending + f.coalesced, 2000);
	assert_int_equal(ds.msgs, f.sent + f.pending);
	assert_int_equal(s.delivered + s.irr_coalesced, ds.msgs);
	assert_int_equal(s.dispatched, s.delivered);
	assert_int_equal(nrec(w), s.dispatched);
	assert_int_equal(umsi_sim_msix_pending(w->sim, DEV_A, 0), 0);
	w->ops->mmio_unmap(w->sim, v, 32);
	world_free(w);
}

/* ---- The largest machines ------------------------------------------------------------------ */

static void test_8192_cpus_with_gapped_apic_ids_take_messages_by_id(void **st)
{
	uint32_t *ids = calloc(UMSI_SIM_MAX_CPUS, sizeof(*ids));
	struct umsi_sim_config cfg = { .ncpus = UMSI_SIM_MAX_CPUS,
				       .plat_flags = UMSI_PLAT_X2APIC |
						     UMSI_PLAT_EXT_DEST_ID };
	static const uint32_t cpus[] = { 0, 1, 4095, 8190, 8191 };
	struct umsi_sim_stats s;
	struct world *w;

	(void)st;
	assert_int_equal(UMSI_SIM_MAX_CPUS, 8192);
	assert_non_null(ids);
	/* APIC IDs 1, 4, 7, ... 24574: gaps everywhere, within 15 bits. */
	for (uint32_t i = 0; i < UMSI_SIM_MAX_CPUS; i++)
		ids[i] = 3 * i + 1;
	cfg.apic_ids = ids;
	w = world_new(&cfg);
	for (unsigned i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		uint32_t id = ids[cpus[i]];

		assert_int_equal(umsi_sim_msg_write(w->sim,
			msg_addr(id, UMSI_PLAT_EXT_DEST_ID), 0x40), 1);
		assert_int_equal(w->log[i].cpu, cpus[i]);
		assert_int_equal(w->log[i].vector, 0x40);
	}
	/* An ID in a gap, and one past the last, name no CPU. */
	assert_int_equal(umsi_sim_msg_write(w->sim,
		msg_addr(3, UMSI_PLAT_EXT_DEST_ID), 0x40), 0);
	assert_int_equal(umsi_sim_msg_write(w->sim,
		msg_addr(24577, UMSI_PLAT_EXT_DEST_ID), 0x40), 0);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_NO_CPU], 2);
	assert_int_equal(umsi_sim_ncpus(w->sim), UMSI_SIM_MAX_CPUS);
	world_free(w);
	/* One CPU more, or one APIC ID twice (the last two), is refused. */
	cfg.apic_ids = NULL;
	cfg.ncpus = UMSI_SIM_MAX_CPUS + 1;
	assert_null(umsi_sim_create(&cfg));
	cfg.ncpus = UMSI_SIM_MAX_CPUS;
	cfg.apic_ids = ids;
	ids[UMSI_SIM_MAX_CPUS - 1] = ids[UMSI_SIM_MAX_CPUS - 2];
	assert_null(umsi_sim_create(&cfg));
	free(ids);
}

static void test_interrupts_pending_on_many_cpus_are_taken_lowest_cpu_first(void **st)
{
	static const uint32_t order[] = { 8000, 63, 4000, 64, 0, 8191 };
	static const uint32_t taken[] = { 0, 63, 64, 4000, 8000, 8191 };
	struct world *w = world_cpus(UMSI_SIM_MAX_CPUS, NULL,
				     UMSI_PLAT_X2APIC | UMSI_PLAT_EXT_DEST_ID);
	void *l = w->ops->lock_create(w->sim);
	umsi_irqflags_t f;

	(void)st;
	f = w->ops->lock_acquire(w->sim, l);
	for (unsigned i = 0; i < 6; i++)
		umsi_sim_msg_write(w->sim,
			msg_addr(order[i], UMSI_PLAT_EXT_DEST_ID), 0x50);
	assert_int_equal(w->n, 0);
	assert_true(umsi_sim_irr_test(w->sim, 4000, 0x50));
	w->ops->lock_release(w->sim, l, f);
	assert_int_equal(w->n, 6);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(w->log[i].cpu, taken[i]);
	assert_false(umsi_sim_irr_test(w->sim, 4000, 0x50));
	w->ops->lock_destroy(w->sim, l);
	world_free(w);
}

/* The data of MSI-X entry 0 as MMIO at @phys + 8 reads it. */
static uint32_t entry0_data_at(struct world *w, uint64_t phys)
{
	return umsi_sim_mmio_read32(w->sim, phys + UMSI_MSIX_ENTRY_DATA);
}

static void test_overlapping_bars_decode_as_the_first_function_added(void **st)
{
	struct world *w = world_cpus(1, NULL, 0);
	uint64_t a, b;
	uint8_t *raw;

	(void)st;
	add_msix(w, DEV_A, 4);
	add_msix(w, DEV_B, 4);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 0, 0, 0xaaaa, 1);
	umsi_sim_msix_entry_set(w->sim, DEV_B, 0, 0, 0xbbbb, 1);
	a = umsi_sim_bar_addr(w->sim, DEV_A, 0);
	b = umsi_sim_bar_addr(w->sim, DEV_B, 0);
	assert_int_equal(entry0_data_at(w, a), 0xaaaa);
	assert_int_equal(entry0_data_at(w, b), 0xbbbb);
	/* Software moves B onto A: A, added first, answers. */
	assert_int_equal(umsi_sim_cfg_write(w->sim, DEV_B, UMSI_PCI_BAR0, 4,
					    (uint32_t)a), 0);
	assert_int_equal(entry0_data_at(w, a), 0xaaaa);
	assert_int_equal(entry0_data_at(w, b), 0xffffffffu);
	/* A removed: the present function comes first. */
	assert_int_equal(umsi_sim_remove_device(w->sim, DEV_A), 0);
	assert_int_equal(entry0_data_at(w, a), 0xbbbb);
	/* Raw pokes are seen too: B back where it was. */
	raw = umsi_sim_cfg_raw(w->sim, DEV_B);
	raw[UMSI_PCI_BAR0 + 2] = (uint8_t)(b >> 16);
	raw[UMSI_PCI_BAR0 + 3] = (uint8_t)(b >> 24);
	assert_int_equal(entry0_data_at(w, b), 0xbbbb);
	/* A, removed, still claims its window (reading all-ones). */
	assert_int_equal(entry0_data_at(w, a), 0xffffffffu);
	world_free(w);
}

static void test_many_functions_are_found_by_address_and_bdf(void **st)
{
	struct world *w = world_cpus(2, NULL, 0);
	enum { N = 2000 };
	static uint64_t bar[N];

	(void)st;
	for (unsigned i = 0; i < N; i++) {
		umsi_bdf_t bdf = UMSI_BDF(0, 1 + i / 32, i % 32, 0);

		add_msix(w, bdf, 4);
		umsi_sim_msix_entry_set(w->sim, bdf, 0, 0, i, 1);
		bar[i] = umsi_sim_bar_addr(w->sim, bdf, 0);
	}
	for (unsigned i = 0; i < N; i += 7) {
		umsi_bdf_t bdf = UMSI_BDF(0, 1 + i / 32, i % 32, 0);

		assert_int_equal(entry0_data_at(w, bar[i]), i);
		assert_int_equal(umsi_sim_cfg_read(w->sim, bdf, 0, 2), 0x1af4);
	}
	/* Removed, then added again at its BDF: the new function answers. */
	assert_int_equal(umsi_sim_remove_device(w->sim, UMSI_BDF(0, 2, 5, 0)), 0);
	assert_int_equal(umsi_sim_cfg_read(w->sim, UMSI_BDF(0, 2, 5, 0), 0, 2),
			 0xffff);
	add_msi(w, UMSI_BDF(0, 2, 5, 0), 1, false, false);
	assert_int_equal(umsi_sim_cfg_read(w->sim, UMSI_BDF(0, 2, 5, 0), 0, 2),
			 0x8086);
	assert_int_equal(umsi_sim_cfg_read(w->sim, UMSI_BDF(0, 99, 0, 0), 0, 2),
			 0xffff);
	world_free(w);
}

/* The handle of a remappable message: bits 19:5, and bit 15 in bit 2. */
static uint32_t remap_handle(const struct umsi_msg *m)
{
	return (uint32_t)((m->address >> 5) & 0x7fff) |
	       (uint32_t)((m->address >> 2) & 1) << 15;
}

static void test_remap_table_holds_65536_entries_lowest_free_first(void **st)
{
	struct world *w = world_cpus(2, NULL, UMSI_PLAT_IRQ_REMAP |
				     UMSI_PLAT_X2APIC);
	uint32_t n = UMSI_SIM_IRTE_COUNT, irq, apic;
	struct umsi_msg m;
	uint8_t vec;

	(void)st;
	assert_int_equal(n, 65536);
	/* IRQ numbers far apart: the entries are handed out in order. */
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(w->ops->remap_compose(w->sim, i * 977 + 5,
						       i & 1, 0x40, &m), 0);
	assert_int_equal(umsi_sim_irte_used(w->sim), n);
	assert_int_equal(w->ops->remap_compose(w->sim, 3, 0, 0x40, &m),
			 -UMSI_ENOSPC);
	assert_int_equal(umsi_sim_irte_get(w->sim, n - 1, &irq, &apic, &vec),
			 0);
	assert_int_equal(irq, (n - 1) * 977 + 5);
	/* Free three; they come back lowest first, an IRQ keeps its own. */
	w->ops->remap_free(w->sim, 40000 * 977 + 5);
	w->ops->remap_free(w->sim, 7 * 977 + 5);
	w->ops->remap_free(w->sim, 65000 * 977 + 5);
	assert_int_equal(umsi_sim_irte_used(w->sim), n - 3);
	assert_int_equal(w->ops->remap_compose(w->sim, 9 * 977 + 5, 1, 0x41,
					       &m), 0);
	assert_int_equal(remap_handle(&m), 9);
	assert_int_equal(w->ops->remap_compose(w->sim, 1, 0, 0x42, &m), 0);
	assert_int_equal(remap_handle(&m), 7);
	assert_int_equal(w->ops->remap_compose(w->sim, 2, 0, 0x43, &m), 0);
	assert_int_equal(remap_handle(&m), 40000);
	assert_int_equal(umsi_sim_irte_get(w->sim, 9, &irq, &apic, &vec), 0);
	assert_int_equal(apic, 1);
	assert_int_equal(vec, 0x41);
	/* Every entry is still found by its IRQ after the moves. */
	for (uint32_t i = 0; i < n; i++) {
		if (i == 7 || i == 40000 || i == 65000)
			continue;
		w->ops->remap_free(w->sim, i * 977 + 5);
	}
	w->ops->remap_free(w->sim, 1);
	w->ops->remap_free(w->sim, 2);
	assert_int_equal(umsi_sim_irte_used(w->sim), 0);
	assert_int_equal(umsi_sim_irte_get(w->sim, 0, &irq, &apic, &vec),
			 -UMSI_ENOENT);
	world_free(w);
}

/* ---- Soak: bring-up and tear-down at the largest size --------------------------------------- */

/*
 * The library on the simulator at 8192 CPUs: functions added, vectors
 * allocated, a handler on each, each fired once, then everything torn
 * down (vectors freed then the function removed, or the function removed
 * at once, in either order), round after round. After each round the
 * host's accounting (allocations, bytes, mappings, locks) and the vector
 * matrix (as a whole and every CPU) are exactly as before the first.
 * UMSI_SIM_SOAK_VECTORS sets the MSI-X vectors per round (default 2^17;
 * `make soak-sim` runs 10^6).
 */
struct soak {
	struct umsi_sim *sim;
	struct umsi_system *sys;
	uint32_t ncpus;
	unsigned ndev;
	struct soak_dev {
		umsi_bdf_t bdf;
		struct umsi_pci_dev *dev;
		unsigned want;
		uint32_t flags;
		uint64_t handled;
	} *devs;
	struct umsi_matrix_cpu_stats *cpu0;
};

static int soak_dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

static int soak_handler(uint32_t irq, void *arg)
{
	struct soak_dev *d = arg;

	(void)irq;
	d->handled++;
	return UMSI_IRQ_HANDLED;
}

/* MSI-X of @n entries (table in a 64-bit BAR 2), or MSI of @msi messages. */
static void soak_add_sim_dev(struct soak *k, umsi_bdf_t bdf, uint16_t n,
			     uint8_t msi)
{
	struct umsi_sim_dev_desc d = {
		.vendor = 0x15b3, .device = 0x101d, .class_code = 0x020000,
		.bars = { [0] = { .size = 0x4000 } },
		.pcie = { .present = true, .type = UMSI_PCIE_TYPE_ENDPOINT },
	};

	if (n) {
		d.msix = (struct umsi_sim_msix_desc){ .present = true,
			.nentries = n, .table_bar = 2, .pba_bar = 2,
			.pba_offset = 0x10000 - 0x1000 };
		d.bars[2] = (struct umsi_sim_bar_desc){ .size = 0x10000,
							.is64 = true };
	} else {
		d.msi = (struct umsi_sim_msi_desc){ .present = true,
			.nvec = msi, .is64 = true, .maskbit = true };
	}
	assert_int_equal(umsi_sim_add_device(k->sim, bdf, &d), 0);
}

static void soak_setup(struct soak *k, unsigned msix_vectors)
{
	struct umsi_sim_config scfg = { .ncpus = UMSI_SIM_MAX_CPUS,
		.plat_flags = UMSI_PLAT_X2APIC | UMSI_PLAT_EXT_DEST_ID };
	unsigned nmsix = (msix_vectors + 2047) / 2048;
	struct umsi_config ucfg = { .max_irqs = nmsix * 2048 + 8192 };
	unsigned j = 0;

	memset(k, 0, sizeof(*k));
	k->ncpus = UMSI_SIM_MAX_CPUS;
	/* MSI-X unmanaged, 8 managed (spread), 16 MSI blocks of 32. */
	k->ndev = nmsix + 8 + 16;
	k->devs = calloc(k->ndev, sizeof(*k->devs));
	k->cpu0 = calloc(k->ncpus, sizeof(*k->cpu0));
	assert_non_null(k->devs);
	assert_non_null(k->cpu0);
	k->sim = umsi_sim_create(&scfg);
	assert_non_null(k->sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), k->sim,
					    &ucfg, &k->sys), 0);
	/* The PCI layer's state lives from its first call to destroy. */
	assert_int_equal(umsi_policy_parse(k->sys, ""), 0);
	umsi_sim_set_dispatch(k->sim, soak_dispatch, k->sys);
	for (unsigned i = 0; i < k->ndev; i++, j++) {
		struct soak_dev *d = &k->devs[i];

		d->bdf = UMSI_BDF(0, 1 + j / 32, j % 32, 0);
		if (i < nmsix) {
			d->want = i + 1 < nmsix ? 2048 :
				  msix_vectors - 2048 * (nmsix - 1);
			d->flags = UMSI_PCI_IRQ_MSIX;
			soak_add_sim_dev(k, d->bdf, 2048, 0);
		} else if (i < nmsix + 8) {
			d->want = 64;
			d->flags = UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_AFFINITY;
			soak_add_sim_dev(k, d->bdf, 64, 0);
		} else {
			d->want = 32;
			d->flags = UMSI_PCI_IRQ_MSI;
			soak_add_sim_dev(k, d->bdf, 0, 32);
		}
	}
}

/* Every device up, a handler on each vector, each vector fired once. */
static void soak_bring_up(struct soak *k)
{
	for (unsigned i = 0; i < k->ndev; i++) {
		struct soak_dev *d = &k->devs[i];

		assert_int_equal(umsi_pci_add(k->sys, d->bdf, NULL,
					      UMSI_PCI_ADD_FRESH, &d->dev), 0);
		assert_int_equal(umsi_pci_alloc_irq_vectors(d->dev, d->want,
							    d->want, d->flags),
				 (int)d->want);
		for (unsigned v = 0; v < d->want; v++)
			assert_int_equal(umsi_pci_request_irq(d->dev, v,
					 soak_handler, 0, "soak", d), 0);
		d->handled = 0;
		for (unsigned v = 0; v < d->want; v++)
			assert_int_equal(umsi_sim_fire(k->sim, d->bdf, v),
					 UMSI_SIM_FIRE_SENT);
		assert_int_equal(d->handled, d->want);
	}
}

/* Round @r: free then remove, or remove at once; forwards or backwards. */
static void soak_tear_down(struct soak *k, unsigned r)
{
	for (unsigned n = 0; n < k->ndev; n++) {
		struct soak_dev *d = &k->devs[r & 2 ? k->ndev - 1 - n : n];

		if (r & 1)
			umsi_pci_free_irq_vectors(d->dev);
		umsi_pci_remove(k->sys, d->dev);
		d->dev = NULL;
	}
}

static void soak_matrix_snapshot(struct soak *k,
				 struct umsi_matrix_cpu_stats *out)
{
	const struct umsi_matrix *m = umsi_system_matrix(k->sys);

	for (uint32_t c = 0; c < k->ncpus; c++)
		assert_int_equal(umsi_matrix_cpu_stats(m, c, &out[c]), 0);
}

static unsigned soak_live_irqs(struct soak *k)
{
	unsigned n = 0;

	for (int irq = umsi_irq_next(k->sys, 0); irq >= 0;
	     irq = umsi_irq_next(k->sys, (uint32_t)irq + 1))
		n++;
	return n;
}

static void test_soak_8192_cpus_bring_up_and_tear_down_leave_exact_accounting(void **st)
{
	const char *env = getenv("UMSI_SIM_SOAK_VECTORS");
	unsigned vectors = env ? (unsigned)strtoul(env, NULL, 0) : 1u << 17;
	struct umsi_matrix_cpu_stats *now;
	struct umsi_matrix_stats ms0, ms;
	struct umsi_sim_leaks lk0, lk;
	struct umsi_sim_stats s;
	unsigned live0, rounds = 4;
	uint64_t fired = 0;
	struct soak k;

	(void)st;
	if (vectors < 2048 || vectors > 1200000)
		vectors = 1u << 17;
	soak_setup(&k, vectors);
	now = calloc(k.ncpus, sizeof(*now));
	assert_non_null(now);
	umsi_sim_leaks(k.sim, &lk0);
	umsi_matrix_stats(umsi_system_matrix(k.sys), &ms0);
	soak_matrix_snapshot(&k, k.cpu0);
	live0 = soak_live_irqs(&k);
	for (unsigned r = 0; r < rounds; r++) {
		soak_bring_up(&k);
		for (unsigned i = 0; i < k.ndev; i++)
			fired += k.devs[i].want;
		umsi_matrix_stats(umsi_system_matrix(k.sys), &ms);
		assert_int_equal(ms.allocated + ms.managed_allocated,
				 ms0.allocated + ms0.managed_allocated +
				 vectors + 8 * 64 + 16 * 32);
		soak_tear_down(&k, r);
		/* Exactly as before the first round. */
		umsi_sim_leaks(k.sim, &lk);
		assert_true(umsi_sim_leaks_equal(&lk0, &lk));
		assert_int_equal(lk.maps, lk0.maps);
		umsi_matrix_stats(umsi_system_matrix(k.sys), &ms);
		assert_memory_equal(&ms, &ms0, sizeof(ms));
		soak_matrix_snapshot(&k, now);
		assert_memory_equal(now, k.cpu0, k.ncpus * sizeof(*now));
		assert_int_equal(soak_live_irqs(&k), live0);
	}
	/* Every message reached the CPU and vector it named, once. */
	umsi_sim_stats(k.sim, &s);
	assert_int_equal(s.msgs, fired);
	assert_int_equal(s.delivered, fired);
	assert_int_equal(s.dispatched, fired);
	assert_int_equal(s.undeliverable + s.irr_coalesced + s.unassigned +
			 s.eoi_missing + s.eoi_mismatch + s.bad_accesses +
			 s.lock_errors, 0);
	umsi_system_destroy(k.sys);
	umsi_sim_destroy(k.sim);
	free(now);
	free(k.cpu0);
	free(k.devs);
}

/* ---- The GICv3 ITS machine's redistributors --------------------------------- */

#define ITS_REG(off)    (UMSI_SIM_ITS_BASE + (off))
#define ITS_TRANSLATER  (UMSI_SIM_ITS_BASE + 0x10040)
#define ITS_VALID       (1ull << 63)
#define GICR_PROPBASER  0x70u
#define GICR_PENDBASER  0x78u
#define GICR_PTZ        (1ull << 62)
#define ITS_DEVID       0x0100u

/* An ITS machine whose tables this test fills by hand, recording LPIs. */
struct its_world {
	struct umsi_sim *sim;
	const struct umsi_host_ops *ops;
	uint64_t *queue;
	uint32_t cwriter;
	uint32_t taken[64][2];	/* (cpu, INTID) in order */
	unsigned int n;
};

static int its_rec(void *arg, uint32_t cpu, uint32_t id)
{
	struct its_world *w = arg;

	if (w->n < 64) {
		w->taken[w->n][0] = cpu;
		w->taken[w->n][1] = id;
		w->n++;
	}
	return 1;
}

static void *its_zalloc(struct its_world *w, size_t size, size_t align,
			uint64_t *pa)
{
	void *p = w->ops->phys_alloc(w->sim, size, align, pa);

	assert_non_null(p);
	memset(p, 0, size);	/* phys_alloc poisons */
	return p;
}

static void mmio_write64(struct umsi_sim *sim, uint64_t phys, uint64_t v)
{
	umsi_sim_mmio_write32(sim, phys, (uint32_t)v);
	umsi_sim_mmio_write32(sim, phys + 4, (uint32_t)(v >> 32));
}

static uint64_t mmio_read64(struct umsi_sim *sim, uint64_t phys)
{
	return umsi_sim_mmio_read32(sim, phys) |
	       (uint64_t)umsi_sim_mmio_read32(sim, phys + 4) << 32;
}

/* Queue one command and let the ITS run it. */
static void its_cmd(struct its_world *w, uint64_t c0, uint64_t c1,
		    uint64_t c2)
{
	uint64_t *c = &w->queue[w->cwriter / 8];

	c[0] = c0;
	c[1] = c1;
	c[2] = c2;
	c[3] = 0;
	w->cwriter = (w->cwriter + 32) % 4096;
	umsi_sim_mmio_write32(w->sim, ITS_REG(0x88), w->cwriter);
	assert_int_equal(umsi_sim_mmio_read32(w->sim, ITS_REG(0x90)),
			 w->cwriter);	/* ran, not stalled */
}

static void its_mapti(struct its_world *w, uint32_t event, uint32_t intid,
		      uint32_t icid)
{
	its_cmd(w, 0x0a | (uint64_t)ITS_DEVID << 32,
		event | (uint64_t)intid << 32, icid);
}

static void its_event_cmd(struct its_world *w, uint8_t cmd, uint32_t event,
			  uint64_t c2)
{
	its_cmd(w, cmd | (uint64_t)ITS_DEVID << 32, event, c2);
}

/*
 * @ncpus CPUs, the ITS enabled with a device table, a collection table,
 * collection n on CPU n, and device ITS_DEVID mapped with 16 events.
 */
static struct its_world *its_world_new(uint32_t ncpus, const uint32_t *ids)
{
	struct umsi_sim_config cfg = { .ncpus = ncpus, .apic_ids = ids,
				       .controller = UMSI_SIM_CTL_ITS };
	struct its_world *w = calloc(1, sizeof(*w));
	uint64_t dt, ct, q, itt;

	assert_non_null(w);
	w->sim = umsi_sim_create(&cfg);
	assert_non_null(w->sim);
	w->ops = umsi_sim_host_ops();
	umsi_sim_set_dispatch_id(w->sim, its_rec, w);
	its_zalloc(w, 65536, 65536, &dt);
	its_zalloc(w, 65536, 65536, &ct);
	w->queue = its_zalloc(w, 4096, 4096, &q);
	its_zalloc(w, 16 * 12, 256, &itt);
	mmio_write64(w->sim, ITS_REG(0x100), ITS_VALID | dt);
	mmio_write64(w->sim, ITS_REG(0x108), ITS_VALID | ct);
	mmio_write64(w->sim, ITS_REG(0x80), ITS_VALID | q);
	umsi_sim_mmio_write32(w->sim, ITS_REG(0), 1);
	for (uint32_t c = 0; c < ncpus; c++)
		its_cmd(w, 0x09, 0, ITS_VALID | (uint64_t)c << 16 | c);
	its_cmd(w, 0x08 | (uint64_t)ITS_DEVID << 32, 3, ITS_VALID | itt);
	return w;
}

static void its_world_free(struct its_world *w)
{
	umsi_sim_destroy(w->sim);	/* frees the phys_alloc blocks too */
	free(w);
}

/* Software's LPI tables for @cpu's redistributor (@idbits: IDbits). */
struct rd_tables {
	uint8_t *prop, *pend;
	uint64_t prop_pa, pend_pa;
};

static void rd_tables_new(struct its_world *w, uint32_t cpu, uint32_t idbits,
			  bool ptz, struct rd_tables *t)
{
	uint64_t rd = umsi_sim_gicr_addr(w->sim, cpu);
	size_t n = (1u << (idbits + 1)) - 8192;

	t->prop = its_zalloc(w, n, 4096, &t->prop_pa);
	t->pend = its_zalloc(w, (1u << (idbits + 1)) / 8, 65536, &t->pend_pa);
	mmio_write64(w->sim, rd + GICR_PROPBASER, t->prop_pa | idbits);
	mmio_write64(w->sim, rd + GICR_PENDBASER,
		     t->pend_pa | (ptz ? GICR_PTZ : 0));
}

static bool pend_bit(const struct rd_tables *t, uint32_t intid)
{
	return (t->pend[intid / 8] >> (intid % 8)) & 1;
}

static struct umsi_sim_its_stats its_stats(struct its_world *w)
{
	struct umsi_sim_its_stats s;

	assert_int_equal(umsi_sim_its_stats(w->sim, &s), 0);
	return s;
}

static uint64_t bad_accesses(struct umsi_sim *sim)
{
	struct umsi_sim_stats s;

	umsi_sim_stats(sim, &s);
	return s.bad_accesses;
}

static void test_its_redistributor_registers_read_as_gicv3_says(void **st)
{
	static const uint32_t ids[3] = { 0x000, 0x001, 0x100 };
	struct its_world *w = its_world_new(3, ids);
	struct umsi_sim_config xc = { .ncpus = 1 };
	struct umsi_sim *x86 = umsi_sim_create(&xc);
	uint64_t rd1 = umsi_sim_gicr_addr(w->sim, 1);
	uint64_t rd2 = umsi_sim_gicr_addr(w->sim, 2);
	volatile uint32_t *frame, *past;
	uint64_t bad;

	(void)st;
	assert_non_null(x86);
	assert_int_equal(umsi_sim_gicr_addr(w->sim, 0), UMSI_SIM_GICR_BASE);
	assert_int_equal(rd2, UMSI_SIM_GICR_BASE + 2 * UMSI_SIM_GICR_STRIDE);
	assert_int_equal(umsi_sim_gicr_addr(w->sim, 3), 0);
	assert_int_equal(umsi_sim_gicr_addr(x86, 0), 0);
	/* GICR_TYPER: PLPIS, Processor_Number, Last, the hwid as affinity. */
	assert_int_equal(mmio_read64(w->sim, rd1 + 8),
			 (uint64_t)0x001 << 32 | 1u << 8 | 1);
	assert_int_equal(mmio_read64(w->sim, rd2 + 8),
			 (uint64_t)0x100 << 32 | 2u << 8 | 1u << 4 | 1);
	/* PROPBASER and PENDBASER keep their fields; PTZ reads 0. */
	mmio_write64(w->sim, rd1 + GICR_PROPBASER, ~0ull);
	assert_int_equal(mmio_read64(w->sim, rd1 + GICR_PROPBASER),
			 0x000ffffffffff000ull | 7ull << 56 | 0xf9f);
	mmio_write64(w->sim, rd1 + GICR_PENDBASER, ~0ull);
	assert_int_equal(mmio_read64(w->sim, rd1 + GICR_PENDBASER),
			 0x000fffffffff0000ull | 7ull << 56 | 0xf80);
	mmio_write64(w->sim, rd1 + GICR_PROPBASER, 0x40001000ull | 15);
	mmio_write64(w->sim, rd1 + GICR_PENDBASER, 0x40010000ull | GICR_PTZ);
	assert_int_equal(mmio_read64(w->sim, rd1 + GICR_PENDBASER),
			 0x40010000ull);
	/* EnableLPIs reads back (RWP 0); then the bases are frozen. */
	assert_int_equal(umsi_sim_mmio_read32(w->sim, rd1), 0);
	umsi_sim_mmio_write32(w->sim, rd1, 1 | 1u << 3);
	assert_int_equal(umsi_sim_mmio_read32(w->sim, rd1), 1);
	assert_int_equal(its_stats(w).rd_lpis_enabled, 1);
	mmio_write64(w->sim, rd1 + GICR_PROPBASER, 0x50000000ull | 13);
	assert_int_equal(mmio_read64(w->sim, rd1 + GICR_PROPBASER),
			 0x40001000ull | 15);
	umsi_sim_mmio_write32(w->sim, rd1, 0);
	assert_int_equal(umsi_sim_mmio_read32(w->sim, rd1), 0);
	assert_int_equal(its_stats(w).rd_lpis_enabled, 0);
	/*
	 * Through the host's mappings: other offsets of a redistributor's
	 * 128 KiB read 0 uncounted; past the last one is unclaimed.
	 */
	assert_int_equal(w->ops->mmio_map(w->sim, rd2, UMSI_SIM_GICR_STRIDE,
					  (void **)&frame), 0);
	assert_int_equal(w->ops->mmio_map(w->sim, rd2 + UMSI_SIM_GICR_STRIDE,
					  4096, (void **)&past), 0);
	bad = bad_accesses(w->sim);
	assert_int_equal(w->ops->mmio_read32(w->sim, &frame[2]), 2u << 8 |
			 1u << 4 | 1);
	w->ops->mmio_write32(w->sim, &frame[0x14 / 4], 0x2);	/* WAKER */
	assert_int_equal(w->ops->mmio_read32(w->sim, &frame[0x14 / 4]), 0);
	assert_int_equal(w->ops->mmio_read32(w->sim, &frame[0x10100 / 4]), 0);
	w->ops->mmio_write32(w->sim, &frame[0], 1);
	assert_int_equal(w->ops->mmio_read32(w->sim, &frame[0]), 1);
	assert_int_equal(bad_accesses(w->sim), bad);
	assert_int_equal(w->ops->mmio_read32(w->sim, past), 0xffffffffu);
	assert_int_equal(bad_accesses(w->sim), bad + 1);
	/* An x86 machine has none. */
	assert_int_equal(umsi_sim_mmio_read32(x86, UMSI_SIM_GICR_BASE),
			 0xffffffffu);
	w->ops->mmio_unmap(w->sim, (void *)frame, UMSI_SIM_GICR_STRIDE);
	w->ops->mmio_unmap(w->sim, (void *)past, 4096);
	umsi_sim_destroy(x86);
	its_world_free(w);
}

static void test_its_managed_redistributor_pends_in_its_table_and_holds_disabled_lpis(void **st)
{
	struct its_world *w = its_world_new(2, NULL);
	uint64_t rd1 = umsi_sim_gicr_addr(w->sim, 1);
	struct umsi_sim_stats s0, s1;
	struct rd_tables t;

	(void)st;
	rd_tables_new(w, 1, 13, true, &t);	/* INTIDs below 16384 */
	t.prop[0] = 0xa0 | 1;			/* 8192 enabled */
	t.prop[1] = 0xa0;			/* 8193 disabled */
	umsi_sim_mmio_write32(w->sim, rd1, 1);
	its_mapti(w, 0, 8192, 1);
	its_mapti(w, 1, 8193, 1);
	its_mapti(w, 2, 16384 + 5, 1);		/* beyond IDbits */
	its_mapti(w, 3, 8193, 0);		/* CPU 0: never enabled */

	/* Enabled: pending in the model and the table until taken. */
	umsi_sim_cpu_irq_disable(w->sim, 1);
	assert_int_equal(umsi_sim_msg_write_from(w->sim, ITS_DEVID,
						 ITS_TRANSLATER, 0), 1);
	assert_true(pend_bit(&t, 8192));
	assert_true(umsi_sim_id_pending(w->sim, 1, 8192));
	umsi_sim_cpu_irq_enable(w->sim, 1);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->taken[0][0], 1);
	assert_int_equal(w->taken[0][1], 8192);
	assert_false(pend_bit(&t, 8192));
	assert_false(umsi_sim_id_pending(w->sim, 1, 8192));

	/* Disabled: pending, held; a property change alone does nothing. */
	assert_int_equal(umsi_sim_msg_write_from(w->sim, ITS_DEVID,
						 ITS_TRANSLATER, 1), 1);
	assert_int_equal(w->n, 1);
	assert_true(pend_bit(&t, 8193));
	assert_true(umsi_sim_id_pending(w->sim, 1, 8193));
	assert_int_equal(its_stats(w).lpis_held_disabled, 1);
	its_event_cmd(w, 0x0c, 1, 0);		/* INV, still disabled */
	t.prop[1] |= 1;
	assert_int_equal(w->n, 1);
	its_event_cmd(w, 0x0c, 1, 0);		/* INV: the CPU takes it */
	assert_int_equal(w->n, 2);
	assert_int_equal(w->taken[1][1], 8193);
	assert_false(pend_bit(&t, 8193));

	/* Beyond 2^(IDbits + 1): dropped, undeliverable (ITS). */
	umsi_sim_stats(w->sim, &s0);
	assert_int_equal(umsi_sim_msg_write_from(w->sim, ITS_DEVID,
						 ITS_TRANSLATER, 2), 0);
	umsi_sim_stats(w->sim, &s1);
	assert_int_equal(s1.undeliverable_by[UMSI_SIM_UNDELIV_ITS],
			 s0.undeliverable_by[UMSI_SIM_UNDELIV_ITS] + 1);
	assert_false(umsi_sim_id_pending(w->sim, 1, 16384 + 5));
	assert_int_equal(w->n, 2);

	/* CPU 0's redistributor is the kernel's: every LPI enabled. */
	t.prop[1] = 0xa0;
	assert_int_equal(umsi_sim_msg_write_from(w->sim, ITS_DEVID,
						 ITS_TRANSLATER, 3), 1);
	assert_int_equal(w->n, 3);
	assert_int_equal(w->taken[2][0], 0);
	assert_int_equal(w->taken[2][1], 8193);
	assert_false(pend_bit(&t, 8193));

	/* A held LPI moved (MOVI) to CPU 0 is taken there. */
	assert_int_equal(umsi_sim_msg_write_from(w->sim, ITS_DEVID,
						 ITS_TRANSLATER, 1), 1);
	assert_true(pend_bit(&t, 8193));
	assert_int_equal(w->n, 3);
	its_event_cmd(w, 0x01, 1, 0);		/* MOVI to collection 0 */
	assert_int_equal(w->n, 4);
	assert_int_equal(w->taken[3][0], 0);
	assert_false(pend_bit(&t, 8193));
	assert_false(umsi_sim_id_pending(w->sim, 1, 8193));
	assert_int_equal(its_stats(w).lpis_held_disabled, 2);
	assert_int_equal(bad_accesses(w->sim), 0);
	its_world_free(w);
}

static void test_its_redistributor_tables_outside_memory_drop_lpis(void **st)
{
	struct its_world *w = its_world_new(1, NULL);
	uint64_t rd0 = umsi_sim_gicr_addr(w->sim, 0);
	struct umsi_sim_stats s;

	(void)st;
	/* Nothing phys_alloc handed out lives at 0x40000000. */
	mmio_write64(w->sim, rd0 + GICR_PROPBASER, 0x40000000ull | 15);
	mmio_write64(w->sim, rd0 + GICR_PENDBASER, 0x40010000ull | GICR_PTZ);
	umsi_sim_mmio_write32(w->sim, rd0, 1);
	its_mapti(w, 0, 8200, 0);
	assert_int_equal(umsi_sim_msg_write_from(w->sim, ITS_DEVID,
						 ITS_TRANSLATER, 0), 0);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.bad_accesses, 1);
	assert_int_equal(s.undeliverable_by[UMSI_SIM_UNDELIV_ITS], 1);
	assert_false(umsi_sim_id_pending(w->sim, 0, 8200));
	assert_int_equal(w->n, 0);
	/* INT is dropped the same way (the command itself runs). */
	its_event_cmd(w, 0x03, 0, 0);
	umsi_sim_stats(w->sim, &s);
	assert_int_equal(s.bad_accesses, 2);
	assert_int_equal(w->n, 0);
	its_world_free(w);
}

static void test_its_enable_lpis_reads_the_pending_table_unless_ptz(void **st)
{
	struct its_world *w = its_world_new(1, NULL);
	uint64_t rd0 = umsi_sim_gicr_addr(w->sim, 0);
	struct rd_tables t;

	(void)st;
	rd_tables_new(w, 0, 15, false, &t);
	t.prop[10] = 1;				/* 8202 enabled */
	t.prop[11] = 0;				/* 8203 disabled */
	t.pend[8202 / 8] |= 1u << (8202 % 8);
	t.pend[8203 / 8] |= 1u << (8203 % 8);
	umsi_sim_mmio_write32(w->sim, rd0, 1);	/* no PTZ: read */
	assert_int_equal(w->n, 1);
	assert_int_equal(w->taken[0][1], 8202);
	assert_false(pend_bit(&t, 8202));
	assert_true(umsi_sim_id_pending(w->sim, 0, 8203));
	/* Disabled again: the state stays in the table, the model drops it. */
	umsi_sim_mmio_write32(w->sim, rd0, 0);
	assert_false(umsi_sim_id_pending(w->sim, 0, 8203));
	assert_true(pend_bit(&t, 8203));
	t.prop[11] = 1;
	umsi_sim_mmio_write32(w->sim, rd0, 1);
	assert_int_equal(w->n, 2);
	assert_int_equal(w->taken[1][1], 8203);
	assert_false(pend_bit(&t, 8203));
	/* With PTZ the table is taken as zero, whatever it holds. */
	umsi_sim_mmio_write32(w->sim, rd0, 0);
	t.pend[8202 / 8] |= 1u << (8202 % 8);
	mmio_write64(w->sim, rd0 + GICR_PENDBASER, t.pend_pa | GICR_PTZ);
	umsi_sim_mmio_write32(w->sim, rd0, 1);
	assert_int_equal(w->n, 2);
	assert_false(umsi_sim_id_pending(w->sim, 0, 8202));
	/* INVALL finds a held LPI enabled too. */
	its_mapti(w, 4, 8203, 0);
	t.prop[11] = 0;
	assert_int_equal(umsi_sim_msg_write_from(w->sim, ITS_DEVID,
						 ITS_TRANSLATER, 4), 1);
	assert_int_equal(w->n, 2);
	t.prop[11] = 1;
	its_cmd(w, 0x0d, 0, 0);			/* INVALL collection 0 */
	assert_int_equal(w->n, 3);
	assert_int_equal(w->taken[2][1], 8203);
	assert_int_equal(bad_accesses(w->sim), 0);
	its_world_free(w);
}

/* ---- The VT-d interrupt-remapping unit ----------------------------------------- */

#define VTD(off)        (UMSI_SIM_VTD_BASE + (off))
#define VTD_GCMD        0x18u
#define VTD_GSTS        0x1cu
#define VTD_FSTS        0x34u
#define VTD_IQH         0x80u
#define VTD_IQT         0x88u
#define VTD_IQA         0x90u
#define VTD_ICS         0x9cu
#define VTD_IRTA        0xb8u
#define G_QIE           (1u << 26)
#define G_IRE           (1u << 25)
#define G_SIRTP         (1u << 24)
#define G_CFI           (1u << 23)
#define FSTS_PFO        (1u << 0)
#define FSTS_PPF        (1u << 1)
#define FSTS_IQE        (1u << 4)
#define IRTE_P          (1ull << 0)
#define IRTE_TM         (1ull << 4)
#define SVT_SID(sq, sid) (1ull << 18 | (uint64_t)(sq) << 16 | (sid))
#define SVT_BUS(lo, hi) (2ull << 18 | (uint64_t)(lo) << 8 | (hi))
#define IOAPIC_SID      0xff00u

/* The remapping table (16 entries) and a 4 KiB queue in phys_alloc memory. */
struct vtd_world {
	struct world *w;
	uint64_t *irt, *iq;
	uint32_t *status;
	uint64_t irt_pa, iq_pa, status_pa;
	uint32_t tail, seq;
};

static void *vtd_zalloc(struct world *w, size_t size, uint64_t *pa)
{
	void *p = w->ops->phys_alloc(w->sim, size, 4096, pa);

	assert_non_null(p);
	memset(p, 0, size);	/* phys_alloc poisons */
	return p;
}

/* Write GCMD as software does: GSTS without its one-shot bits, @bit set or clear. */
static void vtd_gcmd(struct umsi_sim *sim, uint32_t bit, bool on)
{
	uint32_t sts = umsi_sim_mmio_read32(sim, VTD(VTD_GSTS)) &
		       ~(1u << 30 | 1u << 29 | 1u << 27 | G_SIRTP);

	umsi_sim_mmio_write32(sim, VTD(VTD_GCMD), on ? sts | bit : sts & ~bit);
}

/* Queue one descriptor and move IQT past it. */
static void vtd_desc(struct vtd_world *v, uint64_t lo, uint64_t hi)
{
	v->iq[2 * v->tail] = lo;
	v->iq[2 * v->tail + 1] = hi;
	v->tail = (v->tail + 1) % 256;
	umsi_sim_mmio_write32(v->w->sim, VTD(VTD_IQT), v->tail << 4);
}

/* A wait descriptor writing the next sequence number; true when written. */
static bool vtd_wait(struct vtd_world *v)
{
	*v->status = 0;
	vtd_desc(v, 0x5 | 1ull << 5 | (uint64_t)++v->seq << 32, v->status_pa);
	return *v->status == v->seq;
}

static void vtd_iec_global(struct vtd_world *v)
{
	vtd_desc(v, 0x4, 0);
	assert_true(vtd_wait(v));
}

static void vtd_iec_index(struct vtd_world *v, uint32_t index, uint32_t im)
{
	vtd_desc(v, 0x4 | 1ull << 4 | (uint64_t)im << 27 |
		 (uint64_t)index << 32, 0);
	assert_true(vtd_wait(v));
}

/* A remapped-format entry: xAPIC destination in 47:40, x2APIC in 63:32. */
static uint64_t irte_lo(uint32_t apic, uint8_t vec, bool level, bool x2)
{
	return IRTE_P | (level ? IRTE_TM : 0) | (uint64_t)vec << 16 |
	       (x2 ? (uint64_t)apic << 32 : (uint64_t)(apic & 0xff) << 40);
}

static void irte_set(struct vtd_world *v, uint32_t i, uint64_t lo, uint64_t hi)
{
	v->irt[2 * i] = lo;
	v->irt[2 * i + 1] = hi;
}

/* The remappable-format address of handle @h (SHV: bit 3). */
static uint64_t remap_addr(uint32_t h, bool shv)
{
	return 0xfee00000u | 1u << 4 | (shv ? 1u << 3 : 0) |
	       (h & 0x7fff) << 5 | ((h >> 15) & 1) << 2;
}

static uint64_t vtd_undeliv_ir(struct umsi_sim *sim)
{
	struct umsi_sim_stats s;

	umsi_sim_stats(sim, &s);
	return s.undeliverable_by[UMSI_SIM_UNDELIV_IR];
}

static struct umsi_sim_vtd_stats vtd_stats(struct umsi_sim *sim)
{
	struct umsi_sim_vtd_stats s;

	assert_int_equal(umsi_sim_vtd_stats(sim, &s), 0);
	return s;
}

/*
 * A machine with the unit; with @on, software's enable sequence: queue,
 * table pointer (16 entries, EIME with @eime), a global IEC invalidation
 * and a wait, then remapping (CFI left clear: compatibility blocked).
 */
static struct vtd_world *vtd_world_new(uint32_t ncpus, const uint32_t *ids,
				       bool eim, bool eime, bool on)
{
	struct umsi_sim_config cfg = { .ncpus = ncpus, .apic_ids = ids,
				       .vtd = true, .vtd_eim = eim,
				       .vtd_ioapic_sid = IOAPIC_SID };
	struct vtd_world *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	v->w = world_new(&cfg);
	v->irt = vtd_zalloc(v->w, 16 * 16, &v->irt_pa);
	v->iq = vtd_zalloc(v->w, 4096, &v->iq_pa);
	v->status = vtd_zalloc(v->w, 64, &v->status_pa);
	if (!on)
		return v;
	mmio_write64(v->w->sim, VTD(VTD_IQT), 0);
	mmio_write64(v->w->sim, VTD(VTD_IQA), v->iq_pa);
	vtd_gcmd(v->w->sim, G_QIE, true);
	mmio_write64(v->w->sim, VTD(VTD_IRTA), v->irt_pa |
		     (eime ? 1ull << 11 : 0) | 3);
	vtd_gcmd(v->w->sim, G_SIRTP, true);
	vtd_iec_global(v);
	vtd_gcmd(v->w->sim, G_IRE, true);
	assert_int_equal(umsi_sim_mmio_read32(v->w->sim, VTD(VTD_GSTS)),
			 G_QIE | G_IRE | G_SIRTP);
	return v;
}

static void vtd_world_free(struct vtd_world *v)
{
	world_free(v->w);	/* frees the phys_alloc blocks too */
	free(v);
}

static void test_vtd_registers_and_enable_sequence(void **st)
{
	struct umsi_sim_config bad = { .ncpus = 1, .vtd = true,
				       .controller = UMSI_SIM_CTL_IMSIC };
	struct umsi_sim_config plain = { .ncpus = 1 };
	struct vtd_world *v = vtd_world_new(2, NULL, false, false, false);
	struct umsi_sim *sim = v->w->sim, *x = umsi_sim_create(&plain);
	uint64_t cap, q;

	(void)st;
	assert_null(umsi_sim_create(&bad));	/* x86 machines only */
	assert_non_null(x);
	assert_int_equal(umsi_sim_vtd_stats(x, &(struct umsi_sim_vtd_stats){0}),
			 -UMSI_EINVAL);
	assert_int_equal(umsi_sim_vtd_silent(x, true), -UMSI_EINVAL);
	assert_int_equal(umsi_sim_mmio_read32(x, VTD(0)), 0xffffffffu);
	umsi_sim_destroy(x);

	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(0)), 0x10);
	cap = mmio_read64(sim, VTD(0x08));
	assert_int_equal((cap >> 40) & 0xff, UMSI_SIM_VTD_NFR - 1);
	assert_int_equal(((cap >> 24) & 0x3ff) * 16, UMSI_SIM_VTD_FRCD);
	assert_int_equal(mmio_read64(sim, VTD(0x10)), 1u << 1 | 1u << 3);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_GSTS)), 0);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), 0);
	/* IRTA keeps base and size; EIME only with ECAP.EIM. */
	mmio_write64(sim, VTD(VTD_IRTA), v->irt_pa | 1ull << 11 | 3 | 0x30);
	assert_int_equal(mmio_read64(sim, VTD(VTD_IRTA)), v->irt_pa | 3);
	/* Nothing latched before SIRTP. */
	assert_int_equal(umsi_sim_vtd_irte(sim, 0, (uint64_t[2]){ 0 }),
			 -UMSI_ENOENT);
	/* Queue: IQA latched by QIE, IQT stored, IQH read-only. */
	mmio_write64(sim, VTD(VTD_IQA), v->iq_pa);
	assert_int_equal(mmio_read64(sim, VTD(VTD_IQA)), v->iq_pa);
	vtd_gcmd(sim, G_QIE, true);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_GSTS)), G_QIE);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_GCMD)), 0);
	vtd_gcmd(sim, G_SIRTP, true);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_GSTS)),
			 G_QIE | G_SIRTP);
	v->irt[2 * 15] = 0x1234;
	assert_int_equal(umsi_sim_vtd_irte(sim, 15, (uint64_t[2]){ 0 }), 0);
	assert_int_equal(umsi_sim_vtd_irte(sim, 16, (uint64_t[2]){ 0 }),
			 -UMSI_ENOENT);
	vtd_iec_global(v);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), 2 << 4);
	vtd_gcmd(sim, G_IRE, true);
	vtd_gcmd(sim, G_CFI, true);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_GSTS)),
			 G_QIE | G_IRE | G_SIRTP | G_CFI);
	/* Off again: IRE, CFI, then QIE (IQH back to 0). */
	vtd_gcmd(sim, G_CFI, false);
	vtd_gcmd(sim, G_IRE, false);
	vtd_gcmd(sim, G_QIE, false);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_GSTS)), G_SIRTP);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), 0);
	/* An IQT write while QI is off runs nothing. */
	q = vtd_stats(sim).waits;
	vtd_desc(v, 0x5 | 1ull << 5 | 7ull << 32, v->status_pa);
	assert_int_equal(vtd_stats(sim).waits, q);
	assert_int_equal(bad_accesses(sim), 0);
	vtd_world_free(v);

	/* With EIM: ECAP says so, IRTA keeps EIME. */
	v = vtd_world_new(1, NULL, true, true, true);
	assert_int_equal(mmio_read64(v->w->sim, VTD(0x10)),
			 1u << 1 | 1u << 3 | 1u << 4);
	assert_int_equal(mmio_read64(v->w->sim, VTD(VTD_IRTA)),
			 v->irt_pa | 1ull << 11 | 3);
	vtd_world_free(v);
}

/*
 * Memory a unit that is on still reads (its table while remapping is on,
 * its queue while queued invalidation is) given back is a bad access,
 * named; given back once each is off, it is not.
 */
static void test_vtd_freeing_what_the_unit_reads(void **st)
{
	struct vtd_world *v = vtd_world_new(1, NULL, false, false, true);
	struct umsi_sim *sim = v->w->sim;

	(void)st;
	v->w->ops->phys_free(sim, v->irt, 16 * 16);
	assert_int_equal(bad_accesses(sim), 1);
	assert_non_null(strstr(umsi_sim_log_text(sim), "a VT-d unit's "
			       "interrupt remapping table, on, still reads it"));
	vtd_gcmd(sim, G_IRE, false);
	v->w->ops->phys_free(sim, v->iq, 4096);
	assert_int_equal(bad_accesses(sim), 2);
	assert_non_null(strstr(umsi_sim_log_text(sim), "a VT-d unit's "
			       "invalidation queue, on, still reads it"));
	vtd_gcmd(sim, G_QIE, false);
	v->w->ops->phys_free(sim, v->status, 64);
	assert_int_equal(bad_accesses(sim), 2);
	vtd_world_free(v);
}

static void test_vtd_iec_invalidation_and_wait_status_write(void **st)
{
	struct vtd_world *v = vtd_world_new(1, NULL, false, false, true);
	struct umsi_sim *sim = v->w->sim;
	struct umsi_sim_vtd_stats s0 = vtd_stats(sim), s1;

	(void)st;
	assert_int_equal(s0.iec_global, 1);
	assert_int_equal(s0.waits, 1);
	vtd_iec_index(v, 5, 0);
	vtd_iec_index(v, 8, 3);
	vtd_iec_global(v);
	s1 = vtd_stats(sim);
	assert_int_equal(s1.iec_index, 2);
	assert_int_equal(s1.iec_global, 2);
	assert_int_equal(s1.waits, 4);
	/* Status data 63:32 at the high quadword's address. */
	assert_int_equal(*v->status, v->seq);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), v->tail << 4);
	/* IF: ICS.IWC, cleared by writing 1; no status write without SW. */
	*v->status = 0;
	vtd_desc(v, 0x5 | 1ull << 4 | 9ull << 32, v->status_pa);
	assert_int_equal(*v->status, 0);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_ICS)), 1);
	umsi_sim_mmio_write32(sim, VTD(VTD_ICS), 1);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_ICS)), 0);
	/* The queue wraps at 256 descriptors (QS 0: one page). */
	for (int i = 0; i < 300; i++)
		assert_true(vtd_wait(v));
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), v->tail << 4);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), 0);
	assert_int_equal(bad_accesses(sim), 0);
	vtd_world_free(v);
}

static void test_vtd_silent_unit_runs_nothing_until_it_wakes(void **st)
{
	struct vtd_world *v = vtd_world_new(1, NULL, false, false, true);
	struct umsi_sim *sim = v->w->sim;
	uint32_t head = umsi_sim_mmio_read32(sim, VTD(VTD_IQH));

	(void)st;
	assert_int_equal(umsi_sim_vtd_silent(sim, true), 0);
	vtd_desc(v, 0x4, 0);
	assert_false(vtd_wait(v));
	assert_false(vtd_wait(v));
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), head);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), 0);
	assert_int_equal(umsi_sim_vtd_silent(sim, false), 0);
	assert_int_equal(*v->status, v->seq);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), v->tail << 4);
	assert_int_equal(vtd_stats(sim).iec_global, 2);
	assert_int_equal(vtd_stats(sim).waits, 3);
	vtd_world_free(v);
}

static void test_vtd_bad_descriptor_sets_iqe_and_stops_the_queue(void **st)
{
	struct vtd_world *v = vtd_world_new(1, NULL, false, false, true);
	struct umsi_sim *sim = v->w->sim;
	uint32_t bad;
	uint64_t ba = bad_accesses(sim);

	(void)st;
	/* An IOTLB invalidation (type 2): not supported here. */
	bad = v->tail;
	vtd_desc(v, 0x2, 0);
	assert_false(vtd_wait(v));
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), FSTS_IQE);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), bad << 4);
	assert_int_equal(bad_accesses(sim), ba + 1);
	/* More descriptors wait while IQE is set. */
	assert_false(vtd_wait(v));
	/* Software fixes it and clears IQE: the queue goes on from IQH. */
	v->iq[2 * bad] = 0x4;
	umsi_sim_mmio_write32(sim, VTD(VTD_FSTS), FSTS_IQE);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), 0);
	assert_int_equal(*v->status, v->seq);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), v->tail << 4);
	/* Reserved bits: IEC's high quadword; a wait's bit 8. */
	bad = v->tail;
	vtd_desc(v, 0x4, 1);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), FSTS_IQE);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), bad << 4);
	v->iq[2 * bad + 1] = 0;
	umsi_sim_mmio_write32(sim, VTD(VTD_FSTS), FSTS_IQE);
	bad = v->tail;
	vtd_desc(v, 0x5 | 1ull << 8, 0);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), bad << 4);
	v->iq[2 * bad] = 0x5;
	umsi_sim_mmio_write32(sim, VTD(VTD_FSTS), FSTS_IQE);
	/* A status address outside memory. */
	bad = v->tail;
	vtd_desc(v, 0x5 | 1ull << 5 | 1ull << 32, 0x40000000);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), FSTS_IQE);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_IQH)), bad << 4);
	v->iq[2 * bad + 1] = v->status_pa;
	umsi_sim_mmio_write32(sim, VTD(VTD_FSTS), FSTS_IQE);
	assert_int_equal(*v->status, 1);
	/* IQT beyond the queue. */
	umsi_sim_mmio_write32(sim, VTD(VTD_IQT), 300 << 4);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), FSTS_IQE);
	assert_int_equal(bad_accesses(sim), ba + 5);
	vtd_world_free(v);
}

static void test_vtd_remaps_device_and_cpu_messages(void **st)
{
	static const uint32_t ids[2] = { 0, 0x300 };
	struct vtd_world *v = vtd_world_new(2, NULL, false, false, true);
	struct world *w = v->w;
	struct umsi_sim_vtd_stats s;
	struct umsi_sim_stats ss;

	(void)st;
	irte_set(v, 5, irte_lo(1, 0x40, false, false), SVT_SID(0, DEV_A));
	irte_set(v, 6, irte_lo(0, 0x41, false, false), 0);
	/* A requester-validated entry, by its requester. */
	assert_int_equal(umsi_sim_msg_write_from(w->sim, DEV_A,
						 remap_addr(5, false), 0), 1);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].cpu, 1);
	assert_int_equal(w->log[0].vector, 0x40);
	/* SHV: handle 4 + subhandle 2 is entry 6, which checks no SID. */
	assert_int_equal(umsi_sim_msg_write(w->sim, remap_addr(4, true), 2), 1);
	assert_int_equal(w->log[1].cpu, 0);
	assert_int_equal(w->log[1].vector, 0x41);
	/* A device's MSI-X entry through the table, its BDF the requester. */
	add_msix(w, DEV_A, 4);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 2, remap_addr(5, false), 0, 0);
	msix_enable(w, DEV_A, false);
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 2), UMSI_SIM_FIRE_SENT);
	assert_int_equal(w->n, 3);
	assert_int_equal(w->log[2].cpu, 1);
	assert_int_equal(w->log[2].vector, 0x40);
	s = vtd_stats(w->sim);
	assert_int_equal(s.remapped, 3);
	assert_int_equal(s.cache_fills, 2);
	assert_int_equal(s.faults, 0);
	/* Remapping off: as without the unit (no host remapping here). */
	vtd_gcmd(w->sim, G_IRE, false);
	assert_int_equal(umsi_sim_msg_write(w->sim, remap_addr(6, false), 0), 0);
	assert_int_equal(umsi_sim_msg_write(w->sim, msg_addr(1, 0), 0x42), 1);
	assert_int_equal(w->log[3].cpu, 1);
	assert_int_equal(w->log[3].vector, 0x42);
	umsi_sim_stats(w->sim, &ss);
	assert_int_equal(ss.undeliverable_by[UMSI_SIM_UNDELIV_REMAP], 1);
	assert_int_equal(vtd_stats(w->sim).remapped, 3);
	vtd_world_free(v);

	/* x2APIC mode (EIME): 32-bit destinations. */
	v = vtd_world_new(2, ids, true, true, true);
	w = v->w;
	irte_set(v, 1, irte_lo(0x300, 0x50, false, true), 0);
	assert_int_equal(umsi_sim_msg_write(w->sim, remap_addr(1, false), 0), 1);
	assert_int_equal(w->log[0].cpu, 1);
	assert_int_equal(w->log[0].vector, 0x50);
	vtd_world_free(v);
}

/* An entry changed in memory is not seen until an invalidation covers it. */
static void test_vtd_entry_cache_is_stale_until_invalidated(void **st)
{
	struct vtd_world *v = vtd_world_new(2, NULL, false, false, true);
	struct world *w = v->w;
	uint64_t a = remap_addr(5, false);
	uint32_t sid, index, reason;

	(void)st;
	irte_set(v, 5, irte_lo(0, 0x40, false, false), 0);
	umsi_sim_msg_write(w->sim, a, 0);
	irte_set(v, 5, irte_lo(1, 0x50, false, false), 0);
	umsi_sim_msg_write(w->sim, a, 0);
	assert_int_equal(w->log[1].cpu, 0);		/* stale */
	assert_int_equal(w->log[1].vector, 0x40);
	vtd_iec_index(v, 4, 0);				/* not entry 5 */
	umsi_sim_msg_write(w->sim, a, 0);
	assert_int_equal(w->log[2].vector, 0x40);
	vtd_iec_index(v, 6, 2);				/* 4..7 */
	umsi_sim_msg_write(w->sim, a, 0);
	assert_int_equal(w->log[3].cpu, 1);
	assert_int_equal(w->log[3].vector, 0x50);
	irte_set(v, 5, irte_lo(0, 0x60, false, false), 0);
	vtd_iec_global(v);
	umsi_sim_msg_write(w->sim, a, 0);
	assert_int_equal(w->log[4].cpu, 0);
	assert_int_equal(w->log[4].vector, 0x60);
	/* The table reads what memory holds, not the cache. */
	v->irt[2 * 5] = 0;
	{
		uint64_t e[2];

		assert_int_equal(umsi_sim_vtd_irte(w->sim, 5, e), 0);
		assert_int_equal(e[0], 0);
	}
	/* Cleared but not invalidated: still delivered. */
	assert_int_equal(umsi_sim_msg_write(w->sim, a, 0), 1);
	assert_int_equal(w->log[5].vector, 0x60);
	vtd_iec_index(v, 5, 0);
	assert_int_equal(umsi_sim_msg_write(w->sim, a, 0), 0);
	assert_int_equal(w->n, 6);
	assert_int_equal(umsi_sim_vtd_fault(w->sim, 0, &sid, &index, &reason),
			 0);
	assert_int_equal(reason, UMSI_SIM_VTD_FR_NOT_PRESENT);
	assert_int_equal(index, 5);
	assert_int_equal(sid, UMSI_SIM_NO_REQUESTER);
	/* Present entries are cached when used; a not-present one is not. */
	assert_int_equal(vtd_stats(w->sim).cache_fills, 3);
	vtd_world_free(v);
}

static void assert_frcd(struct umsi_sim *sim, uint32_t n, uint32_t sid,
			uint32_t index, uint32_t reason)
{
	uint64_t lo = mmio_read64(sim, VTD(UMSI_SIM_VTD_FRCD + 16 * n));
	uint64_t hi = mmio_read64(sim, VTD(UMSI_SIM_VTD_FRCD + 16 * n + 8));

	assert_int_equal(lo, (uint64_t)index << 48);
	assert_int_equal(hi, 1ull << 63 | (uint64_t)reason << 32 | sid);
}

static void assert_fault(struct umsi_sim *sim, uint32_t n, uint32_t sid,
			 uint32_t index, uint32_t reason)
{
	uint32_t s, i, r;

	assert_int_equal(umsi_sim_vtd_fault(sim, n, &s, &i, &r), 0);
	assert_int_equal(s, sid);
	assert_int_equal(i, index);
	assert_int_equal(r, reason);
}

static void test_vtd_faults_are_recorded_with_sid_index_and_reason(void **st)
{
	struct vtd_world *v = vtd_world_new(2, NULL, false, false, true);
	struct world *w = v->w;
	struct umsi_sim *sim = w->sim;
	umsi_bdf_t fn3 = UMSI_BDF(0, 0, 3, 3), bus4 = UMSI_BDF(0, 4, 0, 0);
	struct umsi_sim_vtd_stats s;

	(void)st;
	/* 0x21: index 16 of a 16-entry table. */
	assert_int_equal(umsi_sim_msg_write_from(sim, DEV_A,
						 remap_addr(16, false), 0), 0);
	assert_frcd(sim, 0, DEV_A, 16, UMSI_SIM_VTD_FR_INDEX);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)),
			 FSTS_PPF | 1u << 8);
	/* 0x22: not present. */
	umsi_sim_msg_write_from(sim, DEV_B, remap_addr(2, false), 0);
	assert_frcd(sim, 1, DEV_B, 2, UMSI_SIM_VTD_FR_NOT_PRESENT);
	/* 0x24: reserved bits: low 14:12, xAPIC destination 39:32, high. */
	irte_set(v, 3, irte_lo(1, 0x40, false, false) | 1ull << 12, 0);
	irte_set(v, 4, irte_lo(1, 0x40, false, false) | 1ull << 33, 0);
	irte_set(v, 5, irte_lo(1, 0x40, false, false), 1ull << 20);
	umsi_sim_msg_write_from(sim, DEV_A, remap_addr(3, false), 0);
	assert_frcd(sim, 2, DEV_A, 3, UMSI_SIM_VTD_FR_RESERVED);
	/* 0x26: SID validation, all 16 bits. */
	irte_set(v, 6, irte_lo(1, 0x41, false, false), SVT_SID(0, DEV_A));
	umsi_sim_msg_write_from(sim, DEV_B, remap_addr(6, false), 0);
	assert_frcd(sim, 3, DEV_B, 6, UMSI_SIM_VTD_FR_SID);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), FSTS_PPF);
	/* All four full, FRI back at 0: the next one overflows (PFO). */
	umsi_sim_msg_write_from(sim, DEV_A, remap_addr(4, false), 0);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)),
			 FSTS_PPF | FSTS_PFO);
	assert_frcd(sim, 0, DEV_A, 16, UMSI_SIM_VTD_FR_INDEX);
	/* Software clears FRCD 0 and PFO: recording goes on there. */
	umsi_sim_mmio_write32(sim, VTD(UMSI_SIM_VTD_FRCD + 12), 1u << 31);
	umsi_sim_mmio_write32(sim, VTD(VTD_FSTS), FSTS_PFO);
	assert_int_equal(mmio_read64(sim, VTD(UMSI_SIM_VTD_FRCD + 8)) >> 63, 0);
	umsi_sim_msg_write_from(sim, DEV_A, remap_addr(5, false), 0);
	assert_frcd(sim, 0, DEV_A, 5, UMSI_SIM_VTD_FR_RESERVED);
	for (uint32_t i = 0; i < UMSI_SIM_VTD_NFR; i++)
		umsi_sim_mmio_write32(sim, VTD(UMSI_SIM_VTD_FRCD + 16 * i + 12),
				      1u << 31);
	assert_int_equal(umsi_sim_mmio_read32(sim, VTD(VTD_FSTS)), 1u << 8);
	/* 0x25: compatibility format, CFIS clear. No requester: SID 0. */
	assert_int_equal(umsi_sim_msg_write(sim, msg_addr(1, 0), 0x42), 0);
	assert_frcd(sim, 1, 0, 0, UMSI_SIM_VTD_FR_COMPAT);
	/* CFI set: compatibility format goes by the unit. */
	vtd_gcmd(sim, G_CFI, true);
	assert_int_equal(umsi_sim_msg_write(sim, msg_addr(1, 0), 0x42), 1);
	assert_int_equal(w->log[0].vector, 0x42);
	/* SQ: function bits ignored; SVT 2: a bus range. */
	irte_set(v, 7, irte_lo(0, 0x43, false, false), SVT_SID(3, DEV_A));
	irte_set(v, 8, irte_lo(0, 0x44, false, false), SVT_SID(1, DEV_A));
	irte_set(v, 9, irte_lo(0, 0x45, false, false), SVT_BUS(2, 5));
	assert_int_equal(umsi_sim_msg_write_from(sim, fn3,
						 remap_addr(7, false), 0), 1);
	assert_int_equal(umsi_sim_msg_write_from(sim, fn3,
						 remap_addr(8, false), 0), 0);
	assert_int_equal(umsi_sim_msg_write_from(sim, bus4,
						 remap_addr(9, false), 0), 1);
	assert_int_equal(umsi_sim_msg_write_from(sim, DEV_A,
						 remap_addr(9, false), 0), 0);
	assert_int_equal(umsi_sim_msg_write(sim, remap_addr(7, false), 0), 0);
	/* 0x23: a table bigger than its memory (S 7: 256 entries). */
	mmio_write64(sim, VTD(VTD_IRTA), v->irt_pa | 7);
	vtd_gcmd(sim, G_SIRTP, true);
	umsi_sim_msg_write_from(sim, DEV_A, remap_addr(100, false), 0);
	/* Every fault, in order, FRCDs cleared or not. */
	assert_fault(sim, 0, DEV_A, 16, UMSI_SIM_VTD_FR_INDEX);
	assert_fault(sim, 1, DEV_B, 2, UMSI_SIM_VTD_FR_NOT_PRESENT);
	assert_fault(sim, 2, DEV_A, 3, UMSI_SIM_VTD_FR_RESERVED);
	assert_fault(sim, 3, DEV_B, 6, UMSI_SIM_VTD_FR_SID);
	assert_fault(sim, 4, DEV_A, 4, UMSI_SIM_VTD_FR_RESERVED);
	assert_fault(sim, 5, DEV_A, 5, UMSI_SIM_VTD_FR_RESERVED);
	assert_fault(sim, 6, UMSI_SIM_NO_REQUESTER, 0, UMSI_SIM_VTD_FR_COMPAT);
	assert_fault(sim, 7, fn3, 8, UMSI_SIM_VTD_FR_SID);
	assert_fault(sim, 8, DEV_A, 9, UMSI_SIM_VTD_FR_SID);
	assert_fault(sim, 9, UMSI_SIM_NO_REQUESTER, 7, UMSI_SIM_VTD_FR_SID);
	assert_fault(sim, 10, DEV_A, 100, UMSI_SIM_VTD_FR_TABLE);
	assert_int_equal(umsi_sim_vtd_fault(sim, 11, NULL, NULL, NULL),
			 -UMSI_ENOENT);
	s = vtd_stats(sim);
	assert_int_equal(s.faults, 11);
	assert_int_equal(s.blocked_compat, 1);
	assert_int_equal(s.remapped, 2);
	assert_int_equal(vtd_undeliv_ir(sim), 11);
	assert_int_equal(w->n, 3);
	vtd_world_free(v);

	/* EIME: compatibility format blocked even with CFI set. */
	v = vtd_world_new(1, NULL, true, true, true);
	vtd_gcmd(v->w->sim, G_CFI, true);
	assert_int_equal(umsi_sim_msg_write(v->w->sim, msg_addr(0, 0), 0x42), 0);
	assert_fault(v->w->sim, 0, UMSI_SIM_NO_REQUESTER, 0,
		     UMSI_SIM_VTD_FR_COMPAT);
	vtd_world_free(v);
}

struct vtd_targets {
	unsigned n;
	struct umsi_sim_target t[8];
};

static void vtd_target_rec(void *arg, const struct umsi_sim_target *t)
{
	struct vtd_targets *r = arg;

	if (r->n < 8)
		r->t[r->n++] = *t;
}

static void test_vtd_ioapic_remappable_entry_goes_through_the_unit(void **st)
{
	struct vtd_world *v = vtd_world_new(2, NULL, false, false, true);
	struct world *w = v->w;
	struct umsi_sim *sim = w->sim;
	struct umsi_gsi_entry e = { { remap_addr(7, false), 0 },
				    UMSI_INTX_LEVEL, UMSI_INTX_ACTIVE_LOW,
				    false };
	struct umsi_gsi_entry c = GSI(1, 0x70, UMSI_INTX_EDGE,
				      UMSI_INTX_ACTIVE_HIGH, false);
	struct vtd_targets tg = { 0 };
	struct umsi_sim_rte r;

	(void)st;
	irte_set(v, 7, irte_lo(1, 0x60, true, false), SVT_SID(0, IOAPIC_SID));
	assert_int_equal(w->ops->gsi_program(sim, 16, &e), 0);
	assert_int_equal(umsi_sim_ioapic_get(sim, 16, &r), 0);
	assert_true(r.remappable);
	assert_int_equal(r.handle, 7);
	assert_int_equal(r.vector, 0x60);
	assert_int_equal(r.apic_id, 1);
	/* Live targets: through the table. */
	assert_int_equal(umsi_sim_live_targets(sim, vtd_target_rec, &tg), 1);
	assert_int_equal(tg.t[0].gsi, 16);
	assert_true(tg.t[0].resolved);
	assert_int_equal(tg.t[0].cpu, 1);
	assert_int_equal(tg.t[0].vector, 0x60);
	/* The line fires: level, as the entry's TM says; Remote IRR till EOI. */
	w->no_eoi = true;
	assert_int_equal(umsi_sim_gsi_set(sim, 16, true), 0);
	assert_int_equal(w->n, 1);
	assert_int_equal(w->log[0].cpu, 1);
	assert_int_equal(w->log[0].vector, 0x60);
	umsi_sim_ioapic_get(sim, 16, &r);
	assert_true(r.remote_irr);
	assert_int_equal(r.deliveries, 1);
	umsi_sim_gsi_set(sim, 16, false);
	umsi_sim_set_current_cpu(sim, 1);
	umsi_sim_eoi(sim, 0x60);
	umsi_sim_ioapic_get(sim, 16, &r);
	assert_false(r.remote_irr);
	assert_int_equal(vtd_stats(sim).remapped, 1);
	/* An entry validating another requester: fault as the IO-APIC. */
	irte_set(v, 7, irte_lo(1, 0x60, true, false), SVT_SID(0, DEV_A));
	vtd_iec_index(v, 7, 0);
	tg.n = 0;
	umsi_sim_live_targets(sim, vtd_target_rec, &tg);
	assert_false(tg.t[0].resolved);
	umsi_sim_gsi_set(sim, 16, true);
	assert_int_equal(w->n, 1);
	assert_fault(sim, 0, IOAPIC_SID, 7, UMSI_SIM_VTD_FR_SID);
	umsi_sim_ioapic_get(sim, 16, &r);
	assert_false(r.remote_irr);
	/* A compatibility-format entry is blocked (CFIS clear). */
	assert_int_equal(w->ops->gsi_program(sim, 3, &c), 0);
	umsi_sim_ioapic_get(sim, 3, &r);
	assert_false(r.remappable);
	umsi_sim_gsi_set(sim, 3, true);
	assert_fault(sim, 1, IOAPIC_SID, 0, UMSI_SIM_VTD_FR_COMPAT);
	assert_int_equal(w->n, 1);
	/* A machine without the unit refuses remappable entries. */
	{
		struct world *x = world_cpus(1, NULL, 0);

		assert_int_equal(x->ops->gsi_program(x->sim, 16, &e),
				 -UMSI_EINVAL);
		world_free(x);
	}
	vtd_world_free(v);
}

static void test_vtd_live_targets_resolve_through_the_table(void **st)
{
	struct vtd_world *v = vtd_world_new(2, NULL, false, false, true);
	struct world *w = v->w;
	struct vtd_targets tg = { 0 };

	(void)st;
	add_msix(w, DEV_A, 4);
	irte_set(v, 3, irte_lo(1, 0x48, false, false), SVT_SID(0, DEV_A));
	irte_set(v, 4, irte_lo(0, 0x49, false, false), SVT_SID(0, DEV_B));
	umsi_sim_msix_entry_set(w->sim, DEV_A, 0, remap_addr(3, false), 0, 0);
	umsi_sim_msix_entry_set(w->sim, DEV_A, 1, remap_addr(4, false), 0, 0);
	msix_enable(w, DEV_A, false);
	/* Entries 2 and 3 are masked (reset state). */
	assert_int_equal(umsi_sim_live_targets(w->sim, vtd_target_rec, &tg), 2);
	assert_true(tg.t[0].resolved);
	assert_int_equal(tg.t[0].cpu, 1);
	assert_int_equal(tg.t[0].vector, 0x48);
	assert_false(tg.t[1].resolved);	/* DEV_B's entry */
	/* The cache wins over memory, as it does for delivery. */
	assert_int_equal(umsi_sim_fire(w->sim, DEV_A, 0), UMSI_SIM_FIRE_SENT);
	irte_set(v, 3, irte_lo(0, 0x58, false, false), SVT_SID(0, DEV_A));
	tg.n = 0;
	umsi_sim_live_targets(w->sim, vtd_target_rec, &tg);
	assert_int_equal(tg.t[0].cpu, 1);
	assert_int_equal(tg.t[0].vector, 0x48);
	vtd_iec_global(v);
	tg.n = 0;
	umsi_sim_live_targets(w->sim, vtd_target_rec, &tg);
	assert_int_equal(tg.t[0].cpu, 0);
	assert_int_equal(tg.t[0].vector, 0x58);
	vtd_world_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msix_message_reaches_the_cpu_and_vector_in_its_entry),
		cmocka_unit_test(test_msi_message_reaches_the_cpu_and_vector_programmed),
		cmocka_unit_test(test_msi_multiple_messages_or_the_index_into_low_data_bits),
		cmocka_unit_test(test_msi_mme_above_capable_is_stored_but_used_as_capable),
		cmocka_unit_test(test_msix_masked_entry_sets_pba_and_sends_on_mmio_unmask),
		cmocka_unit_test(test_msix_function_mask_holds_every_entry_until_cleared),
		cmocka_unit_test(test_msix_fire_while_pending_coalesces),
		cmocka_unit_test(test_msi_masked_vector_sets_pending_and_sends_on_unmask),
		cmocka_unit_test(test_bus_master_disabled_sends_nothing_and_is_counted),
		cmocka_unit_test(test_no_msi_enabled_means_intx_and_status_bit),
		cmocka_unit_test(test_extended_destination_id_reaches_apic_ids_above_255),
		cmocka_unit_test(test_remappable_format_is_resolved_through_the_remap_table),
		cmocka_unit_test(test_remappable_message_without_remapping_is_undeliverable),
		cmocka_unit_test(test_xapic_physical_0xff_is_a_broadcast_to_online_cpus),
		cmocka_unit_test(test_logical_flat_mode_reaches_every_cpu_in_the_mask),
		cmocka_unit_test(test_undeliverable_messages_are_counted_by_reason),
		cmocka_unit_test(test_irr_coalesces_while_the_cpu_has_interrupts_off),
		cmocka_unit_test(test_vector_counters_count_past_16_bits),
		cmocka_unit_test(test_in_service_vector_blocks_its_priority_class_until_eoi),
		cmocka_unit_test(test_spurious_dispatches_count_as_unassigned_per_cpu_vector),
		cmocka_unit_test(test_icr_ipi_and_irr_read_see_the_target_irr),
		cmocka_unit_test(test_run_on_cpu_runs_there_with_interrupts_off),
		cmocka_unit_test(test_interrupt_is_taken_in_the_middle_of_a_host_call),
		cmocka_unit_test(test_interrupts_wait_while_any_cpu_holds_a_lock),
		cmocka_unit_test(test_hook_runs_after_each_host_call_and_may_fire),
		cmocka_unit_test(test_status_is_read_only_with_rw1c_error_bits),
		cmocka_unit_test(test_msi_and_msix_read_only_fields_keep_their_values),
		cmocka_unit_test(test_bars_are_assigned_like_firmware_and_size_like_hardware),
		cmocka_unit_test(test_inconsistent_device_descriptions_are_rejected),
		cmocka_unit_test(test_memory_space_disabled_bars_read_all_ones),
		cmocka_unit_test(test_raw_config_pokes_are_uncounted_and_seen_by_software),
		cmocka_unit_test(test_function_reset_forgets_interrupt_programming),
		cmocka_unit_test(test_surprise_removed_function_reads_all_ones),
		cmocka_unit_test(test_host_accesses_are_counted_per_device_and_globally),
		cmocka_unit_test(test_misuse_of_the_host_interface_is_counted),
		cmocka_unit_test(test_fail_at_fails_exactly_the_kth_fallible_call),
		cmocka_unit_test(test_leaks_of_allocations_mappings_and_locks_are_visible),
		cmocka_unit_test(test_clock_is_virtual_and_moves_only_when_told),
		cmocka_unit_test(test_log_lines_are_collected_for_the_test),
		cmocka_unit_test(test_dump_shows_pending_vectors_and_live_entries),
		cmocka_unit_test(test_topology_reports_apic_ids_with_gaps_and_above_255),
		cmocka_unit_test(test_ioapics_are_back_to_back_from_gsi_0),
		cmocka_unit_test(test_level_intx_is_redelivered_after_eoi_while_asserted),
		cmocka_unit_test(test_level_intx_waits_for_eoi_with_remote_irr_set),
		cmocka_unit_test(test_edge_gsi_delivers_on_rising_edges_only),
		cmocka_unit_test(test_wrong_polarity_makes_an_idle_pci_line_active),
		cmocka_unit_test(test_intx_pins_are_swizzled_behind_bridges),
		cmocka_unit_test(test_msix_entry_rewritten_while_live_is_counted),
		cmocka_unit_test(test_hook_skips_host_calls_made_by_interrupt_handlers),
		cmocka_unit_test(test_dispatch_through_locks_interrupts_a_locked_section),
		cmocka_unit_test(test_device_left_enabled_by_firmware_sends_its_junk),
		cmocka_unit_test(test_multi_message_msi_through_remapping_uses_next_entries),
		cmocka_unit_test(test_ioapic_refuses_destinations_it_cannot_address),
		cmocka_unit_test(test_msi_address_rewritten_while_enabled_is_counted),
		cmocka_unit_test(test_msix_random_mask_fire_sequences_match_the_spec_model),
		cmocka_unit_test(test_threaded_cpus_take_their_own_interrupts),
		cmocka_unit_test(test_threaded_cross_calls_and_locks_are_real),
		cmocka_unit_test(test_threaded_masking_races_lose_no_message),
		cmocka_unit_test(test_8192_cpus_with_gapped_apic_ids_take_messages_by_id),
		cmocka_unit_test(test_interrupts_pending_on_many_cpus_are_taken_lowest_cpu_first),
		cmocka_unit_test(test_overlapping_bars_decode_as_the_first_function_added),
		cmocka_unit_test(test_many_functions_are_found_by_address_and_bdf),
		cmocka_unit_test(test_remap_table_holds_65536_entries_lowest_free_first),
		cmocka_unit_test(test_soak_8192_cpus_bring_up_and_tear_down_leave_exact_accounting),
		cmocka_unit_test(test_its_redistributor_registers_read_as_gicv3_says),
		cmocka_unit_test(test_its_managed_redistributor_pends_in_its_table_and_holds_disabled_lpis),
		cmocka_unit_test(test_its_redistributor_tables_outside_memory_drop_lpis),
		cmocka_unit_test(test_its_enable_lpis_reads_the_pending_table_unless_ptz),
		cmocka_unit_test(test_vtd_registers_and_enable_sequence),
		cmocka_unit_test(test_vtd_freeing_what_the_unit_reads),
		cmocka_unit_test(test_vtd_iec_invalidation_and_wait_status_write),
		cmocka_unit_test(test_vtd_silent_unit_runs_nothing_until_it_wakes),
		cmocka_unit_test(test_vtd_bad_descriptor_sets_iqe_and_stops_the_queue),
		cmocka_unit_test(test_vtd_remaps_device_and_cpu_messages),
		cmocka_unit_test(test_vtd_entry_cache_is_stale_until_invalidated),
		cmocka_unit_test(test_vtd_faults_are_recorded_with_sid_index_and_reason),
		cmocka_unit_test(test_vtd_ioapic_remappable_entry_goes_through_the_unit),
		cmocka_unit_test(test_vtd_live_targets_resolve_through_the_table),
	};
	const char *filter = getenv("UMSI_SIM_TEST_FILTER");

	if (filter)
		cmocka_set_test_filter(filter);
	return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
