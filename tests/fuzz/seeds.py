#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/fuzz/seeds.py -- writes the committed seed corpus, tests/fuzz/corpus/<target>/.

The seeds are small hand-spelled programs in each target's input format
(tests/fuzz/README.md): for fuzz_ops and fuzz_misuse one heap of every
algorithm with a short mix of operations, for fuzz_shared_open a clean, a
damaged, a dead-holder, a truncated and a raw segment, for fuzz_typed one
call group each. libFuzzer grows its own corpus from them (in the build
folder); rerun this script only when an input format changes.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ALGORITHMS = 7  # tlsf pool buddy halffit slab heapmem xvmalloc, in rtm_algorithms() order


def u16(v):
    return struct.pack("<H", v & 0xFFFF)


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(bytes(data))


# fuzz_model.c: algorithm, parameter selector (+ u16 for pool), extra region
# bytes (u16), shape (misalignment, tail); then operations: opcode, args.
OP_ALLOC, OP_ALIGNED, OP_REALLOC, OP_REALLOC_NULL, OP_REALLOC_ZERO = 0, 1, 2, 3, 4
OP_FREE, OP_USABLE, OP_RESET, OP_ADD_POOL, OP_WALK = 5, 7, 8, 9, 10
OP_MISUSE, OP_ADD_POOL_OVERLAP = 11, 14


def header(alg, extra, shape=3):
    data = [alg, 1]
    if alg == 1:  # pool: block size from a u16
        data += u16(47)
    return data + list(u16(extra)) + [shape]


CORRECT = (
    [OP_ALLOC, 0, 10, OP_ALLOC, 3] + list(u16(700)) + [OP_ALLOC, 5, 9]
    + [OP_ALIGNED, 6, 0, 40, OP_REALLOC_NULL, 0, 24]
    + [OP_REALLOC] + list(u16(1)) + [2, 3, OP_REALLOC] + list(u16(0)) + [0] + list(u16(4))
    + [OP_USABLE] + list(u16(2)) + [OP_WALK, OP_FREE] + list(u16(1))
    + [OP_ADD_POOL, 0x40] + list(u16(2000)) + [OP_ALLOC, 7, 8, OP_REALLOC_ZERO] + list(u16(0))
    + [OP_WALK, OP_RESET, OP_ALLOC, 4] + list(u16(3000)) + [OP_ALLOC, 9, 0]
)

MISUSE = (
    [OP_ALLOC, 0, 40, OP_ALLOC, 0, 12, OP_FREE] + list(u16(0))
    + [OP_MISUSE, 0, 0, 8]                      # free a foreign pointer (stack)
    + [OP_MISUSE, 1, 0, 0] + list(u16(300))     # free a pointer into the arena
    + [OP_MISUSE, 2, 0, 0] + list(u16(16))      # free an interior pointer
    + [OP_MISUSE, 3, 0]                         # free the block freed last (double free)
    + [OP_MISUSE, 7, 1]                         # realloc a stale block
    + [OP_MISUSE, 12, 2, 0]                     # realloc(p, 0) of a foreign pointer
    + [OP_MISUSE, 13, 0] + list(u16(40)) + list(u16(8))   # usable_size of an arena pointer
    + [OP_ADD_POOL_OVERLAP, 0, 0] + list(u16(64)) + list(u16(200))
    + [OP_RESET, OP_MISUSE, 3, 1, OP_ALLOC, 0, 30, OP_FREE, 0, 0, OP_MISUSE, 3, 0]
)

for alg in range(ALGORITHMS):
    write("fuzz_ops", "alg%d-small" % alg, header(alg, 600) + CORRECT)
    write("fuzz_ops", "alg%d-large" % alg, header(alg, 30000, 0x45) + CORRECT * 2)
    write("fuzz_misuse", "alg%d-misuse" % alg, header(alg, 4000) + MISUSE)
    write("fuzz_misuse", "alg%d-mixed" % alg, header(alg, 9000, 0x41) + CORRECT + MISUSE)

