/* SPDX-License-Identifier: MIT */
/*
 * `umsi inspect --json`: the report as one JSON document.
 *
 * Shape (issue 7): {"source", "devices":[{"bdf","vendor","device",
 * "msi":{...}|null, "msix":{..., "entries":[...]|null, "entries_reason"}|
 * null}], "errors":[{"bdf","message"}]}, and with --check "findings":
 * [{"bdf","line","check","capability","entry","message"}], "not_checked"
 * and "functions_checked". Hex values are lowercase strings with 0x;
 * counts, indexes, vectors and IDs are numbers.
 */
#include <string.h>

#include "inspect.h"

static void str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void hex(FILE *f, uint64_t v)
{
	fprintf(f, "\"0x%llx\"", (unsigned long long)v);
}

static void boolean(FILE *f, bool b)
{
	fputs(b ? "true" : "false", f);
}

/* The x86 decoding of one message, as members of the enclosing object. */
static void msg_fields(FILE *f, const struct umsi_x86_msi *m)
{
	fputs(",\"x86\":", f);
	boolean(f, m->valid);
	if (!m->valid) {
		fputs(",\"dest_id\":null,\"dest_mode\":null,\"redirection_hint\":null,"
		      "\"delivery_mode\":null,\"trigger\":null,\"remapped\":null,"
		      "\"ir_handle\":null,\"vector\":null", f);
		return;
	}
	fputs(",\"remapped\":", f);
	boolean(f, m->remapped);
	if (m->remapped) {
		fprintf(f, ",\"ir_handle\":%u,\"ir_subhandle_valid\":", m->handle);
		boolean(f, m->shv);
		fprintf(f, ",\"ir_subhandle\":%u", m->subhandle);
		fputs(",\"dest_id\":null,\"dest_mode\":null,\"redirection_hint\":null,"
		      "\"delivery_mode\":null,\"trigger\":null,\"vector\":null", f);
		return;
	}
	fprintf(f, ",\"ir_handle\":null,\"dest_id\":%u,\"dest_mode\":\"%s\"",
		m->dest_id, m->logical ? "logical" : "physical");
	fputs(",\"redirection_hint\":", f);
	boolean(f, m->redir_hint);
	fprintf(f, ",\"delivery_mode\":\"%s\",\"trigger\":\"%s\",\"vector\":%u",
		inspect_delivery_name(m->delivery), m->level ? "level" : "edge",
		m->vector);
}

static void irq_fields(FILE *f, const struct inspect_report *rep,
		       const struct inspect_irq *q)
{
	if (!q) {
		fputs(",\"irq\":null,\"counts\":null,\"effective_affinity\":null", f);
		return;
	}
	fprintf(f, ",\"irq\":%d,\"counts\":", q->irq);
	if (q->counts) {
		fputc('[', f);
		for (unsigned c = 0; c < rep->ncpus; c++)
			fprintf(f, "%s%llu", c ? "," : "",
				(unsigned long long)q->counts[c]);
		fputc(']', f);
	} else {
		fputs("null", f);
	}
	fputs(",\"effective_affinity\":", f);
	if (q->affinity[0])
		str(f, q->affinity);
	else
		fputs("null", f);
	fputs(",\"cpu_vector\":", f);
	if (q->cpu_vector >= 0)
		fprintf(f, "%d", q->cpu_vector);
	else
		fputs("null", f);
	fputs(",\"target_cpu\":", f);
	if (q->target_cpu >= 0)
		fprintf(f, "%d", q->target_cpu);
	else
		fputs("null", f);
	fputs(",\"chip\":", f);
	str(f, q->chip);
	fputs(",\"actions\":", f);
	str(f, q->actions);
}

static void irq_list(FILE *f, const struct inspect_report *rep,
		     const struct inspect_dev *d, const struct inspect_irq *q,
		     size_t n)
{
	fputs(",\"irqs\":", f);
	if (!d->linux_known) {
		fputs("null", f);
		return;
	}
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",{" : "{", f);
		if (q[i].index_known)
			fprintf(f, "\"index\":%u", q[i].index);
		else
			fputs("\"index\":null", f);
		irq_fields(f, rep, &q[i]);
		fputc('}', f);
	}
	fputc(']', f);
}

static void msi(FILE *f, const struct inspect_report *rep,
		const struct inspect_dev *d)
{
	const struct umsi_msi_cap *m = &d->msi;

	fputs(",\"msi\":", f);
	if (!d->has_msi) {
		fputs("null", f);
		return;
	}
	fputs("{\"cap\":", f);
	hex(f, m->off);
	fputs(",\"enabled\":", f);
	boolean(f, m->enabled);
	fprintf(f, ",\"count_cap\":%u,\"count_enabled\":%u,\"addr64\":",
		d->msi_count_cap, d->msi_count_enabled);
	boolean(f, m->addr64);
	fputs(",\"maskable\":", f);
	boolean(f, m->maskable);
	fputs(",\"address\":", f);
	hex(f, m->address);
	fputs(",\"data\":", f);
	hex(f, m->data);
	fputs(",\"mask\":", f);
	if (m->maskable)
		hex(f, m->mask);
	else
		fputs("null", f);
	fputs(",\"pending\":", f);
	if (m->maskable)
		hex(f, m->pending);
	else
		fputs("null", f);
	fputs(",\"message\":{", f);
	/* msg_fields() starts with a comma; open with a harmless member. */
	fputs("\"vectors\":", f);
	if (d->msi_msg.valid && !d->msi_msg.remapped)
		fprintf(f, "%u", d->msi_count_enabled);
	else
		fputs("null", f);
	msg_fields(f, &d->msi_msg);
	fputc('}', f);
	irq_list(f, rep, d, d->msi_irqs, d->n_msi_irqs);
	fputc('}', f);
}

