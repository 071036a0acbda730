/* SPDX-License-Identifier: MIT */
/*
 * umsi/x86.h - the x86 local-APIC message format.
 *
 * On x86 the address of an MSI selects the destination and the data the
 * vector (Intel SDM Vol. 3, 11.11 "Message Signalled Interrupts"; VT-d
 * spec 5.1.5.2 for the remappable format). The same code composes messages
 * for the x86 back end (src/arch/x86), decodes them in the simulator's
 * delivery model and an x86 kernel's IO-APIC driver, and in `umsi inspect`.
 * The PCI layer never includes it: it knows no controller.
 */
#ifndef UMSI_X86_H
#define UMSI_X86_H

#ifdef UMSI_LAYER_PCI
#error "src/pci knows no interrupt controller: umsi/x86.h is the x86 back end's"
#endif

#include <umsi/host.h>
#include <umsi/msg.h>
#include <umsi/types.h>

/* Address fields (SDM 11.11.1). */
#define UMSI_X86_MSI_BASE          0xfee00000u
#define UMSI_X86_MSI_BASE_MASK     0xfff00000u
#define UMSI_X86_ADDR_DEST_SHIFT   12        /* bits 19:12: destination ID 7:0 */
#define UMSI_X86_ADDR_EXTDEST_SHIFT 5        /* bits 11:5: destination ID 14:8 */
#define UMSI_X86_ADDR_REMAP        (1u << 4) /* remappable format (VT-d) */
#define UMSI_X86_ADDR_RH           (1u << 3) /* redirection hint */
#define UMSI_X86_ADDR_DM_LOGICAL   (1u << 2) /* destination mode: logical */
/* Data fields (SDM 11.11.2). */
#define UMSI_X86_DATA_VECTOR_MASK  0xffu
#define UMSI_X86_DATA_DM_SHIFT     8         /* bits 10:8: delivery mode */
#define UMSI_X86_DATA_LEVEL_ASSERT (1u << 14)
#define UMSI_X86_DATA_TRIGGER_LEVEL (1u << 15)

/* Delivery modes (data bits 10:8). */
#define UMSI_X86_DM_FIXED    0
#define UMSI_X86_DM_LOWPRI   1
#define UMSI_X86_DM_SMI      2
#define UMSI_X86_DM_NMI      4
#define UMSI_X86_DM_INIT     5
#define UMSI_X86_DM_EXTINT   7

/* The highest APIC ID an 8-bit destination can name (0xff is broadcast). */
#define UMSI_X86_MAX_DEST8     0xfeu
/* The highest APIC ID the extended destination ID can name (15 bits). */
#define UMSI_X86_MAX_EXTDEST   0x7fffu

/**
 * struct umsi_x86_msi - a decoded x86 message
 * @valid: address lies in the 0xfeexxxxx interrupt window
 * @remapped: address bit 4: remappable format; @handle/@shv/@subhandle
 *            are meaningful, destination fields are not
 * @dest_id: destination APIC ID (bits 19:12, plus 11:5 as 14:8 when
 *           decoded with the extended destination ID)
 * @logical: destination mode logical (bit 2)
 * @redir_hint: redirection hint (bit 3)
 * @delivery: delivery mode, UMSI_X86_DM_*
 * @level: trigger mode level (data bit 15)
 * @assert: level assert (data bit 14)
 * @vector: data bits 7:0
 * @handle: remappable format: interrupt handle (address bits 19:5 as
 *          handle 14:0, bit 2 as handle 15)
 * @shv: remappable format: subhandle valid (bit 3)
 * @subhandle: remappable format: data bits 15:0
 */
struct umsi_x86_msi {
	bool valid;
	bool remapped;
	uint32_t dest_id;
	bool logical;
	bool redir_hint;
	uint8_t delivery;
	bool level;
	bool assert;
	uint8_t vector;
	uint16_t handle;
	bool shv;
	uint16_t subhandle;
};

/**
 * umsi_x86_msg_decode - decode a message as an x86 local APIC would
 * @msg: the message
 * @ext_dest: true when the platform decodes address bits 11:5 as
 *            destination ID bits 14:8 (UMSI_PLAT_EXT_DEST_ID)
 * @out: filled with the decoded fields
 *
 * Pure function; safe in any context.
 */
void umsi_x86_msg_decode(const struct umsi_msg *msg, bool ext_dest,
			 struct umsi_x86_msi *out);

/**
 * umsi_x86_dest_reachable - can a message name this APIC ID?
 * @apic_id: the destination
 * @plat_flags: UMSI_PLAT_* flags of the platform
 *
 * Return: true when a physical-mode fixed message (or a remapped one, when
 * the platform remaps) can target @apic_id: 0-254 always, up to 32767
 * with the extended destination ID (255 only in x2APIC mode, since 0xff is
 * the xAPIC broadcast), any but 0xffffffff (the x2APIC broadcast) with
 * interrupt remapping.
 */
bool umsi_x86_dest_reachable(uint32_t apic_id, uint32_t plat_flags);

/**
 * umsi_x86_msg_compose - compose a fixed, edge, physical-mode message
 * @apic_id: destination APIC ID
 * @vector: CPU vector (0x10-0xfe)
 * @plat_flags: UMSI_PLAT_* flags of the platform
 * @msg: the message to fill
 *
 * Return: 0, or -UMSI_ERANGE when @apic_id is not reachable without
 * interrupt remapping (the caller then asks the remapping back end), or
 * -UMSI_EINVAL for a vector below 0x10. Safe in any context.
 */
int umsi_x86_msg_compose(uint32_t apic_id, uint8_t vector,
			 uint32_t plat_flags, struct umsi_msg *msg);

#endif /* UMSI_X86_H */
