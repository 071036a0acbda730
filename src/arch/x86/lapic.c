/* SPDX-License-Identifier: MIT */
/*
 * The x86 local APIC back end (umsi/internal/ctl.h).
 *
 * Identities are IDT vectors, 256 a CPU: 0x20-0xeb allocatable, 0x80
 * reserved, 0xec-0xff kept for the kernel (timer, IPIs, spurious 0xff),
 * and 0x30-0x3f withheld on CPU 0 only when the kernel takes ISA
 * interrupts through the 8259 PIC (UMSI_PLAT_ISA_PIC). A CPU is named by
 * its APIC ID; which IDs a message can name depends on the platform
 * (msg.c, umsi_x86_dest_reachable). With interrupt remapping the host's
 * remapping driver composes MSI messages (remap_compose); wired inputs
 * (the IO-APIC's redirection entries) always get the compatibility format.
 *
 * Interrupts move by rewriting the source's message. "Still pending on
 * the old CPU" is its IRR; a pending copy is resent as a fixed IPI; EOI is
 * a write of 0 to the EOI register. All three are the host's typed
 * operations irq_pending, send_ipi and eoi.
 */
#include <umsi/ctl.h>
#include <umsi/internal/ctl.h>
#include <umsi/internal/hostcall.h>
#include <umsi/internal/lib.h>
#include <umsi/x86.h>

#include "lapic.h"


static int lapic_init(struct umsi_system *sys, uint32_t ncpus,
		      struct umsi_matrix_config *space)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	const struct umsi_host_ops *o = env->ops;

	if (umsi_lapic_check_host(sys, "x86-lapic"))
		return -UMSI_EINVAL;
	if ((env->plat_flags & UMSI_PLAT_IRQ_REMAP) && !o->remap_compose) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-lapic: platform flag "
			 "UMSI_PLAT_IRQ_REMAP set but host operation "
			 "remap_compose missing");
		return -UMSI_EINVAL;
	}
	umsi_matrix_default_config(space, ncpus);
	if (!(env->plat_flags & UMSI_PLAT_ISA_PIC))
		space->legacy_count = 0;
	return 0;
}

static int lapic_cpu_init(struct umsi_system *sys, uint32_t cpu,
			  struct umsi_ctl_cpu *out)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	int ret = umsi_host_cpu_hwid(sys, cpu, &out->hwid);

	if (ret)
		return ret;
	out->reachable = umsi_x86_dest_reachable(out->hwid, env->plat_flags);
	/* The IO-APIC sends compatibility-format messages only. */
	out->wired_reachable = umsi_x86_dest_reachable(out->hwid,
			env->plat_flags & ~UMSI_PLAT_IRQ_REMAP);
	return 0;
}

static int lapic_compose(struct umsi_system *sys,
			 const struct umsi_ctl_irq *ci, uint32_t cpu, uint32_t id,
			 struct umsi_msg *msg)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	uint32_t apic = umsi_cpu_hwid(sys, cpu);
	int ret;

	if (id > 0xff)
		return -UMSI_EINVAL;
	if (!ci->wired && (env->plat_flags & UMSI_PLAT_IRQ_REMAP)) {
		ret = umsi_host_remap_compose(sys, ci->irq, apic,
					      (uint8_t)id, msg);
		/* Only an IRQ that got an entry gives one back. */
		return ret ? ret : 1;
	}
	return umsi_x86_msg_compose(apic, (uint8_t)id, env->plat_flags, msg);
}

static void lapic_release(struct umsi_system *sys,
			  const struct umsi_ctl_irq *ci)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);

	if (env->ops->remap_free)
		umsi_host_remap_free(sys, ci->irq);
}

int umsi_lapic_check_host(struct umsi_system *sys, const char *name)
{
	const struct umsi_host_ops *o = umsi_ctl_env(sys)->ops;
	bool eoi = o->eoi || umsi_ctl_env(sys)->kernel_eoi;
	const char *missing = !eoi ? "eoi" : !o->irq_pending ?
			      "irq_pending" : !o->send_ipi ? "send_ipi" : NULL;

	if (!missing)
		return 0;
	umsi_log(sys, UMSI_LOG_ERROR, "%s: host operation %s missing%s", name,
		 missing, eoi ? "" : " (or set umsi_config.kernel_eoi)");
	return -UMSI_EINVAL;
}

/* A move rewrites the source's message (or its remapping entry, which
 * the host composes anew). */
static int lapic_retarget(struct umsi_system *sys,
			  const struct umsi_ctl_irq *ci, uint32_t cpu,
			  uint32_t id)
{
	(void)sys;
	(void)ci;
	(void)cpu;
	(void)id;
	return UMSI_CTL_REWRITE;
}

bool umsi_lapic_pending(struct umsi_system *sys, uint32_t id)
{
	return umsi_host_irq_pending(sys, id);
}

int umsi_lapic_resend(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	uint32_t apic = umsi_cpu_hwid(sys, cpu);

	if (apic == 0xffffffffu || id < 0x10 || id > 0xff)
		return -UMSI_EINVAL;
	/* Fixed delivery, physical destination, no shorthand, assert. */
	umsi_host_send_ipi(sys, apic, id);
	return 0;
}

/*
 * Under remapping each message has its own entry; a block would need
 * consecutive entries addressed by subhandle, which remap_compose does
 * not offer. One message, then.
 */
static uint32_t lapic_max_block(struct umsi_system *sys)
{
	return (umsi_ctl_env(sys)->plat_flags & UMSI_PLAT_IRQ_REMAP) ? 1 : 32;
}

const struct umsi_ctl umsi_ctl_x86_lapic = {
	.name = "x86-lapic",
	.domain = &umsi_ctl_domain_per_cpu,
	.init = lapic_init,
	.cpu_init = lapic_cpu_init,
	.compose = lapic_compose,
	.release = lapic_release,
	.retarget = lapic_retarget,
	.pending = umsi_lapic_pending,
	.resend = umsi_lapic_resend,
	/* EOI: a write of 0 to the EOI register (the host's eoi). */
	.eoi = true,
	.max_block = lapic_max_block,
	.spurious_id = 0xff,
};
