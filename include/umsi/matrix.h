/* SPDX-License-Identifier: MIT */
/*
 * umsi/matrix.h - the per-CPU vector matrix: which interrupt vector of which
 * CPU is free, reserved, or owned.
 *
 * Every CPU has the same space of nvec vectors (identities), chosen at
 * init: 256 for an x86 IDT, 64, 256 or 2048 for a RISC-V AIA IMSIC
 * interrupt file (riscv,num-ids 63 .. 2047; identity 0 is never used), any
 * multiple of 64 up to UMSI_MATRIX_MAX_VECTORS. The matrix hands them out
 * and takes them back; it is a pure data structure: no I/O, no locks, no
 * allocation, no global state. The caller provides the memory
 * (umsi_matrix_size() then umsi_matrix_init()) and serialises every call
 * that changes the matrix (the IRQ layer holds its vector lock around
 * them). Queries that take a const matrix may run concurrently with each
 * other, not with a change.
 *
 * Vector classes on one CPU, with the x86 defaults of
 * umsi_matrix_default_config():
 *
 *   0x00-0x1f  exceptions: below alloc_first, never allocatable
 *   0x20-0xeb  the allocatable range [alloc_first, alloc_last], except:
 *     0x30-0x3f  legacy ISA IRQs 0-15 (legacy_first, legacy_count), on the
 *                legacy CPU only, handed out by umsi_matrix_assign_legacy()
 *     0x80       reserved on every CPU (the syscall gate, as the 2003 patch
 *                patch kept it), through the reserved[] bitmap
 *   0xec-0xff  system vectors (system_first..system_last): reserved on every
 *              CPU from umsi_matrix_init() on, before any CPU is online
 *
 * With these defaults a CPU has 203 allocatable vectors, and the legacy CPU
 * 187. A controller with a flat identity space (an IMSIC) has no classes
 * but the allocatable range: umsi_matrix_space_config() describes it.
 *
 * Kinds of allocation:
 *  - unmanaged: umsi_matrix_alloc() and friends place one vector (or an
 *    aligned block) on the online CPU of an affinity mask with the most
 *    available vectors;
 *  - managed: umsi_matrix_reserve_managed() sets one vector aside on every
 *    CPU of a mask (online or not); umsi_matrix_alloc_managed() takes a
 *    reserved slot, umsi_matrix_free(..., true) gives it back to the
 *    reservation, and umsi_matrix_remove_managed() ends the reservation.
 *    Offline CPUs keep their reservations, as in Linux, so a managed IRQ
 *    finds its vector again when its CPU returns;
 *  - legacy: the fixed vectors of ISA IRQs on the legacy CPU.
 *
 * Accounting (always exact, checked by umsi_matrix_check()):
 *  - per CPU: available = capacity - allocated - managed, where capacity
 *    counts the CPU's allocatable vectors, allocated the unmanaged vectors
 *    it owns and managed its managed reservations (allocated or not);
 *  - globally: available is the sum over online CPUs; allocated, managed,
 *    managed_allocated and legacy are sums over all CPUs.
 *
 * Cost, with n CPUs (see docs/bench-matrix.md for measurements): choosing
 * the CPU is O(1) for the all-online mask and for every mask or range that
 * holds the best online CPU (an explicit mask of every CPU among them),
 * O(log n) for any other contiguous range, and for any other mask at most
 * two passes over its words: one AND per word to look for a CPU at the
 * largest count anywhere, then a branch and bound with constant work per
 * word and O(log n) per run of blocks it skips. Every update that follows
 * is O(log n), and none at all when the allocation takes the CPU the last
 * free was on: a free waits outside the index until an allocation takes
 * that CPU again or another call changes a count (invisible to callers:
 * every query and choice counts it). Managed operations, and block
 * allocation when the best CPU
 * has no free aligned block, are linear in the CPUs of their mask; legacy
 * operations are O(1).
 *
 * Every function returns a negative error code on failure (-UMSI_ENOSPC,
 * -UMSI_EINVAL, ...) and then leaves the matrix exactly as it was, byte for
 * byte.
 */
