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
 *
 * make test runs each binary that uses the fixtures both ways
 * (tests/unit-imsic.t for the second). A test that checks an x86-only fact
 * calls fx_skip_on_imsic() with a one-line reason.
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

/* True when UMSI_TEST_CTL asks for the IMSIC; any other value than
 * unset, "", "x86" and "imsic" is a mistake and stops the binary. */
static inline bool fx_imsic(void)
{
	const char *e = getenv("UMSI_TEST_CTL");

	if (!e || !*e || !strcmp(e, "x86"))
		return false;
	if (!strcmp(e, "imsic"))
		return true;
	fprintf(stderr, "UMSI_TEST_CTL=%s: expected x86 or imsic\n", e);
	exit(2);
}

static inline const char *fx_ctl_name(void)
{
	return fx_imsic() ? "imsic" : "x86";
}

/* Skip the current test on the IMSIC machine, saying why. */
#define fx_skip_on_imsic(why)                                               \
	do {                                                                \
		if (fx_imsic()) {                                           \
			print_message("[ SKIP-IMSIC ] %s\n", (why));        \
			skip();                                             \
		}                                                           \
	} while (0)

/* The simulator's configuration for the chosen controller. */
static inline void fx_sim_config(struct umsi_sim_config *sc)
{
	if (fx_imsic()) {
		sc->controller = UMSI_SIM_CTL_IMSIC;
		sc->imsic_num_ids = FX_IMSIC_NUM_IDS;
	}
}

/*
 * umsi_system_create() on the chosen controller: on x86 as given (@base
 * may be NULL: the default back end); on the IMSIC @base (or defaults)
 * with the IMSIC back end and every CPU's file as the simulator placed
 * it, except the CPUs of @nofile (bits 0-63), whose harts are configured
 * without one (file address 0: never a target). The back end reads its
 * configuration during the call only.
 */
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
 * A message that raises identity @id on CPU @cpu, composed by the test
 * rather than the library (for spurious and stray deliveries). On x86 the
 * CPU's APIC ID must be its number (machines built with apic_ids NULL).
 */
static inline void fx_raw_msg(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
			      struct umsi_msg *msg)
{
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
	else
		umsi_sim_set_dispatch(sim, fx_dispatch_vec, sys);
}

#endif /* UMSI_TEST_CTL_FIXTURE_H */
