/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/compiler.h - the compiler attributes the library uses, in
 * one place, and the UMSI_ASSERT hook.
 *
 * Attributes expand to nothing on a compiler that is neither GCC nor
 * clang: they change speed, never meaning.
 *
 * UMSI_ASSERT(cond): an invariant uMSI relies on. Compiled out unless the
 * build defines UMSI_ASSERT_HOOK(file, line, text), which a kernel may
 * define (before any uMSI header, or with -D) to its own assertion or
 * panic; it is called when @cond is false and must not return into uMSI
 * expecting it to continue sanely. The tests build the library with a
 * hook that traps (-DUMSI_ASSERT_TRAP, make test-asan). Without the hook @cond is not
 * evaluated, so it may be as costly as a checker.
 *
 * Not a public interface.
 */
#ifndef UMSI_INTERNAL_COMPILER_H
#define UMSI_INTERNAL_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
/* Never inlined: a slow path inlined into a fast one makes the compiler
 * save registers on entry to the fast one for its sake. */
#define UMSI_NOINLINE __attribute__((noinline))
#define UMSI_ALWAYS_INLINE inline __attribute__((always_inline))
/* Rarely run: out of line, and laid out away from the hot code. */
#define UMSI_COLD __attribute__((noinline, cold))
#define UMSI_LIKELY(x) __builtin_expect(!!(x), 1)
#define UMSI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define UMSI_NOINLINE
#define UMSI_ALWAYS_INLINE inline
#define UMSI_COLD
#define UMSI_LIKELY(x) (x)
#define UMSI_UNLIKELY(x) (x)
#endif

/* -DUMSI_ASSERT_TRAP: a failed assertion traps (the tests' ASan build). */
#if defined(UMSI_ASSERT_TRAP) && !defined(UMSI_ASSERT_HOOK)
#define UMSI_ASSERT_HOOK(file, line, text) __builtin_trap()
#endif

#ifdef UMSI_ASSERT_HOOK
#define UMSI_ASSERT(cond) \
	do { \
		if (UMSI_UNLIKELY(!(cond))) \
			UMSI_ASSERT_HOOK(__FILE__, __LINE__, #cond); \
	} while (0)
#else
#define UMSI_ASSERT(cond) do { } while (0)
#endif

#endif /* UMSI_INTERNAL_COMPILER_H */
