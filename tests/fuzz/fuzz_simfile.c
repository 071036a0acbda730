/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the `umsi sim` machine-file parser
 * (tools/sim/simparse.c), on arbitrary bytes.
 *
 * Every input is parsed. A parse that succeeds must give a machine within
 * every limit the builder relies on; one that fails must say where
 * ("fuzz.umsi:LINE: ...") and leave nothing allocated (LeakSanitizer
 * checks). Either way is checked here, not just "no crash".
 *
 * Parse plus a small run: when the parsed machine is small (at most
 * FUZZ_SIM_CPUS CPUs, FUZZ_SIM_INST device instances and FUZZ_SIM_VEC
 * vectors asked for) it is also built and run through the library exactly
 * as `umsi sim` does (simrun.c), and every interrupt fired must be handled
 * once on the CPU uMSI chose. Parsing alone is a few hundred lines that
 * the fuzzer covers in seconds; issue 11's bugs were in what the parsed
 * numbers did afterwards (the instance array, the bus number), and odd
 * but valid machines (APIC IDs up to 2^32-1, no-msi, remap, policy from
 * cmdline, INTx lines shared by many functions) are what the library
 * should take calmly. The limits keep a run near a millisecond, so the
 * fuzzer still makes hundreds to thousands of executions a second; big
 * machines are still parsed and checked, just not run.
 *
 *   make fuzz-simfile-long FUZZ_TIME=3600
 */
#include <stdlib.h>
#include <string.h>

#include "simparse.h"
#include "simrun.h"

#define FUZZ_SIM_CPUS 8u
#define FUZZ_SIM_INST 8u
#define FUZZ_SIM_VEC  256u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static int fuzz_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* What sim_build() and the reports rely on. */
static void fuzz_check_spec(const struct sim_spec *sp)
{
	uint64_t ninst = 0, nvec = 0;
	uint32_t *ids;

	FUZZ_CHECK(sp->ncpus >= 1 && sp->ncpus <= SIM_MAX_CPUS);
	FUZZ_CHECK(sp->apic_ids && sp->cpus_line >= 1);
	ids = malloc(sp->ncpus * sizeof(*ids));
	FUZZ_CHECK(ids);
	memcpy(ids, sp->apic_ids, sp->ncpus * sizeof(*ids));
	qsort(ids, sp->ncpus, sizeof(*ids), fuzz_cmp_u32);
	for (uint32_t i = 1; i < sp->ncpus; i++)
		FUZZ_CHECK(ids[i] != ids[i - 1]);
	free(ids);
	FUZZ_CHECK(memchr(sp->cmdline, '\0', sizeof(sp->cmdline)));
	/* Sockets split the CPUs evenly: the last CPU is the last socket's. */
	if (sp->sockets) {
		FUZZ_CHECK(sp->sockets_line >= 1 && sp->ncpus % sp->sockets == 0);
		FUZZ_CHECK(sim_socket_of(sp, 0) == 0 &&
			   sim_socket_of(sp, sp->ncpus - 1) ==
			   (int32_t)sp->sockets - 1);
	} else {
		FUZZ_CHECK(sim_socket_of(sp, 0) == -1);
	}
	FUZZ_CHECK(sp->ndevs <= sp->cap_devs);
	for (unsigned i = 0; i < sp->ndevs; i++) {
		const struct sim_devspec *d = &sp->devs[i];
		size_t len = strnlen(d->name, sizeof(d->name));

		FUZZ_CHECK(len > 0 && len < sizeof(d->name));
		for (size_t k = 0; k < len; k++)
			FUZZ_CHECK(d->name[k] > 0x20 && d->name[k] < 0x7f);
		FUZZ_CHECK(d->msix || d->msi || d->intx);
		FUZZ_CHECK(d->msix <= SIM_MAX_MSIX && d->intx <= 4);
		FUZZ_CHECK(d->msi <= 32 && !(d->msi & (d->msi - 1)));
		FUZZ_CHECK(d->min >= 1 && d->min <= d->want);
		FUZZ_CHECK(d->want <= SIM_MAX_VECTORS);
		FUZZ_CHECK(d->count >= 1);
		ninst += d->count;
		nvec += (uint64_t)d->want * d->count;
	}
	FUZZ_CHECK(ninst == sp->ninst && ninst <= SIM_MAX_INSTANCES);
	FUZZ_CHECK(nvec == sp->nvec);
}

static void fuzz_run_small(const struct sim_spec *sp)
{
	struct sim_machine m;
	char err[SIM_ERR_LEN];

	if (sp->ncpus > FUZZ_SIM_CPUS || sp->ninst > FUZZ_SIM_INST ||
	    sp->nvec > FUZZ_SIM_VEC)
		return;
	/* A parsed machine within the limits must build. */
	FUZZ_CHECK(sim_build(&m, sp, err, sizeof(err)) == 0);
	sim_run(&m);
	/* Each vector granted was fired once: once handled, where chosen. */
	FUZZ_CHECK(m.fired == m.handled);
	FUZZ_CHECK(m.wrong_cpu == 0);
	for (unsigned j = 0; j < m.ninst; j++) {
		const struct sim_inst *in = &m.insts[j];

		FUZZ_CHECK(UMSI_BDF_SEG(in->bdf) == 0 &&
			   UMSI_BDF_BUS(in->bdf) >= SIM_FIRST_BUS);
		FUZZ_CHECK(in->granted <= (int)in->ds->want);
		FUZZ_CHECK(in->granted >= (int)in->ds->want || in->reason);
	}
	sim_machine_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char file[] = "fuzz.umsi";
	struct sim_spec sp;
	char err[SIM_ERR_LEN];

	if (sim_parse(&sp, (const char *)data, size, file, err, sizeof(err))) {
		/* Named, terminated, and nothing kept. */
		FUZZ_CHECK(!strncmp(err, "fuzz.umsi:", strlen(file) + 1));
		FUZZ_CHECK(memchr(err, '\0', sizeof(err)));
		FUZZ_CHECK(!sp.ncpus && !sp.apic_ids && !sp.devs);
		return 0;
	}
	fuzz_check_spec(&sp);
	fuzz_run_small(&sp);
	sim_spec_free(&sp);
	return 0;
}
