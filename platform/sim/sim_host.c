/* SPDX-License-Identifier: MIT */
/*
 * sim_host.c - the host interface (umsi/host.h) as the simulator implements
 * it: every operation is counted, may be failed on purpose, and is followed
 * by the delivery of whatever interrupt it made deliverable and by the
 * test's access hook.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_priv.h"

#define ALLOC_MAGIC 0x756d5369616c6c63ull	/* "umSiallc" */
#define LOCK_MAGIC  0x6c6f636bu			/* "lock" */
#define PAGE_SIZE   4096u

/*
 * Every alloc() block carries a header: the size (to check free()) and
 * links, so that destroy can release what the library leaked.
 */
_Static_assert(sizeof(struct sim_alloc_hdr) % 16 == 0, "alignment");

static _Thread_local int tls_in_hook;

static const char *const op_names[UMSI_SIM_OP_NR] = {
	"cfg_read", "cfg_write", "mmio_map", "mmio_unmap", "mmio_read32",
	"mmio_write32", "lock_create", "lock_destroy",
	"lock_acquire", "lock_release", "alloc", "free", "log", "clock_ns",
	"current_cpu", "cpu_count", "cpu_hwid", "cpu_is_online",
	"platform_flags", "run_on_cpu", "eoi", "irq_pending", "send_ipi",
	"intx_route", "gsi_program", "remap_compose", "remap_free",
	"phys_alloc", "phys_free", "sleep_us",
};

const char *umsi_sim_op_name(enum umsi_sim_op op)
{
	return (unsigned int)op < UMSI_SIM_OP_NR ? op_names[op] : "?";
}

static void fatal(const char *what)
{
	fprintf(stderr, "umsi sim: fatal: %s\n", what);
	abort();
}

/*
 * Count one host call. For a fallible one, return the injected error when
 * this is the call umsi_sim_fail_at() chose, else 0.
 */
static int enter_locked(struct umsi_sim *sim, enum umsi_sim_op op,
			bool fallible)
{
	sim->st.host_calls++;
	sim->st.op_calls[op]++;
	/*
	 * umsi/host.h: inside its spinlocks uMSI calls only configuration
	 * and MMIO accesses, gsi_program, current_cpu and clock_ns (and the
	 * lock operations themselves). One thread holds every lock in
	 * non-threaded mode, so a lock held now is the caller's.
	 */
	if (!sim->threaded && sim->locks_held && !sim_in_irq()) {
		switch (op) {
		case UMSI_SIM_OP_CFG_READ: case UMSI_SIM_OP_CFG_WRITE:
		case UMSI_SIM_OP_MMIO_READ32: case UMSI_SIM_OP_MMIO_WRITE32:
		case UMSI_SIM_OP_GSI_PROGRAM: case UMSI_SIM_OP_CURRENT_CPU:
		case UMSI_SIM_OP_CLOCK_NS: case UMSI_SIM_OP_LOCK_ACQUIRE:
		case UMSI_SIM_OP_LOCK_RELEASE:
			break;
		default:
			sim->st.lock_errors++;
			sim_logf_locked(sim, "host contract: %s called with a "
					"uMSI lock held", op_names[op]);
		}
	}
	if (!fallible)
		return 0;
	sim->st.fallible_calls++;
	if (sim->fail_countdown && --sim->fail_countdown == 0) {
		sim->st.failures_injected++;
		sim_logf_locked(sim, "injected failure %d in %s",
				sim->fail_err, op_names[op]);
		return sim->fail_err ? sim->fail_err : -UMSI_EIO;
	}
	return 0;
}

/*
 * After the operation: deliver, then the hook - not re-entered, and not for
 * host calls of interrupt handlers: a hook that fires on every step would
 * otherwise fire again at each handler's EOI, a storm that never lets the
 * interrupted protocol go on.
 */
static void leave(struct umsi_sim *sim, enum umsi_sim_op op)
{
	void (*hook)(void *, enum umsi_sim_op);
	void *arg;

	sim_drain(sim);
	if (tls_in_hook || sim_in_irq())
		return;
	sim_lock(sim);
	hook = sim->hook;
	arg = sim->hook_arg;
	sim_unlock(sim);
	if (!hook)
		return;
	tls_in_hook = 1;
	hook(arg, op);
	tls_in_hook = 0;
	sim_drain(sim);
}

