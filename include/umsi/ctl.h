/* SPDX-License-Identifier: MIT */
/*
 * umsi/ctl.h - interrupt-controller back ends an embedder can choose.
 *
 * A system is created with one back end (umsi_config.ctl); it decides the
 * identity space (x86: 256 vectors a CPU), the message format, which CPUs
 * a message can reach, how an interrupt moves between CPUs and how it is
 * ended. One process may hold systems of different back ends.
 *
 * Back ends and what each needs from the host (docs/PORTING.md):
 *  - umsi_ctl_x86_lapic: x86 local APIC, xAPIC or x2APIC. Host ops
 *    cpu_hwid (APIC ID), ctl_read/ctl_write (LAPIC registers by xAPIC
 *    offset), run_on_cpu; optional remap_compose/remap_free with
 *    UMSI_PLAT_IRQ_REMAP. The default when umsi_config.ctl is NULL.
 *  - umsi_ctl_riscv_imsic: RISC-V AIA IMSIC, S-level interrupt files.
 *    Configuration struct umsi_imsic_config (umsi_config.ctl_config).
 *    Host ops cpu_hwid (hart ID), ctl_read (register r = siselect r
 *    through sireg: eip words), mmio_map/mmio_write32 of every file at
 *    creation (resending a pending interrupt to another hart). The kernel
 *    claims through stopei and enables its harts' files itself.
 */
#ifndef UMSI_CTL_H
#define UMSI_CTL_H

#ifdef UMSI_LAYER_PCI
#error "src/pci knows no interrupt controller: umsi/ctl.h names the back ends"
#endif

#include <umsi/types.h>

struct umsi_ctl;

/* The x86 local APIC back end (src/arch/x86). */
extern const struct umsi_ctl umsi_ctl_x86_lapic;

/**
 * struct umsi_imsic_config - the RISC-V IMSIC back end's configuration
 * @num_ids: identities of an S-level interrupt file (the device tree's
 *           riscv,num-ids): one less than a multiple of 64, 63 to 2047
 *           (AIA 1.0, 3.1); QEMU virt has 255
 * @first_id: the lowest identity uMSI hands out; the kernel keeps
 *            1..@first_id - 1 for itself (Linux takes 1 for IPIs).
 *            0 means 1: uMSI may use every identity
 * @nr_files: entries of @file_addr; at least the host's cpu_count()
 * @file_addr: for each host CPU number, the physical address of its
 *             hart's S-level interrupt file (4 KiB aligned; QEMU virt:
 *             0x28000000 + 0x1000 * k for the k-th hart of the IMSIC
 *             node), or 0 for a hart without one (no interrupt will
 *             target it). No two CPUs may share a file.
 *
 * Read during umsi_system_create() only. Contradictions (num_ids not of
 * the form 64k - 1, first_id above num_ids, too few entries, a misaligned
 * or shared file) make it fail with -UMSI_EINVAL and a log line naming
 * the problem.
 */
struct umsi_imsic_config {
	uint32_t num_ids;
	uint32_t first_id;
	uint32_t nr_files;
	const uint64_t *file_addr;
};

/* The RISC-V AIA IMSIC back end (src/arch/riscv). */
extern const struct umsi_ctl umsi_ctl_riscv_imsic;

#endif /* UMSI_CTL_H */
