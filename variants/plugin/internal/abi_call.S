// vdsolab_abi_call(fn, a0, a1, a2, a3): fn(a0, a1, a2, a3) with the x86-64
// ABI's promises checked on its return (abi_call.h). The state to put back
// is kept in a thread-local record (vdsolab_abi_frame), not in a register
// or on the stack, which the function under test may have changed.
//
//   0 rbx  8 rbp  16 r12  24 r13  32 r14  40 r15  48 return address
//   56 stack pointer after the thunk's return  64 changed bits

#if defined(__x86_64__)
        .text
        .globl  vdsolab_abi_call
        .type   vdsolab_abi_call, @function
        .p2align 4
vdsolab_abi_call:
        .cfi_startproc
        movq    vdsolab_abi_frame@gottpoff(%rip), %rax
        addq    %fs:0, %rax
        movq    %rbx, 0(%rax)
        movq    %rbp, 8(%rax)
        movq    %r12, 16(%rax)
        movq    %r13, 24(%rax)
        movq    %r14, 32(%rax)
        movq    %r15, 40(%rax)
        movq    (%rsp), %r10
        movq    %r10, 48(%rax)
        leaq    8(%rsp), %r10
        movq    %r10, 56(%rax)
        // 264 bytes of our own between the caller's frame and the call
        // (entry rsp is 8 mod 16: the call is made 16-byte aligned); the
        // 64 above the callee's return address hold a pattern.
        subq    $264, %rsp
        .cfi_adjust_cfa_offset 264
        movabsq $0xa5c3a5c3a5c3a5c3, %r10
        movq    %r10, 0(%rsp)
        movq    %r10, 8(%rsp)
        movq    %r10, 16(%rsp)
        movq    %r10, 24(%rsp)
        movq    %r10, 32(%rsp)
        movq    %r10, 40(%rsp)
        movq    %r10, 48(%rsp)
        movq    %r10, 56(%rsp)
        movq    %rdi, %r11
        movq    %rsi, %rdi
        movq    %rdx, %rsi
        movq    %rcx, %rdx
        movq    %r8, %rcx
        call    *%r11
        // rax (and rdx) hold the result; the rest is ours to use.
        movq    vdsolab_abi_frame@gottpoff(%rip), %rsi
        addq    %fs:0, %rsi
        xorl    %ecx, %ecx
        cmpq    0(%rsi), %rbx
        je      1f
        orl     $1, %ecx
1:      cmpq    8(%rsi), %rbp
        je      2f
        orl     $2, %ecx
2:      cmpq    16(%rsi), %r12
        je      3f
        orl     $4, %ecx
3:      cmpq    24(%rsi), %r13
        je      4f
        orl     $8, %ecx
4:      cmpq    32(%rsi), %r14
        je      5f
        orl     $16, %ecx
5:      cmpq    40(%rsi), %r15
        je      6f
        orl     $32, %ecx
        // The stack pointer: 264 + 8 below where the thunk returns to.
6:      movq    56(%rsi), %rdi
        subq    $272, %rdi
        cmpq    %rdi, %rsp
        je      7f
        orl     $64, %ecx
        // The pattern, where it was put (not where rsp is now).
7:      movabsq $0xa5c3a5c3a5c3a5c3, %r10
        cmpq    %r10, 0(%rdi)
        jne     8f
        cmpq    %r10, 8(%rdi)
        jne     8f
        cmpq    %r10, 16(%rdi)
        jne     8f
        cmpq    %r10, 24(%rdi)
        jne     8f
        cmpq    %r10, 32(%rdi)
        jne     8f
        cmpq    %r10, 40(%rdi)
        jne     8f
        cmpq    %r10, 48(%rdi)
        jne     8f
        cmpq    %r10, 56(%rdi)
        je      9f
8:      orl     $128, %ecx
9:      movq    %rcx, 64(%rsi)
        movq    0(%rsi), %rbx
        movq    8(%rsi), %rbp
        movq    16(%rsi), %r12
        movq    24(%rsi), %r13
        movq    32(%rsi), %r14
        movq    40(%rsi), %r15
        // Back through the return address's own slot and `ret`, not an
        // indirect jmp: the `ret` pops the return-stack-buffer entry the
        // caller's `call` pushed. A jmp left it there, and every return
        // of the frames above then predicted the one below its own (a
        // mispredicted return per frame, after every plugin call). The
        // slot is the thunk's; the function under test may have written
        // it, so the saved address is pushed there again (one push: the
        // unwind information stays right at every instruction).
        movq    48(%rsi), %r10
        movq    56(%rsi), %rsp
        .cfi_def_cfa_offset 0
        .cfi_register %rip, %r10
        pushq   %r10
        .cfi_def_cfa_offset 8
        .cfi_offset %rip, -8
        ret
        .cfi_endproc
        .size   vdsolab_abi_call, .-vdsolab_abi_call
#endif

        .section .note.GNU-stack,"",@progbits
