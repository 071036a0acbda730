/* SPDX-License-Identifier: MIT */
/*
 * fdt.c - a bounded reader of flattened device trees.
 *
 * The structure block is a sequence of big-endian 32-bit tokens
 * (Devicetree Specification 5.4): FDT_BEGIN_NODE with the NUL-terminated
 * name padded to 4 bytes, FDT_PROP with length, name offset and value
 * padded to 4 bytes, FDT_END_NODE, FDT_NOP and FDT_END. fdt_skip() is
 * the only function that steps from one token to the next, and it
 * checks every length against the block before it uses it; everything
 * else is built on it.
 */
#include "fdt.h"

#define FDT_HEADER_SIZE		40
#define FDT_BEGIN_NODE		1u
#define FDT_END_NODE		2u
#define FDT_PROP		3u
#define FDT_NOP			4u
#define FDT_END			9u

uint32_t fdt_be32(const void *v)
{
	const uint8_t *p = v;

	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static bool fdt_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* The length of a NUL-terminated string at @p with at most @room bytes. */
static int fdt_bounded_strlen(const uint8_t *p, uint32_t room)
{
	uint32_t i;

	for (i = 0; i < room; i++)
		if (!p[i])
			return (int)i;
	return -FDT_EINVAL;
}

int fdt_init(struct fdt *fdt, const void *blob, uint32_t max_size)
{
	const uint8_t *b = blob;
	uint32_t total, version, last_comp;
	uint64_t s_off, s_size, t_off, t_size;

	if (!b || ((uintptr_t)b & 3) || max_size < FDT_HEADER_SIZE)
		return -FDT_EINVAL;
	if (fdt_be32(b) != FDT_MAGIC)
		return -FDT_EINVAL;
	total = fdt_be32(b + 4);
	if (total < FDT_HEADER_SIZE)
		return -FDT_EINVAL;
	if (total > max_size || total > 0x7fffffffu)
		return -FDT_E2BIG;
	version = fdt_be32(b + 20);
	last_comp = fdt_be32(b + 24);
	if (version < 16 || last_comp > 17)
		return -FDT_EINVAL;
	s_off = fdt_be32(b + 8);
	t_off = fdt_be32(b + 12);
	t_size = fdt_be32(b + 32);
	/* size_dt_struct appeared in version 17. */
	s_size = version >= 17 ? fdt_be32(b + 36) :
		 (s_off <= total ? total - s_off : 0);
	if ((s_off & 3) || s_off < FDT_HEADER_SIZE || s_size < 4 ||
	    s_off + s_size > total || t_off + t_size > total)
		return -FDT_EINVAL;
	fdt->blob = b;
	fdt->size = total;
	fdt->struct_off = (uint32_t)s_off;
	fdt->struct_size = (uint32_t)s_size & ~3u;
	fdt->strings_off = (uint32_t)t_off;
	fdt->strings_size = (uint32_t)t_size;
	return 0;
}

static int fdt_tag(const struct fdt *fdt, int off, uint32_t *tag)
{
	if (off < 0 || (off & 3) || (uint32_t)off + 4 > fdt->struct_size)
		return -FDT_EINVAL;
	*tag = fdt_be32(fdt->blob + fdt->struct_off + (uint32_t)off);
	return 0;
}

/* A property's name, or NULL when its offset or terminator is outside. */
static const char *fdt_string(const struct fdt *fdt, uint32_t nameoff)
{
	const uint8_t *s = fdt->blob + fdt->strings_off;

	if (nameoff >= fdt->strings_size ||
	    fdt_bounded_strlen(s + nameoff, fdt->strings_size - nameoff) < 0)
		return NULL;
	return (const char *)s + nameoff;
}

/*
 * fdt_skip - the offset of the token after the one at @off
 * @tag: set to the token at @off
 *
 * Return: the next offset, or -FDT_EINVAL when the token or what it
 * carries does not fit in the structure block.
 */
static int fdt_skip(const struct fdt *fdt, int off, uint32_t *tag)
{
	const uint8_t *s = fdt->blob + fdt->struct_off;
	uint32_t o = (uint32_t)off, room, len;
	int n;

	if (fdt_tag(fdt, off, tag))
		return -FDT_EINVAL;
	o += 4;
	room = fdt->struct_size - o;
	switch (*tag) {
	case FDT_BEGIN_NODE:
		n = fdt_bounded_strlen(s + o, room);
		if (n < 0)
			return n;
		o += ((uint32_t)n + 1 + 3) & ~3u;
		break;
	case FDT_PROP:
		if (room < 8)
			return -FDT_EINVAL;
		len = fdt_be32(s + o);
		if (len > room - 8 || !fdt_string(fdt, fdt_be32(s + o + 4)))
			return -FDT_EINVAL;
		o += 8 + ((len + 3) & ~3u);
		break;
	case FDT_END_NODE:
	case FDT_NOP:
	case FDT_END:
		break;
	default:
		return -FDT_EINVAL;
	}
	if (o > fdt->struct_size)
		return -FDT_EINVAL;
	return (int)o;
}

int fdt_next_node(const struct fdt *fdt, int node, int *depth)
{
	uint32_t tag;
	int off, cur;

	if (node < 0) {
		if (fdt_tag(fdt, 0, &tag) || tag != FDT_BEGIN_NODE)
			return -FDT_EINVAL;
		*depth = 0;
		return 0;
	}
	if (*depth < 0 || *depth >= FDT_MAX_DEPTH)
		return -FDT_EINVAL;
	off = fdt_skip(fdt, node, &tag);
	if (off < 0 || tag != FDT_BEGIN_NODE)
		return -FDT_EINVAL;
	cur = *depth + 1;	/* inside @node */
	for (;;) {
		int next = fdt_skip(fdt, off, &tag);

		if (next < 0)
			return next;
		switch (tag) {
		case FDT_BEGIN_NODE:
			/* A second root, or a tree deeper than we allow. */
			if (cur == 0 || cur >= FDT_MAX_DEPTH)
				return -FDT_EINVAL;
			*depth = cur;
			return off;
		case FDT_END_NODE:
			if (--cur < 0)
				return -FDT_EINVAL;
			break;
		case FDT_END:
			return -FDT_ENOENT;
		default:
			break;
		}
		off = next;
	}
}

const char *fdt_node_name(const struct fdt *fdt, int node)
{
	uint32_t tag;

	/* fdt_skip() checks that the name is terminated inside the block. */
	if (fdt_skip(fdt, node, &tag) < 0 || tag != FDT_BEGIN_NODE)
		return "";
	return (const char *)fdt->blob + fdt->struct_off + (uint32_t)node + 4;
}

const void *fdt_getprop(const struct fdt *fdt, int node, const char *name,
			uint32_t *len)
{
	const uint8_t *s = fdt->blob + fdt->struct_off;
	uint32_t tag;
	int off, next;

	off = fdt_skip(fdt, node, &tag);
	if (off < 0 || tag != FDT_BEGIN_NODE)
		return NULL;
	/* Properties come before the first subnode (DT spec 5.4.2). */
	for (;;) {
		next = fdt_skip(fdt, off, &tag);
		if (next < 0)
			return NULL;
		if (tag == FDT_PROP) {
			const uint8_t *p = s + (uint32_t)off;
			const char *pname = fdt_string(fdt, fdt_be32(p + 8));

			if (pname && fdt_streq(pname, name)) {
				if (len)
					*len = fdt_be32(p + 4);
				return p + 12;
			}
		} else if (tag != FDT_NOP) {
			return NULL;
		}
		off = next;
	}
}

int fdt_parent(const struct fdt *fdt, int node)
{
	int stack[FDT_MAX_DEPTH];
	int n, depth = 0;

	for (n = fdt_next_node(fdt, -1, &depth); n >= 0;
	     n = fdt_next_node(fdt, n, &depth)) {
		stack[depth] = n;
		if (n == node)
			return depth ? stack[depth - 1] : -FDT_ENOENT;
		if (n > node)
			break;
	}
	return n < 0 ? n : -FDT_ENOENT;
}

/* Does node name @name match the path component @comp of @len bytes? */
static bool fdt_name_matches(const char *name, const char *comp, size_t len)
{
	size_t i;
	bool has_unit = false;

	for (i = 0; i < len; i++) {
		if (!name[i] || name[i] != comp[i])
			return false;
		if (comp[i] == '@')
			has_unit = true;
	}
	return !name[len] || (!has_unit && name[len] == '@');
}

static int fdt_child_named(const struct fdt *fdt, int parent, int pdepth,
			   const char *comp, size_t len)
{
	int n = parent, depth = pdepth;

	for (;;) {
		n = fdt_next_node(fdt, n, &depth);
		if (n < 0)
			return n;
		if (depth <= pdepth)
			return -FDT_ENOENT;
		if (depth == pdepth + 1 &&
		    fdt_name_matches(fdt_node_name(fdt, n), comp, len))
			return n;
	}
}

int fdt_path(const struct fdt *fdt, const char *path, size_t len)
{
	int node, depth = 0;
	size_t i = 0;

	if (!len || path[0] != '/')
		return -FDT_EINVAL;
	node = fdt_next_node(fdt, -1, &depth);
	while (node >= 0) {
		size_t start;

		while (i < len && path[i] == '/')
			i++;
		if (i >= len)
			return node;
		start = i;
		while (i < len && path[i] != '/')
			i++;
		node = fdt_child_named(fdt, node, depth, path + start, i - start);
		depth++;
	}
	return node;
}

static bool fdt_stringlist_has(const char *list, uint32_t len, const char *s)
{
	uint32_t i = 0;

	while (i < len) {
		int n = fdt_bounded_strlen((const uint8_t *)list + i, len - i);

		if (n < 0)
			return false;
		if (fdt_streq(list + i, s))
			return true;
		i += (uint32_t)n + 1;
	}
	return false;
}

bool fdt_prop_has_string(const struct fdt *fdt, int node, const char *name,
			 const char *str)
{
	uint32_t len;
	const char *p = fdt_getprop(fdt, node, name, &len);

	return p && fdt_stringlist_has(p, len, str);
}

bool fdt_is_compatible(const struct fdt *fdt, int node, const char *compat)
{
	return fdt_prop_has_string(fdt, node, "compatible", compat);
}

int fdt_subnode(const struct fdt *fdt, int parent, const char *name)
{
	size_t len = 0;

	while (name[len])
		len++;
	/* Depths are relative: the children of @parent are one below it. */
	return fdt_child_named(fdt, parent, 0, name, len);
}

bool fdt_is_okay(const struct fdt *fdt, int node)
{
	uint32_t len;
	const char *p = fdt_getprop(fdt, node, "status", &len);

	return !p || fdt_stringlist_has(p, len, "okay") ||
	       fdt_stringlist_has(p, len, "ok");
}

int fdt_find_compatible(const struct fdt *fdt, int after, const char *compat)
{
	int n, depth = 0;

	for (n = fdt_next_node(fdt, -1, &depth); n >= 0;
	     n = fdt_next_node(fdt, n, &depth))
		if (n > after && fdt_is_compatible(fdt, n, compat))
			return n;
	return n;
}

int fdt_find_device_type(const struct fdt *fdt, int after, const char *type)
{
	uint32_t len;
	int n, depth = 0;

	for (n = fdt_next_node(fdt, -1, &depth); n >= 0;
	     n = fdt_next_node(fdt, n, &depth)) {
		const char *p;

		if (n <= after)
			continue;
		p = fdt_getprop(fdt, n, "device_type", &len);
		if (p && fdt_stringlist_has(p, len, type))
			return n;
	}
	return n;
}

int fdt_find_phandle(const struct fdt *fdt, uint32_t phandle)
{
	int n, depth = 0;

	if (!phandle || phandle == 0xffffffffu)
		return -FDT_ENOENT;
	for (n = fdt_next_node(fdt, -1, &depth); n >= 0;
	     n = fdt_next_node(fdt, n, &depth)) {
		if (fdt_prop_u32(fdt, n, "phandle", 0) == phandle ||
		    fdt_prop_u32(fdt, n, "linux,phandle", 0) == phandle)
			return n;
	}
	return n;
}

uint32_t fdt_prop_u32(const struct fdt *fdt, int node, const char *name,
		      uint32_t dflt)
{
	uint32_t len;
	const uint8_t *p = fdt_getprop(fdt, node, name, &len);

	return p && len == 4 ? fdt_be32(p) : dflt;
}

uint32_t fdt_address_cells(const struct fdt *fdt, int node)
{
	return fdt_prop_u32(fdt, node, "#address-cells", 2);
}

uint32_t fdt_size_cells(const struct fdt *fdt, int node)
{
	return fdt_prop_u32(fdt, node, "#size-cells", 1);
}

uint64_t fdt_read_cells(const void *p, uint32_t cells)
{
	const uint8_t *b = p;
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < cells; i++)
		v = v << 32 | fdt_be32(b + 4 * i);
	return v;
}

