/* SPDX-License-Identifier: MIT */
/*
 * idt.c - the interrupt descriptor table, per-CPU GDT/TSS set-up,
 * exceptions and the entry of vectors 32-255.
 *
 * Exceptions (0-31) use IST2, interrupts (32-255) IST1; see isr.S for why
 * every gate switches stacks. Interrupt gates clear IF and no handler sets
 * it again, so an IST stack is never entered twice on one CPU.
 */
#include <umsi/matrix.h>

#include "kernel.h"
#include "apic.h"
#include "selftest.h"
#include "smp.h"

struct idt_gate {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type;
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t reserved;
} __attribute__((packed));

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

extern char isr_stubs[];
extern uint64_t gdt[];

static struct idt_gate idt[256] __attribute__((aligned(16)));

#define GATE_INTR  0x8e		/* present, DPL 0, 64-bit interrupt gate */
#define IST_IRQ    1
#define IST_EXC    2
#define TSS_SEL(slot) (0x20 + 16 * (slot))

void idt_init(void)
{
	for (unsigned v = 0; v < 256; v++) {
		uint64_t off = (uint64_t)(isr_stubs + 16 * v);

		idt[v].off_lo = (uint16_t)off;
		idt[v].sel = 0x08;
		idt[v].ist = v < 32 ? IST_EXC : IST_IRQ;
		idt[v].type = GATE_INTR;
		idt[v].off_mid = (uint16_t)(off >> 16);
		idt[v].off_hi = (uint32_t)(off >> 32);
		idt[v].reserved = 0;
	}
}

void idt_load(void)
{
	struct desc_ptr p = { sizeof(idt) - 1, (uint64_t)idt };

	__asm__ volatile("lidt %0" : : "m"(p));
}

static void tss_install(struct percpu *pc)
{
	uint64_t base = (uint64_t)&pc->tss;
	uint64_t limit = sizeof(pc->tss) - 1;
	unsigned idx = TSS_SEL(pc->tss_slot) / 8;

	gdt[idx] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
		   (0x89ull << 40) | (((limit >> 16) & 0xf) << 48) |
		   (((base >> 24) & 0xff) << 56);
	gdt[idx + 1] = base >> 32;
	__asm__ volatile("ltr %w0" : : "r"((uint16_t)TSS_SEL(pc->tss_slot)));
}

/*
 * Prepare the CPU we run on: GS base -> its percpu, TSS with IST stacks,
 * the IDT, and SSE enabled (CR0.EM clear, CR0.MP, CR4.OSFXSR and
 * OSXMMEXCPT set) because library code built without -mgeneral-regs-only
 * may use SSE registers.
 */
void cpu_setup(struct percpu *pc)
{
	uint64_t cr0, cr4;

	pc->self = pc;
	wrmsr(MSR_GS_BASE, (uint64_t)pc);
	pc->tss.ist[IST_IRQ - 1] = (uint64_t)pc->irq_stack;
	pc->tss.ist[IST_EXC - 1] = (uint64_t)pc->exc_stack;
	pc->tss.iomap_base = sizeof(pc->tss);
	tss_install(pc);
	idt_load();

	__asm__ volatile("mov %%cr0, %0" : "=r"(cr0));
	cr0 &= ~((1ull << 2) | (1ull << 3));
	cr0 |= 1ull << 1;
	__asm__ volatile("mov %0, %%cr0" : : "r"(cr0));
	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	cr4 |= (1ull << 9) | (1ull << 10);
	__asm__ volatile("mov %0, %%cr4" : : "r"(cr4));
	__asm__ volatile("fninit");
}

static const char *const exc_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint",
	"#OF overflow", "#BR bound range", "#UD invalid opcode",
	"#NM device not available", "#DF double fault",
	"coprocessor segment overrun", "#TS invalid TSS",
	"#NP segment not present", "#SS stack fault",
	"#GP general protection", "#PF page fault", "reserved 15",
	"#MF x87 error", "#AC alignment check", "#MC machine check",
	"#XM SIMD error", "#VE virtualization", "#CP control protection",
	"reserved 22", "reserved 23", "reserved 24", "reserved 25",
	"reserved 26", "reserved 27", "#HV hypervisor injection",
	"#VC VMM communication", "#SX security", "reserved 31",
};

static void exception(struct trap_frame *f)
{
	char buf[256];
	uint64_t cr2;

	__asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
	ksnprintf(buf, sizeof(buf),
		  "\nEXCEPTION %lu (%s) on cpu %u error 0x%lx\n",
		  f->vector, exc_names[f->vector & 31], this_cpu_id(),
		  f->error);
	kputs_raw(buf);
	ksnprintf(buf, sizeof(buf),
		  "  rip %016lx cs %04lx rflags %016lx rsp %016lx ss %04lx cr2 %016lx\n",
		  f->rip, f->cs, f->rflags, f->rsp, f->ss, cr2);
	kputs_raw(buf);
	ksnprintf(buf, sizeof(buf),
		  "  rax %016lx rbx %016lx rcx %016lx rdx %016lx\n"
		  "  rsi %016lx rdi %016lx rbp %016lx r8  %016lx\n",
		  f->rax, f->rbx, f->rcx, f->rdx, f->rsi, f->rdi, f->rbp,
		  f->r8);
	kputs_raw(buf);
	ksnprintf(buf, sizeof(buf),
		  "  r9  %016lx r10 %016lx r11 %016lx r12 %016lx\n"
		  "  r13 %016lx r14 %016lx r15 %016lx\n",
		  f->r9, f->r10, f->r11, f->r12, f->r13, f->r14, f->r15);
	kputs_raw(buf);
	kernel_exit(KERNEL_EXIT_FAIL);
}

void isr_dispatch(struct trap_frame *f);

void isr_dispatch(struct trap_frame *f)
{
	if (f->vector < 32)
		exception(f);
	kernel_irq_entry((uint8_t)f->vector);
}

/* Hook for the vectors uMSI owns; set by kernel/arch/x86_64/host.c once it exists. */
void (*irq_dispatch_hook)(uint32_t cpu, uint32_t id);

/**
 * kernel_irq_entry - a device or IPI vector (32-255) arrived
 * @vector: the CPU vector
 *
 * The kernel's own vectors are handled here; every other vector belongs
 * to uMSI, whose dispatch EOIs it. The spurious vector is counted and
 * never EOIed (the SDM: a spurious interrupt does not set an ISR bit).
 */
void kernel_irq_entry(uint8_t vector)
{
	struct percpu *pc = this_cpu();

	pc->irq_count++;
	if (vector == VECTOR_SPURIOUS) {
		pc->spurious_count++;
		return;
	}
	if (vector == VECTOR_XCALL) {
		smp_xcall_interrupt();
		apic_eoi();
		return;
	}
	if (vector == VECTOR_WAKE) {	/* the halt it ends was the point */
		apic_eoi();
		return;
	}
	/* The vectors uMSI leaves the kernel: UMSI_MATRIX_X86_SYSTEM_FIRST up. */
	if (vector >= UMSI_MATRIX_X86_SYSTEM_FIRST && selftest_irq(vector))
		return;
	if (irq_dispatch_hook) {
		irq_dispatch_hook(pc->cpu, vector);
		return;
	}
	kprintf("cpu %u: unexpected vector 0x%x\n", pc->cpu, vector);
	apic_eoi();
}
