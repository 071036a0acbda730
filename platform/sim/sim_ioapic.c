/* SPDX-License-Identifier: MIT */
/*
 * sim_ioapic.c - INTx routing, the IO-APIC, and the interrupt-remapping
 * table.
 *
 * IO-APIC (82093AA datasheet, 3.2.4 redirection table): an edge input
 * sends its message on an inactive->active transition while unmasked (an
 * edge while masked is lost). A level input sends while active, unmasked
 * and Remote IRR clear, and sets Remote IRR; the local APIC's EOI of that
 * vector clears Remote IRR, and a line still asserted is sent again.
 *
 * Wires: GSIs 0-15 are ISA lines, active high; 16 and up are PCI lines,
 * active low (PCI 3.0 2.2.6). The entry's polarity says what the IO-APIC
 * takes for "active"; programming the opposite makes an idle line active.
 *
 * Remapping (VT-d 5.1 in spirit): entries hold (APIC ID, vector); messages
 * name them by handle, plus the subhandle in the data when SHV is set.
 * That is the host-hook model of UMSI_PLAT_IRQ_REMAP machines; a machine
 * with a VT-d unit (sim_vtd.c) sends every IO-APIC message through it,
 * and its entries may be remappable (a handle instead of a destination).
 * A machine may have several IO-APICs (config.ioapics), each with its
 * own inputs, requester ID and EOI register.
 */
#include <stdlib.h>
#include <string.h>

#include <umsi/ctl.h>

#include "sim_priv.h"

/* The IO-APIC of config.ioapics that has input @gsi, or NULL (one). */
static const struct umsi_ioapic_source *sim_ioapic_of(
	const struct umsi_sim *sim, uint32_t gsi)
{
	for (uint32_t i = 0; i < sim->nioapics; i++)
		if (gsi - sim->ioapics[i].gsi_base < sim->ioapics[i].gsi_count)
			return &sim->ioapics[i];
	return NULL;
}

/* The requester ID of the IO-APIC that has input @gsi. */
static uint32_t sim_ioapic_rid(const struct umsi_sim *sim, uint32_t gsi)
{
	const struct umsi_ioapic_source *io = sim_ioapic_of(sim, gsi);

	return io ? io->source_id : sim->ioapic_rid;
}

static int sim_ioapic_init(struct umsi_sim *sim, uint32_t pins)
{
	sim->npins = pins;
	sim->rtes = calloc(pins, sizeof(*sim->rtes));
	sim->gsi_ext = calloc(pins, sizeof(*sim->gsi_ext));
	if (!sim->rtes || !sim->gsi_ext)
		return -UMSI_ENOMEM;
	for (uint32_t i = 0; i < pins; i++) {
		sim->rtes[i].r.masked = true;	/* reset state */
		sim->rtes[i].spi_intid = -1;
	}
	return 0;
}

static void sim_ioapic_fini(struct umsi_sim *sim)
{
	free(sim->rtes);
	free(sim->gsi_ext);
}

static void sim_ioapic_eval_locked(struct umsi_sim *sim, uint32_t gsi);
static void sim_remap_fini(struct umsi_sim *sim);

/* ---- Routing ----------------------------------------------------------------- */

/* The bridge whose secondary bus is @bdf's bus, in its segment, or NULL. */
struct sim_dev *sim_bridge_to_locked(struct umsi_sim *sim, umsi_bdf_t bdf)
{
	if (!sim->nbridges)
		return NULL;
	for (size_t i = 0; i < sim->ndevs; i++) {
		struct sim_dev *b = sim->devs[i];

		if (!b->present || b->desc.header_type != 1 ||
		    UMSI_BDF_SEG(b->bdf) != UMSI_BDF_SEG(bdf))
			continue;
		if (b->cfg[0x19] == UMSI_BDF_BUS(bdf))
			return b;
	}
	return NULL;
}

/* Default routing of pin @pin of @bdf: swizzle up to bus 0, then 16 + ... */
static int route_default_locked(struct umsi_sim *sim, umsi_bdf_t bdf,
				uint8_t pin)
{
	unsigned int p = pin;
	uint32_t gsi;

	if (pin < 1 || pin > 4)
		return -1;
	/* Bounded: a bridge list that loops must not hang the sim. */
	for (int depth = 0; depth < 256 && UMSI_BDF_BUS(bdf) != 0; depth++) {
		struct sim_dev *b = sim_bridge_to_locked(sim, bdf);

		if (!b)
			break;
		p = (p - 1 + UMSI_BDF_DEV(bdf)) % 4 + 1;
		bdf = b->bdf;
	}
	gsi = 16 + (UMSI_BDF_DEV(bdf) + p - 1) % 4;
	return gsi < sim->npins ? (int)gsi : -1;
}

int sim_dev_gsi_locked(struct umsi_sim *sim, struct sim_dev *d, uint8_t pin)
{
	if (d->route_override)
		return d->route_gsi;
	return route_default_locked(sim, d->bdf, pin);
}

