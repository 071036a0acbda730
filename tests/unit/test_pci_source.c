/* SPDX-License-Identifier: MIT */
/*
 * The message-level API (umsi/source.h) as a kernel that writes its own
 * device uses it, on each back end (x86, IMSIC, ITS, VT-d: the -imsic,
 * -its and -vtd runs). The "device" keeps what the kernel's write_msg
 * gave each slot and sends it on demand, as a requester (the ITS
 * translates by its DeviceID), so every check is where a message lands.
 */
#include "test_pci_fixture.h"
#include <umsi/source.h>

#define RID    0x0300u
#define NSLOT  16

struct kdev {
	struct machine *m;
	struct umsi_msg slot[NSLOT];
	bool written[NSLOT];
	unsigned int writes;
	int fail_write;                 /* write_msg returns this when set */
};

static int k_write(void *ctx, uint32_t index, const struct umsi_msg *msg)
{
	struct kdev *k = ctx;

	assert_true(index < NSLOT);
	if (k->fail_write)
		return k->fail_write;
	k->slot[index] = *msg;
	k->written[index] = true;
	k->writes++;
	return 0;
}

static int k_mask(void *ctx, uint32_t index)
{
	(void)ctx;
	(void)index;
	return 0;
}

static const struct umsi_source_ops kops = { .write_msg = k_write };

/* The device sends slot @i's message (a block: data + @plus). */
static void send_slot(struct kdev *k, uint32_t i, uint32_t plus)
{
	if (fx_its() || fx_remap())
		umsi_sim_msg_write_from(k->m->sim, RID, k->slot[i].address,
					k->slot[i].data + plus);
	else
		umsi_sim_msg_write(k->m->sim, k->slot[i].address,
				   k->slot[i].data + plus);
	umsi_sim_quiesce(k->m->sim);
}

/* Did IRQ @irq run once more, on the CPU uMSI says it targets? */
static void assert_lands(struct kdev *k, uint32_t i, uint32_t plus,
			 uint32_t irq)
{
	struct umsi_irq_info info;
	uint64_t before = k->m->handled[irq];

	assert_int_equal(umsi_irq_get_info(k->m->sys, irq, &info), 0);
	send_slot(k, i, plus);
	assert_int_equal(k->m->handled[irq], before + 1);
	assert_int_equal(k->m->last_cpu[irq], info.cpu);
}

static struct umsi_source *mk_source(struct kdev *k, bool block,
				     uint32_t nslots)
{
	struct umsi_source_config c = {
		.requester_id = RID, .bdf = UMSI_BDF(0, 3, 0, 0),
		.nslots = nslots, .block = block, .ops = &kops, .ctx = k,
	};
	struct umsi_source *src;

	assert_int_equal(umsi_source_create(k->m->sys, &c, &src), 0);
	return src;
}

static void bad_requests_leave_nothing_behind(void **s)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct kdev k = { .m = m };
	struct umsi_source_config c = { .requester_id = RID, .nslots = 4,
					.ops = &kops, .ctx = &k };
	struct umsi_source_ops half = { .write_msg = k_write };
	struct umsi_source *src, *bad;
	uint32_t irqs[4], dup[2] = { 1000, 1000 }, big = 1u << 30;
	uint32_t taken[1], slots[2] = { 1, 1 };
	struct umsi_target_req r = { .count = 2, .index = UMSI_SLOT_ANY };
	struct snapshot before;

	(void)s;
	/* Sources: a write_msg, a mask with an unmask, 1..2048 slots. */
	c.ops = &half;
	half.write_msg = NULL;
	assert_int_equal(umsi_source_create(m->sys, &c, &bad), -UMSI_EINVAL);
	half.write_msg = k_write;
	half.mask = k_mask;             /* without unmask */
	assert_int_equal(umsi_source_create(m->sys, &c, &bad), -UMSI_EINVAL);
	c.ops = &kops;
	c.nslots = 0;
	assert_int_equal(umsi_source_create(m->sys, &c, &bad), -UMSI_EINVAL);
	c.nslots = 2049;
	assert_int_equal(umsi_source_create(m->sys, &c, &bad), -UMSI_EINVAL);
	c.nslots = 33;
	c.block = true;
	assert_int_equal(umsi_source_create(m->sys, &c, &bad), -UMSI_EINVAL);

	src = mk_source(&k, false, 4);
	before = snap(m);
	r.count = 0;
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EINVAL);
	r.count = 5;
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EINVAL);
	r.count = 2;
	r.index = 3;                    /* slots 3 and 4 of 4 */
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EINVAL);
	r.index = UMSI_SLOT_ANY;
	r.slots = slots;                /* one slot twice */
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EINVAL);
	r.slots = NULL;
	r.irqs = dup;                   /* one number twice */
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EINVAL);
	r.count = 1;
	r.irqs = &big;                  /* beyond max_irqs */
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EINVAL);
	r.min = 1;                      /* "as many as fit" with numbers */
	r.irqs = dup;
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EINVAL);
	r.min = 0;
	r.irqs = NULL;
	assert_int_equal(umsi_source_alloc(src, &r, taken), 1);
	r.irqs = taken;                 /* a number in use */
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EBUSY);
	r.irqs = NULL;
	r.index = 0;                    /* a slot in use */
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EBUSY);
	/* Not a target of this source: nothing freed. */
	irqs[0] = taken[0] + 1;
	assert_int_equal(umsi_source_free(src, irqs, 1, 0), -UMSI_ENOENT);
	assert_int_equal(umsi_source_destroy(src), -UMSI_EBUSY);
	assert_int_equal(umsi_source_free(src, taken, 1, 0), 0);
	{
		struct snapshot after = snap(m);

		assert_same(&before, &after);
	}
	/* A failing write_msg fails the allocation, leaving nothing. */
	k.fail_write = -UMSI_EIO;
	r.index = UMSI_SLOT_ANY;
	r.count = 3;
	assert_int_equal(umsi_source_alloc(src, &r, irqs), -UMSI_EIO);
	k.fail_write = 0;
	{
		struct snapshot after = snap(m);

		assert_same(&before, &after);
	}
	assert_int_equal(umsi_source_destroy(src), 0);
	machine_free(m);
}

