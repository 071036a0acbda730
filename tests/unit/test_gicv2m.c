/* SPDX-License-Identifier: MIT */
/*
 * The Arm GICv2m back end (src/arch/arm64/gicv2m.c) on the simulator's
 * GICv2 + v2m model: configurations and MSI_TYPER values refused at
 * creation, every host call of a creation failed in turn, MSI-X and
 * multi-message MSI messages (MSI_SETSPI_NS + the SPI's INTID) and the
 * distributor state each SPI is given (edge, priority, target, enable),
 * moves that rewrite the target byte and nothing in the device (also
 * under fire), SPIs disabled and cleared when freed, the frame's SPIs
 * running out (ENOSPC, nothing left behind), blocks limited by the
 * frame's alignment, CPUs without a CPU interface never targets, and
 * wired inputs (INTx) handed to the kernel as (CPU, identity) messages.
 * The fixture-based tests run on this machine too (*-gicv2m binaries).
 */
#include <stdlib.h>

#include "test_pci_fixture.h"

#include <umsi/ctl.h>

#define NVME  UMSI_BDF(0, 0, 4, 0)
#define DEV   UMSI_BDF(0, 0, 5, 0)

#define SETSPI     (UMSI_SIM_V2M_BASE + 0x40)
#define FIRST_SPI  UMSI_SIM_V2M_SPI_BASE
#define NSPI       UMSI_SIM_V2M_SPI_COUNT

static uint32_t gicd(struct machine *m, uint32_t off)
{
	return umsi_sim_mmio_read32(m->sim, UMSI_SIM_GICD_BASE + off);
}

static bool spi_enabled(struct machine *m, uint32_t intid)
{
	return gicd(m, 0x100 + intid / 32 * 4) >> (intid % 32) & 1;
}

static bool spi_pending(struct machine *m, uint32_t intid)
{
	return gicd(m, 0x200 + intid / 32 * 4) >> (intid % 32) & 1;
}

static uint8_t spi_byte(struct machine *m, uint32_t reg, uint32_t intid)
{
	return (uint8_t)(gicd(m, reg + (intid & ~3u)) >> (intid % 4 * 8));
}

static bool spi_edge(struct machine *m, uint32_t intid)
{
	return gicd(m, 0xc00 + intid / 16 * 4) >> (intid % 16 * 2 + 1) & 1;
}

/* Where @bdf's MSI capability is (the simulator places it). */
static uint16_t msi_cap(struct machine *m, umsi_bdf_t bdf)
{
	uint16_t p = (uint16_t)umsi_sim_cfg_read(m->sim, bdf, 0x34, 1);
	int n;

	for (n = 0; p && n < 48; n++) {
		if (umsi_sim_cfg_read(m->sim, bdf, p, 1) == 0x05)
			return p;
		p = (uint16_t)umsi_sim_cfg_read(m->sim, bdf, p + 1, 1);
	}
	fail_msg("no MSI capability");
	return 0;
}

/* Creation on a GICv2m machine with @typer and this configuration. */
static int create(uint32_t ncpus, uint32_t typer,
		  const struct umsi_gicv2m_config *gc, char *log, size_t len)
{
	struct umsi_sim_config sc = { .ncpus = ncpus,
				      .controller = UMSI_SIM_CTL_GICV2M,
				      .v2m_typer = typer };
	struct umsi_sim *sim = umsi_sim_create(&sc);
	struct umsi_config cfg = { .ctl = &umsi_ctl_arm64_gicv2m,
				   .ctl_config = gc };
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys = NULL;
	int ret;

	assert_non_null(sim);
	umsi_sim_leaks(sim, &l0);
	ret = umsi_system_create(umsi_sim_host_ops(), sim, &cfg, &sys);
	snprintf(log, len, "%s", umsi_sim_log_text(sim));
	if (!ret)
		umsi_system_destroy(sys);
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	umsi_sim_destroy(sim);
	return ret;
}