static int sim_intx_route_locked(struct umsi_sim *sim, umsi_bdf_t bdf, uint8_t pin,
			  struct umsi_intx_route *route)
{
	struct sim_dev *d = sim_dev_find(sim, bdf);
	int gsi;

	if (pin < 1 || pin > 4)
		return -UMSI_ENOENT;
	gsi = d ? sim_dev_gsi_locked(sim, d, pin)
		: route_default_locked(sim, bdf, pin);
	if (gsi < 0)
		return -UMSI_ENOENT;
	route->gsi = (uint32_t)gsi;
	route->trigger = UMSI_INTX_LEVEL;
	route->polarity = UMSI_INTX_ACTIVE_LOW;
	return 0;
}

/* ---- IO-APIC ------------------------------------------------------------------ */

/* Whether anything drives input @gsi (logical, before wire polarity). */
static bool gsi_asserted_locked(struct umsi_sim *sim, uint32_t gsi)
{
	if (sim->gsi_ext[gsi])
		return true;
	/* Only functions driving their pin can assert a line. */
	for (size_t i = 0; i < sim->nintx_active; i++) {
		struct sim_dev *d = sim->intx_active[i];

		if (d->present &&
		    sim_dev_gsi_locked(sim, d, d->desc.intx_pin) == (int)gsi)
			return true;
	}
	return false;
}

static void sim_rte_not_amdvi(struct umsi_sim *sim, struct sim_rte *e)
{
	if (e->amdvi)
		sim->amdvi_rtes--;
	e->amdvi = false;
}

/*
 * A remappable entry's message goes through the VT-d unit as the IO-APIC's
 * requester; the vector it reached is the one its EOI will name (Linux
 * programs the entry's vector field with the remapping entry's vector).
 * Without remapping on, nothing decodes it.
 */
static int rte_send_remapped_locked(struct umsi_sim *sim, struct sim_rte *e)
{
	uint32_t rid = sim_ioapic_rid(sim, (uint32_t)(e - sim->rtes));
	uint32_t apic_id = e->r.apic_id;
	uint8_t vector = e->r.vector;
	int n;

	if (!sim_remap_intercept_locked(sim, rid, e->msg_addr,
					e->msg_data, &n, &apic_id, &vector))
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_REMAP,
						e->msg_addr, e->msg_data);
	if (n) {
		e->r.apic_id = apic_id;
		e->r.vector = vector;
	}
	return n;
}

static void rte_send_locked(struct umsi_sim *sim, uint32_t gsi)
{
	struct sim_rte *e = &sim->rtes[gsi];
	bool level = e->r.trigger == UMSI_INTX_LEVEL;
	uint64_t addr = UMSI_X86_MSI_BASE |
			((e->r.apic_id & 0xff) << UMSI_X86_ADDR_DEST_SHIFT);
	uint32_t data = e->r.vector | (level ? UMSI_X86_DATA_TRIGGER_LEVEL : 0);
	int n;

	e->r.deliveries++;
	if (e->r.remappable)
		n = rte_send_remapped_locked(sim, e);
	else if (!sim_remap_intercept_locked(sim, sim_ioapic_rid(sim, gsi),
					     addr, data, &n, NULL, NULL))
		n = sim_deliver_phys_locked(sim, e->r.apic_id, e->r.vector,
					    level, addr, data);
	if (n && level)
		e->r.remote_irr = true;
}

/*
 * Entry @gsi sends (@addr, @data), interrupt @handle of the remapping
 * unit, as the IO-APIC's requester: what the unit's entry says now is
 * kept as its CPU and vector (0 when it cannot be read), the rest as
 * @in asks; then the input is looked at again.
 */
static void rte_set_remapped_locked(struct umsi_sim *sim, uint32_t gsi,
				    const struct umsi_gsi_entry *in,
				    uint16_t handle, uint64_t addr,
				    uint32_t data)
{
	struct sim_rte *e = &sim->rtes[gsi];
	uint32_t apic_id = 0;
	uint8_t vector = 0;
	bool ok = false;

	e->msg_addr = addr;
	e->msg_data = data;
	if (!sim_remap_target_locked(sim, sim_ioapic_rid(sim, gsi), addr, data,
				     &ok, &apic_id, &vector) || !ok)
		apic_id = vector = 0;
	e->r.programmed = true;
	e->r.remappable = true;
	e->r.handle = handle;
	e->r.apic_id = apic_id;
	e->r.vector = vector;
	e->r.trigger = in->trigger;
	e->r.polarity = in->polarity;
	e->r.masked = in->masked;
	sim_ioapic_eval_locked(sim, gsi);
}

/*
 * gsi_program of a remappable-format message on a VT-d machine: the
 * entry keeps the interrupt index (handle, plus the subhandle if the
 * message has one: an IO-APIC entry has no SHV) and sends it.
 */
