/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for `umsi inspect`: the dump parser, the capability
 * decoder (the library's walk and MSI/MSI-X decoding), the MSI-X table
 * location checks, the x86 message decoder, the --check judgements and
 * both writers, on arbitrary bytes. No I/O but writes to /dev/null.
 *
 * The input is a dump. Its first line is also tried as a `-s` selector.
 * BAR sizes for the location check and the MSI-X table contents are taken
 * from the input's last bytes, so they vary with it. Every other input is
 * judged as a live machine would be: two CPUs, and Linux IRQs owning some
 * of each table's entries.
 *
 *   make fuzz-inspect-long FUZZ_TIME=3600
 */
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

static FILE *null_out;

static uint32_t word_at(const uint8_t *data, size_t size, size_t i)
{
	uint32_t v = 0;

	for (size_t k = 0; k < 4 && size; k++)
		v |= (uint32_t)data[(i * 4 + k) % size] << (8 * k);
	return v;
}

/* Give a decoded MSI-X device a table made of input bytes. */
static void fake_table(struct inspect_dev *d, const uint8_t *data, size_t size)
{
	d->entries = calloc(d->msix.table_size, sizeof(*d->entries));
	if (!d->entries)
		return;
	for (uint32_t i = 0; i < d->msix.table_size; i++) {
		struct inspect_msix_entry *e = &d->entries[i];

		e->index = i;
		e->address = (uint64_t)word_at(data, size, 4 * i + 1) << 32 |
			     word_at(data, size, 4 * i);
		e->data = word_at(data, size, 4 * i + 2);
		e->ctrl = word_at(data, size, 4 * i + 3);
		e->pending = e->ctrl & 2;
		inspect_decode_entry(e);
	}
}

/*
 * Linux's side, made up: an IRQ for every entry whose index is a multiple
 * of 3, with an affinity that depends on the input. The IRQs live in the
 * device, as live.c leaves them, so inspect_report_free() frees them.
 */
static void fake_irqs(struct inspect_dev *d, const uint8_t *data, size_t size)
{
	uint32_t n = (d->msix.table_size + 2) / 3;

	d->linux_known = true;
	d->msix_irqs = calloc(n, sizeof(*d->msix_irqs));
	if (!d->msix_irqs || !d->entries)
		return;
	d->n_msix_irqs = n;
	for (uint32_t k = 0; k < n; k++) {
		struct inspect_irq *q = &d->msix_irqs[k];

		q->index = 3 * k;
		q->index_known = true;
		q->irq = (int)(24 + k);
		q->cpu_vector = q->target_cpu = -1;
		if (word_at(data, size, k) & 1)
			snprintf(q->affinity, sizeof(q->affinity), "%u",
				 word_at(data, size, k + 1) & 3);
		d->entries[q->index].irq = q;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inspect_fn_list fl = { 0 };
	struct inspect_report rep;
	uint64_t bar_size[6];
	char sel[64];
	size_t n;
	umsi_bdf_t bdf;

	if (!null_out)
		null_out = fopen("/dev/null", "w");
	/* BAR sizes from the last 24 bytes (0 for short inputs). */
	for (size_t i = 0; i < 6; i++)
		bar_size[i] = size >= 24 ?
			      word_at(data + size - 24, 24, i) : 0;

	/* The first line as a selector: it must parse or fail, never crash. */
	n = 0;
	while (n < size && n + 1 < sizeof(sel) && data[n] != '\n')
		n++;
	memcpy(sel, data, n);
	sel[n] = 0;
	(void)inspect_parse_selector(sel, &bdf);

	inspect_report_init(&rep, "fuzz");
	if (inspect_dump_parse((const char *)data, size, &fl, &rep) == 0) {
		for (size_t i = 0; i < fl.n; i++) {
			struct inspect_dev *d;

			d = inspect_decode_fn(&rep, &fl.fns[i],
					      (i & 1) ? bar_size : NULL);
			if (d && d->has_msix && (i & 1)) {
				fake_table(d, data, size);
				if (size & 1)
					fake_irqs(d, data, size);
			}
		}
	}
	if (size & 1) {
		static const struct inspect_apic two[2] = { { 0, 0 }, { 1, 2 } };

		rep.live = true;
		rep.apics = malloc(sizeof(two));
		if (rep.apics) {
			memcpy(rep.apics, two, sizeof(two));
			rep.napics = 2;
		}
	}
	if (inspect_check(&rep) == 0) {
		/* Every finding is about a function of the report. */
		for (size_t i = 0; i < rep.nfindings; i++) {
			bool known = false;

			for (size_t k = 0; k < rep.ndevs && !known; k++)
				known = rep.devs[k].bdf == rep.findings[i].bdf;
			if (!known || !rep.findings[i].message[0])
				__builtin_trap();
		}
	}
	if (null_out) {
		inspect_write_json(null_out, &rep);
		inspect_write_text(null_out, &rep, true);
		inspect_write_check_text(null_out, &rep);
	}
	inspect_report_free(&rep);
	inspect_fn_list_free(&fl);
	return 0;
}