#ifndef UMSI_MATRIX_H
#define UMSI_MATRIX_H

#include <umsi/types.h>

/* The default space of vectors per CPU (nvec 0): the x86 IDT has 256
 * entries. */
#define UMSI_MATRIX_VECTORS     256u
/* Smallest and largest space per CPU, in vectors; nvec is a multiple of
 * UMSI_MATRIX_MIN_VECTORS. A RISC-V AIA IMSIC has at most 2047 identities
 * (AIA 1.0, 3.1: 63 .. 2047), so 2048 covers it; 4096 leaves room. */
#define UMSI_MATRIX_MIN_VECTORS 64u
#define UMSI_MATRIX_MAX_VECTORS 4096u
/* Most CPUs one matrix can hold. */
#define UMSI_MATRIX_MAX_CPUS    65536u
/* Largest block order of umsi_matrix_alloc_block(): 2^5 = 32 vectors, the
 * most a multi-message MSI function can ask for (PCI Local Bus 3.0, 6.8.1.3,
 * Multiple Message Capable). */
#define UMSI_MATRIX_MAX_ORDER   5u
/* Largest number of legacy ISA IRQs. */
#define UMSI_MATRIX_MAX_LEGACY  16u

/* x86 defaults (Intel SDM vol. 3A, 6.2: vectors 0-31 are exceptions). */
#define UMSI_MATRIX_X86_ALLOC_FIRST   0x20u
#define UMSI_MATRIX_X86_ALLOC_LAST    0xebu
#define UMSI_MATRIX_X86_SYSTEM_FIRST  0xecu
#define UMSI_MATRIX_X86_SYSTEM_LAST   0xffu
#define UMSI_MATRIX_X86_LEGACY_FIRST  0x30u
#define UMSI_MATRIX_X86_SYSCALL       0x80u

/*
 * umsi_matrix_alloc() flags.
 * UMSI_MATRIX_SPREAD: inside the chosen CPU, take a vector in the priority
 * class (vector >> 4, nvec / 16 classes) that holds the fewest owned
 * vectors, instead of the lowest free vector. A local APIC holds at most one in-service and one
 * pending interrupt per class, so spreading keeps devices from queueing
 * behind each other; the 2003 patch did it by stepping vectors by 8.
 */
#define UMSI_MATRIX_SPREAD      (1u << 0)

/**
 * struct umsi_matrix_config - shape of a matrix
 * @ncpus: number of CPUs, 1 .. UMSI_MATRIX_MAX_CPUS. CPUs are numbered
 *	0 .. ncpus - 1 (the host's CPU numbers, not APIC IDs).
 * @alloc_first: lowest allocatable vector. Vectors below it are never
 *	handed out (on x86 the 32 exception vectors, on an IMSIC identity 0).
 * @alloc_last: highest allocatable vector, inclusive, >= @alloc_first,
 *	below @nvec.
 * @system_first: first system vector, reserved on every CPU. Set
 *	@system_first > @system_last for none.
 * @system_last: last system vector, inclusive, below @nvec.
 * @legacy_first: vector of ISA IRQ 0; ISA IRQ i uses @legacy_first + i.
 * @legacy_count: number of legacy ISA IRQs, 0 .. UMSI_MATRIX_MAX_LEGACY.
 *	The legacy vectors must not be system or reserved vectors.
 * @legacy_cpu: the CPU that holds the legacy vectors (< @ncpus). On x86
 *	the 8259 PIC in virtual-wire mode delivers to the boot CPU only, so
 *	the legacy vectors are withheld there and nowhere else.
 * @nvec: vectors per CPU, the size of each CPU's space: a multiple of
 *	UMSI_MATRIX_MIN_VECTORS from 64 to UMSI_MATRIX_MAX_VECTORS, or 0 for
 *	UMSI_MATRIX_VECTORS (256), so that a zeroed configuration keeps the
 *	x86 shape. Every vector number of the other fields is below it.
 * @reserved: bitmap of further vectors reserved on every CPU (bit v of
 *	reserved[v / 64] is vector v); the x86 default reserves 0x80. Bits at
 *	or beyond @nvec must be zero.
 */