# fuzz_shared_open.c: mode (low 3 bits 7: raw object; 0x10 dead holder; 0x20
# resize, 0x40 grow), extra bytes (u16), populate ops, patches.
POPULATE = [6, 0] + list(u16(100)) + [9] + list(u16(300)) + [1] + list(u16(40)) + [2, 0, 0] + list(u16(8))
write("fuzz_shared_open", "clean", [0] + list(u16(2000)) + POPULATE + [0, 0])
write("fuzz_shared_open", "prefix-version",
      [0] + list(u16(500)) + POPULATE + [1, 0x80, 16, 0, 3, 9])
write("fuzz_shared_open", "intent-armed",
      [0x10] + list(u16(1000)) + POPULATE + [2, 0x82, 0, 0, 1, 0x84, 8, 0, 4, 0x10, 0, 1])
write("fuzz_shared_open", "dead-holder", [0x10] + list(u16(3000)) + POPULATE + [0, 0, 0])
write("fuzz_shared_open", "control-bytes",
      [0] + list(u16(800)) + POPULATE + [1, 3, 40, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9])
write("fuzz_shared_open", "truncated", [0x20] + list(u16(900)) + POPULATE + [0] + list(u16(100)))
write("fuzz_shared_open", "grown", [0x60] + list(u16(900)) + POPULATE + [0] + list(u16(64)))
write("fuzz_shared_open", "raw", [7] + list(u16(64)) + list(b"rtmemGRD") * 8)

# fuzz_typed.c: a group selector, then that group's arguments.
write("fuzz_typed", "pool", [0, 0, 48, 0, 0] + list(u16(100)))
write("fuzz_typed", "buddy-sizes", [1, 1, 12, 0] + list(u16(37)) + [5])
write("fuzz_typed", "buddy-orders", [2, 3] + list(u16(9000)) + [9, 4, 2, 5, 0x81, 3, 0, 0, 1, 7])
write("fuzz_typed", "slab", [3, 0, 1, 2] + list(u16(3000)) + [3, 1] + list(u16(100)) + [5, 0, 1, 1])
write("fuzz_typed", "halffit", [4, 1] + list(u16(5000)) + [0] + list(u16(100)) + [1, 7, 3])
write("fuzz_typed", "heapmem-tlsf", [5, 1, 9, 0] + list(u16(3000)))
write("fuzz_typed", "min-region", [6, 1, 1, 1] + list(u16(256)) + [6, 2, 3, 2, ord(":"), ord("9")])
write("fuzz_typed", "wrap", [7, 5, 1] + list(u16(77)) + [0, 3])

# fuzz_mt.c: algorithm (tlsf halffit tlsf_cached heapmem), shard count - 1,
# then per operation: thread, opcode, slot, size (u16), and for an aligned
# alloc the alignment's log2 - 3.
MT_ALLOC, MT_ALIGNED, MT_FREE, MT_REALLOC, MT_USABLE, MT_REFREE, MT_INTERIOR, MT_ATTACH = range(8)


def mt_op(thread, op, slot, size=0, align=None):
    data = [thread, op, slot] + list(u16(size))
    return data + ([align] if op == MT_ALIGNED else [])


MT_HANDOVER = (mt_op(0, MT_ALLOC, 1, 100) + mt_op(0, MT_ALLOC, 2, 900) + mt_op(1, MT_FREE, 1)
               + mt_op(3, MT_FREE, 2) + mt_op(1, MT_ALIGNED, 3, 300, 3) + mt_op(0, MT_REALLOC, 3, 2000)
               + mt_op(2, MT_REFREE, 1) + mt_op(0, MT_ALLOC, 4, 64) + mt_op(2, MT_INTERIOR, 4, 3)
               + mt_op(0, MT_ATTACH, 0) + mt_op(1, MT_ATTACH, 0) + mt_op(0, MT_ATTACH, 0)
               + mt_op(0, MT_FREE, 4) + mt_op(3, MT_USABLE, 3) + mt_op(2, MT_FREE, 3))
for alg in range(4):
    write("fuzz_mt", "alg%d-handover" % alg, [alg, 1] + MT_HANDOVER)
    write("fuzz_mt", "alg%d-one-shard" % alg, [alg, 0] + MT_HANDOVER * 2)
