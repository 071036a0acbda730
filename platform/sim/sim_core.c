/* SPDX-License-Identifier: MIT */
/*
 * sim_core.c - the simulated machine: CPUs and their local APICs, message
 * delivery, dispatch (synchronous or one thread per CPU), statistics, the
 * log and the virtual clock.
 *
 * The local APIC model follows the Intel SDM Vol. 3, 11.8: an accepted
 * fixed interrupt sets its bit in the IRR (a second arrival while it is set
 * is lost: it coalesces); the CPU takes the highest IRR vector whose
 * priority class (vector >> 4) is above that of the highest ISR vector,
 * moving it from IRR to ISR; EOI clears the highest ISR bit and, when the
 * vector was accepted level-triggered (TMR), is broadcast to the IO-APIC.
 * The RISC-V IMSIC model (sim_imsic.c) plugs into the same CPU machinery
 * through struct sim_ctl_model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_priv.h"

/* Threaded mode: which machine and CPU the calling thread is. */
static _Thread_local struct umsi_sim *tls_sim;
static _Thread_local uint32_t tls_cpu;
/* Dispatches in progress on this thread (interrupt context when > 0). */
static _Thread_local unsigned int tls_irq_depth;

bool sim_in_irq(void)
{
	return tls_irq_depth > 0;
}

/* The interrupt entry as it was when a CPU took an interrupt. */
struct sim_entry {
	int (*fn)(void *arg, uint32_t cpu, uint8_t vector);
	int (*fn_id)(void *arg, uint32_t cpu, uint32_t id);
	void *arg;
};

static struct sim_entry entry_locked(const struct umsi_sim *sim)
{
	return (struct sim_entry){ sim->dispatch, sim->dispatch_id,
				   sim->dispatch_arg };
}

static bool entry_set(const struct sim_entry *e)
{
	return e->fn || e->fn_id;
}

/* Call the dispatch function as the CPU's interrupt entry would. */
static int call_dispatch(const struct sim_entry *e, uint32_t cpu, int v)
{
	int ret;

	if (!entry_set(e))
		return 0;
	tls_irq_depth++;
	ret = e->fn_id ? e->fn_id(e->arg, cpu, (uint32_t)v)
		       : e->fn(e->arg, cpu, (uint8_t)v);
	tls_irq_depth--;
	return ret;
}

void sim_lock(struct umsi_sim *sim)
{
	pthread_mutex_lock(&sim->mtx);
}

void sim_unlock(struct umsi_sim *sim)
{
	pthread_mutex_unlock(&sim->mtx);
}

/* ---- 256-bit APIC registers ------------------------------------------------ */

static bool bit_test(const uint64_t *m, unsigned int v)
{
	return (m[v / 64] >> (v % 64)) & 1;
}

static void bit_set(uint64_t *m, unsigned int v)
{
	m[v / 64] |= 1ull << (v % 64);
}

static void bit_clear(uint64_t *m, unsigned int v)
{
	m[v / 64] &= ~(1ull << (v % 64));
}

static int bit_highest(const uint64_t *m)
{
	for (int i = 3; i >= 0; i--)
		if (m[i])
			return i * 64 + 63 - __builtin_clzll(m[i]);
	return -1;
}

/* ---- Log ------------------------------------------------------------------ */

void sim_log_line_locked(struct umsi_sim *sim, char level, const char *msg)
{
	size_t n = strlen(msg) + 4;

	if (sim->verbose)
		fprintf(stderr, "%c: %s\n", level, msg);
	if (sim->log_len + n + 1 > sim->log_cap) {
		size_t cap = sim->log_cap ? sim->log_cap : 4096;
		char *p;

		while (sim->log_len + n + 1 > cap)
			cap *= 2;
		p = realloc(sim->log, cap);
		if (!p)
			return;	/* a lost log line is better than a crash */
		sim->log = p;
		sim->log_cap = cap;
	}
	sim->log_len += (size_t)snprintf(sim->log + sim->log_len,
					 sim->log_cap - sim->log_len,
					 "%c: %s\n", level, msg);
}

void sim_logf_locked(struct umsi_sim *sim, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	memcpy(buf, "sim: ", 5);
	va_start(ap, fmt);
	vsnprintf(buf + 5, sizeof(buf) - 5, fmt, ap);
	va_end(ap);
	sim_log_line_locked(sim, 'W', buf);
}

void sim_bad_access_locked(struct umsi_sim *sim, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	sim->st.bad_accesses++;
	memcpy(buf, "sim: bad access: ", 17);
	va_start(ap, fmt);
	vsnprintf(buf + 17, sizeof(buf) - 17, fmt, ap);
	va_end(ap);
	sim_log_line_locked(sim, 'E', buf);
}

const char *umsi_sim_log_text(struct umsi_sim *sim)
{
	const char *s;

	sim_lock(sim);
	s = sim->log ? sim->log : "";
	sim_unlock(sim);
	return s;
}

void umsi_sim_log_clear(struct umsi_sim *sim)
{
	sim_lock(sim);
	sim->log_len = 0;
	if (sim->log)
		sim->log[0] = 0;
	sim_unlock(sim);
}

/* ---- CPUs ------------------------------------------------------------------ */

uint32_t sim_current_cpu_locked(struct umsi_sim *sim)
{
	if (sim->threaded && tls_sim == sim)
		return tls_cpu;
	return sim->cur_cpu;
}

/* Threaded mode: wake CPU @cpu's thread to look at its state again. */
void sim_cpu_kick_locked(struct umsi_sim *sim, uint32_t cpu)
{
	if (sim->threaded)
		pthread_cond_signal(&sim->cpus[cpu].cond);
}

