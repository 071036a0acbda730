/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the text `umsi inspect` reads on a live machine
 * (tools/inspect/livetext.c): /proc/interrupts, /proc/cpuinfo (APIC IDs
 * and the x2apic flag), the sysfs `resource` file, debugfs IRQ files,
 * debugfs's x86 vector matrix (irq/domains/VECTOR), the lockdown file,
 * effective_affinity_list and /sys/devices/system/cpu/possible,
 * physical_package_id, and the names of /sys/bus/pci/devices and
 * msi_irqs entries. The dump parser has its own target (fuzz_inspect.c).
 *
 * Every parser gets the whole input, as if it were its file, and what it
 * returns is checked against the limits live.c relies on: counts no wider
 * than the CPU columns, MSI-X entries below 2048, vectors below 256, BARs
 * that do not wrap, names that print back as they were read, CPU lists
 * whose count and highest CPU agree with inspect_cpulist_has(), a vector
 * matrix sorted by CPU with each CPU once.
 *
 *   make fuzz-livetext-long FUZZ_TIME=3600
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "inspect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static void fuzz_interrupts(const uint8_t *data, size_t size)
{
	struct inspect_proc_interrupts pi;
	/* The functions asked about: 00:03.0, one from the input, and one in
	 * domain 1 (Linux 6.1's hwirq holds the domain too). */
	umsi_bdf_t bdfs[3] = {
		UMSI_BDF(0, 0, 3, 0),
		size >= 2 ? (umsi_bdf_t)(data[0] | data[1] << 8) : 0,
		UMSI_BDF(1, 0x3a, 0, 0),
	};

	if (inspect_parse_interrupts((const char *)data, size, &pi))
		return;
	FUZZ_CHECK(pi.ncpus <= INSPECT_MAX_CPUS);
	FUZZ_CHECK(!pi.ncpus == !pi.cpus);
	for (size_t i = 0; i < pi.nirqs; i++) {
		const struct inspect_proc_irq *q = &pi.irqs[i];
		uint32_t index;

		FUZZ_CHECK(q->irq >= 0 && q->ncounts <= pi.ncpus);
		FUZZ_CHECK(!q->ncounts == !q->counts);
		FUZZ_CHECK(memchr(q->chip, 0, sizeof(q->chip)));
		FUZZ_CHECK(memchr(q->actions, 0, sizeof(q->actions)));
		FUZZ_CHECK(inspect_find_proc_irq(&pi, q->irq));
		for (size_t b = 0; b < 3; b++)
			if (inspect_irq_index(q, bdfs[b], &index))
				FUZZ_CHECK(index < 2048);
	}
	inspect_proc_interrupts_free(&pi);
}

/* /proc/cpuinfo: pairs sorted by APIC ID, no more than the input has lines. */
static void fuzz_cpuinfo(const uint8_t *data, size_t size)
{
	struct inspect_apic *a;
	size_t n, lines = 1;

	if (inspect_parse_cpuinfo((const char *)data, size, &a, &n))
		return;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	FUZZ_CHECK(!n == !a && n <= lines);
	for (size_t i = 1; i < n; i++)
		FUZZ_CHECK(a[i - 1].apic_id <= a[i].apic_id);
	/* The x2apic flag only where a flags line was seen. */
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(!a[i].x2apic || a[i].flags_seen);
	free(a);
}

/* debugfs irq/domains/VECTOR: CPUs ascending, each once, found again. */
static void fuzz_vector_domain(const uint8_t *data, size_t size)
{
	struct inspect_vector_domain vd;
	int r = inspect_parse_vector_domain((const char *)data, size, &vd);

	if (r) {
		FUZZ_CHECK(!vd.cpus && !vd.ncpus);
		return;
	}
	FUZZ_CHECK(vd.ncpus && vd.cpus);
	for (size_t i = 0; i < vd.ncpus; i++) {
		FUZZ_CHECK(!i || vd.cpus[i - 1].cpu < vd.cpus[i].cpu);
		FUZZ_CHECK(inspect_vector_domain_cpu(&vd, vd.cpus[i].cpu) ==
			   &vd.cpus[i]);
	}
	inspect_vector_domain_free(&vd);
}

static void fuzz_small_files(const char *text)
{
	uint64_t start[6], bsize[6];
	char mode[64], aff[64], b[16];
	int vector, target, irq;
	umsi_bdf_t bdf;

	inspect_parse_debugfs_irq(text, &vector, &target);
	FUZZ_CHECK(vector >= -1 && vector <= 255 && target >= -1);

	inspect_parse_resources(text, start, bsize);
	for (int i = 0; i < 6; i++)
		FUZZ_CHECK(!bsize[i] || start[i] + (bsize[i] - 1) >= start[i]);

	inspect_parse_lockdown(text, mode, sizeof(mode));
	FUZZ_CHECK(memchr(mode, 0, sizeof(mode)));

	if (inspect_parse_cpulist(text, aff, sizeof(aff))) {
		unsigned count, max;

		FUZZ_CHECK(strspn(aff, "0123456789,-") == strlen(aff) && aff[0]);
		/* The list holds its own first CPU, and its highest. */
		FUZZ_CHECK(inspect_cpulist_has(aff, (unsigned)strtoul(aff, NULL, 10)));
		FUZZ_CHECK(inspect_cpulist_stats(aff, &count, &max));
		FUZZ_CHECK(count >= 1 && inspect_cpulist_has(aff, max));
	} else
		FUZZ_CHECK(!aff[0]);
	{
		int pkg;

		/* A package ID parses only from an int and a newline at most. */
		if (inspect_parse_int_line(text, &pkg))
			FUZZ_CHECK(strspn(text, "-0123456789\n") == strlen(text));
	}

	/* A name that parses prints back as itself (but for hex case). */
	if (inspect_parse_sysfs_name(text, &bdf)) {
		inspect_bdf_str(bdf, b);
		FUZZ_CHECK(!strcasecmp(b, text));
	}
	if (inspect_parse_irq_number(text, &irq))
		FUZZ_CHECK(irq >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	fuzz_interrupts(data, size);
	fuzz_cpuinfo(data, size);
	fuzz_vector_domain(data, size);
	fuzz_small_files(text);
	/* The first line alone, as the one-line files are. */
	text[strcspn(text, "\n")] = '\0';
	fuzz_small_files(text);
	free(text);
	return 0;
}