static void entry(FILE *f, const struct inspect_report *rep,
		  const struct inspect_msix_entry *e)
{
	fprintf(f, "{\"index\":%u,\"address\":", e->index);
	hex(f, e->address);
	fputs(",\"data\":", f);
	hex(f, e->data);
	fputs(",\"ctrl\":", f);
	hex(f, e->ctrl);
	fputs(",\"masked\":", f);
	boolean(f, e->ctrl & 1);
	fputs(",\"pending\":", f);
	boolean(f, e->pending);
	msg_fields(f, &e->msg);
	irq_fields(f, rep, e->irq);
	fputc('}', f);
}

static void msix(FILE *f, const struct inspect_report *rep,
		 const struct inspect_dev *d)
{
	const struct umsi_msix_cap *x = &d->msix;

	fputs(",\"msix\":", f);
	if (!d->has_msix) {
		fputs("null", f);
		return;
	}
	fputs("{\"cap\":", f);
	hex(f, x->off);
	fputs(",\"enabled\":", f);
	boolean(f, x->enabled);
	fputs(",\"function_mask\":", f);
	boolean(f, x->function_mask);
	fprintf(f, ",\"table_size\":%u,\"table_bar\":%u,\"table_offset\":",
		x->table_size, x->table_bir);
	hex(f, x->table_offset);
	fprintf(f, ",\"pba_bar\":%u,\"pba_offset\":", x->pba_bir);
	hex(f, x->pba_offset);
	fputs(",\"entries\":", f);
	if (d->entries) {
		fputc('[', f);
		for (uint32_t i = 0; i < x->table_size; i++) {
			if (i)
				fputc(',', f);
			entry(f, rep, &d->entries[i]);
		}
		fputs("],\"entries_reason\":null", f);
	} else {
		fputs("null,\"entries_reason\":", f);
		str(f, d->entries_reason[0] ? d->entries_reason :
		    "the table was not read");
	}
	irq_list(f, rep, d, d->msix_irqs, d->n_msix_irqs);
	fputc('}', f);
}

/* A dump's line number, or null (live mode, or the input as a whole). */
static void line(FILE *f, unsigned n);

/* --check: "findings", "not_checked", "functions_checked". */
static void check(FILE *f, const struct inspect_report *rep)
{
	char bdf[16];

	fputs(",\n\"findings\":[", f);
	for (size_t i = 0; i < rep->nfindings; i++) {
		const struct inspect_finding *x = &rep->findings[i];

		inspect_bdf_str(x->bdf, bdf);
		fprintf(f, "%s\n{\"bdf\":\"%s\",\"line\":", i ? "," : "", bdf);
		line(f, x->line);
		fputs(",\"check\":", f);
		str(f, x->check);
		fprintf(f, ",\"capability\":\"%s\",\"entry\":",
			x->msix ? "msix" : "msi");
		if (x->entry >= 0)
			fprintf(f, "%d", (int)x->entry);
		else
			fputs("null", f);
		fputs(",\"message\":", f);
		str(f, x->message);
		fputc('}', f);
	}
	fputs("],\n\"not_checked\":[", f);
	for (size_t i = 0; i < rep->ncheck_notes; i++) {
		if (i)
			fputc(',', f);
		str(f, rep->check_notes[i]);
	}
	fprintf(f, "],\"functions_checked\":%zu", rep->check_fns);
}

static void line(FILE *f, unsigned n)
{
	if (n)
		fprintf(f, "%u", n);
	else
		fputs("null", f);
}

void inspect_write_json(FILE *f, const struct inspect_report *rep)
{
	char bdf[16];

	fputs("{\"source\":", f);
	str(f, rep->source);
	fputs(",\"notes\":[", f);
	for (size_t i = 0; i < rep->nnotes; i++) {
		if (i)
			fputc(',', f);
		str(f, rep->notes[i]);
	}
	fputs("],\"cpus\":", f);
	if (rep->cpus) {
		fputc('[', f);
		for (unsigned c = 0; c < rep->ncpus; c++)
			fprintf(f, "%s%u", c ? "," : "", rep->cpus[c]);
		fputc(']', f);
	} else {
		fputs("null", f);
	}
	fputs(",\n\"devices\":[", f);
	for (size_t i = 0; i < rep->ndevs; i++) {
		const struct inspect_dev *d = &rep->devs[i];

		inspect_bdf_str(d->bdf, bdf);
		fprintf(f, "%s\n{\"bdf\":\"%s\",\"line\":", i ? "," : "", bdf);
		line(f, d->line);
		fputs(",\"vendor\":", f);
		hex(f, d->vendor);
		fputs(",\"device\":", f);
		hex(f, d->device);
		fprintf(f, ",\"config_size\":%u,\"capabilities_read\":",
			d->cfg_size);
		boolean(f, !d->cfg_short);
		msi(f, rep, d);
		msix(f, rep, d);
		fputc('}', f);
	}
	fputs("],\n\"errors\":[", f);
	for (size_t i = 0; i < rep->nerrs; i++) {
		const struct inspect_err *e = &rep->errs[i];

		fprintf(f, "%s\n{\"bdf\":", i ? "," : "");
		if (e->bdf[0])
			str(f, e->bdf);
		else
			fputs("null", f);
		fputs(",\"line\":", f);
		line(f, e->line);
		fputs(",\"message\":", f);
		str(f, e->message);
		fputc('}', f);
	}
	fputc(']', f);
	if (rep->checked)
		check(f, rep);
	fputs("}\n", f);
}
