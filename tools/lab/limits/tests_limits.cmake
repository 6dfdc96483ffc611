# SPDX-License-Identifier: MIT
# `rtmem limits` (limits*.c): smoke runs, misuse, and the unit test of the
# largest-block probe against fake allocators (tests/limits_probe_test.c).

# --quick runs to the end (exit 0) and writes its JSON; a second test reads
# that JSON back (string(JSON) fails on malformed text) and checks the keys
# every command's report carries.
set(limits_json ${CMAKE_CURRENT_BINARY_DIR}/limits-quick.json)
lab_expect(limits.quick 0 limits --quick --json ${limits_json})
set_tests_properties(lab.limits.quick PROPERTIES TIMEOUT 300 FIXTURES_SETUP limits_json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/limits_json_check.cmake [=[
file(READ "${JSON}" text)
string(JSON tool GET "${text}" tool)
string(JSON command GET "${text}" command)
string(JSON version GET "${text}" schema_version)
string(JSON cpu GET "${text}" machine cpu)
string(JSON nalloc LENGTH "${text}" allocators)
string(JSON first GET "${text}" allocators 0 name)
string(JSON status GET "${text}" allocators 0 status)
string(JSON ntiming LENGTH "${text}" allocators 0 timing)
string(JSON exact GET "${text}" allocators 0 largest exact_bytes)
if(NOT tool STREQUAL "rtmem" OR NOT command STREQUAL "limits" OR NOT version EQUAL 1
   OR nalloc LESS 1 OR ntiming LESS 1)
  message(FATAL_ERROR "limits JSON: tool=${tool} command=${command} schema_version=${version} "
                      "allocators=${nalloc} timing=${ntiming}")
endif()
if(NOT status STREQUAL "ok" OR NOT exact GREATER 0)
  message(FATAL_ERROR "limits JSON: first allocator ${first} status ${status}, exact ${exact}")
endif()
message(STATUS "limits JSON ok: ${nalloc} allocators, ${first} largest ${exact} bytes")
]=])
add_test(NAME lab.limits.json
         COMMAND ${CMAKE_COMMAND} -DJSON=${limits_json}
                 -P ${CMAKE_CURRENT_BINARY_DIR}/limits_json_check.cmake)
set_tests_properties(lab.limits.json PROPERTIES FIXTURES_REQUIRED limits_json)
lab_expect(help.limits 0 limits --help)

lab_expect(misuse.limits.bad-size-list 2 limits --sizes 5,,64)
lab_expect(misuse.limits.bad-size 2 limits --sizes 5,12q)
lab_expect(misuse.limits.zero-size 2 limits --sizes 0)
lab_expect(misuse.limits.size-above-region 2 limits --region 64k --sizes 1m)
lab_expect(misuse.limits.region-zero 2 limits --region 0)
lab_expect(misuse.limits.region-below-heap 2 limits --region 4k --allocators buddy)
lab_expect(misuse.limits.cap-too-large 2 limits --cap 1000000g)
lab_expect(misuse.limits.count-zero 2 limits --count 0)
lab_expect(misuse.limits.unknown-allocator 2 limits --allocators tlsf,nosuchmalloc)
lab_expect(misuse.limits.twice 2 limits --allocators glibc,glibc)
lab_expect(misuse.limits.unknown-option 2 limits --bogus)

# A peer whose library is not there is a row saying so, never a crash, and
# the run still exits 0.
# lab_expect checks the exit status (a PASS_REGULAR_EXPRESSION alone would
# ignore it); its message on a wrong one is what the FAIL expression catches.
lab_expect(limits.peer-not-installed 0 limits --allocators tlsf,jemalloc --runs 1 --count 16
           --sizes 5)
set_tests_properties(lab.limits.peer-not-installed PROPERTIES
                     ENVIRONMENT RTMEM_BENCH_LIB_JEMALLOC=/nonexistent/libjemalloc.so.2
                     PASS_REGULAR_EXPRESSION "jemalloc +not installed"
                     FAIL_REGULAR_EXPRESSION "expected 0" TIMEOUT 120)

# The probe's arithmetic, exactly (limits/tests/limits_probe_test.c).
lab_unit(limits.probe lab_limits_probe_test limits/tests/limits_probe_test.c
         limits/limits_probe.c LIBS rtmem::rtmem_static)
