/* SPDX-License-Identifier: MIT */
/*
 * own_pci_host.c - uMSI in a kernel that owns its PCI layer, its IRQ
 * numbers and its EOI, through the message-level API (umsi/source.h).
 *
 * The "kernel" here:
 *  - programs MSI-X itself: Message Control, Command, and each table
 *    entry (address, data, Vector Control) from its write_msg, mask and
 *    unmask callbacks; uMSI never touches the device;
 *  - numbers IRQs itself (a fixed layout: IRQ = 0x100 + slot) and gets
 *    its register frame in every handler (umsi_dispatch_ctx);
 *  - ends every interrupt in its own entry path (umsi_config.kernel_eoi:
 *    the host has no eoi operation at all);
 *  - allocates targets per call and frees a subset.
 * The machine is uMSI's simulator (a 4-CPU x86, then the same with a
 * VT-d remapping unit), so every claim is checked against what the
 * device holds and where its messages land. Each check prints "ok" or
 * "FAIL"; the exit status is the number of failures.
 *
 *   make build/examples/own_pci_host && build/examples/own_pci_host
 */
#include <stdio.h>
#include <string.h>

#include <sim/umsi_sim.h>
#include <umsi/ctl.h>
#include <umsi/pci.h>
#include <umsi/source.h>

#define FN       UMSI_BDF(0, 0, 3, 0)   /* 00:03.0: requester ID 0x0018 */
#define NENT     8
#define IRQ_BASE 0x100

static int failures;

#define CHECK(cond, ...) do {						\
	bool ok_ = (cond);						\
									\
	printf("%s - ", ok_ ? "ok" : "FAIL");				\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	failures += !ok_;						\
} while (0)

/* ---- the kernel's PCI layer: it writes the device ---------------------- */

struct kdev {
	struct umsi_sim *sim;
	uint64_t table;                 /* the MSI-X table (BAR 0) */
	uint16_t msix_cap;
	unsigned int writes;            /* write_msg calls */
	unsigned int accesses;          /* its config and MMIO accesses */
};

static void entry_write(struct kdev *k, uint32_t i, uint32_t off, uint32_t v)
{
	k->accesses++;
	umsi_sim_mmio_write32(k->sim, k->table + 16 * i + off, v);
}

/* Masked while the address and data change, as the spec asks. */
static int k_write_msg(void *ctx, uint32_t index, const struct umsi_msg *m)
{
	struct kdev *k = ctx;
	uint32_t ctrl = umsi_sim_mmio_read32(k->sim, k->table + 16 * index + 12);

	k->accesses++;

	entry_write(k, index, 12, ctrl | 1);
	entry_write(k, index, 0, (uint32_t)m->address);
	entry_write(k, index, 4, (uint32_t)(m->address >> 32));
	entry_write(k, index, 8, m->data);
	entry_write(k, index, 12, ctrl);
	k->writes++;
	return 0;
}

static int k_mask(void *ctx, uint32_t index)
{
	entry_write(ctx, index, 12, 1);
	return 0;
}

static int k_unmask(void *ctx, uint32_t index)
{
	entry_write(ctx, index, 12, 0);
	return 0;
}

static const struct umsi_source_ops kops = {
	.write_msg = k_write_msg, .mask = k_mask, .unmask = k_unmask,
};

/* MSI-X on, Bus Master on: the kernel's own set-up of the function. */
static void k_enable_msix(struct kdev *k)
{
	uint32_t cmd = umsi_sim_cfg_read(k->sim, FN, 0x04, 2);

	umsi_sim_cfg_write(k->sim, FN, 0x04, 2, cmd | 0x6);
	umsi_sim_cfg_write(k->sim, FN, k->msix_cap + 2, 2, 0x8000);
	k->accesses += 3;
}

/* ---- the kernel's interrupt entry: its frame, its EOI ----------------- */

struct frame {
	uint32_t cpu;
	uint64_t rip;
};

struct machine {
	struct umsi_sim *sim;
	struct umsi_system *sys;
};

