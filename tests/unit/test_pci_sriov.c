/* SPDX-License-Identifier: MIT */
/*
 * SR-IOV (umsi_pci_sriov_enable/disable): virtual functions come and go
 * through uMSI on each back end (x86, IMSIC, ITS, VT-d: the -imsic, -its
 * and -vtd runs). The simulator's PF makes its VFs when VF Enable is set
 * and takes them away when it is cleared, as hardware does; every check is
 * what a device or CPU would see: where a VF's message lands, what its
 * MSI-X table and the PF's capability hold, what the allocator has left.
 */
#include "test_pci_fixture.h"
#include <umsi/source.h>

#define PF      UMSI_BDF(0, 0, 4, 0)
#define NVF     4
#define VF_MSIX 4

/* QEMU's nvme with SR-IOV: VF BAR0 of 16 KiB holding a 4-entry table. */
static struct umsi_sim_dev_desc pf_desc(uint16_t total, uint16_t offset,
					uint16_t stride)
{
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_sim_sriov_desc *sr = &d.sriov;

	sr->present = true;
	sr->total_vfs = total;
	sr->first_offset = offset;
	sr->stride = stride;
	sr->vf_device = 0x0010;
	sr->vf_bars[0].size = 0x4000;
	sr->vf_bars[0].is64 = true;
	sr->vf_msix.present = true;
	sr->vf_msix.nentries = VF_MSIX;
	sr->vf_msix.table_bar = 0;
	sr->vf_msix.table_offset = 0x2000;
	sr->vf_msix.pba_bar = 0;
	sr->vf_msix.pba_offset = 0x3000;
	return d;
}

static uint16_t sriov_reg(struct machine *m, umsi_bdf_t pf, uint16_t reg)
{
	return cfg16(m, pf, (uint16_t)(UMSI_PCIE_EXT_CAP_START + reg));
}

static umsi_bdf_t vf_bdf(umsi_bdf_t pf, uint16_t offset, uint16_t stride,
			 unsigned int i)
{
	return pf + offset + i * stride;
}

/* No VF left: VF Enable and NumVFs clear, nothing answers at the VFs. */
static void assert_vfs_gone(struct machine *m, umsi_bdf_t pf, uint16_t offset,
			    uint16_t stride, unsigned int n)
{
	assert_int_equal(sriov_reg(m, pf, UMSI_SRIOV_CTRL) &
			 (UMSI_SRIOV_CTRL_VFE | UMSI_SRIOV_CTRL_MSE), 0);
	assert_int_equal(sriov_reg(m, pf, UMSI_SRIOV_NUM_VF), 0);
	for (unsigned int i = 0; i < n; i++) {
		umsi_bdf_t b = vf_bdf(pf, offset, stride, i);

		assert_null(umsi_pci_find(m->sys, b));
		assert_int_equal(umsi_sim_cfg_read(m->sim, b, UMSI_PCI_REVISION,
						   4), 0xffffffffu);
	}
}

/*
 * Every vector @dev holds gets a handler and fires once from its own
 * entry: handled once, on the CPU uMSI chose for it.
 */
static void fire_each(struct machine *m, struct umsi_pci_dev *dev,
		      const char *name)
{
	struct umsi_pci_info info;

	umsi_pci_get_info(dev, &info);
	for (uint32_t k = 0; k < info.nvec; k++) {
		int irq = umsi_pci_irq_vector(dev, k);
		struct umsi_irq_info ii;
		uint64_t h;

		assert_true(irq >= 0);
		assert_int_equal(umsi_pci_request_irq(dev, k, fx_handler, 0,
						      name, m), 0);
		assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq, &ii),
				 0);
		h = m->handled[irq];
		assert_int_equal(umsi_sim_fire(m->sim, info.bdf, k),
				 UMSI_SIM_FIRE_SENT);
		umsi_sim_quiesce(m->sim);
		assert_int_equal(m->handled[irq], h + 1);
		assert_int_equal(m->last_cpu[irq], ii.cpu);
	}
}

/* Each VF's entries fire on the CPU uMSI chose, by the VF's own ID. */
static void vfs_fire(struct machine *m, struct umsi_pci_dev *pf)
{
	for (uint16_t i = 0; i < NVF; i++) {
		struct umsi_pci_dev *vf = umsi_pci_sriov_vf(pf, i);
		struct umsi_pci_info info;

		assert_non_null(vf);
		umsi_pci_get_info(vf, &info);
		assert_int_equal(umsi_pci_alloc_irq_vectors(vf, VF_MSIX,
				VF_MSIX, UMSI_PCI_IRQ_MSIX), VF_MSIX);
		assert_true(msix_enabled(m, info.bdf));
		fire_each(m, vf, "vf");
	}
}

