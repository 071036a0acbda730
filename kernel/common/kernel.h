/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - core services of the reference kernel: console, panic and
 * exit, spinlocks, per-CPU data, memory, time and the command line.
 *
 * One kernel tree: kernel/common holds what every architecture shares,
 * the glue (glue*.c), the drivers (drivers/), PCI (pci.c, pcihot.c,
 * pcireset.c, pciehp.c), the heap (heap.c), the command line and lib/;
 * what they need from an architecture is declared here ("the
 * architecture interface" below) and in smp.h, and comes from
 * kernel/arch/<arch>/ (karch.h and its .c files): x86_64, riscv64, arm64.
 */
#ifndef KERNEL_KERNEL_H
#define KERNEL_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(__x86_64__) && !(defined(__riscv) && __riscv_xlen == 64) && \
	!defined(__aarch64__)
#error "kernel/: no architecture for this target"
#endif
/* The architecture's part: kernel/arch/<arch>/karch.h, whose folder comes
 * first on the include path. */
#include "karch.h"
#include "lib/klib.h"

#define KERNEL_MAX_CPUS 64	/* also in boot.S (GDT size) */

/*
 * kernel_exit() codes. QEMU exits with (code << 1) | 1, so PASS is 33 and
 * FAIL is 35 as seen by the shell (x86: isa-debug-exit at port 0xf4;
 * riscv64: the sifive,test0 finisher given that status). On x86 a triple
 * fault under -no-reboot exits with 0; a timeout is 124 everywhere.
 */
#define KERNEL_EXIT_PASS  0x10
#define KERNEL_EXIT_FAIL  0x11

#if defined(__x86_64__)
#define DEBUG_EXIT_PORT   0xf4

/* The architecture's name in the ready line, its CPU name in UMSI lines. */
#define KARCH_NAME        "x86_64"
#define KARCH_HWID_KEY    "apic_id"
#endif

#define ALIGN_UP(x, a)   (((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define ARRAY_SIZE(a)    (sizeof(a) / sizeof((a)[0]))

/* ---- console (kernel/serial.c, kernel/arch/x86_64/console.c) ---------------------- */
void serial_init(void);
/* The architecture's console: send one character, waiting (boundedly) for
 * room; kernel/common/console.c builds kprintf and panic on it. */
void karch_console_putc(char c);
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kputs_raw(const char *s);	/* no lock: for panic paths */
void console_write(const char *s);	/* any length, one piece */
__attribute__((noreturn)) void panic(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void kernel_exit(uint8_t code);

/* ---- spinlocks ---------------------------------------------------------- */
struct spinlock {
	volatile uint32_t locked;
};

static inline void spin_lock(struct spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			cpu_relax();
	}
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static inline unsigned long spin_lock_irqsave(struct spinlock *l)
{
	unsigned long flags = irq_save();

	spin_lock(l);
	return flags;
}

static inline void spin_unlock_irqrestore(struct spinlock *l,
					  unsigned long flags)
{
	spin_unlock(l);
	irq_restore(flags);
}

/* ---- the architecture interface ------------------------------------------
 * Besides the console, heap, time and smp.h: what shared code asks of the
 * architecture it runs on (x86: kernel/arch/x86_64/arch_x86.c; riscv64:
 * kernel/arch/riscv64/). this_cpu_id(), cpu_relax(), irq_save() and
 * irq_restore(), irq_disable()/irq_enable(), mfence() (a full fence, device
 * accesses included) and mmio_read/write8/16/32 are inline in the
 * architecture's header.
 */
struct umsi_config;

/* The interrupt-controller back end and its settings (host.c). */
void arch_umsi_config(struct umsi_config *cfg);
/* Interrupt CPU @cpu so that it leaves its idle wait (any context). */
void arch_wake_cpu(uint32_t cpu);
/* Make identity @id arrive at the CPU named @hwid once, as a device would. */
void arch_send_irq(uint32_t hwid, uint32_t id);
/* umsi.steps: drain input until @quiet_us pass without any; a key waiting? */
void arch_key_drain(uint64_t quiet_us);
bool arch_key_pressed(void);
/* The uMSI identity dispatcher, set by the glue; the trap path calls it. */
extern void (*irq_dispatch_hook)(uint32_t cpu, uint32_t id);

#if defined(__x86_64__)
/* ---- per-CPU data (GS base points at the CPU's struct percpu) ---------- */
struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

struct percpu {
	struct percpu *self;		/* must stay first: %gs:0 */
	uint32_t cpu;			/* must stay second: %gs:8 */
	uint32_t apic_id;
	uint32_t tss_slot;		/* GDT slot of the TSS */
	volatile bool online;
	struct tss tss;
	void *stack, *irq_stack, *exc_stack;
	/* Cross-call mailbox (kernel/arch/x86_64/smp.c). */
	void (*volatile xcall_fn)(void *);
	void *volatile xcall_arg;
	volatile uint32_t xcall_done;
	volatile uint64_t irq_count;	/* interrupts taken, all vectors */
	volatile uint64_t spurious_count;
};

extern struct percpu *percpu_table[KERNEL_MAX_CPUS];

static inline uint32_t this_cpu_id(void)
{
	uint32_t v;

	__asm__ volatile("movl %%gs:8, %0" : "=r"(v));
	return v;
}

static inline struct percpu *this_cpu(void)
{
	struct percpu *p;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(p));
	return p;
}

void cpu_setup(struct percpu *pc);	/* GDT/TSS/IDT/GS/SSE on this CPU */
#endif /* __x86_64__ */

/* ---- memory (kernel/arch/x86_64/mm.c) ------------------------------------------------- */
void mm_init(uint64_t heap_start, uint64_t heap_end, uint64_t ram_top);
void *kalloc(size_t size);		/* zeroed, 16-byte aligned */
void kfree(void *p, size_t size);
void *kalloc_pages(size_t size);	/* zeroed, 4 KiB aligned, never freed */
/* Identity-map [phys, phys+len) uncached; returns the virtual address. */
void *mm_map_mmio(uint64_t phys, uint64_t len);
uint64_t mm_heap_used(void);
/*
 * Bytes of the architecture's own region for a controller's tables
 * (arm64: the ITS's tables and every device's ITT, host phys_alloc)
 * ever handed out, a high-water mark like mm_heap_used(); 0 where
 * phys_alloc takes from the heap (x86) or is not offered (riscv64).
 */
uint64_t karch_phys_used(void);

/* ---- time (kernel/arch/x86_64/time.c) ------------------------------------------------ */
void time_init(uint16_t pm_port, bool pm_32bit);
void udelay(uint64_t us);
uint64_t clock_ns(void);

/* ---- command line (kernel/common/cmdline.c) -------------------------------------- */
void cmdline_init(const char *raw);	/* multiboot: skips the first word */
void cmdline_set(const char *args);	/* the parameters alone (device tree) */
const char *cmdline_get(void);
/* Value of key=value, or "" for a bare flag, or NULL when absent. */
const char *cmdline_value(const char *key, char *buf, size_t size);
bool cmdline_flag(const char *key);
/* @item is one of the comma-separated words of @list, or @list is "all". */
bool cmdline_list_has(const char *list, const char *item);
/*
 * "BB:DD.F:N" (umsi.sriov=): bus, device, function in hex (an optional
 * 0x each), N in decimal; *@bdf = bus << 8 | dev << 3 | fn. False for
 * anything else: a part missing or empty, device past 0x1f, function past
 * 7, bus past 0xff, N of 0 or past @max_n, or text after N.
 */
bool cmdline_bdf_count(const char *v, uint32_t *bdf, uint64_t *n,
		       uint64_t max_n);

#if defined(__x86_64__)
/* ---- interrupts (kernel/arch/x86_64/idt.c) -------------------------------------------- */
#define VECTOR_XCALL     0xfd	/* cross-call IPI */
#define VECTOR_WAKE      0xfc	/* wake the boot CPU's work loop */
#define VECTOR_SPURIOUS  0xff	/* APIC spurious vector: never EOIed */

struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

void idt_init(void);
void idt_load(void);
void kernel_irq_entry(uint8_t vector);
#endif /* __x86_64__ */

#endif /* KERNEL_KERNEL_H */
