/* SPDX-License-Identifier: MIT */
/*
 * tools/inspect/inspect.h - `umsi inspect`, private to the tool.
 *
 * The tool has four separable parts so the fuzzer can drive the first two
 * without any I/O:
 *   dump.c    lspci -x/-xxx/-xxxx text -> one inspect_fn per function
 *   decode.c  inspect_fn -> inspect_dev (MSI/MSI-X capability and the x86
 *             decoding of every message), through the library's
 *             umsi_pci_* and umsi_x86_msg_decode
 *   live.c    this machine: sysfs config space, MSI-X table from the BAR,
 *             Linux's IRQs, counts and affinity; the text of the sysfs
 *             and procfs files is parsed in livetext.c, without I/O
 *   check.c   --check: judges the decoded state, one finding per fault
 *   json.c, text.c  the two output formats
 * inspect.c holds the command line.
 */
#ifndef UMSI_TOOLS_INSPECT_H
#define UMSI_TOOLS_INSPECT_H

#include <stdio.h>

#include <umsi/msg.h>
#include <umsi/x86.h>
#include <umsi/pcicap.h>

#define INSPECT_CFG_MAX   4096
#define INSPECT_MAX_FNS   65536  /* 256 buses x 256 functions */
#define INSPECT_MSG_LEN   1024

/*
 * One function's configuration space as read from a dump or sysfs. Bytes
 * below @size that the source did not provide read as 0xff, as lspci's
 * dump back end does.
 */
struct inspect_fn {
	umsi_bdf_t bdf;
	uint16_t size;
	unsigned line;          /* dump: line of the header; 0 for live */
	uint8_t cfg[INSPECT_CFG_MAX];
};

/*
 * A problem with one function (or the input as a whole when @bdf is "").
 * @line tells apart two functions a dump gives at the same address: the
 * line of the function's header (0 in live mode, and for the input as a
 * whole).
 */
struct inspect_err {
	char bdf[16];
	unsigned line;
	char message[INSPECT_MSG_LEN];
};

/* Linux's view of one MSI or MSI-X vector (live mode only). */
struct inspect_irq {
	uint32_t index;         /* MSI-X entry or MSI message number */
	int irq;                /* Linux IRQ number */
	bool index_known;       /* /proc/interrupts named the entry */
	char chip[64];          /* e.g. "PCI-MSIX-0000:00:01.0", "IR-PCI-MSI" */
	char actions[96];       /* handler names from /proc/interrupts */
	char affinity[64];      /* /proc/irq/N/effective_affinity_list */
	int cpu_vector;         /* debugfs: CPU vector, -1 when unknown */
	int target_cpu;         /* debugfs: CPU it targets, -1 when unknown */
	uint64_t *counts;       /* per-CPU counts, ncpus of them, or NULL */
};

/* One MSI-X table entry as read from the BAR (live mode only). */
struct inspect_msix_entry {
	uint32_t index;
	uint64_t address;
	uint32_t data;
	uint32_t ctrl;          /* Vector Control */
	bool pending;
	struct umsi_x86_msi msg;
	const struct inspect_irq *irq;  /* Linux's IRQ for it, or NULL */
};

struct inspect_dev {
	umsi_bdf_t bdf;
	unsigned line;          /* dump: line of the header; 0 for live */
	uint16_t vendor, device;
	uint8_t hdr_type;
	uint16_t command;       /* the Command register */
	uint16_t cfg_size;
	bool cfg_short;         /* only the 64-byte header could be read */

	bool has_msi;
	struct umsi_msi_cap msi;
	unsigned msi_count_cap;         /* 2^MMC field, as lspci prints it */
	unsigned msi_count_enabled;     /* 2^MME field */
	struct umsi_x86_msi msi_msg;

	bool has_msix;
	struct umsi_msix_cap msix;
	bool msix_location_ok;  /* table and PBA can be where they say */
	struct inspect_msix_entry *entries;     /* NULL: not read */
	char entries_reason[INSPECT_MSG_LEN];

