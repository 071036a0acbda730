/* SPDX-License-Identifier: MIT */
/*
 * Reading `lspci -x`, `-xxx` and `-xxxx` dumps.
 *
 * The grammar is pciutils' lib/dump.c, so that a file means to us what it
 * means to `lspci -F`: we accept what it accepts and ignore what it
 * ignores (the `lspci -v` text some dumps interleave). Where lspci gives up
 * on the whole file (a row past 4096 bytes), we report the line and carry
 * on with the rest. The input is untrusted: every index is checked before
 * use and nothing here can read past @len.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

/*
 * Does the line start with @fmt, where '#' stands for a hex digit? This is
 * lspci's dump_validate().
 */
static bool match(const char *s, size_t len, const char *fmt)
{
	size_t i;

	for (i = 0; fmt[i]; i++) {
		if (i >= len)
			return false;
		if (fmt[i] == '#' ? inspect_hexval(s[i]) < 0 : fmt[i] != s[i])
			return false;
	}
	return true;
}

static uint32_t hexnum(const char *s, size_t n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 4 | (uint32_t)inspect_hexval(*s++);
	return v;
}

/* Parse a device header line; 1 on a header, 0 if not, -1 if malformed. */
static int parse_header(const char *s, size_t len, uint32_t *dom,
			uint32_t *bus, uint32_t *dev, uint32_t *fn)
{
	static const char *const fmts[] = {
		"##:##.# ", "####:##:##.# ", "#####:##:##.# ", "######:##:##.# ",
	};
	size_t i, d;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		if (!match(s, len, fmts[i]))
			continue;
		d = i ? i + 3 : 0;      /* domain digits */
		*dom = d ? hexnum(s, d) : 0;
		if (d)
			s += d + 1;
		*bus = hexnum(s, 2);
		*dev = hexnum(s + 3, 2);
		/* lspci reads the function with %d: a-f is not a number. */
		if (!isdigit((unsigned char)s[6]))
			return 0;
		*fn = (uint32_t)(s[6] - '0');
		return 1;
	}
	return 0;
}

/* Parse a row's offset (`##: ` .. `########: `); the byte after ": " or NULL. */
static const char *parse_row_offset(const char *s, size_t len, uint32_t *off)
{
	size_t n;

	for (n = 0; n < len && n < 9 && inspect_hexval(s[n]) >= 0; n++)
		;
	if (n < 2 || n > 8 || n + 2 > len || s[n] != ':' || s[n + 1] != ' ')
		return NULL;
	*off = hexnum(s, n);
	return s + n + 2;
}

static struct inspect_fn *new_fn(struct inspect_fn_list *out)
{
	struct inspect_fn *fn;

	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 16;
		struct inspect_fn *p = realloc(out->fns, cap * sizeof(*p));

		if (!p)
			return NULL;
		out->fns = p;
		out->cap = cap;
	}
	fn = &out->fns[out->n++];
	memset(fn, 0, sizeof(*fn));
	memset(fn->cfg, 0xff, sizeof(fn->cfg));
	return fn;
}

/* Store the bytes of one row; reports and stops at anything odd. */
static void parse_row(struct inspect_report *rep, struct inspect_fn *fn,
		      unsigned ln, uint32_t off, const char *z, const char *end)
{
	uint32_t start = off;
	size_t n = 0;

	while (end - z >= 2 && inspect_hexval(z[0]) >= 0 && inspect_hexval(z[1]) >= 0 &&
	       (end - z == 2 || z[2] == ' ')) {
		if (off >= INSPECT_CFG_MAX) {
			inspect_fn_error(rep, fn,
					 "line %u: data at offset 0x%x is beyond the 4096 bytes of configuration space; rest of the row ignored",
					 ln, off);
			return;
		}
		fn->cfg[off++] = (uint8_t)hexnum(z, 2);
		if (off > fn->size)
			fn->size = (uint16_t)off;
		n++;
		z += 2;
		if (z < end)
			z++;
	}
	/* lspci prints 16 bytes a row; fewer means the file was cut. */
	if (n < 16 && (start & 15) == 0)
		inspect_fn_error(rep, fn,
				 "line %u: row 0x%02x holds %zu of 16 bytes (truncated dump?)",
				 ln, start, n);
}

struct dup_key {
	umsi_bdf_t bdf;
	size_t idx;
};

