/* step_trampoline.S - what a call of `opprof record --step FUNCTION` jumps to:
 * opprof__step_enter() first (a new step), then FUNCTION itself, with every
 * argument register as the caller left it and the stack untouched (arguments
 * passed in memory, the return address: FUNCTION returns to its caller).
 * x86-64 System V: rdi, rsi, rdx, rcx, r8, r9, rax (the vector registers a
 * variadic call uses), r10 (a static chain) and xmm0-xmm7 are kept. */
    .text
    .globl opprof__step_trampoline
    .hidden opprof__step_trampoline
    .type opprof__step_trampoline, @function
opprof__step_trampoline:
    .cfi_startproc
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    subq $192, %rsp                 /* 64 bytes of registers, 128 of xmm0-7; 16-byte aligned */
    movq %rdi, 0(%rsp)
    movq %rsi, 8(%rsp)
    movq %rdx, 16(%rsp)
    movq %rcx, 24(%rsp)
    movq %r8, 32(%rsp)
    movq %r9, 40(%rsp)
    movq %rax, 48(%rsp)
    movq %r10, 56(%rsp)
    movdqu %xmm0, 64(%rsp)
    movdqu %xmm1, 80(%rsp)
    movdqu %xmm2, 96(%rsp)
    movdqu %xmm3, 112(%rsp)
    movdqu %xmm4, 128(%rsp)
    movdqu %xmm5, 144(%rsp)
    movdqu %xmm6, 160(%rsp)
    movdqu %xmm7, 176(%rsp)
    call opprof__step_enter
    movq 0(%rsp), %rdi
    movq 8(%rsp), %rsi
    movq 16(%rsp), %rdx
    movq 24(%rsp), %rcx
    movq 32(%rsp), %r8
    movq 40(%rsp), %r9
    movq 48(%rsp), %rax
    movq 56(%rsp), %r10
    movdqu 64(%rsp), %xmm0
    movdqu 80(%rsp), %xmm1
    movdqu 96(%rsp), %xmm2
    movdqu 112(%rsp), %xmm3
    movdqu 128(%rsp), %xmm4
    movdqu 144(%rsp), %xmm5
    movdqu 160(%rsp), %xmm6
    movdqu 176(%rsp), %xmm7
    leave
    .cfi_def_cfa %rsp, 8
    jmp *opprof__step_target(%rip)
    .cfi_endproc
    .size opprof__step_trampoline, .-opprof__step_trampoline
    .section .note.GNU-stack, "", @progbits