static uint32_t ones(uint8_t width)
{
	return width == 4 ? 0xffffffffu : (1u << (8 * width)) - 1;
}

/* ---- Configuration space --------------------------------------------------- */

static int h_cfg_read(void *host, umsi_bdf_t bdf, uint16_t off, uint8_t width,
		      uint32_t *val)
{
	struct umsi_sim *sim = host;
	struct sim_dev *d;
	int err;

	sim_lock(sim);
	err = enter_locked(sim, UMSI_SIM_OP_CFG_READ, true);
	sim->st.cfg_reads++;
	d = sim_dev_find(sim, bdf);
	if (d)
		d->st.cfg_reads++;
	if (!err && !sim_cfg_access_ok(off, width)) {
		sim_bad_access_locked(sim, "cfg_read %x off 0x%x width %u",
				      bdf, off, width);
		err = -UMSI_EINVAL;
	}
	if (err || !d || !d->present)
		*val = (width == 1 || width == 2 || width == 4) ? ones(width)
								: 0xffffffffu;
	else
		sim_cfg_read_locked(sim, d, off, width, val);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_CFG_READ);
	return err;
}

static int h_cfg_write(void *host, umsi_bdf_t bdf, uint16_t off, uint8_t width,
		       uint32_t val)
{
	struct umsi_sim *sim = host;
	struct sim_dev *d;
	int err;

	sim_lock(sim);
	err = enter_locked(sim, UMSI_SIM_OP_CFG_WRITE, true);
	sim->st.cfg_writes++;
	d = sim_dev_find(sim, bdf);
	if (d)
		d->st.cfg_writes++;
	if (!err && !sim_cfg_access_ok(off, width)) {
		sim_bad_access_locked(sim, "cfg_write %x off 0x%x width %u",
				      bdf, off, width);
		err = -UMSI_EINVAL;
	}
	/* Writes to an absent or removed function are dropped silently. */
	if (!err && d && d->present)
		sim_cfg_write_locked(sim, d, off, width, val);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_CFG_WRITE);
	return err;
}

/* ---- MMIO ------------------------------------------------------------------- */

/*
 * Mappings are kept sorted by the address of their reservation (which
 * never overlap), so finding the one behind an address is a binary
 * search: the library maps a table and a PBA per MSI-X function.
 * Return: the index of the first mapping whose base is above @a.
 */
static size_t map_upper_locked(const struct umsi_sim *sim, uintptr_t a)
{
	size_t lo = 0, hi = sim->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)sim->maps[mid].base <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mapping that holds @a, or -1. */
static long map_find_locked(const struct umsi_sim *sim, const volatile void *a)
{
	uintptr_t p = (uintptr_t)a;
	size_t i = map_upper_locked(sim, p);

	if (i == 0 || p - (uintptr_t)sim->maps[i - 1].base >=
	    sim->maps[i - 1].maplen)
		return -1;
	return (long)(i - 1);
}

static int h_mmio_map(void *host, uint64_t phys, uint64_t len, void **virt)
{
	struct umsi_sim *sim = host;
	uint64_t page = phys & ~(uint64_t)(PAGE_SIZE - 1);
	uint64_t off = phys - page;
	size_t maplen;
	void *base;
	int err;

	sim_lock(sim);
	err = enter_locked(sim, UMSI_SIM_OP_MMIO_MAP, true);
	if (!err && (len == 0 || len > (1ull << 32)))
		err = -UMSI_EINVAL;
	if (!err && sim->nmaps == sim->maps_cap) {
		size_t cap = sim->maps_cap ? sim->maps_cap * 2 : 16;
		struct sim_map *p = realloc(sim->maps, cap * sizeof(*p));

		if (p) {
			sim->maps = p;
			sim->maps_cap = cap;
		} else {
			err = -UMSI_ENOMEM;
		}
	}
	if (!err) {
		/*
		 * Reserve address space that faults on any direct access:
		 * device memory must be reached through mmio_read32/write32.
		 */
		maplen = (size_t)((off + len + PAGE_SIZE - 1) &
				  ~(uint64_t)(PAGE_SIZE - 1));
		base = mmap(NULL, maplen, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED) {
			err = -UMSI_ENOMEM;
		} else {
			size_t at = map_upper_locked(sim, (uintptr_t)base);

			memmove(&sim->maps[at + 1], &sim->maps[at],
				(sim->nmaps - at) * sizeof(*sim->maps));
			sim->maps[at] = (struct sim_map){
				base, maplen, page, (char *)base + off, len };
			sim->nmaps++;
			sim->lk.maps++;
			*virt = (char *)base + off;
		}
	}
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_MMIO_MAP);
	return err;
}

