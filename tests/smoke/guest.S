/* Tiny 64-bit test guests for `vmm run` on any KVM (tests/smoke/run.sh).
 * Entered at the bzImage 64-bit entry (protected-mode start + 0x200) in
 * long mode with the VMM's identity page tables.  GUEST_<NAME> selects
 * what it does: RESET, TRIPLE, PANIC, ECHO and CPU (the smoke tests);
 * IFPOLL, IFTRAP and IFTRAP_STI (bench/vmbench lockup); EXITCOST
 * (bench/vmbench exitcost).  tests/smoke/mkguest.sh builds them. */
	.code64
	.text
	.globl _start
_start:
	.fill 0x200, 1, 0xf4	/* entry is at +0x200 */
entry:
#if defined(GUEST_ECHO)
	/* The receive interrupt on before the greeting, as a driver that
	 * wants input has it (the VMM holds piped input until then): once
	 * the greeting is out, the guest waits for input, and
	 * tests/smoke/run.sh waits for the greeting, not a fixed time. */
	mov	$0x3f9, %dx		/* IER */
	mov	$1, %al			/* RDI */
	out	%al, %dx
#endif
	lea	hello(%rip), %rsi
	mov	$hello_end - hello, %ecx
	call	puts
#if defined(GUEST_RESET)
	jmp	reset
#elif defined(GUEST_TRIPLE)
	ud2			/* no IDT: #UD -> #DF -> triple fault */
#elif defined(GUEST_PANIC)
	mov	$0x80000800, %ebx	/* bus 0, device 1 */
1:	mov	%ebx, %eax
	call	cfg_read
	cmp	$0x00111b36, %eax	/* pvpanic-pci */
	je	2f
	add	$0x800, %ebx
	cmp	$0x80010000, %ebx
	jb	1b
	jmp	reset			/* not found: reset (status 0) */
2:	lea	0x10(%rbx), %eax	/* BAR 0 */
	call	cfg_read
	and	$0xfffffff0, %eax
	mov	%eax, %edi
	lea	0x4(%rbx), %eax		/* command: memory decoding on */
	mov	$0xcf8, %dx
	out	%eax, %dx
	mov	$0xcfc, %dx
	mov	$2, %eax
	out	%eax, %dx
	movb	(%rdi), %al		/* supported events */
	movb	$1, (%rdi)		/* PVPANIC_PANICKED */
	jmp	halt
#elif defined(GUEST_ECHO)
	/* echo input until 'q', then reset.  Polled (IF is clear, no IDT),
	 * with the receive interrupt enabled at entry. */
3:	mov	$0x3fd, %dx
	in	%dx, %al
	test	$1, %al
	jz	3b
	mov	$0x3f8, %dx
	in	%dx, %al
	cmp	$'q', %al
	je	reset
	out	%al, %dx
	jmp	3b
#elif defined(GUEST_CPU)
	/* What the VMM set up for this vCPU, as the guest reads it: the
	 * TSC-deadline bit of CPUID leaf 1, MTRRdefType, MISC_ENABLE. */
	lea	s_deadline(%rip), %rsi
	mov	$s_mtrr - s_deadline, %ecx
	call	puts
	mov	$1, %eax
	cpuid
	mov	%ecx, %eax
	shr	$24, %eax
	and	$1, %eax
	add	$'0', %al
	mov	$0x3f8, %dx
	out	%al, %dx
	lea	s_mtrr(%rip), %rsi
	mov	$s_misc - s_mtrr, %ecx
	call	puts
	mov	$0x2ff, %ecx
	call	putmsr
	lea	s_misc(%rip), %rsi
	mov	$s_end - s_misc, %ecx
	call	puts
	mov	$0x1a0, %ecx
	call	putmsr
	mov	$'\n', %al
	mov	$0x3f8, %dx
	out	%al, %dx
	jmp	reset