void sim_irq_enable_locked(struct umsi_sim *sim, uint32_t cpu)
{
	struct sim_cpu *c = &sim->cpus[cpu];

	if (c->irq_off > 0 && --c->irq_off == 0)
		sim_cpu_kick_locked(sim, cpu);
}

/* CPU @cpu has one more pending bit (IRR, eip). */
void sim_pending_set_locked(struct umsi_sim *sim, uint32_t cpu)
{
	bit_set(sim->irr_cpus, cpu);
	sim->irr_bits++;
}

/* CPU @cpu has one fewer; @empty: none is left. */
void sim_pending_clear_locked(struct umsi_sim *sim, uint32_t cpu, bool empty)
{
	sim->irr_bits--;
	if (empty)
		bit_clear(sim->irr_cpus, cpu);
}

/*
 * The vector CPU @c would take now, or -1. In non-threaded mode nothing is
 * taken while any CPU holds a uMSI lock (see umsi_sim.h: a real CPU would
 * spin on it; one thread cannot).
 */
static int cpu_next_vector_locked(struct umsi_sim *sim, struct sim_cpu *c)
{
	if (!c->online || c->irq_off > 0)
		return -1;
	if (!sim->threaded && sim->locks_held && !sim->through_locks)
		return -1;
	return sim->ctl->next(sim, (uint32_t)(c - sim->cpus));
}

/* x86: the highest IRR vector whose class is above the highest in service. */
static int x86_next_locked(struct umsi_sim *sim, uint32_t cpu)
{
	struct sim_cpu *c = &sim->cpus[cpu];
	int v = bit_highest(c->irr), s;

	if (v < 0)
		return -1;
	s = bit_highest(c->isr);
	if (s >= 0 && (v >> 4) <= (s >> 4))
		return -1;
	return v;
}

/* x86: IRR -> ISR. */
static void x86_take_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t v)
{
	struct sim_cpu *c = &sim->cpus[cpu];

	bit_clear(c->irr, v);
	sim_pending_clear_locked(sim, cpu,
				 !(c->irr[0] | c->irr[1] | c->irr[2] | c->irr[3]));
	bit_set(c->isr, v);
}

/* The CPU takes @v; its interrupts are off while it runs. */
static void cpu_take_locked(struct umsi_sim *sim, uint32_t cpu, int v)
{
	struct sim_cpu *c = &sim->cpus[cpu];

	sim->ctl->take(sim, cpu, (uint32_t)v);
	c->irq_off++;
	sim_dispatched_locked(sim, cpu, (uint32_t)v);
	sim->st.dispatched++;
}

static void eoi_cpu_locked(struct umsi_sim *sim, uint32_t cpu, uint8_t vector)
{
	struct sim_cpu *c = &sim->cpus[cpu];
	int s = bit_highest(c->isr);

	sim->st.eois++;
	if (s < 0) {
		sim->st.eoi_spurious++;
		return;
	}
	if (s != vector)
		sim->st.eoi_mismatch++;
	bit_clear(c->isr, (unsigned int)s);
	/* A level-triggered vector's EOI goes on to the IO-APIC (SDM 11.8.5). */
	if (bit_test(c->tmr, (unsigned int)s))
		sim_wired_eoi_locked(sim, (uint8_t)s);
	sim_cpu_kick_locked(sim, cpu);
}

void sim_eoi_locked(struct umsi_sim *sim, uint8_t vector)
{
	eoi_cpu_locked(sim, sim_current_cpu_locked(sim), vector);
}

/* x86: without a dispatch function the sim ends it; else it must have. */
static void x86_finish_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t v,
			      bool had_fn)
{
	if (!had_fn)
		eoi_cpu_locked(sim, cpu, (uint8_t)v);
	else if (bit_test(sim->cpus[cpu].isr, v))
		sim->st.eoi_missing++;
}

static void cpu_finish_locked(struct umsi_sim *sim, uint32_t cpu, int v,
			      bool had_fn, int ret)
{
	struct sim_cpu *c = &sim->cpus[cpu];

	c->irq_off--;
	sim->ctl->finish(sim, cpu, (uint32_t)v, had_fn);
	sim_wired_done_locked(sim, cpu, (uint32_t)v);
	if (ret == 0) {
		struct sim_rare *r = sim_rare_locked(sim, cpu, (uint32_t)v,
						     true);

		if (r)
			r->unassigned++;
		sim->st.unassigned++;
	}
}

/*
 * The lowest CPU that would take an interrupt now, and its vector; -1 when
 * none would. Only CPUs with something in their IRR are looked at (a
 * bitmap of them), so the cost does not grow with idle CPUs.
 */
static int drain_pick_locked(struct umsi_sim *sim, uint32_t *cpu)
{
	uint32_t words = (sim->ncpus + 63) / 64;

	if (!sim->irr_bits)
		return -1;
	for (uint32_t w = 0; w < words; w++) {
		for (uint64_t m = sim->irr_cpus[w]; m; m &= m - 1) {
			uint32_t c = w * 64 + (uint32_t)__builtin_ctzll(m);
			int v = cpu_next_vector_locked(sim, &sim->cpus[c]);

			if (v >= 0) {
				*cpu = c;
				return v;
			}
		}
	}
	return -1;
}

/*
 * Non-threaded mode: dispatch everything deliverable, lowest CPU first,
 * one interrupt at a time. Re-entered from host calls made by handlers;
 * a CPU inside a handler has its interrupts off, so recursion is bounded
 * by the number of CPUs.
 */
