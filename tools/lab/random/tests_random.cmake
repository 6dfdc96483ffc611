# SPDX-License-Identifier: MIT
# tests_random.cmake -- the tests of `rtmem bench random` that are not in
# tools/lab/CMakeLists.txt (included from there: lab_expect() is defined).
# The single run's smoke and misuse tests stay there; the sweep's are here.

# Smoke: the short sweep profile (16 windows, 2000 timed replacements each,
# tlsf and glibc, 2 rounds) runs to the end and exits 0.
lab_expect(random.sweep.quick 0 bench random --sweep --quick)
set_tests_properties(lab.random.sweep.quick PROPERTIES TIMEOUT 120)

# The TLSF/xvmalloc/zsmalloc study's trap: an rtm heap too small for the larger windows must show
# its refusals (counted, the window marked) and still exit 0, never print a
# fast time for them. The script prints the report (exit 0 expected), so the
# regular expressions see it; FAIL catches the script's wrong-status text.
lab_expect(random.sweep.refusals 0 bench random --sweep --sweep-step 2048 --sweep-max 4096
           --allocators tlsf --tlsf-region 4m --sweep-iterations 500 --runs 1 --no-rt)
set_tests_properties(lab.random.sweep.refusals PROPERTIES
  TIMEOUT 60
  PASS_REGULAR_EXPRESSION "tlsf: allocations refused in 2 windows: x=2048: [0-9]+ in 1 round; x=4096"
  FAIL_REGULAR_EXPRESSION "expected 0")

# Misuse of the sweep's options: the message and the --help pointer on
# stderr, exit 2.
lab_expect(misuse.random.sweep-step-zero 2 bench random --sweep --sweep-step 0)
lab_expect(misuse.random.sweep-step-off-granule 2 bench random --sweep --sweep-step 100)
lab_expect(misuse.random.sweep-step-without-sweep 2 bench random --sweep-step 64)
lab_expect(misuse.random.sweep-max-without-sweep 2 bench random --sweep-max 1024)
lab_expect(misuse.random.sweep-iterations-without-sweep 2 bench random --sweep-iterations 10)
lab_expect(misuse.random.sweep-iterations-zero 2 bench random --sweep --sweep-iterations 0)
lab_expect(misuse.random.sweep-with-min 2 bench random --sweep --min 16)
lab_expect(misuse.random.sweep-with-max 2 bench random --sweep --max 4096)
lab_expect(misuse.random.sweep-with-iterations 2 bench random --sweep --iterations 1000)
lab_expect(misuse.random.sweep-too-many-windows 2 bench random --sweep --sweep-step 8
           --sweep-max 1m)
lab_expect(misuse.random.sweep-max-too-large 2 bench random --sweep --sweep-max 4g)
lab_expect(misuse.random.sweep-flag-with-value 2 bench random --sweep=1)
lab_expect(misuse.random.sweep-unknown-allocator 2 bench random --sweep --allocators tlsf,nosuch)
lab_expect(misuse.random.cpu-out-of-range 2 bench random --cpu 100000)
# A CPU below CPU_SETSIZE that this process may not use: it used to run.
lab_expect(misuse.random.cpu-not-allowed 2 SAYS "--cpu 999 is not a CPU" bench random --cpu 999)

# Unit test of the sweep's pure functions (windows, seeds, option rules,
# table rows, per-window and per-curve statistics).
lab_unit(random.sweep.plan random_sweep_plan_test random/tests/random_sweep_plan_test.c
         random/random_sweep_plan.c common/summary.c LIBS m)
