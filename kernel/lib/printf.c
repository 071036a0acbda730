/* SPDX-License-Identifier: MIT */
/*
 * printf.c - a bounded printf subset for the kernel (no floating point).
 */
#include "klib.h"

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width,
		       bool left, char pad)
{
	int fill = width > (int)n ? width - (int)n : 0;

	if (!left) {
		/* Zero padding goes after a sign. */
		if (pad == '0' && n && s[0] == '-') {
			put(o, '-');
			s++;
			n--;
		}
		while (fill--)
			put(o, pad);
	}
	while (n--)
		put(o, *s++);
	if (left) {
		while (fill-- > 0)
			put(o, ' ');
	}
}

static size_t utoa(char *tmp, unsigned long long v, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char rev[24];
	size_t n = 0, i;

	do {
		rev[n++] = digits[v % base];
		v /= base;
	} while (v);
	for (i = 0; i < n; i++)
		tmp[i] = rev[n - 1 - i];
	return n;
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		bool left = false, upper = false, is_signed = false;
		char pad = ' ';
		int width = 0, lng = 0;
		unsigned base = 10;
		unsigned long long v;
		char tmp[26];
		size_t n;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				left = true;
			else if (*fmt == '0')
				pad = '0';
			else
				break;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		for (;; fmt++) {
			if (*fmt == 'l')
				lng++;
			else if (*fmt == 'z')
				lng = 2;
			else if (*fmt == 'h')
				continue;
			else
				break;
		}
		switch (*fmt) {
		case 'c':
			tmp[0] = (char)va_arg(ap, int);
			put_padded(&o, tmp, 1, width, left, ' ');
			continue;
		case 's': {
			const char *s = va_arg(ap, const char *);

			if (!s)
				s = "(null)";
			put_padded(&o, s, strlen(s), width, left, ' ');
			continue;
		}
		case '%':
			put(&o, '%');
			continue;
		case 'p':
			v = (uintptr_t)va_arg(ap, void *);
			tmp[0] = '0';
			tmp[1] = 'x';
			n = 2 + utoa(tmp + 2, v, 16, false);
			put_padded(&o, tmp, n, width, left, ' ');
			continue;
		case 'd':
		case 'i':
			is_signed = true;
			break;
		case 'u':
			break;
		case 'x':
			base = 16;
			break;
		case 'X':
			base = 16;
			upper = true;
			break;
		case 'o':
			base = 8;
			break;
		case '\0':
			fmt--;
			continue;
		default:
			put(&o, '%');
			put(&o, *fmt);
			continue;
		}
		if (is_signed) {
			long long s;

			if (lng >= 2)
				s = va_arg(ap, long long);
			else if (lng == 1)
				s = va_arg(ap, long);
			else
				s = va_arg(ap, int);
			if (s < 0) {
				tmp[0] = '-';
				n = 1 + utoa(tmp + 1, 0ull - (unsigned long long)s,
					     10, false);
			} else {
				n = utoa(tmp, (unsigned long long)s, 10, false);
			}
		} else {
			if (lng >= 2)
				v = va_arg(ap, unsigned long long);
			else if (lng == 1)
				v = va_arg(ap, unsigned long);
			else
				v = va_arg(ap, unsigned int);
			n = utoa(tmp, v, base, upper);
		}
		put_padded(&o, tmp, n, width, left, left ? ' ' : pad);
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