void sim_drain(struct umsi_sim *sim)
{
	if (sim->threaded)
		return;
	for (;;) {
		struct sim_entry e;
		uint32_t cpu = 0, prev;
		int v, ret;

		sim_lock(sim);
		v = drain_pick_locked(sim, &cpu);
		if (v < 0) {
			sim_unlock(sim);
			return;
		}
		cpu_take_locked(sim, cpu, v);
		e = entry_locked(sim);
		prev = sim->cur_cpu;
		sim->cur_cpu = cpu;
		sim_unlock(sim);

		ret = call_dispatch(&e, cpu, v);

		sim_lock(sim);
		sim->cur_cpu = prev;
		cpu_finish_locked(sim, cpu, v, entry_set(&e), ret);
		sim_unlock(sim);
	}
}

/* Threaded mode: one CPU. Runs cross-calls first, then interrupts. */
static void *cpu_thread(void *p)
{
	struct sim_cpu *c = p;
	struct umsi_sim *sim = tls_sim;
	uint32_t cpu = tls_cpu;

	(void)c;
	sim_lock(sim);
	while (!sim->stopping) {
		struct sim_xcall *x = sim->cpus[cpu].xq_head;
		int v;

		if (x) {
			struct sim_cpu *me = &sim->cpus[cpu];

			me->xq_head = x->next;
			if (!me->xq_head)
				me->xq_tail = NULL;
			me->busy = true;
			me->irq_off++;
			sim_unlock(sim);
			x->fn(x->arg);
			sim_lock(sim);
			me->irq_off--;
			me->busy = false;
			x->done = true;
			pthread_cond_broadcast(&sim->xdone_cond);
			continue;
		}
		v = cpu_next_vector_locked(sim, &sim->cpus[cpu]);
		if (v >= 0) {
			struct sim_entry e = entry_locked(sim);
			int ret;

			cpu_take_locked(sim, cpu, v);
			sim->cpus[cpu].busy = true;
			sim_unlock(sim);
			ret = call_dispatch(&e, cpu, v);
			sim_lock(sim);
			sim->cpus[cpu].busy = false;
			cpu_finish_locked(sim, cpu, v, entry_set(&e), ret);
			continue;
		}
		pthread_cond_broadcast(&sim->idle_cond);
		pthread_cond_wait(&sim->cpus[cpu].cond, &sim->mtx);
	}
	sim_unlock(sim);
	return NULL;
}

struct cpu_start {
	struct umsi_sim *sim;
	uint32_t cpu;
};

static void *cpu_thread_start(void *p)
{
	struct cpu_start s = *(struct cpu_start *)p;

	free(p);
	tls_sim = s.sim;
	tls_cpu = s.cpu;
	return cpu_thread(&s.sim->cpus[s.cpu]);
}

int sim_run_on_cpu(struct umsi_sim *sim, uint32_t cpu,
		   void (*fn)(void *arg), void *arg)
{
	struct sim_xcall x = { fn, arg, false, NULL };
	struct sim_cpu *c;

	sim_lock(sim);
	if (cpu >= sim->ncpus || !sim->cpus[cpu].online) {
		sim_unlock(sim);
		return -UMSI_EINVAL;
	}
	c = &sim->cpus[cpu];
	if (!sim->threaded || (tls_sim == sim && tls_cpu == cpu)) {
		/* Switch to the CPU, run with its interrupts off, switch back. */
		uint32_t prev = sim->cur_cpu;

		if (!sim->threaded)
			sim->cur_cpu = cpu;
		c->irq_off++;
		sim_unlock(sim);
		fn(arg);
		sim_lock(sim);
		if (!sim->threaded)
			sim->cur_cpu = prev;
		sim_irq_enable_locked(sim, cpu);
		sim_unlock(sim);
		sim_drain(sim);
		return 0;
	}
	if (c->xq_tail)
		c->xq_tail->next = &x;
	else
		c->xq_head = &x;
	c->xq_tail = &x;
	pthread_cond_signal(&c->cond);
	while (!x.done)
		pthread_cond_wait(&sim->xdone_cond, &sim->mtx);
	sim_unlock(sim);
	return 0;
}

/* ---- Delivery ------------------------------------------------------------- */

int sim_undeliverable_locked(struct umsi_sim *sim, enum umsi_sim_undeliv why,
			     uint64_t address, uint32_t data)
{
	sim->st.undeliverable++;
	sim->st.undeliverable_by[why]++;
	if (why == UMSI_SIM_UNDELIV_STRAY)
		sim->st.stray_dma++;
	sim->st.last_undeliverable.valid = true;
	sim->st.last_undeliverable.address = address;
	sim->st.last_undeliverable.data = data;
	sim->st.last_undeliverable.reason = why;
	return 0;
}

static uint64_t rare_hash(uint64_t key)
{
	return key * 0x9e3779b97f4a7c15ull;
}

struct sim_rare *sim_rare_locked(struct umsi_sim *sim, uint32_t cpu,
				 uint32_t id, bool make)
{
	uint64_t key = ((uint64_t)cpu << 32 | id) + 1;
	size_t i;

	if (sim->rare_cap) {
		for (i = rare_hash(key) & (sim->rare_cap - 1);
		     sim->rare[i].key; i = (i + 1) & (sim->rare_cap - 1))
			if (sim->rare[i].key == key)
				return &sim->rare[i];
	}
	if (!make)
		return NULL;
	/* Grow at half full: the probes stay short. */
	if (2 * (sim->nrare + 1) > sim->rare_cap) {
		size_t cap = sim->rare_cap ? 2 * sim->rare_cap : 64;
		struct sim_rare *t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t k = 0; k < sim->rare_cap; k++) {
			size_t j;

			if (!sim->rare[k].key)
				continue;
			for (j = rare_hash(sim->rare[k].key) & (cap - 1);
			     t[j].key; j = (j + 1) & (cap - 1))
				;
			t[j] = sim->rare[k];
		}
		free(sim->rare);
		sim->rare = t;
		sim->rare_cap = cap;
	}
	for (i = rare_hash(key) & (sim->rare_cap - 1); sim->rare[i].key;
	     i = (i + 1) & (sim->rare_cap - 1))
		;
	sim->rare[i].key = key;
	sim->nrare++;
	return &sim->rare[i];
}

