/* SPDX-License-Identifier: MIT */
/*
 * glue.c - the kernel's use of uMSI: create the system on kernel/arch/x86_64/host.c,
 * register every PCI function (fresh from reset or not), let the drivers
 * and `umsi.probe=all` take vectors as the probe policy shares them
 * (glue_share.c), run the fire/migrate/dynamic exercises, and report the
 * result as UMSI JSON lines on COM1 (glue_report.c; format in
 * kernel/README.md).
 */
#include <umsi/compat.h>
#include <umsi/irq.h>
#include <umsi/pci.h>

#include "kernel.h"
#include "drivers/drivers.h"
#include "glue.h"
#include "host.h"
#include "pci.h"
#include "smp.h"
#include "umsi_glue.h"
#include "pciehp.h"

static const struct kdriver *const drivers[] = {
	&edu_driver, &e1000e_driver, &nvme_driver, &xhci_driver, &virtio_driver,
};

static struct umsi_system *sys;
/* The glue's one state (glue.h): handed to every part, not shared. */
static struct glue glue;
static bool failed;

struct umsi_system *kernel_umsi_system(void);

struct umsi_system *kernel_umsi_system(void)
{
	return sys;
}

bool umsi_glue_failed(void)
{
	return failed;
}

void glue_fail(void)
{
	failed = true;
}

static void glue_dispatch(uint32_t cpu, uint32_t id)
{
	umsi_dispatch(sys, cpu, id);
}

static int probe_handler(uint32_t irq, void *dev_id)
{
	struct probe_vec *pv = dev_id;
	struct umsi_irq_info info;

	pv->count++;
	if (!umsi_irq_get_info(sys, irq, &info) && info.cpu != this_cpu_id())
		pv->wrong_cpu++;
	return UMSI_IRQ_HANDLED;
}

/* Does umsi.probe=all serve @g (a function with MSI or MSI-X)? */
bool glue_probe_wanted(struct glue_dev *g)
{
	struct umsi_pci_info info;

	umsi_pci_get_info(g->udev, &info);
	return info.msi_cap || info.msix_cap;
}

/*
 * umsi.probe=all: every function with MSI or MSI-X gets the vectors the
 * probe policy granted it (glue_share.c), MSI-X first, then MSI, then
 * INTx, through the driver API.
 */
void glue_probe_one(struct glue_dev *g)
{
	struct umsi_pci_info info;
	int n;

	umsi_pci_get_info(g->udev, &info);
	g->probed = true;
	n = umsi_pci_alloc_irq_vectors(g->udev, 1, g->granted ? g->granted : 1,
				       UMSI_PCI_IRQ_ALL_TYPES);
	if (n < 0) {
		g->probe_err = n;
		return;
	}
	g->nvec = (uint32_t)n;
	g->vecs = kalloc(sizeof(*g->vecs) * (size_t)n);
	if (!g->vecs)
		panic("glue: out of memory");
	for (uint32_t i = 0; i < g->nvec; i++) {
		int irq = umsi_pci_irq_vector(g->udev, i);
		int err;

		if (irq < 0) {
			kprintf("umsi: %06x vector %u: no IRQ (%s)\n",
				info.bdf, i, umsi_strerror(irq));
			failed = true;
			continue;
		}
		g->vecs[i].irq = (uint32_t)irq;
		err = umsi_pci_request_irq(g->udev, i, probe_handler,
					   UMSI_IRQF_SHARED, "probe", &g->vecs[i]);
		if (err) {
			kprintf("umsi: request_irq %d: %s\n", irq,
				umsi_strerror(err));
			failed = true;
		}
	}
}

/* Is driver @name enabled by umsi.drivers=all or a comma list? */
static bool driver_enabled(const char *list, const char *name)
{
	return cmdline_list_has(list, name);
}

/* The kernel driver `umsi.drivers=` @list gives @d, or NULL. */
const struct kdriver *glue_driver_for(const struct pci_dev *d,
				       const char *list)
{
	for (size_t i = 0; i < ARRAY_SIZE(drivers); i++) {
		const struct kdriver *drv = drivers[i];

		bool ids = drv->match ? drv->match(d) :
			   drv->vendor == d->vendor && drv->device == d->device;

		if (ids && driver_enabled(list, drv->name))
			return drv;
	}
	return NULL;
}

uint32_t kdrv_budget(struct kdev *kd, uint32_t min, uint32_t max)
{
	return share_driver_budget(kd->glue, min, max, kd->drv->admin);
}

