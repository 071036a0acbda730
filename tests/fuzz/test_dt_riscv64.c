/* SPDX-License-Identifier: MIT */
/*
 * test_dt_riscv64 - the riscv64 reference kernel's device-tree parser
 * (kernel/arch/riscv64/platform.c, compiled hosted and unmodified) on the
 * generic ECAM host bridge of trees written here (fdt_writer.h): a
 * bus-range outside 8-bit bus numbers or backwards, or a window too small
 * for one bus, is refused with a line that names it; a range is cut to
 * the buses the window covers. The device tree QEMU gives is the baseline.
 *
 * Regression: a bus-range whose start is above 255 had only its end cut
 * to 255, bus_end - bus_start wrapped, and PCI was marked present with
 * buses 0x500-0x5ff (<0x50000 0x500ff>: 327680-327935), which main.c
 * then cut to 8 bits for the shared PCI code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "platform.h"
#include "dt_shim.h"
#include "fdt_writer.h"

#define MIB		0x100000u
#define QEMU_DTB	"tests/fuzz/corpus-fdt/riscv64-virt-imsic-smp4.dtb"

/* The host bridge of a test machine: reg's size, bus-range if any. */
struct bridge {
	uint64_t ecam_size;
	bool bus_range;
	uint32_t bus_start, bus_end;
};

static _Alignas(8) uint8_t blob[16384];
static struct fdt tree;
static struct rv_platform plat;

/*
 * QEMU virt's shape, cut to what rv_platform_parse() needs: a 16550 named
 * by stdout-path, memory, one hart with its interrupt controller, an
 * S-level IMSIC, and the host bridge at 0x3000_0000 with its I/O and
 * memory windows and msi-parent the IMSIC.
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
	fdtw_string(&w, "stdout-path", "/soc/serial@10000000");
	fdtw_end(&w);

	fdtw_begin(&w, "memory@80000000");
	fdtw_string(&w, "device_type", "memory");
	fdtw_cells(&w, "reg", 4, 0, 0x80000000, 0, 0x10000000);
	fdtw_end(&w);

	fdtw_begin(&w, "cpus");
	fdtw_cells(&w, "#address-cells", 1, 1);
	fdtw_cells(&w, "#size-cells", 1, 0);
	fdtw_cells(&w, "timebase-frequency", 1, 10000000);
	fdtw_begin(&w, "cpu@0");
	fdtw_string(&w, "device_type", "cpu");
	fdtw_cells(&w, "reg", 1, 0);
	fdtw_string(&w, "status", "okay");
	fdtw_begin(&w, "interrupt-controller");
	fdtw_string(&w, "compatible", "riscv,cpu-intc");
	fdtw_cells(&w, "#interrupt-cells", 1, 1);
	fdtw_flag(&w, "interrupt-controller");
	fdtw_cells(&w, "phandle", 1, 1);
	fdtw_end(&w);
	fdtw_end(&w);
	fdtw_end(&w);

	fdtw_begin(&w, "soc");
	fdtw_cells(&w, "#address-cells", 1, 2);
	fdtw_cells(&w, "#size-cells", 1, 2);
	fdtw_strings(&w, "compatible", "simple-bus");
	fdtw_flag(&w, "ranges");

	fdtw_begin(&w, "serial@10000000");
	fdtw_string(&w, "compatible", "ns16550a");
	fdtw_cells(&w, "reg", 4, 0, 0x10000000, 0, 0x100);
	fdtw_end(&w);

	fdtw_begin(&w, "imsics@28000000");
	fdtw_string(&w, "compatible", "riscv,imsics");
	fdtw_cells(&w, "reg", 4, 0, 0x28000000, 0, 0x1000);
	fdtw_cells(&w, "interrupts-extended", 2, 1, 9);
	fdtw_cells(&w, "riscv,num-ids", 1, 0xff);
	fdtw_flag(&w, "msi-controller");
	fdtw_flag(&w, "interrupt-controller");
	fdtw_cells(&w, "phandle", 1, 2);
	fdtw_end(&w);

	fdtw_begin(&w, "pci@30000000");
	fdtw_string(&w, "compatible", "pci-host-ecam-generic");
	fdtw_string(&w, "device_type", "pci");
	fdtw_cells(&w, "reg", 4, 0, 0x30000000,
		   (unsigned)(b->ecam_size >> 32), (unsigned)b->ecam_size);
	if (b->bus_range)
		fdtw_cells(&w, "bus-range", 2, b->bus_start, b->bus_end);
	fdtw_cells(&w, "#address-cells", 1, 3);
	fdtw_cells(&w, "#size-cells", 1, 2);
	fdtw_cells(&w, "ranges", 21,
		   0x01000000, 0, 0, 0, 0x03000000, 0, 0x10000,
		   0x02000000, 0, 0x40000000, 0, 0x40000000, 0, 0x40000000,
		   0x03000000, 0x4, 0, 0x4, 0, 0x4, 0);
	fdtw_cells(&w, "msi-parent", 1, 2);
	fdtw_end(&w);

	fdtw_end(&w);
	fdtw_end(&w);
	return fdtw_finish(&w, blob, sizeof(blob));
}

/* Parse @size bytes of blob as the kernel does at boot. */
static int parse_blob(size_t size)
{
	assert_int_equal(fdt_init(&tree, blob, (uint32_t)size), 0);
	dt_shim_reset();
	return rv_platform_parse(&tree, &plat);
}

