/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/matrix.h - the vector allocator's operations, which the
 * IRQ core (src/irq) calls: size and build a matrix, bring CPUs online
 * and offline, allocate and free vectors (unmanaged, managed, legacy,
 * blocks). The configuration, the statistics and the read-only queries a
 * kernel may use are public, in umsi/matrix.h.
 *
 * Not a public interface.
 */
#ifndef UMSI_INTERNAL_MATRIX_H
#define UMSI_INTERNAL_MATRIX_H

#include <umsi/matrix.h>

/**
 * umsi_matrix_size - Memory needed by a matrix
 * @cfg: configuration
 *
 * About 10 + nvec / 4 bytes per CPU (74 for 256 vectors) plus a header
 * and nvec * 3 / 8 bytes of matrix-wide bitmaps; alignment slack is
 * included, so any byte buffer of this length will do.
 *
 * Return: the number of bytes umsi_matrix_init() needs, or 0 if @cfg is
 * NULL or invalid.
 */
size_t umsi_matrix_size(const struct umsi_matrix_config *cfg);

/**
 * umsi_matrix_init - Build an empty matrix in caller-provided memory
 * @mem: memory of at least umsi_matrix_size(@cfg) bytes, any alignment;
 *	it belongs to the matrix until the caller stops using it (there is no
 *	destroy call: the matrix holds nothing else)
 * @len: length of @mem in bytes
 * @cfg: configuration, copied
 * @out: receives the matrix (a pointer into @mem)
 *
 * All CPUs start offline with no vector owned; system and reserved vectors
 * are withheld on every CPU from now on.
 *
 * Return: 0, -UMSI_EINVAL if an argument is NULL or @cfg is invalid (nvec
 * not a multiple of 64 in 64..4096, ranges or reserved bits at or past
 * nvec, or overlapping as described in struct umsi_matrix_config),
 * -UMSI_ENOMEM if @len is too small.
 */
int umsi_matrix_init(void *mem, size_t len, const struct umsi_matrix_config *cfg,
		     struct umsi_matrix **out);

/**
 * umsi_matrix_online - Bring a CPU online
 * @m: matrix
 * @cpu: CPU number
 *
 * The CPU becomes a target for allocation; its available vectors join the
 * global count. Vectors it still owns and its managed reservations are
 * kept from before.
 *
 * Return: 0, or -UMSI_EINVAL if @cpu is out of range or already online.
 */
int umsi_matrix_online(struct umsi_matrix *m, uint32_t cpu);

/**
 * umsi_matrix_offline - Take a CPU offline
 * @m: matrix
 * @cpu: CPU number
 *
 * The CPU is no longer a target. It keeps what it owns: the IRQ layer moves
 * unmanaged vectors away first (and frees the old ones, which stays legal on
 * an offline CPU); managed reservations stay, as in Linux.
 *
 * Return: 0, or -UMSI_EINVAL if @cpu is out of range or already offline.
 */
int umsi_matrix_offline(struct umsi_matrix *m, uint32_t cpu);

/**
 * umsi_matrix_alloc - Allocate a vector on the best CPU of a mask
 * @m: matrix
 * @mask: allowed CPUs, or NULL for every online CPU; bits at or beyond
 *	@m's CPU count are ignored
 * @flags: 0 or UMSI_MATRIX_SPREAD
 * @cpu: receives the CPU that owns the vector
 *
 * Picks the online CPU of @mask with the most available vectors (ties: the
 * lowest CPU number), then the lowest free vector there (or, with
 * UMSI_MATRIX_SPREAD, the lowest free vector of its least-used priority
 * class). Cost: O(1) to choose, O(log n) to update, for NULL and for any
 * @mask that holds the best online CPU (so an explicit mask of every CPU
 * costs what NULL costs); otherwise at most two passes over @mask's words
 * (see the top of this file).
 *
 * Return: the vector (>= 0), -UMSI_ENOSPC if no online CPU of @mask has an
 * available vector (also for an empty mask), -UMSI_EINVAL for a NULL @m or
 * @cpu, unknown @flags, or a mask with bits but no words.
 */
