/* SPDX-License-Identifier: MIT */
/*
 * pciehp.c - PCI Express native hot-plug: the port service.
 *
 * A root port or switch downstream port whose PCI Express Capabilities
 * say Slot Implemented and whose Slot Capabilities say Hot-Plug Capable
 * owns a slot (PCIe 4.0, 6.7 and 7.5.3.9-7.5.3.11). The kernel claims it
 * like a driver ("pcieport"): its own interrupt goes through uMSI (MSI-X,
 * else MSI, else its INTx line), on the vector its Interrupt Message
 * Number names, and it raises one on Attention Button Pressed, Presence
 * Detect Changed and Data Link Layer State Changed.
 *
 * The handler only reads and clears the event bits and queues them; the
 * boot CPU's work loop (main.c) acts on them in process context:
 *
 *  - a card appeared (presence, or the button on an empty slot): power
 *    the slot on, wait for the link (Data Link Layer Link Active, up to
 *    1 s, when the port reports it; else 1 s), then 100 ms more before
 *    the first configuration request (PCIe 4.0, 6.6.1), enumerate what
 *    is there (pcihot.c: bus numbers, BARs in the port's windows), add
 *    each function to uMSI as fresh from reset and give it to its driver
 *    or to umsi.probe=all;
 *  - the button on an occupied slot (a removal request; QEMU's
 *    device_del), or presence or link lost (surprise removal): stop the
 *    drivers, free their vectors, umsi_pci_remove() every function below
 *    the port (deepest first), power the slot off (QEMU then finishes the
 *    removal), give the BARs and bus numbers back, and print one
 *    `removed` line per function with the vectors the matrix still holds.
 *
 * Waits kept: the link (above), and 1 s after powering a slot off before
 * it is powered again (Linux's pciehp waits that second right after
 * power-off; here it is paid only by a slot that is powered on again
 * within it). Every Slot Control write is a command whose completion is
 * polled (PCIe 4.0, 6.7.3.2; at most 1 s) unless the port says No
 * Command Completed Support.
 *
 * The Attention Button (PCIe 4.0, 6.7.1.5 and 6.7.3.1): pressed on an
 * occupied, powered slot it asks for the card's removal. The Power
 * Indicator blinks and a 5-second abort interval begins; a second press
 * within it cancels the request (the indicator goes back on and nothing
 * is removed), else the slot is brought down when it ends. The work loop
 * keeps polling while a window is open (the kernel has no timer
 * interrupt). `umsi.hp_button_ms=N` sets the interval, 0 removing at once
 * (what a VM host wants: QEMU's device_del waits for it); the default is
 * the specification's 5000.
 *
 * Test aid: `umsi.hp_surprise` plays a card pulled out without warning
 * when the button asks for its removal: the slot's power is cut first
 * (QEMU then removes the card), so that the drivers find their functions
 * gone (all-ones), and the removal runs as for a presence lost. With
 * `umsi.hp_surprise=driver` the drivers find out first: each fires into
 * its vanished function, sees all-ones, and reports it
 * (glue_function_gone), which brings the slot down.
 */
#include <umsi/irq.h>
#include <umsi/pci.h>
#include <umsi/pci_regs.h>

#include "kernel.h"
#include "drivers/drivers.h"
#include "glue.h"
#include "pci.h"
#include "pciehp.h"
#include "smp.h"