static void configurations_and_frames_refused(void **s)
{
	static const uint8_t if4[4] = { 0, 1, 2, 3 };
	static const uint8_t bad[4] = { 0, 1, 8, 3 };
	static const uint8_t twice[4] = { 0, 1, 1, 3 };
	struct umsi_gicv2m_config gc = { .frame = UMSI_SIM_V2M_BASE,
					 .dist = UMSI_SIM_GICD_BASE,
					 .nr_cpus = 4, .cpu_if = if4 };
	struct umsi_gicv2m_config c;
	char log[4096];
	static const struct { uint32_t typer; const char *why; } frames[] = {
		{ 0xffffffffu, "all-ones: no frame answers" },
		{ 80u << 16, "no SPIs" },
		{ 16u << 16 | 8, "SGIs and PPIs are not SPIs" },
		{ 1000u << 16 | 64, "past INTID 1019" },
	};
	unsigned i;

	(void)s;
	assert_int_equal(create(4, 0, &gc, log, sizeof(log)), 0);
	assert_non_null(strstr(log, "SPIs 80-143"));
	assert_int_equal(create(4, 0, NULL, log, sizeof(log)), -UMSI_EINVAL);
	assert_non_null(strstr(log, "no configuration"));
	c = gc;
	c.frame = UMSI_SIM_V2M_BASE + 0x40;
	assert_int_equal(create(4, 0, &c, log, sizeof(log)), -UMSI_EINVAL);
	assert_non_null(strstr(log, "4 KiB aligned"));
	c = gc;
	c.nr_cpus = 3;
	assert_int_equal(create(4, 0, &c, log, sizeof(log)), -UMSI_EINVAL);
	assert_non_null(strstr(log, "cpu_if has 3 entries for 4 CPUs"));
	c = gc;
	c.cpu_if = bad;
	assert_int_equal(create(4, 0, &c, log, sizeof(log)), -UMSI_EINVAL);
	assert_non_null(strstr(log, "CPU interface 8"));
	c = gc;
	c.cpu_if = twice;
	assert_int_equal(create(4, 0, &c, log, sizeof(log)), -UMSI_EINVAL);
	assert_non_null(strstr(log, "both given CPU interface 1"));
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		print_message("MSI_TYPER 0x%x (%s)\n", frames[i].typer,
			      frames[i].why);
		assert_int_equal(create(4, frames[i].typer, &gc, log,
					sizeof(log)), -UMSI_EINVAL);
		assert_non_null(strstr(log, "MSI_TYPER"));
	}
}

static void creation_fails_cleanly_at_every_host_call(void **s)
{
	static const uint8_t if2[2] = { 0, 1 };
	struct umsi_gicv2m_config gc = { .frame = UMSI_SIM_V2M_BASE,
					 .dist = UMSI_SIM_GICD_BASE,
					 .nr_cpus = 2, .cpu_if = if2 };
	struct umsi_sim_config sc = { .ncpus = 2,
				      .controller = UMSI_SIM_CTL_GICV2M };
	struct umsi_config cfg = { .ctl = &umsi_ctl_arm64_gicv2m,
				   .ctl_config = &gc };
	uint64_t k;
	int ret;

	(void)s;
	for (k = 1;; k++) {
		struct umsi_sim *sim = umsi_sim_create(&sc);
		struct umsi_sim_leaks l0, l1;
		struct umsi_system *sys = NULL;

		assert_non_null(sim);
		umsi_sim_leaks(sim, &l0);
		umsi_sim_fail_at(sim, k, -UMSI_EIO);
		ret = umsi_system_create(umsi_sim_host_ops(), sim, &cfg, &sys);
		if (!ret)
			umsi_system_destroy(sys);
		umsi_sim_leaks(sim, &l1);
		assert_true(umsi_sim_leaks_equal(&l0, &l1));
		umsi_sim_destroy(sim);
		if (!ret)
			break;
		assert_true(ret == -UMSI_EIO || ret == -UMSI_ENOMEM);
	}
	print_message("creation: %llu fallible host calls, each failed once\n",
		      (unsigned long long)(k - 1));
	assert_true(k > 3);
}