/* Count one in @lo (a counter of (@cpu, @id)); its carry goes to the map. */
static void count16_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
			   uint16_t *lo, bool dispatched)
{
	struct sim_rare *r;

	sim->cpus[cpu].vs_used = true;
	if (++*lo)
		return;
	r = sim_rare_locked(sim, cpu, id, true);
	if (r && dispatched)
		r->dispatched_hi++;
	else if (r)
		r->delivered_hi++;
}

void sim_delivered_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	count16_locked(sim, cpu, id, &sim->cpus[cpu].vs[id].delivered, false);
}

void sim_dispatched_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	count16_locked(sim, cpu, id, &sim->cpus[cpu].vs[id].dispatched, true);
}

void sim_coalesced_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	struct sim_rare *r = sim_rare_locked(sim, cpu, id, true);

	sim->cpus[cpu].vs_used = true;
	if (r)
		r->coalesced++;
}

/* The local APIC of @cpu accepts @vector. Return: 1. */
int sim_lapic_accept_locked(struct umsi_sim *sim, uint32_t cpu,
			    uint8_t vector, bool level)
{
	struct sim_cpu *c = &sim->cpus[cpu];

	c->vs_used = true;
	if (bit_test(c->irr, vector)) {
		sim_coalesced_locked(sim, cpu, vector);
		sim->st.irr_coalesced++;
	} else {
		bit_set(c->irr, vector);
		sim_pending_set_locked(sim, cpu);
		sim_delivered_locked(sim, cpu, vector);
		sim->st.delivered++;
	}
	if (level)
		bit_set(c->tmr, vector);
	else
		bit_clear(c->tmr, vector);
	sim_cpu_kick_locked(sim, cpu);
	return 1;
}

int sim_deliver_phys_locked(struct umsi_sim *sim, uint32_t apic_id,
			    uint8_t vector, bool level, uint64_t address,
			    uint32_t data)
{
	uint32_t bcast = (sim->plat_flags & UMSI_PLAT_X2APIC) ? 0xffffffffu
							      : 0xffu;
	uint32_t cpu;
	int n = 0;

	if (vector < 16)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_VECTOR,
					    address, data);
	if (apic_id == bcast) {
		for (uint32_t i = 0; i < sim->ncpus; i++)
			if (sim->cpus[i].online)
				n += sim_lapic_accept_locked(sim, i, vector,
							     level);
		if (!n)
			return sim_undeliverable_locked(sim,
						    UMSI_SIM_UNDELIV_OFFLINE,
						    address, data);
		return n;
	}
	cpu = sim_cpu_of_apic_locked(sim, apic_id);
	if (cpu == UINT32_MAX)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_NO_CPU,
					    address, data);
	if (!sim->cpus[cpu].online)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_OFFLINE,
					    address, data);
	return sim_lapic_accept_locked(sim, cpu, vector, level);
}

/* Logical destination, flat model: CPU n < 8 has logical ID 1 << n. */
int sim_deliver_logical_locked(struct umsi_sim *sim, uint32_t mask,
			       uint8_t vector, bool lowest, bool level,
			       uint64_t address, uint32_t data)
{
	int n = 0, matched = 0;

	mask &= 0xff;
	for (uint32_t i = 0; i < sim->ncpus && i < 8; i++) {
		if (!(mask & (1u << i)))
			continue;
		matched++;
		if (!sim->cpus[i].online)
			continue;
		n += sim_lapic_accept_locked(sim, i, vector, level);
		if (lowest)
			break;	/* one CPU of the set: the lowest numbered */
	}
	if (!n)
		return sim_undeliverable_locked(sim, matched ?
					    UMSI_SIM_UNDELIV_OFFLINE :
					    UMSI_SIM_UNDELIV_NO_CPU,
					    address, data);
	return n;
}

int sim_msg_write_locked(struct umsi_sim *sim, uint64_t address, uint32_t data)
{
	sim->st.msgs++;
	return sim->ctl->deliver(sim, address, data);
}

/* A message write by requester @rid (an ITS sees it as the DeviceID). */
int sim_msg_write_from_locked(struct umsi_sim *sim, uint32_t rid,
			      uint64_t address, uint32_t data)
{
	uint32_t was = sim->msg_requester;
	int n;

	sim->msg_requester = rid;
	n = sim_msg_write_locked(sim, address, data);
	sim->msg_requester = was;
	return n;
}