bool glue_claim(struct glue_dev *g, const struct kdriver *drv, void *priv)
{
	struct pci_dev *d = g->pci;
	struct kdev *kd;
	int n;

	kd = kalloc(sizeof(*kd));
	if (!kd)
		panic("glue: out of memory");
	kd->drv = drv;
	kd->pci = d;
	kd->udev = g->udev;
	kd->sys = sys;
	kd->glue = g;
	kd->priv = priv;
	n = drv->probe(kd);
	share_served(g);
	if (n < 0) {
		g->probe_err = n;
		g->probed = true;
		kprintf("umsi: %s %02x:%02x.%u: probe failed: %s\n",
			drv->name, PCI_BUS(d->bdf), PCI_DEV(d->bdf),
			PCI_FN(d->bdf), umsi_strerror(n));
		/* Quiet the device and give its vectors back before the
		 * driver's memory goes: a handler may still be attached. */
		if (drv->stop)
			drv->stop(kd);
		umsi_pci_free_irq_vectors(g->udev);
		if (drv->release)
			drv->release(kd);
		if (kd->vecs)
			kfree(kd->vecs, sizeof(*kd->vecs) * kd->cap);
		kfree(kd, sizeof(*kd));
		return false;
	}
	g->kd = kd;
	g->nvec = kd->nvec;
	return true;
}

static void claim(struct glue_dev *g, const char *list)
{
	const struct kdriver *drv = glue_driver_for(g->pci, list);

	if (drv)
		glue_claim(g, drv, NULL);
}

static bool wait_count(volatile uint64_t *count, uint64_t want, uint64_t us)
{
	uint64_t end = clock_ns() + us * 1000;

	while (*count < want && clock_ns() < end)
		cpu_relax();
	return *count >= want;
}

/*
 * Wait for @v's events, but give up early (false) once @kd's function
 * reads all-ones: it was pulled out. Checked every millisecond, since a
 * configuration read is not free.
 */
static bool wait_event_or_gone(struct kdev *kd, struct kvec *v, uint64_t us)
{
	uint64_t end = clock_ns() + us * 1000;

	while (clock_ns() < end) {
		if (wait_count(&v->count, v->sent, 1000))
			return true;
		if (kdrv_gone(kd))
			return false;
	}
	return v->count >= v->sent;
}

/*
 * Make every claimed device raise @events interrupts on each of its
 * vectors, one outstanding at a time, and report per vector what was
 * sent and what the handler saw. Exact: every event one handler call, on
 * the CPU uMSI assigned, and nothing more after a quiet spell.
 */
/*
 * Vector @i of @g belongs to a managed IRQ that is shut down (every CPU
 * of its mask is offline): raise one event into it, which must not
 * arrive; the device keeps it pending behind the mask. It must arrive
 * once a CPU of the mask is back (the next glue_fire() waits for it).
 */
static void hold(struct glue_dev *g, uint32_t i, const struct umsi_irq_info *ii)
{
	struct kdev *kd = g->kd;
	struct kvec *v = &kd->vecs[i];
	uint64_t before = v->count;
	int pending;

	if (!v->outstanding) {
		kdrv_expect(v);
		kd->drv->raise(kd, i);
	}
	udelay(20000);
	pending = umsi_pci_irq_pending(kd->udev, i);
	kprintf("UMSI {\"event\":\"held\",\"bdf\":\"0000:%02x:%02x.%u\","
		"\"driver\":\"%s\",\"index\":%u,\"irq\":%u,\"cpu\":%u,"
		"\"sent\":%lu,\"received\":%lu,\"pending\":%d,\"ok\":%s}\n",
		PCI_BUS(kd->pci->bdf), PCI_DEV(kd->pci->bdf), PCI_FN(kd->pci->bdf),
		kd->drv->name, ii->hwirq, v->irq, ii->cpu, v->sent, v->count,
		pending, v->count == before && pending == 1 ? "true" : "false");
	if (v->count != before || pending != 1)
		failed = true;
}