static int cmp_dup_key(const void *a, const void *b)
{
	const struct dup_key *x = a, *y = b;

	if (x->bdf != y->bdf)
		return x->bdf < y->bdf ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * An address given twice. lspci -F lists both functions, and so do we,
 * each with its own problems (an error carries its function's header
 * line, so one's never shows under the other); each repeat is reported.
 * Sorting makes this O(n log n) for the 65536 functions a dump may hold.
 */
static int report_repeats(const struct inspect_fn_list *l,
			  struct inspect_report *rep)
{
	struct dup_key *k;
	size_t first = 0;
	char b[16];

	if (l->n < 2)
		return 0;
	k = malloc(l->n * sizeof(*k));
	if (!k)
		return -1;
	for (size_t i = 0; i < l->n; i++)
		k[i] = (struct dup_key){ l->fns[i].bdf, i };
	qsort(k, l->n, sizeof(*k), cmp_dup_key);
	for (size_t i = 1; i < l->n; i++) {
		const struct inspect_fn *fn = &l->fns[k[i].idx];

		if (k[i].bdf != k[first].bdf) {
			first = i;
			continue;
		}
		inspect_bdf_str(fn->bdf, b);
		inspect_fn_error(rep, fn,
				 "line %u: function %s given again (first at line %u); each is decoded and shown on its own",
				 fn->line, b, l->fns[k[first].idx].line);
	}
	free(k);
	return 0;
}

int inspect_dump_parse(const char *text, size_t len,
		       struct inspect_fn_list *out, struct inspect_report *rep)
{
	const char *p = text, *end = text + len;
	struct inspect_fn *cur = NULL;
	size_t cur_idx = 0;
	unsigned ln = 0;
	bool orphan_told = false;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		uint32_t dom, bus, dev, fnum, off;
		const char *z;
		int h;

		ln++;
		if (le > p && le[-1] == '\r')
			le--;
		h = parse_header(p, (size_t)(le - p), &dom, &bus, &dev, &fnum);
		if (h == 1) {
			cur = NULL;
			orphan_told = false;
			if (dev > 0x1f || fnum > 7 || dom > 0xffff) {
				const char *sp = memchr(p, ' ', (size_t)(le - p));

				inspect_error(rep, 0, false,
					      "line %u: '%.*s' is not a PCI address (device 0-1f, function 0-7, domain 0-ffff); its rows are ignored",
					      ln, (int)(sp - p), p);
			} else if (out->n >= INSPECT_MAX_FNS) {
				inspect_error(rep, 0, false,
					      "line %u: more than %d functions; the rest of the file is ignored",
					      ln, INSPECT_MAX_FNS);
				break;
			} else {
				cur = new_fn(out);
				if (!cur)
					return -1;
				cur_idx = out->n - 1;
				cur->bdf = UMSI_BDF(dom, bus, dev, fnum);
				cur->line = ln;
			}
		} else if (le == p) {
			cur = NULL;     /* an empty line ends a device */
		} else if ((z = parse_row_offset(p, (size_t)(le - p), &off))) {
			if (cur) {
				/* new_fn() may have moved the array. */
				cur = &out->fns[cur_idx];
				parse_row(rep, cur, ln, off, z, le);
			} else if (!orphan_told) {
				/* lspci ignores these too; say so once. */
				inspect_error(rep, 0, false,
					      "line %u: hex row outside any device (no header line above it since the last empty line); ignored",
					      ln);
				orphan_told = true;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return report_repeats(out, rep);
}

static int hexfield(const char *s, size_t n, size_t maxdigits, unsigned max,
		    unsigned *out)
{
	unsigned v = 0;

	if (n == 0 || n > maxdigits)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = inspect_hexval(s[i]);

		if (d < 0)
			return -1;
		v = v * 16 + (unsigned)d;
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

int inspect_parse_selector(const char *s, umsi_bdf_t *bdf)
{
	const char *colon[3], *dot, *p;
	unsigned ncolon = 0, dom = 0, bus = 0, dev, fn;
	const char *devs;

	for (p = s; *p; p++)
		if (*p == ':') {
			if (ncolon == 2)
				return -1;
			colon[ncolon++] = p;
		}
	dot = strchr(s, '.');
	if (!dot || strchr(dot + 1, '.') || (ncolon && dot < colon[ncolon - 1]))
		return -1;
	devs = ncolon ? colon[ncolon - 1] + 1 : s;
	if (ncolon == 2 && hexfield(s, (size_t)(colon[0] - s), 4, 0xffff, &dom))
		return -1;
	if (ncolon >= 1) {
		const char *bs = ncolon == 2 ? colon[0] + 1 : s;

		if (hexfield(bs, (size_t)(colon[ncolon - 1] - bs), 2, 0xff, &bus))
			return -1;
	}
	if (hexfield(devs, (size_t)(dot - devs), 2, 0x1f, &dev) ||
	    hexfield(dot + 1, strlen(dot + 1), 1, 7, &fn))
		return -1;
	*bdf = UMSI_BDF(dom, bus, dev, fn);
	return 0;
}

void inspect_fn_list_free(struct inspect_fn_list *l)
{
	free(l->fns);
	l->fns = NULL;
	l->n = l->cap = 0;
}