static void h_mmio_unmap(void *host, void *virt, uint64_t len)
{
	struct umsi_sim *sim = host;
	long i;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_MMIO_UNMAP, false);
	i = map_find_locked(sim, virt);
	if (i < 0 || sim->maps[i].virt != virt || sim->maps[i].len != len) {
		sim_bad_access_locked(sim, "mmio_unmap of unknown mapping %p "
				      "len 0x%llx", virt,
				      (unsigned long long)len);
	} else {
		munmap(sim->maps[i].base, sim->maps[i].maplen);
		memmove(&sim->maps[i], &sim->maps[i + 1],
			(sim->nmaps - (size_t)i - 1) * sizeof(*sim->maps));
		sim->nmaps--;
		sim->lk.maps--;
	}
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_MMIO_UNMAP);
}

/* The physical address behind @addr, or false when it is not mapped. */
static bool map_lookup_locked(struct umsi_sim *sim, volatile void *addr,
			      uint64_t *phys)
{
	uintptr_t a = (uintptr_t)addr;
	long i = map_find_locked(sim, addr);

	if (i < 0)
		return false;
	*phys = sim->maps[i].phys_page + (a - (uintptr_t)sim->maps[i].base);
	return (a & 3) == 0;
}

static uint32_t h_mmio_read32(void *host, volatile void *addr)
{
	struct umsi_sim *sim = host;
	uint64_t phys;
	uint32_t v = 0xffffffffu;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_MMIO_READ32, false);
	sim->st.mmio_reads++;
	if (map_lookup_locked(sim, addr, &phys))
		v = sim_phys_read32_locked(sim, phys, true);
	else
		sim_bad_access_locked(sim, "mmio_read32 at %p: not mapped or "
				      "misaligned", (void *)addr);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_MMIO_READ32);
	return v;
}

static void h_mmio_write32(void *host, volatile void *addr, uint32_t val)
{
	struct umsi_sim *sim = host;
	uint64_t phys;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_MMIO_WRITE32, false);
	sim->st.mmio_writes++;
	if (map_lookup_locked(sim, addr, &phys))
		sim_phys_write32_locked(sim, phys, val, true);
	else
		sim_bad_access_locked(sim, "mmio_write32 at %p: not mapped or "
				      "misaligned", (void *)addr);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_MMIO_WRITE32);
}

void sim_maps_fini(struct umsi_sim *sim)
{
	for (size_t i = 0; i < sim->nmaps; i++)
		munmap(sim->maps[i].base, sim->maps[i].maplen);
	free(sim->maps);
	sim->maps = NULL;
	sim->nmaps = 0;
}

/* Release what the library left behind (destroy). */
void sim_host_fini(struct umsi_sim *sim)
{
	while (sim->allocs) {
		struct sim_alloc_hdr *h = sim->allocs;

		sim->allocs = h->next;
		free(h);
	}
	sim_slab_fini(sim);
	while (sim->locks) {
		struct sim_lock *l = sim->locks;

		sim->locks = l->next;
		free(l);
	}	while (sim->phys) {
		struct sim_phys *b = sim->phys;

		sim->phys = b->next;
		free(b->virt);
		free(b);
	}
}

/*
 * The memory behind physical [@phys, @phys + @len) when one phys_alloc()
 * block holds all of it, else NULL: what a controller reading memory
 * nobody gave it would get.
 */
void *sim_phys_ptr_locked(struct umsi_sim *sim, uint64_t phys, size_t len)
{
	for (struct sim_phys *b = sim->phys; b; b = b->next)
		if (phys >= b->phys && phys - b->phys <= b->size &&
		    len <= b->size - (phys - b->phys))
			return (char *)b->virt + (phys - b->phys);
	return NULL;
}

/* ---- Locks -------------------------------------------------------------------- */