/* PCI Express Capability registers (PCIe 4.0, 7.5.3). */
#define PCIE_FLAGS_SLOT      0x0100	/* Slot Implemented */
#define PCIE_FLAGS_IRQ(f)    (((f) >> 9) & 0x1f)	/* Interrupt Message Number */
#define PCIE_LNKCAP          0x0c
#define  PCIE_LNKCAP_DLLLARC  (1u << 20)	/* DLL Link Active Reporting */
#define PCIE_LNKSTA          0x12
#define  PCIE_LNKSTA_DLLLA    (1u << 13)	/* Data Link Layer Link Active */
#define PCIE_SLTCAP          0x14
#define  PCIE_SLTCAP_ABP      (1u << 0)	/* Attention Button Present */
#define  PCIE_SLTCAP_PCP      (1u << 1)	/* Power Controller Present */
#define  PCIE_SLTCAP_AIP      (1u << 3)	/* Attention Indicator Present */
#define  PCIE_SLTCAP_PIP      (1u << 4)	/* Power Indicator Present */
#define  PCIE_SLTCAP_HPC      (1u << 6)	/* Hot-Plug Capable */
#define  PCIE_SLTCAP_NCCS     (1u << 18)	/* No Command Completed Support */
#define PCIE_SLTCTL          0x18
#define  PCIE_SLTCTL_ABPE     (1u << 0)
#define  PCIE_SLTCTL_PFDE     (1u << 1)
#define  PCIE_SLTCTL_MRLSCE   (1u << 2)
#define  PCIE_SLTCTL_PDCE     (1u << 3)
#define  PCIE_SLTCTL_CCIE     (1u << 4)
#define  PCIE_SLTCTL_HPIE     (1u << 5)
#define  PCIE_SLTCTL_AIC      (3u << 6)	/* Attention Indicator */
#define  PCIE_SLTCTL_AIC_ON   (1u << 6)
#define  PCIE_SLTCTL_AIC_OFF  (3u << 6)
#define  PCIE_SLTCTL_PIC      (3u << 8)	/* Power Indicator */
#define  PCIE_SLTCTL_PIC_ON   (1u << 8)
#define  PCIE_SLTCTL_PIC_BLINK (2u << 8)
#define  PCIE_SLTCTL_PIC_OFF  (3u << 8)
#define  PCIE_SLTCTL_PCC      (1u << 10)	/* Power Controller: 1 = off */
#define  PCIE_SLTCTL_DLLSCE   (1u << 12)
#define PCIE_SLTSTA          0x1a
#define  PCIE_SLTSTA_ABP      (1u << 0)
#define  PCIE_SLTSTA_PFD      (1u << 1)
#define  PCIE_SLTSTA_MRLSC    (1u << 2)
#define  PCIE_SLTSTA_PDC      (1u << 3)
#define  PCIE_SLTSTA_CC       (1u << 4)
#define  PCIE_SLTSTA_PDS      (1u << 6)	/* Presence Detect State */
#define  PCIE_SLTSTA_DLLSC    (1u << 8)

#define HP_EVENTS   (PCIE_SLTSTA_ABP | PCIE_SLTSTA_PFD | PCIE_SLTSTA_MRLSC | \
		     PCIE_SLTSTA_PDC | PCIE_SLTSTA_DLLSC)
#define HP_EV_GONE  (1u << 16)	/* software: a driver found its function gone */

#define HP_MAX_PORTS     32
#define HP_MAX_FUNCS     64
#define CMD_TIMEOUT_US   1000000	/* command completion: 1 s */
#define LINK_TIMEOUT_US  1000000	/* Link Active after power-on: 1 s */
#define LINK_SETTLE_US   100000		/* PCIe 4.0, 6.6.1: 100 ms */
#define POWER_OFF_US     1000000	/* off for 1 s before powered again */

struct hp_port {
	int idx;			/* pci_devs index of the port */
	struct glue_dev *g;
	uint16_t cap;			/* PCI Express Capability offset */
	uint32_t slotcap;
	bool dllla;			/* the port reports Link Active */
	bool on;			/* powered, functions set up */
	volatile uint32_t events;	/* queued by the handler */
	volatile uint64_t event_ns;	/* when the oldest queued event came */
	uint64_t off_ns;		/* when the slot was last powered off */
	volatile uint64_t irqs;		/* handler calls that found events */
	uint64_t button_ns;		/* the pressed button's abort window
					 * ends (0: none open) */
	uint64_t button_t0;		/* when it was pressed */
	uint64_t aid_press_ns;		/* umsi.hp_button_aid: press again then */
};