/* The x86 model: a message write to the 0xfee window. */
static int x86_deliver_locked(struct umsi_sim *sim, uint64_t address,
			      uint32_t data)
{
	struct umsi_msg m = { address, data };
	struct umsi_x86_msi d;
	int n;

	/* A remapping unit: it takes the message, or lets it by. */
	if (sim_remap_intercept_locked(sim, sim->msg_requester, address, data,
				       &n, NULL, NULL))
		return n;
	umsi_x86_msg_decode(&m, (sim->plat_flags & UMSI_PLAT_EXT_DEST_ID) != 0,
			    &d);
	if (!d.valid)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_STRAY,
					    address, data);
	if (d.remapped) {
		uint32_t apic_id;
		uint8_t vector;
		uint32_t index = d.handle + (d.shv ? d.subhandle : 0u);

		if (!(sim->plat_flags & UMSI_PLAT_IRQ_REMAP) ||
		    sim_remap_lookup_locked(sim, index, &apic_id, &vector))
			return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_REMAP,
						    address, data);
		return sim_deliver_phys_locked(sim, apic_id, vector, false,
					       address, data);
	}
	if (d.delivery != UMSI_X86_DM_FIXED && d.delivery != UMSI_X86_DM_LOWPRI)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_MODE,
					    address, data);
	if (d.vector < 16)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_VECTOR,
					    address, data);
	if (d.logical)
		return sim_deliver_logical_locked(sim, d.dest_id, d.vector,
						  d.delivery ==
						  UMSI_X86_DM_LOWPRI, false,
						  address, data);
	return sim_deliver_phys_locked(sim, d.dest_id, d.vector, false,
				       address, data);
}

/*
 * The x86 model's local APIC registers of @cpu, by xAPIC offset (what the
 * host's eoi, irq_pending and send_ipi reach): EOI (0x0b0, write), IRR (0x200 +
 * 0x10 * i, read), ICR (0x300, write, x2APIC layout: destination << 32 |
 * mode and vector; fixed delivery is all uMSI sends). Other registers
 * read 0 and ignore writes; each is counted as a bad access.
 */
static uint64_t x86_read_locked(struct umsi_sim *sim, uint32_t cpu,
				uint32_t reg)
{
	if (reg >= 0x200 && reg < 0x280 && !(reg & 0xf))
		return (uint32_t)(sim->cpus[cpu].irr[(reg - 0x200) / 0x20] >>
				  ((reg - 0x200) / 0x10 % 2 * 32));
	sim_bad_access_locked(sim, "read of LAPIC register 0x%x", reg);
	return 0;
}

static void x86_write_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t reg,
			     uint64_t val)
{
	uint32_t lo = (uint32_t)val, dest = (uint32_t)(val >> 32), target;

	if (reg == 0x0b0) {
		/* EOI ends the highest vector in service, as a LAPIC does. */
		int v = bit_highest(sim->cpus[cpu].isr);

		eoi_cpu_locked(sim, cpu, v < 0 ? 0 : (uint8_t)v);
		return;
	}
	if (reg == 0x300 && ((lo >> 8) & 7) == UMSI_X86_DM_FIXED &&
	    !(lo & (3u << 18)) && !(lo & (1u << 11))) {
		target = sim_cpu_of_apic_locked(sim, dest);
		if (target != UINT32_MAX && (lo & 0xff) >= 16 &&
		    sim->cpus[target].online) {
			sim_lapic_accept_locked(sim, target, (uint8_t)lo,
						false);
			return;
		}
	}
	sim_bad_access_locked(sim, "write of LAPIC register 0x%x value "
			      "0x%llx", reg, (unsigned long long)val);
}

/* The host's typed operations: IRR bit, EOI, a fixed IPI (ICR). */
static bool x86_pending_locked(struct umsi_sim *sim, uint32_t cpu,
			       uint32_t id)
{
	if (id > 0xff) {
		sim_bad_access_locked(sim, "irq_pending of vector %u", id);
		return false;
	}
	return (x86_read_locked(sim, cpu, 0x200 + 0x10 * (id / 32)) >>
		(id % 32)) & 1;
}

static void x86_eoi_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	(void)id;
	x86_write_locked(sim, cpu, 0x0b0, 0);
}

static void x86_ipi_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t hwid,
			   uint32_t id)
{
	/* Fixed, physical, no shorthand, assert (bit 14). */
	x86_write_locked(sim, cpu, 0x300, (uint64_t)hwid << 32 |
			 (1u << 14) | (id & 0xff));
}

/*
 * Where a message would land, without sending it: the CPU and vector of a
 * physical, fixed (or lowest-priority) message, through the remapping
 * table when remapped. Logical and broadcast messages name no single CPU
 * and are reported with cpu UINT32_MAX.
 */
static bool x86_target_locked(struct umsi_sim *sim, uint64_t address,
			      uint32_t data, uint32_t *cpu, uint32_t *id)
{
	struct umsi_msg m = { address, data };
	struct umsi_x86_msi d;
	uint32_t apic_id;
	uint8_t v = 0, *vector = &v;
	bool ok;

	if (sim_remap_target_locked(sim, sim->msg_requester, address, data,
				    &ok, &apic_id, vector)) {
		if (!ok)
			return false;
		*cpu = apic_id == UINT32_MAX ? UINT32_MAX :
		       sim_cpu_of_apic_locked(sim, apic_id);
		*id = v;
		return true;
	}
	umsi_x86_msg_decode(&m, (sim->plat_flags & UMSI_PLAT_EXT_DEST_ID) != 0,
			    &d);
	if (!d.valid)
		return false;
	if (d.remapped) {
		uint32_t index = d.handle + (d.shv ? d.subhandle : 0u);

		if (!(sim->plat_flags & UMSI_PLAT_IRQ_REMAP) ||
		    sim_remap_lookup_locked(sim, index, &apic_id, vector))
			return false;
	} else {
		if (d.delivery != UMSI_X86_DM_FIXED &&
		    d.delivery != UMSI_X86_DM_LOWPRI)
			return false;
		apic_id = d.dest_id;
		*vector = d.vector;
		if (d.logical) {
			*cpu = UINT32_MAX;
			*id = v;
			return true;
		}
	}
	*cpu = sim_cpu_of_apic_locked(sim, apic_id);
	*id = v;
	return true;
}

