/* SPDX-License-Identifier: MIT */
/*
 * The SVG heat map of the vectors of every CPU (heatmap.h): layout,
 * legend, and the cells as few rectangles as keep them exact.
 *
 * Layout, in pixels: the title and subtitle at the top; the map at
 * (MAP_X, MAP_Y), MAP_W wide whatever the vectors a CPU, a row per CPU of
 * a height between 1 and 16 (about 800 pixels for the lot); groups
 * (sockets) one under the other with a gap and a label; the legend and
 * the notes to the right. Each group of rows is drawn in cell units
 * inside <g transform="translate(x,y) scale(w,h)" data-first-row="r">,
 * which is what a reader of the file (tests/sim/svg.t) uses to find a
 * CPU's row in the rendered picture.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"

#define MAP_X        150u
#define MAP_Y        96u
#define MAP_W        768u
#define MAP_TARGET_H 800u      /* rows share about this many pixels */
#define ROW_MAX_H    16u
#define GROUP_GAP    10u
#define LEGEND_GAP   28u
#define LEGEND_W     440u
#define LEGEND_ROW   18u
#define NOTE_CHARS   56u       /* characters a line of a note */

static const char *const hm_colour[HM_NCLASSES] = {
	[HM_FREE]      = "#ebebeb",
	[HM_RESERVED]  = "#737373",
	[HM_LEGACY]    = "#b3b3b3",
	[HM_MANAGED]   = "#cdbfe8",
	[HM_OTHER_IRQ] = "#111111",
	[HM_UNKNOWN]   = "#fbf0c4",
	[HM_OTHER_DEV] = "#a6a05a",
	/* Tableau 10, without its grey. */
	[HM_DEV0 + 0]  = "#4e79a7",
	[HM_DEV0 + 1]  = "#f28e2b",
	[HM_DEV0 + 2]  = "#e15759",
	[HM_DEV0 + 3]  = "#76b7b2",
	[HM_DEV0 + 4]  = "#59a14f",
	[HM_DEV0 + 5]  = "#edc948",
	[HM_DEV0 + 6]  = "#b07aa1",
	[HM_DEV0 + 7]  = "#ff9da7",
	[HM_DEV0 + 8]  = "#9c755f",
	[HM_DEV0 + 9]  = "#1b3a6b",
};

static const char *const hm_default_name[HM_DEV0] = {
	[HM_FREE]      = "free",
	[HM_RESERVED]  = "reserved (exceptions, system vectors)",
	[HM_LEGACY]    = "withheld for the ISA IRQs",
	[HM_MANAGED]   = "set aside for managed IRQs, unused",
	[HM_OTHER_IRQ] = "in use by an IRQ of no PCI device",
	[HM_UNKNOWN]   = "not known",
	[HM_OTHER_DEV] = "other devices",
};

_Static_assert(HM_NCLASSES <= 256, "a cell's class fits a byte");

int heatmap_init(struct heatmap *hm, uint32_t nrows, uint32_t ncols)
{
	memset(hm, 0, sizeof(*hm));
	if (!nrows || !ncols || ncols > 65536)
		return -1;
	hm->cells = calloc((size_t)nrows * ncols, 1);
	hm->row_id = calloc(nrows, sizeof(*hm->row_id));
	hm->row_group = calloc(nrows, sizeof(*hm->row_group));
	if (!hm->cells || !hm->row_id || !hm->row_group) {
		heatmap_free(hm);
		return -1;
	}
	for (uint32_t r = 0; r < nrows; r++) {
		hm->row_id[r] = r;
		hm->row_group[r] = -1;
	}
	hm->nrows = nrows;
	hm->ncols = ncols;
	hm->row_word = "CPU";
	hm->group_word = "socket";
	hm->col_word = "vector";
	return 0;
}

void heatmap_free(struct heatmap *hm)
{
	free(hm->cells);
	free(hm->row_id);
	free(hm->row_group);
	memset(hm, 0, sizeof(*hm));
}

