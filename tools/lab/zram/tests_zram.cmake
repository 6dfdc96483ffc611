# SPDX-License-Identifier: MIT
# tests_zram.cmake -- the ctest entries of `rtmem bench zram` (included by
# tools/lab/CMakeLists.txt after tests_report.cmake, so lab_expect() and
# lab_json() are defined).

# Smoke: the --quick profile (16 windows and the zram case, 2000 slots,
# tlsf, xvmalloc, zsmalloc, glibc, 2 rounds) runs to the end and exits 0.
lab_expect(zram.quick 0 bench zram --quick)
set_tests_properties(lab.zram.quick PROPERTIES TIMEOUT 120)
lab_expect(help.zram 0 bench zram --help)

# Its JSON, against docs/schema/bench_zram.schema.json and the sanity rules
# (lab.json.bench_zram.run / .schema / .sane).
lab_json(bench_zram bench_zram bench zram)

# What the study is about must show: xvmalloc refuses every request above its
# page (the window at 4096 is marked in every round) and zsmalloc stores the
# half-page window [2048, 2112) with less waste than xvmalloc (which fits one
# such block per 4 KiB page). The regular expressions read the text tables:
# the time table's 4096-8191 row has R1/1 for xvmalloc, the efficiency
# table's 2048-3071 row has zsmalloc above 70 % and xvmalloc at 40-59 %.
lab_expect(zram.study 0 bench zram --allocators xvmalloc,zsmalloc --sweep-step 2048
           --sweep-max 4096 --slots 2000 --iterations 500 --runs 1 --no-rt)
set_tests_properties(lab.zram.study PROPERTIES
  TIMEOUT 60
  PASS_REGULAR_EXPRESSION "4096-8191 +R1/1 +R1/1.*\n2048-3071 +[45][0-9]\\.[0-9]% +[789][0-9]\\.[0-9]%"
  FAIL_REGULAR_EXPRESSION "expected 0")

# Misuse: message and usage on stderr, exit 2.
lab_expect(misuse.zram.unknown-option 2 bench zram --bogus)
lab_expect(misuse.zram.unknown-allocator 2 bench zram --allocators tlsf,nosuch)
lab_expect(misuse.zram.allocator-twice 2 bench zram --allocators tlsf,tlsf)
lab_expect(misuse.zram.empty-allocator-name 2 bench zram --allocators ,)
lab_expect(misuse.zram.zero-slots 2 bench zram --slots 0)
lab_expect(misuse.zram.zero-runs 2 bench zram --runs 0)
lab_expect(misuse.zram.too-many-runs 2 bench zram --runs 65)
lab_expect(misuse.zram.zero-iterations 2 bench zram --iterations 0)
lab_expect(misuse.zram.step-zero 2 bench zram --sweep-step 0)
lab_expect(misuse.zram.step-off-granule 2 bench zram --sweep-step 100)
lab_expect(misuse.zram.too-many-windows 2 bench zram --sweep-step 8 --sweep-max 1m)
lab_expect(misuse.zram.bad-clock 2 bench zram --clock sundial)
lab_expect(misuse.zram.cpu-out-of-range 2 bench zram --cpu 100000)
lab_expect(misuse.zram.negative 2 bench zram --slots -3)
lab_expect(misuse.zram.missing-value 2 bench zram --iterations)
lab_expect(misuse.zram.flag-with-value 2 bench zram --quick=1)

# Unit test of the pure parts (the zram case's distribution, efficiency, the
# page set, the VmRSS reader, the summary bands).
lab_unit(zram.plan zram_plan_test zram/tests/zram_plan_test.c zram/zram_plan.c LIBS m)
