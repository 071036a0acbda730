/* SPDX-License-Identifier: MIT */
/*
 * umsi/types.h - basic types, error codes and CPU masks shared by every
 * uMSI header.
 *
 * Only freestanding headers are used here (<stddef.h>, <stdint.h>,
 * <stdbool.h>), so this file compiles in any kernel.
 */
#ifndef UMSI_TYPES_H
#define UMSI_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Error codes. uMSI functions return 0 or a positive value on success and
 * the negated code on failure (return -UMSI_ENOSPC), as Linux does. The
 * numbers equal Linux's errno values so a kernel can pass them through.
 */
#define UMSI_EPERM      1   /* policy forbids it */
#define UMSI_ENOENT     2   /* no such capability, entry or IRQ */
#define UMSI_EIO        5   /* the host reported an access failure */
#define UMSI_E2BIG      7   /* more than the device or format allows */
#define UMSI_EAGAIN    11   /* try again (e.g. a migration in flight) */
#define UMSI_ENOMEM    12   /* host allocation failed */
#define UMSI_EBUSY     16   /* already in use */
#define UMSI_EEXIST    17   /* already exists */
#define UMSI_ENODEV    19   /* device gone (reads all-ones) */
#define UMSI_EINVAL    22   /* bad argument */
#define UMSI_ENOSPC    28   /* no vector left */
#define UMSI_ERANGE    34   /* a value read from the device is out of range */
#define UMSI_ENOSYS    38   /* host does not implement the operation */
#define UMSI_ELOOP     40   /* capability list loops */
#define UMSI_ENOTSUP   95   /* hardware or platform cannot do it */
#define UMSI_ETIMEDOUT 110  /* the hardware did not answer in time */

/**
 * umsi_strerror - name of an error code
 * @err: a uMSI error code, negative or positive
 *
 * Return: a static string such as "ENOSPC", or "E?" for an unknown code.
 * Safe in any context.
 */
const char *umsi_strerror(int err);

/*
 * A PCI function's address: segment (domain) in bits 31:16, bus in 15:8,
 * device in 7:3, function in 2:0.
 */
typedef uint32_t umsi_bdf_t;

#define UMSI_BDF(seg, bus, dev, fn) \
	((umsi_bdf_t)(((uint32_t)(seg) << 16) | ((uint32_t)(bus) << 8) | \
		      (((uint32_t)(dev) & 0x1f) << 3) | ((uint32_t)(fn) & 7)))
#define UMSI_BDF_SEG(b)  ((uint16_t)((b) >> 16))
#define UMSI_BDF_BUS(b)  ((uint8_t)((b) >> 8))
#define UMSI_BDF_DEV(b)  ((uint8_t)(((b) >> 3) & 0x1f))
#define UMSI_BDF_FN(b)   ((uint8_t)((b) & 7))

/*
 * A set of CPUs, by the host's CPU numbers (0 .. count-1, not APIC IDs).
 * The caller owns the words; uMSI never keeps the pointer beyond a call
 * unless the function says so. Bit n of words[n / 64] is CPU n. Bits at
 * or beyond nbits are ignored.
 */
struct umsi_cpumask {
	const uint64_t *words;
	uint32_t nbits;
};

#define UMSI_CPUMASK_WORDS(ncpus) (((ncpus) + 63u) / 64u)

/* Interrupt state saved by umsi_host_ops.lock_acquire. */
typedef unsigned long umsi_irqflags_t;

#endif /* UMSI_TYPES_H */
