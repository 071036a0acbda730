/* SPDX-License-Identifier: MIT */
/*
 * The PCI layer's state in a system: the functions it has added and the
 * MSI policy. Made at the first umsi_pci_add(), umsi_policy_parse() or
 * umsi_quirk_add(), and torn down first at umsi_system_destroy() through
 * the hook the core offers the layer above it.
 */
#include <umsi/internal/pci.h>

/* Remove every function, then the policy and the state. */
static void pci_fini(struct umsi_system *sys)
{
	struct umsi_pci_state *st = umsi_pci_state(sys);

	if (!st)
		return;
	while (st->devs)
		umsi_pci_remove(sys, st->devs);
	umsi_free(sys, st->policy.quirks,
		  st->policy.quirks_cap * sizeof(*st->policy.quirks));
	umsi_system_set_upper(sys, NULL, NULL);
	umsi_free(sys, st, sizeof(*st));
}

struct umsi_pci_state *umsi_pci_state_get(struct umsi_system *sys)
{
	struct umsi_pci_state *st = umsi_pci_state(sys);

	if (st)
		return st;
	st = umsi_zalloc(sys, sizeof(*st));
	if (st)
		umsi_system_set_upper(sys, st, pci_fini);
	return st;
}
