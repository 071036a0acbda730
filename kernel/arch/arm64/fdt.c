// SPDX-License-Identifier: MIT
/*
 * fdt.c - the device tree reader (see fdt.h). Layout from the Devicetree
 * Specification v0.4, 5.2 (header), 5.4 (structure block tokens).
 */
#include "fdt.h"

#define FDT_BEGIN_NODE	1
#define FDT_END_NODE	2
#define FDT_PROP	3
#define FDT_NOP		4
#define FDT_END		9

/* Header fields (byte offsets). */
#define FDT_H_MAGIC		0
#define FDT_H_TOTALSIZE		4
#define FDT_H_OFF_STRUCT	8
#define FDT_H_OFF_STRINGS	12
#define FDT_H_VERSION		20
#define FDT_H_LAST_COMP		24
#define FDT_H_SIZE_STRINGS	32
#define FDT_H_SIZE_STRUCT	36
#define FDT_HEADER_SIZE		40

uint32_t fdt_be32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

uint64_t fdt_cells(const void *p, unsigned n)
{
	const uint8_t *b = p;
	uint64_t v = 0;

	while (n--) {
		v = v << 32 | fdt_be32(b);
		b += 4;
	}
	return v;
}

static bool fdt_str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

int fdt_init(struct fdt *f, const void *blob, uint32_t max_size)
{
	const uint8_t *h = blob;
	uint32_t total, ver;

	if (!blob || ((uintptr_t)blob & 3) || max_size < FDT_HEADER_SIZE)
		return FDT_ERR_BADHEADER;
	if (fdt_be32(h + FDT_H_MAGIC) != FDT_MAGIC)
		return FDT_ERR_BADMAGIC;
	total = fdt_be32(h + FDT_H_TOTALSIZE);
	ver = fdt_be32(h + FDT_H_VERSION);
	/* size_dt_struct exists from version 17; 16 is read-compatible. */
	if (total < FDT_HEADER_SIZE || total > max_size || ver < 17 ||
	    fdt_be32(h + FDT_H_LAST_COMP) > 17)
		return FDT_ERR_BADHEADER;
	f->blob = h;
	f->size = total;
	f->off_struct = fdt_be32(h + FDT_H_OFF_STRUCT);
	f->size_struct = fdt_be32(h + FDT_H_SIZE_STRUCT);
	f->off_strings = fdt_be32(h + FDT_H_OFF_STRINGS);
	f->size_strings = fdt_be32(h + FDT_H_SIZE_STRINGS);
	/* Each block inside the blob, no wrap-around, tokens aligned. */
	if (f->off_struct < FDT_HEADER_SIZE || (f->off_struct & 3) ||
	    f->off_struct > total || f->size_struct > total - f->off_struct ||
	    (f->size_struct & 3) || f->size_struct < 8)
		return FDT_ERR_BADHEADER;
	if (f->off_strings > total || f->size_strings > total - f->off_strings)
		return FDT_ERR_BADHEADER;
	return 0;
}

/* The token at @off of the structure block, or -1 past its end. */
static int fdt_token(const struct fdt *f, uint32_t off)
{
	if (off > f->size_struct - 4 || (off & 3))
		return -1;
	return (int)fdt_be32(f->blob + f->off_struct + off);
}

/* Length of a NUL-terminated string at @off (< @limit), or -1. */
static int fdt_strnlen(const struct fdt *f, uint32_t base, uint32_t off,
		       uint32_t limit)
{
	uint32_t i;

	for (i = off; i < limit; i++)
		if (!f->blob[base + i])
			return (int)(i - off);
	return -1;
}

/*
 * The offset of the token after the one at @off; for a property, its
 * name offset, value offset and length are returned through the pointers.
 */
