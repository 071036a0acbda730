/* SPDX-License-Identifier: MIT */
/*
 * boot.S - entry of the arm64 reference kernel.
 *
 * QEMU's -kernel passes a device tree (x0) only to an image it takes for
 * Linux: a flat binary starting with the arm64 Image header
 * (Documentation/arm64/booting.rst: text_offset 0x80000, flags 0xa =
 * little endian, 4 KiB pages, anywhere in RAM; magic "ARM\x64" at 0x38).
 * It is loaded at RAM base + text_offset = 0x40080000, the link address.
 *
 * Both the boot CPU and the CPUs PSCI CPU_ON starts arrive with the MMU
 * off; at EL2 (-machine virtualization=on) they drop to EL1 first.
 */
#define STACK_SIZE	16384	/* as ARM64_STACK_SIZE in arm64.h */
#define ARM64_MAX_CPUS_ASM 64	/* as ARM64_MAX_CPUS in arm64.h */

	.section .text.head, "ax"
	.globl	_start
_start:
	b	primary_entry		/* code0 */
	.long	0			/* code1 */
	.quad	0x80000			/* text_offset */
	.quad	_kernel_size		/* image_size, .bss included */
	.quad	0xa			/* flags */
	.quad	0, 0, 0			/* res2..res4 */
	.ascii	"ARM\x64"		/* magic */
	.long	0			/* res5 (PE header offset) */

/*
 * From EL2 to EL1h with everything masked: AArch64 EL1, the timer and the
 * GIC system registers usable at EL1. Clobbers x9.
 */
.macro drop_to_el1
	mrs	x9, CurrentEL
	lsr	x9, x9, #2
	cmp	x9, #2
	b.ne	9f
	mov	x9, #(1 << 31)		/* HCR_EL2.RW: EL1 is AArch64 */
	msr	hcr_el2, x9
	mrs	x9, cnthctl_el2
	orr	x9, x9, #3		/* EL1PCTEN, EL1PCEN */
	msr	cnthctl_el2, x9
	msr	cntvoff_el2, xzr
	/* A GICv3 CPU interface only (ID_AA64PFR0_EL1.GIC): a GICv2 has
	 * no system registers, and ICC_SRE_EL2 would be undefined. */
	mrs	x9, id_aa64pfr0_el1
	tst	x9, #0xf000000
	b.eq	8f
	mrs	x9, S3_4_C12_C9_5	/* ICC_SRE_EL2 */
	orr	x9, x9, #0xf		/* SRE, DFB, DIB, Enable (EL1 may use SRE) */
	msr	S3_4_C12_C9_5, x9
	isb
8:
	mov	x9, #0x3c5		/* EL1h, D A I F masked */
	msr	spsr_el2, x9
	adr	x9, 9f
	msr	elr_el2, x9
	eret
9:
.endm

/* SCTLR_EL1: MMU, caches and alignment checks off (RES1 bits set). */
.macro sctlr_init
	ldr	x9, =0x30d00800
	msr	sctlr_el1, x9
	isb
.endm

primary_entry:
	mov	x19, x0			/* device tree address, or 0 */
	mrs	x20, CurrentEL		/* the EL QEMU started us at */
	drop_to_el1
	sctlr_init
	adrp	x1, cpu_stacks
	add	x1, x1, :lo12:cpu_stacks
	add	sp, x1, #STACK_SIZE
	adrp	x1, __bss_start
	add	x1, x1, :lo12:__bss_start
	adrp	x2, __bss_end
	add	x2, x2, :lo12:__bss_end
1:	cmp	x1, x2
	b.hs	2f
	str	xzr, [x1], #8
	b	1b
2:	adrp	x1, arm64_vectors
	add	x1, x1, :lo12:arm64_vectors
	msr	vbar_el1, x1
	isb
	mov	x0, x19
	lsr	x1, x20, #2
	bl	kmain
	b	arm64_halt

/* PSCI CPU_ON entry: x0 = context_id = our CPU number. */
	.text
	.globl	secondary_entry
secondary_entry:
	mov	x19, x0
	drop_to_el1
	sctlr_init
	cmp	x19, #ARM64_MAX_CPUS_ASM
	b.hs	arm64_halt
	adrp	x1, cpu_stacks
	add	x1, x1, :lo12:cpu_stacks
	add	x2, x19, #1
	mov	x3, #STACK_SIZE
	madd	x1, x2, x3, x1
	mov	sp, x1
	adrp	x1, arm64_vectors
	add	x1, x1, :lo12:arm64_vectors
	msr	vbar_el1, x1
	isb
	mov	x0, x19
	bl	secondary_main
	b	arm64_halt

	.globl	arm64_halt
arm64_halt:
	msr	daifset, #0xf
1:	wfi
	b	1b

/*
 * Exception vectors (ARM ARM D1.10.2): 16 slots of 0x80 bytes. Only an
 * IRQ at the current EL with SP_ELx (0x280) is expected; everything else
 * is reported by arm64_exception() and stops the machine.
 */
.macro save_frame
	sub	sp, sp, #192
	stp	x0, x1, [sp, #0]
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x29, [sp, #144]
	mrs	x0, elr_el1
	mrs	x1, spsr_el1
	stp	x30, x0, [sp, #160]
	str	x1, [sp, #176]
.endm

.macro restore_frame
	ldr	x1, [sp, #176]
	ldp	x30, x0, [sp, #160]
	msr	spsr_el1, x1
	msr	elr_el1, x0
	ldp	x18, x29, [sp, #144]
	ldp	x16, x17, [sp, #128]
	ldp	x14, x15, [sp, #112]
	ldp	x12, x13, [sp, #96]
	ldp	x10, x11, [sp, #80]
	ldp	x8, x9, [sp, #64]
	ldp	x6, x7, [sp, #48]
	ldp	x4, x5, [sp, #32]
	ldp	x2, x3, [sp, #16]
	ldp	x0, x1, [sp, #0]
	add	sp, sp, #192
.endm

.macro vector_bad kind
	.balign	0x80
	save_frame
	mov	x0, #\kind
	mrs	x1, esr_el1
	mrs	x2, elr_el1
	mrs	x3, far_el1
	bl	arm64_exception
	b	arm64_halt
.endm

	.balign	2048
	.globl	arm64_vectors
arm64_vectors:
	vector_bad 0		/* current EL, SP_EL0: sync */
	vector_bad 1		/* IRQ */
	vector_bad 2		/* FIQ */
	vector_bad 3		/* SError */
	vector_bad 4		/* current EL, SP_ELx: sync */
	.balign	0x80		/* IRQ */
	b	irq_entry
	vector_bad 6		/* FIQ */
	vector_bad 7		/* SError */
	vector_bad 8		/* lower EL, AArch64 */
	vector_bad 9
	vector_bad 10
	vector_bad 11
	vector_bad 12		/* lower EL, AArch32 */
	vector_bad 13
	vector_bad 14
	vector_bad 15

irq_entry:
	save_frame
	bl	arm64_irq
	restore_frame
	eret
