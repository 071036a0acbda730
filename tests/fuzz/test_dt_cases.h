/* SPDX-License-Identifier: MIT */
/*
 * test_dt_cases.h - the host-bridge cases test_dt_arm64.c and
 * test_dt_riscv64.c run against their kernel's device-tree parser: the
 * architecture's machine (written with fdt_writer.h) with a generic ECAM
 * host bridge of a given reg size and bus-range, parsed, and the buses
 * the parser keeps or the line with which it refuses them. Each includes
 * it once, after its kernel's headers (struct fdt, fdt_init()).
 *
 * Before including this, the architecture's file defines:
 *   DT_ARCH             "arm64": the seeds' file name prefix
 *                       (DT_ARCH-name.dtb), the cmocka group's (dt_DT_ARCH)
 *   DT_PARSER           "dt.c": the file whose lines a failed check shows
 *   DT_PCI_FLAG         "have_pci": the platform's host-bridge-present
 *                       field, as a failed check names it
 *   QEMU_DTB            the tree QEMU gives (the baseline)
 *   DT_ECAM_LINE_NAMES_BUSES  1 if the parser's "dt: pci ecam" line names
 *                       the buses served (then checked), else 0
 *   DT_EMPTY_WINDOW     the bridge of empty_window_is_refused
 *   DT_BUS_END_ABOVE_8_BITS  the end of the bus-range from 0 of
 *                       bus_range_ending_above_8_bits_is_refused, a hex
 *                       literal (the refusal line quotes it: 0x100)
 * and after it, the functions declared under "What each architecture
 * supplies" below. Its main() lists DT_CASES_FIRST, its refusal cases
 * (the ones here and its own) and DT_CASES_LAST, and ends in
 * DT_CASES_RUN().
 */
#ifndef TESTS_FUZZ_TEST_DT_CASES_H
#define TESTS_FUZZ_TEST_DT_CASES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dt_shim.h"
#include "fdt_writer.h"

#define MIB		0x100000u

#define DT_STR_(x)	#x
#define DT_STR(x)	DT_STR_(x)

/* The host bridge of a test machine: reg's size, bus-range if any. */
struct bridge {
	uint64_t ecam_size;
	bool bus_range;
	uint32_t bus_start, bus_end;
};

/* What the parser kept of the host bridge, however the platform holds it. */
struct dt_pci {
	bool present;
	unsigned bus_start, bus_end;
	uint64_t ecam_size;
};

static _Alignas(8) uint8_t blob[16384];
static struct fdt tree;

/*
 * The start of a machine: the root (2-cell addresses and sizes), /chosen
 * with bootargs and @stdout_path if not NULL, and 256 MiB of memory at
 * @mem_base. The root is left open for the architecture's nodes.
 */
static void begin_machine(struct fdtw *w, const char *stdout_path,
			  uint32_t mem_base)
{
	char node[32];

	fdtw_init(w);
	fdtw_begin(w, "");
	fdtw_cells(w, "#address-cells", 1, 2);
	fdtw_cells(w, "#size-cells", 1, 2);

	fdtw_begin(w, "chosen");
	fdtw_string(w, "bootargs", "umsi.test");
	if (stdout_path)
		fdtw_string(w, "stdout-path", stdout_path);
	fdtw_end(w);

	snprintf(node, sizeof(node), "memory@%x", (unsigned)mem_base);
	fdtw_begin(w, node);
	fdtw_string(w, "device_type", "memory");
	fdtw_cells(w, "reg", 4, 0, (unsigned)mem_base, 0, 0x10000000);
	fdtw_end(w);
}

/*
 * The host bridge under test, node @node with @b's ECAM window at
 * @ecam_base and @b's bus-range if it has one; 3-cell child addresses,
 * 2-cell sizes. The node is left open for the architecture's ranges and
 * MSI parent.
 */
