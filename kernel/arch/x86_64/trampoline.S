/* SPDX-License-Identifier: MIT */
/*
 * trampoline.S - real-mode start of an application processor.
 *
 * kernel/arch/x86_64/smp.c copies trampoline_start..trampoline_end to TRAMP_BASE
 * (0x8000, below 1 MiB and page aligned, as a STARTUP IPI requires: the
 * SIPI vector is the page number, 0x08) and stores the page-table root in
 * tramp_cr3 of the copy. The AP starts at CS:IP = 0x0800:0000 in real
 * mode, goes through 32-bit protected mode with the small GDT below,
 * enables PAE, long mode and paging, loads the kernel's GDT and jumps to
 * ap_entry64 in boot.S. The code is position-dependent on TRAMP_BASE.
 */

#define TRAMP_BASE 0x8000
#define T(sym) (TRAMP_BASE + ((sym) - trampoline_start))

	.section .text.trampoline, "ax"
	.code16
	.global trampoline_start
trampoline_start:
	cli
	cld
	xorw %ax, %ax
	movw %ax, %ds
	lgdtl T(tramp_gdt_ptr)
	movl %cr0, %eax
	orl $1, %eax
	movl %eax, %cr0
	ljmpl $0x08, $T(tramp32)

	.code32
tramp32:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl %cr4, %eax
	orl $(1 << 5), %eax		/* PAE */
	movl %eax, %cr4
	movl T(tramp_cr3), %eax
	movl %eax, %cr3
	movl $0xc0000080, %ecx		/* EFER.LME */
	rdmsr
	orl $(1 << 8), %eax
	wrmsr
	movl %cr0, %eax
	orl $0x80000000, %eax		/* PG */
	movl %eax, %cr0
	lgdt gdt_ptr
	ljmp $0x08, $ap_entry64

	.align 8
tramp_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff	/* 0x08 32-bit code */
	.quad 0x00cf92000000ffff	/* 0x10 data */
tramp_gdt_ptr:
	.word tramp_gdt_ptr - tramp_gdt - 1
	.long T(tramp_gdt)
	.align 4
	.global tramp_cr3
tramp_cr3:
	.long 0
	.global trampoline_end
trampoline_end:

	.section .note.GNU-stack, "", @progbits