static struct sim_lock *lock_check(void *lock)
{
	struct sim_lock *l = lock;

	if (!l || l->magic != LOCK_MAGIC)
		fatal("lock operation on something that is not a live lock");
	return l;
}

static void *h_lock_create(void *host)
{
	struct umsi_sim *sim = host;
	struct sim_lock *l = NULL;

	sim_lock(sim);
	if (!enter_locked(sim, UMSI_SIM_OP_LOCK_CREATE, true)) {
		l = calloc(1, sizeof(*l));
		if (l) {
			l->magic = LOCK_MAGIC;
			pthread_mutex_init(&l->m, NULL);
			l->next = sim->locks;
			if (sim->locks)
				sim->locks->prev = l;
			sim->locks = l;
			sim->lk.locks++;
			sim->lk.locks_created++;
		}
	}
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_LOCK_CREATE);
	return l;
}

static void h_lock_destroy(void *host, void *lock)
{
	struct umsi_sim *sim = host;
	struct sim_lock *l = lock_check(lock);

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_LOCK_DESTROY, false);
	if (l->held) {
		sim->st.lock_errors++;
		sim_logf_locked(sim, "lock_destroy of a held lock");
		sim->locks_held--;
		sim->lk.locks_held--;
		sim_irq_enable_locked(sim, l->owner);
	} else {
		pthread_mutex_destroy(&l->m);
	}
	if (l->prev)
		l->prev->next = l->next;
	else
		sim->locks = l->next;
	if (l->next)
		l->next->prev = l->prev;
	l->magic = 0;
	free(l);
	sim->lk.locks--;
	sim->lk.locks_destroyed++;
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_LOCK_DESTROY);
}

/*
 * Interrupts off on the current CPU, then the lock. The returned flags say
 * whether interrupts were on; the sim itself counts disables per CPU, so
 * lock_release re-enables by count (correct for nested sections).
 */
static umsi_irqflags_t h_lock_acquire(void *host, void *lock)
{
	struct umsi_sim *sim = host;
	struct sim_lock *l = lock_check(lock);
	umsi_irqflags_t flags;
	uint32_t cpu;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_LOCK_ACQUIRE, false);
	cpu = sim_current_cpu_locked(sim);
	flags = sim->cpus[cpu].irq_off == 0;
	sim->cpus[cpu].irq_off++;
	if (!sim->threaded) {
		if (l->held) {
			char msg[256];

			if (l->owner == cpu)
				snprintf(msg, sizeof(msg), "deadlock: CPU %u "
					 "acquires a lock it holds", cpu);
			else
				snprintf(msg, sizeof(msg), "CPU %u would spin "
					 "on a lock held by CPU %u, which one "
					 "thread cannot run (dispatch through "
					 "locks is on; use the default or "
					 "threaded mode)", cpu, l->owner);
			fatal(msg);
		}
	} else {
		if (l->held && pthread_equal(l->owner_thread, pthread_self()))
			fatal("deadlock: lock acquired twice by one thread");
		sim_unlock(sim);
		pthread_mutex_lock(&l->m);
		sim_lock(sim);
		l->owner_thread = pthread_self();
	}
	l->held = true;
	l->owner = cpu;
	sim->locks_held++;
	sim->lk.locks_held++;
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_LOCK_ACQUIRE);
	return flags;
}

static void h_lock_release(void *host, void *lock, umsi_irqflags_t flags)
{
	struct umsi_sim *sim = host;
	struct sim_lock *l = lock_check(lock);
	bool unlock_real = false;

	(void)flags;
	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_LOCK_RELEASE, false);
	if (!l->held) {
		sim->st.lock_errors++;
		sim_logf_locked(sim, "lock_release of a lock not held");
	} else {
		l->held = false;
		sim->locks_held--;
		sim->lk.locks_held--;
		sim_irq_enable_locked(sim, l->owner);
		unlock_real = sim->threaded;
	}
	sim_unlock(sim);
	if (unlock_real)
		pthread_mutex_unlock(&l->m);
	leave(sim, UMSI_SIM_OP_LOCK_RELEASE);
}

/* ---- Memory --------------------------------------------------------------------- */

