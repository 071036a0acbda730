/* SPDX-License-Identifier: MIT */
/*
 * MSI policy from the kernel command line, as the 2003 patch defined it, and the
 * decision for each function.
 *
 *   pci_nomsi, pci=nomsi          no MSI or MSI-X anywhere
 *   device_nomsi=0xDDDDVVVV,...   not for these devices
 *   device_msi=0xDDDDVVVV,...     only these, in specific mode
 *   pci_msi=specific | all        the 2003 patch's build-time choice
 *                                 (CONFIG_PCI_MSI_ON_SPECIFIC_DEVICES),
 *                                 made at run time
 *
 * Each parameter is parsed completely before any of it is applied: a
 * malformed one (bad number, empty item, more than 31 entries in all) is
 * reported and ignored as a whole.
 */
#include <umsi/internal/pci.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool word_is(const char *w, size_t n, const char *lit)
{
	size_t l = umsi_strlen(lit);

	return n == l && !umsi_memcmp(w, lit, l);
}

static bool has_prefix(const char *w, size_t n, const char *lit)
{
	size_t l = umsi_strlen(lit);

	return n >= l && !umsi_memcmp(w, lit, l);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parse "0xDDDDVVVV,0x..." (1-8 hex digits each) into @ids, appending to
 * @n existing entries. Return: NULL, or why it is malformed.
 */
static const char *parse_list(const char *s, size_t len, uint32_t *ids,
			      uint32_t *n)
{
	size_t i = 0;
	uint32_t cnt = *n;

	if (!len)
		return "empty list";
	while (i <= len) {
		uint32_t v = 0;
		int digits = 0, h;

		if (i + 2 > len || s[i] != '0' || (s[i + 1] != 'x' &&
						    s[i + 1] != 'X'))
			return "an entry is not 0x followed by hex digits";
		for (i += 2; i < len && s[i] != ','; i++) {
			h = hexval(s[i]);
			if (h < 0)
				return "not a hexadecimal digit";
			if (++digits > 8)
				return "more than 8 hex digits";
			v = v << 4 | (uint32_t)h;
		}
		if (!digits)
			return "an entry has no digits";
		if (cnt == UMSI_POLICY_LIST_MAX)
			return "more than 31 entries";
		ids[cnt++] = v;
		if (i == len)
			break;
		i++;                    /* the comma; one must follow */
		if (i == len)
			return "trailing comma";
	}
	*n = cnt;
	return NULL;
}

/* pci=opt,opt,...: only nomsi is ours; other options are not. */
static const char *parse_pci(const char *s, size_t len, struct umsi_policy *p)
{
	size_t i = 0, j;

	if (!len)
		return "empty option list";
	while (i < len) {
		for (j = i; j < len && s[j] != ','; j++)
			;
		if (j == i)
			return "empty option";
		if (word_is(s + i, j - i, "nomsi"))
			p->nomsi = true;
		i = j + 1;
		if (j + 1 == len)
			return "trailing comma";
	}
	return NULL;
}

/* One word into @p (a scratch copy). Return: NULL or why malformed. */
static const char *parse_word(const char *w, size_t n, struct umsi_policy *p)
{
	if (word_is(w, n, "pci_nomsi")) {
		p->nomsi = true;
		return NULL;
	}
	if (has_prefix(w, n, "pci_nomsi="))
		return "pci_nomsi takes no value";
	if (has_prefix(w, n, "pci="))
		return parse_pci(w + 4, n - 4, p);
	if (has_prefix(w, n, "device_nomsi="))
		return parse_list(w + 13, n - 13, p->nomsi_ids, &p->nomsi_n);
	if (has_prefix(w, n, "device_msi="))
		return parse_list(w + 11, n - 11, p->msi_ids, &p->msi_n);
	if (word_is(w, n, "device_nomsi") || word_is(w, n, "device_msi") ||
	    word_is(w, n, "pci_msi"))
		return "needs a value";
	if (has_prefix(w, n, "pci_msi=")) {
		if (word_is(w + 8, n - 8, "specific"))
			p->specific = true;
		else if (word_is(w + 8, n - 8, "all"))
			p->specific = false;
		else
			return "expected pci_msi=specific or pci_msi=all";
		return NULL;
	}
	return NULL;                    /* not ours */
}

static void report(struct umsi_system *sys, const char *w, size_t n,
		   const char *why)
{
	char word[64];

	if (n >= sizeof(word))
		n = sizeof(word) - 1;
	umsi_memcpy(word, w, n);
	word[n] = 0;
	umsi_log(sys, UMSI_LOG_WARN, "msi policy: ignoring malformed \"%s\": "
		 "%s", word, why);
}

static void log_list(struct umsi_system *sys, const char *what,
		     const uint32_t *ids, uint32_t from, uint32_t to)
{
	for (; from < to; from++)
		umsi_log(sys, UMSI_LOG_INFO, "msi policy: %s device "
			 "%04x vendor %04x", what, ids[from] >> 16,
			 ids[from] & 0xffff);
}

int umsi_policy_parse(struct umsi_system *sys, const char *cmdline)
{
	struct umsi_policy *p, next, trial;
	size_t i = 0, start;
	int bad = 0;
	const char *why;

	if (!sys || !cmdline)
		return -UMSI_EINVAL;
	p = umsi_policy_get(sys);
	if (!p)
		return -UMSI_ENOMEM;
	next = *p;
	for (;;) {
		while (cmdline[i] && is_space(cmdline[i]))
			i++;
		if (!cmdline[i])
			break;
		start = i;
		while (cmdline[i] && !is_space(cmdline[i]))
			i++;
		/* Each word is applied to a copy, kept only when well formed. */
		trial = next;
		why = parse_word(cmdline + start, i - start, &trial);
		if (why) {
			report(sys, cmdline + start, i - start, why);
			bad++;
			continue;
		}
		next = trial;
	}
	log_list(sys, "no MSI for", next.nomsi_ids, p->nomsi_n, next.nomsi_n);
	log_list(sys, "MSI allowed for", next.msi_ids, p->msi_n, next.msi_n);
	next.quirks = p->quirks;
	next.nquirks = p->nquirks;
	next.quirks_cap = p->quirks_cap;
	*p = next;
	if (p->specific && p->nomsi_n)
		umsi_log(sys, UMSI_LOG_WARN, "msi policy: pci_msi=specific: "
			 "device_nomsi= is ignored; only devices in "
			 "device_msi= get MSI");
	if (!p->specific && p->msi_n)
		umsi_log(sys, UMSI_LOG_WARN, "msi policy: device_msi= has "
			 "effect only with pci_msi=specific; ignored");
	return bad ? -UMSI_EINVAL : 0;
}

static bool listed(const uint32_t *ids, uint32_t n, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static const char *quirk_reason(struct umsi_pci_dev *dev, uint32_t flag,
				const struct umsi_pci_dev *q)
{
	umsi_snprintf(dev->reason_buf, sizeof(dev->reason_buf), "quirk:%s",
		      umsi_quirk_name(dev->sys, q->vendor, q->device, flag));
	return dev->reason_buf;
}

void umsi_pci_apply_policy(struct umsi_pci_dev *dev)
{
	struct umsi_system *sys = dev->sys;
	const struct umsi_policy *p = umsi_pci_policy(sys);
	const struct umsi_pci_dev *up;
	uint32_t id = (uint32_t)dev->device << 16 | dev->vendor;
	unsigned int depth;

	dev->deny_reason = NULL;
	if (sys->env.plat_flags & UMSI_PLAT_NO_MSI)
		dev->deny_reason = "policy:platform";
	else if (p && p->nomsi)
		dev->deny_reason = "policy:pci_nomsi";
	else if (p && p->specific && !listed(p->msi_ids, p->msi_n, id))
		dev->deny_reason = "policy:not_listed";
	else if (p && !p->specific && listed(p->nomsi_ids, p->nomsi_n, id))
		dev->deny_reason = "policy:device_nomsi";
	else if (dev->quirks & UMSI_QUIRK_NO_MSI)
		dev->deny_reason = quirk_reason(dev, UMSI_QUIRK_NO_MSI, dev);
	if (dev->deny_reason)
		return;
	/* Bounded: a parent chain is a tree path, 256 buses deep at most. */
	for (up = dev->parent, depth = 0; up && depth < 256;
	     up = up->parent, depth++) {
		if (up->quirks & UMSI_QUIRK_NO_MSI_BELOW) {
			dev->deny_reason = quirk_reason(dev,
						UMSI_QUIRK_NO_MSI_BELOW, up);
			return;
		}
	}
}