struct umsi_matrix_config {
	uint32_t ncpus;
	uint16_t alloc_first;
	uint16_t alloc_last;
	uint16_t system_first;
	uint16_t system_last;
	uint16_t legacy_first;
	uint16_t legacy_count;
	uint32_t legacy_cpu;
	uint32_t nvec;
	uint64_t reserved[UMSI_MATRIX_MAX_VECTORS / 64];
};

/**
 * struct umsi_matrix_stats - whole-matrix accounting
 * @ncpus: CPUs in the matrix.
 * @online: CPUs online.
 * @available: unmanaged vectors that can still be allocated, summed over
 *	online CPUs.
 * @allocated: unmanaged vectors allocated (single and block), all CPUs.
 * @managed: managed reservations, allocated or not, all CPUs.
 * @managed_allocated: managed reservations in use, all CPUs.
 * @legacy: legacy ISA IRQs assigned.
 */
struct umsi_matrix_stats {
	uint32_t ncpus;
	uint32_t online;
	uint32_t available;
	uint32_t allocated;
	uint32_t managed;
	uint32_t managed_allocated;
	uint32_t legacy;
};

/**
 * struct umsi_matrix_cpu_stats - one CPU's accounting
 * @capacity: allocatable vectors of this CPU (fixed by the configuration).
 * @available: capacity - allocated - managed.
 * @allocated: unmanaged vectors owned.
 * @managed: managed reservations, allocated or not.
 * @managed_allocated: managed reservations in use.
 * @legacy: legacy ISA IRQs assigned (legacy CPU only).
 * @online: whether the CPU is online.
 */
struct umsi_matrix_cpu_stats {
	uint32_t capacity;
	uint32_t available;
	uint32_t allocated;
	uint32_t managed;
	uint32_t managed_allocated;
	uint32_t legacy;
	bool online;
};

/* What one vector of one CPU is, from umsi_matrix_vector_state(). */
enum umsi_vector_state {
	UMSI_VECTOR_FREE = 0,           /* allocatable, not owned */
	UMSI_VECTOR_ALLOCATED,          /* owned, unmanaged */
	UMSI_VECTOR_MANAGED_FREE,       /* reserved for managed, not in use */
	UMSI_VECTOR_MANAGED_ALLOCATED,  /* reserved for managed, in use */
	UMSI_VECTOR_LEGACY_FREE,        /* legacy vector, ISA IRQ unassigned */
	UMSI_VECTOR_LEGACY_ALLOCATED,   /* legacy vector, ISA IRQ assigned */
	UMSI_VECTOR_RESERVED,           /* exception, system or reserved */
};

struct umsi_matrix;

/**
 * umsi_matrix_default_config - Fill a configuration with the x86 defaults
 * @cfg: configuration to fill
 * @ncpus: number of CPUs
 *
 * 256 vectors per CPU (nvec UMSI_MATRIX_VECTORS), allocatable 0x20-0xeb,
 * system vectors 0xec-0xff, 0x80 reserved, ISA IRQs 0-15 at 0x30-0x3f on
 * CPU 0. @ncpus is stored as given; umsi_matrix_size() and
 * umsi_matrix_init() reject it if out of range.
 */
void umsi_matrix_default_config(struct umsi_matrix_config *cfg, uint32_t ncpus);

/**
 * umsi_matrix_space_config - Fill a configuration for a flat identity space
 * @cfg: configuration to fill
 * @ncpus: number of CPUs
 * @nvec: vectors per CPU (see struct umsi_matrix_config)
 * @first: lowest allocatable vector
 * @last: highest allocatable vector, inclusive
 *
 * For a controller whose vectors have no classes: [@first, @last] is
 * allocatable on every CPU, and there are no system, legacy or reserved
 * vectors. A RISC-V AIA IMSIC with riscv,num-ids = 255 is (@nvec 256,
 * @first 1, @last 255): identity 0 means "no interrupt". The arguments are
 * stored as given (@first and @last above 65535 as 65535, past any @nvec,
 * rather than wrapped into range); umsi_matrix_size() and
 * umsi_matrix_init() reject what is out of range.
 */
