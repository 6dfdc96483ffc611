# SPDX-License-Identifier: MIT
# tests/firmware/count_steps.py -- gdb (gdb-multiarch) script of
# scripts/thumb-count.sh: stops at the first instruction of each function
# named in RTM_COUNT_FUNCTIONS (space-separated) and single-steps it through
# qemu's gdb stub until the program counter reaches the caller's return
# address, printing "COUNT name #k: n" for the k-th call: n instructions
# executed, the return instruction included, callees and tail calls too.
# The image's count_phase() labels the calls that follow, or turns the
# counting off ("off") while a large state is built.
import os

import gdb

def address_of(name):
    # Thumb addresses carry bit 0; the stub reports the pc without it.
    return int(gdb.parse_and_eval("(unsigned int)&" + name)) & ~1


names = os.environ["RTM_COUNT_FUNCTIONS"].split()
entry = {}
counted = []
for name in names:
    address = address_of(name)
    entry[address] = name
    counted.append(gdb.Breakpoint("*0x%x" % address))

# count_phase(label) in the image: the calls after it are counted under that
# label ("COUNT label: name #k: n"), or not at all for an empty label, so a
# state built by many calls (a random heap's fill) is not stepped through.
phase_at = address_of("count_phase")
gdb.Breakpoint("*0x%x" % phase_at)
phase = ""

calls = {}
while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break  # the program exited (semihosting) and the stub closed
    pc = int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFF
    if pc == phase_at:
        phase = gdb.parse_and_eval("(const char *)$r0").string()
        print("PHASE %s" % phase, flush=True)
        for b in counted:
            b.enabled = phase != "off"
        continue
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
    key = (phase, name)
    calls[key] = calls.get(key, 0) + 1
    label = phase + ": " if phase else ""
    print("COUNT %s%s #%d: %d" % (label, name, calls[key], steps), flush=True)