static int rte_program_remapped_locked(struct umsi_sim *sim, uint32_t gsi,
				       const struct umsi_gsi_entry *in,
				       const struct umsi_x86_msi *m)
{
	struct sim_rte *e = &sim->rtes[gsi];
	uint32_t h = (uint32_t)m->handle + (m->shv ? m->subhandle : 0u);

	if (!sim_remap_present_locked(sim) || h > 0xffff)
		return -UMSI_EINVAL;
	if (in->trigger == UMSI_INTX_EDGE)
		e->r.remote_irr = false;
	sim_rte_not_amdvi(sim, e);
	rte_set_remapped_locked(sim, gsi, in, (uint16_t)h,
				UMSI_X86_MSI_BASE | UMSI_X86_ADDR_REMAP |
				(h & 0x7fff) << 5 | ((h >> 15) & 1) << 2, 0);
	return 0;
}

/*
 * An IMSIC machine's wired inputs: an APLIC in MSI mode (AIA 1.0, 4.9).
 * The input sends its message once each time it becomes asserted while
 * programmed and unmasked; nothing ends it. A level input still asserted
 * is sent again when unmasked or reprogrammed, and after each dispatch of
 * its identity, which is the host's part (aplic_done_locked(), as the
 * reference kernel and Linux's APLIC MSI driver retrigger it).
 */
static void aplic_eval_locked(struct umsi_sim *sim, uint32_t gsi)
{
	struct sim_rte *e = &sim->rtes[gsi];
	bool on = e->active && e->r.programmed && !e->r.masked;

	if (!on) {
		e->sent = false;
		return;
	}
	if (e->sent)
		return;
	e->sent = true;
	e->r.deliveries++;
	sim->ctl->deliver(sim, e->msg_addr, e->msg_data);
}

/* gsi_program on an IMSIC machine: the message is kept as it is. */
static int aplic_program_locked(struct umsi_sim *sim, uint32_t gsi,
				const struct umsi_gsi_entry *in)
{
	struct sim_rte *e = &sim->rtes[gsi];
	uint32_t cpu, id;

	if (!sim_msg_target_locked(sim, in->msg.address, in->msg.data, &cpu,
				   &id))
		return -UMSI_EINVAL;
	e->r.programmed = true;
	e->r.apic_id = sim->cpus[cpu].apic_id;
	e->r.vector = (uint8_t)id;
	e->r.trigger = in->trigger;
	e->r.polarity = in->polarity;
	e->r.masked = in->masked;
	e->msg_addr = in->msg.address;
	e->msg_data = in->msg.data;
	/* A new message for an asserted input is sent again. */
	e->sent = false;
	sim_ioapic_eval_locked(sim, gsi);
	return 0;
}

/*
 * An Arm machine's wired input: a level-sensitive SPI (the host bridge's
 * interrupt-map) that the kernel aims at the CPU of the back end's
 * message and whose arrival it dispatches as the message's identity
 * (umsi/ctl.h UMSI_ARM_WIRED_MSG). Asserted, enabled (unmasked) and not
 * already pending or active, it becomes pending on that CPU; it stays
 * active until that CPU's dispatch of it returns (the kernel's EOI), and
 * is pending again then if still asserted (GIC architecture: a level
 * SPI). A route rewritten while it is pending or active leaves that copy
 * where it is.
 */
static void arm_spi_eval_locked(struct umsi_sim *sim, uint32_t gsi)
{
	struct sim_rte *e = &sim->rtes[gsi];
	int intid;

	if (!e->active || !e->r.programmed || e->r.masked || e->spi_intid >= 0)
		return;
	intid = sim->ctl->wired_raise(sim, e->r.apic_id, e->msg_data);
	if (intid < 0) {
		sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_NO_CPU,
					 e->msg_addr, e->msg_data);
		return;
	}
	e->spi_intid = intid;
	e->spi_cpu = e->r.apic_id;
	e->r.deliveries++;
}

/* CPU @cpu's dispatch of @intid returned: the SPI it was is inactive. */
static void arm_spi_done_locked(struct umsi_sim *sim, uint32_t cpu,
				uint32_t intid)
{
	if (sim->ctl->wired != SIM_WIRED_ARM_SPI)
		return;
	for (uint32_t g = 0; g < sim->npins; g++) {
		struct sim_rte *e = &sim->rtes[g];

		if (e->spi_intid == (int)intid && e->spi_cpu == cpu) {
			e->spi_intid = -1;
			arm_spi_eval_locked(sim, g);
		}
	}
}

/*
 * What a kernel does after each dispatch of identity @id on CPU @cpu of a
 * RISC-V machine (as kernel/arch/riscv64/aplic.c does): in MSI delivery
 * mode a level source's pending bit is cleared when its MSI goes out and
 * is not set again while the input stays high (AIA 4.9.2), so a source
 * aimed there whose input is still asserted is made pending again
 * (setipnum_le) and sends once more.
 */