/* Enabled: the VFs are functions at PF + offset + i * stride. */
static void vfs_are_functions_with_their_own_ids(void **s)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc d = pf_desc(8, 1, 1);
	struct umsi_pci_dev *pf = plug(m, PF, &d, UMSI_PCI_ADD_FRESH);
	struct snapshot before = snap(m), after;
	struct umsi_pci_sriov_info si;
	struct umsi_pci_info info;

	(void)s;
	assert_int_equal(umsi_pci_sriov_get_info(pf, &si), 0);
	assert_int_equal(si.total_vfs, 8);
	assert_int_equal(si.num_vfs, 0);
	assert_int_equal(umsi_pci_sriov_enable(pf, NVF, 0), 0);
	/* The specification's 100 ms, through the host's sleep. */
	assert_true(sstats(m).slept_us >= 100000);
	assert_int_equal(sriov_reg(m, PF, UMSI_SRIOV_NUM_VF), NVF);
	assert_true(sriov_reg(m, PF, UMSI_SRIOV_CTRL) & UMSI_SRIOV_CTRL_VFE);
	assert_true(sriov_reg(m, PF, UMSI_SRIOV_CTRL) & UMSI_SRIOV_CTRL_MSE);
	assert_int_equal(umsi_pci_sriov_enable(pf, 1, 0), -UMSI_EBUSY);
	assert_int_equal(umsi_pci_sriov_get_info(pf, &si), 0);
	assert_int_equal(si.num_vfs, NVF);
	assert_int_equal(si.first, PF + 1);
	assert_int_equal(si.stride, 1);
	assert_int_equal(si.bar_size[0], 0x4000);
	assert_true(si.bar_is64[0]);
	umsi_pci_get_info(pf, &info);
	assert_int_equal(info.num_vfs, NVF);
	for (uint16_t i = 0; i < NVF; i++) {
		struct umsi_pci_dev *vf = umsi_pci_sriov_vf(pf, i);

		assert_ptr_equal(vf, umsi_pci_find(m->sys, PF + 1 + i));
		umsi_pci_get_info(vf, &info);
		assert_true(info.is_vf);
		assert_int_equal(info.pf, PF);
		assert_int_equal(info.vf_index, i);
		/* The hardware reads 0xffff; uMSI names the PF's vendor. */
		assert_int_equal(cfg16(m, info.bdf, 0), 0xffff);
		assert_int_equal(info.vendor, 0x1b36);
		assert_int_equal(info.device, 0x0010);
		assert_int_equal(info.msix_max, VF_MSIX);
		assert_null(info.msix_reason);
		assert_int_equal(info.intx_pin, 0);
	}
	assert_null(umsi_pci_sriov_vf(pf, NVF));
	vfs_fire(m, pf);
	umsi_pci_sriov_disable(pf, 0);
	assert_true(sstats(m).slept_us >= 1100000);
	assert_vfs_gone(m, PF, 1, 1, NVF);
	after = snap(m);
	assert_same(&before, &after);
	umsi_pci_remove(m->sys, pf);
	machine_free_checked(m, NULL);
}

/* 100 enable/disable cycles, vectors in use each time: nothing leaks. */
static void hundred_cycles_leave_nothing(void **s)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc d = pf_desc(NVF, 2, 2);
	struct umsi_pci_dev *pf = plug(m, PF, &d, UMSI_PCI_ADD_FRESH);
	struct snapshot before = snap(m), after;

	(void)s;
	for (int c = 0; c < 100; c++) {
		assert_int_equal(umsi_pci_sriov_enable(pf, NVF,
						       UMSI_SRIOV_NOWAIT), 0);
		assert_non_null(umsi_pci_find(m->sys, PF + 2 + 2 * (NVF - 1)));
		if (c % 10 == 0)
			vfs_fire(m, pf);
		else
			for (uint16_t i = 0; i < NVF; i++)
				assert_int_equal(umsi_pci_alloc_irq_vectors(
					umsi_pci_sriov_vf(pf, i), 1, VF_MSIX,
					UMSI_PCI_IRQ_MSIX), VF_MSIX);
		/* Every third cycle one VF goes first, as a driver's unbind. */
		if (c % 3 == 0)
			umsi_pci_remove(m->sys, umsi_pci_sriov_vf(pf, 1));
		umsi_pci_sriov_disable(pf, UMSI_SRIOV_NOWAIT);
		assert_vfs_gone(m, PF, 2, 2, NVF);
		after = snap(m);
		assert_same(&before, &after);
	}
	/* Removing the PF takes its VFs first. */
	assert_int_equal(umsi_pci_sriov_enable(pf, NVF, UMSI_SRIOV_NOWAIT), 0);
	vfs_fire(m, pf);
	umsi_pci_remove(m->sys, pf);
	assert_null(umsi_pci_find(m->sys, PF + 2));
	assert_false(msix_enabled(m, PF + 2));
	machine_free_checked(m, NULL);
}