static int k_entry(void *arg, uint32_t cpu, uint8_t vector)
{
	struct machine *m = arg;
	struct frame f = { cpu, 0xffffffff81000000ull + vector };
	int r = umsi_dispatch_ctx(m->sys, cpu, vector, &f);

	if (vector != 0xff)
		umsi_sim_eoi(m->sim, vector);   /* the kernel's own EOI */
	return r;
}

static uint32_t last_irq, last_cpu, seen;
static const struct frame *last_frame;

static int handler(uint32_t irq, void *dev_id, void *ctx)
{
	const struct frame *f = ctx;

	(void)dev_id;
	last_irq = irq;
	last_frame = f;
	last_cpu = f ? f->cpu : ~0u;
	seen++;
	return UMSI_IRQ_HANDLED;
}

/* Fire slot @k; true when irq @irq ran on the CPU uMSI says it targets. */
static bool fires_on_target(struct machine *m, uint32_t k, uint32_t irq)
{
	struct umsi_irq_info info;
	uint32_t before = seen;

	if (umsi_irq_get_info(m->sys, irq, &info))
		return false;
	umsi_sim_fire(m->sim, FN, k);
	return seen == before + 1 && last_irq == irq && last_frame &&
	       last_cpu == info.cpu;
}

/* The device's entry holds what uMSI says it must. */
static bool entry_current(struct machine *m, struct umsi_source *src,
			  uint32_t k, uint32_t irq)
{
	struct umsi_msg msg;
	uint64_t a;
	uint32_t d, c;

	return !umsi_source_msg(src, irq, &msg) &&
	       !umsi_sim_msix_entry_get(m->sim, FN, k, &a, &d, &c) &&
	       a == msg.address && d == msg.data;
}

static const struct umsi_sim_dev_desc dev = {
	.vendor = 0x8086, .device = 0x10d3, .class_code = 0x020000,
	.bars = { [0] = { .size = 0x4000, .is64 = true } },
	.msix = { .present = true, .nentries = NENT, .table_bar = 0,
		  .table_offset = 0, .pba_bar = 0, .pba_offset = 0x2000 },
};