/* MSI-X: each vector an SPI of the frame, set up, firing where uMSI says. */
static void msix_vectors_are_spis_set_up_and_delivered(void **s)
{
	struct umsi_sim_dev_desc d = nvme_desc();
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	uint32_t seen[NSPI] = { 0 };
	int i, n;

	(void)s;
	n = umsi_pci_alloc_irq_vectors(dev, 8, 8, UMSI_PCI_IRQ_MSIX);
	assert_int_equal(n, 8);
	for (i = 0; i < n; i++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, (uint32_t)i);
		struct umsi_irq_info info;
		uint64_t addr;
		uint32_t data, ctrl, intid;

		assert_int_equal(umsi_sim_msix_entry_get(m->sim, NVME,
							 (unsigned)i, &addr,
							 &data, &ctrl), 0);
		assert_int_equal(addr, SETSPI);
		intid = data;
		assert_true(intid >= FIRST_SPI && intid < FIRST_SPI + NSPI);
		assert_int_equal(seen[intid - FIRST_SPI]++, 0);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		/* The identity is the SPI's place in the frame. */
		assert_int_equal(info.vector, intid - FIRST_SPI);
		assert_true(spi_enabled(m, intid));
		assert_true(spi_edge(m, intid));
		assert_int_equal(spi_byte(m, 0x400, intid), 0xa0);
		assert_int_equal(spi_byte(m, 0x800, intid), 1u << info.cpu);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "v2m", m), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, (unsigned)i), 0);
		umsi_sim_quiesce(m->sim);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
		assert_false(spi_pending(m, intid));
	}
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * A move is one GICD_ITARGETSR byte: the device's table is not touched,
 * and interrupts fired across it land once, on one CPU or the other,
 * then on the new one. Freed, the SPI is disabled and not pending.
 */
static void moves_rewrite_the_target_byte_only(void **s)
{
	struct umsi_sim_dev_desc d = nvme_desc();
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_sim_dev_stats st;
	struct umsi_irq_info info;
	uint64_t addr, w;
	uint32_t data, ctrl, irq, intid, k, to;
	struct umsi_cpumask mask = { &w, 4 };

	(void)s;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
						    UMSI_PCI_IRQ_MSIX), 1);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "v2m",
					  m), 0);
	assert_int_equal(umsi_sim_msix_entry_get(m->sim, NVME, 0, &addr, &data,
						 &ctrl), 0);
	intid = data;
	assert_int_equal(umsi_sim_dev_stats(m->sim, NVME, &st), 0);
	for (k = 0; k < 12; k++) {
		uint64_t before = m->handled[irq];
		uint64_t writes = st.mmio_writes;

		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		to = (info.cpu + 1 + k % 3) % 4;
		/* One fired before the move, one after. */
		assert_int_equal(umsi_sim_fire(m->sim, NVME, 0), 0);
		w = 1ull << to;
		assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
		umsi_sim_quiesce(m->sim);
		assert_int_equal(m->handled[irq], before + 1);
		assert_int_equal(spi_byte(m, 0x800, intid), 1u << to);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, 0), 0);
		umsi_sim_quiesce(m->sim);
		assert_int_equal(m->handled[irq], before + 2);
		assert_int_equal(m->last_cpu[irq], to);
		assert_int_equal(umsi_sim_dev_stats(m->sim, NVME, &st), 0);
		assert_int_equal(st.mmio_writes, writes);
		assert_int_equal(umsi_sim_msix_entry_get(m->sim, NVME, 0, &addr,
							 &data, &ctrl), 0);
		assert_int_equal(addr, SETSPI);
		assert_int_equal(data, intid);
	}
	umsi_pci_free_irq_vectors(dev);
	assert_false(spi_enabled(m, intid));
	assert_false(spi_pending(m, intid));
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * The frame has 64 SPIs for every CPU: a function asking for more gets
 * 64, a second asking at least one gets ENOSPC and nothing is left of it.
 */