static void begin_bridge(struct fdtw *w, const char *node,
			 uint64_t ecam_base, const struct bridge *b)
{
	fdtw_begin(w, node);
	fdtw_string(w, "compatible", "pci-host-ecam-generic");
	fdtw_string(w, "device_type", "pci");
	fdtw_cells(w, "reg", 4,
		   (unsigned)(ecam_base >> 32), (unsigned)ecam_base,
		   (unsigned)(b->ecam_size >> 32), (unsigned)b->ecam_size);
	if (b->bus_range)
		fdtw_cells(w, "bus-range", 2, b->bus_start, b->bus_end);
	fdtw_cells(w, "#address-cells", 1, 3);
	fdtw_cells(w, "#size-cells", 1, 2);
}

/* What each architecture supplies. */

/*
 * The architecture's machine as QEMU virt shapes it, cut to what its
 * parser needs, with @b as its host bridge (begin_machine() ...
 * begin_bridge() ...), written to blob: its size, 0 if it does not fit.
 */
static size_t write_machine(const struct bridge *b);

/* The parser over tree, into the platform the test keeps: its answer. */
static int parse_platform(void);

/* The machine of write_machine() was found whole but for the host bridge. */
static void assert_machine(void);

/* The host bridge of the platform parse_platform() filled. */
static struct dt_pci platform_pci(void);

/* The cases. */

/* Parse @size bytes of blob as the kernel does at boot. */
static int parse_blob(size_t size)
{
	assert_int_equal(fdt_init(&tree, blob, (uint32_t)size), 0);
	dt_shim_reset();
	return parse_platform();
}

/* The machine with @b as its host bridge, parsed; the rest must be found. */
static void parse_machine(const struct bridge *b)
{
	size_t size = write_machine(b);

	assert_true(size > 0);
	assert_int_equal(parse_blob(size), 0);
	/* A refused host bridge takes nothing else away. */
	assert_machine();
}

/* What a failed check shows: the lines the parser printed. */
static void show_log(void)
{
	print_message(DT_PARSER " printed:\n%s", dt_shim_log());
}

static void assert_buses(unsigned start, unsigned end)
{
	struct dt_pci pci = platform_pci();

	if (!pci.present || pci.bus_start != start || pci.bus_end != end) {
		show_log();
		fail_msg(DT_PCI_FLAG " %d buses %x-%x, want buses %x-%x",
			 pci.present, pci.bus_start, pci.bus_end, start, end);
	}
}

static void assert_refused(const char *w1, const char *w2)
{
	struct dt_pci pci = platform_pci();

	if (pci.present || !dt_shim_line_has("dt: pci", w1, w2, NULL)) {
		show_log();
		fail_msg(DT_PCI_FLAG " %d (buses %x-%x); want PCI refused and "
			 "a line naming \"%s\" and \"%s\"", pci.present,
			 pci.bus_start, pci.bus_end, w1, w2);
	}
}

static void qemu_tree_serves_buses_0_to_255(void **state)
{
	FILE *f = fopen(QEMU_DTB, "rb");
	size_t size;

	(void)state;
	if (!f) {
		print_message("%s not readable (run from the source tree)\n",
			      QEMU_DTB);
		skip();
	}
	size = fread(blob, 1, sizeof(blob), f);
	fclose(f);
	assert_int_equal(parse_blob(size), 0);
	assert_buses(0x00, 0xff);
	assert_int_equal(platform_pci().ecam_size, 256 * MIB);
}

static void window_of_256_buses_serves_its_bus_range(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x00, 0xff };

	(void)state;
	parse_machine(&b);
	assert_buses(0x00, 0xff);
	if (DT_ECAM_LINE_NAMES_BUSES)
		assert_true(dt_shim_line_has("dt: pci ecam", "buses 00-ff",
					     NULL));
}

static void window_of_half_a_bus_is_refused(void **state)
{
	struct bridge b = { 512 * 1024, false, 0, 0 };

	(void)state;
	parse_machine(&b);
	assert_refused("size 0x80000", "smaller than one bus");
	/* The wrap of the regression: "buses 00-ffffffff". */
	if (DT_ECAM_LINE_NAMES_BUSES)
		assert_false(dt_shim_line_has("ffffffff", NULL));
}

static void empty_window_is_refused(void **state)
{
	struct bridge b = DT_EMPTY_WINDOW;

	(void)state;
	parse_machine(&b);
	assert_refused("size 0x0", "smaller than one bus");
}

