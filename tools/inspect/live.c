/* SPDX-License-Identifier: MIT */
/*
 * `umsi inspect` on a live Linux machine.
 *
 * Sources, all opened read-only:
 *   /sys/bus/pci/devices/B/config       configuration space (4096 bytes
 *                                        as root, 64 otherwise)
 *   /sys/bus/pci/devices/B/resource     BAR addresses and sizes
 *   /sys/bus/pci/devices/B/resourceN    the BAR itself, mmap()ed PROT_READ
 *   /dev/mem                            fallback for the BAR
 *   /sys/bus/pci/devices/B/msi_irqs/    Linux IRQ of each vector
 *   /proc/interrupts                    per-CPU counts, and the entry of
 *                                        each IRQ (its hwirq)
 *   /proc/cpuinfo                       the APIC ID of each CPU (x86), to
 *                                        tell which CPU a message targets,
 *                                        and its x2apic flag
 *   /sys/devices/system/cpu/possible    how many CPUs Linux may bring up:
 *                                        its logical APIC model depends
 *                                        on it (check.c)
 *   /sys/devices/system/cpu/cpuN/topology/physical_package_id
 *                                        each CPU's package, for --svg
 *   /sys/kernel/debug/irq/domains/VECTOR every CPU's vectors in use and the
 *                                        system vectors, for --svg (root,
 *                                        debugfs, CONFIG_GENERIC_IRQ_DEBUGFS)
 *   /proc/sys/kernel/hostname           the machine's name, for --svg
 *   /sys/bus/pci/devices/B/driver       the bound driver (a symbolic link)
 *   /proc/irq/N/effective_affinity_list where each IRQ is delivered
 *   /sys/kernel/debug/irq/irqs/N        CPU vector and target CPU, when
 *                                        debugfs is mounted and the kernel
 *                                        has CONFIG_GENERIC_IRQ_DEBUGFS
 * Nothing is ever written: the only access to device memory is a 32-bit
 * load from a read-only mapping of the MSI-X table and PBA, which the PCI
 * spec allows at any time and which has no side effects. The text of
 * these files is parsed in livetext.c, which does no I/O (and is fuzzed).
 *
 * Every one of these files is opened by open_input(): without blocking,
 * and refused unless it is a regular file (sysfs, procfs and debugfs
 * files all are; /dev/mem may be a character device). A FIFO, a socket
 * or a device node in a --sysroot tree would otherwise block the open or
 * a read for ever; it is reported with its path instead.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <umsi/pci_regs.h>

#include "inspect.h"

struct live {
	struct inspect_report *rep;
	const char *root;
	struct inspect_proc_interrupts pi;
	bool devmem_absent;     /* /dev/mem does not exist */
	bool any_resource_file; /* some device has a resourceN file */
	bool strict_refusal;    /* a mapping was refused as strict devmem does */
	bool debugfs_seen;      /* some IRQ had a debugfs file */
	bool table_unread;      /* some MSI-X table could not be read */
	char lockdown[64];      /* active lockdown mode, "" when none */
};