	/* Linux's IRQs of this function (live mode), by kind. */
	struct inspect_irq *msi_irqs, *msix_irqs;
	size_t n_msi_irqs, n_msix_irqs;
	bool linux_known;       /* live mode: the IRQ fields mean something */
	char driver[32];        /* live mode: the bound driver, or "" */
};

/*
 * One CPU of /proc/cpuinfo: Linux's CPU number, its APIC ID, and whether
 * its "flags" line was seen and names x2apic: the CPU can run its local
 * APIC in x2APIC mode. Linux clears the flag under nox2apic (and in Xen
 * PV guests), but keeps it when it leaves x2APIC off for want of
 * interrupt remapping: the flag alone does not say x2APIC is on.
 */
struct inspect_apic {
	unsigned cpu;
	uint32_t apic_id;
	bool flags_seen;
	bool x2apic;
};

/* x86 vectors of one CPU: the IDT's 256. */
#define INSPECT_NVEC 256

/* One CPU's row of /sys/kernel/debug/irq/domains/VECTOR. */
struct inspect_vector_cpu {
	unsigned cpu;
	uint64_t alloc[INSPECT_NVEC / 64];      /* vectors in use */
};

/* The x86 vector matrix as Linux's debugfs shows it (online CPUs only). */
struct inspect_vector_domain {
	uint64_t system[INSPECT_NVEC / 64];     /* "System:" vectors */
	struct inspect_vector_cpu *cpus;        /* sorted by CPU */
	size_t ncpus;
};

/*
 * One fault found by --check (check.c). @entry is the MSI-X entry or MSI
 * message it is about, -1 when it is about the whole capability.
 */
struct inspect_finding {
	umsi_bdf_t bdf;
	unsigned line;          /* dump: the function's header line; 0 live */
	const char *check;      /* short name: "pending-masked", ... */
	bool msix;              /* about MSI-X (else MSI) */
	int32_t entry;
	char message[INSPECT_MSG_LEN];  /* what is wrong; why it matters */
};

/*
 * How a logical destination names CPUs (x86), as far as what Linux
 * exposes tells (check.c, inspect_logical_model()):
 *   FLAT     xAPIC flat model: bit n of the 8-bit destination is Linux CPU
 *            n (Linux sets CPU n's LDR to 1 << n, default_init_apic_ldr)
 *   CLUSTER  x2APIC cluster model: the logical ID of the CPU whose x2APIC
 *            ID is a is (a >> 4) << 16 | 1 << (a & 15), fixed by the
 *            hardware
 *   EITHER   flat or cluster, which cannot be told apart here: a
 *            destination is decoded when both models name the same CPUs
 *   UNKNOWN  neither can be assumed; @how says why
 */
enum inspect_logical_kind {
	INSPECT_LOGICAL_UNKNOWN,
	INSPECT_LOGICAL_FLAT,
	INSPECT_LOGICAL_CLUSTER,
	INSPECT_LOGICAL_EITHER,
};

struct inspect_logical {
	enum inspect_logical_kind kind;
	char how[INSPECT_MSG_LEN];      /* how it is known, or why not */
};

#define INSPECT_CHECK_NOTES 12

struct inspect_report {
	const char *source;     /* "live" or the dump's file name */
	struct inspect_dev *devs;
	size_t ndevs, cap_devs;
	struct inspect_err *errs;
	size_t nerrs, cap_errs;
	unsigned ncpus;         /* columns of every inspect_irq.counts */
	unsigned *cpus;         /* the CPU number of each column */
	char notes[8][INSPECT_MSG_LEN];   /* machine-wide notes (live mode) */
	size_t nnotes;
	size_t decoded;         /* functions whose header could be decoded */
	bool live;              /* Linux's view (IRQs, CPUs) was read */
	/* /proc/cpuinfo (live mode, x86), sorted by APIC ID; NULL if none. */
	struct inspect_apic *apics;
	size_t napics;
	/* /sys/devices/system/cpu/possible (live mode): read, how many, the
	 * highest; Linux picks its APIC model by the count. */
	bool possible_known;
	unsigned possible_count, possible_max;
	/*
	 * Live mode: the CPUs (the columns of /proc/interrupts, else those
	 * of /proc/cpuinfo), ascending, and the package of each (sysfs
	 * topology/physical_package_id, -1 when unknown), for --svg.
	 */
	unsigned *topo_cpus;
	int *topo_pkg;
	size_t ntopo;
	/* /sys/kernel/debug/irq/domains/VECTOR, when it could be read. */
	struct inspect_vector_domain *vectors;
	char hostname[65];      /* /proc/sys/kernel/hostname, or "" */
	/* --check: the findings, what could not be checked, and how many
	 * functions had their capabilities read. */
	bool checked;
	struct inspect_finding *findings;
	size_t nfindings, cap_findings;
	char check_notes[INSPECT_CHECK_NOTES][INSPECT_MSG_LEN];
	size_t ncheck_notes;
	size_t check_fns;
};

