/* SPDX-License-Identifier: MIT */
/*
 * fuzz_kpci - the reference kernels' reading of a bridge's configuration
 * space (kernel/common/pci.c), compiled hosted and unmodified, on hostile
 * device data: what room a hot-plug port keeps for a card (its PCI Express
 * capability, QEMU's resource-reserve hint among its vendor-specific
 * capabilities, umsi.hp_buses=), and the capability scan of a new
 * function. The input is function 00:01.0's 256 bytes of configuration
 * space, then a kernel command line (read once a boot by
 * pci_hp_port_room(), so its parsers are also called for each input); the
 * rest of the ECAM window reads all-ones. Besides the sanitizers: the room is at least one bus and at
 * most 255, and every capability offset found lies inside the space.
 *
 * Input layout (short inputs are zero-padded):
 *   [0, 256)   configuration space of 00:01.0
 *   [256, ..)  the command line (umsi.hp_buses=, umsi.hp_mem=, ...)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernel/common/pci.c"

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* One bus of ECAM: 32 devices x 8 functions x 4 KiB. */
static uint8_t *window;
static char cmdline[256];

struct acpi_info acpi;

void kprintf(const char *fmt, ...)
{
	(void)fmt;
}

void panic(const char *fmt, ...)
{
	(void)fmt;
	abort();
}

/* pci_bring_up()'s, which nothing here calls. */
void pci_judge_fresh(void)
{
}

void pci_resources_init(void)
{
}

void *mm_map_mmio(uint64_t phys, uint64_t len)
{
	(void)phys;
	FUZZ_CHECK(len == 1u << 20);
	return window;
}

/* The value of @key= in the input's command line (first match). */
const char *cmdline_value(const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);
	const char *p = cmdline;

	while (*p) {
		const char *w = p;
		size_t n = strcspn(p, " ");

		if (n > klen && !strncmp(w, key, klen) && w[klen] == '=') {
			size_t v = n - klen - 1;

			if (v >= size)
				v = size - 1;
			memcpy(buf, w + klen + 1, v);
			buf[v] = '\0';
			return buf;
		}
		p += n;
		p += strspn(p, " ");
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t bdf = PCI_BDF(0, 1, 0);
	struct pci_hp_room room;
	size_t n = size < 256 ? size : 256;
	int idx;

	if (!window) {
		window = malloc(1u << 20);
		if (!window)
			return 0;
	}
	memset(window, 0xff, 1u << 20);
	memset(window + (1u << 15), 0, 4096);
	memcpy(window + (1u << 15), data, n);
	memset(cmdline, 0, sizeof(cmdline));
	if (size > 256) {
		size_t c = size - 256 < sizeof(cmdline) - 1 ? size - 256 :
			   sizeof(cmdline) - 1;

		memcpy(cmdline, data + 256, c);
		for (size_t i = 0; i < c; i++)
			if (!cmdline[i])
				cmdline[i] = ' ';
	}
	/* The command line's room (pci_hp_port_room() reads it once a
	 * boot, so each input's is read here too). */
	FUZZ_CHECK(hp_room_buses() >= 1 && hp_room_buses() <= 32);
	FUZZ_CHECK(hp_room_mib("umsi.hp_mem", 2ull << 20) >= 1u << 20 &&
		   hp_room_mib("umsi.hp_mem", 2ull << 20) <= 1ull << 30);
	pci_set_ecam(0xe0000000u, 0, 0);
	memset(&room, 0, sizeof(room));
	if (pci_hp_port_room(bdf, &room)) {
		FUZZ_CHECK(room.buses >= 1 && room.buses <= 255);
		FUZZ_CHECK(room.mem >= 1u << 20 && room.mem <= 1ull << 30);
		FUZZ_CHECK(room.pref >= 1u << 20 && room.pref <= 1ull << 30);
	}
	pci_ndevs = 0;
	memset(pci_devs, 0, sizeof(pci_devs));
	idx = pci_new_function(bdf, 0, -1);
	if (idx >= 0) {
		const struct pci_dev *d = &pci_devs[idx];

		FUZZ_CHECK(!d->msi_cap || (d->msi_cap >= 0x40 && d->msi_cap <= 0xfc));
		FUZZ_CHECK(!d->msix_cap || (d->msix_cap >= 0x40 && d->msix_cap <= 0xfc));
		FUZZ_CHECK(!d->pcie_cap || (d->pcie_cap >= 0x40 && d->pcie_cap <= 0xfc));
	}
	return 0;
}
