/* SPDX-License-Identifier: MIT */
/*
 * Quirks: devices whose MSI is broken in a known way, matched by vendor
 * and device ID (0xffff: any device of the vendor). Every matching entry
 * applies; flags add up. The kernel adds its own at run time.
 *
 * The built-in entries come from Linux's drivers/pci/quirks.c and the
 * drivers that carry the workaround, with the same effect:
 *  - NO_MSI: the function must not use MSI or MSI-X;
 *  - NO_MSI_BELOW: a bridge that does not forward MSI writes; nothing
 *    below it gets MSI (Linux sets PCI_BUS_FLAGS_NO_MSI);
 *  - NO_64BIT_MSI: the device ignores the upper address (Linux
 *    dev->no_64bit_msi); a message above 4 GiB is refused;
 *  - INTX_DISABLE_BUG: INTx Disable also stops MSI (Linux
 *    PCI_DEV_FLAGS_MSI_INTX_DISABLE_BUG); uMSI leaves INTx Disable alone;
 *  - BROKEN_MASK: the per-vector mask bits do not work; MSI is driven as
 *    if it had none (lazy masking in the core).
 */
#include <umsi/internal/pci.h>

static const struct umsi_quirk builtin[] = {
	/* AMD-8131 PCI-X bridge: MSI writes from below are not forwarded. */
	{ 0x1022, 0x7450, UMSI_QUIRK_NO_MSI_BELOW, "amd8131" },
	/* Chipsets Linux disables MSI for (quirk_disable_all_msi); here
	 * their functions, and everything below them, get none. */
	{ 0x1166, 0x0017, UMSI_QUIRK_NO_MSI | UMSI_QUIRK_NO_MSI_BELOW,
	  "serverworks_gcnb_le" },
	{ 0x1039, 0x0761, UMSI_QUIRK_NO_MSI | UMSI_QUIRK_NO_MSI_BELOW,
	  "sis761" },
	/* Broadcom Tigon3 5714/5715/5780 and their S variants. */
	{ 0x14e4, 0x1668, UMSI_QUIRK_INTX_DISABLE_BUG, "tg3_5714" },
	{ 0x14e4, 0x1669, UMSI_QUIRK_INTX_DISABLE_BUG, "tg3_5714s" },
	{ 0x14e4, 0x1678, UMSI_QUIRK_INTX_DISABLE_BUG, "tg3_5715" },
	{ 0x14e4, 0x1679, UMSI_QUIRK_INTX_DISABLE_BUG, "tg3_5715s" },
	{ 0x14e4, 0x166a, UMSI_QUIRK_INTX_DISABLE_BUG, "tg3_5780" },
	{ 0x14e4, 0x166b, UMSI_QUIRK_INTX_DISABLE_BUG, "tg3_5780s" },
	/* ATI/AMD HDMI audio: 32-bit MSI only (hda_intel AZX_DCAPS_NO_MSI64). */
	{ 0x1002, 0xaa00, UMSI_QUIRK_NO_64BIT_MSI, "ati_hdmi_audio" },
};

const struct umsi_quirk *umsi_quirk_table(size_t *n)
{
	*n = sizeof(builtin) / sizeof(builtin[0]);
	return builtin;
}

static bool match(const struct umsi_quirk *q, uint16_t vendor,
		  uint16_t device)
{
	return q->vendor == vendor && (q->device == 0xffff ||
				       q->device == device);
}

/* Call @fn on every matching entry, built-in first; stop on true. */
static const struct umsi_quirk *find(struct umsi_system *sys, uint16_t vendor,
				     uint16_t device, uint32_t flag,
				     uint32_t *all)
{
	const struct umsi_policy *p = umsi_pci_policy(sys);
	size_t i, n = sizeof(builtin) / sizeof(builtin[0]);

	for (i = 0; i < n; i++) {
		if (!match(&builtin[i], vendor, device))
			continue;
		*all |= builtin[i].flags;
		if (builtin[i].flags & flag)
			return &builtin[i];
	}
	for (i = 0; p && i < p->nquirks; i++) {
		if (!match(&p->quirks[i], vendor, device))
			continue;
		*all |= p->quirks[i].flags;
		if (p->quirks[i].flags & flag)
			return &p->quirks[i];
	}
	return NULL;
}

uint32_t umsi_quirk_lookup(struct umsi_system *sys, uint16_t vendor,
			   uint16_t device)
{
	uint32_t all = 0;

	(void)find(sys, vendor, device, 0, &all);
	return all;
}

const char *umsi_quirk_name(struct umsi_system *sys, uint16_t vendor,
			    uint16_t device, uint32_t flag)
{
	uint32_t all = 0;
	const struct umsi_quirk *q = find(sys, vendor, device, flag, &all);

	return q && q->name ? q->name : "?";
}

/* The policy, made with the layer's state (also used by the parser). */
struct umsi_policy *umsi_policy_get(struct umsi_system *sys)
{
	struct umsi_pci_state *st = umsi_pci_state_get(sys);

	return st ? &st->policy : NULL;
}

int umsi_quirk_add(struct umsi_system *sys, const struct umsi_quirk *q)
{
	struct umsi_policy *p;
	struct umsi_quirk *n;
	size_t cap;

	if (!sys || !q)
		return -UMSI_EINVAL;
	p = umsi_policy_get(sys);
	if (!p)
		return -UMSI_ENOMEM;
	if (p->nquirks == p->quirks_cap) {
		cap = p->quirks_cap ? 2 * p->quirks_cap : 8;
		n = umsi_zalloc(sys, cap * sizeof(*n));
		if (!n)
			return -UMSI_ENOMEM;
		if (p->nquirks)
			umsi_memcpy(n, p->quirks, p->nquirks * sizeof(*n));
		umsi_free(sys, p->quirks, p->quirks_cap * sizeof(*n));
		p->quirks = n;
		p->quirks_cap = cap;
	}
	p->quirks[p->nquirks++] = *q;
	return 0;
}