/*
 * Translate @addr, an address on the bus @bus, to its parent's space
 * through @bus's ranges (DT spec 2.3.8). Return 0 or -FDT_EINVAL.
 */
static int fdt_translate_once(const struct fdt *fdt, int bus, int parent,
			      uint64_t *addr)
{
	uint32_t len, ca, pa, sc, entry, i;
	const uint8_t *r = fdt_getprop(fdt, bus, "ranges", &len);

	if (!r)
		return -FDT_EINVAL;	/* not memory-mapped */
	if (!len)
		return 0;		/* identity */
	ca = fdt_address_cells(fdt, bus);
	pa = fdt_address_cells(fdt, parent);
	sc = fdt_size_cells(fdt, bus);
	if (!ca || ca > 3 || !pa || pa > 3 || sc > 2)
		return -FDT_EINVAL;
	entry = (ca + pa + sc) * 4;
	for (i = 0; i + entry <= len; i += entry) {
		uint64_t cb = fdt_read_cells(r + i, ca);
		uint64_t pb = fdt_read_cells(r + i + ca * 4, pa);
		uint64_t sz = fdt_read_cells(r + i + (ca + pa) * 4, sc);

		if (*addr >= cb && *addr - cb < sz) {
			*addr = pb + (*addr - cb);
			return 0;
		}
	}
	return -FDT_EINVAL;
}

