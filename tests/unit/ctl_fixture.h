/* SPDX-License-Identifier: MIT */
/*
 * Which interrupt controller the shared fixtures (test_pci_fixture.h,
 * irq_fixture.h) build their machine on, from the environment:
 *
 *   UMSI_TEST_CTL unset or "x86"   the simulator's x86 LAPIC model and
 *                                  the default back end (umsi_ctl_x86_lapic)
 *   UMSI_TEST_CTL=imsic            the simulator's IMSIC model (files of
 *                                  FX_IMSIC_NUM_IDS identities) and the
 *                                  RISC-V IMSIC back end, file addresses
 *                                  as the simulator placed them
 *   UMSI_TEST_CTL=its              the simulator's GICv3 ITS model and the
 *                                  Arm ITS back end (FX_ITS_NVEC LPIs a
 *                                  CPU, processor number n for CPU n);
 *                                  the kernel's dispatch takes INTID -
 *                                  8192 (UMSI_ITS_LPI_BASE)
 *   UMSI_TEST_CTL=gicv2m           the simulator's GICv2 with a v2m frame
 *                                  (SPIs 80..143, as QEMU virt) and the
 *                                  Arm GICv2m back end, CPU n on CPU
 *                                  interface n (n < 8; beyond, none);
 *                                  the kernel's dispatch takes INTID -
 *                                  80 (UMSI_SIM_V2M_SPI_BASE)
 *   UMSI_TEST_CTL=vtd              the simulator's x86 machine with
 *                                  VT-d remapping and the VT-d back end
 *                                  (umsi_ctl_x86_vtd): the same vectors,
 *                                  every message through a table entry
 *                                  (EIM when the machine is x2APIC); two
 *                                  units (fx_vtd_units()), every requester
 *                                  the IO-APIC's too in the second's
 *                                  scope, so each test runs through a
 *                                  unit a DMAR scope picks, not the first
 *   UMSI_TEST_CTL=amdvi            the simulator's x86 machine with
 *                                  AMD-Vi and the AMD-Vi back end
 *                                  (umsi_ctl_x86_amdvi): the same vectors,
 *                                  every MSI through an entry of its
 *                                  requester's table, INTx through the
 *                                  IO-APIC's (given as a table of one,
 *                                  ioapics); no APIC ID above 255; two
 *                                  IOMMUs (fx_amdvi_units()), every
 *                                  DeviceID in use the second's
 * (test_vtd.c and test_amdvi.c run the one-unit form, reg_base.)
 *
 * make test runs each binary that uses the fixtures three ways
 * (mk/unit-imsic.mk and mk/unit-its.mk for the second and third). A test
 * that checks an x86-only fact calls fx_skip_unless_x86() with a one-line
 * reason; one that checks a fact another controller does not share calls
 * fx_skip_on_imsic() or fx_skip_on_its().
 */
#ifndef UMSI_TEST_CTL_FIXTURE_H
#define UMSI_TEST_CTL_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <umsi/ctl.h>
#include <umsi/irq.h>
#include <umsi/x86.h>
#include "sim/umsi_sim.h"

#define FX_IMSIC_NUM_IDS 255u
#define FX_ITS_NVEC      256u

enum fx_ctl { FX_CTL_X86, FX_CTL_IMSIC, FX_CTL_ITS, FX_CTL_VTD,
	      FX_CTL_GICV2M, FX_CTL_AMDVI };

/* The controller UMSI_TEST_CTL asks for; any other value than unset, "",
 * "x86", "imsic" and "its" is a mistake and stops the binary. */
static inline enum fx_ctl fx_ctl(void)
{
	const char *e = getenv("UMSI_TEST_CTL");

	if (!e || !*e || !strcmp(e, "x86"))
		return FX_CTL_X86;
	if (!strcmp(e, "imsic"))
		return FX_CTL_IMSIC;
	if (!strcmp(e, "its"))
		return FX_CTL_ITS;
	if (!strcmp(e, "vtd"))
		return FX_CTL_VTD;
	if (!strcmp(e, "gicv2m"))
		return FX_CTL_GICV2M;
	if (!strcmp(e, "amdvi"))
		return FX_CTL_AMDVI;
	fprintf(stderr, "UMSI_TEST_CTL=%s: expected x86, imsic, its, vtd, "
		"gicv2m or amdvi\n", e);
	exit(2);
}

static inline bool fx_x86(void)
{
	return fx_ctl() == FX_CTL_X86;
}

static inline bool fx_imsic(void)
{
	return fx_ctl() == FX_CTL_IMSIC;
}

static inline bool fx_its(void)
{
	return fx_ctl() == FX_CTL_ITS;
}

static inline bool fx_vtd(void)
{
	return fx_ctl() == FX_CTL_VTD;
}