static struct hp_port ports[HP_MAX_PORTS];
/* The glue whose functions the ports serve (pciehp_init()). */
static struct glue *hp_gl;
static uint32_t nports;
/* The Attention Button's abort interval (umsi.hp_button_ms). */
#define HP_BUTTON_MS_DEFAULT 5000u
static uint32_t button_ms = HP_BUTTON_MS_DEFAULT;
/* Abort windows open now (pciehp_pending). */
static volatile uint32_t windows_open;
/*
 * Test aid `umsi.hp_button_aid=cancel`: one second into an abort window
 * the button is pressed again (queued as the hardware's event would be):
 * the operator's cancel, which QEMU cannot play (it refuses a second
 * device_del while one is pending).
 */
static bool button_aid_cancel;

/* umsi.hp_surprise test aid: who finds out first that the card is gone. */
static enum { AID_NONE, AID_EVENT, AID_DRIVER } surprise_aid;

static char *bdf_str(uint32_t bdf, char *buf)
{
	ksnprintf(buf, 16, "0000:%02x:%02x.%u", PCI_BUS(bdf), PCI_DEV(bdf),
		  PCI_FN(bdf));
	return buf;
}

static uint16_t hp_read(const struct hp_port *p, uint16_t reg)
{
	return (uint16_t)pci_cfg_read(pci_devs[p->idx].bdf, p->cap + reg, 2);
}

static void hp_write(const struct hp_port *p, uint16_t reg, uint16_t v)
{
	pci_cfg_write(pci_devs[p->idx].bdf, p->cap + reg, 2, v);
}

/*
 * One Slot Control command: the fields in @mask take the values in @set.
 * A 16-bit write, so that it is never also a Slot Status write; then
 * wait for Command Completed and clear it.
 */
static bool hp_command(struct hp_port *p, uint16_t set, uint16_t mask)
{
	uint16_t ctl = hp_read(p, PCIE_SLTCTL);
	uint64_t end;

	hp_write(p, PCIE_SLTCTL, (uint16_t)((ctl & ~mask) | set));
	if (p->slotcap & PCIE_SLTCAP_NCCS)
		return true;
	end = clock_ns() + CMD_TIMEOUT_US * 1000ull;
	while (!(hp_read(p, PCIE_SLTSTA) & PCIE_SLTSTA_CC)) {
		if (clock_ns() > end) {
			kprintf("pciehp %02x:%02x.%u: command 0x%04x not completed\n",
				PCI_BUS(pci_devs[p->idx].bdf),
				PCI_DEV(pci_devs[p->idx].bdf),
				PCI_FN(pci_devs[p->idx].bdf), set);
			return false;
		}
		cpu_relax();
	}
	hp_write(p, PCIE_SLTSTA, PCIE_SLTSTA_CC);
	return true;
}

static void hp_indicators(struct hp_port *p, uint16_t power, uint16_t attention)
{
	uint16_t set = 0, mask = 0;

	if (p->slotcap & PCIE_SLTCAP_PIP) {
		set |= power;
		mask |= PCIE_SLTCTL_PIC;
	}
	if (p->slotcap & PCIE_SLTCAP_AIP) {
		set |= attention;
		mask |= PCIE_SLTCTL_AIC;
	}
	if (mask)
		hp_command(p, set, mask);
}

/*
 * The port's interrupt: read the events, clear exactly those (RW1C), and
 * queue them for the work loop. With MSI/MSI-X the port sends a new
 * message only once every enabled event bit is clear (PCIe 4.0,
 * 6.7.3.4), so an event that arrives while we clear is picked up by
 * reading again. Nothing set: not ours (a shared INTx line; a port that
 * keeps interrupting for nothing is then disabled by uMSI's storm
 * detection like any other IRQ).
 */
