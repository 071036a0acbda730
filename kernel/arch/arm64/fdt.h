/* SPDX-License-Identifier: MIT */
/*
 * fdt.h - a bounded, defensive reader of flattened device trees (DTB,
 * Devicetree Specification v0.4 chapter 5).
 *
 * Nothing here trusts the blob: the header's offsets and sizes are checked
 * against the total size before use, every token, name and property is
 * checked against the structure block, and walks are bounded by the
 * block's size. Nodes are named by their offset in the structure block
 * (>= 0); a negative return is an FDT_ERR_* code.
 */
#ifndef ARM64_FDT_H
#define ARM64_FDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FDT_MAGIC		0xd00dfeedu
#define FDT_MAX_DEPTH		32

#define FDT_ERR_NOTFOUND	-1
#define FDT_ERR_BADMAGIC	-2
#define FDT_ERR_BADHEADER	-3
#define FDT_ERR_BADSTRUCT	-4
#define FDT_ERR_TRUNCATED	-5

struct fdt {
	const uint8_t *blob;
	uint32_t size;		/* totalsize from the header, checked */
	uint32_t off_struct;
	uint32_t size_struct;
	uint32_t off_strings;
	uint32_t size_strings;
};

/**
 * fdt_init - Check a device tree header and remember the blob
 * @f:        the reader to fill in
 * @blob:     start of the blob (4-byte aligned)
 * @max_size: bytes known to be readable at @blob; totalsize must fit
 *
 * Return: 0, or FDT_ERR_BADMAGIC / FDT_ERR_BADHEADER.
 */
int fdt_init(struct fdt *f, const void *blob, uint32_t max_size);

/* A big-endian cell at @p (no alignment needed). */
uint32_t fdt_be32(const void *p);

/* @n cells (1 or 2) at @p as one number. */
uint64_t fdt_cells(const void *p, unsigned n);

/**
 * fdt_next_node - The node after @node in document order
 * @depth: in: the depth of @node (root 0), out: the depth of the result
 *
 * @node = -1 starts at the root (depth then comes back 0).
 * Return: the node's offset, FDT_ERR_NOTFOUND at the end, or an error.
 */
int fdt_next_node(const struct fdt *f, int node, int *depth);

/* The node's name ("" for the root), NULL when it is malformed. */
const char *fdt_node_name(const struct fdt *f, int node);

/**
 * fdt_getprop - A property of @node
 * @len: out: the property's length in bytes
 *
 * Return: its value (inside the blob) or NULL.
 */
const void *fdt_getprop(const struct fdt *f, int node, const char *name,
			uint32_t *len);

/* A one-cell property, or @dflt when absent or not one cell. */
uint32_t fdt_prop_u32(const struct fdt *f, int node, const char *name,
		      uint32_t dflt);

/* Whether a string list property (e.g. "compatible") holds @str. */
bool fdt_prop_has_string(const struct fdt *f, int node, const char *name,
			 const char *str);

/* The first child of @parent named @name (or @name@unit when @name has no '@'). */
int fdt_subnode(const struct fdt *f, int parent, const char *name);

/* A node by absolute path ("/chosen", "/cpus"). */
int fdt_path(const struct fdt *f, const char *path);

/* The parent of @node (the root's parent is FDT_ERR_NOTFOUND). */
int fdt_parent(const struct fdt *f, int node);

/* The first node after @from (-1: from the start) whose compatible has @compat. */
int fdt_find_compatible(const struct fdt *f, int from, const char *compat);

/* The node whose "phandle" is @phandle. */
int fdt_find_phandle(const struct fdt *f, uint32_t phandle);

/* #address-cells / #size-cells that @node's parent gives @node's reg. */
void fdt_reg_cells(const struct fdt *f, int node, unsigned *ac, unsigned *sc);

/**
 * fdt_reg - Entry @idx of @node's "reg"
 *
 * Return: 0, or FDT_ERR_NOTFOUND when there is no such entry or the cells
 * are wider than 64 bits.
 */
int fdt_reg(const struct fdt *f, int node, unsigned idx, uint64_t *addr,
	    uint64_t *size);

#endif /* ARM64_FDT_H */
