/* SPDX-License-Identifier: MIT */
/*
 * The RISC-V AIA IMSIC back end (umsi/internal/ctl.h), for S-level
 * interrupt files (RISC-V Advanced Interrupt Architecture 1.0, chapter 3).
 *
 * Every hart has its own interrupt file: a 4 KiB page of MMIO whose
 * register seteipnum_le (offset 0) makes the identity written to it
 * pending there. An MSI is exactly such a write, so a message is (the
 * file's address, the identity): nothing in it names the hart but the
 * address. Identities are 1..num-ids (num-ids is 63..2047, one less than
 * a multiple of 64, AIA 3.1); identity 0 means "none" and is never sent.
 * Each hart has the whole space, so the per-CPU identity space of uMSI is
 * one file: nvec = num-ids + 1 identities, 1..num-ids allocatable (or
 * first_id..num-ids when the kernel keeps low ones, e.g. for IPIs).
 *
 * The hart reaches its own file's state through CSRs (siselect/sireg:
 * eidelivery 0x70, eithreshold 0x72, eip0.. 0x80.., eie0.. 0xc0..; on RV64
 * only the even-numbered eip/eie exist, identity i lives in eip(2 * (i /
 * 64)) bit i % 64, AIA 3.8), which only the host can touch:
 *
 *  - "still pending on the old CPU" is its eip bit, the host's
 *    irq_pending(identity) on that hart;
 *  - a pending copy is resent by writing the identity to the new hart's
 *    seteipnum_le, through a mapping of every file made at init (resend may
 *    run in interrupt context, where mmio_map may not be called);
 *  - there is no end of interrupt: the kernel claims through stopei
 *    (csrrw stopei, zero: reads identity << 16 | identity and clears that
 *    pending bit) before calling umsi_dispatch() with the identity.
 *
 * Interrupts move by rewriting the source's message. Wired inputs (an
 * APLIC in MSI mode) send the same messages, so they are composed alike.
 * The kernel enables the identities (eie) and delivery (eidelivery = 1,
 * eithreshold = 0) of each hart's file when the hart starts: a back end
 * can reach only the current hart's file, and a hart coming online later
 * would not pass through it (docs/PORTING.md, section 3).
 */
#include <umsi/ctl.h>
#include <umsi/internal/ctl.h>
#include <umsi/internal/hostcall.h>
#include <umsi/internal/lib.h>

/* AIA 1.0, 3.5: an interrupt file's page, and its seteipnum_le register. */
#define IMSIC_FILE_SIZE     0x1000u
#define IMSIC_SETEIPNUM_LE  0x0u
/* AIA 1.0, 3.1: num-ids is 64k - 1, from 63 to 2047. */
#define IMSIC_MIN_IDS       63u
#define IMSIC_MAX_IDS       2047u

/*
 * The back end's state (umsi_ctl_env.priv), one block.
 * @num_ids: identities of a file
 * @ncpus: CPUs, entries of @phys and @file
 * @phys: each CPU's file (0: none)
 * @file: each CPU's file as mapped (NULL: none)
 */
struct imsic_priv {
	size_t size;
	uint32_t num_ids;
	uint32_t ncpus;
	uint64_t *phys;
	volatile void **file;
};

static struct imsic_priv *imsic_priv(struct umsi_system *sys)
{
	return umsi_ctl_env(sys)->priv;
}

/* Sift @a[@i] down the max-heap @a[0..@n). */
static void imsic_sift(uint64_t *a, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		uint64_t t;

		if (c >= n)
			return;
		if (c + 1 < n && a[c + 1] > a[c])
			c++;
		if (a[i] >= a[c])
			return;
		t = a[i];
		a[i] = a[c];
		a[c] = t;
		i = c;
	}
}

/*
 * Whether two CPUs were given the same file: a heap sort of a copy, then
 * neighbours. O(n log n), once at creation; no allocation when @tmp is
 * given room for @n addresses.
 */