static void *h_alloc(void *host, size_t size)
{
	struct umsi_sim *sim = host;
	struct sim_alloc_hdr *h = NULL;
	void *p = NULL;

	sim_lock(sim);
	if (enter_locked(sim, UMSI_SIM_OP_ALLOC, true) ||
	    size >= ((size_t)1 << 40)) {
		p = NULL;
	} else if (size <= SIM_SLAB_MAX && sim_slab_enabled()) {
		/* Small: a slab block, no header (sim_slab.c). */
		p = sim_slab_alloc(sim, size);
	} else {
		size_t total = sizeof(*h) + ((size + 15) & ~(size_t)15);

		h = aligned_alloc(16, total);
		if (h) {
			/* umsi/host.h: the memory need not be zeroed. */
			memset(h, 0xa5, total);
			h->magic = ALLOC_MAGIC;
			h->prev = NULL;
			h->size = size;
			h->next = sim->allocs;
			if (sim->allocs)
				sim->allocs->prev = h;
			sim->allocs = h;
			p = h + 1;
		}
	}
	if (p) {
		sim->lk.allocs++;
		sim->lk.alloc_bytes += size;
		sim->lk.total_allocs++;
	}
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_ALLOC);
	return p;
}

static void h_free(void *host, void *ptr, size_t size)
{
	struct umsi_sim *sim = host;
	struct sim_alloc_hdr *h = NULL;
	size_t asked;
	int r = 1;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_FREE, false);
	if (ptr && sim_slab_enabled())
		r = sim_slab_free(sim, ptr, size, &asked);
	if (r == 0) {
		sim->lk.allocs--;
		sim->lk.alloc_bytes -= size;
	} else if (r == -1) {
		sim_bad_access_locked(sim, "free of %p: not from alloc() or "
				      "already freed", ptr);
	} else if (r == -2) {
		sim_bad_access_locked(sim, "free of %p with size %zu, "
				      "allocated %zu", ptr, size, asked);
	} else if (ptr) {
		h = (struct sim_alloc_hdr *)ptr - 1;
	}
	if (h && h->magic != ALLOC_MAGIC) {
		sim_bad_access_locked(sim, "free of %p: not from alloc() or "
				      "already freed", ptr);
	} else if (h) {
		if (h->size != size)
			sim_bad_access_locked(sim, "free of %p with size %zu, "
					      "allocated %llu", ptr, size,
					      (unsigned long long)h->size);
		sim->lk.allocs--;
		sim->lk.alloc_bytes -= h->size;
		if (h->prev)
			h->prev->next = h->next;
		else
			sim->allocs = h->next;
		if (h->next)
			h->next->prev = h->prev;
		h->magic = 0;
		free(h);
	}
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_FREE);
}

/*
 * Memory a controller reads by physical address: a block at the next
 * free address of the sim's own physical range (from 4 GiB), aligned as
 * asked, poisoned as alloc() is (it need not be zeroed).
 */
static void *h_phys_alloc(void *host, size_t size, size_t align,
			  uint64_t *phys)
{
	struct umsi_sim *sim = host;
	struct sim_phys *b = NULL;

	sim_lock(sim);
	if (!enter_locked(sim, UMSI_SIM_OP_PHYS_ALLOC, true)) {
		if (!size || !align || (align & (align - 1)) || align > 65536) {
			sim_bad_access_locked(sim, "phys_alloc of %zu bytes "
					      "aligned to %zu", size, align);
		} else if ((b = calloc(1, sizeof(*b))) != NULL) {
			size_t a = align < 16 ? 16 : align;

			b->virt = aligned_alloc(a, (size + a - 1) & ~(a - 1));
			if (!b->virt) {
				free(b);
				b = NULL;
			}
		}
	}
	if (b) {
		memset(b->virt, 0xa5, size);
		b->size = size;
		b->phys = (sim->next_phys + align - 1) & ~(uint64_t)(align - 1);
		sim->next_phys = b->phys + ((size + 4095) & ~(size_t)4095);
		b->next = sim->phys;
		sim->phys = b;
		sim->lk.phys_allocs++;
		sim->lk.phys_bytes += size;
		*phys = b->phys;
	}
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_PHYS_ALLOC);
	return b ? b->virt : NULL;
}