static void targets_land_where_umsi_says_and_follow_moves(void **s)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct kdev k = { .m = m };
	struct umsi_source *src = mk_source(&k, false, NSLOT);
	uint32_t want[3] = { 1000, 1001, 1002 }, irqs[3], i;
	struct umsi_target_req r = { .count = 3, .index = 4, .irqs = want };
	struct umsi_irq_info info;
	struct umsi_msg msg;
	uint64_t one;
	struct umsi_cpumask cpu = { &one, 4 };

	(void)s;
	assert_int_equal(umsi_source_alloc(src, &r, irqs), 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(irqs[i], want[i]);
		assert_true(k.written[4 + i]);
		assert_int_equal(umsi_request_irq(m->sys, irqs[i], fx_handler,
						  0, "k", m), 0);
		assert_lands(&k, 4 + i, 0, irqs[i]);
	}
	/* A move: the device holds the new target's message, and it lands. */
	assert_int_equal(umsi_irq_get_info(m->sys, irqs[1], &info), 0);
	one = 1ull << ((info.cpu + 1) % 4);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irqs[1], &cpu), 0);
	assert_int_equal(umsi_source_msg(src, irqs[1], &msg), 0);
	assert_true(msg.address == k.slot[5].address &&
		    msg.data == k.slot[5].data);
	assert_lands(&k, 5, 0, irqs[1]);
	assert_int_equal(m->last_cpu[irqs[1]], (info.cpu + 1) % 4);
	/* A subset goes; the rest still lands. */
	assert_int_equal(umsi_source_free(src, &irqs[1], 1, 0), 0);
	assert_lands(&k, 4, 0, irqs[0]);
	assert_lands(&k, 6, 0, irqs[2]);
	/* Listed twice: freed once. */
	irqs[1] = irqs[0];
	assert_int_equal(umsi_source_free(src, irqs, 3, 0), 0);
	assert_int_equal(umsi_source_destroy(src), 0);
	machine_free(m);
}

/* A free of more than one batch (32) of a source's targets at once. */
static void many_targets_go_in_one_call(void **s)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct kdev k = { .m = m };
	struct umsi_source_config c = { .requester_id = RID, .nslots = 40,
					.ops = &kops, .ctx = &k };
	struct umsi_source *src;
	struct umsi_target_req r = { .count = 40, .index = 0,
				     .flags = UMSI_TARGET_NO_WRITE };
	struct snapshot before = snap(m), after;
	uint32_t irqs[40];

	(void)s;
	assert_int_equal(umsi_source_create(m->sys, &c, &src), 0);
	assert_int_equal(umsi_source_alloc(src, &r, irqs), 40);
	assert_int_equal(umsi_source_free(src, irqs, 40, 0), 0);
	assert_int_equal(umsi_source_destroy(src), 0);
	after = snap(m);
	assert_same(&before, &after);
	machine_free(m);
}

/* A multi-message block: one message, data + i is message i (under
 * VT-d the subhandle: each message its own entry, one device message). */
