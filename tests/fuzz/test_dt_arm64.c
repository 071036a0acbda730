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
 *
 * The cases are test_dt_cases.h's, shared with test_dt_riscv64; this file
 * gives the arm64 machine and how dt.c's platform is read.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "a64.h"
#include "console.h"

#define DT_ARCH		"arm64"
#define DT_PARSER	"dt.c"
#define DT_PCI_FLAG	"have_pci"
#define QEMU_DTB	"tests/fuzz/corpus-fdt/arm64-virt-gicv3-its-smp4.dtb"
/* dt.c's "dt: pci ecam" line names the buses (it wrapped to ffffffff). */
#define DT_ECAM_LINE_NAMES_BUSES 1
#define DT_EMPTY_WINDOW	{ 0, false, 0, 0 }
#define DT_BUS_END_ABOVE_8_BITS 0x100

#include "test_dt_cases.h"

/* The console dt.c moves to the tree's pl011 (console.c in the kernel). */
void console_set_base(uint64_t base)
{
	(void)base;
}

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

	begin_machine(&w, NULL, 0x40000000);

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

	begin_bridge(&w, "pcie@10000000", 0x4010000000ull, b);
	fdtw_cells(&w, "ranges", 14,
		   0x02000000, 0, 0x10000000, 0, 0x10000000, 0, 0x2eff0000,
		   0x03000000, 0x80, 0, 0x80, 0, 0x80, 0);
	fdtw_cells(&w, "msi-map", 4, 0, 0x8006, 0, 0x10000);
	fdtw_end(&w);

	fdtw_end(&w);
	return fdtw_finish(&w, blob, sizeof(blob));
}

static int parse_platform(void)
{
	memset(&plat, 0, sizeof(plat));
	return dt_parse(&tree, &plat);
}

static void assert_machine(void)
{
	assert_int_equal(plat.ncpus, 1);
	assert_int_equal(plat.gicr_regions, 1);
	assert_int_equal(plat.its, 0x08080000);
}

static struct dt_pci platform_pci(void)
{
	struct dt_pci pci = {
		plat.have_pci, plat.bus_start, plat.bus_end, plat.ecam_size
	};

	return pci;
}

static void window_of_half_a_bus_is_refused_under_bus_range(void **state)
{
	struct bridge b = { 512 * 1024, true, 0x00, 0xff };

	(void)state;
	parse_machine(&b);
	assert_refused("size 0x80000", "smaller than one bus");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		DT_CASES_FIRST,
		cmocka_unit_test(window_of_half_a_bus_is_refused),
		cmocka_unit_test(window_of_half_a_bus_is_refused_under_bus_range),
		cmocka_unit_test(empty_window_is_refused),
		cmocka_unit_test(bus_range_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_ending_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_ending_before_its_start_is_refused),
		DT_CASES_LAST,
	};

	return DT_CASES_RUN(argc, argv, tests);
}
