/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the reference kernel's command line
 * (kernel/common/cmdline.c: cmdline_init, cmdline_value, cmdline_flag,
 * cmdline_list_has, cmdline_bdf_count: umsi.sriov=BB:DD.F:N) and the
 * number parser its umsi.* values go through (kstrtou64, kernel/common/lib/
 * string.c), compiled hosted and unmodified. The kernel's own string
 * functions come with them, renamed (kernel_memcpy, ...) so they do not
 * replace the C library's: see mk/fuzz-kcmdline.mk.
 *
 * Input: the multiboot command line ("<kernel path> <-append text>") up
 * to the first newline; after it, a key of the fuzzer's own to look up.
 * Every key the kernel reads is looked up with the buffer size the kernel
 * gives it, in a heap buffer of exactly that size (AddressSanitizer
 * catches a byte written past it), and every answer is compared with a
 * reference written from the comment at the top of kernel/common/cmdline.c:
 * words split at spaces, the first word skipped, "key" or "key=value",
 * the last occurrence wins, values cut to the buffer. Numbers are
 * compared with strtoull wherever they fit in 64 bits.
 *
 * The umsi.* list matchers (driver_enabled in kernel/common/glue.c, bdf_listed
 * in kernel/common/pcireset.c) are static in files that need the whole kernel;
 * they are not reached here.
 *
 *   make fuzz-kcmdline-long FUZZ_TIME=3600
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define KCMDLINE_MAX 1024       /* kernel/common/cmdline.c's buffer */

/* The keys the kernel reads, with the buffer each call site gives. */
static const struct {
	const char *key;
	size_t size;
	bool number;            /* the value goes through kstrtou64 */
} fuzz_keys[] = {
	{ "umsi.debug", 8, false },     /* cmdline_flag's own buffer */
	{ "umsi.drivers", 64, false },
	{ "umsi.probe", 16, false },
	{ "umsi.probe_max", 16, true },
	{ "umsi.steps", 8, false },
	{ "umsi.dynamic", 16, true },
	{ "umsi.fire", 16, true },
	{ "umsi.migrate", 16, true },
	{ "umsi.tables", 8, false },
	{ "umsi.apic", 32, false },
	{ "umsi.selftest", 32, false },
	{ "umsi.hold", 8, false },
	{ "umsi.fresh", 8, false },
	{ "umsi.flr", 128, false },
	{ "umsi.dirty", 128, false },
	{ "e1000e.mode", 16, false },
	{ "edu.mode", 8, false },
	{ "umsi.sriov", 32, false },
	{ "umsi.sriov_cycles", 32, true },
	{ "umsi.sriov_nowait", 8, false },
};

/* What cmdline_get() must hold after cmdline_init(@raw). */
static void ref_init(const char *raw, char out[KCMDLINE_MAX])
{
	size_t n;

	while (*raw == ' ')
		raw++;
	raw += strcspn(raw, " ");       /* the kernel's own path */
	while (*raw == ' ')
		raw++;
	n = strlen(raw);
	if (n >= KCMDLINE_MAX)
		n = KCMDLINE_MAX - 1;
	memcpy(out, raw, n);
	out[n] = '\0';
}

/*
 * The value of the last word "key" or "key=value" of @cl, or NULL; the
 * value's length in *@len.
 */
static const char *ref_find(const char *cl, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *found = NULL;

	for (const char *w = cl; *w; ) {
		size_t wlen = strcspn(w, " ");

		if (wlen && !strncmp(w, key, klen) &&
		    (wlen == klen || (wlen > klen && w[klen] == '='))) {
			found = w + (wlen == klen ? klen : klen + 1);
			*len = wlen == klen ? 0 : wlen - klen - 1;
		}
		w += wlen;
		while (*w == ' ')
			w++;
	}
	return found;
}

/* Reference for cmdline_list_has(): "all", or @item between commas. */
static bool ref_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *p = list;

	if (!strcmp(list, "all"))
		return true;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (len == n && !strncmp(p, item, n))
			return true;
		if (!c)
			return false;
		p = c + 1;
	}
}

/*
 * Reference for cmdline_bdf_count(): "B:D.F:N", B D F hex digits (after
 * an optional 0x each), N decimal digits, nothing else, every value in
 * range; values that overflow 64 bits are refused.
 */
