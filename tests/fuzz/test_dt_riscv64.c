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
 *
 * The cases are test_dt_cases.h's, shared with test_dt_arm64; this file
 * gives the riscv64 machine and how platform.c's platform is read.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform.h"

#define DT_ARCH		"riscv64"
#define DT_PARSER	"platform.c"
#define DT_PCI_FLAG	"present"
#define QEMU_DTB	"tests/fuzz/corpus-fdt/riscv64-virt-imsic-smp4.dtb"
#define DT_ECAM_LINE_NAMES_BUSES 0
#define DT_EMPTY_WINDOW	{ 0, true, 0x00, 0xff }
#define DT_BUS_END_ABOVE_8_BITS 0x1ff

#include "test_dt_cases.h"

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

	begin_machine(&w, "/soc/serial@10000000", 0x80000000);

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

	begin_bridge(&w, "pci@30000000", 0x30000000, b);
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

static int parse_platform(void)
{
	return rv_platform_parse(&tree, &plat);
}

static void assert_machine(void)
{
	assert_int_equal(plat.nharts, 1);
	assert_int_equal(plat.uart_base, 0x10000000);
	assert_true(plat.imsic.present);
	assert_int_equal(plat.harts[0].imsic_file, 0x28000000);
}

static struct dt_pci platform_pci(void)
{
	struct dt_pci pci = {
		plat.pci.present, plat.pci.bus_start, plat.pci.bus_end,
		plat.pci.ecam_size
	};

	return pci;
}

static void bus_range_far_above_8_bits_is_refused(void **state)
{
	struct bridge b = { 256 * MIB, true, 0x50000, 0x500ff };

	(void)state;
	parse_machine(&b);
	assert_refused("bus-range <0x50000 0x500ff>", "8 bits");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		DT_CASES_FIRST,
		cmocka_unit_test(bus_range_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_far_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_ending_above_8_bits_is_refused),
		cmocka_unit_test(bus_range_ending_before_its_start_is_refused),
		cmocka_unit_test(window_of_half_a_bus_is_refused),
		cmocka_unit_test(empty_window_is_refused),
		DT_CASES_LAST,
	};

	return DT_CASES_RUN(argc, argv, tests);
}