void glue_fire(struct glue_dev *g, uint32_t events)
{
	struct kdev *kd = g->kd;
	uint32_t nfire = kd->nfire && kd->nfire < kd->nvec ? kd->nfire : kd->nvec;

	if (!kd->drv->raise)
		return;	/* a service (pcieport): its events are not ours to cause */

	for (uint32_t i = 0; i < nfire; i++) {
		struct kvec *v = &kd->vecs[i];
		struct umsi_irq_info ii = { 0 };
		bool ok = true;

		umsi_irq_get_info(sys, v->irq, &ii);
		if (ii.managed && !smp_cpu_online(ii.cpu)) {
			hold(g, i, &ii);
			continue;
		}
		/* An event held while the IRQ was shut down arrives first. */
		if (v->outstanding)
			ok = wait_count(&v->count, v->sent, 2000000);
		for (uint32_t e = 0; e < events && ok; e++) {
			kdrv_expect(v);
			kd->drv->raise(kd, i);
			ok = wait_event_or_gone(kd, v, 2000000);
			if (!ok && kdrv_gone(kd)) {
				/* Surprise removal, seen by the driver. */
				glue_function_gone(g);
				return;
			}
		}
		udelay(2000);	/* a duplicate would arrive by now */
		umsi_irq_get_info(sys, v->irq, &ii);
		ok = v->count == v->sent && !v->wrong_cpu;
		kprintf("UMSI {\"event\":\"fire\",\"bdf\":\"0000:%02x:%02x.%u\","
			"\"driver\":\"%s\",\"index\":%u,\"irq\":%u,\"cpu\":%u,"
			"\"vector\":%u,\"sent\":%lu,\"received\":%lu,"
			"\"wrong_cpu\":%lu,\"not_mine\":%lu,\"ok\":%s}\n",
			PCI_BUS(kd->pci->bdf), PCI_DEV(kd->pci->bdf),
			PCI_FN(kd->pci->bdf), kd->drv->name,
			umsi_pci_mode(kd->udev) == UMSI_MODE_INTX ? v->n : ii.hwirq, v->irq,
			ii.cpu, ii.vector, v->sent, v->count, v->wrong_cpu,
			v->none, ok ? "true" : "false");
		if (!ok)
			failed = true;
	}
}

/*
 * Live migration under fire: raise an event on vector 0 of @g, move the
 * IRQ to the next online CPU at once (so the message is often in flight
 * or pending while it moves), then wait for the event. @moves times.
 * Every event must still produce exactly one handler call; a call that
 * lands on the CPU the IRQ is leaving is legitimate here and reported as
 * on_old_cpu, not as an error.
 */
static void migrate(struct glue_dev *g, uint32_t moves)
{
	struct kdev *kd = g->kd;
	struct umsi_pci_info pi;
	struct kvec *v = &kd->vecs[0];
	uint64_t words[UMSI_CPUMASK_WORDS(KERNEL_MAX_CPUS)];
	struct umsi_cpumask mask = { words, smp_ncpus };
	uint64_t wrong0 = v->wrong_cpu, again = 0, errors = 0, lost = 0;
	uint32_t cpu = 0, moved = 0;
	struct umsi_irq_info ii = { 0 };
	int first_err = 0;

	/*
	 * A multi-message MSI block shares one address: without interrupt
	 * remapping its vectors cannot move one at a time (uMSI answers
	 * -UMSI_ENOTSUP, as Linux does), so such a device is not moved.
	 */
	umsi_pci_get_info(kd->udev, &pi);
	umsi_irq_get_info(sys, v->irq, &ii);
	/* A managed IRQ's affinity is fixed at allocation (-UMSI_EPERM). */
	if ((pi.mode == UMSI_MODE_MSI && pi.msi_reserved > 1) || ii.managed) {
		kprintf("UMSI {\"event\":\"migrate\",\"bdf\":\"0000:%02x:%02x.%u\","
			"\"driver\":\"%s\",\"skipped\":\"%s\"}\n",
			PCI_BUS(kd->pci->bdf), PCI_DEV(kd->pci->bdf),
			PCI_FN(kd->pci->bdf), kd->drv->name,
			ii.managed ? "managed" : "multi-message MSI");
		return;
	}
	for (uint32_t i = 0; i < moves; i++) {
		int err;

		do {
			cpu = (cpu + 1) % smp_ncpus;
		} while (!smp_cpu_online(cpu));
		memset(words, 0, sizeof(words));
		words[cpu / 64] = 1ull << (cpu % 64);
		kdrv_expect(v);
		kd->drv->raise(kd, 0);
		err = umsi_irq_set_affinity(sys, v->irq, &mask);
		if (err == -UMSI_EAGAIN) {
			again++;
		} else if (err) {
			errors++;
			if (!first_err)
				first_err = err;
		} else {
			moved++;
		}
		if (!wait_count(&v->count, v->sent, 2000000)) {
			lost++;
			v->count = v->sent;	/* keep going, counted as lost */
		}
	}
	udelay(2000);
	umsi_irq_get_info(sys, v->irq, &ii);
	bool ok = !lost && !errors && v->count == v->sent;

	kprintf("UMSI {\"event\":\"migrate\",\"bdf\":\"0000:%02x:%02x.%u\","
		"\"driver\":\"%s\",\"irq\":%u,\"moves\":%u,\"moved\":%u,"
		"\"eagain\":%lu,\"errors\":%lu,\"first_error\":\"%s\","
		"\"sent\":%lu,\"received\":%lu,\"lost\":%lu,"
		"\"on_old_cpu\":%lu,\"not_mine\":%lu,\"cpu\":%u,\"vector\":%u,"
		"\"ok\":%s}\n",
		PCI_BUS(kd->pci->bdf), PCI_DEV(kd->pci->bdf), PCI_FN(kd->pci->bdf),
		kd->drv->name, v->irq, moves, moved, again, errors,
		first_err ? umsi_strerror(first_err) : "", v->sent, v->count,
		lost, v->wrong_cpu - wrong0, v->none, ii.cpu, ii.vector,
		ok ? "true" : "false");
	if (!ok)
		failed = true;
	v->wrong_cpu = wrong0;	/* legitimate during moves; fire starts clean */
}