static void aplic_done_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	for (uint32_t g = 0; g < sim->npins; g++) {
		struct sim_rte *e = &sim->rtes[g];
		uint32_t to_cpu, to_id;

		if (!e->sent || !e->active || e->r.trigger != UMSI_INTX_LEVEL ||
		    !sim_msg_target_locked(sim, e->msg_addr, e->msg_data,
					   &to_cpu, &to_id) ||
		    to_cpu != cpu || to_id != id)
			continue;
		sim->st.aplic_retriggers++;
		e->sent = false;
		aplic_eval_locked(sim, g);
	}
}

/* CPU @cpu's dispatch of identity @id returned (sim_model_ops.done). */
static void wired_done_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	if (sim->ctl->wired == SIM_WIRED_APLIC)
		aplic_done_locked(sim, cpu, id);
	else
		arm_spi_done_locked(sim, cpu, id);
}

static void sim_ioapic_eval_locked(struct umsi_sim *sim, uint32_t gsi)
{
	struct sim_rte *e = &sim->rtes[gsi];
	bool asserted = gsi_asserted_locked(sim, gsi);
	bool wire_low = gsi >= 16;
	bool electrical_high = wire_low ? !asserted : asserted;
	bool active = e->r.polarity == UMSI_INTX_ACTIVE_LOW ? !electrical_high
							    : electrical_high;
	bool rising = active && !e->active;

	e->active = active;
	e->r.line = active;
	if (sim->ctl->wired == SIM_WIRED_APLIC) {
		aplic_eval_locked(sim, gsi);
		return;
	}
	if (sim->ctl->wired == SIM_WIRED_ARM_SPI) {
		arm_spi_eval_locked(sim, gsi);
		return;
	}
	if (e->r.masked || !e->r.programmed)
		return;
	if (e->r.trigger == UMSI_INTX_EDGE) {
		if (rising)
			rte_send_locked(sim, gsi);
		return;
	}
	if (active && !e->r.remote_irr)
		rte_send_locked(sim, gsi);
}

static void sim_ioapic_eval_all_locked(struct umsi_sim *sim)
{
	for (uint32_t g = 0; g < sim->npins; g++)
		sim_ioapic_eval_locked(sim, g);
}

/*
 * An EOI reaching IO-APIC inputs @from .. @to - 1, broadcast by a local
 * APIC (to all of them) or written to one IO-APIC's EOI register (version
 * 0x20): every level entry whose vector field is @vector ends. An AMD-Vi
 * entry's field is its index, not the vector the CPU took, and two
 * IO-APICs' tables may use the same index.
 */
static void sim_ioapic_eoi_range_locked(struct umsi_sim *sim, uint8_t vector,
					uint32_t from, uint32_t to)
{
	for (uint32_t g = from; g < to; g++) {
		struct sim_rte *e = &sim->rtes[g];

		if (!e->r.programmed || e->r.trigger != UMSI_INTX_LEVEL ||
		    (e->amdvi ? (uint8_t)e->r.handle : e->r.vector) != vector ||
		    !e->r.remote_irr)
			continue;
		e->r.remote_irr = false;
		sim_ioapic_eval_locked(sim, g);
	}
}

static void sim_ioapic_eoi_locked(struct umsi_sim *sim, uint8_t vector)
{
	sim_ioapic_eoi_range_locked(sim, vector, 0, sim->npins);
}

/* The inputs of the IO-APIC that has input @gsi: [*@from, *@to). */
static void sim_ioapic_span(const struct umsi_sim *sim, uint32_t gsi,
			    uint32_t *from, uint32_t *to)
{
	const struct umsi_ioapic_source *io = sim_ioapic_of(sim, gsi);

	*from = io ? io->gsi_base : 0;
	*to = io ? io->gsi_base + io->gsi_count : sim->npins;
}

/*
 * What a kernel does after ending vector @vector on CPU @cpu under AMD-Vi:
 * the unit's message carried no trigger mode, so nothing told the IO-APIC;
 * a level entry the host aimed there is ended at the EOI register.
 */
static void sim_ioapic_host_eoi_locked(struct umsi_sim *sim, uint32_t cpu,
				       uint32_t vector)
{
	uint32_t apic;

	if (!sim->amdvi_rtes || cpu >= sim->ncpus)
		return;
	apic = sim->cpus[cpu].apic_id;
	for (uint32_t g = 0; g < sim->npins; g++) {
		struct sim_rte *e = &sim->rtes[g];

		if (e->amdvi && e->r.trigger == UMSI_INTX_LEVEL &&
		    e->eoi_apic == apic && e->eoi_vector == vector) {
			uint32_t from, to;

			/* The EOI register of the entry's own IO-APIC. */
			sim_ioapic_span(sim, g, &from, &to);
			sim->st.ioapic_eoi_writes++;
			sim_ioapic_eoi_range_locked(sim, (uint8_t)e->r.handle,
						    from, to);
		}
	}
}