static inline bool fx_gicv2m(void)
{
	return fx_ctl() == FX_CTL_GICV2M;
}

static inline bool fx_amdvi(void)
{
	return fx_ctl() == FX_CTL_AMDVI;
}

/* An x86 machine whose MSIs go through a remapping unit (VT-d, AMD-Vi). */
static inline bool fx_remap(void)
{
	return fx_vtd() || fx_amdvi();
}

/* An Arm machine: the kernel acknowledges and ends interrupts itself. */
static inline bool fx_arm(void)
{
	return fx_its() || fx_gicv2m();
}

static inline const char *fx_ctl_name(void)
{
	static const char *const n[] = { "x86", "imsic", "its", "vtd",
					  "gicv2m", "amdvi" };

	return n[fx_ctl()];
}

#define fx_skip_if_(cond, tag, why)                                         \
	do {                                                                \
		if (cond) {                                                 \
			print_message("[ SKIP-%s ] %s\n", (tag), (why));     \
			skip();                                             \
		}                                                           \
	} while (0)

/* Skip the current test on the named machine(s), saying why. */
#define fx_skip_on_imsic(why) fx_skip_if_(fx_imsic(), "IMSIC", why)
#define fx_skip_on_its(why)   fx_skip_if_(fx_its(), "ITS", why)
/* VT-d, and AMD-Vi: what a remapping unit changes (see fx_remap()). */
#define fx_skip_on_vtd(why)   fx_skip_if_(fx_remap(), fx_vtd() ? "VTD" :    \
					  "AMDVI", why)
#define fx_skip_on_amdvi(why) fx_skip_if_(fx_amdvi(), "AMDVI", why)
#define fx_skip_on_gicv2m(why) fx_skip_if_(fx_gicv2m(), "GICV2M", why)
#define fx_skip_unless_x86(why)                                             \
	fx_skip_if_(!fx_x86(), fx_imsic() ? "IMSIC" : fx_its() ? "ITS" :     \
		    fx_gicv2m() ? "GICV2M" : fx_vtd() ? "VTD" : "AMDVI", why)

/*
 * The remapping machines' units (for the simulator and the back end
 * alike): a first unit whose scope is bus 0xfe, which no test uses, and
 * a second with every other requester of segment 0 (VT-d: by scope, not
 * INCLUDE_PCI_ALL; AMD-Vi: by DeviceID ranges).
 */
static inline const struct umsi_vtd_unit *fx_vtd_units(void)
{
	static const struct umsi_rid_range first[] = { { 0xfe00, 0xfeff } };
	static const struct umsi_rid_range rest[] = {
		{ 0x0000, 0xfdff }, { 0xff00, 0xffff } };
	static const struct umsi_vtd_unit u[2] = {
		{ .reg_base = UMSI_SIM_VTD_BASE, .scope = first, .nscope = 1 },
		{ .reg_base = UMSI_SIM_VTD_BASE + 0x1000, .scope = rest,
		  .nscope = 2 },
	};

	return u;
}

static inline const struct umsi_amdvi_unit *fx_amdvi_units(void)
{
	static const struct umsi_rid_range first[] = { { 0xfe00, 0xfeff } };
	static const struct umsi_rid_range rest[] = {
		{ 0x0000, 0xfdff }, { 0xff00, 0xffff } };
	static const struct umsi_amdvi_unit u[2] = {
		{ .reg_base = UMSI_SIM_AMDVI_BASE, .devices = first,
		  .ndevices = 1 },
		{ .reg_base = UMSI_SIM_AMDVI_BASE + 0x4000, .devices = rest,
		  .ndevices = 2 },
	};

	return u;
}

/* The simulator's configuration for the chosen controller. */
static inline void fx_sim_config(struct umsi_sim_config *sc)
{
	if (fx_imsic()) {
		sc->controller = UMSI_SIM_CTL_IMSIC;
		sc->imsic_num_ids = FX_IMSIC_NUM_IDS;
	} else if (fx_its()) {
		sc->controller = UMSI_SIM_CTL_ITS;
	} else if (fx_gicv2m()) {
		sc->controller = UMSI_SIM_CTL_GICV2M;
	} else if (fx_amdvi()) {
		sc->amdvi_units = fx_amdvi_units();
		sc->namdvi_units = 2;
		sc->vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
	} else if (fx_vtd()) {
		sc->vtd_units = fx_vtd_units();
		sc->nvtd_units = 2;
		sc->vtd_eim = (sc->plat_flags & UMSI_PLAT_X2APIC) != 0;
		sc->vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
	}
}