/* dump.c */
struct inspect_fn_list {
	struct inspect_fn *fns;
	size_t n, cap;
};

/**
 * inspect_dump_parse - parse lspci -x/-xxx/-xxxx text
 * @text: the file's contents (need not be NUL-terminated)
 * @len: its length
 * @out: receives one inspect_fn per device header, in file order
 * @rep: problems are appended to its error list
 *
 * Follows pciutils' lib/dump.c: a header line is `bb:dd.f ` or
 * `dddd:bb:dd.f ` (4 to 6 domain digits) followed by a space, a row is an
 * offset of 2 to 8 hex digits, ": " and up to 16 bytes, an empty line ends
 * a device and every other line (lspci -v text) is ignored. An address
 * given twice gives two functions, as in lspci; the later ones are
 * reported as repeats.
 *
 * Return: 0, or -1 when out of memory.
 */
int inspect_dump_parse(const char *text, size_t len,
		       struct inspect_fn_list *out, struct inspect_report *rep);
void inspect_fn_list_free(struct inspect_fn_list *l);

/**
 * inspect_parse_selector - parse `[[domain:]bus:]dev.fn`
 * Return: 0 and *@bdf set, or -1 for a malformed selector.
 */
int inspect_parse_selector(const char *s, umsi_bdf_t *bdf);