static int hp_irq(uint32_t irq, void *cookie)
{
	struct kvec *v = cookie;
	struct hp_port *p = v->dev->priv;
	uint32_t seen = 0;

	(void)irq;
	for (int i = 0; i < 8; i++) {
		uint16_t sta = hp_read(p, PCIE_SLTSTA);
		uint16_t ev;

		if (sta == 0xffff)
			break;		/* the port itself is gone */
		ev = sta & HP_EVENTS;
		if (!ev)
			break;
		hp_write(p, PCIE_SLTSTA, ev);
		seen |= ev;
	}
	if (!seen) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	if (!p->event_ns)
		p->event_ns = clock_ns();
	p->irqs++;
	v->count++;
	__atomic_fetch_or(&p->events, seen, __ATOMIC_RELEASE);
	glue_kick();
	return UMSI_IRQ_HANDLED;
}

/*
 * The port's vectors: enough to include its Interrupt Message Number
 * (MSI-X table entry, or MSI message), else one INTx line.
 */
static int pcieport_probe(struct kdev *d)
{
	struct hp_port *p = d->priv;
	uint32_t msg = PCIE_FLAGS_IRQ(hp_read(p, UMSI_PCIE_FLAGS));
	int n;

	/* Stale events from before us: clear them. */
	hp_write(p, PCIE_SLTSTA, HP_EVENTS | PCIE_SLTSTA_CC);
	n = kdrv_setup_vectors(d, msg + 1, msg + 1, UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_MSI,
			       hp_irq);
	if (n < 0)
		n = kdrv_setup_vectors(d, 1, 1, UMSI_PCI_IRQ_INTX, hp_irq);
	if (n < 0)
		return n;
	/* The message number may change with the vectors enabled. */
	msg = PCIE_FLAGS_IRQ(hp_read(p, UMSI_PCIE_FLAGS));
	if (umsi_pci_mode(d->udev) != UMSI_MODE_INTX && msg >= (uint32_t)n)
		kprintf("pciehp: interrupt message %u beyond the %d vectors\n",
			msg, n);
	hp_command(p, PCIE_SLTCTL_HPIE | PCIE_SLTCTL_ABPE | PCIE_SLTCTL_PDCE |
		   (p->dllla ? PCIE_SLTCTL_DLLSCE : 0),
		   PCIE_SLTCTL_HPIE | PCIE_SLTCTL_ABPE | PCIE_SLTCTL_PDCE |
		   PCIE_SLTCTL_CCIE | PCIE_SLTCTL_PFDE | PCIE_SLTCTL_MRLSCE |
		   PCIE_SLTCTL_DLLSCE);
	return n;
}

/* Events stop first: the port's own vectors are freed after this. */
static void pcieport_stop(struct kdev *d)
{
	struct hp_port *p = d->priv;

	if (!kdrv_gone(d))
		hp_command(p, 0, PCIE_SLTCTL_HPIE | PCIE_SLTCTL_ABPE |
			   PCIE_SLTCTL_PDCE | PCIE_SLTCTL_DLLSCE);
}

static const struct kdriver pcieport_driver = {
	.name = "pcieport",
	.probe = pcieport_probe,
	.stop = pcieport_stop,
};

static bool slot_powered(const struct hp_port *p)
{
	return !(p->slotcap & PCIE_SLTCAP_PCP) ||
	       !(hp_read(p, PCIE_SLTCTL) & PCIE_SLTCTL_PCC);
}

static bool link_up(const struct hp_port *p)
{
	return !p->dllla || (hp_read(p, PCIE_LNKSTA) & PCIE_LNKSTA_DLLLA);
}

/* Power the slot off (QEMU then removes what was in it). */
static void hp_power_off(struct hp_port *p, uint16_t attention)
{
	if (p->slotcap & PCIE_SLTCAP_PCP) {
		uint16_t set = PCIE_SLTCTL_PCC, mask = PCIE_SLTCTL_PCC;

		if (p->slotcap & PCIE_SLTCAP_PIP) {
			set |= PCIE_SLTCTL_PIC_OFF;
			mask |= PCIE_SLTCTL_PIC;
		}
		if (p->slotcap & PCIE_SLTCAP_AIP) {
			set |= attention;
			mask |= PCIE_SLTCTL_AIC;
		}
		hp_command(p, set, mask);
		p->off_ns = clock_ns();
	} else {
		hp_indicators(p, PCIE_SLTCTL_PIC_OFF, attention);
	}
}

