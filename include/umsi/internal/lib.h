/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/lib.h - helpers every layer of the library uses
 * (src/lib): memory from the host, logging, formatting, and the
 * freestanding string routines. Not a public interface.
 */
#ifndef UMSI_INTERNAL_LIB_H
#define UMSI_INTERNAL_LIB_H

#include <umsi/host.h>
#include <umsi/types.h>

struct umsi_system;

/* Zeroed memory from the host (NULL when it has none), and back. */
void *umsi_zalloc(struct umsi_system *sys, size_t size);
void umsi_free(struct umsi_system *sys, void *p, size_t size);

/*
 * 32-bit device-memory access inside a host mmio_map() mapping: the
 * host's accessors, or a volatile load/store when it gave none.
 */
uint32_t umsi_mmio_read32(struct umsi_system *sys, volatile void *addr);
void umsi_mmio_write32(struct umsi_system *sys, volatile void *addr,
		       uint32_t val);
/*
 * A 64-bit device register as two 32-bit accesses, low half first (what
 * the GICv3 ITS and VT-d allow, and every bus carries).
 */
uint64_t umsi_mmio_read64_lohi(struct umsi_system *sys, volatile void *addr);
void umsi_mmio_write64_lohi(struct umsi_system *sys, volatile void *addr,
			    uint64_t val);

/*
 * Memory a device reads (tables, command queues) is written before the
 * register write that tells it to look: a store barrier as Linux's
 * writel() has (arm64: DSB; x86 keeps stores in order, so only the
 * compiler is stopped; TSan refuses C11 fences in hosted builds).
 */
static inline void umsi_dev_wmb(void)
{
#if defined(__aarch64__)
	__asm__ volatile("dsb st" ::: "memory");
#elif defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("" ::: "memory");
#elif defined(__riscv)
	__asm__ volatile("fence w,o" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* A polling loop says so to the CPU. */
static inline void umsi_cpu_relax(void)
{
#if defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#elif defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("pause" ::: "memory");
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/* One log line through the host's log op, printf-style (umsi_snprintf). */
void umsi_log(struct umsi_system *sys, enum umsi_log_level lvl,
	      const char *fmt, ...);

/* Format into a buffer; a subset of printf (see src/lib/format.c). */
size_t umsi_snprintf(char *buf, size_t len, const char *fmt, ...);

/* Freestanding memory helpers (src/lib/mem.c). */
void *umsi_memset(void *d, int c, size_t n);
void *umsi_memcpy(void *d, const void *s, size_t n);
int umsi_memcmp(const void *a, const void *b, size_t n);
size_t umsi_strlen(const char *s);

/* "SSSS:BB:DD.F" of a PCI function, for log lines: "%04x:%02x:%02x.%u". */
#define UMSI_BDF_FMT "%04x:%02x:%02x.%u"
#define UMSI_BDF_ARGS(b) UMSI_BDF_SEG(b), UMSI_BDF_BUS(b), UMSI_BDF_DEV(b), \
			 UMSI_BDF_FN(b)

#endif /* UMSI_INTERNAL_LIB_H */