#elif defined(GUEST_EXITCOST)
	/* What one exit costs, by kind: 4096 of each, three rounds, each
	 * loop's TSC ticks printed in hex after its letter:
	 *   C cpuid, handled in KVM (which decodes it to skip it when the
	 *     CPU has no nrip-save)
	 *   I in from the PIC's IMR: port I/O handled in KVM, nothing to
	 *     decode (the exit names port and next rip)
	 *   L read of the LAPIC's version register: MMIO that KVM handles
	 *     by emulating the instruction, as it does a virtio-pci kick
	 *     through an ioeventfd on a memory BAR
	 *   P out to the POST port: port I/O, out to the VMM and back
	 *   M write to a PCI hole: MMIO, emulated, out to the VMM and back
	 *   T a read of each of 512 pages, no exit
	 *   W the same 512 reads, then I's port read: W - T is what an
	 *     exit costs a guest with that working set to touch again */
	mov	$3, %r12d
5:	mov	$'C', %al
	call	loop_start
1:	mov	$0, %eax
	cpuid
	dec	%r8d
	jnz	1b
	call	tsc_since
	mov	$'I', %al
	call	loop_start
1:	in	$0x21, %al
	dec	%r8d
	jnz	1b
	call	tsc_since
	mov	$'L', %al
	call	loop_start
	mov	$0xfee00030, %edi
1:	mov	(%rdi), %eax
	dec	%r8d
	jnz	1b
	call	tsc_since
	mov	$'P', %al
	call	loop_start
	mov	$0x80, %dx
1:	out	%ax, %dx
	dec	%r8d
	jnz	1b
	call	tsc_since
	mov	$'M', %al
	call	loop_start
	mov	$0xd0000000, %edi
1:	movw	%ax, (%rdi)
	dec	%r8d
	jnz	1b
	call	tsc_since
	mov	$'T', %al
	call	loop_start
1:	call	touch
	dec	%r8d
	jnz	1b
	call	tsc_since
	mov	$'W', %al
	call	loop_start
1:	call	touch
	in	$0x21, %al
	dec	%r8d
	jnz	1b
	call	tsc_since
	mov	$'\n', %al
	mov	$0x3f8, %dx
	out	%al, %dx
	dec	%r12d
	jnz	5b
	jmp	reset

/* One byte of each of 512 pages from 4 MiB (free RAM under the 32M
 * guest: the image sits at 16 MiB, the boot data below 1 MiB). */
touch:	mov	$0x400000, %esi
	mov	$512, %ecx
1:	mov	(%rsi), %al
	add	$4096, %rsi
	dec	%ecx
	jnz	1b
	ret

/* al: the loop's letter -> printed; r9: the TSC now; r8d: 4096 */
loop_start:
	mov	$0x3f8, %dx
	out	%al, %dx
	mov	$' ', %al
	out	%al, %dx
	call	tsc_now
	mov	%rdx, %r9
	mov	$4096, %r8d
	ret

/* rdx: the 64-bit TSC (rax clobbered) */
tsc_now:
	rdtsc
	shl	$32, %rdx
	or	%rax, %rdx
	ret

/* r9: an earlier TSC -> prints the ticks since, 16 hex digits, a space */
tsc_since:
	call	tsc_now
	sub	%r9, %rdx
	mov	%rdx, %rbx
	call	puthex
	mov	$' ', %al
	mov	$0x3f8, %dx
	out	%al, %dx
	ret
#elif defined(GUEST_IFTRAP) || defined(GUEST_IFTRAP_STI) || defined(GUEST_IFPOLL)
	/* Does an interrupt arrive while IF is clear?  An IDT whose every
	 * gate reports (trap, below); the LAPIC timer periodic at vector
	 * 0x40, about every 200 us; then a loop of UART status reads (an
	 * exit each) with IF clear: the timer's interrupt stays pending, so
	 * KVM asks for an interrupt window on every entry, and no gate may
	 * ever run.  IFTRAP_STI, the control, sets IF: its gates run, and
	 * it resets after the fifth. */
	lea	idt(%rip), %rdi
	lea	stubs(%rip), %rax
	mov	%cs, %ebx
	mov	$256, %ecx
1:	mov	%rax, %rdx
	mov	%dx, (%rdi)		/* offset 15:0 */
	mov	%bx, 2(%rdi)		/* selector */
	movw	$0x8e00, 4(%rdi)	/* present, DPL 0, interrupt gate */
	shr	$16, %rdx
	mov	%dx, 6(%rdi)		/* offset 31:16 */
	shr	$16, %rdx
	mov	%edx, 8(%rdi)		/* offset 63:32 */
	movl	$0, 12(%rdi)
	add	$16, %rdi
	add	$16, %rax
	dec	%ecx
	jnz	1b
	lea	idt(%rip), %rax
	mov	%rax, idtr+2(%rip)
	lidt	idtr(%rip)