/* A hostile capability: refused with its reason, nothing left behind. */
static void refused(struct machine *m, struct umsi_pci_dev *pf, uint16_t n,
		    int err, const char *why)
{
	struct snapshot before = snap(m), after;
	struct umsi_pci_info info;

	umsi_pci_get_info(pf, &info);
	umsi_sim_log_clear(m->sim);
	assert_int_equal(umsi_pci_sriov_enable(pf, n, UMSI_SRIOV_NOWAIT), err);
	if (!strstr(umsi_sim_log_text(m->sim), why))
		fail_msg("no log line with \"%s\" in:\n%s", why,
			 umsi_sim_log_text(m->sim));
	assert_int_equal(sriov_reg(m, info.bdf,
				   UMSI_SRIOV_NUM_VF), 0);
	after = snap(m);
	assert_same(&before, &after);
}

static void hostile_capabilities_are_refused(void **s)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d;
	struct umsi_pci_dev *pf, *rp;
	uint8_t *raw;

	(void)s;
	/* First VF Offset 0: VF 0 would be the PF. */
	d = pf_desc(4, 0, 1);
	pf = plug(m, UMSI_BDF(0, 0, 4, 0), &d, UMSI_PCI_ADD_FRESH);
	refused(m, pf, 1, -UMSI_EINVAL, "First VF Offset is 0");
	/* NumVFs 0 and above TotalVFs. */
	umsi_pci_remove(m->sys, pf);
	d = pf_desc(4, 1, 0);
	pf = plug(m, UMSI_BDF(0, 0, 5, 0), &d, UMSI_PCI_ADD_FRESH);
	refused(m, pf, 0, -UMSI_EINVAL, "NumVFs of 0");
	refused(m, pf, 5, -UMSI_ERANGE, "above TotalVFs");
	/* Stride 0: every VF one ID. One VF is fine. */
	refused(m, pf, 2, -UMSI_EINVAL, "VF Stride is 0");
	assert_int_equal(umsi_pci_sriov_enable(pf, 1, UMSI_SRIOV_NOWAIT), 0);
	umsi_pci_sriov_disable(pf, UMSI_SRIOV_NOWAIT);
	umsi_pci_remove(m->sys, pf);
	/* Routing IDs past bus 255. */
	d = pf_desc(8, 0x100, 0x80);
	pf = plug(m, UMSI_BDF(0, 0xff, 0, 0), &d, UMSI_PCI_ADD_FRESH);
	refused(m, pf, 8, -UMSI_ERANGE, "past bus 255");
	umsi_pci_remove(m->sys, pf);
	/* Behind a root port decoding bus 1 only, VFs on bus 2; bus 1 ok. */
	{
		struct umsi_sim_dev_desc b = fx_bridge_desc(1, 4, false);

		rp = plug(m, UMSI_BDF(0, 0, 0x1c, 0), &b, UMSI_PCI_ADD_FRESH);
	}
	d = pf_desc(4, 0x100, 1);
	pf = plug_under(m, UMSI_BDF(0, 1, 0, 0), &d, rp);
	refused(m, pf, 2, -UMSI_ERANGE, "outside the ones the PF's bridge");
	umsi_pci_remove(m->sys, pf);
	assert_int_equal(umsi_sim_remove_device(m->sim, UMSI_BDF(0, 1, 0, 0)),
			 0);
	d = pf_desc(4, 8, 1);
	pf = plug_under(m, UMSI_BDF(0, 1, 0, 0), &d, rp);
	assert_int_equal(umsi_pci_sriov_enable(pf, 4, UMSI_SRIOV_NOWAIT), 0);
	umsi_pci_sriov_disable(pf, UMSI_SRIOV_NOWAIT);
	/* VF BAR unassigned (0), then VF BARs overlapping. */
	raw = umsi_sim_cfg_raw(m->sim, UMSI_BDF(0, 1, 0, 0));
	{
		uint8_t save[8];
		uint16_t bar = UMSI_PCIE_EXT_CAP_START + UMSI_SRIOV_BAR;

		memcpy(save, raw + bar, 8);
		memset(raw + bar, 0, 8);
		raw[bar] = 0x04;	/* 64-bit, address 0 */
		refused(m, pf, 2, -UMSI_EINVAL, "unassigned");
		memcpy(raw + bar, save, 8);
	}
	umsi_pci_remove(m->sys, pf);
	umsi_pci_remove(m->sys, rp);
	/* Two VF BARs whose ranges meet. */
	d = pf_desc(4, 1, 1);
	d.sriov.vf_bars[2].size = 0x4000;
	d.sriov.vf_bars[2].is64 = true;
	pf = plug(m, UMSI_BDF(0, 0, 6, 0), &d, UMSI_PCI_ADD_FRESH);
	raw = umsi_sim_cfg_raw(m->sim, UMSI_BDF(0, 0, 6, 0));
	{
		uint16_t b0 = UMSI_PCIE_EXT_CAP_START + UMSI_SRIOV_BAR;
		uint32_t lo;

		memcpy(&lo, raw + b0, 4);
		lo += 2 * 0x4000;	/* where VF 2's BAR0 is */
		memcpy(raw + b0 + 8, &lo, 4);
		memcpy(raw + b0 + 12, raw + b0 + 4, 4);
		refused(m, pf, 4, -UMSI_EINVAL, "two VF BARs overlap");
		/* One VF: the ranges no longer meet. */
		assert_int_equal(umsi_pci_sriov_enable(pf, 1, UMSI_SRIOV_NOWAIT),
				 0);
		umsi_pci_sriov_disable(pf, UMSI_SRIOV_NOWAIT);
	}
	/* VFs already enabled by someone else. */
	assert_int_equal(umsi_sim_cfg_write(m->sim, UMSI_BDF(0, 0, 6, 0),
			 UMSI_PCIE_EXT_CAP_START + UMSI_SRIOV_CTRL, 2,
			 UMSI_SRIOV_CTRL_VFE), 0);
	refused(m, pf, 1, -UMSI_EBUSY, "already enabled");
	assert_int_equal(umsi_sim_cfg_write(m->sim, UMSI_BDF(0, 0, 6, 0),
			 UMSI_PCIE_EXT_CAP_START + UMSI_SRIOV_CTRL, 2, 0), 0);
	umsi_pci_remove(m->sys, pf);
	/* No capability at all. */
	d = nvme_desc();
	pf = plug(m, UMSI_BDF(0, 0, 7, 0), &d, UMSI_PCI_ADD_FRESH);
	assert_int_equal(umsi_pci_sriov_enable(pf, 1, 0), -UMSI_ENOENT);
	umsi_pci_remove(m->sys, pf);
	machine_free_checked(m, NULL);
}

