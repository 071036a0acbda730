/* SPDX-License-Identifier: MIT */
/*
 * tools/inspect/heatmap.h - an SVG picture of the vectors of every CPU:
 * a row per CPU, a column per vector, each cell coloured by what the
 * vector is (free, reserved, set aside, in use by one of the devices of
 * the legend, by another device, by an IRQ that is no device's, or not
 * known). `umsi inspect --svg` (svg.c) and `umsi sim --svg`
 * (tools/sim/simreport.c) fill the cells; heatmap.c draws them.
 *
 * The drawing stays small whatever the machine: the cells are drawn in
 * their own units inside a scaled group, runs of one class along a row
 * are one rectangle, a rectangle that repeats on the next row grows down
 * instead of starting again, each group's commonest class is its
 * background and is not drawn, and every rectangle of a class is one
 * path. 8192 CPUs of 256 vectors (2 M cells) come to a few hundred KB.
 */
#ifndef UMSI_TOOLS_HEATMAP_H
#define UMSI_TOOLS_HEATMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Devices with a colour of their own; the rest share "other devices". */
#define HM_MAX_DEVS   10u
#define HM_NAME_LEN   80u
#define HM_TEXT_LEN   512u
#define HM_MAX_NOTES  6u

/* What a cell is. */
enum hm_class {
	HM_FREE,        /* allocatable, not in use */
	HM_RESERVED,    /* never allocatable: exceptions, system vectors */
	HM_LEGACY,      /* withheld for the ISA IRQs */
	HM_MANAGED,     /* set aside for a managed IRQ, not in use */
	HM_OTHER_IRQ,   /* in use by an IRQ that is no device's of the map */
	HM_UNKNOWN,     /* not known */
	HM_OTHER_DEV,   /* in use by a device beyond the HM_MAX_DEVS */
	HM_DEV0,        /* HM_DEV0 + k: the k-th device of the legend */
	HM_NCLASSES = HM_DEV0 + HM_MAX_DEVS
};

/*
 * @title, @subtitle: the two lines at the top (machine, CPUs, vectors)
 * @notes: lines under the legend (what the picture cannot show)
 * @nrows, @ncols: CPUs, and vectors a CPU
 * @cells: nrows x ncols classes, row after row
 * @row_id: the number printed for each row (a CPU number, an APIC ID)
 * @row_group: the socket of each row, -1 when not known; rows of one
 *             group must be consecutive. A gap and a label separate the
 *             groups when some group is known.
 * @row_word: "CPU" or "APIC ID", before a row's number
 * @group_word: "socket" or "package"
 * @col_word: what a column is: "vector", "identity"
 * @class_name: the legend's words for each class; "" takes the default
 *              (a device class without a name is not in the legend)
 */
struct heatmap {
	char title[HM_TEXT_LEN];
	char subtitle[HM_TEXT_LEN];
	char notes[HM_MAX_NOTES][HM_TEXT_LEN];
	unsigned nnotes;
	uint32_t nrows, ncols;
	uint8_t *cells;
	uint32_t *row_id;
	int32_t *row_group;
	const char *row_word;
	const char *group_word;
	const char *col_word;
	char class_name[HM_NCLASSES][HM_NAME_LEN];
};

/**
 * heatmap_init - an empty map of @nrows x @ncols cells, all HM_FREE
 * @hm: the map; zeroed first
 * @nrows: CPUs (at least 1)
 * @ncols: vectors a CPU (at least 1, at most 65536)
 *
 * Rows are numbered 0..nrows-1 and in no group until the caller says.
 * Return: 0, or -1 when out of memory (nothing left allocated).
 */
int heatmap_init(struct heatmap *hm, uint32_t nrows, uint32_t ncols);

/* Free what heatmap_init() allocated; @hm may be zeroed. */
void heatmap_free(struct heatmap *hm);

/* The cell of row @row, column @col. */
static inline uint8_t *heatmap_cell(struct heatmap *hm, uint32_t row,
				    uint32_t col)
{
	return &hm->cells[(size_t)row * hm->ncols + col];
}

/*
 * heatmap_note - add a line under the legend (printf format); silently
 * dropped past HM_MAX_NOTES.
 */
void heatmap_note(struct heatmap *hm, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * heatmap_rank - which devices get a colour of their own
 * @counts: vectors in use of each of @n devices
 * @n: how many
 * @class_of: receives each device's class: HM_DEV0 + rank for the
 *            HM_MAX_DEVS with the most vectors (ties: the lower index
 *            first), HM_OTHER_DEV for the others, HM_OTHER_DEV too for
 *            a device with none
 *
 * Return: how many devices got a colour of their own.
 */
unsigned heatmap_rank(const uint64_t *counts, size_t n, uint8_t *class_of);

/**
 * heatmap_write - draw @hm as an SVG document on @f
 *
 * Text (title, names, notes) is written as printable ASCII, any other
 * byte as '?', so that the document is well-formed XML whatever it holds.
 * Return: 0, or -1 with errno set: writing failed, memory ran out
 * (ENOMEM), or a cell holds no class (EINVAL; nothing is written).
 */
int heatmap_write(FILE *f, const struct heatmap *hm);

#endif /* UMSI_TOOLS_HEATMAP_H */