/* decode.c */
void inspect_report_init(struct inspect_report *rep, const char *source);
void inspect_report_free(struct inspect_report *rep);
void inspect_error(struct inspect_report *rep, umsi_bdf_t bdf, bool has_bdf,
		   const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A problem with @fn: tied to its address and, in a dump, its header. */
void inspect_fn_error(struct inspect_report *rep, const struct inspect_fn *fn,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void inspect_bdf_str(umsi_bdf_t bdf, char buf[16]);
/* Is @e about @d (same address and, in a dump, the same header line)? */
bool inspect_err_is_for(const struct inspect_err *e,
			const struct inspect_dev *d);

/**
 * inspect_decode_fn - decode one function's MSI and MSI-X capabilities
 * @rep: the report; a device is appended unless the header is unreadable
 * @fn: the function's configuration space
 * @bar_size: the six BAR sizes when known (live mode), else NULL; used to
 *            check that the MSI-X table and PBA fit in their BAR
 *
 * Return: the appended device, or NULL (the reason is in @rep's errors).
 */
struct inspect_dev *inspect_decode_fn(struct inspect_report *rep,
				      const struct inspect_fn *fn,
				      const uint64_t *bar_size);

/* Decode one message read from an MSI-X table entry. */
void inspect_decode_entry(struct inspect_msix_entry *e);

const char *inspect_delivery_name(uint8_t dm);

/* live.c */
/**
 * inspect_live - inspect every PCI function of this machine
 * @rep: the report to fill
 * @sel: only this function, when @have_sel
 * @have_sel: whether @sel applies
 * @sysroot: "" normally; a directory standing in for / (tests)
 *
 * Never writes to a device: config space and BARs are opened read-only.
 * Return: 0, or -1 when /sys/bus/pci/devices cannot be listed at all.
 */
int inspect_live(struct inspect_report *rep, umsi_bdf_t sel, bool have_sel,
		 const char *sysroot);

/* livetext.c: the text of the files live mode reads, without I/O. */
#define INSPECT_MAX_CPUS  65536  /* columns of /proc/interrupts kept */

/* One numbered line of /proc/interrupts. */
struct inspect_proc_irq {
	int irq;
	uint64_t *counts;       /* ncounts of them (the line may be short) */
	unsigned ncounts;
	char chip[64];
	bool has_hwirq;
	unsigned long hwirq;
	char actions[96];
};

struct inspect_proc_interrupts {
	unsigned ncpus;         /* the "CPUn" columns of the first line */
	unsigned *cpus;         /* n of each column */
	struct inspect_proc_irq *irqs;
	size_t nirqs;
};

/**
 * inspect_parse_interrupts - parse /proc/interrupts
 * @text: the file's bytes (a NUL among them ends the text)
 * @len: their number
 * @pi: receives the CPU columns and every numbered line
 *
 * Linux 6.1 prints MSI IRQs as "PCI-MSI <hwirq>" (hwirq: domain << 27 |
 * bus << 19 | devfn << 11 | entry), 6.2 and later "PCI-MSIX-<bdf> <entry>"
 * or "PCI-MSI-<bdf> <entry>", with "IR-" before either under remapping.
 * Return: 0, or -1 when out of memory (@pi then empty).
 */
int inspect_parse_interrupts(const char *text, size_t len,
			     struct inspect_proc_interrupts *pi);
void inspect_proc_interrupts_free(struct inspect_proc_interrupts *pi);
const struct inspect_proc_irq *
inspect_find_proc_irq(const struct inspect_proc_interrupts *pi, int irq);
/* Which MSI/MSI-X entry of @bdf does @q stand for? */
bool inspect_irq_index(const struct inspect_proc_irq *q, umsi_bdf_t bdf,
		       uint32_t *index);
/* "Vector: N" and "Target: N" of /sys/kernel/debug/irq/irqs/N; -1 if not. */
void inspect_parse_debugfs_irq(const char *text, int *vector, int *target);
/* Start and size of BARs 0-5 from sysfs `resource` (0 when unassigned). */
void inspect_parse_resources(const char *text, uint64_t start[6],
			     uint64_t size[6]);
/* The active mode ("[integrity]") of the lockdown file; "" for none. */
void inspect_parse_lockdown(const char *text, char *mode, size_t n);
/* A /sys/bus/pci/devices name, dddd:bb:dd.f. */
bool inspect_parse_sysfs_name(const char *s, umsi_bdf_t *bdf);
/* A msi_irqs entry or /proc/irq name: a decimal IRQ number. */
bool inspect_parse_irq_number(const char *s, int *irq);
/* effective_affinity_list: copied to @out when it is a CPU list. */
bool inspect_parse_cpulist(const char *text, char *out, size_t n);

/* effective_affinity_list (as inspect_parse_cpulist keeps it): has @cpu? */
bool inspect_cpulist_has(const char *list, unsigned cpu);
/*
 * A CPU list (as inspect_parse_cpulist keeps it): how many CPUs (at most
 * UINT_MAX) and the highest. Return: false for a malformed list.
 */
bool inspect_cpulist_stats(const char *list, unsigned *count, unsigned *max);
/* A one-line decimal int file ("0\n", "-1"): physical_package_id. */
bool inspect_parse_int_line(const char *text, int *v);
/**
 * inspect_parse_vector_domain - /sys/kernel/debug/irq/domains/VECTOR
 * @text: the file's bytes (a NUL among them ends the text)
 * @len: their number
 * @vd: receives the system vectors and each online CPU's vectors in use
 *
 * Linux's irq_matrix_debug_show() writes "System: N: LIST", a header
 * "| CPU | avl | man | mac | act | vectors" (older kernels have no mac
 * column; the header says which there are) and a row per online CPU: the
 * numbers, then the vectors in use as a bitmap list ("33-43,48").
 * Malformed rows are skipped; a CPU given twice is kept once.
 * Return: 0 and @vd filled (free it with inspect_vector_domain_free()),
 * 1 when the text holds no such table (@vd empty), -1 out of memory.
 */
int inspect_parse_vector_domain(const char *text, size_t len,
				struct inspect_vector_domain *vd);
void inspect_vector_domain_free(struct inspect_vector_domain *vd);
/* The row of @cpu, or NULL (offline, or not in the file). */
const struct inspect_vector_cpu *
inspect_vector_domain_cpu(const struct inspect_vector_domain *vd, unsigned cpu);
/**
 * inspect_parse_cpuinfo - the APIC ID of each CPU from /proc/cpuinfo
 * @text: the file's bytes (a NUL among them ends the text)
 * @len: their number
 * @out: receives a malloc()ed array sorted by APIC ID, or NULL when the
 *       text names no APIC ID (not x86) or on error
 * @n: its length
 *
 * On x86 each CPU's block starts "processor : N" and holds "apicid : M".
 * An APIC ID given to two CPUs (a broken file) stands for the lower one.
 * Return: 0, or -1 when out of memory.
 */
int inspect_parse_cpuinfo(const char *text, size_t len,
			  struct inspect_apic **out, size_t *n);
/* check.c */
/* The CPU whose APIC ID is @apic_id in @rep's table, or -1. */
long inspect_cpu_of_apic(const struct inspect_report *rep, uint32_t apic_id);
/**
 * inspect_logical_model - how logical destinations name CPUs here
 * @rep: a live report (/proc/cpuinfo, /sys/devices/system/cpu/possible)
 * @lm: receives the model and a sentence saying how it is known
 *
 * Linux (arch/x86/kernel/apic) uses logical destinations in two models:
 * xAPIC flat, when no more than 8 CPUs are possible (physflat_probe();
 * else physical flat), and x2APIC cluster; x2APIC without interrupt
 * remapping is physical (try_to_enable_x2apic() sets x2apic_phys). The
 * mode is read from what /proc/cpuinfo and sysfs show: no CPU with the
 * x2apic flag is xAPIC, an APIC ID above 255 is x2APIC; anything else is
 * said to be unknown rather than guessed.
 */
void inspect_logical_model(const struct inspect_report *rep,
			   struct inspect_logical *lm);
/*
 * Live mode: when some enabled message uses logical destination mode,
 * add a note to @rep saying how the CPUs it names are known (the model
 * and the evidence), or why they are not.
 */
void inspect_note_logical(struct inspect_report *rep);
/**
 * inspect_logical_cpus - the CPUs a logical destination names
 * @rep: the report
 * @lm: from inspect_logical_model()
 * @dest: the message's destination ID
 * @cpus: receives the Linux CPU numbers named, ascending
 * @max: room in @cpus
 * @stray: receives the destination bits that name no CPU of @rep (0:
 *         none)
 *
 * Return: how many CPUs (at most @max are stored), or -1 when the model
 * cannot say (UNKNOWN, or EITHER and the two models disagree for @dest).
 */
int inspect_logical_cpus(const struct inspect_report *rep,
			 const struct inspect_logical *lm, uint32_t dest,
			 unsigned *cpus, size_t max, uint32_t *stray);
/**
 * inspect_check - judge every decoded function (umsi inspect --check)
 * @rep: a report filled by a dump or live mode, devices in address order
 *
 * Fills @rep's findings and check notes (what could not be checked and
 * why). Never reads anything: it judges what the report holds.
 * Return: 0, or -1 when out of memory.
 */
int inspect_check(struct inspect_report *rep);
/* The findings as text, one line each, then the notes and a summary. */
void inspect_write_check_text(FILE *f, const struct inspect_report *rep);

/**
 * inspect_write_svg - the vectors of every CPU as an SVG heat map (svg.c)
 * @f: where it goes
 * @rep: a report from a dump or live mode
 *
 * Return: 0; -1 with errno ENODATA when there is no row to draw (no CPU
 * known, no APIC ID named), ENOMEM, or the error of a failed write.
 */
int inspect_write_svg(FILE *f, const struct inspect_report *rep);

/* json.c and text.c */
void inspect_write_json(FILE *f, const struct inspect_report *rep);
void inspect_write_text(FILE *f, const struct inspect_report *rep,
			bool verbose);

/* Value of a hex digit, or -1. */
static inline int inspect_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* UMSI_TOOLS_INSPECT_H */
