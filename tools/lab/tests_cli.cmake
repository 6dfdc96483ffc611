# SPDX-License-Identifier: MIT
# The lab's command line as a whole (main.c, opts.c, json.c): --version,
# and "--json -" (the JSON alone on stdout, the tables on stderr).
# lab_expect checks the exit status (a PASS_REGULAR_EXPRESSION alone would
# ignore it); its message on a wrong one is what the FAIL expression catches.
lab_expect(version 0 --version)
set_tests_properties(lab.version PROPERTIES
  PASS_REGULAR_EXPRESSION "^rtmem ${PROJECT_VERSION} \\(library ${PROJECT_VERSION}\\)"
  FAIL_REGULAR_EXPRESSION "expected 0")
lab_expect(misuse.version-as-option 2 memcheck --version)
add_test(NAME lab.json_stdout.limits
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/json_stdout.sh ${rtmem_lab_exe}
                 limits --quick --sizes 64,4096)
set_tests_properties(lab.json_stdout.limits PROPERTIES TIMEOUT 300)
# rtmem-wcet is built on x86-64 Linux only (tools/wcet/CMakeLists.txt,
# configured after this folder, hence the same condition rather than TARGET).
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  add_test(NAME lab.json_stdout.wcet
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/json_stdout.sh ${rtmem_lab_exe}
                   wcet --quick --allocators tlsf)
  # A full wcet run takes minutes: it says how far it is, on stderr.
  # The run's status counts too (sh has no pipefail: stderr is kept, then grepped).
  add_test(NAME lab.wcet.progress
           COMMAND sh -c "err=$(\"$0\" wcet --quick --allocators tlsf 2>&1 >/dev/null); rc=$?; if [ $rc -ne 0 ]; then echo \"$err\"; echo \"rtmem wcet exited $rc\"; exit 1; fi; echo \"$err\" | grep 'rtmem-wcet: \\[[0-9]*/[0-9]*\\] tlsf'"
                   ${rtmem_lab_exe})
  set_tests_properties(lab.json_stdout.wcet lab.wcet.progress PROPERTIES TIMEOUT 600)
endif()
# An output that cannot be written is a usage error before anything is
# measured (opts.c, outputs_writable): without the check each of these runs
# its whole measurement and only then fails with status 1.
foreach(cmd memcheck "bench random" "bench threads" "bench zram" limits latency
            "trace stats no-such.trace" "replay no-such.trace" "fit no-such.trace")
  string(REPLACE " " ";" argv "${cmd}")
  list(GET argv 0 first)
  if(first STREQUAL "bench" OR first STREQUAL "trace")
    list(GET argv 1 second)
    set(first "${first}_${second}")
  endif()
  lab_expect(misuse.json_unwritable.${first} 2 ${argv} --json /no/such/dir/x.json)
  lab_expect(misuse.json_directory.${first} 2 ${argv} --json /)
endforeach()
# The recorder's output too, before the program runs (record.c).
lab_expect(misuse.record.output_unwritable 2 record -o /no/such/dir/x.trace -- true)
# Not in ASan-tracked builds (cmake/track.cmake, the ASan default): every
# tracked call opens or poisons ASan's shadow for its whole block, which the
# single-stepping tracer counts iteration by iteration, so the generic-API
# calls on large blocks (split-huge, exact-fit) run past rtmem-wcet's
# 1000000-step cap and the run ends with no results; a sanitizer build's
# counts mean nothing anyway (tools/wcet/CMakeLists.txt, wcet_quick).
if(RTMEM_TRACK_ASAN AND TEST lab.json_stdout.wcet)
  set_tests_properties(lab.json_stdout.wcet lab.wcet.progress PROPERTIES DISABLED TRUE)
endif()
# Text to a full device: status 1 and a message, for a measurement, for
# --help and --version (tests/stdout_full.sh; rtmem-wcet's in tools/wcet).
foreach(run "memcheck|--quick|--no-rt" "--help" "--version" "memcheck|--help")
  string(REPLACE "|" ";" argv "${run}")
  string(REGEX REPLACE "[^a-z]+" "-" tag "${run}")
  add_test(NAME lab.stdout_full${tag} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/stdout_full.sh
                                               ${rtmem_lab_exe} ${argv})
  set_tests_properties(lab.stdout_full${tag} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