/*
 * gsi_program of an AMD-Vi machine's wired message (umsi/ctl.h: address
 * 0xFEE00000, data the index and, in bits 31:16, where it goes). The entry
 * is a compatibility one whose vector field is the index; its message goes
 * through the unit as the IO-APIC's. The host keeps where it goes, for the
 * EOI; an entry delivered and not yet ended that is aimed elsewhere is
 * ended now, masked (its EOI would be looked for on the new CPU).
 */
static int rte_program_amdvi_locked(struct umsi_sim *sim, uint32_t gsi,
				    const struct umsi_gsi_entry *in)
{
	struct sim_rte *e = &sim->rtes[gsi];
	uint32_t data = in->msg.data, index = UMSI_AMDVI_WIRED_INDEX(data);

	if ((data & 0xff00u) || !UMSI_AMDVI_WIRED_VECTOR(data))
		return -UMSI_EINVAL;
	if (in->trigger == UMSI_INTX_EDGE)
		e->r.remote_irr = false;
	if (e->amdvi && e->r.remote_irr &&
	    (e->eoi_apic != UMSI_AMDVI_WIRED_APIC(data) ||
	     e->eoi_vector != UMSI_AMDVI_WIRED_VECTOR(data) ||
	     e->r.handle != index)) {
		sim->st.ioapic_eoi_writes++;
		e->r.remote_irr = false;
	}
	if (!e->amdvi)
		sim->amdvi_rtes++;
	e->amdvi = true;
	e->eoi_vector = (uint8_t)UMSI_AMDVI_WIRED_VECTOR(data);
	e->eoi_apic = UMSI_AMDVI_WIRED_APIC(data);
	rte_set_remapped_locked(sim, gsi, in, (uint16_t)index,
				UMSI_X86_MSI_BASE, index);
	return 0;
}

static int sim_gsi_program_locked(struct umsi_sim *sim, uint32_t gsi,
			   const struct umsi_gsi_entry *in)
{
	struct sim_rte *e;
	struct umsi_x86_msi m;

	if (gsi >= sim->npins || in->trigger > 1 || in->polarity > 1)
		return -UMSI_EINVAL;
	e = &sim->rtes[gsi];
	/* A masked entry may come without a message (umsi/host.h). */
	if (in->masked && !in->msg.address && !in->msg.data) {
		e->r.masked = true;
		sim_ioapic_eval_locked(sim, gsi);
		return 0;
	}
	if (sim->ctl->wired == SIM_WIRED_APLIC)
		return aplic_program_locked(sim, gsi, in);
	/*
	 * An Arm machine: a wired input is an SPI the kernel routes from
	 * the back end's message (umsi/ctl.h, UMSI_ARM_WIRED_MSG: the CPU,
	 * the identity), modelled by arm_spi_eval_locked()
	 * (umsi_sim_ioapic_get: apic_id = the CPU, vector = the identity,
	 * low 8 bits).
	 */
	if (sim->ctl->wired == SIM_WIRED_ARM_SPI) {
		if (!(in->msg.address & UMSI_ARM_WIRED_MSG) ||
		    (uint32_t)in->msg.address >= sim->ncpus)
			return -UMSI_EINVAL;
		e->r.programmed = true;
		e->r.masked = in->masked;
		e->r.trigger = in->trigger;
		e->r.polarity = in->polarity;
		e->r.apic_id = (uint32_t)in->msg.address;
		e->r.vector = (uint8_t)in->msg.data;
		e->msg_addr = in->msg.address;
		e->msg_data = in->msg.data;
		sim_ioapic_eval_locked(sim, gsi);
		return 0;
	}
	/* An AMD-Vi unit's: address exactly 0xFEE00000, bits 31:16 set. */
	if (in->msg.address == UMSI_X86_MSI_BASE && (in->msg.data >> 16) &&
	    sim_remap_present_locked(sim))
		return rte_program_amdvi_locked(sim, gsi, in);
	/* The entry takes destination and vector from the x86 message. */
	umsi_x86_msg_decode(&in->msg, sim->plat_flags & UMSI_PLAT_EXT_DEST_ID,
			    &m);
	if (m.valid && m.remapped)
		return rte_program_remapped_locked(sim, gsi, in, &m);
	if (!m.valid || m.vector < 16)
		return -UMSI_EINVAL;
	/* Destination bits 14:8 in address 11:5 only where decoded. */
	if (!(sim->plat_flags & UMSI_PLAT_EXT_DEST_ID) &&
	    (in->msg.address & (0x7fu << 5)))
		return -UMSI_ERANGE;
	/* The sim's IO-APIC sends compatibility-format messages only. */
	if (!umsi_x86_dest_reachable(m.dest_id,
				     sim->plat_flags & ~UMSI_PLAT_IRQ_REMAP))
		return -UMSI_ERANGE;
	if (in->trigger == UMSI_INTX_EDGE)
		e->r.remote_irr = false;
	sim_rte_not_amdvi(sim, e);
	e->r.programmed = true;
	e->r.remappable = false;
	e->r.handle = 0;
	e->r.apic_id = m.dest_id;
	e->r.vector = m.vector;
	e->r.trigger = in->trigger;
	e->r.polarity = in->polarity;
	e->r.masked = in->masked;
	sim_ioapic_eval_locked(sim, gsi);
	return 0;
}