static int run(bool vtd)
{
	struct umsi_sim_config sc = { .ncpus = 4, .vtd = vtd };
	struct umsi_vtd_config vc = { .reg_base = UMSI_SIM_VTD_BASE };
	struct umsi_config cfg = { .kernel_eoi = true, .max_irqs = 0x200 };
	struct umsi_host_ops ops = *umsi_sim_host_ops();
	struct umsi_source_config scfg = { .requester_id = 0x0018, .bdf = FN,
					   .nslots = NENT, .ops = &kops };
	struct umsi_sim_stats st;
	struct umsi_source *src;
	struct machine m;
	struct kdev k;
	uint32_t want[3] = { IRQ_BASE + 0, IRQ_BASE + 1 }, irqs[3], w0, cpu;
	struct umsi_target_req req = { .count = 2, .index = UMSI_SLOT_ANY,
				       .irqs = want };
	struct umsi_msg msg;
	uint64_t one = 1;
	struct umsi_cpumask cpu0 = { &one, 4 };
	const char *tag = vtd ? "vt-d" : "x86";

	printf("# %s: 4 CPUs, the kernel programs MSI-X, numbers IRQs from "
	       "0x%x, ends interrupts itself\n", tag, IRQ_BASE);
	ops.eoi = NULL;                 /* the kernel's, not uMSI's */
	if (vtd) {
		cfg.ctl = &umsi_ctl_x86_vtd;
		cfg.ctl_config = &vc;
	}
	m.sim = umsi_sim_create(&sc);
	if (!m.sim) {
		printf("FAIL - %s: no simulated machine\n", tag);
		return 1;
	}
	if (umsi_system_create(&ops, m.sim, &cfg, &m.sys)) {
		printf("FAIL - %s: umsi_system_create: %s\n", tag,
		       umsi_sim_log_text(m.sim));
		return 1;
	}
	umsi_sim_set_dispatch(m.sim, k_entry, &m);
	umsi_sim_add_device(m.sim, FN, &dev);
	k.sim = m.sim;
	k.table = umsi_sim_bar_addr(m.sim, FN, 0);
	k.msix_cap = 0xa0;
	k.writes = 0;
	k.accesses = 0;
	scfg.ctx = &k;
	CHECK(!umsi_source_create(m.sys, &scfg, &src), "%s: source created", tag);

	/* Per call: two targets under the kernel's numbers, then one more. */
	umsi_sim_stats_reset(m.sim);
	CHECK(umsi_source_alloc(src, &req, irqs) == 2 && irqs[0] == want[0] &&
	      irqs[1] == want[1], "%s: IRQs 0x%x, 0x%x are the kernel's numbers",
	      tag, irqs[0], irqs[1]);
	want[2] = IRQ_BASE + 5;
	req = (struct umsi_target_req){ .count = 1, .index = 5,
					.irqs = &want[2] };
	CHECK(umsi_source_alloc(src, &req, &irqs[2]) == 1 && irqs[2] == want[2],
	      "%s: slot 5 added later as IRQ 0x%x", tag, irqs[2]);
	umsi_sim_stats(m.sim, &st);
	/* The device's accesses are the kernel's; uMSI's MMIO under VT-d is
	 * the remapping unit's invalidation queue. */
	CHECK(st.op_calls[UMSI_SIM_OP_CFG_READ] +
	      st.op_calls[UMSI_SIM_OP_CFG_WRITE] +
	      st.op_calls[UMSI_SIM_OP_MMIO_MAP] == 0 &&
	      (vtd || st.op_calls[UMSI_SIM_OP_MMIO_WRITE32] +
		      st.op_calls[UMSI_SIM_OP_MMIO_READ32] == 0) &&
	      k.writes == 3,
	      "%s: uMSI made no configuration access and mapped nothing "
	      "(config %llu, MMIO %llu%s); the kernel wrote 3 messages", tag,
	      (unsigned long long)(st.op_calls[UMSI_SIM_OP_CFG_READ] +
				   st.op_calls[UMSI_SIM_OP_CFG_WRITE]),
	      (unsigned long long)(st.op_calls[UMSI_SIM_OP_MMIO_READ32] +
				   st.op_calls[UMSI_SIM_OP_MMIO_WRITE32]),
	      vtd ? ": the unit's invalidation queue" : "");
	k_enable_msix(&k);
	if (!vtd)
		printf("# set-up of 3 MSI-X targets through the message-level "
		       "API: %u device accesses, all the kernel's\n", k.accesses);
	CHECK(entry_current(&m, src, 0, irqs[0]) &&
	      entry_current(&m, src, 1, irqs[1]) &&
	      entry_current(&m, src, 5, irqs[2]),
	      "%s: every entry holds its composed message", tag);
	if (vtd)
		CHECK(!umsi_source_msg(src, irqs[0], &msg) &&
		      (msg.address & 0x10),
		      "vt-d: the message is remappable (address 0x%llx, a "
		      "handle, not a CPU)", (unsigned long long)msg.address);
	for (uint32_t i = 0; i < 3; i++)
		umsi_request_irq_ctx(m.sys, irqs[i], handler, 0, "own", &k);
	CHECK(fires_on_target(&m, 0, irqs[0]) &&
	      fires_on_target(&m, 1, irqs[1]) &&
	      fires_on_target(&m, 5, irqs[2]),
	      "%s: slots 0, 1, 5 reach their IRQs on their CPUs, the handler "
	      "gets the kernel's frame", tag);

	/* A move: through write_msg (x86), or the remapping entry (VT-d). */
	w0 = k.writes;
	CHECK(!umsi_irq_set_affinity(m.sys, irqs[2], &cpu0) &&
	      fires_on_target(&m, 5, irqs[2]) && last_cpu == 0,
	      "%s: IRQ 0x%x moved to CPU 0 and fires there", tag, irqs[2]);
	CHECK(vtd ? k.writes == w0 : k.writes == w0 + 1,
	      "%s: the move wrote the device %u time(s) through the kernel's "
	      "callback%s", tag, k.writes - w0,
	      vtd ? " (the handle stays, the unit's entry changed)" : "");
	CHECK(entry_current(&m, src, 5, irqs[2]),
	      "%s: slot 5 holds the message of the new target", tag);

	/* A CPU goes offline: the IRQs on it leave, the device follows. */
	{
		struct umsi_irq_info info;

		umsi_irq_get_info(m.sys, irqs[0], &info);
		cpu = info.cpu;
	}
	umsi_sim_cpu_set_online(m.sim, cpu, false);
	CHECK(!umsi_cpu_offline(m.sys, cpu) && fires_on_target(&m, 0, irqs[0]) &&
	      last_cpu != cpu && entry_current(&m, src, 0, irqs[0]),
	      "%s: CPU %u offline: IRQ 0x%x now fires on CPU %u", tag, cpu,
	      irqs[0], last_cpu);

	/* A subset goes: slot 1 (masked by the kernel first), 0 and 5 stay. */
	k_mask(&k, 1);
	CHECK(!umsi_source_free(src, &irqs[1], 1, 0) &&
	      fires_on_target(&m, 0, irqs[0]) && fires_on_target(&m, 5, irqs[2]),
	      "%s: IRQ 0x%x freed, the other two still fire", tag, irqs[1]);
	CHECK(umsi_source_destroy(src) == -UMSI_EBUSY,
	      "%s: a source with targets is not destroyed", tag);
	k_mask(&k, 0);
	k_mask(&k, 5);
	umsi_source_free(src, irqs, 1, 0);
	umsi_source_free(src, &irqs[2], 1, 0);
	CHECK(!umsi_source_destroy(src), "%s: all freed, source gone", tag);
	umsi_sim_stats(m.sim, &st);
	CHECK(st.op_calls[UMSI_SIM_OP_EOI] == 0 && st.eoi_missing == 0 &&
	      st.eois > 0, "%s: %llu interrupts ended by the kernel, none by "
	      "uMSI, none left in service", tag, (unsigned long long)st.eois);
	umsi_system_destroy(m.sys);
	umsi_sim_destroy(m.sim);
	return 0;
}