/* A function already registered where a VF would be. */
static void a_taken_address_is_refused(void **s)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = pf_desc(4, 1, 1), e = nvme_desc();
	struct umsi_pci_dev *pf = plug(m, PF, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *other;

	(void)s;
	e.pcie.present = false;
	other = plug(m, PF + 2, &e, UMSI_PCI_ADD_FRESH);
	refused(m, pf, 4, -UMSI_EEXIST, "already registered");
	umsi_pci_remove(m->sys, other);
	umsi_pci_remove(m->sys, pf);
	machine_free(m);
}

/* Every fallible host call of an enable failing in turn: nothing left. */
static void every_failed_host_call_leaves_nothing(void **s)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc d = pf_desc(NVF, 1, 1);
	struct umsi_pci_dev *pf = plug(m, PF, &d, UMSI_PCI_ADD_FRESH);
	struct snapshot before = snap(m), after;
	uint64_t n, k;
	int failed = 0, ret;

	(void)s;
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_sriov_enable(pf, NVF, UMSI_SRIOV_NOWAIT), 0);
	n = sstats(m).fallible_calls;
	umsi_pci_sriov_disable(pf, UMSI_SRIOV_NOWAIT);
	assert_true(n > 20);
	for (k = 1; k <= n; k++) {
		umsi_sim_fail_at(m->sim, k, -UMSI_EIO);
		ret = umsi_pci_sriov_enable(pf, NVF, UMSI_SRIOV_NOWAIT);
		umsi_sim_fail_at(m->sim, 0, 0);
		if (ret < 0) {
			failed++;
			assert_vfs_gone(m, PF, 1, 1, NVF);
		} else {
			/* A failure the library recovered from (a retried
			 * restore): the VFs are whole and work. */
			vfs_fire(m, pf);
			umsi_pci_sriov_disable(pf, UMSI_SRIOV_NOWAIT);
		}
		after = snap(m);
		assert_same(&before, &after);
	}
	assert_true(failed > 0);
	/*
	 * A VF's allocation (its Table Size read again first): each host
	 * call failing in turn leaves MSI-X off and nothing allocated.
	 */
	assert_int_equal(umsi_pci_sriov_enable(pf, NVF, UMSI_SRIOV_NOWAIT), 0);
	{
		struct umsi_pci_dev *vf = umsi_pci_sriov_vf(pf, 0);
		struct umsi_pci_info info;
		struct snapshot up = snap(m), now;

		umsi_pci_get_info(vf, &info);
		umsi_sim_stats_reset(m->sim);
		assert_int_equal(umsi_pci_alloc_irq_vectors(vf, VF_MSIX, VF_MSIX,
					UMSI_PCI_IRQ_MSIX), VF_MSIX);
		n = sstats(m).fallible_calls;
		umsi_pci_free_irq_vectors(vf);
		failed = 0;
		for (k = 1; k <= n; k++) {
			umsi_sim_fail_at(m->sim, k, -UMSI_EIO);
			ret = umsi_pci_alloc_irq_vectors(vf, VF_MSIX, VF_MSIX,
							 UMSI_PCI_IRQ_MSIX);
			umsi_sim_fail_at(m->sim, 0, 0);
			if (ret < 0) {
				failed++;
				assert_false(msix_enabled(m, info.bdf));
			} else {
				fire_each(m, vf, "vf");
				umsi_pci_free_irq_vectors(vf);
			}
			now = snap(m);
			assert_same(&up, &now);
		}
		assert_true(failed > 0);
	}
	umsi_pci_sriov_disable(pf, UMSI_SRIOV_NOWAIT);
	umsi_pci_remove(m->sys, pf);
	machine_free(m);
}

