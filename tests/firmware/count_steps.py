# SPDX-License-Identifier: MIT
# tests/firmware/count_steps.py -- gdb (gdb-multiarch) script of
# scripts/thumb-count.sh: stops at the first instruction of each function
# named in RTM_COUNT_FUNCTIONS (space-separated) and single-steps it through
# qemu's gdb stub until the program counter reaches the caller's return
# address, printing "COUNT name #k: n" for the k-th call: n instructions
# executed, the return instruction included, callees and tail calls too.
import os

import gdb

names = os.environ["RTM_COUNT_FUNCTIONS"].split()
entry = {}
for name in names:
    # Thumb addresses carry bit 0; the stub reports the pc without it.
    address = int(gdb.parse_and_eval("(unsigned int)&" + name)) & ~1
    entry[address] = name
    gdb.Breakpoint("*0x%x" % address)

calls = {}
while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break  # the program exited (semihosting) and the stub closed
    pc = int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFF
    if pc not in entry:
        break
    name = entry[pc]
    back = int(gdb.parse_and_eval("$lr")) & 0xFFFFFFFE
    steps = 0
    while True:
        gdb.execute("stepi", to_string=True)
        steps += 1
        if int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFF == back:
            break
    calls[name] = calls.get(name, 0) + 1
    print("COUNT %s #%d: %d" % (name, calls[name], steps), flush=True)