static void bus_range_above_8_bits_is_refused(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x500, 0x5ff };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x500 0x5ff>", "8 bits");
}

static void bus_range_ending_above_8_bits_is_refused(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x00, DT_BUS_END_ABOVE_8_BITS };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x0 " DT_STR(DT_BUS_END_ABOVE_8_BITS) ">",
		       "8 bits");
}

static void bus_range_ending_before_its_start_is_refused(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x20, 0x10 };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x20 0x10>", "ends before it starts");
}

static void bus_range_is_cut_to_the_window(void **state)
{
	struct bridge b = { 4 * MIB, true, 0x10, 0xff };

	(void)state;
	parse_machine(&b);
	assert_buses(0x10, 0x13);
	assert_true(dt_shim_line_has("dt: pci", "covers 4 buses", NULL));
}

static void window_alone_gives_the_buses_from_0(void **state)
{
	struct bridge b = { 2 * MIB, false, 0, 0 };

	(void)state;
	parse_machine(&b);
	assert_buses(0x00, 0x01);
}

static void window_larger_than_bus_range_keeps_the_range(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x10, 0x1f };

	(void)state;
	parse_machine(&b);
	assert_buses(0x10, 0x1f);
}

static void one_bus_window_serves_bus_255(void **state)
{
	struct bridge b = { MIB, true, 0xff, 0xff };

	(void)state;
	parse_machine(&b);
	assert_buses(0xff, 0xff);
}

/* The cases every architecture runs first and last, its refusals between. */
#define DT_CASES_FIRST \
	cmocka_unit_test(qemu_tree_serves_buses_0_to_255), \
	cmocka_unit_test(window_of_256_buses_serves_its_bus_range)
#define DT_CASES_LAST \
	cmocka_unit_test(bus_range_is_cut_to_the_window), \
	cmocka_unit_test(window_alone_gives_the_buses_from_0), \
	cmocka_unit_test(window_larger_than_bus_range_keeps_the_range), \
	cmocka_unit_test(one_bus_window_serves_bus_255)

/*
 * The machines above as fuzzing seeds (tests/fuzz/corpus-dt), so the
 * bounded pass of fuzz_dt_ARCH replays the regressions:
 * test_dt_ARCH --write-trees DIR.
 */
static const struct {
	const char *name;
	struct bridge bridge;
} seed_trees[] = {
	{ "ecam-256-buses", { 256 * MIB, true, 0x00, 0xff } },
	{ "regress-ecam-512k", { 512 * 1024, false, 0, 0 } },
	{ "regress-ecam-0", { 0, true, 0x00, 0xff } },
	{ "regress-bus-range-500", { 256 * MIB, true, 0x500, 0x5ff } },
	{ "regress-bus-range-50000", { 256 * MIB, true, 0x50000, 0x500ff } },
	{ "regress-bus-range-backwards", { 256 * MIB, true, 0x20, 0x10 } },
	{ "ecam-4-buses-from-10", { 4 * MIB, true, 0x10, 0xff } },
};

static int write_trees(const char *dir)
{
	char path[4096];
	size_t i, size;
	FILE *f;

	for (i = 0; i < sizeof(seed_trees) / sizeof(seed_trees[0]); i++) {
		size = write_machine(&seed_trees[i].bridge);
		snprintf(path, sizeof(path), "%s/" DT_ARCH "-%s.dtb", dir,
			 seed_trees[i].name);
		f = fopen(path, "wb");
		if (!size || !f || fwrite(blob, 1, size, f) != size ||
		    fclose(f)) {
			fprintf(stderr, "%s: cannot write\n", path);
			return 1;
		}
	}
	return 0;
}

/*
 * What main() returns: with --write-trees DIR, the seeds written to DIR;
 * else @tests (an array) run as the group dt_DT_ARCH.
 */
#define DT_CASES_RUN(argc, argv, tests) \
	((argc) == 3 && !strcmp((argv)[1], "--write-trees") ? \
	 write_trees((argv)[2]) : \
	 cmocka_run_group_tests_name("dt_" DT_ARCH, tests, NULL, NULL))

#endif /* TESTS_FUZZ_TEST_DT_CASES_H */