void heatmap_note(struct heatmap *hm, const char *fmt, ...)
{
	va_list ap;

	if (hm->nnotes >= HM_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(hm->notes[hm->nnotes++], HM_TEXT_LEN, fmt, ap);
	va_end(ap);
}

unsigned heatmap_rank(const uint64_t *counts, size_t n, uint8_t *class_of)
{
	size_t top[HM_MAX_DEVS];
	unsigned k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned at = k;

		class_of[i] = HM_OTHER_DEV;
		if (!counts[i])
			continue;
		/* Insertion into the top list: more first, then lower index. */
		while (at > 0 && counts[top[at - 1]] < counts[i])
			at--;
		if (at >= HM_MAX_DEVS)
			continue;
		if (k < HM_MAX_DEVS)
			k++;
		memmove(&top[at + 1], &top[at], (k - 1 - at) * sizeof(*top));
		top[at] = i;
	}
	for (unsigned r = 0; r < k; r++)
		class_of[top[r]] = (uint8_t)(HM_DEV0 + r);
	return k;
}

/* ---- Text ------------------------------------------------------------------ */

/*
 * @s as XML character data or attribute text. Only printable ASCII goes
 * through: control characters are no XML 1.0 characters, and a byte
 * above 0x7f (a file name's) may not be UTF-8, which would leave the
 * document not well-formed; each is a '?'.
 */
static void hm_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			fputc((unsigned char)*s >= 0x20 &&
			      (unsigned char)*s < 0x7f ? *s : '?', f);
		}
	}
}

/* Where the next line of @s starts: after at most NOTE_CHARS, at a space. */
static size_t hm_cut(const char *s)
{
	size_t n = strlen(s), cut;

	if (n <= NOTE_CHARS)
		return n;
	for (cut = NOTE_CHARS; cut > 0 && s[cut] != ' '; cut--)
		;
	return cut ? cut : NOTE_CHARS;
}

static const char *hm_next_line(const char *s, size_t cut)
{
	for (s += cut; *s == ' '; s++)
		;
	return s;
}

/* Lines @s takes, wrapped as hm_wrapped() does. */
static unsigned hm_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; n++)
		s = hm_next_line(s, hm_cut(s));
	return n;
}

/*
 * @s cut into lines of at most NOTE_CHARS at spaces, each a <text> at
 * (@x, *@y); *@y moves down a line each.
 */
static void hm_wrapped(FILE *f, const char *s, unsigned x, unsigned *y,
		       const char *attrs)
{
	char line[NOTE_CHARS + 1];

	while (*s) {
		size_t cut = hm_cut(s);

		memcpy(line, s, cut);
		line[cut] = '\0';
		fprintf(f, "<text x=\"%u\" y=\"%u\"%s>", x, *y, attrs);
		hm_text(f, line);
		fputs("</text>\n", f);
		*y += 14;
		s = hm_next_line(s, cut);
	}
}

static const char *hm_name(const struct heatmap *hm, unsigned c)
{
	if (hm->class_name[c][0])
		return hm->class_name[c];
	return c < HM_DEV0 ? hm_default_name[c] : "";
}

/* ---- Rectangles ------------------------------------------------------------- */

/* A growing string: one class's path. */
struct hm_buf {
	char *p;
	size_t n, cap;
};