/*
 * Steps: with `umsi.steps`, the kernel stops after printing a step line
 * until a key arrives (x86: on the PS/2 keyboard, which the harness
 * presses with the monitor's `sendkey ret` after inspecting the machine;
 * arch_key_pressed()).
 */
static bool steps_wait;

void glue_step(const char *name)
{
	if (steps_wait)
		arch_key_drain(1000);
	kprintf("UMSI {\"event\":\"step\",\"step\":\"%s\"}\n", name);
	if (!steps_wait)
		return;
	while (!arch_key_pressed())
		cpu_relax();
	arch_key_drain(50000);	/* the rest of the press and the release */
}

/*
 * The seed's dynamic MSI-X API on hardware (umsi.dynamic=K): a device
 * running MSI-X gets K more vectors with umsi_msix_alloc_vectors() while
 * it fires, then gives them back with umsi_msix_free_vectors(). Each
 * stage is reported (device line, step, fire lines) so the harness can
 * compare the MSI-X table with it.
 */
static void dynamic(struct glue_dev *g, uint32_t more,
		    uint32_t events)
{
	struct kdev *kd = g->kd;
	uint32_t irqs[32], base = kd->nvec;
	int err;

	if (more > ARRAY_SIZE(irqs) || base + more > kd->cap) {
		kprintf("UMSI {\"event\":\"error\",\"reason\":\"dynamic: no room for %u more\"}\n", more);
		failed = true;
		return;
	}
	glue_report(g, false);
	glue_step("start");
	glue_fire(g, events);

	err = umsi_msix_alloc_vectors(kd->udev, irqs, more);
	if (err) {
		kprintf("UMSI {\"event\":\"error\",\"reason\":\"msix_alloc_vectors:%s\"}\n",
			umsi_strerror(err));
		failed = true;
		return;
	}
	for (uint32_t i = 0; i < more; i++) {
		err = kdrv_add_vector(kd, irqs[i]);
		if (err) {
			kprintf("UMSI {\"event\":\"error\",\"reason\":\"request_irq:%s\"}\n",
				umsi_strerror(err));
			failed = true;
			return;
		}
	}
	g->nvec = kd->nvec;
	glue_report(g, false);
	glue_step("grown");
	glue_fire(g, events);

	for (uint32_t i = 0; i < more; i++)
		umsi_free_irq(sys, irqs[i], &kd->vecs[base + i]);
	err = umsi_msix_free_vectors(kd->udev, irqs, more);
	if (err) {
		kprintf("UMSI {\"event\":\"error\",\"reason\":\"msix_free_vectors:%s\"}\n",
			umsi_strerror(err));
		failed = true;
	}
	kd->nvec = g->nvec = base;
	glue_report(g, false);
	glue_step("shrunk");
	glue_fire(g, events);
}

/* uMSI's own /proc/interrupts-like and vector tables, between markers. */
static void print_tables(void)
{
	size_t len = 65536;
	char *buf = kalloc(len);

	if (!buf)
		return;
	umsi_format_interrupts(sys, buf, len);
	kprintf("TABLE interrupts\n");
	console_write(buf);
	kprintf("TABLE end\n");
	umsi_format_vectors(sys, buf, len);
	kprintf("TABLE vectors\n");
	console_write(buf);
	kprintf("TABLE end\n");
	kfree(buf, len);
}

