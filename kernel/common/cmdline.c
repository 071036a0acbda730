/* SPDX-License-Identifier: MIT */
/*
 * cmdline.c - the multiboot command line.
 *
 * QEMU's multiboot loader passes "<kernel path> <-append text>", so the
 * first word is skipped. Parameters are space-separated "key" or
 * "key=value" words; the last occurrence of a key wins, as in Linux.
 */
#include "kernel.h"

static char cmdline[1024];

void cmdline_init(const char *raw)
{
	const char *p = raw ? raw : "";

	while (*p == ' ')
		p++;
	while (*p && *p != ' ')
		p++;	/* the kernel's own path */
	cmdline_set(p);
}

void cmdline_set(const char *args)
{
	const char *p = args ? args : "";

	while (*p == ' ')
		p++;
	size_t n = strlen(p);

	if (n >= sizeof(cmdline))
		n = sizeof(cmdline) - 1;
	memcpy(cmdline, p, n);
	cmdline[n] = '\0';
}

const char *cmdline_get(void)
{
	return cmdline;
}

const char *cmdline_value(const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);
	const char *p = cmdline, *found = NULL;
	size_t flen = 0;

	while (*p) {
		const char *w = p;
		size_t wlen = 0;

		while (w[wlen] && w[wlen] != ' ')
			wlen++;
		if (wlen >= klen && !strncmp(w, key, klen) &&
		    (wlen == klen || w[klen] == '=')) {
			found = wlen == klen ? w + wlen : w + klen + 1;
			flen = wlen == klen ? 0 : wlen - klen - 1;
		}
		p = w + wlen;
		while (*p == ' ')
			p++;
	}
	if (!found || !size)
		return found ? "" : NULL;
	if (flen >= size)
		flen = size - 1;
	memcpy(buf, found, flen);
	buf[flen] = '\0';
	return buf;
}

bool cmdline_flag(const char *key)
{
	char buf[8];

	return cmdline_value(key, buf, sizeof(buf)) != NULL;
}

bool cmdline_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	if (!strcmp(list, "all"))
		return true;
	/* Each comma-separated item, empty ones too ("a,,b", "a,"). */
	for (const char *p = list;;) {
		const char *c = p;

		while (*c && *c != ',')
			c++;
		if ((size_t)(c - p) == n && !strncmp(p, item, n))
			return true;
		if (!*c)
			return false;
		p = c + 1;
	}
}

bool cmdline_bdf_count(const char *v, uint32_t *bdf, uint64_t *n,
		       uint64_t max_n)
{
	static const char seps[3] = { ':', '.', ':' };
	static const uint64_t lim[3] = { 0xff, 0x1f, 7 };
	uint64_t x[4];
	const char *p = v, *end;

	for (int i = 0; i < 4; i++) {
		if (!kstrtou64(p, &end, i < 3 ? 16 : 10, &x[i]) || end == p)
			return false;
		if (i < 3 ? *end != seps[i] || x[i] > lim[i] : *end != '\0')
			return false;
		p = end + 1;
	}
	if (!x[3] || x[3] > max_n)
		return false;
	*bdf = (uint32_t)(x[0] << 8 | x[1] << 3 | x[2]);
	*n = x[3];
	return true;
}
