/* SPDX-License-Identifier: MIT */
/*
 * fdt.h - a bounded reader of flattened device trees (DTB versions 16
 * and 17, the Devicetree Specification v0.4, chapter 5).
 *
 * One reader for every device-tree machine of the reference kernel
 * (riscv64, arm64: kernel/common). It allocates nothing and keeps no
 * state beyond the struct fdt the caller owns.
 *
 * The blob is not trusted. fdt_init() checks the header against the
 * bound the caller gives; afterwards every token, name and property is
 * checked against the structure and strings blocks before it is read, so
 * a corrupt blob gives an error (-EINVAL) and never a read outside it.
 * Every walk advances by at least one token, so every walk ends.
 *
 * A node is named by its offset in the structure block (an int >= 0);
 * functions that return a node return a negative errno when there is none
 * (-ENOENT) or the blob is malformed (-EINVAL).
 */
#ifndef KERNEL_FDT_H
#define KERNEL_FDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FDT_MAGIC	0xd00dfeedu	/* the header's first word, big-endian */

#define FDT_ENOENT	2
#define FDT_E2BIG	7
#define FDT_EINVAL	22

/* Deeper trees are refused (QEMU's have depth 4). */
#define FDT_MAX_DEPTH	32

struct fdt {
	const uint8_t *blob;
	uint32_t size;			/* totalsize from the header */
	uint32_t struct_off;		/* structure block */
	uint32_t struct_size;
	uint32_t strings_off;		/* strings block */
	uint32_t strings_size;
};

/**
 * fdt_init - check a blob's header and remember its blocks
 * @fdt: filled in on success
 * @blob: the device tree (4-byte aligned)
 * @max_size: the most bytes the caller allows the blob to span
 *
 * Return: 0, or -FDT_EINVAL (bad magic, version, or a block outside the
 * blob), -FDT_E2BIG (totalsize above @max_size).
 */
int fdt_init(struct fdt *fdt, const void *blob, uint32_t max_size);

/**
 * fdt_next_node - the node after @node in document order
 * @fdt: the tree
 * @node: a node, or -1 for the root
 * @depth: in: @node's depth; out: the returned node's depth (root is 0)
 *
 * Return: the next node, -FDT_ENOENT after the last one, -FDT_EINVAL.
 */
int fdt_next_node(const struct fdt *fdt, int node, int *depth);

/* The node's name with its unit address ("serial@10000000"). */
const char *fdt_node_name(const struct fdt *fdt, int node);

/**
 * fdt_getprop - a property of a node
 * @len: set to the value's length in bytes (may be NULL)
 *
 * Return: the value (inside the blob, 4-byte aligned) or NULL.
 */
const void *fdt_getprop(const struct fdt *fdt, int node, const char *name,
			uint32_t *len);

/* The parent of @node; -FDT_ENOENT for the root. */
int fdt_parent(const struct fdt *fdt, int node);

/*
 * The node at an absolute @path of @len bytes ("/soc/serial@10000000");
 * a component without '@' also matches a name with a unit address.
 */
int fdt_path(const struct fdt *fdt, const char *path, size_t len);

/* The first node after @after (-1: from the root) with @compat. */
int fdt_find_compatible(const struct fdt *fdt, int after, const char *compat);

/* The first node after @after whose device_type is @type. */
int fdt_find_device_type(const struct fdt *fdt, int after, const char *type);

/* The node whose phandle (or linux,phandle) is @phandle. */
int fdt_find_phandle(const struct fdt *fdt, uint32_t phandle);

/* Whether the string list property @name (e.g. "compatible") holds @str. */
bool fdt_prop_has_string(const struct fdt *fdt, int node, const char *name,
			 const char *str);

bool fdt_is_compatible(const struct fdt *fdt, int node, const char *compat);

/* The first child of @parent named @name (or @name@unit when @name has no
 * '@'), -FDT_ENOENT when there is none. */
int fdt_subnode(const struct fdt *fdt, int parent, const char *name);

/* No status property, or "okay"/"ok". */
bool fdt_is_okay(const struct fdt *fdt, int node);

/* A u32 property, or @dflt when absent or not 4 bytes long. */
uint32_t fdt_prop_u32(const struct fdt *fdt, int node, const char *name,
		      uint32_t dflt);

/* #address-cells / #size-cells a node gives its children (default 2 / 1). */
uint32_t fdt_address_cells(const struct fdt *fdt, int node);
uint32_t fdt_size_cells(const struct fdt *fdt, int node);

/* A big-endian number of @cells 32-bit cells (1 or 2; more: low 64 bits). */
uint64_t fdt_read_cells(const void *p, uint32_t cells);

/* A big-endian cell at @p (no alignment needed). */
uint32_t fdt_be32(const void *p);

/* #address-cells / #size-cells that @node's parent gives its reg. */
void fdt_reg_cells(const struct fdt *fdt, int node, unsigned *ac,
		   unsigned *sc);

/*
 * As fdt_reg(), untranslated: the pair as written, in the parent bus's
 * space (a CPU node's reg is its ID, no address).
 */
int fdt_reg_raw(const struct fdt *fdt, int node, unsigned index,
		uint64_t *addr, uint64_t *size);

/**
 * fdt_reg - one address/size pair of a node's reg, CPU address
 * @index: which pair
 * @addr, @size: out
 *
 * The address is translated through the ranges of every ancestor bus
 * (an empty ranges is the identity).
 *
 * Return: 0, -FDT_ENOENT (no such pair), -FDT_EINVAL (untranslatable).
 */
int fdt_reg(const struct fdt *fdt, int node, unsigned index,
	    uint64_t *addr, uint64_t *size);

#endif /* KERNEL_FDT_H */
