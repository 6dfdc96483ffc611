# SPDX-License-Identifier: MIT
# tests_random_grow.cmake -- the tests of `rtmem bench random --grow`
# (random_grow.c), included from tools/lab/CMakeLists.txt (lab_expect() is
# defined there).

# Smoke: one short round of the three ways (whole, chunks, reserve) runs to
# the end, every way with a clean run (else exit 1), and its JSON passes the schema and the
# sanity rules (a row for each way, percentiles in order).
set(random_grow_json ${CMAKE_CURRENT_BINARY_DIR}/random-grow-quick.json)
lab_expect(random.grow.quick 0 bench random --grow --quick --runs 1 --iterations 20000 --no-rt
           --json ${random_grow_json})
set_tests_properties(lab.random.grow.quick PROPERTIES TIMEOUT 120 FIXTURES_SETUP random_grow_json)
find_program(RTMEM_PYTHON3 NAMES python3)
if(RTMEM_PYTHON3)
  add_test(NAME lab.random.grow.schema
           COMMAND ${RTMEM_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/validate_json.py --sane
                   ${PROJECT_SOURCE_DIR}/docs/schema/bench_random.schema.json ${random_grow_json})
  set_tests_properties(lab.random.grow.schema PROPERTIES FIXTURES_REQUIRED random_grow_json)
endif()

# Misuse: message and usage on stderr, exit 2.
lab_expect(misuse.random.grow-with-sweep 2 bench random --grow --sweep)
lab_expect(misuse.random.grow-with-allocators 2 bench random --grow --allocators tlsf)
lab_expect(misuse.random.grow-chunk-without-grow 2 bench random --grow-chunk 4096)
lab_expect(misuse.random.grow-chunk-zero 2 bench random --grow --grow-chunk 0)
lab_expect(misuse.random.grow-chunk-above-region 2 bench random --grow --tlsf-region 1m
           --grow-chunk 2m)