static void the_frames_spis_run_out_cleanly(void **s)
{
	struct umsi_sim_dev_desc d = nvme_desc();
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_pci_dev *a, *b;
	struct umsi_matrix_stats before, after;

	(void)s;
	d.msix.nentries = 128;
	a = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	b = plug(m, DEV, &d, UMSI_PCI_ADD_FRESH);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 100,
						    UMSI_PCI_IRQ_MSIX), NSPI);
	umsi_matrix_stats(m->sys->matrix, &before);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 4,
						    UMSI_PCI_IRQ_MSIX),
			 -UMSI_ENOSPC);
	umsi_matrix_stats(m->sys->matrix, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	umsi_pci_free_irq_vectors(a);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 4,
						    UMSI_PCI_IRQ_MSIX), 4);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, b);
	machine_free(m);
}

/*
 * Multi-message MSI: the data is the first INTID, the message number in
 * its low bits, so a block is as aligned as the frame's first SPI allows
 * (80: 16 messages). Each message lands on its own SPI, all on one CPU;
 * a move rewrites all 16 target bytes.
 */
static void msi_blocks_are_aligned_runs_of_spis(void **s)
{
	struct umsi_sim_dev_desc d = msi_desc(32, true, true);
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_irq_info info;
	uint32_t data, base, i, irq0;
	uint64_t w;
	struct umsi_cpumask mask = { &w, 4 };
	int n;

	(void)s;
	n = umsi_pci_alloc_irq_vectors(dev, 1, 32, UMSI_PCI_IRQ_MSI);
	assert_int_equal(n, 16);
	data = umsi_sim_cfg_read(m->sim, DEV, msi_cap(m, DEV) + 0xc, 2);
	base = data;
	assert_int_equal(base % 16, 0);
	assert_true(base >= FIRST_SPI && base + 16 <= FIRST_SPI + NSPI);
	irq0 = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq0, &info), 0);
	for (i = 0; i < 16; i++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, i);

		assert_int_equal(spi_byte(m, 0x800, base + i), 1u << info.cpu);
		assert_true(spi_enabled(m, base + i));
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "blk", m), 0);
		assert_int_equal(umsi_sim_fire(m->sim, DEV, i), 0);
		umsi_sim_quiesce(m->sim);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
	w = 1ull << ((info.cpu + 1) % 4);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq0, &mask), 0);
	for (i = 0; i < 16; i++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, i);

		assert_int_equal(spi_byte(m, 0x800, base + i),
				 1u << ((info.cpu + 1) % 4));
		assert_int_equal(umsi_sim_fire(m->sim, DEV, i), 0);
		umsi_sim_quiesce(m->sim);
		assert_int_equal(m->handled[irq], 2);
		assert_int_equal(m->last_cpu[irq], (info.cpu + 1) % 4);
	}
	assert_int_equal(umsi_sim_cfg_read(m->sim, DEV, msi_cap(m, DEV) + 0xc,
					   2), data);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* A GICv2 targets interfaces 0-7: CPUs 8 and 9 are never chosen. */