/* The same device set up through the driver API: what uMSI accesses. */
static void driver_api_cost(void)
{
	struct umsi_sim_config sc = { .ncpus = 4 };
	struct umsi_sim *sim = umsi_sim_create(&sc);
	struct umsi_system *sys;
	struct umsi_pci_dev *pd;
	struct umsi_sim_stats st;
	uint64_t n;

	if (!sim || umsi_system_create(umsi_sim_host_ops(), sim, NULL, &sys))
		return;
	umsi_sim_add_device(sim, FN, &dev);
	umsi_pci_add(sys, FN, NULL, UMSI_PCI_ADD_FRESH, &pd);
	umsi_sim_stats_reset(sim);
	umsi_pci_alloc_irq_vectors(pd, 3, 3, UMSI_PCI_IRQ_MSIX);
	umsi_sim_stats(sim, &st);
	n = st.op_calls[UMSI_SIM_OP_CFG_READ] + st.op_calls[UMSI_SIM_OP_CFG_WRITE] +
	    st.op_calls[UMSI_SIM_OP_MMIO_READ32] +
	    st.op_calls[UMSI_SIM_OP_MMIO_WRITE32];
	printf("# the same set-up through the driver API "
	       "(umsi_pci_alloc_irq_vectors, a fresh function): %llu device "
	       "accesses, all uMSI's\n", (unsigned long long)n);
	umsi_pci_free_irq_vectors(pd);
	umsi_pci_remove(sys, pd);
	umsi_system_destroy(sys);
	umsi_sim_destroy(sim);
}

int main(void)
{
	driver_api_cost();
	if (run(false) || run(true))
		failures++;
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures;
}