static int hm_append(struct hm_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int hm_append(struct hm_buf *b, const char *fmt, ...)
{
	char tmp[96];
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof(tmp))
		return -1;
	if (b->n + (size_t)w + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		char *p;

		while (cap < b->n + (size_t)w + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, tmp, (size_t)w + 1);
	b->n += (size_t)w;
	return 0;
}

/* A rectangle of one class being grown down, row after row. */
struct hm_rect {
	uint32_t x, len, y0;
	uint8_t cls;
};

struct hm_group {
	uint32_t first, n;      /* rows first .. first + n - 1 */
	uint8_t bg;             /* the class not drawn: the background */
	struct hm_buf path[HM_NCLASSES];
	struct hm_rect *open, *next;
	size_t nopen, nnext;
};

static int hm_close(struct hm_group *g, const struct hm_rect *r, uint32_t y)
{
	if (r->cls == g->bg)
		return 0;
	return hm_append(&g->path[r->cls], "M%u %uh%uv%uh-%uz", r->x, r->y0,
			 r->len, y - r->y0, r->len);
}

/*
 * Row @y of the group (cells @row): its runs continue the open rectangles
 * that have the same place, length and class, and start new ones
 * otherwise; rectangles that do not continue are closed.
 */
static int hm_row(struct hm_group *g, const uint8_t *row, uint32_t ncols,
		  uint32_t y)
{
	size_t j = 0;

	g->nnext = 0;
	for (uint32_t x = 0; x < ncols; ) {
		uint32_t len = 1;
		struct hm_rect r;

		while (x + len < ncols && row[x + len] == row[x])
			len++;
		r = (struct hm_rect){ x, len, y, row[x] };
		/* The open ones wholly before this run end here. */
		while (j < g->nopen && g->open[j].x < x)
			if (hm_close(g, &g->open[j++], y))
				return -1;
		if (j < g->nopen && g->open[j].x == x) {
			if (g->open[j].len == len && g->open[j].cls == r.cls)
				r.y0 = g->open[j].y0;
			else if (hm_close(g, &g->open[j], y))
				return -1;
			j++;
		}
		g->next[g->nnext++] = r;
		x += len;
	}
	while (j < g->nopen)
		if (hm_close(g, &g->open[j++], y))
			return -1;
	/* Swap: the runs of this row are the open rectangles now. */
	{
		struct hm_rect *t = g->open;

		g->open = g->next;
		g->next = t;
		g->nopen = g->nnext;
	}
	return 0;
}

/* The rectangles of the group's rows, into its per-class paths. */
static int hm_group_paths(const struct heatmap *hm, struct hm_group *g)
{
	uint64_t count[HM_NCLASSES] = { 0 };
	const uint8_t *cells = hm->cells + (size_t)g->first * hm->ncols;

	for (size_t i = 0; i < (size_t)g->n * hm->ncols; i++)
		count[cells[i]]++;
	g->bg = HM_FREE;
	for (unsigned c = 0; c < HM_NCLASSES; c++)
		if (count[c] > count[g->bg])
			g->bg = (uint8_t)c;
	g->open = malloc(hm->ncols * sizeof(*g->open));
	g->next = malloc(hm->ncols * sizeof(*g->next));
	if (!g->open || !g->next)
		return -1;
	g->nopen = 0;
	for (uint32_t y = 0; y < g->n; y++)
		if (hm_row(g, cells + (size_t)y * hm->ncols, hm->ncols, y))
			return -1;
	for (size_t j = 0; j < g->nopen; j++)
		if (hm_close(g, &g->open[j], g->n))
			return -1;
	return 0;
}

static void hm_group_free(struct hm_group *g)
{
	for (unsigned c = 0; c < HM_NCLASSES; c++)
		free(g->path[c].p);
	free(g->open);
	free(g->next);
	memset(g, 0, sizeof(*g));
}

/* ---- The document -------------------------------------------------------------- */

struct hm_layout {
	unsigned row_h;         /* pixels a row */
	double col_w;           /* pixels a column */
	unsigned label_every;   /* a row label every this many rows */
	unsigned tick;          /* a column label every this many columns */
	bool groups;            /* some row has a known group */
	unsigned width, height;
};

static void hm_layout(const struct heatmap *hm, struct hm_layout *l)
{
	unsigned ngroups = 1;

	l->row_h = MAP_TARGET_H / hm->nrows;
	if (l->row_h < 1)
		l->row_h = 1;
	if (l->row_h > ROW_MAX_H)
		l->row_h = ROW_MAX_H;
	l->col_w = (double)MAP_W / hm->ncols;
	/* Labels 14 pixels apart at least, every 1, 2, 4, ... rows. */
	for (l->label_every = 1; l->label_every * l->row_h < 14;)
		l->label_every *= 2;
	for (l->tick = 1; l->tick * l->col_w < 40 && l->tick < hm->ncols;)
		l->tick *= 2;
	l->groups = false;
	for (uint32_t r = 0; r < hm->nrows; r++) {
		l->groups |= hm->row_group[r] >= 0;
		if (r && hm->row_group[r] != hm->row_group[r - 1])
			ngroups++;
	}
	l->width = MAP_X + MAP_W + LEGEND_GAP + LEGEND_W;
	l->height = MAP_Y + hm->nrows * l->row_h +
		    (l->groups ? (ngroups - 1) * GROUP_GAP : 0) + 30;
}

static void hm_axis(FILE *f, const struct heatmap *hm,
		    const struct hm_layout *l)
{
	fprintf(f, "<g font-size=\"10\" fill=\"#333333\">\n"
		"<text x=\"%u\" y=\"%u\" text-anchor=\"end\">", MAP_X - 6,
		MAP_Y - 8);
	hm_text(f, hm->col_word);
	fputs("</text>\n", f);
	for (uint32_t c = 0; c < hm->ncols; c += l->tick) {
		double x = MAP_X + c * l->col_w;

		fprintf(f, "<text x=\"%.1f\" y=\"%u\">0x%02x</text>"
			"<line x1=\"%.1f\" y1=\"%u\" x2=\"%.1f\" y2=\"%u\" "
			"stroke=\"#888888\"/>\n", x + 1, MAP_Y - 8, c, x,
			MAP_Y - 6, x, MAP_Y - 1);
	}
	fputs("</g>\n", f);
}

/* One group: background, paths, outline, labels. */
static int hm_draw_group(FILE *f, const struct heatmap *hm,
			 const struct hm_layout *l, struct hm_group *g,
			 unsigned y)
{
	if (hm_group_paths(hm, g))
		return -1;
	fprintf(f, "<g transform=\"translate(%u,%u) scale(%g,%u)\" "
		"data-first-row=\"%u\" data-rows=\"%u\">\n"
		"<rect width=\"%u\" height=\"%u\" fill=\"%s\"/>\n", MAP_X, y,
		l->col_w, l->row_h, g->first, g->n, hm->ncols, g->n,
		hm_colour[g->bg]);
	for (unsigned c = 0; c < HM_NCLASSES; c++)
		if (g->path[c].n)
			fprintf(f, "<path fill=\"%s\" d=\"%s\"/>\n", hm_colour[c],
				g->path[c].p);
	fprintf(f, "</g>\n<rect x=\"%g\" y=\"%g\" width=\"%u\" height=\"%u\" "
		"fill=\"none\" stroke=\"#999999\" stroke-width=\"1\"/>\n",
		MAP_X - 0.5, y - 0.5, MAP_W + 1, g->n * l->row_h + 1);
	fputs("<g font-size=\"10\" fill=\"#333333\" text-anchor=\"end\">\n", f);
	for (uint32_t r = 0; r < g->n; r += l->label_every)
		fprintf(f, "<text x=\"%u\" y=\"%u\">%s %u</text>\n", MAP_X - 6,
			y + r * l->row_h + (l->row_h >= 10 ? l->row_h / 2 + 4 : 8),
			hm->row_word, hm->row_id[g->first + r]);
	fputs("</g>\n", f);
	if (l->groups) {
		int32_t grp = hm->row_group[g->first];

		fprintf(f, "<text x=\"6\" y=\"%u\" font-weight=\"bold\">",
			y + 12);
		hm_text(f, hm->group_word);
		if (grp >= 0)
			fprintf(f, " %d</text>\n", grp);
		else
			fputs(" ?</text>\n", f);
	}
	return 0;
}

/* The legend's classes, in its order: devices first, free last. */
static unsigned hm_legend_class(unsigned i)
{
	static const uint8_t order[] = {
		HM_OTHER_DEV, HM_OTHER_IRQ, HM_MANAGED, HM_LEGACY, HM_RESERVED,
		HM_UNKNOWN, HM_FREE,
	};

	return i < HM_MAX_DEVS ? HM_DEV0 + i : order[i - HM_MAX_DEVS];
}

#define HM_LEGEND_ITEMS (HM_MAX_DEVS + 7u)

/*
 * A class shows when some cell is its and it has a name; free shows when
 * none is free too, unless some cells are not known (then "free: 0"
 * would claim what is not known).
 */
static bool hm_legend_shows(const struct heatmap *hm, const uint64_t *count,
			    unsigned c)
{
	if (!hm_name(hm, c)[0])
		return false;
	return count[c] || (c == HM_FREE && !count[HM_UNKNOWN]);
}

/* The legend and the notes, in pixels. */
static unsigned hm_legend_height(const struct heatmap *hm,
				 const uint64_t *count)
{
	unsigned h = 18;

	for (unsigned i = 0; i < HM_LEGEND_ITEMS; i++)
		h += hm_legend_shows(hm, count, hm_legend_class(i)) ? LEGEND_ROW : 0;
	for (unsigned i = 0; i < hm->nnotes; i++)
		h += hm_lines(hm->notes[i]) * 14 + 6;
	return h;
}

static void hm_legend(FILE *f, const struct heatmap *hm,
		      const uint64_t *count, unsigned *y)
{
	unsigned x = MAP_X + MAP_W + LEGEND_GAP;
	uint64_t total = (uint64_t)hm->nrows * hm->ncols;

	fprintf(f, "<g font-size=\"12\">\n<text x=\"%u\" y=\"%u\" "
		"font-weight=\"bold\">vectors (cells)</text>\n", x, *y);
	*y += 10;
	for (unsigned i = 0; i < HM_LEGEND_ITEMS; i++) {
		unsigned c = hm_legend_class(i);
		const char *name = hm_name(hm, c);

		if (!hm_legend_shows(hm, count, c))
			continue;
		fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"12\" height=\"12\" "
			"fill=\"%s\" stroke=\"#666666\" stroke-width=\"0.5\"/>"
			"<text x=\"%u\" y=\"%u\">", x, *y, hm_colour[c], x + 18,
			*y + 10);
		hm_text(f, name);
		fprintf(f, ": %llu (%.1f%%)</text>\n", (unsigned long long)count[c],
			total ? 100.0 * (double)count[c] / (double)total : 0.0);
		*y += LEGEND_ROW;
	}
	fputs("</g>\n", f);
}

