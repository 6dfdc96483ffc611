# SPDX-License-Identifier: MIT
# The trace commands (record, trace, replay, fit; docs/TRACE.md): the
# recorder on programs whose calls are known, trace stats / replay / fit on
# hand-made traces whose answers are worked out in tests/trace_testgen.c,
# every bad input refused with its byte offset, --help and misuse.

set(trace_dir ${CMAKE_CURRENT_BINARY_DIR}/traces)
add_executable(lab_trace_testgen ${CMAKE_CURRENT_SOURCE_DIR}/trace/tests/trace_testgen.c)
target_include_directories(lab_trace_testgen PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(lab_trace_testgen PRIVATE ${RTMEM_WARNINGS})
add_test(NAME lab.trace.gen COMMAND ${CMAKE_COMMAND} -E make_directory ${trace_dir})
add_test(NAME lab.trace.gen.files COMMAND lab_trace_testgen ${trace_dir})
set_tests_properties(lab.trace.gen PROPERTIES FIXTURES_SETUP trace_dir)
set_tests_properties(lab.trace.gen.files PROPERTIES FIXTURES_SETUP trace_files
                     FIXTURES_REQUIRED trace_dir)

# trace_json_check.cmake MODE: the numbers of stats, replay, refusals, fit.
foreach(mode stats replay refuse fit)
  add_test(NAME lab.trace.${mode}
           COMMAND ${CMAKE_COMMAND} -DEXE=${rtmem_lab_exe} -DDIR=${trace_dir}
                   -DOUT=${trace_dir} -DMODE=${mode}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_json_check.cmake)
  set_tests_properties(lab.trace.${mode} PROPERTIES FIXTURES_REQUIRED trace_files TIMEOUT 120)
endforeach()

# Bad files: exit 1 and the byte offset, from every command that reads one.
function(trace_bad name file expect match)
  foreach(cmd "trace|stats" replay fit)
    string(REPLACE "|" "." cmdname "${cmd}")
    add_test(NAME lab.trace.bad.${name}.${cmdname}
             COMMAND ${CMAKE_COMMAND} -DEXE=${rtmem_lab_exe} "-DARGS=${cmd}|${file}"
                     -DEXPECT=${expect} "-DMATCH=${match}"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_expect.cmake)
    set_tests_properties(lab.trace.bad.${name}.${cmdname} PROPERTIES FIXTURES_REQUIRED trace_files)
  endforeach()
endfunction()
trace_bad(truncated ${trace_dir}/truncated.trace 1 "offset 264: truncated record")
trace_bad(corrupt ${trace_dir}/corrupt.trace 1 "offset 184: corrupt record: operation code 99")
trace_bad(newer ${trace_dir}/newer.trace 1 "offset 8: trace format version 2")
trace_bad(badfree ${trace_dir}/badfree.trace 1 "offset 144: free of block id 7 that was never")
trace_bad(empty ${trace_dir}/empty.trace 1 "offset 0: empty file")
trace_bad(notrace ${trace_dir}/notrace.trace 1 "offset 0: not an rtmem trace")
trace_bad(missing ${trace_dir}/no-such.trace 1 "cannot open .*no-such.trace")
# A trace without calls (what a wrapper that exec'd left, before the fix):
# said, exit 1, no region sized or replay timed for nothing.
trace_bad(nocalls ${trace_dir}/nocalls.trace 1 "nocalls.trace: no calls in this trace .of testgen., nothing to")

lab_expect(help.record 0 record --help)
lab_expect(help.trace 0 trace --help)
lab_expect(help.trace-stats 0 trace stats --help)
lab_expect(help.replay 0 replay --help)
lab_expect(help.fit 0 fit --help)
lab_expect(misuse.record.no-program 2 record -o x.trace)
lab_expect(misuse.record.no-file 2 record -o)
lab_expect(misuse.record.unknown-option 2 record --bogus -- true)
lab_expect(misuse.trace.alone 2 trace)
lab_expect(misuse.trace.unknown 2 trace frobnicate x.trace)
lab_expect(misuse.trace.no-file 2 trace stats)
lab_expect(misuse.trace.option 2 trace stats x.trace --limit 3)
lab_expect(misuse.replay.no-file 2 replay)
lab_expect(misuse.replay.unknown-allocator 2 replay x.trace --allocators tlsf,nosuchmalloc)
lab_expect(misuse.replay.region-zero 2 replay x.trace --region 0)
lab_expect(misuse.replay.bad-region 2 replay x.trace --region 12q)
lab_expect(misuse.replay.wcet-peer-only 2 replay x.trace --wcet --allocators mimalloc,jemalloc)
lab_expect(misuse.replay.wcet-ops-zero 2 replay x.trace --wcet --wcet-ops 0)
lab_expect(misuse.replay.wcet-ops-bad 2 replay x.trace --wcet --wcet-ops 12q)
lab_expect(misuse.replay.wcet-ops-alone 2 replay x.trace --wcet-ops 5)
lab_expect(misuse.fit.wcet-ops-zero 2 fit x.trace --wcet --wcet-ops 0)
lab_expect(misuse.fit.wcet-ops-alone 2 fit x.trace --wcet-ops 5)
lab_expect(misuse.replay.twice 2 replay x.trace --allocators tlsf,tlsf)
lab_expect(misuse.fit.no-file 2 fit --json x.json)
lab_expect(misuse.fit.unknown-algorithm 2 fit x.trace --algorithms glibc)
lab_expect(misuse.fit.headroom 2 fit x.trace --headroom 5000)

# --wcet: exact instruction counts of the replay's calls (trace_wcet_check.cmake),
# where rtmem-wcet is built (x86-64 Linux; tools/wcet/CMakeLists.txt) and not
# in sanitizer builds (their counts include the instrumentation, as wcet_quick).
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$"
   AND NOT RTMEM_SANITIZE)
  foreach(mode one kinds fit)
    add_test(NAME lab.trace.wcet.${mode}
             COMMAND ${CMAKE_COMMAND} -DEXE=${rtmem_lab_exe} -DDIR=${trace_dir}
                     -DOUT=${trace_dir} -DMODE=${mode}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_wcet_check.cmake)
    set_tests_properties(lab.trace.wcet.${mode} PROPERTIES FIXTURES_REQUIRED trace_files
                         TIMEOUT 300)
  endforeach()
  find_program(RTMEM_STRACE NAMES strace)
  if(RTMEM_STRACE)
    add_test(NAME lab.trace.wcet.noptrace
             COMMAND ${CMAKE_COMMAND} -DEXE=${rtmem_lab_exe} -DDIR=${trace_dir}
                     -DOUT=${trace_dir} -DMODE=noptrace -DSTRACE=${RTMEM_STRACE}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_wcet_check.cmake)
    set_tests_properties(lab.trace.wcet.noptrace PROPERTIES FIXTURES_REQUIRED trace_files
                         TIMEOUT 300)
  endif()
  lab_expect(help.wcet-replay 0 wcet replay --help)
  lab_expect(misuse.wcet-replay.no-file 2 wcet replay)
  lab_expect(misuse.wcet-replay.limit 2 wcet replay x.trace --limit 0)
  lab_expect(misuse.wcet-replay.allocator 2 wcet replay x.trace --allocators mimalloc)