/* The machine with @b as its host bridge, parsed; the rest must be found. */
static void parse_machine(const struct bridge *b)
{
	size_t size = write_machine(b);

	assert_true(size > 0);
	assert_int_equal(parse_blob(size), 0);
	assert_int_equal(plat.nharts, 1);
	assert_int_equal(plat.uart_base, 0x10000000);
	/* A refused host bridge takes nothing else away. */
	assert_true(plat.imsic.present);
	assert_int_equal(plat.harts[0].imsic_file, 0x28000000);
}

/* What a failed check shows: the lines platform.c printed. */
static void show_log(void)
{
	print_message("platform.c printed:\n%s", dt_shim_log());
}

static void assert_buses(unsigned start, unsigned end)
{
	if (!plat.pci.present || plat.pci.bus_start != start ||
	    plat.pci.bus_end != end) {
		show_log();
		fail_msg("present %d buses %x-%x, want buses %x-%x",
			 plat.pci.present, plat.pci.bus_start,
			 plat.pci.bus_end, start, end);
	}
}

static void assert_refused(const char *w1, const char *w2)
{
	if (plat.pci.present || !dt_shim_line_has("dt: pci", w1, w2, NULL)) {
		show_log();
		fail_msg("present %d (buses %x-%x); want PCI refused and a "
			 "line naming \"%s\" and \"%s\"", plat.pci.present,
			 plat.pci.bus_start, plat.pci.bus_end, w1, w2);
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
	assert_int_equal(plat.pci.ecam_size, 256 * MIB);
}

static void window_of_256_buses_serves_its_bus_range(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x00, 0xff };

	(void)state;
	parse_machine(&b);
	assert_buses(0x00, 0xff);
}

static void bus_range_above_8_bits_is_refused(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x500, 0x5ff };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x500 0x5ff>", "8 bits");
}

static void bus_range_far_above_8_bits_is_refused(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x50000, 0x500ff };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x50000 0x500ff>", "8 bits");
}

static void bus_range_ending_above_8_bits_is_refused(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x00, 0x1ff };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x0 0x1ff>", "8 bits");
}

static void bus_range_ending_before_its_start_is_refused(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x20, 0x10 };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x20 0x10>", "ends before it starts");
}

static void window_of_half_a_bus_is_refused(void **state)
{
	struct bridge b = { 512 * 1024, false, 0, 0 };

	(void)state;
	parse_machine(&b);
	assert_refused("size 0x80000", "smaller than one bus");
}

static void empty_window_is_refused(void **state)
{
	struct bridge b = { 0, true, 0x00, 0xff };

	(void)state;
	parse_machine(&b);
	assert_refused("size 0x0", "smaller than one bus");
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
 * bounded pass of fuzz_dt_riscv64 replays the regressions:
 * test_dt_riscv64 --write-trees DIR.
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
		snprintf(path, sizeof(path), "%s/riscv64-%s.dtb", dir,
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
		cmocka_unit_test(bus_range_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_far_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_ending_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_ending_before_its_start_is_refused),
		cmocka_unit_test(window_of_half_a_bus_is_refused),
		cmocka_unit_test(empty_window_is_refused),
		cmocka_unit_test(bus_range_is_cut_to_the_window),
		cmocka_unit_test(window_alone_gives_the_buses_from_0),
		cmocka_unit_test(window_larger_than_bus_range_keeps_the_range),
		cmocka_unit_test(one_bus_window_serves_bus_255),
	};

	if (argc == 3 && !strcmp(argv[1], "--write-trees"))
		return write_trees(argv[2]);
	return cmocka_run_group_tests_name("dt_riscv64", tests, NULL, NULL);
}