static uint64_t us_since(uint64_t t0)
{
	return t0 ? (clock_ns() - t0) / 1000 : 0;
}

/* The first interrupt any function of @list handled, or 0. */
static uint64_t first_irq_ns(const int *list, int n)
{
	uint64_t first = 0;

	for (int i = 0; i < n; i++) {
		struct kdev *kd = hp_gl->devs[list[i]].kd;

		for (uint32_t k = 0; kd && k < kd->nvec; k++)
			if (kd->vecs[k].first_ns &&
			    (!first || kd->vecs[k].first_ns < first))
				first = kd->vecs[k].first_ns;
	}
	return first;
}

/*
 * A card is there: power, link, enumerate, add. On any failure the slot
 * is powered off again with its attention indicator on (as Linux does),
 * and nothing of the card stays set up.
 */
static void hp_enable(struct hp_port *p, uint64_t t0)
{
	static int list[HP_MAX_FUNCS];
	char why[96], pb[16];
	uint64_t link_us = 0, t_link;
	int n;

	if (p->off_ns && clock_ns() < p->off_ns + POWER_OFF_US * 1000ull)
		udelay(p->off_ns / 1000 + POWER_OFF_US - clock_ns() / 1000);
	if (p->slotcap & PCIE_SLTCAP_PCP)
		hp_command(p, 0, PCIE_SLTCTL_PCC);
	hp_indicators(p, PCIE_SLTCTL_PIC_BLINK, PCIE_SLTCTL_AIC_OFF);
	t_link = clock_ns();
	if (p->dllla) {
		while (!link_up(p) && us_since(t_link) < LINK_TIMEOUT_US)
			udelay(1000);
	} else {
		udelay(LINK_TIMEOUT_US);
	}
	link_us = us_since(t_link);
	if (!link_up(p)) {
		ksnprintf(why, sizeof(why), "link_down");
		n = -1;
	} else {
		udelay(LINK_SETTLE_US);
		n = pci_hot_scan(p->idx, list, HP_MAX_FUNCS, why, sizeof(why));
		if (!n)
			ksnprintf(why, sizeof(why), "nothing_answered");
	}
	if (n <= 0) {
		kprintf("UMSI {\"event\":\"slot\",\"port\":\"%s\",\"action\":\"add\","
			"\"ok\":false,\"reason\":\"%s\",\"allocated\":%u}\n",
			bdf_str(pci_devs[p->idx].bdf, pb), why, glue_allocated());
		hp_power_off(p, PCIE_SLTCTL_AIC_ON);
		return;
	}
	for (int i = 0; i < n; i++)
		pci_print(&pci_devs[list[i]]);
	for (int i = 0; i < n; i++)
		glue_hot_add(hp_gl, list[i]);
	p->on = true;
	hp_indicators(p, PCIE_SLTCTL_PIC_ON, PCIE_SLTCTL_AIC_OFF);
	{
		uint64_t first = first_irq_ns(list, n);

		kprintf("UMSI {\"event\":\"slot\",\"port\":\"%s\",\"action\":\"add\","
			"\"ok\":true,\"functions\":%d,\"link_us\":%lu,"
			"\"ready_us\":%lu,\"first_irq_us\":%lu,\"allocated\":%u,"
			"\"heap\":%lu}\n",
			bdf_str(pci_devs[p->idx].bdf, pb), n, link_us,
			us_since(t0), first && t0 ? (first - t0) / 1000 : 0,
			glue_allocated(), mm_heap_used());
	}
}

/*
 * Everything below the port goes: drivers stopped, vectors freed,
 * functions removed from uMSI, slot powered off, BARs and bus numbers
 * back, one `removed` line each.
 */