/* A fixed IPI of @id (16..255) to an online CPU. */
static int x86_raise_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	if (id < 16 || id > 0xff || !sim->cpus[cpu].online)
		return -UMSI_EINVAL;
	sim_lapic_accept_locked(sim, cpu, (uint8_t)id, false);
	return 0;
}

const struct sim_ctl_model sim_x86_lapic_model = {
	.name = "x86-lapic",
	.read = x86_read_locked,
	.write = x86_write_locked,
	.pending = x86_pending_locked,
	.eoi = x86_eoi_locked,
	.ipi = x86_ipi_locked,
	.deliver = x86_deliver_locked,
	.target = x86_target_locked,
	.next = x86_next_locked,
	.take = x86_take_locked,
	.finish = x86_finish_locked,
	.raise = x86_raise_locked,
	.irr = true,
	.wired = SIM_WIRED_X86,
};

bool sim_msg_target_locked(struct umsi_sim *sim, uint64_t address,
			   uint32_t data, uint32_t *cpu, uint32_t *id)
{
	return sim->ctl->target(sim, address, data, cpu, id);
}

int umsi_sim_msg_write(struct umsi_sim *sim, uint64_t address, uint32_t data)
{
	int n;

	sim_lock(sim);
	n = sim_msg_write_locked(sim, address, data);
	sim_unlock(sim);
	sim_drain(sim);
	return n;
}

int umsi_sim_msg_write_from(struct umsi_sim *sim, uint32_t rid,
			    uint64_t address, uint32_t data)
{
	int n;

	sim_lock(sim);
	n = sim_msg_write_from_locked(sim, rid, address, data);
	sim_unlock(sim);
	sim_drain(sim);
	return n;
}

int umsi_sim_retrigger(struct umsi_sim *sim, uint32_t cpu, uint8_t vector)
{
	return umsi_sim_raise(sim, cpu, vector);
}

int umsi_sim_raise(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	int err = -UMSI_EINVAL;

	sim_lock(sim);
	if (cpu < sim->ncpus)
		err = sim->ctl->raise(sim, cpu, id);
	sim_unlock(sim);
	sim_drain(sim);
	return err;
}

/* ---- Machine --------------------------------------------------------------- */

static void sim_free(struct umsi_sim *sim)
{
	for (size_t i = 0; i < sim->ndevs; i++)
		sim_dev_free(sim->devs[i]);
	free(sim->devs);
	sim_masks_put(sim->masks_last);
	sim_maps_fini(sim);
	sim_host_fini(sim);
	sim_models_fini(sim);
	free(sim->log);
	sim_index_fini(sim);
	free(sim->vec_stats);
	free(sim->rare);
	free(sim->cpus);
	pthread_cond_destroy(&sim->idle_cond);
	pthread_cond_destroy(&sim->xdone_cond);
	pthread_mutex_destroy(&sim->mtx);
	free(sim);
}

static void stop_threads(struct umsi_sim *sim, uint32_t started)
{
	sim_lock(sim);
	sim->stopping = true;
	for (uint32_t i = 0; i < started; i++)
		pthread_cond_signal(&sim->cpus[i].cond);
	sim_unlock(sim);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(sim->cpus[i].thread, NULL);
}

static bool config_valid(const struct umsi_sim_config *cfg)
{
	if (!cfg || cfg->ncpus == 0 || cfg->ncpus > SIM_MAX_CPUS)
		return false;
	/* The local APIC is the core's own; others are models' (sim_models.c). */
	if (cfg->controller != UMSI_SIM_CTL_X86_LAPIC &&
	    !sim_models_controller(cfg->controller))
		return false;
	return true;	/* duplicate APIC IDs: sim_apic_index_init() */
}

struct umsi_sim *umsi_sim_create(const struct umsi_sim_config *cfg)
{
	struct umsi_sim *sim;
	uint32_t started = 0;

	if (!config_valid(cfg))
		return NULL;
	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return NULL;
	pthread_mutex_init(&sim->mtx, NULL);
	pthread_cond_init(&sim->idle_cond, NULL);
	pthread_cond_init(&sim->xdone_cond, NULL);
	sim->threaded = cfg->threaded;
	sim->plat_flags = cfg->plat_flags;
	sim->ctl = &sim_x86_lapic_model;
	sim->nids = 256;
	sim->ncpus = cfg->ncpus;
	sim->msg_requester = UMSI_SIM_NO_REQUESTER;
	sim->next_phys = 0x100000000ull;
	sim->next_mem32 = 0xe0000000u;
	sim->next_mem64 = 0x800000000ull;
	sim->next_io = 0xc000;
	sim->verbose = getenv("UMSI_SIM_VERBOSE") != NULL;
	sim->through_locks = getenv("UMSI_SIM_DISPATCH_THROUGH_LOCKS") != NULL;
	sim->cpus = calloc(cfg->ncpus, sizeof(*sim->cpus));
	sim->irr_cpus = calloc((cfg->ncpus + 63) / 64, sizeof(uint64_t));
	/* The device models (sim_models.c): the controller, which fixes
	 * the identities a CPU has, a remapping unit, the wired inputs. */
	if (!sim->cpus || !sim->irr_cpus || sim_models_init(sim, cfg)) {
		sim_free(sim);
		return NULL;
	}
	sim->vec_stats = calloc((size_t)cfg->ncpus * sim->nids,
				sizeof(*sim->vec_stats));
	if (!sim->vec_stats) {
		sim_free(sim);
		return NULL;
	}
	for (uint32_t i = 0; i < cfg->ncpus; i++) {
		sim->cpus[i].apic_id = cfg->apic_ids ? cfg->apic_ids[i] : i;
		sim->cpus[i].vs = &sim->vec_stats[(size_t)i * sim->nids];
	}
	if (sim_apic_index_init(sim)) {
		sim_free(sim);	/* duplicate APIC IDs, or out of memory */
		return NULL;
	}
	for (uint32_t i = 0; i < cfg->ncpus; i++) {
		sim->cpus[i].online = true;
		pthread_cond_init(&sim->cpus[i].cond, NULL);
	}
	if (sim->threaded) {
		for (; started < cfg->ncpus; started++) {
			struct cpu_start *s = malloc(sizeof(*s));

			if (!s)
				break;
			s->sim = sim;
			s->cpu = started;
			if (pthread_create(&sim->cpus[started].thread, NULL,
					   cpu_thread_start, s)) {
				free(s);
				break;
			}
		}
		if (started < cfg->ncpus) {
			stop_threads(sim, started);
			for (uint32_t i = 0; i < cfg->ncpus; i++)
				pthread_cond_destroy(&sim->cpus[i].cond);
			sim_free(sim);
			return NULL;
		}
	}
	return sim;
}

