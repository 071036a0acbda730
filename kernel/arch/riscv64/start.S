/* SPDX-License-Identifier: MIT */
/*
 * start.S - entry points of the riscv64 kernel.
 *
 * OpenSBI jumps to _start in S-mode at 0x80200000 with a0 = hart ID and
 * a1 = the device tree, on the one hart its lottery picked; the others
 * wait in the SBI HSM "stopped" state until smp.c starts them at
 * rv_secondary_entry with a1 = their struct rv_cpu (stack_top first).
 * Paging is off (satp = 0): the kernel runs at its physical addresses,
 * which -mcmodel=medany reaches PC-relatively.
 */
#define RV_CPU_HARTID	12	/* offsetof(struct rv_cpu, hartid), checked in smp.c */

	.section .text.entry, "ax"
	.globl _start
_start:
	csrw	sie, zero
	csrci	sstatus, 2
	/*
	 * Only the first hart here is the boot hart. OpenSBI v1.1's
	 * hart_start marks the hart START_PENDING before it writes the
	 * start address and argument; a hart waiting in its warm-boot loop
	 * that wakes in between jumps to the stale ones, i.e. here with
	 * a1 = the device tree (seen about once in 50 boots under QEMU
	 * 7.2 TCG). Such a hart must not zero .bss under the running
	 * kernel: it waits to be adopted instead.
	 */
	la	t0, rv_boot_lottery
	li	t1, 1
	amoswap.w.aq t0, t1, (t0)
	beqz	t0, 0f
	j	rv_stray_hart
0:
	la	t0, rv_trap_entry
	csrw	stvec, t0
	/* Zero .bss (8-byte aligned by kernel.ld); a0/a1 are kept. */
	la	t0, __bss_start
	la	t1, __bss_end
1:	bgeu	t0, t1, 2f
	sd	zero, 0(t0)
	addi	t0, t0, 8
	j	1b
2:	la	sp, rv_boot_stack_top
	mv	tp, zero
	call	rv_main
3:	wfi
	j	3b

	.text
/*
 * A hart that came in through _start but is not the boot hart: wait
 * until smp.c publishes the record of the hart it is starting
 * (rv_starting_cpu, in .data so that it is valid before .bss is zeroed)
 * and that record is this hart's, then go on as a started hart, a2 = 1.
 */
rv_stray_hart:
	la	t0, rv_starting_cpu
5:	ld	a1, 0(t0)
	fence	r, rw
	beqz	a1, 6f
	lwu	t1, RV_CPU_HARTID(a1)
	bne	t1, a0, 6f
	li	a2, 1
	j	rv_secondary_common
6:	.insn i 0x0f, 0, x0, x0, 0x010	/* pause */
	j	5b

	.globl rv_secondary_entry
	.align 2
rv_secondary_entry:
	li	a2, 0
rv_secondary_common:
	csrw	sie, zero
	csrci	sstatus, 2
	la	t0, rv_trap_entry
	csrw	stvec, t0
	ld	sp, 0(a1)
	mv	tp, a1
	call	rv_secondary_main
4:	wfi
	j	4b

/*
 * Traps: direct mode, so stvec must be 4-byte aligned. Everything runs in
 * S-mode on its own stack, so the frame goes on the current stack: 32
 * registers (x2 = the sp before the trap), sepc and sstatus, 272 bytes
 * (a multiple of 16, as the psABI wants of sp).
 */
	.globl rv_trap_entry
	.align 4
rv_trap_entry:
	addi	sp, sp, -272
	sd	x1, 8(sp)
	sd	x3, 24(sp)
	sd	x4, 32(sp)
	sd	x5, 40(sp)
	sd	x6, 48(sp)
	sd	x7, 56(sp)
	sd	x8, 64(sp)
	sd	x9, 72(sp)
	sd	x10, 80(sp)
	sd	x11, 88(sp)
	sd	x12, 96(sp)
	sd	x13, 104(sp)
	sd	x14, 112(sp)
	sd	x15, 120(sp)
	sd	x16, 128(sp)
	sd	x17, 136(sp)
	sd	x18, 144(sp)
	sd	x19, 152(sp)
	sd	x20, 160(sp)
	sd	x21, 168(sp)
	sd	x22, 176(sp)
	sd	x23, 184(sp)
	sd	x24, 192(sp)
	sd	x25, 200(sp)
	sd	x26, 208(sp)
	sd	x27, 216(sp)
	sd	x28, 224(sp)
	sd	x29, 232(sp)
	sd	x30, 240(sp)
	sd	x31, 248(sp)
	addi	t0, sp, 272
	sd	t0, 16(sp)
	csrr	t0, sepc
	sd	t0, 256(sp)
	csrr	t0, sstatus
	sd	t0, 264(sp)
	mv	a0, sp
	call	rv_trap
	ld	t0, 256(sp)
	csrw	sepc, t0
	ld	t0, 264(sp)
	csrw	sstatus, t0
	ld	x1, 8(sp)
	ld	x3, 24(sp)
	ld	x4, 32(sp)
	ld	x5, 40(sp)
	ld	x6, 48(sp)
	ld	x7, 56(sp)
	ld	x8, 64(sp)
	ld	x9, 72(sp)
	ld	x10, 80(sp)
	ld	x11, 88(sp)
	ld	x12, 96(sp)
	ld	x13, 104(sp)
	ld	x14, 112(sp)
	ld	x15, 120(sp)
	ld	x16, 128(sp)
	ld	x17, 136(sp)
	ld	x18, 144(sp)
	ld	x19, 152(sp)
	ld	x20, 160(sp)
	ld	x21, 168(sp)
	ld	x22, 176(sp)
	ld	x23, 184(sp)
	ld	x24, 192(sp)
	ld	x25, 200(sp)
	ld	x26, 208(sp)
	ld	x27, 216(sp)
	ld	x28, 224(sp)
	ld	x29, 232(sp)
	ld	x30, 240(sp)
	ld	x31, 248(sp)
	addi	sp, sp, 272
	sret

	.data
	.align 2
rv_boot_lottery:
	.word	0

	.section .bss.stack, "aw", @nobits
	.align 4
rv_boot_stack:
	.space 16384
rv_boot_stack_top:
