/* SPDX-License-Identifier: MIT */
/*
 * A small printf for log lines and statistics tables, since the core has
 * no libc. Supports %d %i %u %o %x %X %s %c %p %%, the length modifiers
 * h, l, ll, z, a field width (or *), '-' and '0' flags, and %.Ns precision
 * for strings. Public as umsi_vsnprintf() (umsi/format.h), so a kernel
 * embedding uMSI need not carry a second one (the reference kernel does
 * not).
 */
#include <umsi/format.h>
#include <umsi/internal/ctl.h>
#include <umsi/internal/lib.h>

struct out {
	char *buf;
	size_t len;
	size_t pos;
};

static void put(struct out *o, char c)
{
	if (o->pos + 1 < o->len)
		o->buf[o->pos] = c;
	o->pos++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width,
		       bool left, char pad)
{
	int fill = width > (int)n ? width - (int)n : 0;

	if (!left)
		while (fill-- > 0)
			put(o, pad);
	while (n--)
		put(o, *s++);
	if (left)
		while (fill-- > 0)
			put(o, ' ');
}

static void put_num(struct out *o, unsigned long long v, bool neg,
		    unsigned base, bool upper, int width, bool left, char pad)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = digits[v % base];
		v /= base;
	} while (v);
	if (neg) {
		if (pad == '0') {
			put(o, '-');
			width--;
		} else {
			tmp[sizeof(tmp) - 1 - n++] = '-';
		}
	}
	put_padded(o, tmp + sizeof(tmp) - n, n, width, left, pad);
}

size_t umsi_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
	struct out o = { buf, len, 0 };

	for (; *fmt; fmt++) {
		bool left = false;
		char pad = ' ';
		int width = 0, prec = -1, lng = 0;
		unsigned long long u;
		long long s;

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
		if (*fmt == '*') {
			width = va_arg(ap, int);
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		if (*fmt == '.') {
			fmt++;
			prec = 0;
			while (*fmt >= '0' && *fmt <= '9')
				prec = prec * 10 + (*fmt++ - '0');
		}
		while (*fmt == 'l' || *fmt == 'z' || *fmt == 'h') {
			lng += *fmt == 'z' ? 2 : *fmt == 'l' ? 1 : 0;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i':
			s = lng >= 2 ? va_arg(ap, long long) :
			    lng == 1 ? va_arg(ap, long) : va_arg(ap, int);
			u = s < 0 ? 0ull - (unsigned long long)s :
				    (unsigned long long)s;
			put_num(&o, u, s < 0, 10, false, width, left, pad);
			break;
		case 'u':
		case 'o':
		case 'x':
		case 'X':
			u = lng >= 2 ? va_arg(ap, unsigned long long) :
			    lng == 1 ? va_arg(ap, unsigned long) :
				       va_arg(ap, unsigned int);
			put_num(&o, u, false, *fmt == 'u' ? 10 :
				*fmt == 'o' ? 8 : 16, *fmt == 'X', width,
				left, pad);
			break;
		case 'p': {
			char tmp[20] = "0x";
			struct out t = { tmp + 2, sizeof(tmp) - 2, 0 };

			put_num(&t, (unsigned long long)(uintptr_t)
				va_arg(ap, void *), false, 16, false, 0,
				false, ' ');
			put_padded(&o, tmp, t.pos + 2, width, left, ' ');
			break;
		}
		case 's': {
			const char *str = va_arg(ap, const char *);
			size_t n;

			if (!str)
				str = "(null)";
			n = umsi_strlen(str);
			if (prec >= 0 && (size_t)prec < n)
				n = (size_t)prec;
			put_padded(&o, str, n, width, left, ' ');
			break;
		}
		case 'c': {
			char c = (char)va_arg(ap, int);

			put_padded(&o, &c, 1, width, left, ' ');
			break;
		}
		case '%':
			put(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			put(&o, '%');
			put(&o, *fmt);
			break;
		}
	}
	if (len)
		buf[o.pos < len ? o.pos : len - 1] = '\0';
	return o.pos;
}

size_t umsi_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = umsi_vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}

void umsi_log(struct umsi_system *sys, enum umsi_log_level lvl,
	      const char *fmt, ...)
{
	char line[256];
	va_list ap;
	struct umsi_ctl_env *env = umsi_ctl_env(sys);

	if (!env->ops->log)
		return;
	va_start(ap, fmt);
	umsi_vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	env->ops->log(env->host, lvl, line);
}