void umsi_matrix_space_config(struct umsi_matrix_config *cfg, uint32_t ncpus,
			      uint32_t nvec, uint32_t first, uint32_t last);

/*
 * The allocator itself (size, init, online/offline, allocation, managed
 * and legacy vectors) is the library's: umsi/internal/matrix.h. A kernel
 * reads the statistics and queries below through umsi_system_matrix().
 */

/**
 * umsi_matrix_is_allocated - Whether a vector of a CPU is owned
 * @m: matrix
 * @cpu: CPU
 * @vector: vector
 *
 * Return: true for an unmanaged, managed-in-use or assigned legacy vector;
 * false otherwise, also for out-of-range arguments.
 */
bool umsi_matrix_is_allocated(const struct umsi_matrix *m, uint32_t cpu,
			      unsigned int vector);

/**
 * umsi_matrix_vector_state - What a vector of a CPU is
 * @m: matrix
 * @cpu: CPU
 * @vector: vector
 *
 * Return: an enum umsi_vector_state (>= 0), or -UMSI_EINVAL for out-of-range
 * arguments.
 */
int umsi_matrix_vector_state(const struct umsi_matrix *m, uint32_t cpu,
			     unsigned int vector);

/**
 * umsi_matrix_nvec - Vectors per CPU
 * @m: matrix
 *
 * Return: the size of every CPU's space (the configured nvec, 256 for a
 * configuration that left it 0): vector numbers run from 0 to this minus
 * one. 0 if @m is NULL.
 */
uint32_t umsi_matrix_nvec(const struct umsi_matrix *m);

/**
 * umsi_matrix_stats - Whole-matrix accounting
 * @m: matrix
 * @st: receives the figures
 *
 * O(1): the figures are kept, not computed.
 */
void umsi_matrix_stats(const struct umsi_matrix *m, struct umsi_matrix_stats *st);

/**
 * umsi_matrix_cpu_stats - One CPU's accounting
 * @m: matrix
 * @cpu: CPU
 * @st: receives the figures
 *
 * Return: 0, or -UMSI_EINVAL if @cpu is out of range or a pointer is NULL.
 */
int umsi_matrix_cpu_stats(const struct umsi_matrix *m, uint32_t cpu,
			  struct umsi_matrix_cpu_stats *st);

/**
 * umsi_matrix_check - Verify every invariant of a matrix
 * @m: matrix
 *
 * Recomputes everything kept from the per-CPU bitmaps: no vector is both
 * reserved and owned, managed vectors lie in the allocatable range, every
 * counter equals its bitmap, legacy vectors are only owned on the legacy
 * CPU, the per-block count slices, top sets and bounds and the CPU-choice
 * tree match the counters, the frees the index does not hold yet are of
 * one online CPU and counted, and the global sums match. O(n); meant for
 * tests and debug builds.
 *
 * Return: 0 if the matrix is consistent, -UMSI_EIO if an invariant is
 * broken, -UMSI_EINVAL if @m is NULL.
 */
int umsi_matrix_check(const struct umsi_matrix *m);

/**
 * umsi_matrix_check_detail - umsi_matrix_check() with a diagnosis
 * @m: matrix
 * @why: if not NULL, receives a static sentence naming the broken invariant
 *	(or "consistent")
 * @cpu: if not NULL, receives the CPU concerned, or UINT32_MAX
 *
 * Return: as umsi_matrix_check().
 */
int umsi_matrix_check_detail(const struct umsi_matrix *m, const char **why,
			     uint32_t *cpu);

#endif /* UMSI_MATRIX_H */