static void a_block_has_one_message_and_moves_whole(void **s)
{
	struct machine *m;
	struct kdev k;
	struct umsi_source *src;
	struct umsi_target_req r = { .count = 4, .index = 0 };
	uint32_t irqs[4], i, part[2];
	uint64_t one;
	struct umsi_cpumask cpu = { &one, 4 };
	struct umsi_irq_info info;

	(void)s;
	if (fx_its()) {
		skip();         /* an ITS block is one event a message */
		return;
	}
	m = machine_new(4, 0, NULL);
	memset(&k, 0, sizeof(k));
	k.m = m;
	src = mk_source(&k, true, 8);
	assert_int_equal(umsi_source_alloc(src, &r, irqs), 4);
	assert_int_equal(k.writes, 1);          /* slot 0 only */
	for (i = 0; i < 4; i++) {
		assert_int_equal(umsi_request_irq(m->sys, irqs[i], fx_handler,
						  0, "blk", m), 0);
		assert_lands(&k, 0, i, irqs[i]);
	}
	r.count = 2;                            /* one block a source */
	assert_int_equal(umsi_source_alloc(src, &r, part), -UMSI_EBUSY);
	r.count = 3;
	assert_int_equal(umsi_source_alloc(src, &r, part), -UMSI_EINVAL);
	assert_int_equal(umsi_irq_get_info(m->sys, irqs[0], &info), 0);
	one = 1ull << ((info.cpu + 1) % 4);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irqs[0], &cpu), 0);
	if (fx_remap()) {
		/*
		 * VT-d: each message its own remapping entry (handle +
		 * subhandle = data): message 0 moved alone, through the
		 * unit, and the device was not written again.
		 */
		assert_int_equal(k.writes, 1);
		assert_lands(&k, 0, 0, irqs[0]);
		assert_int_equal(m->last_cpu[irqs[0]], (info.cpu + 1) % 4);
		for (i = 1; i < 4; i++)
			assert_lands(&k, 0, i, irqs[i]);
	} else if (fx_gicv2m()) {
		/*
		 * GICv2m: the block's SPIs get a new target byte each; the
		 * device's message stays and every message follows.
		 */
		assert_int_equal(k.writes, 1);
		for (i = 0; i < 4; i++) {
			assert_lands(&k, 0, i, irqs[i]);
			assert_int_equal(m->last_cpu[irqs[i]],
					 (info.cpu + 1) % 4);
		}
	} else {
		assert_int_equal(k.writes, 2);
		for (i = 0; i < 4; i++) {
			assert_lands(&k, 0, i, irqs[i]);
			assert_int_equal(m->last_cpu[irqs[i]],
					 (info.cpu + 1) % 4);
		}
	}
	assert_int_equal(umsi_source_free(src, irqs, 2, 0), -UMSI_EINVAL);
	assert_int_equal(umsi_source_free(src, irqs, 4, 0), 0);
	assert_int_equal(umsi_source_destroy(src), 0);
	machine_free(m);
}

/* What the kernel could not silence stays quarantined until destroy. */
static void may_send_keeps_the_vector_until_destroy(void **s)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct kdev k = { .m = m };
	struct umsi_source *src = mk_source(&k, false, 4);
	struct umsi_target_req r = { .count = 1, .index = 0 };
	uint32_t irq;
	uint64_t h;

	(void)s;
	assert_int_equal(umsi_source_alloc(src, &r, &irq), 1);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "k", m),
			 0);
	h = m->handled[irq];
	assert_int_equal(umsi_source_free(src, &irq, 1, UMSI_SOURCE_MAY_SEND),
			 0);
	/* The device still sends: taken and dropped, no handler runs. */
	send_slot(&k, 0, 0);
	assert_int_equal(m->handled[irq], h);
	assert_true(umsi_irq_quarantined(m->sys, src) == 1);
	assert_int_equal(umsi_source_destroy(src), 0);
	assert_true(umsi_irq_quarantined(m->sys, NULL) == 0);
	machine_free(m);
}

/* Every host call of an allocation failing in turn: nothing is left. */
static void every_failed_host_call_leaves_nothing(void **s)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct kdev k = { .m = m };
	struct umsi_source *src = mk_source(&k, false, NSLOT);
	uint32_t want[3] = { 2000, 2001, 2002 }, irqs[3];
	struct umsi_target_req r = { .count = 3, .index = UMSI_SLOT_ANY,
				     .irqs = want, .flags = UMSI_TARGET_SPREAD };
	struct snapshot before = snap(m), after;
	uint64_t n, kk;
	int failed = 0, ret;

	(void)s;
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_source_alloc(src, &r, irqs), 3);
	n = sstats(m).fallible_calls;
	assert_int_equal(umsi_source_free(src, irqs, 3, 0), 0);
	for (kk = 1; kk <= n; kk++) {
		umsi_sim_fail_at(m->sim, kk, -UMSI_EIO);
		ret = umsi_source_alloc(src, &r, irqs);
		umsi_sim_fail_at(m->sim, 0, 0);
		if (ret < 0)
			failed++;
		else
			assert_int_equal(umsi_source_free(src, irqs, 3, 0), 0);
		after = snap(m);
		assert_same(&before, &after);
	}
	/* The same slots and numbers are free again. */
	assert_int_equal(umsi_source_alloc(src, &r, irqs), 3);
	assert_int_equal(umsi_source_free(src, irqs, 3, 0), 0);
	assert_true(failed > 0 || n == 0);
	assert_int_equal(umsi_source_destroy(src), 0);
	machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_requests_leave_nothing_behind),
		cmocka_unit_test(targets_land_where_umsi_says_and_follow_moves),
		cmocka_unit_test(many_targets_go_in_one_call),
		cmocka_unit_test(a_block_has_one_message_and_moves_whole),
		cmocka_unit_test(may_send_keeps_the_vector_until_destroy),
		cmocka_unit_test(every_failed_host_call_leaves_nothing),
	};

	return cmocka_run_group_tests_name("message-level API", tests, NULL,
					   NULL);
}
