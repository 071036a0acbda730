/* SPDX-License-Identifier: MIT */
/*
 * kernel.h, as the hosted device-tree harnesses see it (tests/fuzz/
 * fuzz_dt_*.c, test_dt_*.c; mk/fuzz-dt.mk puts this directory before
 * kernel/ on the include path).
 *
 * The real kernel/common/kernel.h picks the architecture's inline assembly from
 * the compiler's target: on an x86-64 host it would bring the x86 kernel's
 * beside the arm64 or riscv64 headers the parsers include, and the two
 * clash. The parsers (kernel/arch/arm64/dt.c, kernel/arch/riscv64/
 * platform.c) need only the console from it, so this stand-in declares
 * that, with the same prototypes, and the kernel's small C library
 * (kernel/common/lib/klib.h). The harness defines the functions (dt_shim.c).
 * Anything else a parser starts to use from kernel.h fails to compile
 * here, which is the point: the shim must be widened on purpose.
 */
#ifndef KERNEL_KERNEL_H
#define KERNEL_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "klib.h"

void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kputs_raw(const char *s);
__attribute__((noreturn)) void panic(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif /* KERNEL_KERNEL_H */