static void h_phys_free(void *host, void *virt, size_t size)
{
	struct umsi_sim *sim = host;
	struct sim_phys **pp, *b = NULL;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_PHYS_FREE, false);
	for (pp = &sim->phys; *pp; pp = &(*pp)->next) {
		if ((*pp)->virt == virt) {
			b = *pp;
			break;
		}
	}
	if (!b) {
		sim_bad_access_locked(sim, "phys_free of %p: not from "
				      "phys_alloc() or already freed", virt);
	} else {
		const char *what = sim_models_reads_locked(sim, b->phys,
							   b->size);

		if (b->size != size)
			sim_bad_access_locked(sim, "phys_free of %p with size "
					      "%zu, allocated %zu", virt, size,
					      b->size);
		if (what)
			sim_bad_access_locked(sim, "phys_free of %p (0x%llx): "
					      "%s, on, still reads it", virt,
					      (unsigned long long)b->phys, what);
		*pp = b->next;
		sim->lk.phys_allocs--;
		sim->lk.phys_bytes -= b->size;
		/* A controller still reading it would read junk. */
		memset(b->virt, 0x5a, b->size);
		free(b->virt);
		free(b);
	}
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_PHYS_FREE);
}

/* ---- Diagnostics and time ---------------------------------------------------------- */

static void h_log(void *host, enum umsi_log_level level, const char *msg)
{
	static const char lv[] = "EWID";
	struct umsi_sim *sim = host;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_LOG, false);
	sim_log_line_locked(sim, (unsigned int)level < 4 ? lv[level] : '?',
			    msg ? msg : "(null)");
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_LOG);
}

static uint64_t h_clock_ns(void *host)
{
	struct umsi_sim *sim = host;
	uint64_t t;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_CLOCK_NS, false);
	t = sim->clock;
	sim->clock += sim->tick;
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_CLOCK_NS);
	return t;
}

/* The simulated clock moves on by the time slept; nothing waits. */
static void h_sleep_us(void *host, uint32_t us)
{
	struct umsi_sim *sim = host;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_SLEEP_US, false);
	sim->clock += (uint64_t)us * 1000;
	sim->st.slept_us += us;
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_SLEEP_US);
}

/* ---- CPUs and topology ---------------------------------------------------------------- */

static uint32_t h_current_cpu(void *host)
{
	struct umsi_sim *sim = host;
	uint32_t cpu;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_CURRENT_CPU, false);
	cpu = sim_current_cpu_locked(sim);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_CURRENT_CPU);
	return cpu;
}

static uint32_t h_cpu_count(void *host)
{
	struct umsi_sim *sim = host;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_CPU_COUNT, false);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_CPU_COUNT);
	return sim->ncpus;
}

static int h_cpu_hwid(void *host, uint32_t cpu, uint32_t *apic_id)
{
	struct umsi_sim *sim = host;
	int err;

	sim_lock(sim);
	err = enter_locked(sim, UMSI_SIM_OP_CPU_HWID, true);
	if (!err && cpu >= sim->ncpus)
		err = -UMSI_EINVAL;
	if (!err)
		*apic_id = sim->cpus[cpu].apic_id;
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_CPU_HWID);
	return err;
}

static bool h_cpu_is_online(void *host, uint32_t cpu)
{
	struct umsi_sim *sim = host;
	bool on;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_CPU_IS_ONLINE, false);
	on = cpu < sim->ncpus && sim->cpus[cpu].online;
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_CPU_IS_ONLINE);
	return on;
}

static uint32_t h_platform_flags(void *host)
{
	struct umsi_sim *sim = host;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_PLATFORM_FLAGS, false);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_PLATFORM_FLAGS);
	return sim->plat_flags;
}

/* ---- Interrupt controller -------------------------------------------------------------- */

static int h_run_on_cpu(void *host, uint32_t cpu, void (*fn)(void *arg),
			void *arg)
{
	struct umsi_sim *sim = host;
	int err;

	sim_lock(sim);
	err = enter_locked(sim, UMSI_SIM_OP_RUN_ON_CPU, true);
	sim_unlock(sim);
	if (!err)
		err = sim_run_on_cpu(sim, cpu, fn, arg);
	leave(sim, UMSI_SIM_OP_RUN_ON_CPU);
	return err;
}

/*
 * The current CPU's controller, through the machine's controller model
 * (sim->ctl: the x86 local APIC's EOI, IRR and ICR; an IMSIC's eip; a
 * GIC's LPI pending bit).
 */