static void note(struct inspect_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct inspect_report *rep, const char *fmt, ...)
{
	va_list ap;

	if (rep->nnotes >= sizeof(rep->notes) / sizeof(rep->notes[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(rep->notes[rep->nnotes++], INSPECT_MSG_LEN, fmt, ap);
	va_end(ap);
}

static void path(char *buf, size_t n, const struct live *l, const char *fmt,
		 const char *a, long b)
{
	char tail[256];

	snprintf(tail, sizeof(tail), fmt, a, b);
	snprintf(buf, n, "%s%s", l->root, tail);
}

/* open_input()'s answer for a file that is not a regular file. */
#define NOT_REGULAR (-2)

static bool acceptable(const struct stat *st, bool dev_ok)
{
	return S_ISREG(st->st_mode) || (dev_ok && S_ISCHR(st->st_mode));
}

/*
 * Open @p read-only, never waiting: anything but a regular file (or, with
 * @dev_ok, a character device, as /dev/mem is) is refused before it is
 * opened, so no device node's open runs; O_NONBLOCK makes the open of a
 * FIFO put there after that look return at once (it is ignored for
 * regular files), and fstat() refuses it before a read can wait on it.
 * The last component may be a symbolic link: the checks are on what it
 * leads to.
 * Return: the descriptor, -1 with errno set, or NOT_REGULAR.
 */
static int open_input(const char *p, bool dev_ok, int flags)
{
	struct stat st;
	int fd;

	if (stat(p, &st))
		return -1;
	if (!acceptable(&st, dev_ok))
		return NOT_REGULAR;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | flags);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	if (acceptable(&st, dev_ok))
		return fd;
	close(fd);
	return NOT_REGULAR;
}

/* What @p is, for a message about a file refused by open_input(). */
static const char *kind_of(const char *p)
{
	struct stat st;

	if (stat(p, &st))
		return "not a regular file";
	if (S_ISFIFO(st.st_mode))
		return "a FIFO, not a regular file";
	if (S_ISSOCK(st.st_mode))
		return "a socket, not a regular file";
	if (S_ISDIR(st.st_mode))
		return "a directory, not a regular file";
	if (S_ISCHR(st.st_mode))
		return "a character device, not a regular file";
	if (S_ISBLK(st.st_mode))
		return "a block device, not a regular file";
	return "not a regular file";
}

/*
 * A file refused by open_input(): said with its path, as a problem of
 * the function @bdf when given, else of the machine.
 */
static void refused(struct live *l, const umsi_bdf_t *bdf, const char *p)
{
	inspect_error(l->rep, bdf ? *bdf : 0, bdf != NULL,
		      "%s is %s: not read", p, kind_of(p));
}

/*
 * Read a small text file into @buf; returns its length or -1. A file
 * that is not a regular file is reported (for the function @bdf, or the
 * machine when NULL).
 */
static ssize_t slurp(struct live *l, const umsi_bdf_t *bdf, const char *p,
		     char *buf, size_t n)
{
	int fd = open_input(p, false, 0);
	ssize_t got, total = 0;

	buf[0] = 0;
	if (fd == NOT_REGULAR)
		refused(l, bdf, p);
	if (fd < 0)
		return -1;
	while ((size_t)total + 1 < n &&
	       (got = read(fd, buf + total, n - 1 - (size_t)total)) > 0)
		total += got;
	close(fd);
	buf[total] = 0;
	return total;
}

/*
 * /proc/interrupts, read whole: it can be large on big machines. NULL
 * with errno set, or with *@not_regular set for a file that is not a
 * regular file.
 */
static char *slurp_all(const char *p, size_t *lenp, bool *not_regular)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int fd = open_input(p, false, 0);
	ssize_t got;

	*not_regular = fd == NOT_REGULAR;
	if (!buf || fd < 0) {
		int err = buf ? errno : ENOMEM;

		free(buf);
		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	while ((got = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)got;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = 0;
	*lenp = len;
	return buf;
}

/* /proc/interrupts (livetext.c parses it); the CPU columns go to @rep. */
static void parse_interrupts(struct live *l)
{
	char p[512];
	char *text;
	size_t len = 0;
	struct inspect_report *rep = l->rep;
	bool odd;

	path(p, sizeof(p), l, "/proc/interrupts%s", "", 0);
	text = slurp_all(p, &len, &odd);
	if (!text) {
		note(rep, "%s cannot be read (%s): no per-CPU counts", p,
		     odd ? kind_of(p) : strerror(errno));
		return;
	}
	if (inspect_parse_interrupts(text, len, &l->pi))
		note(rep, "%s: out of memory: no per-CPU counts", p);
	free(text);
	rep->cpus = l->pi.cpus;
	rep->ncpus = l->pi.ncpus;
	l->pi.cpus = NULL;
}

/* /proc/cpuinfo: which CPU each APIC ID is (for --check). */
static void parse_cpuinfo(struct live *l)
{
	char p[512];
	char *text;
	size_t len = 0;
	bool odd;

	path(p, sizeof(p), l, "/proc/cpuinfo%s", "", 0);
	text = slurp_all(p, &len, &odd);
	if (!text) {
		/* Absent (not x86, no procfs): --check says what it missed. */
		if (odd)
			note(l->rep, "%s cannot be read (%s): CPUs not matched to APIC IDs",
			     p, kind_of(p));
		return;
	}
	if (inspect_parse_cpuinfo(text, len, &l->rep->apics, &l->rep->napics))
		note(l->rep, "%s: out of memory: CPUs not matched to APIC IDs", p);
	free(text);
}

/* /sys/devices/system/cpu/possible: Linux's APIC model depends on it. */
static void read_possible(struct live *l)
{
	char p[512], buf[4096], list[4096];

	path(p, sizeof(p), l, "/sys/devices/system/cpu/possible%s", "", 0);
	if (slurp(l, NULL, p, buf, sizeof(buf)) <= 0)
		return;
	if (!inspect_parse_cpulist(buf, list, sizeof(list)) ||
	    !inspect_cpulist_stats(list, &l->rep->possible_count,
				   &l->rep->possible_max)) {
		note(l->rep, "%s is not a CPU list: the number of possible CPUs is not known", p);
		return;
	}
	l->rep->possible_known = true;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/*
 * The CPUs of the machine (the columns of /proc/interrupts, else the
 * CPUs /proc/cpuinfo lists) and the package of each, from sysfs.
 */
static void read_topology(struct live *l)
{
	struct inspect_report *rep = l->rep;
	size_t n = rep->ncpus ? rep->ncpus : rep->napics;

	if (!n)
		return;
	rep->topo_cpus = malloc(n * sizeof(*rep->topo_cpus));
	rep->topo_pkg = malloc(n * sizeof(*rep->topo_pkg));
	if (!rep->topo_cpus || !rep->topo_pkg) {
		free(rep->topo_cpus);
		free(rep->topo_pkg);
		rep->topo_cpus = NULL;
		rep->topo_pkg = NULL;
		return;
	}
	for (size_t i = 0; i < n; i++)
		rep->topo_cpus[i] = rep->ncpus ? rep->cpus[i] : rep->apics[i].cpu;
	qsort(rep->topo_cpus, n, sizeof(*rep->topo_cpus), cmp_uint);
	for (size_t i = 0; i < n; i++) {
		char p[512], buf[64];
		int pkg;

		path(p, sizeof(p), l,
		     "/sys/devices/system/cpu/cpu%s%ld/topology/physical_package_id",
		     "", (long)rep->topo_cpus[i]);
		rep->topo_pkg[i] = -1;
		if (slurp(l, NULL, p, buf, sizeof(buf)) > 0 &&
		    inspect_parse_int_line(buf, &pkg) && pkg >= 0)
			rep->topo_pkg[i] = pkg;
	}
	rep->ntopo = n;
}

/*
 * /sys/kernel/debug/irq/domains/VECTOR: every online CPU's vectors in
 * use and the system vectors, as Linux's vector matrix keeps them. Root
 * only, with debugfs mounted and CONFIG_GENERIC_IRQ_DEBUGFS; --svg says
 * what it shows without.
 */
static void read_vector_domain(struct live *l)
{
	char p[512], *text;
	size_t len = 0;
	bool odd;
	struct inspect_vector_domain *vd;
	int r;

	path(p, sizeof(p), l, "/sys/kernel/debug/irq/domains/VECTOR%s", "", 0);
	text = slurp_all(p, &len, &odd);
	if (!text) {
		if (odd)
			refused(l, NULL, p);
		return;
	}
	vd = calloc(1, sizeof(*vd));
	r = vd ? inspect_parse_vector_domain(text, len, vd) : -1;
	free(text);
	if (r) {
		free(vd);
		if (r > 0)
			note(l->rep, "%s holds no vector table (\"System:\" and \"| CPU | ... | vectors\"): every CPU's vectors are not known", p);
		return;
	}
	l->rep->vectors = vd;
}

/* /proc/sys/kernel/hostname: the machine's name, for --svg's title. */
static void read_hostname(struct live *l)
{
	char p[512], buf[128];
	size_t n;

	path(p, sizeof(p), l, "/proc/sys/kernel/hostname%s", "", 0);
	if (slurp(l, NULL, p, buf, sizeof(buf)) <= 0)
		return;
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	/* Printable ASCII only: it goes into a picture's title. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
			return;
	snprintf(l->rep->hostname, sizeof(l->rep->hostname), "%.64s", buf);
}

/* The driver bound to the function: the last part of its driver link. */
static void read_driver(struct live *l, const char *name, struct inspect_dev *d)
{
	char p[512], target[512];
	ssize_t n;
	const char *base;

	path(p, sizeof(p), l, "/sys/bus/pci/devices/%s/driver", name, 0);
	n = readlink(p, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	for (const char *c = base; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
			return;
	snprintf(d->driver, sizeof(d->driver), "%.31s", base);
}

/*
 * The x86 vector domain's view of an IRQ, from debugfs: the lines
 * "Vector: 34" and "Target: 0" of /sys/kernel/debug/irq/irqs/N. This is
 * what the kernel wrote into the message, so it stands in for an MSI-X
 * table that cannot be read.
 */
static void debugfs_vector(struct live *l, const struct inspect_dev *d,
			   struct inspect_irq *q)
{
	char p[512], buf[4096];

	q->cpu_vector = q->target_cpu = -1;
	path(p, sizeof(p), l, "/sys/kernel/debug/irq/irqs/%s%ld", "", q->irq);
	if (slurp(l, &d->bdf, p, buf, sizeof(buf)) <= 0)
		return;
	l->debugfs_seen = true;
	inspect_parse_debugfs_irq(buf, &q->cpu_vector, &q->target_cpu);
}

static int cmp_irq(const void *a, const void *b)
{
	const struct inspect_irq *x = a, *y = b;

	if (x->index_known != y->index_known)
		return x->index_known ? -1 : 1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->irq - y->irq;
}

/* Collect msi_irqs/ of one function into the device's two lists. */
static void linux_irqs(struct live *l, const char *name, struct inspect_dev *d)
{
	struct inspect_report *rep = l->rep;
	char p[512], kind[16], aff[4096];
	struct dirent *de;
	DIR *dir;

	d->linux_known = true;
	path(p, sizeof(p), l, "/sys/bus/pci/devices/%s/msi_irqs", name, 0);
	dir = opendir(p);
	if (!dir)
		return;         /* no MSI/MSI-X IRQ allocated */
	while ((de = readdir(dir))) {
		struct inspect_irq q = { 0 }, **list;
		const struct inspect_proc_irq *pq;
		size_t *n;

		if (!inspect_parse_irq_number(de->d_name, &q.irq))
			continue;
		snprintf(p, sizeof(p), "%s/sys/bus/pci/devices/%s/msi_irqs/%d",
			 l->root, name, q.irq);
		if (slurp(l, &d->bdf, p, kind, sizeof(kind)) < 0)
			kind[0] = 0;
		pq = inspect_find_proc_irq(&l->pi, q.irq);
		if (pq) {
			snprintf(q.chip, sizeof(q.chip), "%s", pq->chip);
			snprintf(q.actions, sizeof(q.actions), "%s", pq->actions);
			q.index_known = inspect_irq_index(pq, d->bdf, &q.index);
			/* A short line's missing columns read as 0. */
			q.counts = calloc(rep->ncpus ? rep->ncpus : 1,
					  sizeof(uint64_t));
			if (q.counts && pq->ncounts)
				memcpy(q.counts, pq->counts,
				       pq->ncounts * sizeof(uint64_t));
		}
		path(p, sizeof(p), l, "/proc/irq/%s%ld/effective_affinity_list",
		     "", q.irq);
		if (slurp(l, &d->bdf, p, aff, sizeof(aff)) > 0)
			inspect_parse_cpulist(aff, q.affinity, sizeof(q.affinity));
		debugfs_vector(l, d, &q);
		if (!strncmp(kind, "msix", 4)) {
			list = &d->msix_irqs;
			n = &d->n_msix_irqs;
		} else {
			list = &d->msi_irqs;
			n = &d->n_msi_irqs;
		}
		{
			struct inspect_irq *nl = realloc(*list,
							 (*n + 1) * sizeof(*nl));

			if (!nl) {
				free(q.counts);
				break;
			}
			*list = nl;
			nl[(*n)++] = q;
		}
	}
	closedir(dir);
	if (d->n_msi_irqs)
		qsort(d->msi_irqs, d->n_msi_irqs, sizeof(*d->msi_irqs), cmp_irq);
	if (d->n_msix_irqs)
		qsort(d->msix_irqs, d->n_msix_irqs, sizeof(*d->msix_irqs),
		      cmp_irq);
}

/* BAR n: start and size from the sysfs resource file. */
static void read_resources(struct live *l, const char *name, umsi_bdf_t bdf,
			   uint64_t start[6], uint64_t size[6])
{
	char p[512], buf[2048];

	path(p, sizeof(p), l, "/sys/bus/pci/devices/%s/resource", name, 0);
	if (slurp(l, &bdf, p, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	inspect_parse_resources(buf, start, size);
}

/*
 * Reading device memory through a mapping can fault (SIGBUS) when the
 * kernel revokes the mapping under us (a driver claiming the BAR with
 * CONFIG_IO_STRICT_DEVMEM) or a test's file is short. Catch it rather
 * than die.
 */
static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static int read_words(const volatile uint32_t *src, uint32_t *dst, size_t n)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	volatile int ok = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	if (!sigsetjmp(bus_jmp, 1)) {
		/* One aligned 32-bit load per word: the MSI-X rule. */
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i];
		ok = 1;
	}
	sigaction(SIGBUS, &old, NULL);
	return ok ? 0 : -1;
}

/*
 * Map [@off, @off + @len) of @file at file offset @base + @off read-only
 * and copy it out as 32-bit words. Returns 0, an errno, or NOT_REGULAR
 * (a resourceN that is not a regular file, a /dev/mem that is neither
 * that nor a character device); *@stage names the step that failed.
 */
static int read_region(const char *file, bool devmem, uint64_t base,
		       uint64_t off, size_t len, uint32_t *out,
		       const char **stage)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t at = base + off, map_at = at & ~(uint64_t)(pg - 1);
	size_t map_len = (size_t)(at - map_at) + len;
	void *m;
	int fd, err = 0;

	*stage = "open";
	fd = open_input(file, devmem, O_SYNC);
	if (fd == NOT_REGULAR)
		return NOT_REGULAR;
	if (fd < 0)
		return errno;
	*stage = "mmap";
	m = mmap(NULL, map_len, PROT_READ, MAP_SHARED, fd, (off_t)map_at);
	if (m == MAP_FAILED) {
		err = errno;
		close(fd);
		return err;
	}
	*stage = "read";
	if (read_words((const volatile uint32_t *)((char *)m + (at - map_at)),
		       out, len / 4))
		err = EFAULT;
	munmap(m, map_len);
	close(fd);
	return err;
}

/*
 * Read the table and PBA of @d through @file (@devmem false and the bases
 * 0 for resourceN; true and the BARs' physical addresses for /dev/mem).
 */
static int read_table(const char *file, bool devmem, uint64_t tbase,
		      uint64_t pbase, struct inspect_dev *d, uint32_t *tab,
		      uint32_t *pba, const char **stage)
{
	const struct umsi_msix_cap *x = &d->msix;
	size_t tlen = (size_t)x->table_size * UMSI_MSIX_ENTRY_SIZE;
	size_t plen = ((size_t)x->table_size + 63) / 64 * 8;
	int err;

	err = read_region(file, devmem, tbase, x->table_offset, tlen, tab,
			  stage);
	if (!err)
		err = read_region(file, devmem, pbase, x->pba_offset, plen,
				  pba, stage);
	return err;
}

static void fill_entries(struct inspect_dev *d, const uint32_t *tab,
			 const uint32_t *pba)
{
	for (uint32_t i = 0; i < d->msix.table_size; i++) {
		struct inspect_msix_entry *e = &d->entries[i];
		const uint32_t *w = tab + i * 4;

		e->index = i;
		e->address = (uint64_t)w[1] << 32 | w[0];
		e->data = w[2];
		e->ctrl = w[3];
		e->pending = (pba[i / 32] >> (i % 32)) & 1;
		inspect_decode_entry(e);
		for (size_t k = 0; k < d->n_msix_irqs; k++)
			if (d->msix_irqs[k].index_known &&
			    d->msix_irqs[k].index == i)
				e->irq = &d->msix_irqs[k];
	}
}

static void describe(char *buf, size_t n, const char *file, const char *stage,
		     int err)
{
	if (err == NOT_REGULAR)
		snprintf(buf, n, "%s is %s: not read", file, kind_of(file));
	else if (err == ENOENT && !strcmp(stage, "open"))
		snprintf(buf, n, "%s does not exist", file);
	else
		snprintf(buf, n, "%s of %s failed: %s", stage, file,
			 strerror(err));
}

/* Try resourceN, then /dev/mem; on failure say exactly why. */
static void live_table(struct live *l, const char *name, struct inspect_dev *d,
		       const uint64_t start[6])
{
	const struct umsi_msix_cap *x = &d->msix;
	size_t twords = (size_t)x->table_size * 4;
	size_t pwords = ((size_t)x->table_size + 63) / 64 * 2;
	uint32_t *tab = calloc(twords, 4), *pba = calloc(pwords + 1, 4);
	char rfile[512], pfile[512], mfile[512], why1[300], why2[300];
	const char *stage = "open", *failed = rfile;
	int e1, e2 = 0;

	if (!tab || !pba) {
		snprintf(d->entries_reason, INSPECT_MSG_LEN, "out of memory");
		goto out;
	}
	if (!d->msix_location_ok) {
		snprintf(d->entries_reason, INSPECT_MSG_LEN,
			 "the table location is impossible (see the errors)");
		goto out;
	}
	snprintf(rfile, sizeof(rfile), "%s/sys/bus/pci/devices/%s/resource%u",
		 l->root, name, x->table_bir);
	/* Table and PBA may sit in different BARs. */
	if (x->pba_bir == x->table_bir) {
		e1 = read_table(rfile, false, 0, 0, d, tab, pba, &stage);
	} else {
		snprintf(pfile, sizeof(pfile), "%s/sys/bus/pci/devices/%s/resource%u",
			 l->root, name, x->pba_bir);
		e1 = read_region(rfile, false, 0, x->table_offset, twords * 4,
				 tab, &stage);
		if (!e1) {
			failed = pfile;
			e1 = read_region(pfile, false, 0, x->pba_offset,
					 pwords * 4, pba, &stage);
		}
	}
	if (!e1)
		goto ok;
	l->table_unread = true;
	if (!(e1 == ENOENT && !strcmp(stage, "open")))
		l->any_resource_file = true;
	describe(why1, sizeof(why1), failed, stage, e1);
	if (e1 == EINVAL && !strcmp(stage, "mmap"))
		l->strict_refusal = true;

	snprintf(mfile, sizeof(mfile), "%s/dev/mem", l->root);
	e2 = read_table(mfile, true, start[x->table_bir], start[x->pba_bir], d,
			tab, pba, &stage);
	if (!e2)
		goto ok;
	describe(why2, sizeof(why2), mfile, stage, e2);
	if (e2 == ENOENT && !strcmp(stage, "open"))
		l->devmem_absent = true;
	if (e2 == EPERM && !strcmp(stage, "mmap"))
		l->strict_refusal = true;
	if ((e1 == EINVAL || e1 == EPERM) && e2 == EPERM &&
	    !strcmp(stage, "mmap"))
		snprintf(d->entries_reason, INSPECT_MSG_LEN,
			 "the kernel refuses to map this BAR: it is claimed by a driver and the kernel has CONFIG_IO_STRICT_DEVMEM (or is locked down): %s; %s. Booting with iomem=relaxed lifts the CONFIG_IO_STRICT_DEVMEM refusal",
			 why1, why2);
	else if (e1 == ENOENT && e2 == ENOENT)
		snprintf(d->entries_reason, INSPECT_MSG_LEN,
			 "this kernel offers no way to read BAR memory: %s and %s (no resource files, no /dev/mem); iomem=relaxed only lifts a CONFIG_IO_STRICT_DEVMEM refusal and cannot help here",
			 why1, why2);
	else if (l->lockdown[0] && (e1 == EPERM || e2 == EPERM))
		snprintf(d->entries_reason, INSPECT_MSG_LEN,
			 "the kernel is locked down (%s), which forbids mapping device memory: %s; %s",
			 l->lockdown, why1, why2);
	else
		snprintf(d->entries_reason, INSPECT_MSG_LEN,
			 "the table could not be read: %s; %s%s", why1, why2,
			 e2 == EPERM || e1 == EPERM ?
			 " (if the kernel has CONFIG_IO_STRICT_DEVMEM, booting with iomem=relaxed lifts the refusal)" : "");
	goto out;
ok:
	d->entries = calloc(x->table_size, sizeof(*d->entries));
	if (d->entries)
		fill_entries(d, tab, pba);
	else
		snprintf(d->entries_reason, INSPECT_MSG_LEN, "out of memory");
out:
	free(tab);
	free(pba);
}

/* The active mode of /sys/kernel/security/lockdown ("[integrity]"). */
static void read_lockdown(struct live *l)
{
	char p[512], buf[128];

	path(p, sizeof(p), l, "/sys/kernel/security/lockdown%s", "", 0);
	if (slurp(l, NULL, p, buf, sizeof(buf)) <= 0)
		return;
	inspect_parse_lockdown(buf, l->lockdown, sizeof(l->lockdown));
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void live_fn(struct live *l, const char *name, umsi_bdf_t bdf,
		    struct inspect_fn *fn)
{
	uint64_t start[6], size[6];
	struct inspect_dev *d;
	char p[512];
	ssize_t got, total = 0;
	int fd;

	memset(fn, 0, sizeof(*fn));
	memset(fn->cfg, 0xff, sizeof(fn->cfg));
	fn->bdf = bdf;
	path(p, sizeof(p), l, "/sys/bus/pci/devices/%s/config", name, 0);
	fd = open_input(p, false, 0);
	if (fd == NOT_REGULAR) {
		inspect_error(l->rep, bdf, true,
			      "%s is %s: its configuration space is not read",
			      p, kind_of(p));
		return;
	}
	if (fd < 0) {
		inspect_error(l->rep, bdf, true, "cannot open %s: %s", p,
			      strerror(errno));
		return;
	}
	while (total < INSPECT_CFG_MAX &&
	       (got = pread(fd, fn->cfg + total, INSPECT_CFG_MAX - (size_t)total,
			    total)) > 0)
		total += got;
	close(fd);
	fn->size = (uint16_t)total;
	read_resources(l, name, bdf, start, size);
	d = inspect_decode_fn(l->rep, fn, size);
	if (!d)
		return;
	if (d->cfg_short)
		return;
	linux_irqs(l, name, d);
	read_driver(l, name, d);
	if (d->has_msix) {
		/* A disabled memory decoder answers every read with all-ones. */
		if (!(fn->cfg[UMSI_PCI_COMMAND] & UMSI_PCI_CMD_MEMORY))
			snprintf(d->entries_reason, INSPECT_MSG_LEN,
				 "memory decoding is off in the Command register, so the BAR does not respond");
		else
			live_table(l, name, d, start);
	}
}

int inspect_live(struct inspect_report *rep, umsi_bdf_t sel, bool have_sel,
		 const char *sysroot)
{
	struct live l = { .rep = rep, .root = sysroot };
	struct inspect_fn *fn = malloc(sizeof(*fn));
	char p[512], **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *dir;
	bool found = false;

	if (!fn)
		return -1;
	path(p, sizeof(p), &l, "/sys/bus/pci/devices%s", "", 0);
	dir = opendir(p);
	if (!dir) {
		inspect_error(rep, 0, false, "cannot list %s: %s", p,
			      strerror(errno));
		free(fn);
		return -1;
	}
	while ((de = readdir(dir))) {
		char **nn;

		if (de->d_name[0] == '.')
			continue;
		nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn)
			break;
		names = nn;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(dir);
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	if (geteuid() != 0)
		note(rep, "not running as root: Linux lets other users read only the first 64 bytes of configuration space, which end before the capabilities; run as root to decode MSI and MSI-X");
	rep->live = true;
	parse_interrupts(&l);
	parse_cpuinfo(&l);
	read_possible(&l);
	read_topology(&l);
	read_vector_domain(&l);
	read_hostname(&l);
	read_lockdown(&l);
	for (size_t i = 0; i < n; i++) {
		umsi_bdf_t bdf;

		if (!inspect_parse_sysfs_name(names[i], &bdf)) {
			inspect_error(rep, 0, false,
				      "%s/%s is not a PCI address; skipped", p,
				      names[i]);
			continue;
		}
		if (have_sel && bdf != sel)
			continue;
		found = true;
		live_fn(&l, names[i], bdf, fn);
	}
	if (l.devmem_absent && !l.any_resource_file)
		note(rep, "MSI-X tables cannot be read on this machine: the kernel exposes no sysfs resourceN file for any BAR, and there is no /dev/mem (a kernel built without CONFIG_DEVMEM has none); what Linux itself exposes is shown instead (IRQ, per-CPU counts, effective affinity of each vector)");
	else if (l.strict_refusal)
		note(rep, "some MSI-X tables could not be mapped: the kernel refuses BARs claimed by a driver (CONFIG_IO_STRICT_DEVMEM); booting with iomem=relaxed lifts this");
	if (l.table_unread && !l.debugfs_seen)
		note(rep, "the CPU vector and target of each IRQ are not shown: %s/sys/kernel/debug/irq/irqs/ is absent (debugfs not mounted, or a kernel without CONFIG_GENERIC_IRQ_DEBUGFS)",
		     l.root);
	if (have_sel && !found) {
		char b[16];

		inspect_bdf_str(sel, b);
		inspect_error(rep, 0, false, "no PCI function %s on this machine", b);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	inspect_proc_interrupts_free(&l.pi);
	free(fn);
	return 0;
}
