/* SPDX-License-Identifier: MIT */
/*
 * fdt_writer.c - see fdt_writer.h. Layout from the Devicetree
 * Specification v0.4: 5.2 (header), 5.3 (memory reservation block),
 * 5.4 (structure block tokens, 4-byte aligned), 5.5 (strings block).
 */
#include <stdarg.h>
#include <string.h>

#include "fdt_writer.h"

#define FDTW_MAGIC		0xd00dfeedu
#define FDTW_VERSION		17
#define FDTW_LAST_COMP		16
#define FDTW_HEADER_SIZE	40
#define FDTW_RSVMAP_SIZE	16	/* the terminating all-zero entry */

#define FDTW_BEGIN_NODE		1
#define FDTW_END_NODE		2
#define FDTW_PROP		3
#define FDTW_END		9

static void fdtw_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Append @len bytes to the structure block, then zeros to a 4-byte edge. */
static void fdtw_put(struct fdtw *w, const void *p, uint32_t len)
{
	uint32_t padded = (len + 3) & ~3u;

	if (w->full || padded > sizeof(w->strct) - w->strct_len) {
		w->full = true;
		return;
	}
	if (len)
		memcpy(w->strct + w->strct_len, p, len);
	memset(w->strct + w->strct_len + len, 0, padded - len);
	w->strct_len += padded;
}

static void fdtw_token(struct fdtw *w, uint32_t v)
{
	uint8_t b[4];

	fdtw_put_be32(b, v);
	fdtw_put(w, b, 4);
}

/* The offset of @name in the strings block, added when it is new. */
static uint32_t fdtw_string_off(struct fdtw *w, const char *name)
{
	uint32_t off = 0, len = (uint32_t)strlen(name) + 1;

	while (off < w->strings_len) {
		if (!strcmp(w->strings + off, name))
			return off;
		off += (uint32_t)strlen(w->strings + off) + 1;
	}
	if (len > sizeof(w->strings) - w->strings_len) {
		w->full = true;
		return 0;
	}
	memcpy(w->strings + w->strings_len, name, len);
	w->strings_len += len;
	return off;
}

void fdtw_init(struct fdtw *w)
{
	memset(w, 0, sizeof(*w));
}

void fdtw_begin(struct fdtw *w, const char *name)
{
	fdtw_token(w, FDTW_BEGIN_NODE);
	fdtw_put(w, name, (uint32_t)strlen(name) + 1);
}

void fdtw_end(struct fdtw *w)
{
	fdtw_token(w, FDTW_END_NODE);
}

void fdtw_prop(struct fdtw *w, const char *name, const void *val, uint32_t len)
{
	fdtw_token(w, FDTW_PROP);
	fdtw_token(w, len);
	fdtw_token(w, fdtw_string_off(w, name));
	fdtw_put(w, val, len);
}

void fdtw_cells(struct fdtw *w, const char *name, unsigned n, ...)
{
	uint8_t val[64 * 4];
	unsigned i;
	va_list ap;

	if (n > 64) {
		w->full = true;
		return;
	}
	va_start(ap, n);
	for (i = 0; i < n; i++)
		fdtw_put_be32(val + 4 * i, va_arg(ap, unsigned int));
	va_end(ap);
	fdtw_prop(w, name, val, 4 * n);
}

void fdtw_string(struct fdtw *w, const char *name, const char *s)
{
	fdtw_prop(w, name, s, (uint32_t)strlen(s) + 1);
}

void fdtw_flag(struct fdtw *w, const char *name)
{
	fdtw_prop(w, name, NULL, 0);
}

size_t fdtw_finish(struct fdtw *w, uint8_t *out, size_t cap)
{
	uint32_t off_struct = FDTW_HEADER_SIZE + FDTW_RSVMAP_SIZE;
	uint32_t size_struct, off_strings, total;

	fdtw_token(w, FDTW_END);
	size_struct = w->strct_len;
	off_strings = off_struct + size_struct;
	total = off_strings + w->strings_len;
	if (w->full || total > cap)
		return 0;
	memset(out, 0, off_struct);
	fdtw_put_be32(out + 0, FDTW_MAGIC);
	fdtw_put_be32(out + 4, total);
	fdtw_put_be32(out + 8, off_struct);
	fdtw_put_be32(out + 12, off_strings);
	fdtw_put_be32(out + 16, FDTW_HEADER_SIZE);	/* off_mem_rsvmap */
	fdtw_put_be32(out + 20, FDTW_VERSION);
	fdtw_put_be32(out + 24, FDTW_LAST_COMP);
	fdtw_put_be32(out + 28, 0);			/* boot_cpuid_phys */
	fdtw_put_be32(out + 32, w->strings_len);
	fdtw_put_be32(out + 36, size_struct);
	memcpy(out + off_struct, w->strct, size_struct);
	memcpy(out + off_strings, w->strings, w->strings_len);
	return total;
}