static void cpus_without_an_interface_are_never_targets(void **s)
{
	struct umsi_sim_dev_desc d = nvme_desc();
	struct machine *m = machine_new(10, 0, NULL);
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	uint64_t w = 1ull << 9;
	struct umsi_cpumask nine = { &w, 10 };
	struct umsi_irq_info info;
	uint32_t irq;
	int i, n;

	(void)s;
	n = umsi_pci_alloc_irq_vectors(dev, 1, 20, UMSI_PCI_IRQ_MSIX |
				       UMSI_PCI_IRQ_AFFINITY);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		irq = (uint32_t)umsi_pci_irq_vector(dev, (uint32_t)i);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_true(info.cpu < 8);
	}
	irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_true(umsi_irq_set_affinity(m->sys, irq, &nine) < 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_true(info.cpu < 8);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- wired inputs (PCI INTx as SPIs the kernel routes) ------------------ */

static const struct umsi_host_ops *real_ops;
static struct umsi_gsi_entry last_gsi;
static uint32_t last_gsi_nr, gsi_calls;

/* The host's gsi_program, recorded: what the kernel would route. */
static int rec_gsi_program(void *host, uint32_t gsi,
			   const struct umsi_gsi_entry *e)
{
	last_gsi = *e;
	last_gsi_nr = gsi;
	gsi_calls++;
	return real_ops->gsi_program(host, gsi, e);
}

/*
 * With wired_spis, an INTx function gets a CPU and an identity, and the
 * host is handed UMSI_ARM_WIRED_MSG | that CPU with the identity (the
 * kernel aims the SPI there and dispatches the identity); a move hands a
 * new CPU, the same identity. Without it (the default) INTx is refused.
 */
static void wired_inputs_are_the_kernels_spis(void **s)
{
	static const uint8_t if4[4] = { 0, 1, 2, 3 };
	struct umsi_gicv2m_config gc = { .frame = UMSI_SIM_V2M_BASE,
					 .dist = UMSI_SIM_GICD_BASE,
					 .nr_cpus = 4, .cpu_if = if4,
					 .wired_spis = true };
	struct umsi_sim_config sc = { .ncpus = 4,
				      .controller = UMSI_SIM_CTL_GICV2M };
	struct umsi_config cfg = { .ctl = &umsi_ctl_arm64_gicv2m,
				   .ctl_config = &gc };
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_host_ops ops;
	struct umsi_irq_info info;
	struct machine *m = calloc(1, sizeof(*m));
	struct umsi_pci_dev *dev;
	uint64_t w;
	struct umsi_cpumask mask = { &w, 4 };
	uint32_t irq, to;

	(void)s;
	real_ops = umsi_sim_host_ops();
	ops = *real_ops;
	ops.gsi_program = rec_gsi_program;
	assert_non_null(m);
	m->sim = umsi_sim_create(&sc);
	assert_non_null(m->sim);
	umsi_sim_leaks(m->sim, &m->leaks0);
	assert_int_equal(umsi_system_create(&ops, m->sim, &cfg, &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	dev = plug(m, DEV, &d, UMSI_PCI_ADD_FRESH);
	gsi_calls = 0;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_INTX),
			 1);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_true(gsi_calls >= 1);
	assert_true(last_gsi.msg.address & UMSI_ARM_WIRED_MSG);
	assert_int_equal(last_gsi.msg.address & 0xffffffffu, info.cpu);
	assert_int_equal(last_gsi.msg.data, info.vector);
	assert_true(info.vector < NSPI);
	to = (info.cpu + 1) % 4;
	w = 1ull << to;
	gsi_calls = 0;
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	assert_true(gsi_calls >= 1);
	assert_int_equal(last_gsi.msg.address & 0xffffffffu, to);
	assert_int_equal(last_gsi.msg.data, info.vector);
	/* Nothing of the frame's: the SPI of the identity stays off. */
	assert_false(spi_enabled(m, FIRST_SPI + info.vector));
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
	/* The default: no wired input is reachable, INTx refused. */
	gc.wired_spis = false;
	m = calloc(1, sizeof(*m));
	assert_non_null(m);
	m->sim = umsi_sim_create(&sc);
	assert_non_null(m->sim);
	umsi_sim_leaks(m->sim, &m->leaks0);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim, &cfg,
					    &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	dev = plug(m, DEV, &d, UMSI_PCI_ADD_FRESH);
	assert_true(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_INTX) < 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(configurations_and_frames_refused),
		cmocka_unit_test(creation_fails_cleanly_at_every_host_call),
		cmocka_unit_test(msix_vectors_are_spis_set_up_and_delivered),
		cmocka_unit_test(moves_rewrite_the_target_byte_only),
		cmocka_unit_test(the_frames_spis_run_out_cleanly),
		cmocka_unit_test(msi_blocks_are_aligned_runs_of_spis),
		cmocka_unit_test(cpus_without_an_interface_are_never_targets),
		cmocka_unit_test(wired_inputs_are_the_kernels_spis),
	};

	setenv("UMSI_TEST_CTL", "gicv2m", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