void umsi_sim_destroy(struct umsi_sim *sim)
{
	if (!sim)
		return;
	if (sim->threaded)
		stop_threads(sim, sim->ncpus);
	for (uint32_t i = 0; i < sim->ncpus; i++)
		pthread_cond_destroy(&sim->cpus[i].cond);
	sim_free(sim);
}

void umsi_sim_set_dispatch(struct umsi_sim *sim,
			   int (*fn)(void *arg, uint32_t cpu, uint8_t vector),
			   void *arg)
{
	sim_lock(sim);
	sim->dispatch = fn;
	sim->dispatch_id = NULL;
	sim->dispatch_arg = arg;
	sim_unlock(sim);
}

void umsi_sim_set_dispatch_id(struct umsi_sim *sim,
			      int (*fn)(void *arg, uint32_t cpu, uint32_t id),
			      void *arg)
{
	sim_lock(sim);
	sim->dispatch = NULL;
	sim->dispatch_id = fn;
	sim->dispatch_arg = arg;
	sim_unlock(sim);
}

int umsi_sim_set_current_cpu(struct umsi_sim *sim, uint32_t cpu)
{
	if (cpu >= sim->ncpus)
		return -UMSI_EINVAL;
	if (sim->threaded) {
		tls_sim = sim;
		tls_cpu = cpu;
		return 0;
	}
	sim_lock(sim);
	sim->cur_cpu = cpu;
	sim_unlock(sim);
	sim_drain(sim);
	return 0;
}

uint32_t umsi_sim_current_cpu(struct umsi_sim *sim)
{
	uint32_t cpu;

	sim_lock(sim);
	cpu = sim_current_cpu_locked(sim);
	sim_unlock(sim);
	return cpu;
}

uint32_t umsi_sim_ncpus(struct umsi_sim *sim)
{
	return sim->ncpus;
}

int umsi_sim_cpu_set_online(struct umsi_sim *sim, uint32_t cpu, bool online)
{
	if (cpu >= sim->ncpus)
		return -UMSI_EINVAL;
	sim_lock(sim);
	sim->cpus[cpu].online = online;
	sim_cpu_kick_locked(sim, cpu);
	sim_unlock(sim);
	sim_drain(sim);
	return 0;
}

int umsi_sim_cpu_irq_disable(struct umsi_sim *sim, uint32_t cpu)
{
	if (cpu >= sim->ncpus)
		return -UMSI_EINVAL;
	sim_lock(sim);
	sim->cpus[cpu].irq_off++;
	sim_unlock(sim);
	return 0;
}

int umsi_sim_cpu_irq_enable(struct umsi_sim *sim, uint32_t cpu)
{
	int err = 0;

	if (cpu >= sim->ncpus)
		return -UMSI_EINVAL;
	sim_lock(sim);
	if (sim->cpus[cpu].irq_off == 0)
		err = -UMSI_EINVAL;
	else
		sim_irq_enable_locked(sim, cpu);
	sim_unlock(sim);
	sim_drain(sim);
	return err;
}

void umsi_sim_set_dispatch_through_locks(struct umsi_sim *sim, bool on)
{
	sim_lock(sim);
	sim->through_locks = on;
	sim_unlock(sim);
	sim_drain(sim);
}

bool umsi_sim_cpu_irq_enabled(struct umsi_sim *sim, uint32_t cpu)
{
	bool on;

	if (cpu >= sim->ncpus)
		return false;
	sim_lock(sim);
	on = sim->cpus[cpu].online && sim->cpus[cpu].irq_off == 0 &&
	     (sim->threaded || !sim->locks_held || sim->through_locks);
	sim_unlock(sim);
	return on;
}

bool umsi_sim_irr_test(struct umsi_sim *sim, uint32_t cpu, uint8_t vector)
{
	return umsi_sim_id_pending(sim, cpu, vector);
}

bool umsi_sim_id_pending(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	bool b;

	if (cpu >= sim->ncpus || id >= sim->nids)
		return false;
	sim_lock(sim);
	if (sim->ctl->irr)
		b = bit_test(sim->cpus[cpu].irr, id);
	else
		b = bit_test(sim->cpus[cpu].eip, id);
	sim_unlock(sim);
	return b;
}

