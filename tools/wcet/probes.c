// SPDX-License-Identifier: MIT
/*
 * tools/wcet/probes.c -- the child's side of the tracer protocol (the
 * marker) and the self-test functions that prove the counter exact.
 *
 * Both are written in assembly on purpose:
 *  - The marker must survive any optimisation: a C function with an empty
 *    body may be cloned, const-propagated or have its calls deleted. An
 *    assembly function is opaque to the compiler, so every call passes its
 *    four arguments in rdi, rsi, edx, rcx as the SysV ABI says, which is
 *    where the tracer reads them.
 *  - A self-test is only worth something if its instruction count is known
 *    independently of the compiler: here it is read off the listing below.
 *    Together the four functions exercise what the real measurements meet:
 *    straight code, a loop with nested calls (call/ret pairs inside the
 *    measured window), a rep-prefixed string instruction (which single-step
 *    traps once per iteration but is one instruction), a stack frame moving
 *    rsp down and back, and a tail call by jmp (what rtm_alloc does to reach
 *    rtm_tlsf_alloc at -O2).
 *
 * x86-64 SysV only; tools/wcet/CMakeLists.txt builds the tool nowhere else.
 */
#include "wcet.h"

/* clang-format off */
__asm__(
    ".pushsection .text\n"

    /* wcet_marker(row, scenario, variant, size): int3 stops the child; the
     * tracer reads the arguments and plants the breakpoint, then the child
     * returns and makes the measured call. */
    ".globl wcet_marker\n"
    ".type wcet_marker, @function\n"
    "wcet_marker:\n"
    "    int3\n"
    "    ret\n"
    ".size wcet_marker, .-wcet_marker\n"

    /* wcet_selftest_straight(a, b) = a + 1 + b: 5 instructions. */
    ".globl wcet_selftest_straight\n"
    ".type wcet_selftest_straight, @function\n"
    "wcet_selftest_straight:\n"
    ".Lstraight:\n"
    "    lea 1(%rdi), %rax\n"          /* 1 */
    "    add %rsi, %rax\n"             /* 2 */
    "    xor %ecx, %ecx\n"             /* 3 */
    "    nop\n"                        /* 4 */
    "    ret\n"                        /* 5 */
    ".size wcet_selftest_straight, .-wcet_selftest_straight\n"

    /* wcet_selftest_loop(n) = n: 3 + 5 per turn + 1 = 4 + 5n instructions. */
    ".globl wcet_selftest_loop\n"
    ".type wcet_selftest_loop, @function\n"
    "wcet_selftest_loop:\n"
    "    xor %eax, %eax\n"             /* 1 */
    "    test %rdi, %rdi\n"            /* 2 */
    "    jz 2f\n"                      /* 3 */
    "1:  call .Lleaf\n"                /* per turn: call,            */
    "    dec %rdi\n"                   /*   leaf's add and ret,      */
    "    jnz 1b\n"                     /*   dec, jnz = 5             */
    "2:  ret\n"                        /* last */
    ".size wcet_selftest_loop, .-wcet_selftest_loop\n"
    ".type wcet_selftest_leaf, @function\n"
    "wcet_selftest_leaf:\n"
    ".Lleaf:\n"
    "    add $1, %rax\n"
    "    ret\n"
    ".size wcet_selftest_leaf, .-wcet_selftest_leaf\n"

    /* wcet_selftest_rep(n): clears n mod 256 bytes of a stack buffer with one
     * rep stosb; returns 0. 8 instructions whatever n. */
    ".globl wcet_selftest_rep\n"
    ".type wcet_selftest_rep, @function\n"
    "wcet_selftest_rep:\n"
    "    sub $256, %rsp\n"             /* 1 */
    "    movzbl %dil, %ecx\n"          /* 2 */
    "    mov %rsp, %rdi\n"             /* 3 */
    "    xor %eax, %eax\n"             /* 4 */
    "    rep stosb\n"                  /* 5: n traps, one instruction */
    "    add $256, %rsp\n"             /* 6 */
    "    mov %rcx, %rax\n"             /* 7 */
    "    ret\n"                        /* 8 */
    ".size wcet_selftest_rep, .-wcet_selftest_rep\n"

    /* wcet_selftest_tail(a) = 2a + 1 via a tail call: 2 + 5 instructions. */
    ".globl wcet_selftest_tail\n"
    ".type wcet_selftest_tail, @function\n"
    "wcet_selftest_tail:\n"
    "    mov %rdi, %rsi\n"             /* 1 */
    "    jmp .Lstraight\n"             /* 2, then the 5 of straight */
    ".size wcet_selftest_tail, .-wcet_selftest_tail\n"

    ".popsection\n");
/* clang-format on */

uint32_t wcet_selftest_expected(enum wcet_row row, uint64_t n)
{
    switch (row) {
    case ROW_SELF_STRAIGHT:
        return 5;
    case ROW_SELF_LOOP:
        return (uint32_t)(4u + 5u * n);
    case ROW_SELF_REP:
        return 8;
    case ROW_SELF_TAIL:
        return 7;
    default:
        return 0;
    }
}