/*
 * Register every function with uMSI, telling it which are fresh from
 * reset (pcireset.c): their MSI-X set-up then skips masking the unused
 * table entries, which reset left masked.
 */
static void add_functions(struct glue *gl)
{
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct pci_dev *d = &pci_devs[i];
		struct umsi_pci_dev *parent =
			d->parent >= 0 ? gl->devs[d->parent].udev : NULL;
		uint32_t flags = d->fresh != PCI_FRESH_NO ? UMSI_PCI_ADD_FRESH : 0;
		int err;

		gl->devs[i].pci = d;
		err = umsi_pci_add(sys, d->bdf, parent, flags, &gl->devs[i].udev);
		if (err) {
			kprintf("umsi: pci_add %02x:%02x.%u: %s\n",
				PCI_BUS(d->bdf), PCI_DEV(d->bdf), PCI_FN(d->bdf),
				umsi_strerror(err));
			gl->devs[i].udev = NULL;
		}
	}
}

/*
 * Drivers claim their functions (`umsi.drivers=`), then umsi.probe=all
 * serves every other function with MSI or MSI-X, the vectors shared as
 * glue_share.c says.
 */
static void serve(struct glue *gl)
{
	static struct glue_dev *plan[PCI_MAX_DEVS];
	const char *dlist = gl->cfg.have_dlist ? gl->cfg.dlist : NULL;
	bool probe_all = gl->cfg.probe_all;
	uint32_t n = 0;

	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct glue_dev *g = &gl->devs[i];

		g->to_serve = g->udev && !g->kd &&
			((dlist && glue_driver_for(&pci_devs[i], dlist)) ||
			 (probe_all && glue_probe_wanted(g)));
	}
	share_begin(gl);
	for (uint32_t i = 0; dlist && i < pci_ndevs; i++) {
		if (gl->devs[i].udev && !gl->devs[i].kd)
			claim(&gl->devs[i], dlist);
	}
	for (uint32_t i = 0; probe_all && i < pci_ndevs; i++) {
		struct glue_dev *g = &gl->devs[i];

		if (g->udev && !g->kd && !g->probed && glue_probe_wanted(g))
			plan[n++] = g;
	}
	share_probe_plan(plan, n);
	for (uint32_t i = 0; i < n; i++) {
		glue_probe_one(plan[i]);
		share_served(plan[i]);
	}
}

/* Device lines of every function: the state the machine is in now. */
void glue_report_all(struct glue *gl)
{
	glue_report_start();
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		if (pci_devs[i].present && gl->devs[i].udev)
			glue_report(&gl->devs[i], true);
	}
}

/* Fire every claimed device (umsi.fire=N), then its driver's own check. */
void glue_fire_all(struct glue *gl)
{
	if (!gl->cfg.have_fire)
		return;
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct kdev *kd = gl->devs[i].kd;

		if (!kd || !pci_devs[i].present || !kd->drv->raise)
			continue;
		glue_fire(&gl->devs[i], gl->cfg.fire);
		if (gl->devs[i].kd && kd->drv->check && !kd->drv->check(kd))
			failed = true;
	}
}

/*
 * A numeric umsi.* parameter: true with *@out when present and a number
 * from 0 to @max; a value that is not (too long, not a number, past
 * 2^64, past @max) is reported and ignored, never wrapped or cut.
 */
bool glue_cmdline_number(const char *key, uint64_t max, uint64_t *out)
{
	char val[32];
	const char *end;
	uint64_t v;

	if (!cmdline_value(key, val, sizeof(val)))
		return false;
	if (strlen(val) < sizeof(val) - 1 && kstrtou64(val, &end, 0, &v) &&
	    !*end && v <= max) {
		*out = v;
		return true;
	}
	kprintf("umsi: %s=%s: not a number from 0 to %llu; ignored\n", key,
		val, (unsigned long long)max);
	return false;
}

static void read_settings(struct glue_settings *c)
{
	char val[16];
	uint64_t v = 0;

	c->have_dlist = cmdline_value("umsi.drivers", c->dlist,
				      sizeof(c->dlist)) != NULL;
	c->probe_all = cmdline_value("umsi.probe", val, sizeof(val)) &&
		       !strcmp(val, "all");
	c->have_fire = glue_cmdline_number("umsi.fire", 100000, &v);
	c->fire = c->have_fire ? (uint32_t)v : 0;
	steps_wait = cmdline_flag("umsi.steps");
}

