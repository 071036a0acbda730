/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the SR-IOV capability: umsi_pci_read_sriov_cap()
 * over a view whose bytes come from the input, then umsi_pci_sriov_check()
 * with a PF routing ID, a bus range, VF BAR sizes and a NumVFs from the
 * input. Not only "no crash": whatever the check accepts must be a layout
 * a kernel can use as is, so every promise of its kernel-doc is checked
 * here against the input (VFs inside the bus range, no routing ID past
 * 0xffff, every VF BAR assigned, aligned, not wrapping, and no two VF BAR
 * ranges meeting); a refusal must name its reason.
 *
 * Input layout (short inputs are zero-padded):
 *   [0, 64)    the capability's 64 bytes (read at extended offset 0x100)
 *   64, 65     the PF's routing ID (little-endian)
 *   66, 67     lowest and highest bus the VFs may use
 *   68, 69     NumVFs asked for
 *   70..75     VF BAR n's size as a power of two: 0 none, else 2^(b & 63)
 *   76         bit n: BAR n's size is the raw 64-bit value at 77 + 8n
 *   77..124    raw sizes
 *   125        the view is only 256 bytes (no extended space) when odd
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/pci_regs.h>
#include <umsi/pcicap.h>

#define LEN 126

struct fview {
	uint8_t cap[64];
};

static int f_read(void *ctx, uint16_t off, uint8_t width, uint32_t *val)
{
	const struct fview *v = ctx;
	uint32_t x = 0;

	for (uint8_t i = 0; i < width; i++) {
		uint16_t o = (uint16_t)(off + i);

		x |= (uint32_t)(o >= 0x100 && o < 0x140 ? v->cap[o - 0x100] :
				0) << (8 * i);
	}
	*val = x;
	return 0;
}

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_sriov: accepted a layout that breaks: %s\n",
			what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t in[LEN] = { 0 };
	struct fview fv;
	struct umsi_cfg_view v = { .read = f_read, .ctx = &fv, .size = 4096 };
	struct umsi_sriov_cap c;
	struct umsi_sriov_layout lay;
	uint64_t sz[6], end[6];
	const char *why = NULL;
	uint16_t pf, n;
	int ret;

	memcpy(in, data, size < LEN ? size : LEN);
	memcpy(fv.cap, in, 64);
	if (in[125] & 1)
		v.size = 256;
	ret = umsi_pci_read_sriov_cap(&v, 0x100, &c);
	if (v.size == 256) {
		must(ret == -UMSI_ERANGE, "a capability past the view read");
		return 0;
	}
	if (ret)
		return 0;
	pf = (uint16_t)(in[64] | in[65] << 8);
	n = (uint16_t)(in[68] | in[69] << 8);
	for (int i = 0; i < 6; i++) {
		sz[i] = in[70 + i] ? (uint64_t)1 << (in[70 + i] & 63) : 0;
		if (in[76] & (1u << i))
			memcpy(&sz[i], in + 77 + 8 * i, 8);
	}
	ret = umsi_pci_sriov_check(&c, pf, in[66], in[67], sz, n, &lay, &why);
	if (ret) {
		must(why && *why, "a refusal without a reason");
		return 0;
	}
	must(n >= 1 && n <= c.total_vfs, "NumVFs within 1..TotalVFs");
	must(lay.nvfs == n, "the layout's count");
	must((uint32_t)lay.first == (uint32_t)pf + c.first_offset,
	     "VF 0's routing ID");
	must((uint32_t)lay.last == (uint32_t)lay.first +
	     (uint32_t)(n - 1) * c.stride, "the last VF's routing ID");
	must((lay.first >> 8) >= in[66] && (lay.last >> 8) <= in[67],
	     "VFs on the buses allowed");
	must(c.first_offset != 0, "VF 0 is not the PF");
	must(n == 1 || c.stride != 0, "distinct routing IDs");
	for (int i = 0; i < 6; i++) {
		uint64_t s = lay.bar_size[i], a = lay.bar_addr[i];

		if (!s)
			continue;
		must(a != 0, "an assigned BAR");
		must(!(s & (s - 1)), "a power-of-two size");
		must(!(a & (s - 1)), "a BAR aligned to its size");
		must(s <= UINT64_MAX / n, "NumVFs times the size fits");
		end[i] = a + (s * n - 1);
		must(end[i] >= a, "a range that does not wrap");
		must(lay.bar_is64[i] || end[i] <= 0xffffffffull,
		     "a 32-bit BAR below 4 GiB");
		for (int j = 0; j < i; j++)
			if (lay.bar_size[j])
				must(end[j] < a || end[i] < lay.bar_addr[j],
				     "VF BAR ranges apart");
	}
	return 0;
}