static int fdt_skip(const struct fdt *f, uint32_t off, int tok,
		    uint32_t *nameoff, uint32_t *valoff, uint32_t *len)
{
	uint32_t l;
	int n;

	switch (tok) {
	case FDT_BEGIN_NODE:
		n = fdt_strnlen(f, f->off_struct, off + 4, f->size_struct);
		if (n < 0)
			return FDT_ERR_BADSTRUCT;
		return (int)((off + 4 + (uint32_t)n + 1 + 3) & ~3u);
	case FDT_PROP:
		if (off > f->size_struct - 12)
			return FDT_ERR_TRUNCATED;
		l = fdt_be32(f->blob + f->off_struct + off + 4);
		if (l > f->size_struct - off - 12)
			return FDT_ERR_TRUNCATED;
		if (nameoff)
			*nameoff = fdt_be32(f->blob + f->off_struct + off + 8);
		if (valoff)
			*valoff = off + 12;
		if (len)
			*len = l;
		return (int)((off + 12 + l + 3) & ~3u);
	case FDT_END_NODE:
	case FDT_NOP:
		return (int)(off + 4);
	default:
		return FDT_ERR_BADSTRUCT;
	}
}

int fdt_next_node(const struct fdt *f, int node, int *depth)
{
	uint32_t off;
	int tok, next;

	if (node < 0) {
		/* The root: the first BEGIN_NODE, after any NOPs. */
		for (off = 0; (tok = fdt_token(f, off)) == FDT_NOP; off += 4)
			;
		if (tok != FDT_BEGIN_NODE)
			return FDT_ERR_BADSTRUCT;
		*depth = 0;
		return (int)off;
	}
	off = (uint32_t)node;
	tok = fdt_token(f, off);
	if (tok != FDT_BEGIN_NODE)
		return FDT_ERR_BADSTRUCT;
	/* Every step advances by at least 4 bytes: bounded by the block. */
	for (;;) {
		next = fdt_skip(f, off, tok, NULL, NULL, NULL);
		if (next < 0)
			return next;
		off = (uint32_t)next;
		tok = fdt_token(f, off);
		switch (tok) {
		case FDT_BEGIN_NODE:
			if (++*depth >= FDT_MAX_DEPTH)
				return FDT_ERR_BADSTRUCT;
			return (int)off;
		case FDT_END_NODE:
			if (--*depth < 0)
				return FDT_ERR_NOTFOUND;
			break;
		case FDT_PROP:
		case FDT_NOP:
			break;
		case FDT_END:
			return FDT_ERR_NOTFOUND;
		default:
			return FDT_ERR_BADSTRUCT;
		}
	}
}

const char *fdt_node_name(const struct fdt *f, int node)
{
	if (node < 0 || fdt_token(f, (uint32_t)node) != FDT_BEGIN_NODE)
		return NULL;
	if (fdt_strnlen(f, f->off_struct, (uint32_t)node + 4,
			f->size_struct) < 0)
		return NULL;
	return (const char *)f->blob + f->off_struct + node + 4;
}

const void *fdt_getprop(const struct fdt *f, int node, const char *name,
			uint32_t *len)
{
	uint32_t off, nameoff = 0, valoff = 0, l = 0;
	int tok, next;

	if (node < 0 || fdt_token(f, (uint32_t)node) != FDT_BEGIN_NODE)
		return NULL;
	next = fdt_skip(f, (uint32_t)node, FDT_BEGIN_NODE, NULL, NULL, NULL);
	/* Properties come first in a node, before any child. */
	while (next >= 0) {
		off = (uint32_t)next;
		tok = fdt_token(f, off);
		if (tok == FDT_NOP) {
			next = (int)(off + 4);
			continue;
		}
		if (tok != FDT_PROP)
			return NULL;
		next = fdt_skip(f, off, tok, &nameoff, &valoff, &l);
		if (next < 0)
			return NULL;
		if (nameoff >= f->size_strings ||
		    fdt_strnlen(f, f->off_strings, nameoff, f->size_strings) < 0)
			return NULL;
		if (fdt_str_eq((const char *)f->blob + f->off_strings + nameoff,
			       name)) {
			if (len)
				*len = l;
			return f->blob + f->off_struct + valoff;
		}
	}
	return NULL;
}

uint32_t fdt_prop_u32(const struct fdt *f, int node, const char *name,
		      uint32_t dflt)
{
	uint32_t len;
	const void *p = fdt_getprop(f, node, name, &len);

	return p && len == 4 ? fdt_be32(p) : dflt;
}