bool umsi_sim_isr_test(struct umsi_sim *sim, uint32_t cpu, uint8_t vector)
{
	bool b;

	if (cpu >= sim->ncpus)
		return false;
	sim_lock(sim);
	b = bit_test(sim->cpus[cpu].isr, vector);
	sim_unlock(sim);
	return b;
}

bool sim_irr_test_current_locked(struct umsi_sim *sim, uint8_t vector)
{
	return bit_test(sim->cpus[sim_current_cpu_locked(sim)].irr, vector);
}

void umsi_sim_eoi(struct umsi_sim *sim, uint8_t vector)
{
	sim_lock(sim);
	sim_eoi_locked(sim, vector);
	/* As the host's eoi: a kernel's IO-APIC EOI under AMD-Vi too. */
	sim_wired_host_eoi_locked(sim, sim_current_cpu_locked(sim), vector);
	sim_unlock(sim);
	sim_drain(sim);
}

static bool machine_busy_locked(struct umsi_sim *sim)
{
	for (uint32_t i = 0; i < sim->ncpus; i++) {
		struct sim_cpu *c = &sim->cpus[i];

		if (c->busy || c->xq_head || cpu_next_vector_locked(sim, c) >= 0)
			return true;
	}
	return false;
}

void umsi_sim_quiesce(struct umsi_sim *sim)
{
	if (!sim->threaded) {
		sim_drain(sim);
		return;
	}
	sim_lock(sim);
	while (machine_busy_locked(sim))
		pthread_cond_wait(&sim->idle_cond, &sim->mtx);
	sim_unlock(sim);
}

/* ---- Statistics, clock -------------------------------------------------------- */

void umsi_sim_stats(struct umsi_sim *sim, struct umsi_sim_stats *out)
{
	sim_lock(sim);
	*out = sim->st;
	sim_unlock(sim);
}

void umsi_sim_stats_reset(struct umsi_sim *sim)
{
	sim_lock(sim);
	memset(&sim->st, 0, sizeof(sim->st));
	for (uint32_t i = 0; i < sim->ncpus; i++) {
		if (sim->cpus[i].vs_used)
			memset(sim->cpus[i].vs, 0,
			       sim->nids * sizeof(*sim->cpus[i].vs));
		sim->cpus[i].vs_used = false;
	}
	free(sim->rare);
	sim->rare = NULL;
	sim->nrare = sim->rare_cap = 0;
	for (size_t i = 0; i < sim->ndevs; i++)
		memset(&sim->devs[i]->st, 0, sizeof(sim->devs[i]->st));
	sim_models_stats_reset_locked(sim);
	sim_unlock(sim);
}

uint64_t umsi_sim_host_calls(struct umsi_sim *sim)
{
	uint64_t n;

	sim_lock(sim);
	n = sim->st.host_calls;
	sim_unlock(sim);
	return n;
}

int umsi_sim_vec_stats(struct umsi_sim *sim, uint32_t cpu, uint8_t vector,
		       struct umsi_sim_vec_stats *out)
{
	return umsi_sim_id_stats(sim, cpu, vector, out);
}

int umsi_sim_id_stats(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
		      struct umsi_sim_vec_stats *out)
{
	const struct sim_rare *r;

	if (cpu >= sim->ncpus || id >= sim->nids)
		return -UMSI_EINVAL;
	sim_lock(sim);
	r = sim_rare_locked(sim, cpu, id, false);
	out->delivered = sim->cpus[cpu].vs[id].delivered |
			 (r ? (uint64_t)r->delivered_hi << 16 : 0);
	out->dispatched = sim->cpus[cpu].vs[id].dispatched |
			  (r ? (uint64_t)r->dispatched_hi << 16 : 0);
	out->coalesced = r ? r->coalesced : 0;
	out->unassigned = r ? r->unassigned : 0;
	sim_unlock(sim);
	return 0;
}

void umsi_sim_leaks(struct umsi_sim *sim, struct umsi_sim_leaks *out)
{
	sim_lock(sim);
	*out = sim->lk;
	sim_unlock(sim);
}

bool umsi_sim_leaks_equal(const struct umsi_sim_leaks *a,
			  const struct umsi_sim_leaks *b)
{
	return a->allocs == b->allocs && a->alloc_bytes == b->alloc_bytes &&
	       a->phys_allocs == b->phys_allocs &&
	       a->phys_bytes == b->phys_bytes && a->maps == b->maps && a->locks == b->locks &&
	       a->locks_held == b->locks_held;
}

void umsi_sim_fail_at(struct umsi_sim *sim, uint64_t k, int err)
{
	sim_lock(sim);
	sim->fail_countdown = k;
	sim->fail_err = err > 0 ? -err : err;
	sim_unlock(sim);
}

void umsi_sim_set_hook(struct umsi_sim *sim,
		       void (*fn)(void *arg, enum umsi_sim_op op), void *arg)
{
	sim_lock(sim);
	sim->hook = fn;
	sim->hook_arg = arg;
	sim_unlock(sim);
}

void umsi_sim_clock_advance(struct umsi_sim *sim, uint64_t ns)
{
	sim_lock(sim);
	sim->clock += ns;
	sim_unlock(sim);
}

uint64_t umsi_sim_clock_now(struct umsi_sim *sim)
{
	uint64_t t;

	sim_lock(sim);
	t = sim->clock;
	sim_unlock(sim);
	return t;
}

void umsi_sim_clock_set_tick(struct umsi_sim *sim, uint64_t ns)
{
	sim_lock(sim);
	sim->tick = ns;
	sim_unlock(sim);
}
