/* SPDX-License-Identifier: MIT */
/*
 * test_dt_arm64 - the arm64 reference kernel's device-tree parser
 * (kernel/arch/arm64/dt.c, compiled hosted and unmodified) on the
 * generic ECAM host bridge of trees written here (fdt_writer.h): a
 * window too small for one bus, a bus-range outside 8-bit bus numbers or
 * backwards is refused with a line that names it; a range is cut to the
 * buses the window covers. The device tree QEMU gives is the baseline.
 *
 * Regression: a pci-host-ecam-generic reg of 512 KiB (or 0) made
 * bus_start + (size >> 20) - 1 wrap ("buses 00-ffffffff") and 256 buses
 * were scanned through half a bus's window; a bus-range of <0x500 0x5ff>
 * was cut to its low 8 bits and read as buses 00-ff.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "a64.h"
#include "console.h"
#include "dt_shim.h"
#include "fdt_writer.h"

#define MIB		0x100000u
#define QEMU_DTB	"tests/fuzz/corpus-fdt/arm64-virt-gicv3-its-smp4.dtb"

/* The console dt.c moves to the tree's pl011 (console.c in the kernel). */
void console_set_base(uint64_t base)
{
	(void)base;
}

/* The host bridge of a test machine: reg's size, bus-range if any. */
struct bridge {
	uint64_t ecam_size;
	bool bus_range;
	uint32_t bus_start, bus_end;
};

static _Alignas(8) uint8_t blob[16384];
static struct fdt tree;
/* The kernel's own (a64.h; main.c defines it), filled as at boot. */
struct platform plat;

/*
 * QEMU virt's shape, cut to what dt_parse() needs: a pl011, memory, PSCI,
 * one CPU, a GICv3 with an ITS, and the host bridge at 0x40_1000_0000
 * (the high ECAM) with two memory windows and an msi-map onto the ITS.
 */
static size_t write_machine(const struct bridge *b)
{
	struct fdtw w;

	fdtw_init(&w);
	fdtw_begin(&w, "");
	fdtw_cells(&w, "#address-cells", 1, 2);
	fdtw_cells(&w, "#size-cells", 1, 2);

	fdtw_begin(&w, "chosen");
	fdtw_string(&w, "bootargs", "umsi.test");
	fdtw_end(&w);

	fdtw_begin(&w, "memory@40000000");
	fdtw_string(&w, "device_type", "memory");
	fdtw_cells(&w, "reg", 4, 0, 0x40000000, 0, 0x10000000);
	fdtw_end(&w);

	fdtw_begin(&w, "pl011@9000000");
	fdtw_strings(&w, "compatible", "arm,pl011\0arm,primecell");
	fdtw_cells(&w, "reg", 4, 0, 0x09000000, 0, 0x1000);
	fdtw_end(&w);

	fdtw_begin(&w, "psci");
	fdtw_strings(&w, "compatible",
		     "arm,psci-1.0\0arm,psci-0.2\0arm,psci");
	fdtw_string(&w, "method", "hvc");
	fdtw_end(&w);

	fdtw_begin(&w, "cpus");
	fdtw_cells(&w, "#address-cells", 1, 1);
	fdtw_cells(&w, "#size-cells", 1, 0);
	fdtw_begin(&w, "cpu@0");
	fdtw_string(&w, "device_type", "cpu");
	fdtw_string(&w, "enable-method", "psci");
	fdtw_cells(&w, "reg", 1, 0);
	fdtw_end(&w);
	fdtw_end(&w);

	fdtw_begin(&w, "intc@8000000");
	fdtw_string(&w, "compatible", "arm,gic-v3");
	fdtw_cells(&w, "#redistributor-regions", 1, 1);
	fdtw_cells(&w, "reg", 8, 0, 0x08000000, 0, 0x10000,
		   0, 0x080a0000, 0, 0xf60000);
	fdtw_cells(&w, "#address-cells", 1, 2);
	fdtw_cells(&w, "#size-cells", 1, 2);
	fdtw_flag(&w, "ranges");
	fdtw_begin(&w, "its@8080000");
	fdtw_string(&w, "compatible", "arm,gic-v3-its");
	fdtw_flag(&w, "msi-controller");
	fdtw_cells(&w, "reg", 4, 0, 0x08080000, 0, 0x20000);
	fdtw_cells(&w, "phandle", 1, 0x8006);
	fdtw_end(&w);
	fdtw_end(&w);

	fdtw_begin(&w, "pcie@10000000");
	fdtw_string(&w, "compatible", "pci-host-ecam-generic");
	fdtw_string(&w, "device_type", "pci");
	fdtw_cells(&w, "reg", 4, 0x40, 0x10000000,
		   (unsigned)(b->ecam_size >> 32), (unsigned)b->ecam_size);
	if (b->bus_range)
		fdtw_cells(&w, "bus-range", 2, b->bus_start, b->bus_end);
	fdtw_cells(&w, "#address-cells", 1, 3);
	fdtw_cells(&w, "#size-cells", 1, 2);
	fdtw_cells(&w, "ranges", 14,
		   0x02000000, 0, 0x10000000, 0, 0x10000000, 0, 0x2eff0000,
		   0x03000000, 0x80, 0, 0x80, 0, 0x80, 0);
	fdtw_cells(&w, "msi-map", 4, 0, 0x8006, 0, 0x10000);
	fdtw_end(&w);

	fdtw_end(&w);
	return fdtw_finish(&w, blob, sizeof(blob));
}

