/* SPDX-License-Identifier: MIT */
/*
 * dt_shim.h - the kernel console, hosted, for the device-tree harnesses
 * (dt_shim.c). kprintf() formats with the kernel's own bounded printf
 * (kernel/common/lib/printf.c over the library's formatter) and appends to one
 * log a harness can search: what the parser would have printed on the
 * serial line.
 */
#ifndef TESTS_FUZZ_DT_SHIM_H
#define TESTS_FUZZ_DT_SHIM_H

#include <stdbool.h>

/* Forget what was printed. */
void dt_shim_reset(void);

/* Everything printed since the last reset (cut at 16 KiB), NUL-terminated. */
const char *dt_shim_log(void);

/*
 * Whether one printed line holds @word and every further word given, the
 * list ended by NULL: dt_shim_line_has("dt: pci", "bus-range", NULL).
 */
bool dt_shim_line_has(const char *word, ...)
	__attribute__((sentinel));

#endif /* TESTS_FUZZ_DT_SHIM_H */