int heatmap_write(FILE *f, const struct heatmap *hm)
{
	uint64_t count[HM_NCLASSES] = { 0 };
	struct hm_layout l;
	unsigned y, ly;
	int ret = 0;

	for (size_t i = 0; i < (size_t)hm->nrows * hm->ncols; i++) {
		/* A class past the last is the caller's bug: draw nothing. */
		if (hm->cells[i] >= HM_NCLASSES) {
			errno = EINVAL;
			return -1;
		}
		count[hm->cells[i]]++;
	}
	hm_layout(hm, &l);
	/* The legend and its notes may reach below the map. */
	if (MAP_Y + hm_legend_height(hm, count) + 20 > l.height)
		l.height = MAP_Y + hm_legend_height(hm, count) + 20;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" "
		"font-size=\"12\">\n<title>", l.width, l.height, l.width,
		l.height);
	hm_text(f, hm->title);
	fprintf(f, "</title>\n<rect width=\"%u\" height=\"%u\" "
		"fill=\"#ffffff\"/>\n<text x=\"10\" y=\"24\" font-size=\"17\" "
		"font-weight=\"bold\">", l.width, l.height);
	hm_text(f, hm->title);
	fputs("</text>\n<text x=\"10\" y=\"46\" font-size=\"13\">", f);
	hm_text(f, hm->subtitle);
	fputs("</text>\n", f);
	hm_axis(f, hm, &l);
	fputs("<g id=\"map\" shape-rendering=\"crispEdges\">\n", f);
	y = MAP_Y;
	for (uint32_t r = 0; r < hm->nrows && !ret; ) {
		struct hm_group g = { .first = r };

		while (r < hm->nrows &&
		       hm->row_group[r] == hm->row_group[g.first])
			r++;
		g.n = r - g.first;
		ret = hm_draw_group(f, hm, &l, &g, y);
		y += g.n * l.row_h + (l.groups ? GROUP_GAP : 0);
		hm_group_free(&g);
	}
	fputs("</g>\n", f);
	ly = MAP_Y;
	hm_legend(f, hm, count, &ly);
	ly += 8;
	for (unsigned i = 0; i < hm->nnotes; i++) {
		hm_wrapped(f, hm->notes[i], MAP_X + MAP_W + LEGEND_GAP, &ly,
			   " font-size=\"11\" fill=\"#444444\"");
		ly += 6;
	}
	fputs("</svg>\n", f);
	if (ret) {
		errno = ENOMEM;
		return -1;
	}
	return ferror(f) ? -1 : 0;
}