static void h_eoi(void *host, uint32_t id)
{
	struct umsi_sim *sim = host;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_EOI, false);
	sim->ctl->eoi(sim, sim_current_cpu_locked(sim), id);
	/* The kernel's part under AMD-Vi (umsi/ctl.h): the IO-APIC's EOI. */
	sim_wired_host_eoi_locked(sim, sim_current_cpu_locked(sim), id);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_EOI);
}

static bool h_irq_pending(void *host, uint32_t id)
{
	struct umsi_sim *sim = host;
	bool v;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_IRQ_PENDING, false);
	v = sim->ctl->pending(sim, sim_current_cpu_locked(sim), id);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_IRQ_PENDING);
	return v;
}

static void h_send_ipi(void *host, uint32_t hwid, uint32_t id)
{
	struct umsi_sim *sim = host;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_SEND_IPI, false);
	sim->ctl->ipi(sim, sim_current_cpu_locked(sim), hwid, id);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_SEND_IPI);
}

/* ---- INTx and remapping -------------------------------------------------------------------- */

static int h_intx_route(void *host, umsi_bdf_t bdf, uint8_t pin,
			struct umsi_intx_route *route)
{
	struct umsi_sim *sim = host;
	int err;

	sim_lock(sim);
	err = enter_locked(sim, UMSI_SIM_OP_INTX_ROUTE, true);
	if (!err)
		err = sim_wired_route_locked(sim, bdf, pin, route);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_INTX_ROUTE);
	return err;
}

static int h_gsi_program(void *host, uint32_t gsi,
			 const struct umsi_gsi_entry *entry)
{
	struct umsi_sim *sim = host;
	int err;

	sim_lock(sim);
	err = enter_locked(sim, UMSI_SIM_OP_GSI_PROGRAM, true);
	if (!err)
		err = sim_wired_program_locked(sim, gsi, entry);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_GSI_PROGRAM);
	return err;
}

static int h_remap_compose(void *host, uint32_t irq, uint32_t apic_id,
			   uint8_t vector, struct umsi_msg *msg)
{
	struct umsi_sim *sim = host;
	int err;

	sim_lock(sim);
	err = enter_locked(sim, UMSI_SIM_OP_REMAP_COMPOSE, true);
	if (!err)
		err = sim_remap_compose_locked(sim, irq, apic_id, vector, msg);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_REMAP_COMPOSE);
	return err;
}

static void h_remap_free(void *host, uint32_t irq)
{
	struct umsi_sim *sim = host;

	sim_lock(sim);
	enter_locked(sim, UMSI_SIM_OP_REMAP_FREE, false);
	sim_remap_free_locked(sim, irq);
	sim_unlock(sim);
	leave(sim, UMSI_SIM_OP_REMAP_FREE);
}

static const struct umsi_host_ops sim_ops = {
	.cfg_read = h_cfg_read,
	.cfg_write = h_cfg_write,
	.mmio_map = h_mmio_map,
	.mmio_unmap = h_mmio_unmap,
	.mmio_read32 = h_mmio_read32,
	.mmio_write32 = h_mmio_write32,
	.lock_create = h_lock_create,
	.lock_destroy = h_lock_destroy,
	.lock_acquire = h_lock_acquire,
	.lock_release = h_lock_release,
	.alloc = h_alloc,
	.free = h_free,
	.log = h_log,
	.clock_ns = h_clock_ns,
	.current_cpu = h_current_cpu,
	.cpu_count = h_cpu_count,
	.cpu_hwid = h_cpu_hwid,
	.cpu_is_online = h_cpu_is_online,
	.platform_flags = h_platform_flags,
	.run_on_cpu = h_run_on_cpu,
	.eoi = h_eoi,
	.irq_pending = h_irq_pending,
	.send_ipi = h_send_ipi,
	.intx_route = h_intx_route,
	.gsi_program = h_gsi_program,
	.remap_compose = h_remap_compose,
	.remap_free = h_remap_free,
	.sleep_us = h_sleep_us,
	.phys_alloc = h_phys_alloc,
	.phys_free = h_phys_free,
};

const struct umsi_host_ops *umsi_sim_host_ops(void)
{
	return &sim_ops;
}