/* umsi.dynamic=N: the first MSI-X device a driver claimed grows by N. */
static void ex_dynamic(struct glue *gl)
{
	char val[16];
	uint64_t more = 0;

	if (!cmdline_value("umsi.dynamic", val, sizeof(val)))
		return;
	(void)glue_cmdline_number("umsi.dynamic", 2048, &more);
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		if (gl->devs[i].kd &&
		    umsi_pci_mode(gl->devs[i].udev) == UMSI_MODE_MSIX) {
			dynamic(&gl->devs[i], (uint32_t)more,
				gl->cfg.have_fire ? gl->cfg.fire : 10);
			break;
		}
	}
}

/* umsi.migrate=N: every vector of every driven device moves N times. */
static void ex_migrate(struct glue *gl)
{
	char val[16];
	uint64_t moves = 0;

	if (!cmdline_value("umsi.migrate", val, sizeof(val)))
		return;
	(void)glue_cmdline_number("umsi.migrate", 1000000, &moves);
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		if (gl->devs[i].kd && gl->devs[i].kd->nvec &&
		    gl->devs[i].kd->drv->raise)
			migrate(&gl->devs[i], (uint32_t)moves);
	}
}

/* umsi.forge=1 (glue_forge.c). */
static void ex_forge(struct glue *gl)
{
	char val[16];

	if (cmdline_value("umsi.forge", val, sizeof(val)) && strcmp(val, "0"))
		glue_forge(gl);
}

/*
 * Slot events already queued (a card waiting in an unpowered slot):
 * served now, so that the ready line counts what they set up.
 */
static void ex_pending_events(struct glue *gl)
{
	(void)gl;
	if (umsi_glue_work_pending())
		umsi_glue_work();
}

static void ex_storm_aid(struct glue *gl)
{
	(void)gl;
	pciehp_storm_aid();
}

/* umsi.tables: /proc/interrupts-like tables. */
static void ex_tables(struct glue *gl)
{
	(void)gl;
	if (cmdline_flag("umsi.tables"))
		print_tables();
}

/*
 * What the kernel does with uMSI once the functions are served, in order:
 * each exercise reads its own umsi.* parameters and does nothing without
 * them. Device lines come after the others (they show the state the
 * machine is left in), CPUs leaving and coming back last (they print
 * their own device lines).
 */
static const struct glue_exercise {
	const char *name;
	void (*run)(struct glue *gl);
} exercises[] = {
	{ "dynamic", ex_dynamic },		/* umsi.dynamic=N */
	{ "migrate", ex_migrate },		/* umsi.migrate=N */
	{ "fire", glue_fire_all },		/* umsi.fire=N */
	{ "forge", ex_forge },			/* umsi.forge=1 (x86) */
	{ "sriov", glue_sriov },		/* umsi.sriov=BB:DD.F:N */
	{ "pending slot events", ex_pending_events },
	{ "hot-plug storm aid", ex_storm_aid },	/* umsi.hp_storm=N */
	{ "tables", ex_tables },		/* umsi.tables */
	{ "device lines", glue_report_all },
	{ "cpu events", glue_cpu_events },	/* umsi.offline=, umsi.online= */
};

void umsi_glue_run(void)
{
	struct glue *gl = &glue;
	struct umsi_config cfg = { 0 };
	int err;

	host_set_debug(cmdline_flag("umsi.debug"));
	read_settings(&gl->cfg);
	arch_umsi_config(&cfg);
	err = umsi_system_create(&kernel_host_ops, NULL, &cfg, &sys);
	/* MSI policy is the PCI layer's: pci_nomsi, device_nomsi=, ... */
	if (!err && cmdline_get())
		(void)umsi_policy_parse(sys, cmdline_get());
	if (err) {
		kprintf("umsi: system_create failed: %s\n", umsi_strerror(err));
		kprintf("UMSI {\"event\":\"error\",\"reason\":\"system_create:%s\"}\n",
			umsi_strerror(err));
		failed = true;
		return;
	}
	irq_dispatch_hook = glue_dispatch;

	add_functions(gl);
	pciehp_init(gl);
	serve(gl);
	for (size_t i = 0; i < ARRAY_SIZE(exercises); i++)
		exercises[i].run(gl);
}

/* The boot CPU's work loop: slot events, then surprise removals. */
void umsi_glue_work(void)
{
	glue_work_begin();
	pciehp_work();
	glue_reclaim_gone(&glue);
}