int umsi_matrix_alloc(struct umsi_matrix *m, const struct umsi_cpumask *mask,
		      unsigned int flags, uint32_t *cpu);

/**
 * umsi_matrix_alloc_range - Allocate a vector on the best CPU of a range
 * @m: matrix
 * @first: first CPU of the range
 * @count: number of CPUs, >= 1
 * @flags: 0 or UMSI_MATRIX_SPREAD
 * @cpu: receives the CPU that owns the vector
 *
 * As umsi_matrix_alloc() with the mask of CPUs @first .. @first + @count - 1
 * (a NUMA node, a package), in O(log n), or O(1) when the range holds the
 * best online CPU. @count 1 allocates on one CPU.
 *
 * Return: the vector, -UMSI_ENOSPC if no online CPU of the range has an
 * available vector, -UMSI_EINVAL if the range is empty or passes the last
 * CPU, or for NULL pointers or unknown @flags.
 */
int umsi_matrix_alloc_range(struct umsi_matrix *m, uint32_t first, uint32_t count,
			    unsigned int flags, uint32_t *cpu);

/**
 * umsi_matrix_alloc_at - Allocate one given vector on one given CPU
 * @m: matrix
 * @cpu: CPU, online or not (an explicit placement, not a choice)
 * @vector: the vector wanted
 *
 * For the callers that need a particular number: the IRQ layer moving an
 * MSI without mask bits keeps the old vector number on the new CPU, or
 * holds the new number on the old CPU for the moment the message is
 * half written. Accounted as an unmanaged allocation. O(log n).
 *
 * Return: 0; -UMSI_EBUSY if the vector is owned or reserved for a managed
 * IRQ on @cpu; -UMSI_EINVAL if @cpu or @vector is out of range or the
 * vector is not allocatable on @cpu (exception, system, reserved, or a
 * legacy vector on the legacy CPU).
 */
int umsi_matrix_alloc_at(struct umsi_matrix *m, uint32_t cpu, unsigned int vector);

/**
 * umsi_matrix_alloc_block - Allocate an aligned block of vectors on one CPU
 * @m: matrix
 * @mask: allowed CPUs, or NULL for every online CPU
 * @order: the block holds 2^@order vectors, 0 .. UMSI_MATRIX_MAX_ORDER
 * @cpu: receives the CPU that owns the block
 *
 * For multi-message MSI, where the device ORs the message number into the
 * low bits of the data and therefore needs 2^@order consecutive vectors
 * starting at a multiple of 2^@order. All or nothing. The CPU is the one
 * with the most available vectors among the online CPUs of @mask that have
 * such a free block (ties: lowest CPU). Each vector counts as an unmanaged
 * allocation; free them with umsi_matrix_free_block() or one by one with
 * umsi_matrix_free(). Cost: that of umsi_matrix_alloc() when the best CPU
 * has a free block, else one pass over the CPUs of @mask.
 *
 * Return: the base vector, a multiple of 2^@order; -UMSI_ENOSPC if no CPU
 * has such a block; -UMSI_EINVAL for NULL pointers, @order too large, or a
 * mask with bits but no words.
 */
int umsi_matrix_alloc_block(struct umsi_matrix *m, const struct umsi_cpumask *mask,
			    unsigned int order, uint32_t *cpu);

/**
 * umsi_matrix_free - Free one vector
 * @m: matrix
 * @cpu: CPU that owns the vector
 * @vector: the vector
 * @managed: true for a vector from umsi_matrix_alloc_managed() (it returns
 *	to the CPU's managed reservation), false for an unmanaged one
 *
 * Legal on an offline CPU.
 *
 * Return: 0, or -UMSI_EINVAL if @cpu or @vector is out of range, the vector
 * is not allocated, or its kind does not match @managed (the matrix is
 * unchanged).
 */
