/* SPDX-License-Identifier: MIT */
/*
 * isr.S - the 256 interrupt stubs and the common entry.
 *
 * Stub v sits at isr_stubs + 16 * v. It pushes a zero where the CPU pushes
 * no error code, then the vector, and jumps to isr_common, which saves the
 * general registers and the FPU/SSE state (the library is built as
 * ordinary C and may use SSE registers; the kernel itself never does),
 * calls isr_dispatch(struct trap_frame *) and returns with iretq.
 *
 * Every gate uses an IST stack (kernel/arch/x86_64/idt.c), so the CPU switches stacks
 * even when interrupting kernel code: a leaf function of the library may
 * keep data in the 128-byte red zone below its stack pointer, and an
 * interrupt frame pushed there would destroy it.
 */

	.text
	.align 16
	.global isr_stubs
isr_stubs:
	.set vec, 0
	.rept 256
	.align 16
	.if (vec == 8) || (vec == 10) || (vec == 11) || (vec == 12) || (vec == 13) || (vec == 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
	.else
	pushq $0
	.endif
	pushq $vec
	jmp isr_common
	.set vec, vec + 1
	.endr

	.align 16
isr_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	/* The CPU aligned RSP to 16 before its 40-byte frame; 17 more
	 * quadwords leave it 16-byte aligned again, as fxsave needs. */
	subq $512, %rsp
	fxsave (%rsp)
	leaq 512(%rsp), %rdi
	cld
	call isr_dispatch
	fxrstor (%rsp)
	addq $512, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp
	iretq

	.section .note.GNU-stack, "", @progbits