/*
 * umsi_system_create() on the chosen controller: on x86 as given (@base
 * may be NULL: the default back end); on the IMSIC @base (or defaults)
 * with the IMSIC back end and every CPU's file as the simulator placed
 * it, except the CPUs of @nofile (bits 0-63), whose harts are configured
 * without one (file address 0: never a target); on the ITS @base (or
 * defaults) with the ITS back end, FX_ITS_NVEC LPIs a CPU and processor
 * number n as CPU n's redistributor, except the CPUs of @nofile
 * (UMSI_ITS_NO_RD: never a target). The back end reads its configuration
 * during the call only.
 */
static inline int fx_its_system_create(const struct umsi_host_ops *ops,
				       struct umsi_sim *sim,
				       const struct umsi_config *base,
				       uint64_t nord,
				       struct umsi_system **out)
{
	struct umsi_config cfg;
	struct umsi_its_config ic;
	uint64_t *rd;
	uint32_t i, n = umsi_sim_ncpus(sim);
	int ret;

	rd = calloc(n ? n : 1, sizeof(*rd));
	assert_non_null(rd);
	for (i = 0; i < n; i++)
		rd[i] = i < 64 && (nord >> i & 1) ? UMSI_ITS_NO_RD : i;
	memset(&ic, 0, sizeof(ic));
	ic.its_base = UMSI_SIM_ITS_BASE;
	ic.nvec = FX_ITS_NVEC;
	ic.nr_cpus = n;
	ic.rd_target = rd;
	/* As the reference kernel: INTx arrives as SPIs it routes. */
	ic.wired_spis = true;
	if (base)
		cfg = *base;
	else
		memset(&cfg, 0, sizeof(cfg));
	cfg.ctl = &umsi_ctl_arm64_its;
	cfg.ctl_config = &ic;
	ret = umsi_system_create(ops, sim, &cfg, out);
	free(rd);
	return ret;
}

/*
 * umsi_system_create() on the GICv2m machine: @base (or defaults) with
 * the GICv2m back end, CPU n on interface n for n < 8, except the CPUs of
 * @noif (UMSI_GICV2M_NO_IF: never a target), and none beyond 8 (a GICv2
 * targets 8 interfaces).
 */
static inline int fx_gicv2m_system_create(const struct umsi_host_ops *ops,
					  struct umsi_sim *sim,
					  const struct umsi_config *base,
					  uint64_t noif,
					  struct umsi_system **out)
{
	struct umsi_config cfg;
	struct umsi_gicv2m_config gc;
	uint8_t *cif;
	uint32_t i, n = umsi_sim_ncpus(sim);
	int ret;

	cif = calloc(n ? n : 1, 1);
	assert_non_null(cif);
	for (i = 0; i < n; i++)
		cif[i] = i < 8 && !(noif >> i & 1) ? (uint8_t)i :
			 UMSI_GICV2M_NO_IF;
	memset(&gc, 0, sizeof(gc));
	gc.frame = UMSI_SIM_V2M_BASE;
	gc.dist = UMSI_SIM_GICD_BASE;
	gc.nr_cpus = n;
	gc.cpu_if = cif;
	gc.wired_spis = true;
	if (base)
		cfg = *base;
	else
		memset(&cfg, 0, sizeof(cfg));
	cfg.ctl = &umsi_ctl_arm64_gicv2m;
	cfg.ctl_config = &gc;
	ret = umsi_system_create(ops, sim, &cfg, out);
	free(cif);
	return ret;
}

static inline int fx_system_create_nofile(const struct umsi_host_ops *ops,
					  struct umsi_sim *sim,
					  const struct umsi_config *base,
					  uint64_t nofile,
					  struct umsi_system **out)
{
	struct umsi_config cfg;
	struct umsi_imsic_config ic;
	uint64_t *files;
	uint32_t i, n = umsi_sim_ncpus(sim);
	int ret;

