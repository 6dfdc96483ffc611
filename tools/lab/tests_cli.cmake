# SPDX-License-Identifier: MIT
# The lab's command line as a whole (main.c, opts.c, json.c): --version,
# and "--json -" (the JSON alone on stdout, the tables on stderr).
add_test(NAME lab.version COMMAND ${rtmem_lab_exe} --version)
set_tests_properties(lab.version PROPERTIES
  PASS_REGULAR_EXPRESSION "^rtmem ${PROJECT_VERSION} \\(library ${PROJECT_VERSION}\\)")
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
  add_test(NAME lab.wcet.progress
           COMMAND sh -c "\"$0\" wcet --quick --allocators tlsf 2>&1 >/dev/null | grep 'rtmem-wcet: \\[[0-9]*/[0-9]*\\] tlsf'"
                   ${rtmem_lab_exe})
  set_tests_properties(lab.json_stdout.wcet lab.wcet.progress PROPERTIES TIMEOUT 600)
endif()
