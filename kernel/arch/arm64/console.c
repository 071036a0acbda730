// SPDX-License-Identifier: MIT
/*
 * console.c - PL011 output, a small bounded printf, and the few string
 * functions the compiler may call.
 *
 * The PL011 needs no set-up under QEMU: the data register (offset 0)
 * sends, the flag register (0x18) bit 5 says the FIFO is full.
 */
#include "arm64.h"
#include "console.h"

#define PL011_DR	0x00
#define PL011_FR	0x18
#define PL011_FR_TXFF	(1u << 5)

static uint64_t console_uart = PL011_DEFAULT_BASE;
static struct spinlock console_lock;

void console_set_base(uint64_t base)
{
	console_uart = base;
}

uint64_t console_base(void)
{
	return console_uart;
}

static void console_putc(char c)
{
	uint64_t dl = deadline_us(10000);

	while ((mmio_read32(console_uart + PL011_FR) & PL011_FR_TXFF) &&
	       !deadline_passed(dl))
		cpu_relax();
	mmio_write32(console_uart + PL011_DR, (uint8_t)c);
}

void spin_lock(struct spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			cpu_relax();
}

void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			break;
	}
	return 0;
}

int strcmp(const char *a, const char *b)
{
	return strncmp(a, b, (size_t)-1);
}

/* The output buffer of kvsnprintf: writes past the end are counted only. */
struct fmt_out {
	char *buf;
	size_t size;
	size_t len;
};

static void fmt_put(struct fmt_out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void fmt_pad(struct fmt_out *o, char c, int n)
{
	while (n-- > 0)
		fmt_put(o, c);
}

static void fmt_str(struct fmt_out *o, const char *s, int width, bool left)
{
	int n = (int)strlen(s);

	if (!left)
		fmt_pad(o, ' ', width - n);
	while (*s)
		fmt_put(o, *s++);
	if (left)
		fmt_pad(o, ' ', width - n);
}

static void fmt_num(struct fmt_out *o, uint64_t v, bool neg, unsigned base,
		    int width, bool zero, bool left)
{
	char tmp[24];
	int n = 0, digits;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	digits = n;
	if (neg)
		width--;
	if (neg && zero)
		fmt_put(o, '-');
	if (!left)
		fmt_pad(o, zero ? '0' : ' ', width - digits);
	if (neg && !zero)
		fmt_put(o, '-');
	while (n)
		fmt_put(o, tmp[--n]);
	if (left)
		fmt_pad(o, ' ', width - digits);
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct fmt_out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		bool zero = false, left = false;
		int width = 0, lng = 0;
		uint64_t u;
		int64_t s;

		if (*fmt != '%') {
			fmt_put(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '0')
				zero = true;
			else if (*fmt == '-')
				left = true;
			else
				break;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i':
			s = lng ? va_arg(ap, long) : va_arg(ap, int);
			u = s < 0 ? -(uint64_t)s : (uint64_t)s;
			fmt_num(&o, u, s < 0, 10, width, zero, left);
			break;
		case 'u':
		case 'x':
			u = lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int);
			fmt_num(&o, u, false, *fmt == 'u' ? 10 : 16, width,
				zero, left);
			break;
		case 'p':
			fmt_put(&o, '0');
			fmt_put(&o, 'x');
			fmt_num(&o, (uintptr_t)va_arg(ap, void *), false, 16,
				width, zero, left);
			break;
		case 's': {
			const char *str = va_arg(ap, const char *);

			fmt_str(&o, str ? str : "(null)", width, left);
			break;
		}
		case 'c':
			fmt_put(&o, (char)va_arg(ap, int));
			break;
		case '%':
			fmt_put(&o, '%');
			break;
		default:
			/* An unknown conversion is shown, not interpreted. */
			fmt_put(&o, '%');
			if (!*fmt)
				goto out;
			fmt_put(&o, *fmt);
			break;
		}
	}
out:
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

void kprintf(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, i;

	va_start(ap, fmt);
	n = kvsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	spin_lock(&console_lock);
	for (i = 0; i < n; i++) {
		if (line[i] == '\n')
			console_putc('\r');
		console_putc(line[i]);
	}
	spin_unlock(&console_lock);
}
