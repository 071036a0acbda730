/* SPDX-License-Identifier: MIT */
/*
 * x86 local-APIC message format: compose and decode.
 *
 * Intel SDM Vol. 3, 11.11: the address is 0xfee in bits 31:20, the
 * destination ID in 19:12, redirection hint in bit 3 and destination mode in
 * bit 2. Hypervisors extend the destination to 15 bits with address bits
 * 11:5 (bits 11:5 are reserved on bare metal, so the extension is opt-in
 * per platform). Bit 4 selects the VT-d remappable format, in which bits
 * 19:5 and 2 carry an interrupt-remapping-table handle instead.
 */
#include <umsi/host.h>
#include <umsi/msg.h>
#include <umsi/x86.h>

void umsi_x86_msg_decode(const struct umsi_msg *msg, bool ext_dest,
			 struct umsi_x86_msi *out)
{
	uint32_t lo = (uint32_t)msg->address;
	uint32_t data = msg->data;

	*out = (struct umsi_x86_msi){ 0 };
	out->valid = (msg->address >> 32) == 0 &&
		     (lo & UMSI_X86_MSI_BASE_MASK) == UMSI_X86_MSI_BASE;
	out->remapped = (lo & UMSI_X86_ADDR_REMAP) != 0;
	if (out->remapped) {
		out->handle = (uint16_t)(((lo >> 5) & 0x7fff) |
					 (((lo >> 2) & 1u) << 15));
		out->shv = (lo & UMSI_X86_ADDR_RH) != 0;
		out->subhandle = (uint16_t)data;
		return;
	}
	out->dest_id = (lo >> UMSI_X86_ADDR_DEST_SHIFT) & 0xff;
	if (ext_dest)
		out->dest_id |= ((lo >> UMSI_X86_ADDR_EXTDEST_SHIFT) & 0x7f) << 8;
	out->logical = (lo & UMSI_X86_ADDR_DM_LOGICAL) != 0;
	out->redir_hint = (lo & UMSI_X86_ADDR_RH) != 0;
	out->vector = (uint8_t)(data & UMSI_X86_DATA_VECTOR_MASK);
	out->delivery = (uint8_t)((data >> UMSI_X86_DATA_DM_SHIFT) & 7);
	out->level = (data & UMSI_X86_DATA_TRIGGER_LEVEL) != 0;
	out->assert = (data & UMSI_X86_DATA_LEVEL_ASSERT) != 0;
}

bool umsi_x86_dest_reachable(uint32_t apic_id, uint32_t plat_flags)
{
	/* The x2APIC broadcast ID names every CPU, never one. */
	if (apic_id == 0xffffffffu)
		return false;
	if (plat_flags & UMSI_PLAT_IRQ_REMAP)
		return true;
	/* In xAPIC mode destination 0xff is the broadcast address. */
	if (!(plat_flags & UMSI_PLAT_X2APIC) && apic_id == 0xff)
		return false;
	if (plat_flags & UMSI_PLAT_EXT_DEST_ID)
		return apic_id <= UMSI_X86_MAX_EXTDEST;
	return apic_id <= UMSI_X86_MAX_DEST8;
}

int umsi_x86_msg_compose(uint32_t apic_id, uint8_t vector,
			 uint32_t plat_flags, struct umsi_msg *msg)
{
	uint32_t lo = UMSI_X86_MSI_BASE;

	if (vector < 0x10)
		return -UMSI_EINVAL;
	/* Compose without remapping: the remap back end is the caller's. */
	if (!umsi_x86_dest_reachable(apic_id,
				     plat_flags & ~UMSI_PLAT_IRQ_REMAP))
		return -UMSI_ERANGE;
	lo |= (apic_id & 0xff) << UMSI_X86_ADDR_DEST_SHIFT;
	lo |= ((apic_id >> 8) & 0x7f) << UMSI_X86_ADDR_EXTDEST_SHIFT;
	msg->address = lo;
	/* Fixed delivery, edge trigger: what MSI requires (PCI 6.8.3.4). */
	msg->data = vector;
	return 0;
}