	if (fx_its())
		return fx_its_system_create(ops, sim, base, nofile, out);
	if (fx_gicv2m())
		return fx_gicv2m_system_create(ops, sim, base, nofile, out);
	if (fx_amdvi()) {
		/* The IO-APIC as a table of one (the VT-d runs give its ID
		 * alone, ioapic_sid): both forms run every shared test. */
		static const struct umsi_ioapic_source one = {
			.gsi_base = 0, .gsi_count = 24,
			.source_id = UMSI_SIM_VTD_IOAPIC_SID };
		struct umsi_amdvi_config ac;

		memset(&ac, 0, sizeof(ac));
		ac.units = fx_amdvi_units();
		ac.nunits = 2;
		ac.ioapic_devid = UMSI_AMDVI_NO_DEVID;
		ac.ioapics = &one;
		ac.nioapics = 1;
		if (base)
			cfg = *base;
		else
			memset(&cfg, 0, sizeof(cfg));
		cfg.ctl = &umsi_ctl_x86_amdvi;
		cfg.ctl_config = &ac;
		return umsi_system_create(ops, sim, &cfg, out);
	}
	if (fx_vtd()) {
		struct umsi_vtd_config vc;

		memset(&vc, 0, sizeof(vc));
		vc.units = fx_vtd_units();
		vc.nunits = 2;
		vc.x2apic = (umsi_sim_host_ops()->platform_flags(sim) &
			     UMSI_PLAT_X2APIC) != 0;
		vc.ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
		if (base)
			cfg = *base;
		else
			memset(&cfg, 0, sizeof(cfg));
		cfg.ctl = &umsi_ctl_x86_vtd;
		cfg.ctl_config = &vc;
		return umsi_system_create(ops, sim, &cfg, out);
	}
	if (!fx_imsic())
		return umsi_system_create(ops, sim, base, out);
	files = calloc(n, sizeof(*files));
	assert_non_null(files);
	for (i = 0; i < n; i++)
		if (i >= 64 || !(nofile >> i & 1))
			files[i] = umsi_sim_imsic_file_addr(sim, i);
	memset(&ic, 0, sizeof(ic));
	ic.num_ids = FX_IMSIC_NUM_IDS;
	ic.nr_files = n;
	ic.file_addr = files;
	if (base)
		cfg = *base;
	else
		memset(&cfg, 0, sizeof(cfg));
	cfg.ctl = &umsi_ctl_riscv_imsic;
	cfg.ctl_config = &ic;
	ret = umsi_system_create(ops, sim, &cfg, out);
	free(files);
	return ret;
}

static inline int fx_system_create_ops(const struct umsi_host_ops *ops,
				       struct umsi_sim *sim,
				       const struct umsi_config *base,
				       struct umsi_system **out)
{
	return fx_system_create_nofile(ops, sim, base, 0, out);
}

static inline int fx_system_create(struct umsi_sim *sim,
				   const struct umsi_config *base,
				   struct umsi_system **out)
{
	return fx_system_create_ops(umsi_sim_host_ops(), sim, base, out);
}

static inline int fx_dispatch_vec(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

static inline int fx_dispatch_id(void *arg, uint32_t cpu, uint32_t id)
{
	return umsi_dispatch(arg, cpu, id);
}

/*
 * The core's identity of what the simulator reports as identity @id
 * (umsi_sim_target.id): on the ITS an INTID, LPI = 8192 + the global
 * identity; elsewhere the same.
 */
static inline uint32_t fx_core_id(uint32_t id)
{
	return fx_its() ? id - UMSI_ITS_LPI_BASE :
	       fx_gicv2m() ? id - UMSI_SIM_V2M_SPI_BASE : id;
}

/* What an arm64 kernel on a GICv2 does with GICC_IAR's INTID. */
static inline int fx_dispatch_spi(void *arg, uint32_t cpu, uint32_t intid)
{
	return umsi_dispatch(arg, cpu, intid - UMSI_SIM_V2M_SPI_BASE);
}

/* What an arm64 kernel does with ICC_IAR1_EL1's INTID. */
static inline int fx_dispatch_lpi(void *arg, uint32_t cpu, uint32_t intid)
{
	return umsi_dispatch(arg, cpu, intid - UMSI_ITS_LPI_BASE);
}

/*
 * A message that raises identity @id on CPU @cpu, composed by the test
 * rather than the library (for spurious and stray deliveries). On x86 the
 * CPU's APIC ID must be its number (machines built with apic_ids NULL).
 * Not on the ITS: a message there raises an LPI only through a device's
 * mapped event, so callers skip on it (fx_skip_on_its) first.
 */
static inline void fx_raw_msg(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
			      struct umsi_msg *msg)
{
	if (fx_its())
		fail_msg("fx_raw_msg: no raw LPI on the ITS");
	if (fx_gicv2m()) {
		/* An SPI goes where its target byte says, not where we ask. */
		(void)cpu;
		msg->address = UMSI_SIM_V2M_BASE + 0x40;
		msg->data = UMSI_SIM_V2M_SPI_BASE + id;
		return;
	}
	if (fx_imsic()) {
		msg->address = umsi_sim_imsic_file_addr(sim, cpu);
		msg->data = id;
	} else {
		assert_int_equal(umsi_x86_msg_compose(cpu, (uint8_t)id, 0, msg),
				 0);
	}
}

/* The simulator's CPUs enter the library's dispatch. */
static inline void fx_set_dispatch(struct umsi_sim *sim,
				   struct umsi_system *sys)
{
	if (fx_imsic())
		umsi_sim_set_dispatch_id(sim, fx_dispatch_id, sys);
	else if (fx_its())
		umsi_sim_set_dispatch_id(sim, fx_dispatch_lpi, sys);
	else if (fx_gicv2m())
		umsi_sim_set_dispatch_id(sim, fx_dispatch_spi, sys);
	else
		umsi_sim_set_dispatch(sim, fx_dispatch_vec, sys);
}

#endif /* UMSI_TEST_CTL_FIXTURE_H */