/* device_nomsi= names a VF by the PF's vendor and the VF Device ID. */
static void policy_applies_to_vfs(void **s)
{
	struct machine *m = machine_new(2, 0, "device_nomsi=0x00771b36");
	struct umsi_sim_dev_desc d = pf_desc(2, 1, 1);
	struct umsi_pci_dev *pf, *vf;
	struct umsi_pci_info info;

	(void)s;
	d.sriov.vf_device = 0x0077;
	pf = plug(m, PF, &d, UMSI_PCI_ADD_FRESH);
	assert_int_equal(umsi_pci_sriov_enable(pf, 2, UMSI_SRIOV_NOWAIT), 0);
	vf = umsi_pci_sriov_vf(pf, 0);
	umsi_pci_get_info(vf, &info);
	assert_string_equal(info.reason, "policy:device_nomsi");
	/* No INTx on a VF either: nothing to fall back to. */
	assert_true(umsi_pci_alloc_irq_vectors(vf, 1, 1, UMSI_PCI_IRQ_MSIX |
					       UMSI_PCI_IRQ_INTX) < 0);
	assert_false(msix_enabled(m, info.bdf));
	/* The PF itself is not denied. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(pf, 1, 2,
						    UMSI_PCI_IRQ_MSIX), 2);
	umsi_pci_remove(m->sys, pf);
	machine_free(m);
}

/* The message-level API on a VF: its requester ID carries it. */
struct kvf {
	struct umsi_msg slot[VF_MSIX];
};

static int kvf_write(void *ctx, uint32_t index, const struct umsi_msg *msg)
{
	struct kvf *k = ctx;

	assert_true(index < VF_MSIX);
	k->slot[index] = *msg;
	return 0;
}

static const struct umsi_source_ops kvf_ops = { .write_msg = kvf_write };

static void message_api_on_a_vf(void **s)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc d = pf_desc(2, 1, 1);
	struct umsi_pci_dev *pf = plug(m, PF, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_info info;
	struct kvf k = { 0 };
	struct umsi_source *src;
	struct umsi_target_req r = { .count = 2, .index = UMSI_SLOT_ANY,
				     .flags = UMSI_TARGET_SPREAD };
	uint32_t irqs[2];

	(void)s;
	assert_int_equal(umsi_pci_sriov_enable(pf, 2, UMSI_SRIOV_NOWAIT), 0);
	umsi_pci_get_info(umsi_pci_sriov_vf(pf, 1), &info);
	{
		struct umsi_source_config c = {
			.requester_id = info.bdf & 0xffff, .bdf = info.bdf,
			.nslots = VF_MSIX, .ops = &kvf_ops, .ctx = &k,
		};

		assert_int_equal(umsi_source_create(m->sys, &c, &src), 0);
	}
	assert_int_equal(umsi_source_alloc(src, &r, irqs), 2);
	for (int i = 0; i < 2; i++) {
		struct umsi_irq_info ii;
		uint64_t h = m->handled[irqs[i]];

		assert_int_equal(umsi_request_irq(m->sys, irqs[i], fx_handler,
						  0, "kvf", m), 0);
		assert_int_equal(umsi_irq_get_info(m->sys, irqs[i], &ii), 0);
		umsi_sim_msg_write_from(m->sim, info.bdf & 0xffff,
					k.slot[i].address, k.slot[i].data);
		umsi_sim_quiesce(m->sim);
		assert_int_equal(m->handled[irqs[i]], h + 1);
		assert_int_equal(m->last_cpu[irqs[i]], ii.cpu);
	}
	assert_int_equal(umsi_source_free(src, irqs, 2, 0), 0);
	assert_int_equal(umsi_source_destroy(src), 0);
	umsi_pci_remove(m->sys, pf);
	machine_free(m);
}

/*
 * A PF behind a PCI Express to PCI bridge: its VFs' messages reach the
 * root as the bridge's (secondary bus, devfn 0), as the PF's do, and all
 * of them share that one requester ID (one ITS DeviceID, one VT-d source
 * ID): every vector of every function must still land where uMSI says.
 */
static void vfs_behind_an_aliasing_bridge(void **s)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc b = fx_bridge_desc(1, UMSI_PCIE_TYPE_PCI_BRIDGE,
						    false);
	struct umsi_sim_dev_desc d = pf_desc(2, 1, 1);
	struct umsi_pci_dev *br, *pf;
	struct snapshot before, after;

	(void)s;
	br = plug(m, UMSI_BDF(0, 0, 0x1e, 0), &b, UMSI_PCI_ADD_FRESH);
	pf = plug_under(m, UMSI_BDF(0, 1, 0, 0), &d, br);
	before = snap(m);
	assert_int_equal(umsi_pci_sriov_enable(pf, 2, UMSI_SRIOV_NOWAIT), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(pf, 4, 4, UMSI_PCI_IRQ_MSIX),
			 4);
	for (uint16_t i = 0; i < 2; i++) {
		struct umsi_pci_dev *vf = umsi_pci_sriov_vf(pf, i);

		assert_int_equal(umsi_pci_alloc_irq_vectors(vf, VF_MSIX, VF_MSIX,
				 UMSI_PCI_IRQ_MSIX), VF_MSIX);
	}
	/* Every function, every vector, by its own entry. */
	for (uint16_t f = 0; f < 3; f++)
		fire_each(m, f ? umsi_pci_sriov_vf(pf, f - 1) : pf, "alias");
	umsi_pci_free_irq_vectors(pf);
	umsi_pci_sriov_disable(pf, UMSI_SRIOV_NOWAIT);
	after = snap(m);
	assert_same(&before, &after);
	umsi_pci_remove(m->sys, pf);
	umsi_pci_remove(m->sys, br);
	machine_free_checked(m, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vfs_are_functions_with_their_own_ids),
		cmocka_unit_test(hundred_cycles_leave_nothing),
		cmocka_unit_test(hostile_capabilities_are_refused),
		cmocka_unit_test(a_taken_address_is_refused),
		cmocka_unit_test(every_failed_host_call_leaves_nothing),
		cmocka_unit_test(policy_applies_to_vfs),
		cmocka_unit_test(message_api_on_a_vf),
		cmocka_unit_test(vfs_behind_an_aliasing_bridge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