void fdt_reg_cells(const struct fdt *fdt, int node, unsigned *ac,
		   unsigned *sc)
{
	int bus = fdt_parent(fdt, node);

	*ac = bus < 0 ? 2 : fdt_address_cells(fdt, bus);
	*sc = bus < 0 ? 1 : fdt_size_cells(fdt, bus);
}

int fdt_reg_raw(const struct fdt *fdt, int node, unsigned index,
		uint64_t *addr, uint64_t *size)
{
	uint32_t len, entry;
	unsigned ac, sc;
	const uint8_t *r;

	if (fdt_parent(fdt, node) < 0)
		return -FDT_EINVAL;
	fdt_reg_cells(fdt, node, &ac, &sc);
	if (!ac || ac > 2 || sc > 2)
		return -FDT_EINVAL;
	r = fdt_getprop(fdt, node, "reg", &len);
	if (!r)
		return -FDT_ENOENT;
	entry = (ac + sc) * 4;
	if ((uint64_t)(index + 1) * entry > len)
		return -FDT_ENOENT;
	*addr = fdt_read_cells(r + index * entry, ac);
	*size = fdt_read_cells(r + index * entry + ac * 4, sc);
	return 0;
}

int fdt_reg(const struct fdt *fdt, int node, unsigned index,
	    uint64_t *addr, uint64_t *size)
{
	int bus, parent, err;

	err = fdt_reg_raw(fdt, node, index, addr, size);
	if (err)
		return err;
	bus = fdt_parent(fdt, node);
	/* Up through every bus to the root, whose space is the CPU's. */
	for (parent = fdt_parent(fdt, bus); parent >= 0;
	     bus = parent, parent = fdt_parent(fdt, bus))
		if (fdt_translate_once(fdt, bus, parent, addr))
			return -FDT_EINVAL;
	return parent == -FDT_ENOENT ? 0 : parent;
}
