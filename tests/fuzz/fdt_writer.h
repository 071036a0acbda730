/* SPDX-License-Identifier: MIT */
/*
 * fdt_writer.h - a tiny writer of flattened device trees (DTB version 17,
 * Devicetree Specification v0.4 chapter 5), for tests that need a tree
 * of their own: open a node, give it properties, close it, and finish.
 *
 *	struct fdtw w;
 *
 *	fdtw_init(&w);
 *	fdtw_begin(&w, "");			the root
 *	fdtw_cells(&w, "#address-cells", 1, 2);
 *	fdtw_begin(&w, "pcie@10000000");
 *	fdtw_string(&w, "compatible", "pci-host-ecam-generic");
 *	fdtw_cells(&w, "reg", 4, 0x40, 0x10000000, 0, 0x80000);
 *	fdtw_end(&w);
 *	fdtw_end(&w);
 *	size = fdtw_finish(&w, blob, sizeof(blob));
 *
 * Nothing is checked beyond the buffers' room: a test that writes a bad
 * tree gets a bad tree. Running out of room makes fdtw_finish() return 0.
 */
#ifndef TESTS_FUZZ_FDT_WRITER_H
#define TESTS_FUZZ_FDT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fdtw {
	uint8_t strct[8192];		/* the structure block */
	uint32_t strct_len;
	char strings[2048];		/* the strings block */
	uint32_t strings_len;
	bool full;			/* something did not fit */
};

void fdtw_init(struct fdtw *w);

/* Open a node named @name ("" for the root, "cpu@0" ...). */
void fdtw_begin(struct fdtw *w, const char *name);

/* Close the node opened last. */
void fdtw_end(struct fdtw *w);

/* A property of @len bytes, given as they go into the blob. */
void fdtw_prop(struct fdtw *w, const char *name, const void *val, uint32_t len);

/* A property of @n 32-bit cells, each an unsigned int argument. */
void fdtw_cells(struct fdtw *w, const char *name, unsigned n, ...);

/* A string property (its NUL included); "" gives an empty string. */
void fdtw_string(struct fdtw *w, const char *name, const char *s);

/*
 * A string list given as one literal, "\0" between the strings:
 * fdtw_strings(&w, "compatible", "arm,pl011\0arm,primecell").
 */
#define fdtw_strings(w, name, lit) fdtw_prop((w), (name), (lit), sizeof(lit))

/* A property without a value ("msi-controller", an empty "ranges"). */
void fdtw_flag(struct fdtw *w, const char *name);

/**
 * fdtw_finish - Lay the blob out in @out
 * @cap: bytes at @out
 *
 * Header, an empty memory reservation block, the structure block (ended
 * with FDT_END) and the strings block.
 * Return: the blob's size (its totalsize), or 0 when it does not fit.
 */
size_t fdtw_finish(struct fdtw *w, uint8_t *out, size_t cap);

#endif /* TESTS_FUZZ_FDT_WRITER_H */
