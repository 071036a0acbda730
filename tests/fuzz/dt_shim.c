/* SPDX-License-Identifier: MIT */
/*
 * dt_shim.c - the kernel services the device-tree parsers call, hosted
 * (see dt_shim.h and dt-shim/kernel.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "dt_shim.h"

#define DT_SHIM_LOG_SIZE 16384

static char dt_log[DT_SHIM_LOG_SIZE];
static size_t dt_log_len;

void dt_shim_reset(void)
{
	dt_log_len = 0;
	dt_log[0] = '\0';
}

const char *dt_shim_log(void)
{
	return dt_log;
}

static void dt_log_append(const char *s, size_t n)
{
	size_t room = sizeof(dt_log) - 1 - dt_log_len;

	if (n > room)
		n = room;
	memcpy(dt_log + dt_log_len, s, n);
	dt_log_len += n;
	dt_log[dt_log_len] = '\0';
}

void kprintf(const char *fmt, ...)
{
	char line[2048];	/* the riscv64 console's buffer */
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	dt_log_append(line, (size_t)n);
}

void kputs_raw(const char *s)
{
	dt_log_append(s, strlen(s));
}

/* The parsers do not panic on any tree: one that does is a finding. */
void panic(const char *fmt, ...)
{
	(void)fmt;
	abort();
}

/* Whether the @n bytes at @s hold @word. */
static bool dt_span_has(const char *s, size_t n, const char *word)
{
	size_t wl = strlen(word), i;

	for (i = 0; i + wl <= n; i++)
		if (!memcmp(s + i, word, wl))
			return true;
	return false;
}

bool dt_shim_line_has(const char *word, ...)
{
	const char *line = dt_log;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		bool all = dt_span_has(line, len, word);
		const char *w;
		va_list ap;

		va_start(ap, word);
		while (all && (w = va_arg(ap, const char *)) != NULL)
			all = dt_span_has(line, len, w);
		va_end(ap);
		if (all)
			return true;
		line += len + (nl ? 1 : 0);
	}
	return false;
}