endif()

# The recorder (not on other systems: tools/record/CMakeLists.txt).
if(CMAKE_SYSTEM_NAME STREQUAL "Linux") # tools/record builds the recorder there
  set(rec_dir ${RTMEM_TOOLS_DIR}/record/tests)
  # Plain builds even in sanitizer builds: the recorder is preloaded into them.
  add_executable(lab_rec_prog ${rec_dir}/rec_prog.c)
  set_target_properties(lab_rec_prog PROPERTIES COMPILE_OPTIONS "" LINK_OPTIONS "")
  target_link_libraries(lab_rec_prog PRIVATE pthread)
  add_executable(lab_rec_check ${rec_dir}/rec_check.c ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_read.c)
  target_include_directories(lab_rec_check PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_options(lab_rec_check PRIVATE ${RTMEM_WARNINGS})
  # rtmem record passes the program's exit status on: rec_prog ends with 3.
  add_test(NAME lab.record.c
           COMMAND ${CMAKE_COMMAND} -DEXE=${rtmem_lab_exe}
                   "-DARGS=record|-o|${trace_dir}/rec-c.trace|--|$<TARGET_FILE:lab_rec_prog>"
                   -DEXPECT=3 "-DMATCH=calls recorded"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_expect.cmake)
  add_test(NAME lab.record.c.check COMMAND lab_rec_check ${trace_dir}/rec-c.trace c)
  set_tests_properties(lab.record.c PROPERTIES FIXTURES_REQUIRED trace_dir
                       FIXTURES_SETUP rec_c)
  set_tests_properties(lab.record.c.check PROPERTIES FIXTURES_REQUIRED rec_c)
  # The exec error alone: no second line about a missing trace.
  add_test(NAME lab.record.missing-program
           COMMAND ${CMAKE_COMMAND} -DEXE=${rtmem_lab_exe}
                   "-DARGS=record|-o|${trace_dir}/none.trace|--|/no/such/program"
                   -DEXPECT=127 "-DMATCH=cannot run /no/such/program"
                   "-DNOMATCH=no trace was written"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_expect.cmake)
  set_tests_properties(lab.record.missing-program PROPERTIES FIXTURES_REQUIRED trace_dir)
  # Wrappers that exec the program (chrt, taskset, ...), exec functions,
  # children, stale files: record_wrappers.sh, one case per entry.
  add_executable(lab_rec_exec ${rec_dir}/rec_exec.c)
  set_target_properties(lab_rec_exec PROPERTIES COMPILE_OPTIONS "" LINK_OPTIONS "")
  target_link_libraries(lab_rec_exec PRIVATE pthread)
  set(rec_cases taskset nice env chrt sh-exec script python final-only clearenv env-i children
      no-children stale)
  foreach(fn execve execv execvp execvpe execl execle execlp fexecve execveat)
    list(APPEND rec_cases exec-${fn})
  endforeach()
  foreach(case IN LISTS rec_cases)
    add_test(NAME lab.record.${case}
             COMMAND sh ${rec_dir}/record_wrappers.sh ${case} ${rtmem_lab_exe}
                     $<TARGET_FILE:lab_rec_prog> $<TARGET_FILE:lab_rec_exec>
                     $<TARGET_FILE:lab_rec_check> ${trace_dir})
    set_tests_properties(lab.record.${case} PROPERTIES FIXTURES_REQUIRED trace_dir
                         SKIP_RETURN_CODE 77 TIMEOUT 120)
  endforeach()
  # A static program exec'd cannot load the recorder: the summary says so.
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_LINK_OPTIONS -static)
  check_c_source_compiles("int main(void) { return 0; }" RTMEM_LINKS_STATIC)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(RTMEM_LINKS_STATIC)
    add_executable(lab_rec_prog_static ${rec_dir}/rec_prog.c)
    set_target_properties(lab_rec_prog_static PROPERTIES COMPILE_OPTIONS "" LINK_OPTIONS "-static")
    target_link_libraries(lab_rec_prog_static PRIVATE pthread)
    add_test(NAME lab.record.static
             COMMAND sh ${rec_dir}/record_wrappers.sh static ${rtmem_lab_exe}
                     $<TARGET_FILE:lab_rec_prog_static> $<TARGET_FILE:lab_rec_exec>
                     $<TARGET_FILE:lab_rec_check> ${trace_dir})
    set_tests_properties(lab.record.static PROPERTIES FIXTURES_REQUIRED trace_dir TIMEOUT 120)
  endif()
  include(CheckLanguage)
  check_language(CXX)
  if(CMAKE_CXX_COMPILER)
    enable_language(CXX)
    add_executable(lab_rec_prog_cxx ${rec_dir}/rec_prog_cxx.cpp)
    set_target_properties(lab_rec_prog_cxx PROPERTIES COMPILE_OPTIONS "" LINK_OPTIONS ""
                          CXX_STANDARD 17)
    add_test(NAME lab.record.cxx
             COMMAND ${CMAKE_COMMAND} -DEXE=${rtmem_lab_exe}
                     "-DARGS=record|-o|${trace_dir}/rec-cxx.trace|--|$<TARGET_FILE:lab_rec_prog_cxx>"
                     -DEXPECT=0 "-DMATCH=calls recorded"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_expect.cmake)
    add_test(NAME lab.record.cxx.check COMMAND lab_rec_check ${trace_dir}/rec-cxx.trace cxx)
    set_tests_properties(lab.record.cxx PROPERTIES FIXTURES_REQUIRED trace_dir
                         FIXTURES_SETUP rec_cxx)
    set_tests_properties(lab.record.cxx.check PROPERTIES FIXTURES_REQUIRED rec_cxx)
  endif()