/* Parse @size bytes of blob as the kernel does at boot. */
static int parse_blob(size_t size)
{
	assert_int_equal(fdt_init(&tree, blob, (uint32_t)size), 0);
	memset(&plat, 0, sizeof(plat));
	dt_shim_reset();
	return dt_parse(&tree, &plat);
}

/* The machine with @b as its host bridge, parsed; the rest must be found. */
static void parse_machine(const struct bridge *b)
{
	size_t size = write_machine(b);

	assert_true(size > 0);
	assert_int_equal(parse_blob(size), 0);
	assert_int_equal(plat.ncpus, 1);
	assert_int_equal(plat.gicr_regions, 1);
	/* A refused host bridge takes nothing else away. */
	assert_int_equal(plat.its, 0x08080000);
}

/* What a failed check shows: the lines dt.c printed. */
static void show_log(void)
{
	print_message("dt.c printed:\n%s", dt_shim_log());
}

static void assert_buses(unsigned start, unsigned end)
{
	if (!plat.have_pci || plat.bus_start != start || plat.bus_end != end) {
		show_log();
		fail_msg("have_pci %d buses %x-%x, want buses %x-%x",
			 plat.have_pci, plat.bus_start, plat.bus_end, start, end);
	}
}

static void assert_refused(const char *w1, const char *w2)
{
	if (plat.have_pci || !dt_shim_line_has("dt: pci", w1, w2, NULL)) {
		show_log();
		fail_msg("have_pci %d (buses %x-%x); want PCI refused and a "
			 "line naming \"%s\" and \"%s\"", plat.have_pci,
			 plat.bus_start, plat.bus_end, w1, w2);
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
	assert_int_equal(plat.ecam_size, 256 * MIB);
}

static void window_of_256_buses_serves_its_bus_range(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x00, 0xff };

	(void)state;
	parse_machine(&b);
	assert_buses(0x00, 0xff);
	assert_true(dt_shim_line_has("dt: pci ecam", "buses 00-ff", NULL));
}

static void window_of_half_a_bus_is_refused(void **state)
{
	struct bridge b = { 512 * 1024, false, 0, 0 };

	(void)state;
	parse_machine(&b);
	assert_refused("size 0x80000", "smaller than one bus");
	assert_false(dt_shim_line_has("ffffffff", NULL));
}

static void window_of_half_a_bus_is_refused_under_bus_range(void **state)
{
	struct bridge b = { 512 * 1024, true, 0x00, 0xff };

	(void)state;
	parse_machine(&b);
	assert_refused("size 0x80000", "smaller than one bus");
}

static void empty_window_is_refused(void **state)
{
	struct bridge b = { 0, false, 0, 0 };

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
	struct bridge b = { 256 * MIB, true, 0x00, 0x100 };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x0 0x100>", "8 bits");
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

/*
 * The machines above as fuzzing seeds (tests/fuzz/corpus-dt), so the
 * bounded pass of fuzz_dt_arm64 replays the regressions:
 * test_dt_arm64 --write-trees DIR.
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
		snprintf(path, sizeof(path), "%s/arm64-%s.dtb", dir,
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(qemu_tree_serves_buses_0_to_255),
		cmocka_unit_test(window_of_256_buses_serves_its_bus_range),
		cmocka_unit_test(window_of_half_a_bus_is_refused),
		cmocka_unit_test(window_of_half_a_bus_is_refused_under_bus_range),
		cmocka_unit_test(empty_window_is_refused),
		cmocka_unit_test(bus_range_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_ending_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_ending_before_its_start_is_refused),
		cmocka_unit_test(bus_range_is_cut_to_the_window),
		cmocka_unit_test(window_alone_gives_the_buses_from_0),
		cmocka_unit_test(window_larger_than_bus_range_keeps_the_range),
		cmocka_unit_test(one_bus_window_serves_bus_255),
	};

	if (argc == 3 && !strcmp(argv[1], "--write-trees"))
		return write_trees(argv[2]);
	return cmocka_run_group_tests_name("dt_arm64", tests, NULL, NULL);
}
