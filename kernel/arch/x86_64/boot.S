/* SPDX-License-Identifier: MIT */
/*
 * boot.S - multiboot 1 entry, the switch to long mode, and the 64-bit
 * entry points of the bootstrap processor and the application processors.
 *
 * QEMU's -kernel loader accepts multiboot 1 images only as ELF32 or with
 * the "a.out kludge": header flag 16 plus the five address fields below,
 * which tell it where to put the flat file and where to jump. build/
 * umsi-kernel is the flat binary of a 64-bit ELF linked at 1 MiB, so the
 * fields are plain link-time addresses.
 *
 * The loader enters _start32 in 32-bit protected mode, paging off, with
 * EAX = 0x2badb002 and EBX = the physical address of the multiboot info.
 */

#define MB_MAGIC  0x1badb002
#define MB_FLAGS  ((1 << 1) | (1 << 16))	/* memory info, address fields */

#define CR0_PE    (1 << 0)
#define CR0_PG    (1 << 31)
#define CR4_PAE   (1 << 5)
#define EFER_LME  (1 << 8)
#define PTE_P     (1 << 0)
#define PTE_W     (1 << 1)
#define PTE_PS    (1 << 7)

#define KERNEL_MAX_CPUS 64
#define BOOT_STACK_SIZE 16384

	.section .multiboot, "a"
	.align 4
mb_header:
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)
	.long mb_header			/* header_addr */
	.long __load_start		/* load_addr */
	.long __data_end		/* load_end_addr */
	.long __bss_end			/* bss_end_addr */
	.long _start32			/* entry_addr */

	.section .boot32, "ax"
	.code32
	.global _start32
_start32:
	cli
	cld
	movl %eax, boot_mb_magic
	movl %ebx, boot_mb_info

	/* Zero .bss: the loader does, but nothing obliges it to. */
	movl $__bss_start, %edi
	movl $__bss_end, %ecx
	subl %edi, %ecx
	shrl $2, %ecx
	xorl %eax, %eax
	rep stosl

	movl $boot_stack + BOOT_STACK_SIZE, %esp

	/*
	 * Identity-map the first 4 GiB with 2 MiB pages: PML4[0] -> PDPT,
	 * PDPT[0..3] -> four page directories of 512 entries each. kernel/arch/x86_64/mm.c
	 * later marks device ranges uncached and maps anything above 4 GiB.
	 */
	movl $boot_pdpt, %eax
	orl $(PTE_P | PTE_W), %eax
	movl %eax, boot_pml4

	movl $boot_pd, %eax
	orl $(PTE_P | PTE_W), %eax
	movl $boot_pdpt, %edi
	movl $4, %ecx
1:	movl %eax, (%edi)
	addl $4096, %eax
	addl $8, %edi
	loop 1b

	movl $boot_pd, %edi
	movl $(PTE_P | PTE_W | PTE_PS), %eax
	xorl %edx, %edx
	movl $2048, %ecx
2:	movl %eax, (%edi)
	movl %edx, 4(%edi)
	addl $0x200000, %eax
	adcl $0, %edx
	addl $8, %edi
	loop 2b

	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl $boot_pml4, %eax
	movl %eax, %cr3
	movl $0xc0000080, %ecx
	rdmsr
	orl $EFER_LME, %eax
	wrmsr
	movl %cr0, %eax
	orl $(CR0_PG | CR0_PE), %eax
	movl %eax, %cr0

	lgdt gdt_ptr
	ljmp $0x08, $start64

	.code64
start64:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movq $boot_stack + BOOT_STACK_SIZE, %rsp
	xorl %ebp, %ebp
	movl boot_mb_magic(%rip), %edi
	movl boot_mb_info(%rip), %esi
	call kmain
3:	cli
	hlt
	jmp 3b

/*
 * Application processors arrive here from the real-mode trampoline, in
 * long mode on the kernel's GDT, with the stack kernel/arch/x86_64/smp.c prepared.
 */
	.global ap_entry64
ap_entry64:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movq ap_boot_stack(%rip), %rsp
	xorl %ebp, %ebp
	call ap_main
4:	cli
	hlt
	jmp 4b

	.section .data
	.align 16
	.global gdt
gdt:
	.quad 0				/* 0x00 null */
	.quad 0x00af9a000000ffff	/* 0x08 64-bit code */
	.quad 0x00cf92000000ffff	/* 0x10 data */
	.quad 0				/* 0x18 unused */
	.fill (KERNEL_MAX_CPUS + 1) * 2, 8, 0 /* 0x20 on: TSS per CPU, then the BSP's */
gdt_end:
	.align 8
	.global gdt_ptr
gdt_ptr:
	.word gdt_end - gdt - 1
	.quad gdt

	.align 4
	.global boot_mb_magic, boot_mb_info
boot_mb_magic:	.long 0
boot_mb_info:	.long 0

	.section .bss
	.align 4096
	.global boot_pml4, boot_pdpt, boot_pd
boot_pml4:	.skip 4096
boot_pdpt:	.skip 4096
boot_pd:	.skip 4 * 4096
	.align 16
boot_stack:	.skip BOOT_STACK_SIZE

	.section .note.GNU-stack, "", @progbits