int umsi_matrix_free(struct umsi_matrix *m, uint32_t cpu, unsigned int vector,
		     bool managed);

/**
 * umsi_matrix_free_block - Free an aligned block of unmanaged vectors
 * @m: matrix
 * @cpu: CPU that owns the block
 * @base: first vector, a multiple of 2^@order
 * @order: block order, 0 .. UMSI_MATRIX_MAX_ORDER
 *
 * All or nothing: every vector of the block must be an unmanaged
 * allocation.
 *
 * Return: 0, or -UMSI_EINVAL if an argument is out of range, @base is not
 * aligned, or a vector of the block is not an unmanaged allocation.
 */
int umsi_matrix_free_block(struct umsi_matrix *m, uint32_t cpu, unsigned int base,
			   unsigned int order);

/**
 * umsi_matrix_reserve_managed - Reserve a managed vector on every CPU of a mask
 * @m: matrix
 * @mask: CPUs, online or not; NULL is not allowed
 *
 * Sets aside the lowest free vector of each CPU of @mask for a managed IRQ.
 * The reservation reduces the CPU's available count at once and outlives
 * frees and offline periods. All or nothing.
 *
 * Return: 0; -UMSI_ENOSPC if a CPU of @mask has no available vector;
 * -UMSI_EINVAL for NULL pointers, a mask with bits but no words, or a mask
 * with no CPU of the matrix.
 */
int umsi_matrix_reserve_managed(struct umsi_matrix *m, const struct umsi_cpumask *mask);

/**
 * umsi_matrix_remove_managed - Release a managed reservation on every CPU of a mask
 * @m: matrix
 * @mask: CPUs, as given to umsi_matrix_reserve_managed()
 *
 * Releases one unused managed vector (the highest) on each CPU of @mask.
 * All or nothing.
 *
 * Return: 0; -UMSI_EINVAL for NULL pointers, a mask with no CPU of the
 * matrix, or if a CPU of @mask has no unused managed reservation (free the
 * managed vector first).
 */
int umsi_matrix_remove_managed(struct umsi_matrix *m, const struct umsi_cpumask *mask);

/**
 * umsi_matrix_alloc_managed - Take a reserved managed vector
 * @m: matrix
 * @mask: allowed CPUs, or NULL for every online CPU
 * @cpu: receives the CPU
 *
 * Uses the online CPU of @mask with the most unused managed reservations
 * (ties: lowest CPU) and its lowest unused managed vector. Linear in the
 * CPUs of @mask.
 *
 * Return: the vector; -UMSI_ENOSPC if no online CPU of @mask has an unused
 * reservation; -UMSI_EINVAL for NULL @m or @cpu or a mask with bits but no
 * words.
 */
int umsi_matrix_alloc_managed(struct umsi_matrix *m, const struct umsi_cpumask *mask,
			      uint32_t *cpu);

/**
 * umsi_matrix_assign_legacy - Assign the fixed vector of an ISA IRQ
 * @m: matrix
 * @isa_irq: ISA IRQ, below the configured legacy count
 *
 * Marks legacy_first + @isa_irq as owned on the legacy CPU, online or not.
 *
 * Return: the vector; -UMSI_EINVAL if @isa_irq is out of range; -UMSI_EBUSY
 * if it is already assigned.
 */
int umsi_matrix_assign_legacy(struct umsi_matrix *m, unsigned int isa_irq);

/**
 * umsi_matrix_release_legacy - Release the vector of an ISA IRQ
 * @m: matrix
 * @isa_irq: ISA IRQ
 *
 * Return: 0, or -UMSI_EINVAL if @isa_irq is out of range or not assigned.
 */
int umsi_matrix_release_legacy(struct umsi_matrix *m, unsigned int isa_irq);

#endif /* UMSI_INTERNAL_MATRIX_H */