#ifndef GUEST_IFPOLL	/* IFPOLL: the same loop with nothing pending */
	mov	$0xfee00000, %edi
	movl	$0x1ff, 0xf0(%rdi)	/* SVR: enabled, spurious vector 0xff */
	movl	$0xb, 0x3e0(%rdi)	/* timer divide by 1 */
	movl	$0x20040, 0x320(%rdi)	/* LVT timer: periodic, vector 0x40 */
	movl	$200000, 0x380(%rdi)	/* initial count */
#endif
#ifdef GUEST_IFTRAP_STI
	sti
#endif
3:	mov	$0x3fd, %dx
	in	%dx, %al
	jmp	3b

/* Every gate: "TRAP" and the vector, then the six quadwords above it
 * (rip cs rflags rsp ss of the frame, or with an error code first) and
 * CR2, in hex; an exception (vector < 32) then resets, an interrupt gets its EOI
 * and returns. */
trap:	push	%rax
	push	%rbx
	push	%rcx
	push	%rdx
	push	%rsi
	lea	s_trap(%rip), %rsi
	mov	$s_trap_end - s_trap, %ecx
	call	puts
	mov	40(%rsp), %rbx
	call	puthex
	xor	%esi, %esi
4:	mov	$' ', %al
	mov	$0x3f8, %dx
	out	%al, %dx
	mov	48(%rsp,%rsi,8), %rbx
	push	%rsi
	call	puthex
	pop	%rsi
	inc	%esi
	cmp	$6, %esi
	jb	4b
	mov	$' ', %al
	out	%al, %dx
	mov	%cr2, %rbx
	call	puthex
	mov	$'\n', %al
	mov	$0x3f8, %dx
	out	%al, %dx
	cmpq	$32, 40(%rsp)
	jb	reset
	mov	$0xfee000b0, %eax
	movl	$0, (%rax)		/* EOI */
#ifdef GUEST_IFTRAP_STI
	incq	traps(%rip)
	cmpq	$5, traps(%rip)
	jae	reset
#endif
	pop	%rsi
	pop	%rdx
	pop	%rcx
	pop	%rbx
	pop	%rax
	add	$8, %rsp
	iretq

	.balign	16
stubs:
	.set	vec, 0
	.rept	256
	.balign	16
	pushq	$vec
	jmp	trap
	.set	vec, vec + 1
	.endr
	.balign	16
idtr:	.word	256 * 16 - 1
	.quad	0
traps:	.quad	0
s_trap:	.ascii	"TRAP "
s_trap_end:
	.balign	16
idt:	.fill	256 * 16, 1, 0
#endif
halt:	hlt
	jmp	halt

reset:	mov	$0xfe, %al
	out	%al, $0x64
	jmp	halt

/* rsi: bytes, ecx: count */
puts:	mov	$0x3f8, %dx
1:	lodsb
	out	%al, %dx
	dec	%ecx
	jnz	1b
	ret

/* ecx: MSR -> its value in 16 hex digits */
putmsr:	rdmsr
	shl	$32, %rdx
	mov	%eax, %eax
	or	%rdx, %rax
	mov	%rax, %rbx
/* rbx -> 16 hex digits */
puthex:	mov	$16, %ecx
	mov	$0x3f8, %dx
1:	rol	$4, %rbx
	mov	%bl, %al
	and	$0xf, %al
	add	$'0', %al
	cmp	$'9', %al
	jbe	2f
	add	$('a' - '9' - 1), %al
2:	out	%al, %dx
	dec	%ecx
	jnz	1b
	ret

/* eax: config address -> eax: dword */
cfg_read:
	mov	$0xcf8, %dx
	out	%eax, %dx
	mov	$0xcfc, %dx
	in	%dx, %eax
	ret

hello:	.ascii	"smoke guest up\n"
hello_end:
s_deadline: .ascii "cpu: tsc-deadline="
s_mtrr:	.ascii	" mtrr-def-type="
s_misc:	.ascii	" misc-enable="
s_end:
	.fill	0x1000, 1, 0