endif()

# The JSON of the checks above against docs/schema/ (and the lab's sanity
# rules: percentiles in order, min <= max), when python3 is there.
find_program(RTMEM_PYTHON3 NAMES python3)
if(RTMEM_PYTHON3)
  set(schema_pairs "stats|trace_stats|stats" "replay|replay|replay-pool" "fit|fit|fit-pool")
  if(TEST lab.trace.wcet.one)
    list(APPEND schema_pairs "wcet.one|replay|wcet-one" "wcet.kinds|replay|wcet-kinds"
         "wcet.fit|fit|wcet-fit")
  endif()
  foreach(pair IN LISTS schema_pairs)
    string(REPLACE "|" ";" parts "${pair}")
    list(GET parts 0 mode)
    list(GET parts 1 stem)
    list(GET parts 2 file)
    add_test(NAME lab.trace.${mode}.schema
             COMMAND ${RTMEM_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/validate_json.py --sane
                     ${PROJECT_SOURCE_DIR}/docs/schema/${stem}.schema.json ${trace_dir}/${file}.json)
    set_tests_properties(lab.trace.${mode}.schema PROPERTIES DEPENDS lab.trace.${mode}
                         FIXTURES_REQUIRED trace_files)
  endforeach()
endif()

# "--json -": the JSON alone on stdout, the tables on stderr (json.c).
add_test(NAME lab.trace.json_stdout
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/json_stdout.sh ${rtmem_lab_exe}
                 fit ${trace_dir}/pool.trace --algorithms tlsf)
set_tests_properties(lab.trace.json_stdout PROPERTIES FIXTURES_REQUIRED trace_files)