bool fdt_prop_has_string(const struct fdt *f, int node, const char *name,
			 const char *str)
{
	uint32_t len, i, start = 0;
	const char *p = fdt_getprop(f, node, name, &len);

	if (!p)
		return false;
	for (i = 0; i < len; i++) {
		if (p[i])
			continue;
		if (fdt_str_eq(p + start, str))
			return true;
		start = i + 1;
	}
	return false;
}

/* Whether node name @n is @name, or @name@unit when @name has no '@'. */
static bool fdt_name_matches(const char *n, const char *name)
{
	bool unit = false;
	const char *q;

	for (q = name; *q && *q != '/'; q++)
		if (*q == '@')
			unit = true;
	while (*name && *n == *name) {
		n++;
		name++;
	}
	if (*name && *name != '/')
		return false;
	return *n == '\0' || (!unit && *n == '@');
}

int fdt_subnode(const struct fdt *f, int parent, const char *name)
{
	int depth = 0, node = parent;
	const char *n;

	for (;;) {
		node = fdt_next_node(f, node, &depth);
		if (node < 0 || depth < 1)
			return node < 0 ? node : FDT_ERR_NOTFOUND;
		if (depth != 1)
			continue;
		n = fdt_node_name(f, node);
		if (n && fdt_name_matches(n, name))
			return node;
	}
}

int fdt_path(const struct fdt *f, const char *path)
{
	int depth, node = fdt_next_node(f, -1, &depth);

	while (node >= 0 && *path) {
		while (*path == '/')
			path++;
		if (!*path)
			break;
		node = fdt_subnode(f, node, path);
		while (*path && *path != '/')
			path++;
	}
	return node;
}

int fdt_parent(const struct fdt *f, int node)
{
	int stack[FDT_MAX_DEPTH];
	int depth = 0, n;

	for (n = fdt_next_node(f, -1, &depth); n >= 0;
	     n = fdt_next_node(f, n, &depth)) {
		if (depth >= FDT_MAX_DEPTH)
			return FDT_ERR_BADSTRUCT;
		stack[depth] = n;
		if (n == node)
			return depth ? stack[depth - 1] : FDT_ERR_NOTFOUND;
	}
	return n;
}

int fdt_find_compatible(const struct fdt *f, int from, const char *compat)
{
	int depth = 0, n;

	for (n = fdt_next_node(f, from, &depth); n >= 0;
	     n = fdt_next_node(f, n, &depth))
		if (fdt_prop_has_string(f, n, "compatible", compat))
			return n;
	return n;
}

int fdt_find_phandle(const struct fdt *f, uint32_t phandle)
{
	int depth = 0, n;

	for (n = fdt_next_node(f, -1, &depth); n >= 0;
	     n = fdt_next_node(f, n, &depth))
		if (fdt_prop_u32(f, n, "phandle", 0) == phandle)
			return n;
	return n;
}

void fdt_reg_cells(const struct fdt *f, int node, unsigned *ac, unsigned *sc)
{
	int parent = fdt_parent(f, node);

	/* Devicetree Specification 2.3.5: defaults 2 and 1. */
	*ac = fdt_prop_u32(f, parent, "#address-cells", 2);
	*sc = fdt_prop_u32(f, parent, "#size-cells", 1);
}

int fdt_reg(const struct fdt *f, int node, unsigned idx, uint64_t *addr,
	    uint64_t *size)
{
	unsigned ac, sc;
	uint32_t len;
	const uint8_t *p;

	fdt_reg_cells(f, node, &ac, &sc);
	if (ac < 1 || ac > 2 || sc > 2)
		return FDT_ERR_NOTFOUND;
	p = fdt_getprop(f, node, "reg", &len);
	if (!p || idx >= len / ((ac + sc) * 4))
		return FDT_ERR_NOTFOUND;
	p += idx * (ac + sc) * 4;
	*addr = fdt_cells(p, ac);
	*size = fdt_cells(p + ac * 4, sc);
	return 0;
}