static void hp_disable(struct hp_port *p, bool surprise, uint64_t t0)
{
	static int list[HP_MAX_FUNCS];
	static uint32_t bdfs[HP_MAX_FUNCS];
	char pb[16], fb[16];
	int n;

	hp_indicators(p, PCIE_SLTCTL_PIC_BLINK, PCIE_SLTCTL_AIC_OFF);
	n = pci_below(p->idx, list, HP_MAX_FUNCS);
	for (int i = 0; i < n; i++) {
		bdfs[i] = pci_devs[list[i]].bdf;
		glue_hot_remove(hp_gl, list[i]);
	}
	hp_power_off(p, PCIE_SLTCTL_AIC_OFF);
	for (int i = 0; i < n; i++) {
		pci_hot_release(list[i]);
		kprintf("UMSI {\"event\":\"removed\",\"bdf\":\"%s\",\"port\":\"%s\","
			"\"surprise\":%s,\"allocated\":%u}\n",
			bdf_str(bdfs[i], fb), bdf_str(pci_devs[p->idx].bdf, pb),
			surprise ? "true" : "false", glue_allocated());
	}
	p->on = false;
	kprintf("UMSI {\"event\":\"slot\",\"port\":\"%s\",\"action\":\"remove\","
		"\"functions\":%d,\"surprise\":%s,\"remove_us\":%lu,\"allocated\":%u,"
		"\"heap\":%lu,\"phys\":%lu}\n",
		bdf_str(pci_devs[p->idx].bdf, pb), n, surprise ? "true" : "false",
		us_since(t0), glue_allocated(), mm_heap_used(), karch_phys_used());
}

/* Test aid: every claimed function below @p fires once. */
static void hp_fire_below(struct hp_port *p)
{
	static int list[HP_MAX_FUNCS];
	int n = pci_below(p->idx, list, HP_MAX_FUNCS);

	for (int i = 0; i < n; i++)
		if (hp_gl->devs[list[i]].kd && hp_gl->devs[list[i]].kd->drv->raise)
			glue_fire(&hp_gl->devs[list[i]], 1);
}

static void hp_handle(struct hp_port *p, uint32_t ev, uint64_t t0)
{
	uint16_t sta = hp_read(p, PCIE_SLTSTA);
	bool present = (sta & PCIE_SLTSTA_PDS) && sta != 0xffff;
	bool link = link_up(p);
	char pb[16];

	kprintf("pciehp %s: events%s%s%s%s%s, %s, link %s, slot %s\n",
		bdf_str(pci_devs[p->idx].bdf, pb),
		ev & PCIE_SLTSTA_ABP ? " button" : "",
		ev & PCIE_SLTSTA_PDC ? " presence" : "",
		ev & PCIE_SLTSTA_DLLSC ? " link" : "",
		ev & PCIE_SLTSTA_PFD ? " power-fault" : "",
		ev & HP_EV_GONE ? " function-gone" : "",
		present ? "card present" : "empty", link ? "up" : "down",
		p->on ? "on" : "off");
	if (p->on) {
		if ((ev & PCIE_SLTSTA_ABP) && present && p->button_ns) {
			/* Pressed again within the window: cancelled. */
			p->button_ns = 0;
			__atomic_fetch_sub(&windows_open, 1, __ATOMIC_RELEASE);
			hp_indicators(p, PCIE_SLTCTL_PIC_ON, PCIE_SLTCTL_AIC_OFF);
			kprintf("UMSI {\"event\":\"slot\",\"port\":\"%s\",\"action\":\"cancel\","
				"\"after_us\":%lu,\"allocated\":%u}\n",
				bdf_str(pci_devs[p->idx].bdf, pb), us_since(p->button_t0),
				glue_allocated());
			return;
		}
		if ((ev & PCIE_SLTSTA_ABP) && present && button_ms &&
		    surprise_aid == AID_NONE) {
			/* The abort interval: blink, remove when it ends. */
			p->button_t0 = t0 ? t0 : clock_ns();
			p->button_ns = p->button_t0 + (uint64_t)button_ms * 1000000u;
			__atomic_fetch_add(&windows_open, 1, __ATOMIC_RELEASE);
			if (button_aid_cancel)
				p->aid_press_ns = clock_ns() + 1000000000ull;
			hp_indicators(p, PCIE_SLTCTL_PIC_BLINK, PCIE_SLTCTL_AIC_OFF);
			kprintf("UMSI {\"event\":\"slot\",\"port\":\"%s\",\"action\":\"button\","
				"\"abort_ms\":%u}\n", bdf_str(pci_devs[p->idx].bdf, pb),
				button_ms);
			return;
		}
		if ((ev & PCIE_SLTSTA_ABP) && present) {
			if (surprise_aid != AID_NONE) {
				/* Test aid: the card is pulled, not asked for. */
				hp_power_off(p, PCIE_SLTCTL_AIC_OFF);
				if (surprise_aid == AID_EVENT) {
					hp_disable(p, true, t0);
					return;
				}
				/* The drivers find out first: they fire into a
				 * function that is gone (glue_function_gone). */
				hp_fire_below(p);
				return;
			}
			hp_disable(p, false, t0);
		} else if (!present || !link || (ev & HP_EV_GONE)) {
			if (p->button_ns) {
				/* Gone during the window: a surprise now. */
				p->button_ns = 0;
				__atomic_fetch_sub(&windows_open, 1, __ATOMIC_RELEASE);
			}
			hp_disable(p, true, t0);
		}
		return;
	}
	if (present && (ev & (PCIE_SLTSTA_ABP | PCIE_SLTSTA_PDC |
			      PCIE_SLTSTA_DLLSC)))
		hp_enable(p, t0);
}