int umsi_sim_set_intx_route(struct umsi_sim *sim, umsi_bdf_t bdf, int gsi)
{
	struct sim_dev *d;
	int err = 0;

	sim_lock(sim);
	d = sim_dev_find(sim, bdf);
	if (!d) {
		err = -UMSI_ENOENT;
	} else if (gsi >= (int)sim->npins) {
		err = -UMSI_EINVAL;
	} else {
		d->route_override = true;
		d->route_gsi = gsi < 0 ? -1 : gsi;
		sim_ioapic_eval_all_locked(sim);
	}
	sim_unlock(sim);
	sim_drain(sim);
	return err;
}

int umsi_sim_gsi_set(struct umsi_sim *sim, uint32_t gsi, bool asserted)
{
	if (gsi >= sim->npins)
		return -UMSI_EINVAL;
	sim_lock(sim);
	sim->gsi_ext[gsi] = asserted;
	sim_ioapic_eval_locked(sim, gsi);
	sim_unlock(sim);
	sim_drain(sim);
	return 0;
}

int umsi_sim_ioapic_get(struct umsi_sim *sim, uint32_t gsi,
			struct umsi_sim_rte *out)
{
	if (gsi >= sim->npins)
		return -UMSI_EINVAL;
	sim_lock(sim);
	*out = sim->rtes[gsi].r;
	sim_unlock(sim);
	return 0;
}

/* ---- Interrupt remapping --------------------------------------------------------- */

/*
 * The table lives beside an index: a bitmap of busy entries with a
 * summary bit per full word (the lowest free entry in two short scans),
 * and a hash from IRQ to entry (open addressing, at most half full since
 * it has twice as many slots as there are entries).
 */
#define IRTE_WORDS      (UMSI_SIM_IRTE_COUNT / 64)
#define IRTE_HASH_SLOTS (2 * UMSI_SIM_IRTE_COUNT)

static int remap_table_init(struct umsi_sim *sim)
{
	if (sim->irte)
		return 0;
	sim->irte = calloc(UMSI_SIM_IRTE_COUNT, sizeof(*sim->irte));
	sim->irte_busy = calloc(IRTE_WORDS, sizeof(uint64_t));
	sim->irte_full = calloc((IRTE_WORDS + 63) / 64, sizeof(uint64_t));
	sim->irte_by_irq = calloc(IRTE_HASH_SLOTS, sizeof(uint32_t));
	if (sim->irte && sim->irte_busy && sim->irte_full && sim->irte_by_irq)
		return 0;
	sim_remap_fini(sim);
	return -UMSI_ENOMEM;
}

static void sim_remap_fini(struct umsi_sim *sim)
{
	free(sim->irte);
	free(sim->irte_busy);
	free(sim->irte_full);
	free(sim->irte_by_irq);
	sim->irte = NULL;
	sim->irte_busy = sim->irte_full = NULL;
	sim->irte_by_irq = NULL;
}

static uint32_t irte_hash(uint32_t irq)
{
	uint32_t h = irq * 0x9e3779b1u;

	return (h ^ (h >> 15)) & (IRTE_HASH_SLOTS - 1);
}

/* The hash slot holding @irq's entry, or the empty slot that would. */
static uint32_t irte_slot(const struct umsi_sim *sim, uint32_t irq)
{
	uint32_t i = irte_hash(irq);

	while (sim->irte_by_irq[i] &&
	       sim->irte[sim->irte_by_irq[i] - 1].irq != irq)
		i = (i + 1) & (IRTE_HASH_SLOTS - 1);
	return i;
}