static bool imsic_shared_file(const uint64_t *addr, size_t n, uint64_t *tmp,
			      uint64_t *dup)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		if (addr[i])
			tmp[m++] = addr[i];
	for (i = m / 2; i-- > 0;)
		imsic_sift(tmp, i, m);
	for (i = m; i-- > 1;) {
		uint64_t t = tmp[0];

		tmp[0] = tmp[i];
		tmp[i] = t;
		imsic_sift(tmp, 0, i);
	}
	for (i = 1; i < m; i++) {
		if (tmp[i] == tmp[i - 1]) {
			*dup = tmp[i];
			return true;
		}
	}
	return false;
}

/*
 * Check the configuration against AIA 1.0 and the host. Return 0 or
 * -UMSI_EINVAL after a log line naming the problem.
 */
static int imsic_check(struct umsi_system *sys, uint32_t ncpus,
		       const struct umsi_imsic_config *c, uint64_t *tmp)
{
	const struct umsi_host_ops *o = umsi_ctl_env(sys)->ops;
	uint32_t cpu, first;
	uint64_t dup;

	if (!o->irq_pending) {
		umsi_log(sys, UMSI_LOG_ERROR, "riscv-imsic: host operation "
			 "irq_pending missing");
		return -UMSI_EINVAL;
	}
	if (!c) {
		umsi_log(sys, UMSI_LOG_ERROR, "riscv-imsic: no configuration "
			 "(umsi_config.ctl_config must point to a struct "
			 "umsi_imsic_config)");
		return -UMSI_EINVAL;
	}
	if (c->num_ids < IMSIC_MIN_IDS || c->num_ids > IMSIC_MAX_IDS ||
	    (c->num_ids + 1) % 64) {
		umsi_log(sys, UMSI_LOG_ERROR, "riscv-imsic: num_ids %u: an "
			 "interrupt file has 64k-1 identities, 63 to 2047",
			 c->num_ids);
		return -UMSI_EINVAL;
	}
	first = c->first_id ? c->first_id : 1;
	if (first > c->num_ids) {
		umsi_log(sys, UMSI_LOG_ERROR, "riscv-imsic: first_id %u above "
			 "num_ids %u", first, c->num_ids);
		return -UMSI_EINVAL;
	}
	if (!c->file_addr || c->nr_files < ncpus) {
		umsi_log(sys, UMSI_LOG_ERROR, "riscv-imsic: file_addr has %u "
			 "entries for %u CPUs", c->file_addr ? c->nr_files : 0,
			 ncpus);
		return -UMSI_EINVAL;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		if (c->file_addr[cpu] % IMSIC_FILE_SIZE) {
			umsi_log(sys, UMSI_LOG_ERROR, "riscv-imsic: cpu %u: file "
				 "address 0x%llx is not 4 KiB aligned", cpu,
				 (unsigned long long)c->file_addr[cpu]);
			return -UMSI_EINVAL;
		}
	}
	if (imsic_shared_file(c->file_addr, ncpus, tmp, &dup)) {
		umsi_log(sys, UMSI_LOG_ERROR, "riscv-imsic: file 0x%llx given "
			 "to two CPUs", (unsigned long long)dup);
		return -UMSI_EINVAL;
	}
	return 0;
}

/* Unmap every file mapped so far and free the state. */
static void imsic_fini(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct imsic_priv *p = env->priv;
	uint32_t cpu;

	if (!p)
		return;
	for (cpu = 0; cpu < p->ncpus; cpu++)
		if (p->file[cpu])
			umsi_host_mmio_unmap(sys, (void *)p->file[cpu],
					     IMSIC_FILE_SIZE);
	env->priv = NULL;
	umsi_free(sys, p, p->size);
}