bool pciehp_pending(void)
{
	return __atomic_load_n(&windows_open, __ATOMIC_ACQUIRE) != 0;
}

void pciehp_work(void)
{
	for (uint32_t i = 0; i < nports; i++) {
		struct hp_port *p = &ports[i];
		uint32_t ev = __atomic_exchange_n(&p->events, 0, __ATOMIC_ACQUIRE);
		uint64_t t0 = p->event_ns;

		/* Test aid: the second press, as the hardware would queue it. */
		if (p->aid_press_ns && clock_ns() >= p->aid_press_ns) {
			p->aid_press_ns = 0;
			if (!ev)
				t0 = clock_ns();
			ev |= PCIE_SLTSTA_ABP;
		}
		/* An abort window that ran out: the removal goes ahead. */
		if (p->button_ns && clock_ns() >= p->button_ns && p->on) {
			p->button_ns = 0;
			__atomic_fetch_sub(&windows_open, 1, __ATOMIC_RELEASE);
			hp_disable(p, false, p->button_t0);
		}
		if (!ev)
			continue;
		p->event_ns = 0;
		hp_handle(p, ev, t0);
	}
}

/*
 * Test aid `umsi.hp_storm=N`: the first port's vector is sent N times
 * (fixed IPIs to its CPU, one at a time) with no slot event behind them,
 * as a port stuck interrupting would. The handler answers "not mine"
 * each time; uMSI's storm detection must disable the IRQ (more than
 * 99,900 of 100,000 unhandled). One `storm` line says what happened.
 */
void pciehp_storm_aid(void)
{
	struct umsi_irq_info ii;
	struct kvec *v;
	uint64_t n = 0, sent = 0;
	char val[16], pb[16];

	if (!nports || !cmdline_value("umsi.hp_storm", val, sizeof(val)) ||
	    !kstrtou64(val, NULL, 0, &n) || !ports[0].g->kd ||
	    !ports[0].g->kd->nvec)
		return;
	v = &ports[0].g->kd->vecs[0];
	for (; sent < n; sent++) {
		uint64_t before = v->none, end = clock_ns() + 10000000ull;

		if (umsi_irq_get_info(kernel_umsi_system(), v->irq, &ii) || ii.disabled)
			break;
		arch_send_irq(ii.hwid, ii.vector);
		while (v->none == before && clock_ns() < end)
			cpu_relax();
	}
	umsi_irq_get_info(kernel_umsi_system(), v->irq, &ii);
	kprintf("UMSI {\"event\":\"storm\",\"port\":\"%s\",\"irq\":%u,"
		"\"sent\":%lu,\"not_mine\":%lu,\"disabled\":%s}\n",
		bdf_str(pci_devs[ports[0].idx].bdf, pb), v->irq, sent, v->none,
		ii.disabled ? "true" : "false");
}