static bool ref_part(const char **p, int base, char stop, uint64_t max,
		     uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;
	int digits = 0;

	if (base == 16 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	for (;; q++, digits++) {
		int d = *q >= '0' && *q <= '9' ? *q - '0' :
			base == 16 && *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 :
			base == 16 && *q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;

		if (d < 0)
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (!digits || *q != stop || v > max)
		return false;
	*p = q + 1;
	*out = v;
	return true;
}

static void check_bdf_count(const char *v)
{
	uint64_t b, d, f, n, got_n = 0;
	uint32_t got_bdf = 0;
	const char *p = v;
	bool ok = cmdline_bdf_count(v, &got_bdf, &got_n, 64);
	bool want = ref_part(&p, 16, ':', 0xff, &b) &&
		    ref_part(&p, 16, '.', 0x1f, &d) &&
		    ref_part(&p, 16, ':', 7, &f) &&
		    ref_part(&p, 10, '\0', 64, &n) && n;

	FUZZ_CHECK(ok == want);
	if (ok)
		FUZZ_CHECK(got_bdf == (b << 8 | d << 3 | f) && got_n == n);
}

/* cmdline_value(@key) in a buffer of exactly @size, against ref_find(). */
static void check_key(const char *cl, const char *key, size_t size,
		      bool number)
{
	char *buf = size ? malloc(size) : NULL;
	const char *got, *want;
	size_t wlen = 0;

	if (size && !buf)
		return;
	got = cmdline_value(key, buf, size);
	want = ref_find(cl, key, &wlen);
	FUZZ_CHECK(!got == !want);
	FUZZ_CHECK(cmdline_flag(key) == !!want);
	if (got && size) {
		size_t keep = wlen < size ? wlen : size - 1;

		FUZZ_CHECK(got == buf && strlen(buf) == keep &&
			   !memcmp(buf, want, keep));
	} else if (got) {
		FUZZ_CHECK(!strcmp(got, ""));
	}
	/* The umsi.drivers=/flr=/dirty= matcher, with the key as the item. */
	if (got && size)
		FUZZ_CHECK(cmdline_list_has(buf, key) == ref_list_has(buf, key));
	/* umsi.sriov='s BB:DD.F:N, on every value. */
	if (got && size)
		check_bdf_count(buf);
	if (got && size && number) {
		const char *end;
		char *rend;
		uint64_t v = 0;
		unsigned long long r;
		bool ok = kstrtou64(buf, &end, 0, &v);

		/* strtoull would take a sign or spaces; kstrtou64 must not. */
		if (buf[0] >= '0' && buf[0] <= '9') {
			int base = buf[0] == '0' && (buf[1] == 'x' ||
				   buf[1] == 'X') ? 16 : 10;

			errno = 0;
			r = strtoull(buf, &rend, base);
			if (errno != ERANGE && rend != buf &&
			    !(base == 16 && rend == buf + 1))
				FUZZ_CHECK(ok && v == r && end == rend);
			/* Past 2^64 - 1: refused, never wrapped. */
			if (errno == ERANGE)
				FUZZ_CHECK(!ok);
		} else {
			FUZZ_CHECK(!ok);
		}
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t nl = 0;
	char *raw, key[48], want[KCMDLINE_MAX];
	size_t klen;

	while (nl < size && data[nl] != '\n')
		nl++;
	raw = malloc(nl + 1);
	if (!raw)
		return 0;
	memcpy(raw, data, nl);
	raw[nl] = '\0';
	cmdline_init(raw);
	ref_init(raw, want);
	FUZZ_CHECK(!strcmp(cmdline_get(), want));
	for (size_t i = 0; i < sizeof(fuzz_keys) / sizeof(fuzz_keys[0]); i++)
		check_key(want, fuzz_keys[i].key, fuzz_keys[i].size,
			  fuzz_keys[i].number);
	/* The fuzzer's own key, with a buffer of 0 to 16 bytes. */
	if (nl < size) {
		const uint8_t *k = data + nl + 1;
		size_t rest = size - nl - 1;

		klen = rest > sizeof(key) - 1 ? sizeof(key) - 1 : rest;
		memcpy(key, k, klen);
		key[klen] = '\0';
		klen = strlen(key);
		check_key(want, key, klen ? (size_t)(k[0] % 17) : 4,
			  true);
	}
	cmdline_init(NULL);
	FUZZ_CHECK(!strcmp(cmdline_get(), ""));
	free(raw);
	return 0;
}