/* Empty slot @i, moving back the entries its emptiness would hide. */
static void irte_slot_clear(struct umsi_sim *sim, uint32_t i)
{
	uint32_t j = i;

	sim->irte_by_irq[i] = 0;
	for (;;) {
		uint32_t k;

		j = (j + 1) & (IRTE_HASH_SLOTS - 1);
		if (!sim->irte_by_irq[j])
			return;
		k = irte_hash(sim->irte[sim->irte_by_irq[j] - 1].irq);
		/* Stays when its home k lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		sim->irte_by_irq[i] = sim->irte_by_irq[j];
		sim->irte_by_irq[j] = 0;
		i = j;
	}
}

/* The lowest free entry, or -1. */
static int irte_lowest_free(const struct umsi_sim *sim)
{
	for (uint32_t s = 0; s < (IRTE_WORDS + 63) / 64; s++) {
		uint64_t notfull = ~sim->irte_full[s];
		uint32_t w;

		if (!notfull)
			continue;
		w = s * 64 + (uint32_t)__builtin_ctzll(notfull);
		if (w >= IRTE_WORDS)
			return -1;
		return (int)(w * 64 + (uint32_t)__builtin_ctzll(~sim->irte_busy[w]));
	}
	return -1;
}

static void irte_mark(struct umsi_sim *sim, uint32_t h, bool busy)
{
	uint32_t w = h / 64;

	if (busy)
		sim->irte_busy[w] |= 1ull << (h % 64);
	else
		sim->irte_busy[w] &= ~(1ull << (h % 64));
	if (sim->irte_busy[w] == ~0ull)
		sim->irte_full[w / 64] |= 1ull << (w % 64);
	else
		sim->irte_full[w / 64] &= ~(1ull << (w % 64));
}

int sim_remap_compose_locked(struct umsi_sim *sim, uint32_t irq,
			     uint32_t apic_id, uint8_t vector,
			     struct umsi_msg *msg)
{
	uint32_t slot;
	int h;

	if (!(sim->plat_flags & UMSI_PLAT_IRQ_REMAP))
		return -UMSI_ENOTSUP;
	if (vector < 16)
		return -UMSI_EINVAL;
	if (remap_table_init(sim))
		return -UMSI_ENOMEM;
	/* The IRQ's own entry again (a move), else the lowest free one. */
	slot = irte_slot(sim, irq);
	if (sim->irte_by_irq[slot]) {
		h = (int)sim->irte_by_irq[slot] - 1;
	} else {
		h = irte_lowest_free(sim);
		if (h < 0)
			return -UMSI_ENOSPC;
		irte_mark(sim, (uint32_t)h, true);
		sim->irte_by_irq[slot] = (uint32_t)h + 1;
		sim->irte_used++;
	}
	sim->irte[h] = (struct sim_irte){ true, irq, apic_id, vector };
	/* Remappable format, SHV set, subhandle 0 in the data. */
	msg->address = UMSI_X86_MSI_BASE | UMSI_X86_ADDR_REMAP |
		       UMSI_X86_ADDR_RH |
		       (((uint32_t)h & 0x7fff) << 5) |
		       ((((uint32_t)h >> 15) & 1) << 2);
	msg->data = 0;
	return 0;
}

void sim_remap_free_locked(struct umsi_sim *sim, uint32_t irq)
{
	uint32_t slot, h;

	if (sim->irte) {
		slot = irte_slot(sim, irq);
		if (sim->irte_by_irq[slot]) {
			h = sim->irte_by_irq[slot] - 1;
			irte_slot_clear(sim, slot);
			sim->irte[h].present = false;
			irte_mark(sim, h, false);
			sim->irte_used--;
			return;
		}
	}
	sim_bad_access_locked(sim, "remap_free of IRQ %u without an entry",
			      irq);
}

int sim_remap_lookup_locked(struct umsi_sim *sim, uint32_t index,
			    uint32_t *apic_id, uint8_t *vector)
{
	if (!sim->irte || index >= UMSI_SIM_IRTE_COUNT ||
	    !sim->irte[index].present)
		return -UMSI_ENOENT;
	*apic_id = sim->irte[index].apic_id;
	*vector = sim->irte[index].vector;
	return 0;
}

int umsi_sim_irte_get(struct umsi_sim *sim, uint32_t handle, uint32_t *irq,
		      uint32_t *apic_id, uint8_t *vector)
{
	int err = 0;

	if (handle >= UMSI_SIM_IRTE_COUNT)
		return -UMSI_EINVAL;
	sim_lock(sim);
	if (!sim->irte || !sim->irte[handle].present) {
		err = -UMSI_ENOENT;
	} else {
		if (irq)
			*irq = sim->irte[handle].irq;
		if (apic_id)
			*apic_id = sim->irte[handle].apic_id;
		if (vector)
			*vector = sim->irte[handle].vector;
	}
	sim_unlock(sim);
	return err;
}

uint32_t umsi_sim_irte_used(struct umsi_sim *sim)
{
	uint32_t n;

	sim_lock(sim);
	n = sim->irte_used;
	sim_unlock(sim);
	return n;
}

/* ---- The model (sim_models.c) ---------------------------------------------- */

static int ioapic_model_init(struct umsi_sim *sim,
			     const struct umsi_sim_config *cfg)
{
	/* The requester ID a remapping unit sees on the IO-APIC's writes;
	 * with config.ioapics, each IO-APIC's own. */
	uint32_t pins = 0;

	sim->ioapic_rid = cfg->vtd_ioapic_sid;
	if (cfg->nioapics > UMSI_MAX_IOAPICS || (cfg->nioapics && !cfg->ioapics))
		return -UMSI_EINVAL;
	/* Back to back from GSI 0, each of 1 to 240 inputs. */
	for (uint32_t i = 0; i < cfg->nioapics; i++) {
		const struct umsi_ioapic_source *io = &cfg->ioapics[i];

		if (io->gsi_base != pins || !io->gsi_count ||
		    io->gsi_count > 240 - pins)
			return -UMSI_EINVAL;
		pins += io->gsi_count;
		sim->ioapics[i] = *io;
	}
	sim->nioapics = cfg->nioapics;
	if (!pins)
		pins = cfg->ioapic_pins ? cfg->ioapic_pins : 24;
	if (pins > 240 || (cfg->ioapic_pins && cfg->ioapic_pins != pins))
		return -UMSI_EINVAL;
	return sim_ioapic_init(sim, pins);
}

static void ioapic_model_fini(struct umsi_sim *sim)
{
	sim_ioapic_fini(sim);
	sim_remap_fini(sim);
}

/* The programmed, unmasked inputs, as umsi_sim_live_targets() lists them. */
static void ioapic_targets_locked(struct umsi_sim *sim,
				  void (*fn)(void *arg,
					     const struct umsi_sim_target *t),
				  void *arg, unsigned *n)
{
	for (uint32_t g = 0; g < sim->npins; g++) {
		struct sim_rte *e = &sim->rtes[g];
		struct umsi_sim_target t = { .gsi = (int)g, .resolved = true };

		if (!e->r.programmed || e->r.masked)
			continue;
		t.vector = e->r.vector;
		t.id = e->r.vector;
		t.cpu = sim_cpu_of_apic_locked(sim, e->r.apic_id);
		if (sim->ctl->wired == SIM_WIRED_ARM_SPI) {
			/* The kernel's SPI: the CPU, and the identity's
			 * INTID as its dispatch gets it. */
			int intid = sim->ctl->wired_intid(sim, e->msg_data);

			t.address = e->msg_addr;
			t.data = e->msg_data;
			t.resolved = intid >= 0;
			t.cpu = e->r.apic_id;
			t.id = intid >= 0 ? (uint32_t)intid : 0;
			t.vector = (uint8_t)t.id;
		} else if (e->r.remappable) {
			/* Through the remapping unit's table, as it would go. */
			uint32_t apic_id = 0;
			uint8_t vector = 0;
			bool ok = false;

			t.address = e->msg_addr;
			t.data = e->msg_data;
			t.resolved = sim_remap_target_locked(sim,
					sim_ioapic_rid(sim, g), t.address,
					t.data, &ok, &apic_id, &vector) && ok;
			t.vector = vector;
			t.id = vector;
			t.cpu = !t.resolved || apic_id == UINT32_MAX ?
				UINT32_MAX : sim_cpu_of_apic_locked(sim,
								    apic_id);
		} else if (sim->ctl->wired_target) {
			t.address = e->msg_addr;
			t.data = e->msg_data;
			t.resolved = sim_msg_target_locked(sim, t.address,
							   t.data, &t.cpu,
							   &t.id);
			t.vector = (uint8_t)t.id;
		}
		(*n)++;
		fn(arg, &t);
	}
}

static void ioapic_dump(struct umsi_sim *sim, FILE *out)
{
	for (uint32_t g = 0; g < sim->npins; g++) {
		const struct umsi_sim_rte *r = &sim->rtes[g].r;

		if (!r->programmed && !r->line)
			continue;
		fprintf(out, "  gsi %u apic %u vector 0x%02x %s %s%s%s%s", g,
			r->apic_id, r->vector, r->trigger ? "level" : "edge",
			r->polarity ? "low" : "high",
			r->masked ? " masked" : "",
			r->remote_irr ? " remote-irr" : "",
			r->line ? " active" : "");
		if (r->remappable)
			fprintf(out, " remappable handle %u", r->handle);
		fputc('\n', out);
	}
}

static void ioapic_stats_reset(struct umsi_sim *sim)
{
	for (uint32_t i = 0; i < sim->npins; i++)
		sim->rtes[i].r.deliveries = 0;
}

const struct sim_model_ops sim_ioapic_ops = {
	.name = "wired",
	.controller = SIM_NO_CTL,
	.init = ioapic_model_init,
	.fini = ioapic_model_fini,
	.intx_route = sim_intx_route_locked,
	.gsi_program = sim_gsi_program_locked,
	.line = sim_ioapic_eval_locked,
	.eoi_broadcast = sim_ioapic_eoi_locked,
	.done = wired_done_locked,
	.host_eoi = sim_ioapic_host_eoi_locked,
	.targets = ioapic_targets_locked,
	.dump = ioapic_dump,
	.stats_reset = ioapic_stats_reset,
};