bool pciehp_function_gone(int idx)
{
	for (int a = pci_devs[idx].parent; a >= 0; a = pci_devs[a].parent) {
		for (uint32_t i = 0; i < nports; i++) {
			if (ports[i].idx != a)
				continue;
			if (!ports[i].event_ns)
				ports[i].event_ns = clock_ns();
			__atomic_fetch_or(&ports[i].events, HP_EV_GONE,
					  __ATOMIC_RELEASE);
			glue_kick();
			return true;
		}
	}
	return false;
}

static bool hp_capable(const struct pci_dev *d)
{
	if (!d->present || d->header_type != 1 || !d->pcie_cap ||
	    (d->pcie_type != UMSI_PCIE_TYPE_ROOT_PORT &&
	     d->pcie_type != UMSI_PCIE_TYPE_DOWNSTREAM))
		return false;
	if (!(pci_cfg_read(d->bdf, d->pcie_cap + UMSI_PCIE_FLAGS, 2) & PCIE_FLAGS_SLOT))
		return false;
	return pci_cfg_read(d->bdf, d->pcie_cap + PCIE_SLTCAP, 4) & PCIE_SLTCAP_HPC;
}

void pciehp_init(struct glue *gl)
{
	char val[8];

	hp_gl = gl;
	if (cmdline_value("umsi.hotplug", val, sizeof(val)) && !strcmp(val, "off"))
		return;
	if (cmdline_value("umsi.hp_surprise", val, sizeof(val)))
		surprise_aid = !strcmp(val, "driver") ? AID_DRIVER : AID_EVENT;
	if (cmdline_value("umsi.hp_button_ms", val, sizeof(val))) {
		uint64_t ms;

		if (kstrtou64(val, NULL, 0, &ms) && ms <= 60000)
			button_ms = (uint32_t)ms;
		else
			kprintf("pciehp: umsi.hp_button_ms=%s: not 0-60000 ms; %u kept\n",
				val, button_ms);
	}
	button_aid_cancel = cmdline_value("umsi.hp_button_aid", val, sizeof(val)) &&
			    !strcmp(val, "cancel");
	kprintf("pciehp: attention button abort interval %u ms%s\n", button_ms,
		button_ms ? "" : " (removal at once)");
	for (uint32_t i = 0; i < pci_ndevs && nports < HP_MAX_PORTS; i++) {
		struct pci_dev *d = &pci_devs[i];
		struct hp_port *p = &ports[nports];
		char pb[16];
		bool present;

		if (!hp_capable(d) || !gl->devs[i].udev)
			continue;
		memset(p, 0, sizeof(*p));
		p->idx = (int)i;
		p->g = &gl->devs[i];
		p->cap = d->pcie_cap;
		p->slotcap = pci_cfg_read(d->bdf, d->pcie_cap + PCIE_SLTCAP, 4);
		p->dllla = pci_cfg_read(d->bdf, d->pcie_cap + PCIE_LNKCAP, 4) &
			   PCIE_LNKCAP_DLLLARC;
		present = hp_read(p, PCIE_SLTSTA) & PCIE_SLTSTA_PDS;
		/* Occupied and powered at boot: enumerated with the rest. */
		p->on = present && slot_powered(p);
		if (!glue_claim(&gl->devs[i], &pcieport_driver, p))
			continue;
		nports++;
		kprintf("pciehp %s: hot-plug slot, %s%s, %s\n", bdf_str(d->bdf, pb),
			present ? "card present" : "empty",
			present && !p->on ? " (powered off)" : "",
			p->dllla ? "link active reporting" : "no link reporting");
		/* A card waiting in an unpowered slot is brought up now. */
		if (present && !p->on) {
			p->event_ns = clock_ns();
			__atomic_fetch_or(&p->events, PCIE_SLTSTA_PDC, __ATOMIC_RELEASE);
			glue_kick();
		}
	}
}