static int imsic_init(struct umsi_system *sys, uint32_t ncpus,
		      struct umsi_matrix_config *space)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	const struct umsi_imsic_config *c = env->ctl_config;
	struct imsic_priv *p;
	uint32_t cpu, nvec;
	size_t size;
	int ret;

	size = sizeof(*p) + (size_t)ncpus * (sizeof(*p->phys) +
					     sizeof(*p->file));
	p = umsi_zalloc(sys, size);
	if (!p)
		return -UMSI_ENOMEM;
	p->size = size;
	p->ncpus = ncpus;
	p->phys = (uint64_t *)(p + 1);
	p->file = (volatile void **)(p->phys + ncpus);
	/* phys[] is scratch for the duplicate check until filled below. */
	ret = imsic_check(sys, ncpus, c, p->phys);
	if (ret) {
		umsi_free(sys, p, size);
		return ret;
	}
	p->num_ids = c->num_ids;
	env->priv = p;
	for (cpu = 0; cpu < ncpus; cpu++) {
		void *v;

		p->phys[cpu] = c->file_addr[cpu];
		if (!p->phys[cpu])
			continue;
		ret = umsi_host_mmio_map(sys, p->phys[cpu],
					 IMSIC_FILE_SIZE, &v);
		if (ret) {
			imsic_fini(sys);
			return ret;
		}
		p->file[cpu] = v;
	}
	/* One file a CPU: identity 0 never, the kernel's below first_id. */
	nvec = c->num_ids + 1;
	umsi_matrix_space_config(space, ncpus, nvec,
				 c->first_id ? c->first_id : 1, c->num_ids);
	return 0;
}

static int imsic_cpu_init(struct umsi_system *sys, uint32_t cpu,
			  struct umsi_ctl_cpu *out)
{
	int ret = umsi_host_cpu_hwid(sys, cpu, &out->hwid);

	if (ret)
		return ret;
	/* A hart without an S-level file cannot be sent anything. */
	out->reachable = imsic_priv(sys)->phys[cpu] != 0;
	out->wired_reachable = out->reachable;
	return 0;
}

/* Every source writes the identity to the hart's seteipnum_le. */
static int imsic_compose(struct umsi_system *sys,
			 const struct umsi_ctl_irq *ci, uint32_t cpu, uint32_t id,
			 struct umsi_msg *msg)
{
	struct imsic_priv *p = imsic_priv(sys);

	(void)ci;
	if (id == 0 || id > p->num_ids)
		return -UMSI_EINVAL;
	if (cpu >= p->ncpus || !p->phys[cpu])
		return -UMSI_ERANGE;
	msg->address = p->phys[cpu] + IMSIC_SETEIPNUM_LE;
	msg->data = id;
	return 0;
}

/* A move rewrites the source's message (the new hart's file). */
static int imsic_retarget(struct umsi_system *sys,
			  const struct umsi_ctl_irq *ci, uint32_t cpu,
			  uint32_t id)
{
	(void)sys;
	(void)ci;
	(void)cpu;
	(void)id;
	return UMSI_CTL_REWRITE;
}

static bool imsic_pending(struct umsi_system *sys, uint32_t id)
{
	if (id == 0 || id > imsic_priv(sys)->num_ids)
		return false;
	return umsi_host_irq_pending(sys, id);
}

static int imsic_resend(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct imsic_priv *p = env->priv;
	volatile void *reg;

	if (cpu >= p->ncpus || !p->file[cpu] || id == 0 || id > p->num_ids)
		return -UMSI_EINVAL;
	reg = (volatile uint8_t *)p->file[cpu] + IMSIC_SETEIPNUM_LE;
	/* The same write a device makes: the identity, little-endian. */
	umsi_mmio_write32(sys, reg, id);
	return 0;
}

const struct umsi_ctl umsi_ctl_riscv_imsic = {
	.name = "riscv-imsic",
	.domain = &umsi_ctl_domain_per_cpu,
	.init = imsic_init,
	.fini = imsic_fini,
	.cpu_init = imsic_cpu_init,
	.compose = imsic_compose,
	.retarget = imsic_retarget,
	.pending = imsic_pending,
	.resend = imsic_resend,
	/* No end of interrupt: the kernel claimed it through stopei. */
	/* Identity 0 is "nothing pending": the kernel never dispatches it. */
	.spurious_id = 0,
};
